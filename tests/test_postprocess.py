"""Consistency post-processing (Wang et al., NDSS 2020): what each method guarantees,
Norm-Sub equals the Euclidean projection onto the simplex, Power's fit, bad input."""

from __future__ import annotations

import numpy as np
import pytest

from ldp import postprocess
from ldp.oracles import GRR
from ldp.postprocess import (
    METHODS,
    base_pos,
    norm,
    norm_cut,
    norm_mul,
    norm_sub,
    power,
    power_ns,
    simplex_projection,
)


def noisy(seed: int, d: int = 50, total: float = 1000.0) -> np.ndarray:
    """Estimates of a skewed distribution with noise large enough to go negative."""
    rng = np.random.default_rng(seed)
    truth = total * rng.dirichlet(np.full(d, 0.3))
    return truth + rng.normal(0.0, total / 20, d)


CASES = [noisy(seed) for seed in range(20)] + [
    np.array([-5.0, -1.0, -3.0]),  # all negative
    np.array([400.0, 400.0, 400.0, -10.0]),  # above the total
    np.array([1.0, 2.0, 3.0]),  # far below the total
    np.array([1000.0]),  # one value
    np.array([500.0, 500.0, 0.0, 0.0]),  # already consistent
]


@pytest.mark.parametrize("index", range(len(CASES)))
def test_norm_sub_is_the_projection_onto_the_simplex(index: int) -> None:
    """Two independent algorithms (the paper's iteration, Duchi et al.'s sort) agree."""
    estimates, total = CASES[index], 1000.0
    assert np.allclose(norm_sub(estimates, total), simplex_projection(estimates, total), atol=1e-9)


@pytest.mark.parametrize("index", range(5))
def test_the_projection_is_the_closest_consistent_point(index: int) -> None:
    """||x - ĉ|| <= ||y - ĉ|| for 2000 random consistent y, and x is consistent."""
    estimates, total = CASES[index], 1000.0
    x = simplex_projection(estimates, total)
    assert (x >= 0).all() and x.sum() == pytest.approx(total, rel=1e-12)
    rng = np.random.default_rng(index)
    others = total * rng.dirichlet(np.ones(estimates.shape[0]), size=2000)
    others = np.vstack([others, 0.999 * x + 0.001 * others[:10]])  # also points near x
    best = np.linalg.norm(x - estimates)
    assert (np.linalg.norm(others - estimates, axis=1) >= best - 1e-9).all()


@pytest.mark.parametrize("index", range(len(CASES)))
def test_each_method_gives_what_it_promises(index: int) -> None:
    estimates, total = CASES[index], 1000.0
    assert (base_pos(estimates, total) >= 0).all()
    assert norm(estimates, total).sum() == pytest.approx(total, rel=1e-12)
    assert np.allclose(
        norm(estimates, total) - estimates, (total - estimates.sum()) / len(estimates)
    )
    mul = norm_mul(estimates, total)
    assert (mul >= 0).all()
    if (estimates > 0).any():
        assert mul.sum() == pytest.approx(total, rel=1e-12)
        positive = estimates > 0
        ratio = mul[positive] / estimates[positive]
        assert np.allclose(ratio, ratio[0])  # one common factor
    cut = norm_cut(estimates, total)
    assert (cut >= 0).all() and cut.sum() <= total * (1 + 1e-12)
    kept = cut > 0
    if kept.any() and (~kept & (estimates > 0)).any():  # everything kept beats everything cut
        assert estimates[kept].min() > estimates[~kept & (estimates > 0)].max()
    assert np.array_equal(cut[kept], estimates[kept])
    sub = norm_sub(estimates, total)
    assert (sub >= 0).all() and sub.sum() == pytest.approx(total, rel=1e-12)


def test_norm_cut_keeps_the_largest_that_fit() -> None:
    estimates = np.array([600.0, 300.0, 200.0, 50.0, -20.0])
    assert np.array_equal(norm_cut(estimates, 1000.0), [600.0, 300.0, 0.0, 0.0, 0.0])
    assert np.array_equal(norm_cut(np.array([10.0, -5.0]), 1000.0), [10.0, 0.0])


def test_norm_keeps_estimates_unbiased() -> None:
    """Norm is affine with E[Σĉ] = n, so E[norm(ĉ)] = c: z-test on GRR estimates (α = 1e-4)."""
    counts = np.array([500, 300, 150, 50, 0, 0, 0, 0])
    oracle, rng = GRR(epsilon=1.0, domain_size=8), np.random.default_rng(5)
    draws = np.array([norm(oracle.simulate(counts, rng), 1000.0) for _ in range(2000)])
    z = (draws.mean(axis=0) - counts) / (draws.std(axis=0, ddof=1) / np.sqrt(2000))
    assert np.abs(z).max() <= 4.8  # two-sided normal at 1e-4/8


def test_power_recovers_the_exponent_of_a_power_law() -> None:
    """x ~ x^{-1.5} on [1e-4, 1] by inversion, tiny noise: the fitted α is near 1.5.

    The maximum-likelihood α of 3000 draws has standard error ≈ 0.02 here; the grid
    quadrature adds a small bias; 0.1 is 5 standard errors.
    """
    rng, total, alpha = np.random.default_rng(7), 1e4, 1.5
    u = rng.random(3000)
    low = 1 / total
    x = (low ** (1 - alpha) + u * (1 - low ** (1 - alpha))) ** (1 / (1 - alpha))
    sigma = 1e-6
    fitted, means = postprocess._power_posterior(x + rng.normal(0, sigma, x.shape), sigma, low)
    assert abs(fitted - alpha) < 0.1
    # σ far below the grid step (2.3% apart): each mean sits within a step of its x
    assert np.allclose(means, x, rtol=0.025)


def test_power_shrinks_noise_on_a_skewed_distribution() -> None:
    """On GRR estimates of a Zipf-like population, Power and PowerNS lower the squared
    error of the full distribution in each of 20 independent draws (the design: noise
    σ ≈ 3x the typical small count)."""
    d, n = 200, 20_000
    counts = np.floor(n / np.arange(1, d + 1) ** 1.2 / np.sum(1 / np.arange(1, d + 1) ** 1.2))
    counts = counts.astype(np.int64)
    oracle, rng = GRR(epsilon=2.0, domain_size=d), np.random.default_rng(8)
    n_total = int(counts.sum())
    for _ in range(20):
        estimates = oracle.simulate(counts, rng)
        base = np.sum((estimates - counts) ** 2)
        variance = oracle.variance(n_total)
        assert np.sum((power(estimates, n_total, variance) - counts) ** 2) < base
        fixed = power_ns(estimates, n_total, variance)
        assert np.sum((fixed - counts) ** 2) < base and fixed.sum() == pytest.approx(n_total)


def test_apply_by_name_and_the_default() -> None:
    estimates = np.array([5.0, -1.0, 3.0])
    assert np.array_equal(postprocess.apply(None, estimates, 10.0), estimates)
    for name, method in METHODS.items():
        assert np.array_equal(
            postprocess.apply(name, estimates, 10.0, 4.0), method(estimates, 10.0, 4.0)
        )
    with pytest.raises(ValueError, match="postprocess must be one of"):
        postprocess.apply("norm-sub", estimates, 10.0)


def test_bad_input_is_refused() -> None:
    with pytest.raises(ValueError, match="estimates must be a non-empty 1-D array"):
        norm_sub(np.zeros((2, 2)), 1.0)
    with pytest.raises(ValueError, match="estimates must be finite"):
        norm_sub(np.array([np.nan, 1.0]), 1.0)
    with pytest.raises(ValueError, match="total must be finite and > 0"):
        norm(np.array([1.0]), 0.0)
    with pytest.raises(TypeError, match="total must be a number"):
        norm(np.array([1.0]), "1")
    with pytest.raises(ValueError, match="variance must be finite and > 0 for power"):
        power(np.array([1.0, 2.0]), 3.0)

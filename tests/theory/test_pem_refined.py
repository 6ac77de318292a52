"""ldp.theory.pem_refined: the refined model of PEM against simulated runs.

Setting: [PEM] Fig. 3a's zipf(-20) data (n = 10^5, m = 16, ε = 1, k = 16, γ = 4) in six
rounds of η = 2, where Eq. (5) is optimistic because the other candidates of a step are
extensions of frequent prefixes.  R runs of the sampled engine give a mean F1 with
standard error SE; the refined model must lie within z_{1-α/2} SE + 0.01 of it (α = 1e-4;
0.01 is the model's own allowance for its normal and design approximations), and Eq. (5)
must exceed it by more than z_{1-α} SE (one-sided): the refined model fixes a real gap.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats

from ldp import metrics
from ldp.datasets import load
from ldp.heavy_hitters import PEM
from ldp.theory import pem as pem_theory
from ldp.theory.pem_refined import (
    _KeptSet,
    _truncated_convolve,
    refined_identification,
    refined_utility,
)

ALPHA = 1e-4
ALLOWANCE = 0.01
K = 16


@pytest.fixture(scope="module")
def zipf20():
    data = load("zipf", n=100_000, m=16, s=1.5, drop_top=20)
    values, counts = np.unique(data.values, return_counts=True)
    return data, values, counts


def _simulated_f1(pem: PEM, data, runs: int) -> tuple[float, float]:
    values, counts = np.unique(data.values, return_counts=True)
    truth = values[np.argsort(-counts, kind="stable")[:K]]
    rng = np.random.default_rng(20260)
    f1 = [metrics.f1(truth, pem.run(data, rng).identified) for _ in range(runs)]
    return float(np.mean(f1)), float(np.std(f1, ddof=1) / np.sqrt(runs))


def test_refined_model_matches_short_rounds_where_eq5_is_optimistic(zipf20):
    data, values, counts = zipf20
    pem = PEM(epsilon=1.0, k=K, m=16, gamma=4, etas=(2,) * 6)
    mean, se = _simulated_f1(pem, data, runs=300)
    refined = refined_utility(values, counts, 16, 1.0, pem.config, K)
    top = np.sort(counts)[::-1][:K] / counts.sum()
    paper = pem_theory.utility(top, counts.sum(), 1.0, pem.config, K, "f1")
    assert abs(refined - mean) <= stats.norm.isf(ALPHA / 2) * se + ALLOWANCE, (refined, mean, se)
    assert paper - mean > stats.norm.isf(ALPHA) * se, (paper, mean, se)


def test_identification_is_a_probability_and_ranked(zipf20):
    _, values, counts = zipf20
    config = pem_theory.PEMConfig.uniform(16, K, 6)
    p = refined_identification(values, counts, 16, 1.0, config)
    assert p.shape == (K,) and np.all((p >= 0) & (p <= 1))
    assert p[0] >= p[-1]  # the most frequent value is identified at least as often


@pytest.mark.parametrize(
    ("counts", "name"),
    [([1, 2], "counts"), ([1, -1, 2], "counts"), ([0, 0, 0], "counts")],
)
def test_bad_distribution(counts, name):
    config = pem_theory.PEMConfig.uniform(8, 2, 3)
    with pytest.raises(ValueError, match=name):
        refined_identification(np.arange(3), counts, 8, 1.0, config)


def test_bad_epsilon_and_heavy():
    config = pem_theory.PEMConfig.uniform(8, 2, 3)
    with pytest.raises(ValueError, match="epsilon"):
        refined_identification(np.arange(3), [3, 2, 1], 8, 0.0, config)
    with pytest.raises(ValueError, match="heavy"):
        refined_identification(np.arange(3), [3, 2, 1], 8, 1.0, config, heavy=0)


def _enumerated_inclusion(odds: np.ndarray, multiplicity: np.ndarray, size: int) -> np.ndarray:
    """Inclusion probability of one unit of each item, summing P(S) ∝ Π r over every set S
    of ``size`` units (the conditional Poisson design by definition)."""
    units = np.repeat(np.arange(len(odds)), multiplicity)
    kept, total = np.zeros(len(odds)), 0.0
    for chosen in itertools.combinations(range(len(units)), size):
        weight = float(np.prod(odds[units[list(chosen)]]))
        total += weight
        np.add.at(kept, units[list(chosen)], weight)
    return kept / total / multiplicity


@pytest.mark.parametrize("size", [1, 3, 6, 9])
def test_inclusion_is_exact_when_the_odds_span_eight_decades(size):
    # the C-D-L recursion over k subtracts: at size 9 it was off by 0.99999 here
    odds = np.logspace(-4, 4, 14)
    exact = _enumerated_inclusion(odds, np.ones(14, dtype=int), size)
    got = _KeptSet.inclusion(odds, np.ones((1, 14)), size)[0]
    np.testing.assert_allclose(got, exact, rtol=1e-9, atol=1e-12)


def test_inclusion_counts_an_items_multiplicity_as_alike_units():
    odds, multiplicity = np.array([0.02, 3.0, 0.5, 40.0]), np.array([3, 1, 2, 2])
    exact = _enumerated_inclusion(odds, multiplicity, 4)
    rows = np.vstack([multiplicity, multiplicity])  # two designs at once, as given() asks
    np.testing.assert_allclose(_KeptSet.inclusion(odds, rows, 4), [exact, exact], rtol=1e-9)


def test_the_fitted_design_has_the_marginals_it_was_given():
    # a step's kept set as refined_identification builds it: a few prefixes nearly sure,
    # bins of alike ones and a large zero-frequency pool (a real multiplicity)
    pi = np.array([0.9999, 0.998, 0.97, 0.8, 0.35, 0.05, 0.002, 1e-5, 3e-7])
    multiplicity = np.array([1, 1, 1, 1, 1, 4, 12, 30, 2047.5])
    design = _KeptSet(pi, multiplicity, 4)  # Σ M π = 4.34: every target below 1
    fitted = design.inclusion(design.odds, design.multiplicity[None, :], design.size)[0]
    target = pi * design.size / float((pi * multiplicity).sum())
    np.testing.assert_allclose(fitted, target, atol=1e-8)


@pytest.mark.parametrize(
    ("a_shape", "b_shape"),
    [((17,), (17,)), ((1, 9, 17), (1, 9, 17)), ((4, 6, 16), (4, 1, 16)), ((16,), (3, 16))],
)
def test_truncated_convolve_is_the_direct_sum(a_shape, b_shape):
    # coefficients over 150 decades (products down to 1e-300, clear of subnormals), as in
    # the truncated pmfs: each one to rounding (an FFT would swamp the small ones)
    rng = np.random.default_rng(7)
    a = 10.0 ** rng.uniform(-150, 0, a_shape)
    b = 10.0 ** rng.uniform(-150, 0, b_shape)
    size = a_shape[-1]
    a_full, b_full = np.broadcast_arrays(a, b)
    expected = np.zeros(a_full.shape)
    for total in range(size):
        for j in range(total + 1):
            expected[..., total] += a_full[..., j] * b_full[..., total - j]
    np.testing.assert_allclose(_truncated_convolve(a, b), expected, rtol=1e-13, atol=0)

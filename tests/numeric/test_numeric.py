"""Mean estimation (ldp.numeric): the paper's comparisons, the audits, the engines.

Statistical assertions are at level 1e-4 each (ldp.testing.ALPHA) on fixed seeds; the
general battery (moments, variance, validation) runs in tests/test_conformance.py.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import pytest

from ldp import audit, registry
from ldp.audit import auditor
from ldp.audit.events import bin_events
from ldp.numeric import PM, Duchi, Hybrid, Laplace
from ldp.oracles.discrete_laplace import TOTAL
from ldp.testing import ALPHA, MEAN_AUDIT_BINS
from ldp.theory import numeric as theory
from ldp.validation import ParameterError

EPSILONS = np.linspace(0.05, 8.0, 160)


def test_registered_as_mean_protocols() -> None:
    assert list(registry.protocols("mean")) == ["Duchi", "PM", "Hybrid", "Laplace"]
    assert registry.get("Hybrid").label == "HM"
    assert [p.name for p in registry.parameters(PM)] == []


def test_paper_comparisons() -> None:
    """[W19]: PM's worst case beats Duchi's above ε ≈ 1.29, Duchi's below; HM's worst
    case is at most both everywhere; Laplace's ~8/ε² is above PM's everywhere."""
    assert math.isclose(theory.PM_BEATS_DUCHI, 1.2898, abs_tol=1e-3)
    assert math.isclose(theory.HM_THRESHOLD, 0.6094, abs_tol=1e-3)
    for eps in EPSILONS:
        worst = {name: theory.worst_case_variance(name, eps) for name in ("Duchi", "PM", "HM")}
        assert (worst["PM"] < worst["Duchi"]) == (eps > theory.PM_BEATS_DUCHI)
        assert worst["HM"] <= min(worst["PM"], worst["Duchi"]) * (1 + 1e-12)
        assert theory.worst_case_variance("Laplace", eps) > worst["PM"] >= worst["HM"]


def test_hm_variance_flat_above_threshold() -> None:
    """Above ε*, α = 1 - e^{-ε/2} cancels the t² terms ([W19] Lemma 3)."""
    t = np.linspace(-1, 1, 21)
    for eps in (0.7, 1.0, 3.0):
        variance = theory.hm_variance(eps, t)
        assert np.ptp(variance) <= 1e-12 * variance.max()
    assert Hybrid(epsilon=0.5).alpha == 0.0  # below ε*: Duchi only


def test_epsilon_too_large_for_the_coins() -> None:
    with pytest.raises(ParameterError) as error:
        Duchi(epsilon=40.0)
    assert error.value.name == "epsilon"
    with pytest.raises(ParameterError) as error:
        PM(epsilon=20.0)  # its dyadic grid is too coarse for C' - 1 ≈ 2e^{-10}
    assert error.value.name == "epsilon"


@dataclass(frozen=True, kw_only=True)
class _WrongPM(PM):
    """PM with the centre probability e^ε/(e^ε+1) instead of (C'+1)/(2C') ≈ e^{ε/2}/(e^{ε/2}+1):
    density ratio e^{1.5ε}."""

    def __post_init__(self) -> None:
        super().__post_init__()
        e = math.exp(self.epsilon)
        object.__setattr__(self, "_centre", (round(e / (e + 1) * 2**53), 2**53))


def _binned_audit(protocol, trials: int = 20_000) -> float:
    low, high = protocol.report_range()
    edges = np.concatenate([[-np.inf], np.linspace(low, high, MEAN_AUDIT_BINS + 1), [np.inf]])
    result = audit.lower_bound(
        protocol,
        1.0,
        -1.0,
        rng=np.random.default_rng(7),
        trials=trials,
        alpha=ALPHA,
        events=bin_events(edges),  # the bins alone: no hint of the broken piece
    )
    return result.epsilon


@pytest.mark.parametrize("cls", [Duchi, PM, Hybrid, Laplace])
def test_binned_audit_passes_honest(cls) -> None:
    assert _binned_audit(cls(epsilon=1.0)) <= 1.0


def test_binned_audit_catches_wrong_pm() -> None:
    """The broken copy's density ratio is e^{1.5}; the bins alone find it above ε = 1."""
    assert _binned_audit(_WrongPM(epsilon=1.0)) > 1.0


def test_expected_bound_of_the_optimal_events() -> None:
    """Each protocol's declared event probabilities have ratio e^ε (Laplace: its [1, inf));
    PM's dyadic C' (and so HM's) realises a ratio a hair below e^ε, never above."""
    for cls in (Duchi, PM, Hybrid, Laplace):
        p, q = cls(epsilon=1.5).audit_event_probabilities()
        assert 1.5 * (1 - 1e-6) <= math.log(p / q) <= 1.5 * (1 + 1e-12), cls.name


@dataclass(frozen=True, kw_only=True)
class _FloatLaplace(Laplace):
    """Deliberately broken: the textbook t + Lap(2/ε) in float64 (``rng.laplace``), the
    version Mironov (CCS 2012) attacks."""

    exact_bytes = False

    def _perturb(self, values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return values + rng.laplace(0.0, 2.0 / self.epsilon, values.shape[0])


@pytest.mark.parametrize("epsilon", [0.5, 1.0, 2.0, 4.0])
def test_laplace_bytes_audit_passes(epsilon: float) -> None:
    """The auditor's default events (float grid, every bit, the search) on the float64
    reports, level ALPHA: no bound above ε, for t = 0 vs 1 (Mironov's pair) and -1 vs 1."""
    protocol = Laplace(epsilon=epsilon)
    assert Laplace.exact_bytes
    for v, v_prime in ((0.0, 1.0), (-1.0, 1.0)):
        result = audit.lower_bound(
            protocol, v, v_prime, rng=np.random.default_rng(3), trials=20_000, alpha=ALPHA
        )
        assert result.epsilon <= epsilon, (v, v_prime, result)


def test_float_laplace_bytes_leak_is_found(monkeypatch) -> None:
    """The broken copy: fl(1 + Lap) in (-1/2, 1/2) lies on the 2^-53 grid, a draw for t = 0
    mostly does not.  Its reports are off Laplace's declared grid 1/s, so the support check
    alone proves the leak (an unbounded loss); without it (a copy declaring no support)
    the float-grid event finds it far above ε (5.4 at ε = 1)."""
    protocol = _FloatLaplace(epsilon=1.0)
    result = audit.lower_bound(
        protocol, 0.0, 1.0, rng=np.random.default_rng(3), trials=20_000, alpha=ALPHA
    )
    assert math.isinf(result.epsilon) and "outside the declared support" in result.best.name
    monkeypatch.setattr(auditor, "declared_support", lambda mechanism: None)
    result = audit.lower_bound(
        protocol, 0.0, 1.0, rng=np.random.default_rng(3), trials=20_000, alpha=ALPHA
    )
    assert result.epsilon > 3.0 and "grid" in result.best.name


@pytest.mark.parametrize("epsilon", [0.01, 0.3, 1.0, 4.0])
def test_laplace_table_ratios_are_exact(epsilon: float) -> None:
    """Every report's probability under every signal k in [-s, s], in integers: the largest
    ratio over k, over all reports, is the declared realised ε <= ε (and within 1e-11 of
    it); the masses sum to 2^128, are symmetric; Var(Z) is 2α/(1-α)²."""
    noise = Laplace(epsilon=epsilon).noise
    s, support, reach = noise.grid, noise.support, noise.reach
    masses = noise.table.masses
    assert sum(masses) == TOTAL and min(masses) >= 1 and masses == masses[::-1]
    tails = np.cumsum(np.array(masses[::-1], dtype=object))[::-1]  # P(Z >= z - reach)
    best = Fraction(1)
    for r in range(-support, support + 1):
        if abs(r) < support:
            column = [masses[r - k + reach] for k in range(-s, s + 1)]
        else:
            column = [tails[abs(r) - k + reach] for k in range(-s, s + 1)]
        best = max(best, Fraction(max(column), min(column)))
    assert math.log(best) == pytest.approx(noise.realised_epsilon, rel=1e-15)
    assert epsilon * (1 - 1e-11) <= noise.realised_epsilon <= epsilon
    alpha = noise.alpha
    assert noise.variance == pytest.approx(2 * alpha / (1 - alpha) ** 2, rel=1e-12)
    assert noise.clamp_variance <= 2.0**-80 * noise.variance and noise.tv_per_draw < 1e-29


def test_laplace_reports_are_fixed_floats() -> None:
    """Every report is r/s for an integer r in [-T, T], whatever t: exact in float64 (s is
    a power of two) and never -0.0; t = ±1 keeps the signal at ±s."""
    protocol = Laplace(epsilon=1.0)
    s, support = protocol.grid, protocol.noise.support
    assert s & (s - 1) == 0
    values = np.concatenate([np.linspace(-1, 1, 20_001), [1e-300, -1e-300, -0.1234567890123]])
    reports = protocol.perturb(values, np.random.default_rng(2))
    units = reports * s
    assert np.array_equal(units, np.round(units)) and np.abs(units).max() <= support
    assert not np.signbit(reports[reports == 0]).any()
    floor, threshold = protocol._coins(np.array([-1.0, 1.0]))
    assert floor.tolist() == [-s, s] and threshold.tolist() == [0, 0]


def test_laplace_reports_follow_the_exact_law() -> None:
    """End to end (coin, table search, clamp, scaling): 100,000 reports of t = 0.3 at ε = 1
    against the exact pmf (1-p) P(r|⌊ts⌋) + p P(r|⌊ts⌋+1) from the integer masses, by a
    chi-square test over r in [-24, 28] with both tails pooled, level ALPHA."""
    from scipy import stats

    protocol, t = Laplace(epsilon=1.0), 0.3
    noise, s = protocol.noise, protocol.grid
    reports = protocol.perturb(np.full(100_000, t), np.random.default_rng(5)) * s
    low, high = -24, 28
    cells = np.clip(reports.astype(np.int64), low - 1, high + 1) - (low - 1)
    observed = np.bincount(cells, minlength=high - low + 3)
    pmf = np.array(noise.table.masses, dtype=float) / TOTAL  # P(Z = z), z = -M .. M
    floor, up = math.floor(t * s), float(protocol._up(t))
    inside = np.arange(low, high + 1)
    expected = (1 - up) * pmf[inside - floor + noise.reach] + up * pmf[
        inside - floor - 1 + noise.reach
    ]
    expected = np.concatenate([[0.0], expected, [0.0]])
    expected[0] = (1 - up) * pmf[: low - floor + noise.reach].sum() + up * pmf[
        : low - floor - 1 + noise.reach
    ].sum()
    expected[-1] = 1.0 - expected[:-1].sum()
    result = stats.chisquare(observed, expected * observed.sum())
    assert result.pvalue >= ALPHA, result


def test_laplace_rounding_is_unbiased() -> None:
    """The rounding coin's realised P(up) is ts - ⌊ts⌋ to within 2^-52, for t on and off the
    grid, tiny and negative (E[k/s] = t)."""
    protocol = Laplace(epsilon=2.0)
    t = np.concatenate([np.linspace(-1, 1, 1001), [1e-300, -1e-300, 0.3, -0.3, 1 / 3]])
    floor, _ = protocol._coins(t)
    up = protocol._up(t)
    exact_up = [Fraction(x) * protocol.grid - f for x, f in zip(t, floor.tolist(), strict=True)]
    gaps = [float(e - Fraction(u)) for e, u in zip(exact_up, up, strict=True)]
    assert max(map(abs, gaps)) < 2.0**-52


def test_laplace_variance_close_to_the_papers() -> None:
    """The grid mechanism's Var[t*|t] against [W19]'s 8/ε²: within [1 - λ²/12, 1 + λ²/24],
    λ <= 1/16, at every ε of a grid, on the grid (t = 0) and at a midpoint (to O(λ⁴))."""
    for eps in EPSILONS:
        s = theory.laplace_grid(eps)
        lam = eps / (2 * s)
        assert lam <= 1 / 16 and s & (s - 1) == 0
        low = theory.laplace_grid_variance(eps, 0.0) / theory.laplace_variance(eps)
        high = theory.worst_case_variance("Laplace", eps) / theory.laplace_variance(eps)
        assert low == pytest.approx(1 - lam**2 / 12, abs=lam**4 / 100)  # + λ⁴/240 - ...
        assert high == pytest.approx(1 + lam**2 / 24, abs=lam**4 / 100)
        assert 1 - 3.3e-4 < low < 1 < high < 1 + 1.7e-4


def test_laplace_refuses_an_epsilon_its_table_cannot_hold() -> None:
    with pytest.raises(ParameterError) as error:
        Laplace(epsilon=0.005)
    assert error.value.name == "epsilon"


def test_duchi_reports_are_two_floats() -> None:
    protocol = Duchi(epsilon=0.5)
    reports = protocol.perturb(np.linspace(-1, 1, 1000), np.random.default_rng(0))
    assert set(np.unique(reports)) <= {protocol.bound, -protocol.bound}


def test_sampled_engines_match_reports_on_skewed_data() -> None:
    """Every sampled engine against the reports engine on values piled at 0.9 (n = 500):
    two-sample z of the mean at level ALPHA."""
    from scipy import stats

    z_limit = float(stats.norm.isf(ALPHA / 2))
    values = np.concatenate([np.full(400, 0.9), np.linspace(-1, 1, 100)])
    for cls in (Duchi, PM, Hybrid, Laplace):
        protocol = cls(epsilon=2.0)
        rng = np.random.default_rng(11)
        a = np.array([protocol.estimate(protocol.perturb(values, rng)) for _ in range(2000)])
        b = np.array([protocol.simulate(values, rng) for _ in range(2000)])
        z = (a.mean() - b.mean()) / math.sqrt(a.var(ddof=1) / a.size + b.var(ddof=1) / b.size)
        assert abs(z) <= z_limit, (cls.name, z)


def test_pm_reports_lie_on_a_fixed_dyadic_grid() -> None:
    """Every PM report is an odd multiple of h/2 within [-C', C'] whatever t: the set of
    possible float64 reports does not depend on the input."""
    protocol = PM(epsilon=1.0)
    values = np.concatenate([np.linspace(-1, 1, 2001), [1e-300, -0.1234567890123]])
    reports = protocol.perturb(values, np.random.default_rng(2))
    units = reports / (protocol.cell / 2)
    assert np.array_equal(units, np.round(units)) and np.all(units.astype(np.int64) % 2 == 1)
    assert np.abs(reports).max() <= protocol.bound
    assert protocol.realised_epsilon <= protocol.epsilon

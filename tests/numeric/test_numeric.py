"""Mean estimation (ldp.numeric): the paper's comparisons, the audits, the engines.

Statistical assertions are at level 1e-4 each (ldp.testing.ALPHA) on fixed seeds; the
general battery (moments, variance, validation) runs in tests/test_conformance.py.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pytest

from ldp import audit, registry
from ldp.audit.events import bin_events
from ldp.numeric import PM, Duchi, Hybrid, Laplace
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
    case is at most both everywhere; Laplace's 8/ε² is above PM's everywhere."""
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


def test_laplace_float_bytes_leak_is_found() -> None:
    """Known limitation (Mironov 2012): fl(1 + Lap) in (-1/2, 1/2) lies on the 2^-53 grid,
    a draw for t = 0 mostly does not; the default auditor finds it far above ε."""
    protocol = Laplace(epsilon=1.0)
    assert not Laplace.exact_bytes
    result = audit.lower_bound(
        protocol, 0.0, 1.0, rng=np.random.default_rng(3), trials=20_000, alpha=ALPHA
    )
    assert result.epsilon > 3.0 and "grid" in result.best.name


def test_duchi_reports_are_two_floats() -> None:
    protocol = Duchi(epsilon=0.5)
    reports = protocol.perturb(np.linspace(-1, 1, 1000), np.random.default_rng(0))
    assert set(np.unique(reports)) <= {protocol.bound, -protocol.bound}


def test_sampled_engines_match_reports_on_skewed_data() -> None:
    """Duchi and Laplace: the sampled and reports engines on values piled at 0.9 (n = 500):
    two-sample z of the mean at level ALPHA."""
    from scipy import stats

    z_limit = float(stats.norm.isf(ALPHA / 2))
    values = np.concatenate([np.full(400, 0.9), np.linspace(-1, 1, 100)])
    for cls in (Duchi, Laplace):
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

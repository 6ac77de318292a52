"""Fake users against the set protocols that report padded elements (PSFO, SPLIT).

The measured frequency gain of each (protocol, attack), averaged over ``TRIALS``
collections, is compared with :func:`ldp.poisoning.expected_gain_sets` (ℓ times the inner
oracle's closed form at the targets' frequency among the reported elements): within ``Z``
standard errors, Z from a family-wise false alarm of 0.001 over the cases (Bonferroni,
two-sided).  The same check rejects the inner oracle's gain taken as the protocol's (the
factor ℓ forgotten), which shows its power.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from ldp import poisoning
from ldp.sets import PSFO, SPLIT, SVSM
from ldp.validation import ParameterError

N, D, BETA, TRIALS = 10_000, 32, 0.05, 30
TARGETS = [3, 9, 17]
PROTOCOLS = {
    "PSFO l=1": lambda: PSFO(epsilon=1.0, domain_size=D, ell=1),
    "PSFO l=4 GRR": lambda: PSFO(epsilon=1.0, domain_size=D, ell=4, oracle="GRR"),
    "PSFO l=4 OLH": lambda: PSFO(epsilon=1.0, domain_size=D, ell=4, oracle="OLH"),
    "SPLIT l=4": lambda: SPLIT(epsilon=1.0, domain_size=D, ell=4),
}
CASES = [(name, attack) for name in PROTOCOLS for attack in poisoning.ATTACKS]
Z = float(stats.norm.isf(0.001 / (2 * len(CASES))))


def _rows() -> np.ndarray:
    """N users' sets of four items, one from each quarter of the domain."""
    rng = np.random.default_rng(0)
    return np.arange(4) * (D // 4) + rng.integers(0, D // 4, size=(N, 4))


def measured(name: str, attack: str):
    protocol, rows = PROTOCOLS[name](), _rows()
    found = [
        poisoning.attack_sets(protocol, rows, attack, TARGETS, BETA, np.random.default_rng([5, t]))
        for t in range(TRIALS)
    ]
    gains = np.array([f.gain for f in found])
    supported = float(np.mean([f.supported for f in found]))
    return protocol, found[0], gains.mean(), gains.std(ddof=1) / np.sqrt(TRIALS), supported


@pytest.mark.parametrize(("name", "attack"), CASES, ids=[f"{n}-{a}" for n, a in CASES])
def test_the_measured_gain_is_ell_times_the_inner_closed_form(name: str, attack: str) -> None:
    protocol, first, mean, se, supported = measured(name, attack)
    expected = poisoning.expected_gain_sets(
        protocol, attack, TARGETS, first.beta, first.f_targets, supported
    )
    assert abs(mean - expected) <= Z * se + 1e-12, (mean, expected, se)


def test_the_inner_oracles_gain_without_the_factor_ell_is_rejected() -> None:
    """PSFO at ℓ = 4 with GRR: fake reports naming a target gain 1.14; the inner oracle's
    closed form at the targets' padded frequency, 0.27, is far outside the check."""
    protocol, first, mean, se, _ = measured("PSFO l=4 GRR", "MGA")
    wrong = poisoning.expected_gain(protocol.inner, "MGA", TARGETS, first.beta, first.f_targets)
    assert abs(mean - wrong) > Z * se
    assert mean > 3 * wrong


def test_a_protocol_without_reported_elements_and_bad_targets_are_refused() -> None:
    rows = _rows()[:100]
    with pytest.raises(ParameterError) as error:
        poisoning.attack_sets(SVSM(epsilon=1.0, domain_size=D), rows, "MGA", [1], BETA, None)
    assert error.value.name == "protocol"
    with pytest.raises(ParameterError) as error:
        poisoning.attack_sets(PSFO(epsilon=1.0, domain_size=D), rows, "MGA", [D], BETA, None)
    assert error.value.name == "targets"

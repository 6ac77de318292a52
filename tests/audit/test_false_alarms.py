"""The audit's false-alarm rate on honest protocols is at most its α.

An audit at level α reports a bound above the true privacy loss with probability at most
α (Clopper–Pearson with Bonferroni, :mod:`ldp.audit.auditor`), whatever the protocol, its
public randomness included.  Over ``AUDITS`` independent audits of an honest protocol
the number of bounds above ε is then stochastically below Bin(AUDITS, α); the test allows
the count whose binomial tail is below ``FALSE_ALARM`` (per protocol).

The audits are small (``TRIALS`` reports per input, α = 0.1) so that 50 of them take
seconds; a large α makes each bound less conservative, so a sampling error (such as
reports of one call treated as independent while they share the call's hash pool: FLH
with k' = 1 used to exceed ε in 23 of 50 audits at α = 0.01; 29 of 50 here, in
:func:`test_the_old_sampling_would_fail`) shows at once.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from ldp import audit
from ldp.oracles import ORACLES, HashReports

AUDITS = 50
ALPHA = 0.1
TRIALS = 4_000
#: The probability that an honest protocol fails this test.
FALSE_ALARM = 1e-4


def allowed(audits: int = AUDITS, alpha: float = ALPHA) -> int:
    """The largest count c with P(Bin(audits, alpha) > c) > FALSE_ALARM, plus one."""
    c = 0
    while stats.binom.sf(c, audits, alpha) > FALSE_ALARM:
        c += 1
    return c


CASES = {name: (lambda cls=cls: cls(epsilon=2.0, domain_size=4)) for name, cls in ORACLES.items()}
CASES["FLH k'=1"] = lambda: ORACLES["FLH"](epsilon=2.0, domain_size=4, k_prime=1)
CASES["CMS k=1"] = lambda: ORACLES["CMS"](epsilon=2.0, domain_size=4, k=1)


def test_the_allowance_is_the_binomial_tail() -> None:
    assert allowed() == 14
    assert stats.binom.sf(allowed(), AUDITS, ALPHA) <= FALSE_ALARM
    assert stats.binom.sf(allowed() - 1, AUDITS, ALPHA) > FALSE_ALARM


@pytest.mark.slow
@pytest.mark.parametrize("name", list(CASES))
def test_honest_protocols_raise_at_most_alpha_false_alarms(name: str) -> None:
    oracle = CASES[name]()
    seeds = np.random.SeedSequence([7, *name.encode()]).spawn(AUDITS)
    bounds = [
        audit.lower_bound(
            oracle, 0, 1, rng=np.random.default_rng(seed), trials=TRIALS, alpha=ALPHA
        ).epsilon
        for seed in seeds
    ]
    above = sum(b > oracle.epsilon for b in bounds)
    print(
        f"{name}: {above} of {AUDITS} audits above ε (allowed {allowed()}), max {max(bounds):.3f}"
    )
    assert above <= allowed()


class SeparateCalls:
    """FLH with k' = 1 as the old audit sampled it: each input's reports from a call (and
    so a hash pool) of its own, read as if independent of the other input's."""

    epsilon = 2.0

    def __init__(self) -> None:
        self.oracle = ORACLES["FLH"](epsilon=self.epsilon, domain_size=4, k_prime=1)

    def perturb(self, values, rng):
        values = np.asarray(values)
        first = values == values[0]
        parts = [self.oracle.perturb(values[part], rng) for part in (first, ~first) if part.any()]
        seeds = np.concatenate([p.seeds for p in parts])
        return HashReports(seeds, np.concatenate([p.values for p in parts]))

    def audit_events(self, v, v_prime):
        return self.oracle.audit_events(v, v_prime)


@pytest.mark.slow
def test_the_old_sampling_would_fail() -> None:
    """The test has power: the old sampling exceeds ε in far more audits than allowed."""
    seeds = np.random.SeedSequence(7).spawn(AUDITS)
    bounds = [
        audit.lower_bound(
            SeparateCalls(), 0, 1, rng=np.random.default_rng(s), trials=TRIALS, alpha=ALPHA
        ).epsilon
        for s in seeds
    ]
    assert sum(b > SeparateCalls.epsilon for b in bounds) > allowed()

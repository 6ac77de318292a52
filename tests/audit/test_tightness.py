"""The default audit is tight: its bound reaches 0.9 of the loss of the optimal event.

For every protocol declaring its likelihood-ratio event in closed form
(``audit_event_probabilities``), the event's log-ratio is the realised privacy loss (ε,
or less where the protocol realises less: THE), and the default audit's bound must reach
0.9 of it at ε in {0.5, 1, 2, 4}.  The sample size that takes, in median, is in the
docs' table (``python -m ldp.audit --table``); ``TRIALS`` (200,000 per input) reaches it
with room: the median bound is 0.93 ε or more at ε = 0.5, and the 0.9 mark is below the
0.01 quantile for every protocol but one setting each of HPGR and L-OUE
(:data:`SHORTFALL`, :func:`test_the_default_trials_suffice`).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from ldp import audit
from ldp.audit.auditor import TRIALS
from ldp.oracles import ORACLES

EPSILONS = (0.5, 1.0, 2.0, 4.0)


def optimal(cls, epsilon: float):
    oracle = cls(epsilon=epsilon, domain_size=4)
    try:
        return oracle, audit.optimal_event_probabilities(oracle)
    except TypeError:
        return oracle, None


TIGHT = [name for name, cls in ORACLES.items() if optimal(cls, 1.0)[1] is not None]


#: The settings where TRIALS puts the 0.5% quantile of the bound below 0.9 of the loss,
#: with the fraction it does reach.  At d = 4, ε = 0.5 the optimal events of HPGR (q = 3,
#: two blocks: probabilities 0.191 against 0.116) and L-OUE (its two-step bits: 0.237
#: against 0.144) are common on both sides, so the 0.9 mark at that quantile needs about
#: 300,000 and 220,000 reports per input; their quantiles are 0.879 and 0.890, and their
#: median bounds pass 0.9 (:func:`test_the_default_audit_reaches_nine_tenths`).
SHORTFALL = {("HPGR", 0.5): 0.87, ("LOUE", 0.5): 0.88}


@pytest.mark.slow
def test_the_default_trials_suffice() -> None:
    """At TRIALS, the optimal event's bound exceeds 0.9 of its loss w.p. >= 0.99 (the
    settings of :data:`SHORTFALL` reach the fraction stated there)."""
    for name in TIGHT:
        for epsilon in EPSILONS:
            oracle, (p, p_other) = optimal(ORACLES[name], epsilon)
            # the protocol's events, the search and the structure stage
            hypotheses = sum(len(e.directions()) for e in oracle.audit_events(0, 1)) + 2
            guaranteed = audit.expected_lower_bound(
                p, p_other, TRIALS, alpha=0.01, hypotheses=hypotheses, quantile=0.005
            )
            fraction = SHORTFALL.get((name, epsilon), 0.9)
            assert guaranteed >= fraction * math.log(p / p_other), (name, epsilon)


@pytest.mark.slow
@pytest.mark.parametrize("epsilon", EPSILONS)
@pytest.mark.parametrize("name", TIGHT)
def test_the_default_audit_reaches_nine_tenths(name: str, epsilon: float) -> None:
    oracle, (p, p_other) = optimal(ORACLES[name], epsilon)
    seed = np.random.SeedSequence([4, int(epsilon * 10), *name.encode()])
    result = audit.lower_bound(oracle, 0, 1, rng=np.random.default_rng(seed))
    loss = math.log(p / p_other)
    assert loss <= epsilon * (1 + 1e-12)
    assert 0.9 * loss <= result.epsilon <= epsilon, str(result)

"""Audit a mechanism by running it: an empirical lower bound on its privacy loss.

:func:`ldp.privacy.max_privacy_loss` checks the probabilities a protocol *declares*; this
package checks what its ``perturb`` *does*, with the LDP-Auditor method of Arcolezi and
Gambs (*Revealing the True Cost of Locally Differentially Private Protocols: An Auditing
Perspective*, PETS 2024): draw many reports of two inputs v and v', count how many fall in
distinguishing events, and turn the counts into a Clopper–Pearson lower bound on ε that
exceeds the true privacy loss with probability at most α.  A bound above the declared ε
is proof (at that confidence) that the mechanism is not ε-LDP, whatever its declaration.

>>> import numpy as np
>>> from ldp import audit
>>> from ldp.oracles import OUE
>>> result = audit.lower_bound(OUE(epsilon=2.0, domain_size=8), 0, 1,
...                            rng=np.random.default_rng(1), trials=40_000)
>>> result.epsilon <= 2.0
True

Works on any object with ``perturb(values, rng)``: see ``docs/privacy.md``.  A protocol
declares its own events and searchable features (``audit_events``, ``audit_features``),
the probabilities of its optimal event (``audit_event_probabilities``) and its public
randomness (``capabilities``, :mod:`ldp.contract`); ``python -m ldp.audit`` audits every
registered oracle from the command line (also ``ldp-harness audit``).
"""

from ldp.audit.auditor import TRIALS, AuditResult, EventResult, lower_bound
from ldp.audit.bounds import (
    clopper_pearson_lower,
    clopper_pearson_upper,
    epsilon_lower_bound,
    expected_lower_bound,
    trials_needed,
)
from ldp.audit.events import (
    Event,
    Feature,
    FeatureSearch,
    Finder,
    default_events,
    optimal_event_probabilities,
)

__all__ = [
    "AuditResult",
    "Event",
    "EventResult",
    "Feature",
    "FeatureSearch",
    "Finder",
    "TRIALS",
    "clopper_pearson_lower",
    "clopper_pearson_upper",
    "default_events",
    "epsilon_lower_bound",
    "expected_lower_bound",
    "lower_bound",
    "optimal_event_probabilities",
    "trials_needed",
]

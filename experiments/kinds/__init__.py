"""The trial kinds, one module each, and what every trial returns.

A trial function (``<kind>_trial`` in :mod:`experiments.kinds.<kind>`) takes the checked
config of a setting (a plain dict) and the trial's :class:`~experiments.seeding.TrialStreams`,
and returns a :class:`TrialResult`: a list of :class:`Measurement` (metric, value,
analytical value if any, item) plus what the rows must say about the data and the
protocol it built (its effective parameters are recorded in every row).  It knows
nothing of files or workers.  :data:`experiments.trials.TRIAL_KINDS` maps each
``protocol.kind`` to its function; each module's docstring says what its kind records.

* :mod:`~experiments.kinds.oracle`: a frequency oracle on the tracked values (USENIX'17).
* :mod:`~experiments.kinds.multiple_questions`: two questions per user, split ε or
  partition the users ([FO]).
* :mod:`~experiments.kinds.heavy_hitter`: a heavy-hitter protocol's top k ([PEM]).
* :mod:`~experiments.kinds.rappor_decode`: RAPPOR's decoder over the whole domain.
* :mod:`~experiments.kinds.longitudinal`: τ collections by a memoized protocol ([ACBX22]).
* :mod:`~experiments.kinds.mean`: a mean protocol on real values ([W19]).
* :mod:`~experiments.kinds.oracle_frontier`: every registered oracle at one (d, ε).
* :mod:`~experiments.kinds.sets`: a protocol over users' item sets finds the top-k items
  ([FIM]).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

NAN = float("nan")


@dataclass(frozen=True)
class Measurement:
    """One number a trial recorded: a row of the results table."""

    metric: str
    value: float
    analytic: float = NAN  #: the closed-form expectation, where one exists
    item: int | None = None  #: which value (a rank, 1 = most frequent) for per-value rows


@dataclass
class TrialResult:
    """What one trial produced."""

    measurements: list[Measurement]
    data_source: str  #: "synthetic", "surrogate", "real:<path>" or "point"
    n: int  #: users in the trial
    wall_time: float = NAN  #: seconds, filled in by :func:`run_trial`
    notes: dict[str, Any] = field(default_factory=dict)
    #: the protocol the trial ran (built from the config as the trial builds it), whose
    #: fields after defaults and derived values are the row's ``protocol.*`` columns
    protocol: Any = None

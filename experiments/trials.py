"""What one trial does: :data:`TRIAL_KINDS`, the trial function per ``protocol.kind``, and
:func:`run_trial`, which runs one trial of a setting with its own seeded streams.

Each kind is a module of :mod:`experiments.kinds` (its docstring says what the kind
records); every trial function returns a :class:`~experiments.kinds.TrialResult`, a list
of :class:`~experiments.kinds.Measurement` (the rows of the results table) plus what the
rows must say about the data.

To add a kind: write ``def my_trial(config, streams) -> TrialResult`` in a module
``experiments/kinds/my.py`` and add it to :data:`TRIAL_KINDS` (and to
:data:`experiments.schema.TRIAL_KINDS`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from experiments.kinds import TrialResult
from experiments.kinds.heavy_hitter import heavy_hitter_trial
from experiments.kinds.longitudinal import longitudinal_trial
from experiments.kinds.mean import mean_trial
from experiments.kinds.multiple_questions import multiple_questions_trial
from experiments.kinds.oracle import oracle_trial
from experiments.kinds.oracle_frontier import oracle_frontier_trial
from experiments.kinds.rappor_decode import rappor_decode_trial
from experiments.kinds.sets import set_trial
from experiments.seeding import TrialStreams, trial_streams

#: Trial function per ``protocol.kind``.
TRIAL_KINDS: dict[str, Callable[[dict[str, Any], TrialStreams], TrialResult]] = {
    "oracle": oracle_trial,
    "heavy_hitter": heavy_hitter_trial,
    "multiple_questions": multiple_questions_trial,
    "rappor_decode": rappor_decode_trial,
    "longitudinal": longitudinal_trial,
    "mean": mean_trial,
    "oracle_frontier": oracle_frontier_trial,
    "set": set_trial,
}


def run_trial(config: dict[str, Any], trial: int) -> TrialResult:
    """Run trial ``trial`` of a setting with its own seeded streams, timing it."""
    start = time.perf_counter()
    streams = trial_streams(config["seed"], trial, config["protocol"])
    result = TRIAL_KINDS[config["protocol"]["kind"]](config, streams)
    result.wall_time = time.perf_counter() - start
    return result

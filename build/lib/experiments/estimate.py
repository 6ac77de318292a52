"""A run's cost, estimated before it starts from a few trials timed in the parent.

One trial of each protocol x data set x engine of the run (the *cost class*: these decide
a trial's cost far more than ε or k) is run and timed in the parent process before the
pool starts, twice when the first is quick, so that one-time costs (compiling a kernel,
loading a data file) are not multiplied by the number of trials; the faster time counts.
The timed trials are real trials, recorded like the others, so nothing is computed twice.
The estimate is the sum over the missing trials of their class's time, divided by the
workers; a class not timed within the probing budget gets the mean of the timed ones.
It is rough: within a class a trial's cost still varies with ε, k and n (SPM on 160-bit
URLs at large ε is several times its cost at small ε), and workers share the machine.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import joblib

#: Seconds of probing at most (a class whose first trial took longer is not retried).
PROBE_BUDGET = 5.0
#: A first trial faster than this is timed again (the first carries one-time costs).
RETIME_BELOW = 1.0
#: The overrides that shrink a run, for the warning (and ``n_jobs=-1`` when cores are idle).
SHRINK_HINTS = (
    "n_trials=3 (fewer trials per setting)",
    "a smaller grid, e.g. epsilon=1,4 or k=16 (without -m: restricts the experiment's axis)",
    "dataset.n=100000 (synthetic data sets)",
)


def cost_class(setting: Any) -> tuple[str, str, str]:
    """(protocol, data set, engine) of a setting: what decides a trial's cost most."""
    config = setting.config
    protocol = config.get("protocol") or {}
    dataset = config.get("dataset") or {}
    return (
        str(protocol.get("label") or protocol.get("name")),
        str(dataset.get("name")),
        str(config.get("engine")),
    )


@dataclass(frozen=True)
class Probe:
    """What the timing probe did: seconds per trial by cost class, trials it ran, and the
    batches left for the pool."""

    seconds: dict[tuple[str, str, str], float]
    ran: int
    batches: list
    elapsed: float


def probe(
    batches: Sequence[Any],
    run: Callable[[Any, tuple[int, ...]], None],
    budget: float = PROBE_BUDGET,
) -> Probe:
    """Time one or two trials of each cost class; ``run(setting, trials)`` runs and records
    them.  ``batches`` have ``setting`` and ``trials``; the returned ones lack the trials run."""
    start = time.perf_counter()
    seconds: dict[tuple[str, str, str], float] = {}
    timings: dict[tuple[str, str, str], int] = {}

    def wanted(key: tuple[str, str, str]) -> bool:
        done = timings.get(key, 0)
        return done == 0 or (done == 1 and seconds[key] < RETIME_BELOW)

    left, ran = [], 0
    for batch in batches:
        trials = tuple(batch.trials)
        key = cost_class(batch.setting)
        while trials and time.perf_counter() - start < budget and wanted(key):
            begin = time.perf_counter()
            run(batch.setting, trials[:1])
            took = time.perf_counter() - begin
            seconds[key] = min(took, seconds.get(key, took))
            timings[key] = timings.get(key, 0) + 1
            trials, ran = trials[1:], ran + 1
        if trials:
            left.append(replace(batch, trials=trials))
    return Probe(seconds, ran, left, time.perf_counter() - start)


def estimate_seconds(probed: Probe, workers: int) -> float:
    """Wall-clock seconds of the batches left, at ``workers`` in parallel."""
    if not probed.seconds:
        return 0.0
    fallback = sum(probed.seconds.values()) / len(probed.seconds)
    work = sum(
        len(b.trials) * probed.seconds.get(cost_class(b.setting), fallback) for b in probed.batches
    )
    return work / max(1, min(workers, max(len(probed.batches), 1)))


def duration(seconds: float) -> str:
    """``< 1 s``, ``42 s``, ``7 min``, ``2.5 h``."""
    if seconds < 1:
        return "< 1 s"
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 90 * 60:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


#: Runs estimated shorter than this (seconds) print no estimate: worker start-up dominates.
SHOW_FROM = 60.0


def estimate_lines(
    probed: Probe, workers: int, warn_minutes: float
) -> tuple[str | None, str | None]:
    """The estimate line (None under :data:`SHOW_FROM` seconds unless a warning follows),
    and a warning naming the ways to shrink the run when it exceeds ``warn_minutes``."""
    seconds = estimate_seconds(probed, workers)
    left = sum(len(b.trials) for b in probed.batches)
    plural = "s" if workers != 1 else ""
    line = (
        f"  estimate: about {duration(seconds)} for the {left} trials left on {workers} "
        f"worker{plural} (rough: one trial of each of {len(probed.seconds)} protocol x data "
        f"set x engine classes timed, {probed.ran} trials in {probed.elapsed:.1f} s; "
        "warn_minutes=null skips this)"
    )
    if seconds <= 60 * warn_minutes:
        return (line if seconds >= SHOW_FROM else None), None
    cores = joblib.cpu_count()
    more = (f"n_jobs=-1 (all {cores} cores, {workers} now)",) if workers < cores else ()
    hints = "; ".join(SHRINK_HINTS + more)
    warning = (
        f"warning: this run will take about {duration(seconds)} (over warn_minutes="
        f"{warn_minutes:g}). To shrink it: {hints}. Finished trials are kept: stop with "
        "Ctrl-C and rerun the same command to resume."
    )
    return line, warning

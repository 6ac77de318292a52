"""Run settings x trials in one joblib pool, writing each batch's rows as it finishes.

The parent plans the missing trials (what the store already holds is skipped), hands
batches of consecutive trials of one setting to the workers, and writes each finished
batch as one atomic part, so an interrupted run loses at most the batches in flight.
Workers return rows and never touch the disk, so the same code runs on a Dask cluster
(``backend=dask``) without a shared file system.  Parallelism is at this one level only.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import math
import multiprocessing
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import joblib
import numpy as np
import pandas as pd

from experiments import columns as col
from experiments import estimate
from experiments.codedigest import changed_files
from experiments.provenance import plugin_of, provenance, short_commit
from experiments.settings import Setting
from experiments.store import EFFECTIVE, ResultsStore, Rows
from experiments.trials import run_trial

log = logging.getLogger(__name__)

#: Largest automatic batch: bounds what an interruption can lose.
MAX_AUTO_BATCH = 20


_WATCHING = False


def die_with(parent: int) -> None:
    """In a worker process the run started (a direct child), exit when the run dies.

    A ``kill -9`` of the run would otherwise leave its loky workers computing batches
    nobody will record, or idling for loky's 300 s timeout.  The watch is a daemon thread
    that polls the parent's pid, started by the pool's initializer (:func:`joblib_backend`)
    so that a worker never given a batch watches too; it is not started in the run's own
    process (threading backend) or on a remote Dask worker.
    """
    global _WATCHING
    if _WATCHING or os.getpid() == parent or os.getppid() != parent:
        return
    _WATCHING = True

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, name="ldp-parent-watch", daemon=True).start()


class TrialError(RuntimeError):
    """A trial failed; one line naming the experiment, the setting, the trial and the cause.

    Built from plain text in the worker, so it crosses any process pool (the cause itself
    might not pickle) and reaches the user the same way with one worker or many.
    """


def _trial_error(experiment: str, setting: Setting, trial: int, error: Exception) -> TrialError:
    text = str(error).strip()
    first = text.splitlines()[0] if text else ""
    where = " ".join(setting.overrides) or f"setting {setting.key}"
    return TrialError(
        f"trial {trial} of {experiment} ({where}) failed: {type(error).__name__}: {first}"
    )


@dataclass(frozen=True)
class Batch:
    """Consecutive trials of one setting, run by one worker call."""

    setting: Setting
    trials: tuple[int, ...]


def _cell_value(value: Any) -> Any:
    """A protocol's field as one table cell: a protocol (class or instance) by its registry
    name, a sequence as JSON text, None as the text "None" (the effective value)."""
    if value is None:
        return "None"
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, type) or dataclasses.is_dataclass(value):
        cls = value if isinstance(value, type) else type(value)
        return getattr(cls, "name", None) or cls.__name__
    if isinstance(value, list | tuple | np.ndarray):
        return json.dumps([_cell_value(v) for v in value])
    return str(value)


def _resolved(protocol: Any, name: str) -> Any:
    """What a None-valued field ``name`` resolves to in ``protocol``: its ``<name>_value``
    or ``<name>_realised`` property (TreeHist's z, RAPPOR's f), else the attribute of that
    name of a derived dataclass field (PEM's ``config``: γ, η[i], n[i]/n, |C_i|), else
    None (None is then the effective value, e.g. no threshold)."""
    for attribute in (f"{name}_value", f"{name}_realised"):
        value = getattr(protocol, attribute, None)
        if value is not None and not callable(value):
            return value
    for spec in dataclasses.fields(protocol):
        derived = getattr(protocol, spec.name, None)
        if not spec.init and dataclasses.is_dataclass(derived) and hasattr(derived, name):
            return getattr(derived, name)
    return None


def effective_parameters(protocol: Any) -> dict[str, Any]:
    """Every parameter of ``protocol`` (the object a trial built) after its defaults and
    derived values, as ``effective.<field>`` columns: each field of its dataclass's
    constructor (``epsilon``, ``domain_size``, ``g``, ``n_hint``...), a None resolved where
    the protocol resolves it (:func:`_resolved`), else the text "None".  Empty without a
    protocol (a kind that runs several, such as the frontier)."""
    if protocol is None or not dataclasses.is_dataclass(protocol):
        return {}
    found = {}
    for spec in dataclasses.fields(protocol):
        if not spec.init:
            continue
        value = getattr(protocol, spec.name)
        if value is None:
            value = _resolved(protocol, spec.name)
        found[f"{EFFECTIVE}{spec.name}"] = _cell_value(value)
    return found


def run_batch(
    setting: Setting,
    trials: Sequence[int],
    experiment: str,
    stamp: dict[str, str],
) -> tuple[str, tuple[int, ...], Rows]:
    """Run ``trials`` of ``setting``; return its key, the trials and their rows (tidy).

    Each row holds the setting's parameters as configured (``protocol.*``: a null is the
    class's default) and as the trial's protocol holds them (``effective.*``).
    """
    params = setting.params
    stamp = {
        **stamp,
        **plugin_of(setting.config["protocol"]),
        "code_digest": setting.code_digest,
    }
    results = []
    for trial in trials:
        try:
            results.append((trial, run_trial(setting.config, trial)))
        except Exception as error:  # every cause becomes one line
            raise _trial_error(experiment, setting, trial, error) from None
    effective = effective_parameters(results[0][1].protocol) if results else {}
    columns = (
        (col.EXPERIMENT, col.CONFIG_HASH, col.TRIAL, col.METRIC, col.ITEM, col.VALUE)
        + (col.ANALYTIC, *params, *effective)
        + (col.DATA_SOURCE, col.N, col.WALL_TIME, *stamp)
    )
    fixed, provenance_values = tuple(params.values()), tuple(stamp.values())
    rows: list[tuple[Any, ...]] = []
    for trial, result in results:
        found = effective_parameters(result.protocol)
        values = tuple(found.get(name) for name in effective)
        tail = (result.data_source, result.n, result.wall_time, *provenance_values)
        for m in result.measurements:
            rows.append(
                (experiment, setting.key, trial, m.metric, m.item, m.value, m.analytic)
                + fixed
                + values
                + tail
            )
    return setting.key, tuple(trials), Rows(columns, rows)


@dataclass(frozen=True)
class Plan:
    """What a run will do: its batches, and what the store already holds."""

    batches: list[Batch]
    done_before: int  #: trials already recorded
    #: recorded trials that another version of the code produced, by "ldp <v>, commit <c>"
    foreign: dict[str, int]
    #: settings whose rows were recorded under other code (another code digest), by key:
    #: the files that differ (empty: recorded before code digests)
    stale: dict[str, list[str]] = field(default_factory=dict)

    @property
    def todo(self) -> int:
        return sum(len(b.trials) for b in self.batches)


def _versions(frames: Sequence[pd.DataFrame], stamp: dict[str, str]) -> dict[str, int]:
    """Trials of ``frames`` recorded by code other than ``stamp``, per version: each
    frame's distinct trials, by the version of the first row of each."""
    columns = ["trial", "ldp_version", "git_commit"]
    kept = [
        frame[columns].drop_duplicates("trial").astype(str)
        for frame in frames
        if not frame.empty and "git_commit" in frame.columns
    ]
    if not kept:
        return {}
    trials = pd.concat(kept, ignore_index=True)
    own = (trials["ldp_version"] == stamp["ldp_version"]) & (
        trials["git_commit"] == stamp["git_commit"]
    )
    counts: dict[str, int] = {}
    for (version, commit), count in trials[~own].value_counts(columns[1:], sort=False).items():
        name = f"ldp {version}, commit {short_commit(commit)}"
        counts[name] = counts.get(name, 0) + int(count)
    return counts


#: Settings whose recorded rows :func:`plan` reads at once.
PLAN_SETTINGS = 256


def plan(
    settings: Sequence[Setting],
    store: ResultsStore,
    n_trials: int,
    batch_size: int | None,
    workers: int,
    stamp: dict[str, str] | None = None,
) -> Plan:
    """The batches still to run, what was already recorded, and by which code."""
    stamp = stamp or provenance()
    missing: list[tuple[Setting, list[int]]] = []
    done_before = 0
    stale = stale_settings(settings, store)
    foreign: dict[str, int] = {}
    # PLAN_SETTINGS settings' recorded rows at a time: memory bounded whatever the sweep
    for first in range(0, len(settings), PLAN_SETTINGS):
        group = settings[first : first + PLAN_SETTINGS]
        recorded = store.recorded_many(setting.key for setting in group)
        kept: list[pd.DataFrame] = []
        for setting in group:
            parts, frames = recorded[setting.key]
            done = {t for part in parts for t in part.trials}
            todo = [t for t in range(n_trials) if t not in done]
            done_before += n_trials - len(todo)
            kept.extend(f[f["trial"] < n_trials] for f in frames if "trial" in f.columns)
            if todo:
                missing.append((setting, todo))
        for name, count in _versions(kept, stamp).items():
            foreign[name] = foreign.get(name, 0) + count
    total = sum(len(todo) for _, todo in missing)
    size = batch_size or max(1, min(MAX_AUTO_BATCH, math.ceil(total / (8 * max(workers, 1)))))
    batches = []
    for setting, todo in missing:
        run: list[int] = []
        for trial in todo:
            if run and (trial != run[-1] + 1 or len(run) == size):
                batches.append(Batch(setting, tuple(run)))
                run = []
            run.append(trial)
        batches.append(Batch(setting, tuple(run)))
    return Plan(batches, done_before, foreign, stale)


def stale_settings(settings: Sequence[Setting], store: ResultsStore) -> dict[str, list[str]]:
    """The settings of ``settings`` that ``store`` holds rows of under other code: the same
    config (base key) recorded under another code digest, or before code digests.  Each
    maps to the files whose content differs (:func:`experiments.codedigest.changed_files`;
    empty when the old rows name no files).  Those rows are never reused: the setting's
    trials are computed under its own key."""
    by_base: dict[str, list[str]] = {}
    records = store.code_records()
    for key in store.keys():
        record = records.get(key)
        by_base.setdefault(record["base_key"] if record else key, []).append(key)
    stale: dict[str, list[str]] = {}
    for setting in settings:
        others = [k for k in by_base.get(setting.base_key, []) if k != setting.key]
        others = [k for k in others if store.parts(k)]
        if not setting.base_key or not others:
            continue
        changed: set[str] = set()
        for key in others:
            files = records.get(key, {}).get("files")
            if isinstance(files, dict):
                changed.update(changed_files(files, setting.code_files))
        stale[setting.key] = sorted(changed)
    return stale


def kind_note(settings: Sequence[Setting]) -> str:
    """A note when memoized (longitudinal) protocols run as one-round ``oracle`` trials: their
    class has ``perturb_rounds``, but ``protocol.kind`` left at ``oracle`` draws one fresh
    report per user.  Empty otherwise."""
    from ldp import registry
    from ldp.contract import HasRounds

    names = []
    for setting in settings:
        protocol = setting.config["protocol"]
        if protocol.get("kind") != "oracle":
            continue
        try:
            cls = registry.get(str(protocol.get("name"))).cls
        except registry.RegistryError:
            continue
        name = str(getattr(cls, "name", cls.__name__))
        if issubclass(cls, HasRounds) and name not in names:
            names.append(name)
    if not names:
        return ""
    return (
        f"{', '.join(names)}: {'a memoized protocol' if len(names) == 1 else 'memoized protocols'}"
        ", run here as one-round oracle trials (one "
        "fresh report per user at epsilon); for tau rounds from the same users set "
        "protocol.kind=longitudinal engine=reports options.rounds=<tau> (docs/longitudinal.md)"
    )


def stale_text(settings: Sequence[Setting], stale: dict[str, list[str]]) -> str:
    """What :func:`stale_settings` found, in words (empty when nothing is stale)."""
    if not stale:
        return ""
    names = [" ".join(s.overrides) or f"setting {s.key}" for s in settings if s.key in stale]
    shown = "; ".join(names[:3]) + (f"; +{len(names) - 3} more" if len(names) > 3 else "")
    files = sorted({f for changed in stale.values() for f in changed})
    why = (
        f"changed: {', '.join(files[:6])}" + (f" +{len(files) - 6} more" if len(files) > 6 else "")
        if files
        else "recorded before code digests"
    )
    if any(not changed for changed in stale.values()) and files:
        why += "; some recorded before code digests"
    return (
        f"{len(names)} settings have rows computed by other code ({why}): stale, "
        f"not reused; their trials run under the current code ({shown})"
    )


def plan_line(experiment: str, settings: Sequence[Setting], n_trials: int, planned: Plan) -> str:
    """The first line of a run: what is recorded, what will run, and by which code."""
    line = (
        f"{experiment}: {len(settings)} settings x {n_trials} trials; "
        f"{planned.done_before} recorded, {planned.todo} to run"
    )
    if planned.foreign:
        count = sum(planned.foreign.values())
        versions = "; ".join(sorted(planned.foreign))
        this = provenance()
        line += (
            f"; {count} of the recorded trials came from another version ({versions}), "
            f"this is ldp {this['ldp_version']}, commit {short_commit(this['git_commit'])}: "
            "rerun=true recomputes them"
        )
    stale = stale_text(settings, planned.stale)
    if stale:
        line += f"; {stale}"
    return line


class _Progress:
    """tqdm on a terminal (if installed), else a line every 10% (a log file gets lines, not
    one long line of carriage returns); ``initial`` trials are already done (the
    estimate's timed trials), so the total is the run's whole count."""

    def __init__(self, total: int, label: str, enabled: bool, initial: int = 0):
        self.total, self.count, self.label, self.enabled = total, initial, label, enabled
        self.bar = None
        if enabled and sys.stderr.isatty():
            try:
                from tqdm.auto import tqdm

                self.bar = tqdm(
                    total=total, initial=initial, desc=label, unit="trial", file=sys.stderr
                )
            except ImportError:
                pass

    def update(self, count: int) -> None:
        before, self.count = self.count, self.count + count
        if self.bar is not None:
            self.bar.update(count)
        elif (
            self.enabled
            and self.total
            and (10 * self.count) // self.total > (10 * before) // self.total
        ):
            print(f"{self.label}: {self.count}/{self.total} trials", file=sys.stderr)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


@contextlib.contextmanager
def joblib_backend(backend: str, dask_scheduler: str | None = None) -> Iterator[None]:
    """``joblib.parallel_config`` for ``backend``; ``dask`` connects a distributed Client.

    With ``dask_scheduler`` (e.g. ``tcp://head:8786``) the trials run on that cluster's
    workers; without it a local Dask cluster is started.
    """
    if backend != "dask":
        # a local process pool's workers exit when this process dies (:func:`die_with`)
        watch = {"initializer": die_with, "initargs": (os.getpid(),)}
        local_pool = backend in ("loky", "multiprocessing")
        with joblib.parallel_config(backend=backend, **(watch if local_pool else {})):
            yield
        return
    from distributed import Client  # optional: see docs/cluster.md

    # Dask logs every worker's start and stop at INFO: the run's own lines would drown
    logging.getLogger("distributed").setLevel(logging.WARNING)
    client = Client(dask_scheduler) if dask_scheduler else Client(silence_logs=logging.WARNING)
    with client:
        log.info("dask: %s", client)
        with joblib.parallel_config(backend="dask"):
            yield


def parallel_map(
    function: Callable[..., Any], arguments: Sequence[tuple], n_jobs: int = -1
) -> list[Any]:
    """``[function(*a) for a in arguments]``, in order, on the local loky pool (the one the
    trials use, whose workers die with this process); serially for fewer than two calls or
    ``n_jobs=1`` (a protocol registered in this process only is then found).

    For the figures' model curves: seconds per point, the same numbers in any process.
    Inside a worker of that pool (a figure drawn in parallel with others) it runs serially:
    parallelism is at one level.
    """
    if len(arguments) < 2 or n_jobs == 1 or multiprocessing.parent_process() is not None:
        return [function(*a) for a in arguments]
    with joblib_backend("loky"):
        return joblib.Parallel(n_jobs=n_jobs)(joblib.delayed(function)(*a) for a in arguments)


@dataclass(frozen=True)
class RunReport:
    """What :func:`execute` did."""

    settings: int
    trials: int  #: trials asked for, over all settings
    done_before: int  #: already in the store
    ran: int  #: run now
    seconds: float
    foreign: int = 0  #: recorded trials (kept) that another version of the code produced
    stale: str = ""  #: the settings recorded under other code, in words (:func:`stale_text`)


@dataclass
class Run:
    """One experiment's settings and store, and its run-only options, for :func:`execute_many`."""

    settings: Sequence[Setting]
    store: ResultsStore
    n_trials: int
    batch_size: int | None = None
    rerun: bool = False
    warn_minutes: float | None = None
    #: called with the number of trials of each of this run's batches the pool records
    on_trials: Callable[[int], None] | None = None


@dataclass
class _Progressing:
    """A :class:`Run` once planned: what is left of it and when it began."""

    run: Run
    planned: Plan  #: its batches: those left for the pool (after the estimate's)
    keys: set[str]  #: the settings with trials to run, compacted at the end
    left: int
    ran: int
    start: float

    def report(self) -> RunReport:
        settings = len(self.run.settings)
        return RunReport(
            settings,
            settings * self.run.n_trials,
            self.planned.done_before,
            self.ran,
            time.perf_counter() - self.start,
            sum(self.planned.foreign.values()),
            stale_text(self.run.settings, self.planned.stale),
        )


def execute(settings: Sequence[Setting], store: ResultsStore, **options: Any) -> RunReport:
    """Run every missing (setting, trial) and record it; return a :class:`RunReport`.

    Keyword options: ``n_trials`` (required), ``batch_size``, ``rerun``, ``warn_minutes``,
    ``on_trials`` (see :class:`Run`) and those of :func:`execute_many`.
    """
    keys = ("n_trials", "batch_size", "rerun", "warn_minutes", "on_trials")
    run = Run(settings, store, **{k: options.pop(k) for k in keys if k in options})
    return execute_many([run], **options)[0]


def execute_many(
    runs: Sequence[Run],
    *,
    n_jobs: int | None = None,
    backend: str = "loky",
    dask_scheduler: str | None = None,
    progress: bool = True,
    announce: bool = False,
    on_done: Callable[[int, RunReport], None] | None = None,
) -> list[RunReport]:
    """Run the missing trials of several experiments in one pool, in order; record them.

    One pool for all keeps both cores busy across the experiments' boundaries (the next
    experiment's first batches fill the workers the last one's tail leaves idle).  With a
    run's ``rerun`` its settings' recorded trials are deleted first.  With ``announce`` each
    run's first line (:func:`plan_line`) and the data its settings read are printed before
    any trial, and with its ``warn_minutes`` a few of its trials are timed first for an
    estimate (:mod:`experiments.estimate`).  ``on_done(i, report)`` is called as soon as
    run ``i``'s last batch is recorded (its parts compacted).  ``KeyboardInterrupt`` stops
    after logging what was kept; rerunning resumes.
    """
    jobs = -1 if n_jobs is None else n_jobs
    stamp = provenance()
    states: list[_Progressing] = []
    tasks: list[tuple[int, Batch]] = []
    with contextlib.ExitStack() as stack:
        stack.enter_context(joblib_backend(backend, dask_scheduler))
        workers = joblib.effective_n_jobs(jobs)
        for index, run in enumerate(runs):
            state = _prepare(run, stack, stamp, workers, announce)
            states.append(state)
            tasks += [(index, batch) for batch in state.planned.batches]
        todo = sum(state.left for state in states)
        timed = sum(state.ran for state in states)  # the estimate's trials, already recorded
        label = runs[0].store.experiment if len(runs) == 1 else f"{len(runs)} experiments"
        bar = _Progress(todo + timed, label, progress and todo > 0, initial=timed)
        for index, state in enumerate(states):
            if state.left == 0:
                _finish(index, state, on_done)
        calls = (
            joblib.delayed(_run_owned)(i, b.setting, b.trials, runs[i].store.experiment, stamp)
            for i, b in tasks
        )
        try:
            outputs = joblib.Parallel(n_jobs=jobs, return_as="generator_unordered")(calls)
            for index, (key, trials, frame) in outputs:
                state = states[index]
                state.run.store.write_part(key, trials, frame)
                state.ran, state.left = state.ran + len(trials), state.left - len(trials)
                bar.update(len(trials))
                if state.run.on_trials is not None:
                    state.run.on_trials(len(trials))
                if state.left == 0:
                    _finish(index, state, on_done)
                    # the runs overlap: the next ones' time counts from this one's end
                    for later in states[index + 1 :]:
                        later.start = max(later.start, time.perf_counter())
        except KeyboardInterrupt:
            log.warning(
                "interrupted: %d of %d trials recorded in this run; rerun the same "
                "command to resume",
                sum(state.ran for state in states),
                sum(state.ran + state.left for state in states),
            )
            raise
        finally:
            bar.close()
    return [state.report() for state in states]


def _run_owned(index: int, *arguments: Any) -> tuple[int, tuple[str, tuple[int, ...], Rows]]:
    """:func:`run_batch`, tagged with the index of the run it belongs to."""
    return index, run_batch(*arguments)


def _prepare(
    run: Run, stack: contextlib.ExitStack, stamp: dict[str, str], workers: int, announce: bool
) -> _Progressing:
    """Lock ``run``'s settings (until ``stack`` closes), plan it, record its settings and,
    with ``warn_minutes``, time its first trials for the estimate."""
    start = time.perf_counter()
    store, settings = run.store, run.settings
    writable = stack.enter_context(store.locked(s.key for s in settings))
    if writable:
        for setting in settings:
            store.remove_stale_temporaries(setting.key)
            if run.rerun:
                store.forget(setting.key)
    planned = plan(settings, store, run.n_trials, run.batch_size, workers, stamp)
    store.check_writable(writable, planned.todo)
    if announce:
        print(plan_line(store.experiment, settings, run.n_trials, planned), flush=True)
        for line in sorted({s.data for s in settings if s.data}):
            print(f"  data: {line}", flush=True)
        note = kind_note(settings)
        if note:
            print(f"  note: {note}", flush=True)
    for setting in settings if planned.todo else ():
        store.record_setting(setting.key, setting.config)
    for setting in settings if writable else ():
        if (
            setting.key in planned.stale
            or not (store.directory / "code").joinpath(f"{setting.key}.json").exists()
        ):
            record = {"base_key": setting.base_key, "code_digest": setting.code_digest}
            store.record_code(setting.key, {**record, "files": setting.code_files})
    keys = {b.setting.key for b in planned.batches}
    state = _Progressing(run, planned, keys, planned.todo, 0, start)
    if announce and run.warn_minutes is not None and planned.todo:

        def run_here(setting: Setting, trials: tuple[int, ...]) -> None:
            key, done, rows = run_batch(setting, trials, store.experiment, stamp)
            store.write_part(key, done, rows)

        probed = estimate.probe(planned.batches, run_here)
        line, warning = estimate.estimate_lines(probed, workers, run.warn_minutes)
        if line:
            print(line, flush=True)
        if warning:
            print(warning, file=sys.stderr, flush=True)
        state.planned = replace(planned, batches=probed.batches)
        state.ran, state.left = probed.ran, planned.todo - probed.ran
        if run.on_trials is not None and probed.ran:
            run.on_trials(probed.ran)
    return state


def _finish(
    index: int, state: _Progressing, on_done: Callable[[int, RunReport], None] | None
) -> None:
    """Compact a finished run's parts and report it."""
    for key in state.keys:
        state.run.store.compact(key)
    if on_done is not None:
        on_done(index, state.report())

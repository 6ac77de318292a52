"""One progress line for a multirun (``python -m experiments.run -m ...``).

Under Hydra's basic launcher (the default: jobs one after another in this process) Hydra
would log a line per job and each job would print its own progress bar and summary: about
three lines a job.  This callback counts the sweep's jobs up front (Hydra's own sweep
expansion of ``hydra.sweeper.params`` and the command line), silences the per-job lines
and keeps one line: redrawn in place on a terminal (also as a job's trials finish),
otherwise written at every tenth of the jobs, then a summary.  Each job's own line (its
overrides and what it ran) goes to its log file only, ``<sweep dir>/<job number>/run.log``.
A job that reports something worth reading (trials recorded by another version of the
code, an error) still prints it.  Under launchers that run jobs in other processes
(joblib, submitit) each job prints its own lines as before.
"""

from __future__ import annotations

import logging
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hydra.experimental.callback import Callback
from omegaconf import DictConfig, OmegaConf

#: Hydra's per-job log lines ("Launching N jobs locally", "#3 : protocol=...").
LAUNCHER_LOGGER = "hydra._internal.core_plugins.basic_launcher"


def count_jobs(config: DictConfig) -> int | None:
    """The number of jobs Hydra's basic sweeper makes of ``config`` (None for another
    sweeper): its ``hydra.sweeper.params`` then the command line, the last value of a key
    winning, as :meth:`BasicSweeper.split_arguments` does."""
    from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
    from hydra.core.override_parser.overrides_parser import OverridesParser

    sweeper = config.hydra.sweeper
    if "BasicSweeper" not in str(sweeper.get("_target_", "")):
        return None
    params = sweeper.get("params")
    params = OmegaConf.to_container(params, resolve=False) if params else {}
    arguments = [f"{key}={value}" for key, value in params.items()]
    arguments += list(config.hydra.overrides.task)
    parsed = OverridesParser.create().parse_overrides(arguments)
    return sum(len(batch) for batch in BasicSweeper.split_arguments(parsed, None))


@dataclass
class Sweep:
    """The sweep in progress in this process (None outside a basic-launcher multirun)."""

    name: str
    total: int | None
    started: float = field(default_factory=time.perf_counter)
    jobs: int = 0
    ran: int = 0
    recorded: int = 0
    directory: str = ""
    running: int = 0  #: trials recorded so far by the job in progress
    width: int = 0  #: the longest line drawn on the terminal (a redraw covers it)
    logs: str = ""  #: where the jobs' own lines are, e.g. ``<sweep dir>/*/run.log``

    def line(self) -> str:
        elapsed = time.perf_counter() - self.started
        of = f"/{self.total}" if self.total else ""
        text = (
            f"{self.name}: [{self.jobs}{of} jobs] {self.ran + self.running} trials run now, "
            f"{self.recorded} already recorded; {_clock(elapsed)} elapsed"
        )
        if self.total and 0 < self.jobs < self.total:
            text += f", ~{_clock(elapsed / self.jobs * (self.total - self.jobs))} left"
        return text


#: Set by :class:`SweepProgress` while a basic-launcher multirun runs in this process.
CURRENT: Sweep | None = None


def _clock(seconds: float) -> str:
    minutes, seconds = divmod(int(round(seconds)), 60)
    return f"{minutes}m{seconds:02d}s" if minutes else f"{seconds}s"


def _redraw(sweep: Sweep) -> None:
    """The line again over the last one (padded: a shorter line leaves no tail behind)."""
    text = sweep.line()
    print(f"\r{text.ljust(sweep.width)}", end="", file=sys.stderr, flush=True)
    sweep.width = max(sweep.width, len(text))


def _to_log_file(text: str) -> str:
    """Write ``text`` to the job's log files only (Hydra's ``<job dir>/<job name>.log``),
    not to the console; return the pattern of the sweep's log files ("" if none)."""
    record = logging.LogRecord(__name__, logging.INFO, __file__, 0, text, None, None)
    pattern = ""
    for handler in logging.getLogger().handlers:
        if isinstance(handler, logging.FileHandler):
            handler.handle(record)
            path = Path(handler.baseFilename)
            pattern = str(path.parent.parent / "*" / path.name)
    return pattern


def trials_done(count: int) -> None:
    """Count ``count`` trials just recorded by the running job (redrawn on a terminal only:
    elsewhere the line is written per tenth of the jobs)."""
    sweep = CURRENT
    if sweep is None or not sys.stderr.isatty():
        return
    sweep.running += count
    _redraw(sweep)


def job_done(ran: int, recorded: int, directory: str, detail: str = "") -> None:
    """Count one finished job of the current sweep, write its ``detail`` line to its log
    file and redraw the sweep's line."""
    sweep = CURRENT
    if sweep is None:
        return
    before = sweep.jobs
    sweep.jobs, sweep.ran, sweep.recorded = before + 1, sweep.ran + ran, sweep.recorded + recorded
    sweep.running, sweep.directory = 0, directory
    if detail:
        sweep.logs = _to_log_file(detail) or sweep.logs
    if sys.stderr.isatty():
        _redraw(sweep)
    elif not sweep.total or (10 * sweep.jobs) // sweep.total > (10 * before) // sweep.total:
        print(sweep.line(), file=sys.stderr, flush=True)


def submitit_summary(config: DictConfig) -> str:
    """The line a submitit sweep ends with: its jobs ran elsewhere and printed to their log
    files, so say where the results and the logs are and what the store now holds."""
    from experiments.store import ResultsStore

    name = str(config.get("name", "multirun"))
    store = ResultsStore(str(config.get("results_dir", "results")), name)
    trials = sum(len(part.trials) for key in store.keys() for part in store.parts(key))
    jobs = count_jobs(config)
    logs = str(config.hydra.launcher.get("submitit_folder", "")).replace("%j", "*")
    return (
        f"{name}: {jobs if jobs is not None else 'the'} submitit jobs finished; "
        f"{len(store.keys())} settings, {trials} trials recorded in {store.directory}; "
        f"job logs in {logs}"
    )


class SweepProgress(Callback):
    """Hydra callback (``hydra.callbacks.progress`` in ``conf/config.yaml``)."""

    def on_multirun_start(self, config: DictConfig, **kwargs: Any) -> None:
        global CURRENT
        if "BasicLauncher" not in str(config.hydra.launcher.get("_target_", "")):
            return
        total = count_jobs(config)
        CURRENT = Sweep(name=str(config.get("name", "multirun")), total=total)
        logging.getLogger(LAUNCHER_LOGGER).setLevel(logging.WARNING)
        jobs = f"{total} jobs" if total else "jobs"
        print(
            f"{CURRENT.name}: {jobs} one after another in this process; one progress line "
            "below (hydra/launcher=parallel runs them in parallel)",
            flush=True,
        )

    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        global CURRENT
        sweep, CURRENT = CURRENT, None
        if sweep is None:
            if "submitit" in str(config.hydra.launcher.get("_target_", "")).lower():
                print(submitit_summary(config), flush=True)
            return
        if sys.stderr.isatty():
            print(file=sys.stderr)
        where = f"; results in {sweep.directory}" if sweep.directory else ""
        where += f"; job lines in {sweep.logs}" if sweep.logs else ""
        print(
            f"{sweep.name}: {sweep.jobs} jobs done in {_clock(time.perf_counter() - sweep.started)}"
            f": {sweep.ran} trials run now, {sweep.recorded} already recorded{where}",
            flush=True,
        )
        logging.getLogger(LAUNCHER_LOGGER).setLevel(logging.NOTSET)

"""One progress line for a multirun (``python -m experiments.run -m ...``).

Under Hydra's basic launcher (the default: jobs one after another in this process) Hydra
would log a line per job and each job would print its own progress bar and summary: about
three lines a job.  This callback counts the sweep's jobs up front (Hydra's own sweep
expansion of ``hydra.sweeper.params`` and the command line), silences the per-job lines
and keeps one line: redrawn in place on a terminal, otherwise written at every tenth of
the jobs, then a summary.  A job that reports something worth reading (trials recorded by
another version of the code, an error) still prints it.  Under launchers that run jobs in
other processes (joblib, submitit) each job prints its own lines as before.
"""

from __future__ import annotations

import logging
import sys
import time
from dataclasses import dataclass, field
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

    def line(self) -> str:
        elapsed = time.perf_counter() - self.started
        of = f"/{self.total}" if self.total else ""
        text = (
            f"{self.name}: [{self.jobs}{of} jobs] {self.ran} trials run now, {self.recorded} "
            f"already recorded; {_clock(elapsed)} elapsed"
        )
        if self.total and 0 < self.jobs < self.total:
            text += f", ~{_clock(elapsed / self.jobs * (self.total - self.jobs))} left"
        return text


#: Set by :class:`SweepProgress` while a basic-launcher multirun runs in this process.
CURRENT: Sweep | None = None


def _clock(seconds: float) -> str:
    minutes, seconds = divmod(int(round(seconds)), 60)
    return f"{minutes}m{seconds:02d}s" if minutes else f"{seconds}s"


def job_done(ran: int, recorded: int, directory: str) -> None:
    """Count one finished job of the current sweep and redraw its line."""
    sweep = CURRENT
    if sweep is None:
        return
    before = sweep.jobs
    sweep.jobs, sweep.ran, sweep.recorded = before + 1, sweep.ran + ran, sweep.recorded + recorded
    sweep.directory = directory
    if sys.stderr.isatty():
        print(f"\r{sweep.line()}", end="", file=sys.stderr, flush=True)
    elif not sweep.total or (10 * sweep.jobs) // sweep.total > (10 * before) // sweep.total:
        print(sweep.line(), file=sys.stderr, flush=True)


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
            return
        if sys.stderr.isatty():
            print(file=sys.stderr)
        where = f"; results in {sweep.directory}" if sweep.directory else ""
        print(
            f"{sweep.name}: {sweep.jobs} jobs done in {_clock(time.perf_counter() - sweep.started)}"
            f": {sweep.ran} trials run now, {sweep.recorded} already recorded{where}",
            flush=True,
        )
        logging.getLogger(LAUNCHER_LOGGER).setLevel(logging.NOTSET)

"""The Hydra app: ``python -m experiments.run experiment=<name> [overrides]``.

Without ``-m`` the experiment's whole grid (its ``hydra.sweeper.params``) runs in this one
process, every setting x trial through one joblib pool of ``n_jobs`` workers.  With ``-m``
Hydra's sweeper and launcher turn the grid (and any swept override) into jobs, each
running its own setting's trials.  Either way finished trials are skipped, so a rerun
resumes.  Examples::

    python -m experiments.run experiment=oracle_variance
    python -m experiments.run experiment=oracle_variance protocol=olh n_trials=20
    python -m experiments.run -m protocol=grr,olh epsilon=1,2,4 dataset=zipf engine=sampled
    python -m experiments.run -m experiment=oracle_variance hydra/launcher=joblib n_jobs=1
    python -m experiments.run experiment=pem_fig5 epsilon=1,4     # the grid, at ε = 1 and 4

Without ``-m`` a list of values (``epsilon=1,4``, ``protocol=pem,mcm``, ``range(1,3)``)
restricts (or adds) that axis of the experiment's grid, run in this one process; it is
the same as ``hydra.sweeper.params.epsilon='1,4'`` (under ``-m`` both are Hydra's sweep).
The command line is checked before Hydra composes it, so a wrong group choice or field is
one line (:func:`prepare`).

Parallelism is at one level: under the joblib launcher each job runs its trials with
``n_jobs=1`` (the default there; asking for more is an error).
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import hydra
from hydra import compose, initialize_config_dir
from hydra.core.hydra_config import HydraConfig
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.types import RunMode
from omegaconf import DictConfig
from omegaconf.errors import OmegaConfBaseException

from experiments import sweep_progress
from experiments.datafiles import REAL_DATASETS
from experiments.execute import (
    Run,
    RunReport,
    TrialError,
    die_with,
    execute_many,
    kind_note,
)
from experiments.names import plain_name
from experiments.preflight import preflight
from experiments.schema import ConfigError, register_configs
from experiments.settings import Setting, expand, make_setting
from experiments.store import ResultsDirError, ResultsStore, unusable

log = logging.getLogger(__name__)
CONF_DIR = Path(__file__).resolve().parent.parent / "conf"
GRID_PREFIX = "hydra.sweeper.params."
#: Hydra flags after which the command line is Hydra's business (help, --cfg, ...).
HYDRA_ONLY = ("-h", "--help", "--hydra-help", "-c", "--cfg", "-i", "--info", "-sc")
#: Hydra flags that take the next argument as their value.
VALUED = ("-p", "--package", "-cp", "--config-path", "-cn", "--config-name", "-cd")
VALUED += ("--config-dir", "--experimental-rerun")
#: Every flag Hydra's command line takes; anything else starting with "-" is a mistake.
FLAGS = (*HYDRA_ONLY, *VALUED, "-m", "--multirun", "--shell-completion", "--resolve", "--version")
#: What a flag-style name most likely meant, where the field's name differs.
MEANT = {"trials": "n_trials", "n": "dataset.n", "jobs": "n_jobs"}

register_configs()


def _group_options(group: str) -> str:
    """The choices of a config group, for an error line: protocols as registered (not the
    ``base_*`` internals), then the presets of ``conf/<group>/``."""
    from ldp import registry

    files = sorted(path.stem for path in (CONF_DIR / group).glob("*.yaml"))
    if group != "protocol":
        return ", ".join(files)
    names = [name.lower() for name in registry.protocols()]
    return f"{', '.join(names)}; presets: {', '.join(f for f in files if f not in names)}"


def _explain(error: Exception, overrides: list[str]) -> str:
    """One line for a Hydra composition error of ``overrides``."""
    text = str(error).strip()
    first = text.splitlines()[0] if text else type(error).__name__
    typed = _type_error(error.__cause__)
    if typed:
        return typed
    missing = re.search(r"Could not find '([\w/]+)/([^']+)'", first)
    if missing:
        group, option = missing.groups()
        return f"{group}: no {group} {option!r}; choose one of: {_group_options(group)}"
    field = re.search(r"Could not override '([^']+)'", first)
    if field:
        key = field.group(1)
        if key == "dataset.path":
            return (
                "dataset.path: this data set reads no file; the data sets that take a path: "
                f"{', '.join(REAL_DATASETS)} (e.g. dataset=kosarak dataset.path=...)"
            )
        return f"{key}: no such field (python -m experiments.run --help lists the fields)"
    return f"{' '.join(overrides)}: {first}"


def _type_error(cause: BaseException | None) -> str | None:
    """``protocol.k: must be an integer, got 'abc'`` for OmegaConf's typing error of a
    field (its first line after the field's name otherwise), or None."""
    from omegaconf.errors import ValidationError

    key = getattr(cause, "full_key", None)
    if not key or not isinstance(cause, ValidationError):  # not a value of the wrong type
        return None
    found = re.search(r"Value '(.*)' of type '\w+' could not be converted to (\w+)", str(cause))
    if found is None:
        return f"{key}: {str(cause).strip().splitlines()[0]}"
    value, kind = found.groups()
    kind = {"Integer": "an integer", "Float": "a number", "Boolean": "true or false"}.get(
        kind, f"a {kind.lower()}"
    )
    return f"{key}: must be {kind}, got {value!r}"


def _not_a_flag(arg: str, following: Sequence[str]) -> str:
    """``--trials 5``: one line saying settings are overrides, with the one it meant."""
    name, _, value = arg.lstrip("-").partition("=")
    if not value and following and not following[0].startswith("-") and "=" not in following[0]:
        value = following[0]
    key = MEANT.get(name, name.replace("-", "_"))
    return (
        f"{arg}: not an option; settings are key=value overrides "
        f"(did you mean {key}={value or '...'}? python -m experiments.run --help lists them)"
    )


def prepare(argv: Sequence[str]) -> tuple[list[str], list[str]]:
    """The command line Hydra gets, checked by composing it first, and the grid axes.

    Without ``-m``, a value list ``key=a,b`` (and ``hydra.sweeper.params.key='a,b'``) is
    taken out of the command line as a grid axis for :func:`experiments.settings.expand`
    (Hydra would refuse the first and, without ``-m``, ignore the second).  Every override
    is then composed (each value of a list), so a wrong protocol, data set or field stops
    the command with one line (:class:`ConfigError`) instead of Hydra's traceback hint.
    Help and ``--cfg`` command lines are left to Hydra.
    """
    argv = list(argv)
    if any(arg in HYDRA_ONLY for arg in argv):
        return argv, []
    multirun = "-m" in argv or "--multirun" in argv
    parser = OverridesParser.create()
    out, grid, checks = [], [], []
    skip = False
    for index, arg in enumerate(argv):
        if not skip and arg.startswith("-") and arg.split("=", 1)[0] not in FLAGS:
            raise ConfigError(_not_a_flag(arg, argv[index + 1 : index + 2]))
        if skip or arg.startswith("-"):
            skip = not skip and arg in VALUED
            out.append(arg)
            continue
        try:
            parsed = parser.parse_override(arg)
        except Exception as error:  # hydra's grammar errors
            raise ConfigError(f"{arg}: {str(error).strip().splitlines()[0]}") from None
        key, text = parsed.key_or_group, arg.split("=", 1)[-1]
        if not multirun and key.startswith(GRID_PREFIX):
            key, text = key.removeprefix(GRID_PREFIX), str(parsed.value())
            parsed = parser.parse_override(f"{key}={text}")
        if parsed.is_sweep_override() and not key.startswith("hydra."):
            checks.append([f"{key}={value}" for value in parsed.sweep_string_iterator()])
            if not multirun:
                grid.append(f"{key}={text}")
                continue
        elif not key.startswith("hydra."):
            checks.append([f"{key}={parsed.get_value_element_as_str()}"])
        out.append(arg)
    base = [c[0] for c in checks]
    attempts = [base] + [
        [*base[:i], value, *base[i + 1 :]]
        for i, values in enumerate(checks)
        for value in values[1:]
    ]
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3", job_name="check"):
        for attempt in attempts:
            try:
                composed = compose("config", overrides=attempt)
            except Exception as error:
                if type(error).__module__.split(".")[0] not in ("hydra", "omegaconf"):
                    raise
                raise ConfigError(_explain(error, attempt)) from None
            try:
                plain_name(composed.name)  # Hydra's run folder is <results_dir>/<name>/...
            except ValueError as error:
                raise ConfigError(str(error)) from None
            try:
                why = unusable(Path(str(composed.results_dir)))
            except OmegaConfBaseException:  # e.g. ${hydra:...}: resolved only under the app
                why = None
            if why:  # Hydra would fail creating its run folder there, with a traceback hint
                raise ConfigError(
                    f"results_dir: cannot write to {composed.results_dir} ({why}): "
                    "choose a writable results_dir=..."
                )
    return out, grid


#: The grid axes :func:`cli` took off the command line, for :func:`main` (same process).
GRID: list[str] = []


def inner_n_jobs(n_jobs: int | None, launcher_target: str, multirun: bool) -> int | None:
    """The trial-level ``n_jobs``: forced to 1 when the joblib launcher already runs jobs
    in parallel (one level of parallelism); an explicit other value is an error."""
    if multirun and "joblib" in launcher_target.lower():
        if n_jobs not in (None, 1):
            raise ConfigError(
                f"n_jobs: must be 1 under the joblib launcher (jobs already run "
                f"in parallel; parallelise at one level), got {n_jobs}"
            )
        return 1
    return n_jobs


def run_settings(
    settings: Sequence[Setting],
    *,
    n_jobs: int | None = None,
    export: bool = True,
    rerun: bool | None = None,
    announce: bool = False,
    backend: str | None = None,
    dask_scheduler: str | None = None,
    progress: bool | None = None,
    on_trials: Callable[[int], None] | None = None,
    estimate: bool = True,
) -> tuple[RunReport, ResultsStore]:
    """Run the missing trials of ``settings`` (run-only fields from the first one, unless
    given here); with ``rerun`` (default: the config's ``rerun``) recompute the recorded
    ones too.  ``on_trials``: see :class:`~experiments.execute.Run`.  ``estimate=False``
    skips the up-front estimate whatever the config's ``warn_minutes``."""
    return run_many(
        [settings],
        n_jobs=n_jobs,
        export=export,
        rerun=rerun,
        announce=announce,
        backend=backend,
        dask_scheduler=dask_scheduler,
        progress=progress,
        on_trials=on_trials,
        estimate=estimate,
    )[0]


def run_many(
    groups: Sequence[Sequence[Setting]],
    *,
    n_jobs: int | None = None,
    export: bool = True,
    rerun: bool | None = None,
    announce: bool = False,
    backend: str | None = None,
    dask_scheduler: str | None = None,
    progress: bool | None = None,
    on_trials: Callable[[int], None] | None = None,
    estimate: bool = True,
    on_done: Callable[[RunReport, ResultsStore], None] | None = None,
) -> list[tuple[RunReport, ResultsStore]]:
    """:func:`run_settings` for several experiments (one group of settings each) through
    one pool (:func:`~experiments.execute.execute_many`); the pool's options come from the
    first setting.  Each experiment's table is exported, and ``on_done(report, store)``
    called, as soon as its last trial is recorded."""
    first = groups[0][0].config
    runs = []
    for settings in groups:
        config = settings[0].config
        store = ResultsStore(config["results_dir"], config["name"], config["format"])
        runs.append(
            Run(
                settings,
                store,
                n_trials=config["n_trials"],
                batch_size=config["batch_size"],
                rerun=config.get("rerun", False) if rerun is None else rerun,
                warn_minutes=config.get("warn_minutes") if estimate else None,
                on_trials=on_trials,
            )
        )

    def finished(index: int, report: RunReport) -> None:
        store = runs[index].store
        if export:  # under -m every job refreshes it: the last one to finish sees every part
            with store.locked(["table"]) as writable:
                if writable:
                    store.export()
        if on_done is not None:
            on_done(report, store)

    try:
        reports = execute_many(
            runs,
            n_jobs=first["n_jobs"] if n_jobs is None else n_jobs,
            backend=first["backend"] if backend is None else backend,
            dask_scheduler=first["dask_scheduler"] if dask_scheduler is None else dask_scheduler,
            progress=first["progress"] if progress is None else progress,
            announce=announce,
            on_done=finished,
        )
    except OSError as error:  # the trials run in the workers; only the store writes here
        failed = str(getattr(error, "filename", None) or "")
        stores = [r.store for r in runs if failed.startswith(str(r.store.directory))]
        store = stores[0] if stores else runs[0].store
        raise ResultsDirError.writing(store.directory, error) from None
    return [(report, run.store) for report, run in zip(reports, runs, strict=True)]


def describe(report: RunReport, store: ResultsStore) -> str:
    """One line saying what a run did."""
    foreign = (
        f" ({report.foreign} by another version of the code: rerun=true recomputes them)"
        if report.foreign
        else ""
    )
    stale = f" ({report.stale})" if report.stale else ""
    return (
        f"{store.experiment}: {report.settings} settings x "
        f"{report.trials // max(report.settings, 1)} trials; {report.done_before} already "
        f"recorded{foreign}, {report.ran} run now{stale} in {report.seconds:.1f} s; results in "
        f"{store.directory}"
    )


@hydra.main(version_base="1.3", config_path=str(CONF_DIR), config_name="config")
def main(cfg: DictConfig) -> None:
    """Entry point (see the module docstring)."""
    hydra_cfg = HydraConfig.get()
    multirun = hydra_cfg.mode == RunMode.MULTIRUN
    try:
        if multirun:
            settings = [make_setting(cfg, tuple(hydra_cfg.overrides.task))]
        else:
            settings = expand(hydra_cfg.job.config_name, list(hydra_cfg.overrides.task), GRID)
        n_jobs = inner_n_jobs(
            settings[0].config["n_jobs"], str(hydra_cfg.launcher.get("_target_", "")), multirun
        )
        preflight([setting.config for setting in settings])
    except ConfigError as error:
        print(f"error: {error}", file=sys.stderr)
        raise SystemExit(2) from None
    note = kind_note(settings) if multirun else ""  # a run in one process announces it
    if note:
        print(f"note: {note}", file=sys.stderr)
    sweep = sweep_progress.CURRENT if multirun else None
    if multirun and multiprocessing.current_process().name != "MainProcess":
        die_with(os.getppid())  # a launcher's worker (joblib): exit if the sweep is killed
    try:
        report, store = run_settings(
            settings,
            n_jobs=n_jobs,
            announce=not multirun,
            progress=False if sweep is not None else None,
            on_trials=sweep_progress.trials_done if sweep is not None else None,
        )
    except KeyboardInterrupt:
        print(
            "interrupted: finished trials are kept; rerun the same command to resume",
            file=sys.stderr,
        )
        raise SystemExit(130) from None
    except (TrialError, ResultsDirError) as error:
        print(f"error: {error}", file=sys.stderr)
        raise SystemExit(1) from None
    line = describe(report, store)
    # under the sweep's one line, only what needs reading
    if sweep is None or report.foreign or report.stale:
        print(("\n" if sweep is not None and sys.stderr.isatty() else "") + line)
    if sweep is not None:
        job = f"#{hydra_cfg.job.num} {' '.join(hydra_cfg.overrides.task)}: {line}"
        sweep_progress.job_done(report.ran, report.done_before, str(store.directory), job)


def cli(argv: Sequence[str] | None = None) -> None:
    """``python -m experiments.run``: :func:`prepare` the command line, then run Hydra."""
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        sys.argv[1:], GRID[:] = prepare(argv)
    except ConfigError as error:
        print(f"error: {error}", file=sys.stderr)
        raise SystemExit(2) from None
    main()


if __name__ == "__main__":
    cli()

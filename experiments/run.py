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

Parallelism is at one level: under the joblib launcher each job runs its trials with
``n_jobs=1`` (the default there; asking for more is an error).
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Sequence
from pathlib import Path

import hydra
from hydra.core.hydra_config import HydraConfig
from hydra.types import RunMode
from omegaconf import DictConfig

from experiments.execute import RunReport, TrialError, execute
from experiments.schema import ConfigError, register_configs
from experiments.settings import Setting, expand, make_setting
from experiments.store import ResultsDirError, ResultsStore
from experiments.trials import preflight

log = logging.getLogger(__name__)
CONF_DIR = Path(__file__).resolve().parent.parent / "conf"

register_configs()


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
) -> tuple[RunReport, ResultsStore]:
    """Run the missing trials of ``settings`` (run-only fields from the first one); with
    ``rerun`` (default: the config's ``rerun``) recompute the recorded ones too."""
    first = settings[0].config
    store = ResultsStore(first["results_dir"], first["name"], first["format"])
    report = execute(
        settings,
        store,
        n_trials=first["n_trials"],
        n_jobs=first["n_jobs"] if n_jobs is None else n_jobs,
        backend=first["backend"],
        dask_scheduler=first["dask_scheduler"],
        batch_size=first["batch_size"],
        progress=first["progress"],
        rerun=first.get("rerun", False) if rerun is None else rerun,
        announce=announce,
    )
    if export:
        store.export()
    return report, store


def describe(report: RunReport, store: ResultsStore) -> str:
    """One line saying what a run did."""
    foreign = (
        f" ({report.foreign} by another version of the code: rerun=true recomputes them)"
        if report.foreign
        else ""
    )
    return (
        f"{store.experiment}: {report.settings} settings x "
        f"{report.trials // max(report.settings, 1)} trials; {report.done_before} already "
        f"recorded{foreign}, {report.ran} run now in {report.seconds:.1f} s; results in "
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
            settings = expand(hydra_cfg.job.config_name, list(hydra_cfg.overrides.task))
        n_jobs = inner_n_jobs(
            settings[0].config["n_jobs"], str(hydra_cfg.launcher.get("_target_", "")), multirun
        )
        preflight([setting.config for setting in settings])
    except ConfigError as error:
        print(f"error: {error}", file=sys.stderr)
        raise SystemExit(2) from None
    try:
        report, store = run_settings(
            settings, n_jobs=n_jobs, export=not multirun, announce=not multirun
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
    print(describe(report, store))


if __name__ == "__main__":
    main()

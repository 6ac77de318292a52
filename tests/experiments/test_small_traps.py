"""Small traps a new user met: a mistyped value, the submitit folder, Dask's logging, the
progress bar's total."""

from __future__ import annotations

import logging
import re

import pytest
from hydra import compose, initialize_config_dir

from experiments import execute
from experiments.run import CONF_DIR, prepare, run_settings
from experiments.schema import ConfigError, register_configs

from .conftest import TINY


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (["protocol=cms", "protocol.k=abc"], "protocol.k: must be an integer, got 'abc'"),
        (["n_trials=1.5"], "n_trials: must be an integer, got '1.5'"),
        (["epsilon=abc"], "epsilon: must be a number, got 'abc'"),
        (["-m", "protocol=grr,olh", "epsilon=1,abc"], "epsilon: must be a number, got 'abc'"),
        (["options.per_value=maybe"], "options.per_value: Value 'maybe' is not a valid bool"),
    ],
)
def test_a_value_of_the_wrong_type_is_one_line_naming_the_field(argv, line):
    with pytest.raises(ConfigError) as caught:
        prepare(argv)
    assert str(caught.value).startswith(line) and "\n" not in str(caught.value)


@pytest.mark.parametrize("launcher", ["slurm", "slurm_local"])
def test_submitit_files_go_to_one_folder_without_a_literal_job_id(launcher):
    register_configs()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = compose(
            "config",
            overrides=[f"hydra/launcher={launcher}", "hydra.sweep.dir=/sweep"],
            return_hydra_config=True,
        )
    assert cfg.hydra.launcher.submitit_folder == "/sweep/submitit"


def test_dask_info_logging_is_quieted(monkeypatch):
    """The local cluster is started with its logs at WARNING, and ``distributed``'s loggers
    are set to WARNING (its INFO lines flooded the console)."""
    import distributed

    made = {}

    class FakeClient:
        def __init__(self, *args, **kwargs):
            made.update(kwargs, args=args)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

    monkeypatch.setattr(distributed, "Client", FakeClient)
    monkeypatch.setattr(execute.joblib, "parallel_config", lambda **kw: _Null())
    logging.getLogger("distributed").setLevel(logging.NOTSET)
    with execute.joblib_backend("dask"):
        pass
    assert made["silence_logs"] == logging.WARNING
    assert logging.getLogger("distributed").getEffectiveLevel() == logging.WARNING


class _Null:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_the_progress_bar_counts_the_timed_trials_in_its_total(settings_of, capsys):
    """The estimate's timed trials ran before the bar: they are its start, not cut from
    its total (a 20,000-trial sweep showed 19,960)."""
    settings = settings_of(
        "protocol=grr", "epsilon=1", *TINY, "n_trials=30", "n_jobs=1", "progress=true"
    )
    report, _ = run_settings(settings, announce=True)
    err = capsys.readouterr().err
    totals = {int(total) for total in re.findall(r"\d+/(\d+) trials", err)}  # off a terminal
    assert report.ran == 30 and totals == {30}

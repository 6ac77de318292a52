"""The command line: every wrong value is one line, and a value list without ``-m``
restricts the experiment's grid (issue 16, items 5-7)."""

from __future__ import annotations

import pytest

from experiments.run import prepare
from experiments.schema import ConfigError

from .conftest import TINY, run_cli


def error_of(*argv: str) -> str:
    with pytest.raises(ConfigError) as caught:
        prepare(list(argv))
    text = str(caught.value)
    assert "\n" not in text
    return text


def test_an_unknown_protocol_lists_the_registered_ones_and_the_presets():
    text = error_of("protocol=foo")
    assert text.startswith("protocol: no protocol 'foo'; choose one of: grr,")
    assert "; presets: " in text and "mcm_improved," in text and "base_" not in text
    assert error_of("-m", "protocol=grr,bar").startswith("protocol: no protocol 'bar'")


def test_a_path_for_a_data_set_without_one_names_those_that_take_one():
    text = error_of("experiment=pem_fig5", "dataset.path=/tmp/x")
    assert text.startswith("dataset.path: this data set reads no file")
    assert "kosarak, aol, url" in text


def test_an_unknown_field_is_one_line():
    assert error_of("foo=1").startswith("foo: no such field")


def test_a_value_list_without_m_becomes_a_grid_axis():
    out, grid = prepare(["experiment=pem_fig5", "epsilon=1,4", "n_trials=2"])
    assert out == ["experiment=pem_fig5", "n_trials=2"] and grid == ["epsilon=1,4"]
    out, grid = prepare(["experiment=pem_fig5", "hydra.sweeper.params.epsilon='1,4'"])
    assert grid == ["epsilon=1,4"]
    out, grid = prepare(["-m", "epsilon=1,4"])  # Hydra's sweep under -m
    assert out == ["-m", "epsilon=1,4"] and grid == []


def test_a_grid_axis_restricts_the_experiments_grid_and_a_wrong_one_is_an_error(tmp_path):
    common = (
        "experiment=oracle_variance",
        "protocol=grr",
        "engine=sampled",
        "options.domain_size=2",
        "n_trials=1",
        "progress=false",
        f"results_dir={tmp_path}",
    )
    done = run_cli(*common, "epsilon=1,4")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("oracle_variance: 2 settings x 1 trials")
    quoted = run_cli(*common, "hydra.sweeper.params.epsilon='1,4'")
    assert quoted.returncode == 0 and "2 settings x 1 trials; 2 recorded" in quoted.stdout
    wrong = run_cli(*common, "hydra.sweeper.params.foo='1,2'")
    assert wrong.returncode == 2 and wrong.stderr.strip() == (
        "error: foo: no such field (python -m experiments.run --help lists the fields)"
    )


def test_a_bad_data_set_parameter_is_one_line_naming_the_field(tmp_path):
    done = run_cli(
        "dataset=kosarak", "dataset.item_rule=last", "n_trials=1", f"results_dir={tmp_path}"
    )
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "error: dataset.item_rule: must be one of ('random', 'first'), got 'last'"
    )


def test_tiny_runs_still_work(tmp_path):
    done = run_cli("protocol=grr", *TINY, "n_trials=1", f"results_dir={tmp_path}")
    assert done.returncode == 0, done.stderr


def test_a_multirun_writes_the_table_of_every_job(tmp_path):
    import pandas as pd

    done = run_cli(
        "-m",
        "protocol=grr,oue",
        "epsilon=1,2",
        *TINY,
        "n_trials=2",
        "n_jobs=1",
        f"results_dir={tmp_path}",
    )
    assert done.returncode == 0, done.stderr
    table = pd.read_csv(tmp_path / "custom" / "table.csv.gz")
    assert table["config_hash"].nunique() == 4 and table["trial"].nunique() == 2


def test_a_multirun_shows_one_progress_line_not_three_lines_a_job(tmp_path):
    done = run_cli(
        "-m",
        "protocol=grr,oue,olh",
        "epsilon=1,2,3,4",
        *TINY,
        "n_trials=1",
        "n_jobs=1",
        f"results_dir={tmp_path}",
    )
    assert done.returncode == 0, done.stderr
    lines = (done.stdout + done.stderr).strip().splitlines()
    # Hydra's "#3 : protocol=..." line, a bar and a summary per job were 36 lines for 12 jobs
    assert not [line for line in lines if "[HYDRA]" in line or "settings x" in line], lines
    progress = [line for line in lines if "/12 jobs]" in line]
    assert progress and len(progress) <= 10 and "[12/12 jobs]" in progress[-1], lines
    out = done.stdout.strip().splitlines()  # the progress line is on stderr, like a bar
    assert out[0].startswith("custom: 12 jobs")
    assert out[-1].startswith("custom: 12 jobs done in") and "12 trials run now" in out[-1]
    assert len(lines) <= 12, lines


@pytest.mark.parametrize(
    ("argv", "meant"),
    [
        (["--trials", "5"], "n_trials=5"),
        (["--epsilon=2"], "epsilon=2"),
        (["protocol=grr", "--n-jobs", "2"], "n_jobs=2"),
        (["--verbose"], "verbose=..."),
    ],
)
def test_an_option_style_setting_is_one_line_naming_the_override_it_meant(argv, meant):
    """Hydra reads ``--trials 5`` as a token error at '5'; here it is refused with the
    override it meant, before anything is composed."""
    with pytest.raises(ConfigError) as caught:
        prepare(argv)
    text = str(caught.value)
    assert "not an option" in text and f"did you mean {meant}?" in text and "\n" not in text


def test_hydras_own_flags_still_pass():
    out, grid = prepare(["-m", "protocol=grr,oue", "--config-dir", "conf"])
    assert out[:1] == ["-m"] and "--config-dir" in out and grid == []

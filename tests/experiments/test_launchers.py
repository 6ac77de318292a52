"""Hydra's joblib launcher runs a tiny sweep for real; parallelism stays at one level."""

from __future__ import annotations

from experiments.run import inner_n_jobs
from experiments.schema import ConfigError
from experiments.store import ResultsStore

from .conftest import run_cli

SWEEP = (
    "protocol=grr,olh",
    "epsilon=1,2",
    "dataset=point",
    "dataset.n=300",
    "options.domain_size=4",
    "options.track=absent",
    "n_trials=2",
    "progress=false",
    "name=launch",
)


def test_the_joblib_launcher_runs_a_sweep(results_dir):
    done = run_cli(
        "-m",
        "hydra/launcher=parallel",
        "hydra.launcher.n_jobs=2",
        *SWEEP,
        f"results_dir={results_dir}",
        timeout=180,
    )
    assert done.returncode == 0, done.stderr
    store = ResultsStore(results_dir, "launch")
    table, corrupt = store.load()
    assert corrupt == [] and len(store.keys()) == 4
    assert table.groupby("config_hash")["trial"].nunique().tolist() == [2] * 4
    assert set(zip(table["protocol.name"], table["epsilon"], strict=True)) == {
        ("GRR", 1.0),
        ("GRR", 2.0),
        ("OLH", 1.0),
        ("OLH", 2.0),
    }
    again = run_cli("-m", "hydra/launcher=parallel", *SWEEP, f"results_dir={results_dir}")
    assert again.returncode == 0 and again.stdout.count("2 already recorded, 0 run now") == 4


def test_inner_parallelism_is_refused_under_the_joblib_launcher():
    target = "hydra_plugins.hydra_joblib_launcher.joblib_launcher.JoblibLauncher"
    assert inner_n_jobs(None, target, multirun=True) == 1
    assert inner_n_jobs(None, "BasicLauncher", multirun=True) is None
    try:
        inner_n_jobs(2, target, multirun=True)
    except ConfigError as error:
        assert str(error).startswith("n_jobs: must be 1 under the joblib launcher")
    else:
        raise AssertionError("n_jobs=2 under the joblib launcher was accepted")

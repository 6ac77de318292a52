"""Distributed runs for real: a Dask cluster and Hydra's submitit launcher give the loky table.

Both run on this machine, with real separate processes: a ``distributed.LocalCluster``
(a scheduler and two worker processes, reached over TCP like a remote cluster) through
``backend=dask``, and Hydra's submitit launcher in its local mode
(``hydra/launcher=slurm_local``: every grid point a submitit job in its own process).
The trials' numbers depend only on (setting, trial), so both tables must equal the table of
a plain loky run exactly, value for value.
"""

from __future__ import annotations

import pandas as pd
import pytest
from distributed import LocalCluster  # the dev extra's dask[distributed]

from experiments.run import run_settings
from experiments.store import ROW_KEY, ResultsStore

from .conftest import TINY, run_cli

POINTS = [("grr", 1.0), ("grr", 2.0), ("olh", 1.0), ("olh", 2.0)]
#: Columns that legitimately differ between runs of the same trials.
VOLATILE = ("wall_time",)


def _settings(settings_of, *extra: str):
    found = []
    for protocol, epsilon in POINTS:
        found += settings_of(
            f"protocol={protocol}", f"epsilon={epsilon}", *TINY, "n_trials=3", "name=dist", *extra
        )
    return found


def _comparable(table: pd.DataFrame) -> pd.DataFrame:
    keep = [c for c in table.columns if c not in VOLATILE]
    return table[keep].sort_values(ROW_KEY).reset_index(drop=True)


@pytest.fixture
def loky_table(settings_of, results_dir) -> pd.DataFrame:
    run_settings(_settings(settings_of, "backend=loky", "n_jobs=2"))
    table, corrupt = ResultsStore(results_dir, "dist").load()
    assert not corrupt and table["config_hash"].nunique() == 4
    return _comparable(table)


@pytest.mark.slow
def test_a_dask_cluster_gives_the_loky_table(settings_of, results_dir, tmp_path, loky_table):
    with LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster:
        other = tmp_path / "dask-results"
        settings = _settings(
            settings_of,
            "backend=dask",
            f"dask_scheduler={cluster.scheduler_address}",
            f"results_dir={other}",
        )
        report, _ = run_settings(settings)
    assert report.ran == 12
    table, corrupt = ResultsStore(other, "dist").load()
    assert not corrupt
    pd.testing.assert_frame_equal(_comparable(table), loky_table)


@pytest.mark.slow
def test_the_submitit_launcher_gives_the_loky_table(results_dir, tmp_path, loky_table):
    other = tmp_path / "submitit-results"
    done = run_cli(
        "-m",
        "hydra/launcher=slurm_local",
        "hydra.launcher.timeout_min=10",
        "protocol=grr,olh",
        "epsilon=1,2",
        *TINY,
        "n_trials=3",
        "n_jobs=1",
        "name=dist",
        f"results_dir={other}",
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    # the sweep ends with a summary, and submitit's files sit in one folder (no literal %j)
    assert "dist: 4 submitit jobs finished; 4 settings, 12 trials recorded" in done.stdout
    assert not [p for p in other.rglob("*") if "%j" in p.name]
    table, corrupt = ResultsStore(other, "dist").load()
    assert not corrupt
    pd.testing.assert_frame_equal(_comparable(table), loky_table)


@pytest.mark.slow
def test_the_python_snippet_of_docs_cluster_runs(tmp_path):
    import re
    import subprocess
    import sys

    from .conftest import REPO

    text = (REPO / "docs" / "cluster.md").read_text()
    (snippet,) = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    script = tmp_path / "dask_demo.py"  # a file, as a reader runs it: the workers import it
    script.write_text(snippet.replace("/tmp/ldp-dask-demo", str(tmp_path / "demo")))
    done = subprocess.run(
        [sys.executable, str(script)], cwd=REPO, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "RunReport(settings=" in done.stdout and "ran=" in done.stdout
    assert "--cfg job" in text and not re.search(r"run -m [^\n]*--cfg job", text)

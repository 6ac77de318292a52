"""``python -m experiments.summarize`` prints mean ± std and the analytical value per setting."""

from __future__ import annotations

from experiments import summarize
from experiments.run import run_settings

from .conftest import TINY


def test_summarize_prints_a_table(settings_of, results_dir, capsys):
    run_settings(settings_of("protocol=grr", "epsilon=1", *TINY, "n_trials=3", "n_jobs=1"))
    run_settings(settings_of("protocol=grr", "epsilon=2", *TINY, "n_trials=3", "n_jobs=1"))
    code = summarize.main(["custom", "--results-dir", str(results_dir)])
    out = capsys.readouterr().out
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("custom: 2 settings") and "data: point" in lines[0]
    assert "protocol.name=GRR" in lines[1]
    header = lines[2].split()
    assert header[:2] == ["epsilon", "metric"] and "analytic" in header
    assert sum("sq_error_n" in line and " ± " in line for line in lines) == 2
    assert (results_dir / "custom" / "table.csv.gz").exists()


def test_summarize_says_when_there_is_nothing(results_dir, capsys):
    assert summarize.main(["nothing", "--results-dir", str(results_dir)]) == 1
    assert "no results" in capsys.readouterr().err

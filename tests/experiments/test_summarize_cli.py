"""``python -m experiments.summarize``: a compact table per experiment, one row per setting."""

from __future__ import annotations

import subprocess
import sys

from experiments import summarize
from experiments.run import run_settings
from experiments.store import ResultsStore

from .conftest import REPO, TINY


def _run_two(settings_of):
    run_settings(settings_of("protocol=grr", "epsilon=1", *TINY, "n_trials=3", "n_jobs=1"))
    run_settings(settings_of("protocol=grr", "epsilon=2", *TINY, "n_trials=3", "n_jobs=1"))


def test_summarize_prints_a_compact_table(settings_of, results_dir, capsys):
    _run_two(settings_of)
    code = summarize.main(["custom", "--results-dir", str(results_dir)])
    out = capsys.readouterr().out
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("custom: 2 settings") and "data: point" in lines[0]
    assert "protocol=GRR" in lines[1] and "d=8" in lines[1]
    assert "n=400" in lines[1] and "400.0" not in out  # integers, not floats
    header = lines[2].split()
    assert header[:2] == ["eps", "trials"]
    assert "sq_error_n" in header and "(theory)" in header
    assert [line.split()[:2] for line in lines[3:5]] == [["1", "3"], ["2", "3"]]
    assert lines[5] == (
        "other metrics (--metric NAME): adversary_baseline, adversary_success, error_n, "
        "shuffle_epsilon"
    )
    assert max(len(line) for line in lines) < 120
    assert (results_dir / "custom" / "table.csv.gz").exists()


def test_a_wrong_metric_lists_the_valid_names(settings_of, results_dir, capsys):
    _run_two(settings_of)
    assert summarize.main(["custom", "--results-dir", str(results_dir), "--metric", "F1"]) == 2
    err = capsys.readouterr().err
    assert "no metric 'F1'" in err
    assert (
        "recorded: adversary_baseline, adversary_success, error_n, shuffle_epsilon, sq_error_n"
        in err
    )


def test_trials_recorded_twice_count_once_and_data_sources_are_not_pooled(
    settings_of, results_dir, capsys
):
    settings = settings_of("protocol=grr", *TINY, "n_trials=3", "n_jobs=1")
    run_settings(settings)
    store = ResultsStore(results_dir, "custom")
    key = settings[0].key
    (part,) = store.parts(key)
    frame = store.read(part)
    store.write_part(key, [1], frame[frame["trial"] == 1])  # the same trials twice
    other = frame.assign(config_hash="f" * 16, data_source="real:/data/file")
    store.write_part("f" * 16, [0, 1, 2], other)
    table, _ = store.load()
    summary = summarize.summarize(table, metrics=["sq_error_n"])
    assert sorted(summary["trials"]) == [3, 3]
    assert sorted(summary["data_source"]) == ["point", "real:/data/file"]


def test_summarize_says_when_there_is_nothing(results_dir, capsys):
    assert summarize.main(["nothing", "--results-dir", str(results_dir)]) == 1
    assert "no results" in capsys.readouterr().err


def test_piping_into_head_does_not_trace(settings_of, results_dir):
    for eps in range(1, 6):
        run_settings(settings_of("protocol=grr", f"epsilon={eps}", *TINY, "n_trials=2", "n_jobs=1"))
    piped = subprocess.run(
        f"{sys.executable} -m experiments.summarize custom --results-dir {results_dir} "
        "--per-value | head -n 2",
        shell=True,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert len(piped.stdout.splitlines()) == 2
    assert piped.stderr == "", piped.stderr


def test_a_setting_without_another_protocols_parameter_keeps_its_row():
    import pandas as pd

    common = {"trial": 0, "metric": "m", "item": None, "analytic": 1.0, "data_source": "x"}
    table = pd.DataFrame(
        [
            {
                **common,
                "config_hash": "a",
                "value": 1.0,
                "protocol.name": "GRR",
                "protocol.g": None,
            },
            {**common, "config_hash": "b", "value": 2.0, "protocol.name": "OLH", "protocol.g": 4},
        ]
    )
    lines = summarize.render(summarize.summarize(table)).splitlines()
    assert [line.split()[:2] for line in lines[1:]] == [["GRR", "-"], ["OLH", "4"]]

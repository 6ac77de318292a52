"""``python -m experiments.figures --only X --no-run`` touches only X's entries of the
gallery and the reproduction report; a figure without results keeps its committed entry."""

from __future__ import annotations

import re
import shutil

from experiments.figures import FIGURES
from experiments.figures.__main__ import main

from .conftest import REPO

#: A figure of one small experiment (trials and drawing under a second each).
CHEAP = "oracle_multiple_questions"


def blocks(text: str) -> list[str]:
    return re.split(r"(?m)^(?=## )", text)[1:]


def test_only_without_results_keeps_every_committed_entry(tmp_path, capsys):
    committed = REPO / "results"
    (tmp_path / "figures").mkdir()
    shutil.copy(committed / "figures" / "index.md", tmp_path / "figures" / "index.md")
    shutil.copy(committed / "REPRODUCTION.md", tmp_path / "REPRODUCTION.md")
    before_index = (tmp_path / "figures" / "index.md").read_text()
    before_report = (tmp_path / "REPRODUCTION.md").read_text()
    # the cheapest figure to compose: which one does not matter, none has results here
    assert main(["--only", CHEAP, "--no-run", "--results-dir", str(tmp_path)]) == 0
    assert f"{CHEAP}: no results yet" in capsys.readouterr().err
    after_index = (tmp_path / "figures" / "index.md").read_text()
    after_report = (tmp_path / "REPRODUCTION.md").read_text()
    assert blocks(after_index) == blocks(before_index)
    rows = [
        line for line in before_report.splitlines() if line.startswith("| ") and "(figures/" in line
    ]
    assert [
        line for line in after_report.splitlines() if line.startswith("| ") and "(figures/" in line
    ] == rows
    summary = re.search(r"\*\*Summary:\*\* (\d+ claims: [^.]*)\.", before_report).group(1)
    assert summary in after_report
    assert "within the tolerance its row states" in after_report


def test_every_figure_has_a_committed_entry():
    names = {spec.name for spec in FIGURES}
    text = (REPO / "results" / "figures" / "index.md").read_text()
    assert {m for m in re.findall(r"\]\(([^)/]+)\.png\)", text)} <= names


def test_ctrl_c_during_the_runs_is_one_line_not_a_traceback(tmp_path, monkeypatch, capsys):
    from experiments.figures import __main__ as figures_main

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(figures_main, "run_many", interrupted)
    code = figures_main.main(["--only", CHEAP, "--results-dir", str(tmp_path)])
    assert code == 130
    assert capsys.readouterr().err.strip() == (
        "interrupted: finished trials are kept; rerun the same command to resume"
    )


def test_quick_runs_skip_the_up_front_estimate(tmp_path, monkeypatch, capsys):
    from experiments import estimate
    from experiments.figures import __main__ as figures_main

    def no_probe(*args, **kwargs):
        raise AssertionError("--quick must not time trials up front")

    monkeypatch.setattr(estimate, "probe", no_probe)
    code = figures_main.main(["--quick", "--only", CHEAP, "--results-dir", str(tmp_path)])
    assert code == 0, capsys.readouterr().err


def test_redrawing_some_committed_figures_updates_the_committed_report(tmp_path):
    """``--only X --out-dir results`` redraws X into the committed directory: its gallery and
    report keep every other figure (they were replaced by X's alone); any other custom run,
    or --only into a directory of its own, still describes that run alone."""
    from experiments.figures.__main__ import COMMITTED, replaces_all

    assert not replaces_all([], tmp_path)  # a full run updates
    assert not replaces_all(["--only"], COMMITTED)
    assert replaces_all(["--only"], tmp_path)
    assert replaces_all(["--only", "--add/--set"], COMMITTED)
    assert replaces_all(["trials other than the configs'"], COMMITTED)

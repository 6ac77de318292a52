"""``python -m experiments.figures`` ends with a table of where the time went (per
experiment and stage) and the peak memory, printed and written beside the gallery."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from experiments.figures.__main__ import main
from experiments.figures.profile import Profile


def test_the_table_has_a_row_per_name_a_column_per_stage_and_totals():
    profile = Profile()
    profile.seconds = {"a": {"settings": 1.0, "trials": 2.5}, "figure a": {"drawing": 0.5}}
    lines = profile.table().splitlines()
    assert lines[0] == "| experiment / figure | settings | trials | drawing | total |"
    assert lines[2] == "| a | 1.0 | 2.5 |  | 3.5 |"
    assert lines[3] == "| figure a |  |  | 0.5 | 0.5 |"
    assert lines[4] == "| **all** | 1.0 | 2.5 | 0.5 | 4.0 |"
    memory = re.search(r"this process (\d+) MB", lines[-1])
    assert memory and int(memory.group(1)) > 10  # a Python process with numpy and pandas


def test_a_stage_must_be_known():
    with pytest.raises(ValueError, match="stage must be one of"):
        with Profile().time("a", "lunch"):
            pass


@pytest.mark.slow
def test_a_tiny_run_prints_and_writes_the_profile(tmp_path, capsys):
    out = tmp_path / "out"
    out.mkdir()  # a results directory that does not exist is refused
    args = ["--only", "oracle_flh", "--quick", "--results-dir", str(out), "--n-jobs", "1"]
    assert main(args) == 0
    printed = capsys.readouterr().out
    drawn = out / "custom"  # --only draws into its own directory, beside the gallery's
    written = (drawn / "figures" / "profile.md").read_text()
    assert f"profile: {drawn / 'figures' / 'profile.md'}" in printed
    table = written.split("\n\n", 1)[1]
    assert table in printed  # the same table
    rows = {line.split(" | ")[0].lstrip("| ") for line in table.splitlines() if line[:2] == "| "}
    assert {"oracle_flh_pool", "oracle_flh_olh", "figure oracle_flh", "**all**"} <= rows
    header = table.splitlines()[0]
    for stage in ("settings", "trials", "data", "drawing", "saving", "report"):
        assert f" {stage} " in header
    assert "Peak memory (maxrss)" in table
    figures = drawn / "figures"
    assert (figures / "oracle_flh.png").is_file()
    assert not list(figures.glob("*.pdf"))  # --quick: PNG only


def test_the_committed_profile_is_the_full_runs_table():
    """results/figures/profile.md, committed beside the gallery, is the table a full run
    wrote: a row per registered figure, the totals and the wall time."""
    from experiments.figures import FIGURES

    committed = Path(__file__).resolve().parents[2] / "results" / "figures" / "profile.md"
    text = committed.read_text(encoding="utf-8")
    assert text.startswith("# Where the run's time went")
    for spec in FIGURES:
        assert f"| figure {spec.name} |" in text, f"{spec.name} has no row: rerun make figures"
    assert "| **all** |" in text and "Wall time" in text and "Peak memory" in text

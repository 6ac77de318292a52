"""The committed reproduction report: every row states its source and its tolerance."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from experiments.figures.reproduction import COLUMNS, VERDICT_MARK

REPORT = Path(__file__).resolve().parents[2] / "results" / "REPRODUCTION.md"


def rows() -> list[list[str]]:
    """The claim rows of the committed report, split into cells (escaped pipes kept)."""
    found = []
    for line in REPORT.read_text(encoding="utf-8").splitlines():
        if line.startswith("| ") and "(figures/" in line:
            found.append([c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]])
    return found


def test_every_row_states_its_source_tolerance_and_verdict() -> None:
    table = rows()
    assert len(table) >= 95
    for cells in table:
        assert len(cells) == len(COLUMNS), cells[:1]
        row = dict(zip(COLUMNS, cells, strict=True))
        assert row["source"] and row["source"] != "-", row
        assert row["tolerance"] and row["tolerance"] != "-", row["source"]
        assert any(row["verdict"].startswith(mark) for mark in VERDICT_MARK.values()), row
        if not row["verdict"].startswith(("reproduced", "identity", "calibrated")):
            assert row["cause"] != "-", row["source"]  # a verdict short of it says why


def test_the_summary_counts_the_rows() -> None:
    text = REPORT.read_text(encoding="utf-8")
    summary = re.search(r"\*\*Summary:\*\* (\d+) claims: (.*?)\n", text)
    assert summary and int(summary.group(1)) == len(rows())
    marks = "|".join(sorted(map(re.escape, VERDICT_MARK.values()), key=len, reverse=True))
    counted = re.findall(rf"(\d+) ({marks})\b", summary.group(2))
    assert sum(int(n) for n, _ in counted) == len(rows())
    below = re.search(r"Of the reproduced rows, (\d+) detect less than the bar", text)
    assert below and int(below.group(1)) == sum("below the bar" in c[4] for c in rows())


def test_every_row_states_its_power_and_reproduced_rows_meet_the_bar() -> None:
    """A "reproduced" row detects at most 10% of its quantity or 6 SE (the report's bar):
    none is below it (a row far beyond its noise is read against a prediction too,
    docs/report.md)."""
    for cells in rows():
        row = dict(zip(COLUMNS, cells, strict=True))
        detects = row["detects"]
        assert detects and detects != "-", row["source"]
        if row["verdict"].startswith("reproduced"):
            assert "below the bar" not in detects, (row["source"], detects)
            assert not detects.startswith("none"), (row["source"], detects)
            percent = re.match(r"([0-9.e+-]+)%", detects)
            shift = re.match(r"([0-9.e+-]+) SE shift", detects)
            in_se = re.search(r"\(([0-9.e+-]+) SE\)", detects)
            assert (
                detects.startswith(("any shift", "any deviation"))  # a value on its boundary
                or (percent and float(percent.group(1)) <= 10)
                or (shift and float(shift.group(1)) <= 6)
                or (in_se and float(in_se.group(1)) <= 6)
            ), (row["source"], detects)


def test_no_figure_module_types_a_verdict() -> None:
    """Verdicts are computed from declared tolerances: a claim takes no verdict, and no
    figure module holds one as a literal. "differs" and "partly" may appear only as what a
    part reads when it fails (its ``otherwise``), which is a declaration, not a verdict."""
    import ast
    import inspect

    from experiments.figures.spec import ClaimCheck

    assert "verdict" not in inspect.signature(ClaimCheck).parameters
    typed = set(VERDICT_MARK) - {"differs", "partly"}
    figures = Path(__file__).resolve().parents[2] / "experiments" / "figures"
    owners = {"spec.py", "tolerance.py", "reproduction.py"}
    found = []
    for path in sorted(figures.glob("*.py")):
        if path.name in owners:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and node.value in typed:
                found.append(f"{path.name}:{node.lineno} {node.value!r}")
    assert not found, found


def test_each_experiment_is_held_to_its_own_trials() -> None:
    """A figure mixing a 10-trial and a 3-trial config (oracle_domain_small and _large) is
    not provisional when each has its own; one short of its own is, with its numbers."""
    from experiments.figures import FIGURES
    from experiments.figures import reproduction as report

    (spec,) = [s for s in FIGURES if s.name == "oracle_domain"]
    assert report.paper_trials("oracle_domain_small") == 10
    assert report.paper_trials("oracle_domain_large") == 3

    def table(small: int, large: int) -> pd.DataFrame:
        rows = [("oracle_domain_small", "a", t) for t in range(small)]
        rows += [("oracle_domain_large", "b", t) for t in range(large)]
        return pd.DataFrame(rows, columns=["experiment", "config_hash", "trial"])

    assert report._trials(spec, table(10, 3)) == (3, 3)  # each at its own: not provisional
    assert report._trials(spec, table(4, 3)) == (4, 10)  # the small config is short
    assert report._trials(spec, table(10, 1)) == (1, 3)

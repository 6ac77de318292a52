"""The committed reproduction report: every row states its source and its tolerance."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

from experiments.figures.reproduction import COLUMNS, VERDICT_MARK
from experiments.figures.spec import ClaimCheck

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
    assert len(table) >= 48  # 38 claims before the unchecked numbers of the papers joined
    for cells in table:
        assert len(cells) == len(COLUMNS), cells[:1]
        row = dict(zip(COLUMNS, cells, strict=True))
        assert row["source"] and row["source"] != "-", row
        assert row["tolerance"] and row["tolerance"] != "-", row["source"]
        assert any(row["verdict"].startswith(mark) for mark in VERDICT_MARK.values()), row
        if not row["verdict"].startswith("reproduced"):
            assert row["cause"] != "-", row["source"]  # a verdict short of it says why


def test_the_summary_counts_the_rows() -> None:
    text = REPORT.read_text(encoding="utf-8")
    summary = re.search(r"\*\*Summary:\*\* (\d+) claims: (.*?)\.\n", text)
    assert summary and int(summary.group(1)) == len(rows())
    counted = sum(int(n) for n in re.findall(r"(\d+) [a-z]", summary.group(2)))
    assert counted == len(rows())


def test_a_claim_check_refuses_what_the_report_could_not_state() -> None:
    check = ClaimCheck("src", "paper", "0.91 ± 0.01", "reproduced", tolerance="2 SE")
    assert math.isnan(check.measured) and math.isnan(check.se)  # a claim not one number
    with pytest.raises(ValueError, match="tolerance"):
        ClaimCheck("src", "paper", "ours", "reproduced", tolerance=" ")
    with pytest.raises(ValueError, match="verdict"):
        ClaimCheck("src", "paper", "ours", "maybe", tolerance="2 SE")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="standard error"):
        ClaimCheck("src", "paper", "ours", "reproduced", tolerance="2 SE", measured=0.9, se=-1)

"""Every Python block of docs/rappor.md runs, in order, in one namespace (as a reader would
paste them), and its numbers are the library's."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "rappor.md"
BLOCKS = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.DOTALL)


def test_the_doc_has_python_blocks() -> None:
    assert len(BLOCKS) >= 5


def test_every_python_block_of_the_doc_runs(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": "docs_rappor"}
    for number, block in enumerate(BLOCKS, start=1):
        code = compile(block, f"{DOC.name} python block {number}", "exec")
        exec(code, namespace)  # noqa: S102 - the doc's own examples


def test_the_rounding_table_is_what_the_library_computes() -> None:
    """The table's rows (f, p, q, p*, q*, ε∞, ε₁ realised) are the oracle's values."""
    from ldp.oracles.rappor.google import google_rappor

    text = DOC.read_text()
    for client, label in (("python", '`"python"`'), ("cpp", '`"cpp"`'), (None, "`None`")):
        r = google_rappor(f=0.45, p=0.39, q=0.61, client=client).realised
        row = next(line for line in text.splitlines() if line.startswith(f"| {label}"))
        cells = [cell.strip() for cell in row.strip("|").split("|")]
        f, p, q = (float(cell.split("=")[-1]) for cell in cells[1:4])
        assert (f, p, q) == pytest.approx((r["f"], r["p"], r["q"]), abs=1e-6), row  # 6 decimals
        numbers = [f"{r[key]:.4f}" for key in ("p_star", "q_star", "epsilon_inf", "epsilon_one")]
        assert cells[4:] == numbers, (row, numbers)

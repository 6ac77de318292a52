"""docs/sets.md: every python block runs and prints what the document says it prints."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

from tests.test_docs import python_blocks

DOC = Path(__file__).resolve().parents[2] / "docs" / "sets.md"


def test_the_blocks_run_and_print_what_the_document_shows() -> None:
    blocks = python_blocks(DOC.read_text(encoding="utf-8"))
    assert blocks
    for code, prints, skip, _ in blocks:
        assert skip is None
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(code, str(DOC), "exec"), {})
        if prints is not None:
            assert out.getvalue().split() == prints.split()

"""The plug-in of ``docs/new-protocol.md`` works as written: its module and its test file,
copied out of the document, pass the conformance suite in a fresh process."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[1] / "docs" / "new-protocol.md"
SECTION = "## A frequency oracle: one module and one test file"


def plugin_files() -> dict[str, str]:
    """The section's first two python blocks: the module, then its test file."""
    text = DOC.read_text()
    section = text[text.index(SECTION) :]
    blocks = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    return {"my_oracle.py": blocks[0], "test_my_oracle.py": blocks[1]}


def test_the_doc_names_the_contract() -> None:
    text = DOC.read_text()
    for name in ("FrequencyOracleLike", "Capabilities", "ParameterError", "check_oracle"):
        assert name in text


@pytest.mark.slow
def test_the_documented_plugin_passes_its_own_test_file(tmp_path: Path) -> None:
    for name, code in plugin_files().items():
        (tmp_path / name).write_text(code)
    repo = str(DOC.parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), repo])}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_my_oracle.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "passed" in done.stdout and "failed" not in done.stdout

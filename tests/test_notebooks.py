"""The notebooks in ``notebooks/`` execute without error on small settings, so they never rot.

Each notebook reads ``LDP_NOTEBOOK_SMALL=1`` and shrinks its sizes to run in seconds. It runs
in a fresh ``python3`` ipykernel; jupyter_client starts that kernel with this interpreter
(``sys.executable``, the project's venv), in the repository root, with the test's
environment. The notebooks are committed without outputs (STYLE.md: notebooks explore;
figures come from code), which is checked too.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

REPO = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))
#: Seconds allowed per cell (the whole of a small notebook takes ~5-20 s).
CELL_TIMEOUT = 180


def test_the_notebooks_are_there():
    assert len(NOTEBOOKS) >= 3, f"expected the notebooks under {REPO / 'notebooks'}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.stem)
def test_notebook_is_committed_without_outputs_and_has_a_small_mode(path: Path):
    notebook = nbformat.read(path, as_version=4)
    nbformat.validate(notebook)
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    dirty = [i for i, cell in enumerate(code) if cell.outputs or cell.execution_count]
    assert not dirty, f"{path.name}: clear the outputs of code cells {dirty}"
    assert any("LDP_NOTEBOOK_SMALL" in cell.source for cell in code)
    assert any(cell.cell_type == "markdown" for cell in notebook.cells)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.stem)
def test_notebook_runs_on_small_settings(path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("LDP_NOTEBOOK_SMALL", "1")
    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(
        notebook,
        kernel_name="python3",
        timeout=CELL_TIMEOUT,
        resources={"metadata": {"path": str(REPO)}},  # the kernel's working directory
    )
    client.execute()  # raises CellExecutionError, with the cell and traceback, on failure
    errors = [
        output
        for cell in notebook.cells
        if cell.cell_type == "code"
        for output in cell.outputs
        if output.output_type == "error"
    ]
    assert not errors

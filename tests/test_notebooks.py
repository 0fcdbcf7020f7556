"""Notebooks are committed without outputs and run top to bottom on sample_logs/."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
ALL = sorted(NOTEBOOKS.glob("*.ipynb"))


def test_analysis_notebooks_exist():
    assert NOTEBOOKS / "reformulation_effects.ipynb" in ALL


@pytest.mark.parametrize("path", ALL, ids=[p.name for p in ALL])
def test_analysis_notebook_outputs_stripped(path):
    nb = nbformat.read(path, as_version=4)
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "code":
            assert cell.outputs == [], f"{path.name} cell {i} has outputs: strip them"
            assert cell.execution_count is None, f"{path.name} cell {i} has an execution count"


@pytest.mark.slow
@pytest.mark.parametrize("path", ALL, ids=[p.name for p in ALL])
def test_analysis_notebook_executes(path, monkeypatch):
    # the kernel inherits the environment: a headless MPLBACKEND=Agg (as CI sets) would
    # suppress inline figures, so ask for the notebook's own inline backend
    monkeypatch.setenv("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    nb = nbformat.read(path, as_version=4)
    # the kernel is the interpreter running the tests (ipykernel's native "python3" spec)
    client = NotebookClient(
        nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(NOTEBOOKS)}}
    )
    client.execute()
    errors = [
        o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"
    ]
    assert errors == []
    images = [
        o
        for c in nb.cells
        if c.cell_type == "code"
        for o in c.outputs
        if "image/png" in o.get("data", {})
    ]
    assert len(images) >= 3  # histogram, Figure 1, the bq comparison

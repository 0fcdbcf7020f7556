"""Notebooks are committed without outputs, run top to bottom on sample_logs/ and show each
figure once."""

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


_EXECUTED: dict[Path, nbformat.NotebookNode] = {}


def _executed(path: Path, monkeypatch: pytest.MonkeyPatch) -> nbformat.NotebookNode:
    """The notebook run top to bottom (once per test session: two tests read it)."""
    if path not in _EXECUTED:
        # the kernel inherits the environment: a headless MPLBACKEND=Agg (as CI sets) would
        # suppress inline figures, so ask for the notebook's own inline backend
        monkeypatch.setenv("MPLBACKEND", "module://matplotlib_inline.backend_inline")
        nb = nbformat.read(path, as_version=4)
        # the kernel is the interpreter running the tests (ipykernel's native "python3" spec)
        client = NotebookClient(
            nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(NOTEBOOKS)}}
        )
        client.execute()
        _EXECUTED[path] = nb
    return _EXECUTED[path]


def _images(cell: nbformat.NotebookNode) -> int:
    return sum(1 for o in cell.get("outputs", []) if "image/png" in o.get("data", {}))


@pytest.mark.slow
@pytest.mark.parametrize("path", ALL, ids=[p.name for p in ALL])
def test_analysis_notebook_executes(path, monkeypatch):
    nb = _executed(path, monkeypatch)
    errors = [
        o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"
    ]
    assert errors == []
    assert sum(_images(c) for c in nb.cells if c.cell_type == "code") >= 3


@pytest.mark.slow
@pytest.mark.parametrize("path", ALL, ids=[p.name for p in ALL])
def test_each_figure_is_shown_once(path, monkeypatch):
    nb = _executed(path, monkeypatch)
    twice = [i for i, c in enumerate(nb.cells) if c.cell_type == "code" and _images(c) > 1]
    assert twice == [], f"{path.name}: cells {twice} show a figure more than once"


def test_a_cell_ending_with_a_sessionval_figure_shows_it_once(tmp_path, monkeypatch):
    """The API's figures are not pyplot's: the inline backend does not show them again."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(
            "import matplotlib.pyplot as plt\n"
            "from sessionval.output import plots\n"
            "fig, axes = plots.subplots(1, 2)\n"
            "axes[0].plot([0, 1])\n"
            "fig"
        ),
        nbformat.v4.new_code_cell(
            "import sessionval as sv\n"
            "study = sv.load_study('../sample_logs', qrels='../sample_logs/qrels.txt')\n"
            "curves = sv.session_curves(sv.evaluate(study.frame, study.judgments))\n"
            "ax = plots.plot_session_curves(curves, cutoff=10)\n"
            "ax.figure"
        ),
        # the double display this guards against: a pyplot figure that is also the result
        nbformat.v4.new_code_cell("fig2, ax2 = plt.subplots()\nfig2"),
    ]
    path = tmp_path / "probe.ipynb"
    nbformat.write(nb, path)
    executed = _executed(path, monkeypatch)
    assert [_images(c) for c in executed.cells] == [1, 1, 2]


def test_the_notebook_extra_installs_jupyter_and_what_the_notebooks_import():
    import tomllib

    root = NOTEBOOKS.parent
    extras = tomllib.loads((root / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    notebook = " ".join(extras["notebook"])
    assert "jupyter" in notebook
    # the notebooks draw figures (plots), run the statistics (stats) and classify
    # reformulations (reformulations)
    inner = notebook.split("sessionval[", 1)[1].split("]", 1)[0]
    assert {"plots", "stats", "reformulations"} <= set(inner.split(","))

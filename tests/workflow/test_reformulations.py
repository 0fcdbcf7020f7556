"""``run``'s reformulation step: tables, figures and the report section, also for a log."""

from __future__ import annotations

import pandas as pd
import pytest

from sessionval import frame_to_flat, load_study, write_study
from sessionval.analysis.reformulation_effects import (
    EFFECT_COLUMNS,
    TRANSITION_COLUMNS,
)
from sessionval.analysis.reformulation_strategies import STRATEGY_COLUMNS
from sessionval.analysis.reformulations import REFORMULATION_COLUMNS
from sessionval.cli import main
from sessionval.output import plots


@pytest.fixture(scope="module")
def log_run(tmp_path_factory):
    """A one-system log (the TREC Session Track's shape) as a flat CSV, run with figures."""
    root = tmp_path_factory.mktemp("log")
    write_study(root / "study", n_sessions=16, seed=5, formats="jsonl")
    loaded = load_study(root / "study", qrels=root / "study" / "qrels.txt")
    flat = frame_to_flat(loaded.frame).assign(system_id="engine")
    flat.to_csv(root / "log.csv", index=False)
    out = root / "out"
    argv = ["run", str(root / "log.csv"), "--qrels", str(root / "study" / "qrels.txt")]
    code = main([*argv, "--out", str(out), "--no-progress", "--no-exports"])
    return code, out


def test_a_log_gets_every_reformulation_table_but_no_system_comparison(log_run):
    code, out = log_run
    assert code == 0
    tables = out / "tables"
    table = pd.read_parquet(tables / "reformulations.parquet")
    assert list(table.columns)[: len(REFORMULATION_COLUMNS)] == list(REFORMULATION_COLUMNS)
    effects = pd.read_csv(tables / "reformulation_effects.csv")
    assert list(effects.columns) == list(EFFECT_COLUMNS)
    assert set(effects["system_id"]) == {"engine"} and set(effects["unit"]) == {"session_id"}
    transitions = pd.read_csv(tables / "reformulation_transitions.csv")
    assert list(transitions.columns) == list(TRANSITION_COLUMNS)
    assert transitions["n"].sum() == len(table)
    strategies = pd.read_csv(tables / "reformulation_strategies.csv")
    assert list(strategies.columns) == list(STRATEGY_COLUMNS)
    assert not (tables / "reformulation_comparisons.csv").exists()  # one system


def test_the_report_has_the_section_and_figures(log_run):
    _, out = log_run
    html = (out / "report.html").read_text(encoding="utf-8")
    assert 'id="reformulations"' in html and "Which type follows which" in html
    for name in ("reformulation_gains", "reformulation_transitions"):
        assert (out / "figures" / f"{name}.png").read_bytes().startswith(b"\x89PNG")
        assert (out / "figures" / f"{name}.csv").is_file()


def test_without_figures_the_tables_and_section_remain(log_run, tmp_path):
    _, out = log_run
    flat = out.parent / "log.csv"
    qrels = out.parent / "study" / "qrels.txt"
    again = tmp_path / "o"
    argv = ["run", str(flat), "--qrels", str(qrels), "--out", str(again), "--no-progress"]
    assert main([*argv, "--no-figures", "--no-exports", "--tables", "parquet"]) == 0
    assert (again / "tables" / "reformulation_effects.parquet").is_file()
    assert not (again / "tables" / "reformulation_effects.csv").exists()
    assert 'id="reformulations"' in (again / "report.html").read_text(encoding="utf-8")


@pytest.mark.parametrize("formats", [("png", "svg"), ("pdf",)])
def test_the_report_shows_the_png_written_and_renders_one_only_without_it(tmp_path, formats):
    from sessionval.workflow import RunOutputs
    from sessionval.workflow.reformulation_figures import reformulation_figures

    effects = pd.DataFrame(
        {"level": "group", "category": ["specialisation", "new"], "system_id": "A",
         "outcome": "delta_dcg", "mean": [1.0, -0.5], "ci_low": [0.5, -1.0],
         "ci_high": [1.5, 0.0]}
    )  # fmt: skip
    transitions = pd.DataFrame(
        {"from_type": ["add_words", "add_words"], "to_type": ["same", "end"], "n": [1, 1],
         "share": [0.5, 0.5]}
    )  # fmt: skip
    outputs = RunOutputs(tmp_path)
    figures = reformulation_figures(outputs, effects, transitions, params={}, formats=formats)
    for fig, name in zip(
        figures, ("reformulation_gains", "reformulation_transitions"), strict=True
    ):
        assert fig.png.startswith(b"\x89PNG")
        png = outputs.root / "figures" / f"{name}.png"
        # the report's PNG: the file's reduced to 150 dpi (no second drawing)
        written = png.read_bytes() if "png" in formats else None
        assert fig.png == plots.reduced_png(written, 2) if written else not png.exists()
        assert (fig.svg is not None) == ("svg" in formats)

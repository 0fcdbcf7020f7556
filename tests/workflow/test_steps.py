"""The named steps of the run, each on its own: inputs in, files and values out."""

from __future__ import annotations

import json

import matplotlib

matplotlib.use("Agg")
import pandas as pd
import pytest

from sessionval.errors import InputFormatError, ValidationFailed
from sessionval.workflow import (
    MANIFEST,
    FigureSettings,
    RunOutputs,
    draw_figures,
    evaluate_step,
    figure_cell,
    figure_data,
    load_step,
    run_settings,
    write_configuration,
    write_exports_step,
    write_figure_tables,
    write_report_step,
    write_tables,
    write_validation,
    write_validation_failure,
)
from tests import builders


@pytest.fixture
def loaded(study_dir):
    return load_step(study_dir, qrels=study_dir / "qrels.txt", mode="strict")


def test_load_step_reads_and_validates(study_dir, tmp_path):
    study = load_step(study_dir, qrels=study_dir / "qrels.txt", mode="strict")
    assert study.frame.n_sessions == 2 and len(study.judgments.table) == 5
    bad = study_dir / "sessions.jsonl"
    session = builders.make_session("s3")
    session["queries"][0]["results"][0]["rank"] = 0
    bad.write_text(bad.read_text() + json.dumps(session) + "\n")
    with pytest.raises(ValidationFailed, match="rank"):
        load_step(study_dir, qrels=study_dir / "qrels.txt", mode="strict")
    lenient = load_step(study_dir, qrels=study_dir / "qrels.txt", mode="lenient")
    assert lenient.frame.n_sessions == 2 and lenient.report.sessions_rejected == 1
    outputs = RunOutputs(tmp_path)
    try:
        load_step(study_dir, qrels=study_dir / "qrels.txt", mode="strict")
    except ValidationFailed as exc:
        write_validation_failure(outputs, study_dir, exc)
    assert (tmp_path / "validation.txt").read_text().startswith("VALIDATION FAILED for ")
    assert json.loads((tmp_path / MANIFEST).read_text())["files"] == ["validation.txt"]


def test_write_validation(loaded, tmp_path):
    outputs = RunOutputs(tmp_path)
    summary = write_validation(outputs, loaded)
    assert outputs.written == ["validation.txt", "rejects.csv"]
    assert (tmp_path / "validation.txt").read_text() == summary.to_text() + "\n"


def test_figure_cell_checks_the_study(loaded):
    cell = figure_cell(loaded, FigureSettings(min_queries=3))
    assert (cell.scenario, cell.system) == ("B", "S1")  # B has the 3-query session
    assert figure_cell(loaded, FigureSettings(scenario="A", system="S2")).system == "S2"
    with pytest.raises(InputFormatError, match="scenario 'Z' is not a topic"):
        figure_cell(loaded, FigureSettings(scenario="Z"))
    with pytest.raises(InputFormatError, match="system 'S9' is not a system"):
        figure_cell(loaded, FigureSettings(system="S9"))


def test_tables_configuration_figures_exports_report(loaded, tmp_path):
    settings = run_settings(None, lenient=None, has_qrels=True)
    outputs = RunOutputs(tmp_path)
    ev = evaluate_step(loaded, settings.config)
    tables = write_tables(outputs, ev)
    assert outputs.written == [
        f"tables/{name}.{ext}"
        for name in ("per_position", "per_query", "per_session")
        for ext in ("csv", "parquet")
    ]
    pd.testing.assert_frame_equal(
        builders.plain(pd.read_parquet(tmp_path / "tables" / "per_session.parquet")),
        builders.plain(tables.per_session),
    )
    write_configuration(outputs, settings, ev)
    assert json.loads((tmp_path / "config.json").read_text())["figures"]["ranks"] == 100

    fs = FigureSettings(ranks=5, min_queries=2, max_sessions=1)
    data = figure_data(ev, figure_cell(loaded, fs), fs)
    assert set(data.tables) == {
        "fig1_last_vs_nonlast",
        "fig1b_best_vs_other",
        "fig2_session_nsdcg",
        "fig3_scenario_sdcg",
        "fig4_individual_sessions",
        "cg_CG",
        "cg_DCG",
        "cg_nCG",
        "cg_nDCG",
    }
    assert data.tables["fig1_last_vs_nonlast"]["rank"].max() == 5
    assert data.tables["cg_nDCG"]["rank"].max() == 5
    assert (data.n_cell, data.n_shown) == (1, 1)
    write_figure_tables(outputs, data)
    assert (tmp_path / "figures" / "cg_DCG.csv").is_file()

    figures = draw_figures(outputs, data, settings)
    assert len(figures) == len(data.tables)
    assert "b=2; bq=4; X=10" in figures[0].caption
    assert (tmp_path / "figures" / "fig2_session_nsdcg.svg").is_file()

    res = write_exports_step(outputs, tables, settings, title="tiny")
    assert all(p.is_file() for p in res.files)
    summary = write_validation(outputs, loaded)
    scores = write_report_step(
        outputs,
        loaded=loaded,
        summary=summary,
        tables=tables,
        settings=settings,
        figures=figures,
        source=tmp_path,
    )
    assert set(scores["system"]) == {"S1", "S2"}
    html = (tmp_path / "report.html").read_text()
    assert html.count("<img ") == len(figures) and "sessionval report: tiny" in html


def test_cg_curves_follow_their_own_gains(loaded):
    fs = FigureSettings(ranks=3, cg_gains="0-1-2-3")
    settings_ev = evaluate_step(loaded, run_settings(None, lenient=None, has_qrels=True).config)
    cg_ev = evaluate_step(loaded, settings_ev.config.replace(gains="0-1-2-3"))
    cell = figure_cell(loaded, fs)
    own = figure_data(settings_ev, cell, fs, cg_ev=cg_ev).tables["cg_CG"]
    default = figure_data(settings_ev, cell, fs).tables["cg_CG"]
    ideal = own["system_id"] == "ideal"
    assert own.loc[ideal, "value"].max() < default.loc[ideal, "value"].max()  # 3 < 100


def test_outputs_replace_the_previous_run_only(tmp_path):
    first = RunOutputs(tmp_path)
    first.write_text("a/old.txt", "x")
    first.write_text("keep.txt", "x")
    first.finish()
    (tmp_path / "mine.txt").write_text("not sessionval's")
    second = RunOutputs(tmp_path)
    second.write_text("keep.txt", "y")
    assert second.finish() == ["a/old.txt"]
    assert not (tmp_path / "a").exists() and (tmp_path / "mine.txt").is_file()
    assert json.loads((tmp_path / MANIFEST).read_text()) == {"files": ["keep.txt"]}

"""The named steps of the run, each on its own: inputs in, files and values out."""

from __future__ import annotations

import json

import matplotlib

matplotlib.use("Agg")
import pandas as pd
import pytest

from sessionval.errors import InputFormatError, JudgmentError, OutputError, ValidationFailed
from sessionval.workflow import (
    MANIFEST,
    FigureSettings,
    RunOutputs,
    draw_figures,
    evaluate_step,
    figure_cell,
    figure_data,
    load_step,
    report_scores,
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
    outputs.finish()  # the files are staged until the run succeeds
    assert (tmp_path / "validation.txt").read_text() == summary.to_text() + "\n"


def test_figure_cell_checks_the_study(loaded):
    cell = figure_cell(loaded, FigureSettings(min_queries=3))
    # issue 12: B has the 3-query session, of system S2; the cell (B, S1) would be empty
    assert (cell.scenario, cell.system, cell.n_sessions) == ("B", "S2", 1)
    assert figure_cell(loaded, FigureSettings(scenario="A", system="S2")).system == "S2"
    # a system given alone: the scenario comes from that system's sessions
    assert figure_cell(loaded, FigureSettings(system="S1", min_queries=3)).scenario == "A"
    with pytest.raises(InputFormatError, match="scenario 'Z' is not a topic"):
        figure_cell(loaded, FigureSettings(scenario="Z"))
    with pytest.raises(InputFormatError, match="system 'S9' is not a system"):
        figure_cell(loaded, FigureSettings(system="S9"))


def test_an_empty_cell_skips_figure_4_with_a_note(loaded, tmp_path):
    settings = run_settings(None, lenient=None, has_qrels=True)
    ev = evaluate_step(loaded, settings.config)
    cell = figure_cell(loaded, FigureSettings(scenario="A", system="S2"))
    assert cell.n_sessions == 0
    data = figure_data(ev, cell, settings.figures)
    assert "fig4_individual_sessions" not in data.tables
    figures = draw_figures(RunOutputs(tmp_path), data, settings)
    assert len(figures) == len(data.tables)
    assert any("Figure 4" in n and "no session in scenario 'A'" in n for n in data.notes)


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
    outputs.writes.wait()  # the per-query and per-session files: on the run's writer thread
    pd.testing.assert_frame_equal(
        builders.plain(pd.read_parquet(outputs.root / "tables" / "per_session.parquet")),
        builders.plain(tables.per_session),
    )
    write_configuration(outputs, settings, ev)
    assert json.loads((outputs.root / "config.json").read_text())["figures"]["ranks"] == 100

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
    assert data.ranks == 2  # the deepest logged list: the figures stop there
    assert (data.n_cell, data.n_shown) == (1, 1)
    write_figure_tables(outputs, data)
    assert (outputs.root / "figures" / "cg_DCG.csv").is_file()

    figures = draw_figures(outputs, data, settings)
    assert len(figures) == len(data.tables)
    assert "b=2; bq=4; X=10" in figures[0].caption
    assert figures[0].title == "Last vs non-last queries (Järvelin et al. 2008, Figure 1)"
    assert figures[-1].title == "nDCG by rank per system (Järvelin & Kekäläinen 2002, Figure 4)"
    assert (outputs.root / "figures" / "fig2_session_nsdcg.svg").is_file()

    res = write_exports_step(outputs, tables, settings, title="tiny")
    outputs.writes.wait()
    assert all(p.is_file() for p in res.files)
    summary = write_validation(outputs, loaded)
    table, notes = report_scores(tables.per_session, settings)
    scores = write_report_step(
        outputs,
        report=loaded.report,
        name=loaded.study.name,
        summary=summary,
        scores=table,
        score_notes=notes,
        settings=settings,
        figures=figures,
        source=tmp_path,
    )
    assert set(scores["system"]) == {"S1", "S2"}
    outputs.finish()
    html = (tmp_path / "report.html").read_text()
    assert html.count("<img ") == len(figures) and "sessionval report: tiny" in html


def test_per_session_table_carries_the_covariates(loaded, tmp_path):
    ev = evaluate_step(loaded, run_settings(None, lenient=None, has_qrels=True).config)
    ps = write_tables(RunOutputs(tmp_path), ev).per_session
    assert list(ps.columns[: len(ev.per_session().columns)]) == list(ev.per_session().columns)
    assert {"session_start", "duration_s", "session_order", "user_experience"} <= set(ps.columns)
    assert ps["session_order"].tolist() == [1, 1]  # each searcher has one session
    assert ps["user_experience"].iloc[0] == 3 and pd.isna(ps["user_experience"].iloc[1])


def test_cg_curves_follow_their_own_gains(loaded):
    fs = FigureSettings(ranks=3, cg_gains="0-1-2-3")
    settings_ev = evaluate_step(loaded, run_settings(None, lenient=None, has_qrels=True).config)
    cg_ev = evaluate_step(loaded, settings_ev.config.replace(gains="0-1-2-3"))
    cell = figure_cell(loaded, fs)
    own = figure_data(settings_ev, cell, fs, cg_ev=cg_ev).tables["cg_CG"]
    default = figure_data(settings_ev, cell, fs).tables["cg_CG"]
    ideal = own["system_id"] == "ideal"
    assert own.loc[ideal, "value"].max() < default.loc[ideal, "value"].max()  # 3 < 100


def test_gains_are_chosen_for_the_grade_scale(study_dir, tmp_path):
    """Issue 12: grades to 4 get a documented scheme, said in the notes; explicit ones stay."""
    header = json.loads((study_dir / "study.json").read_text())
    header["grade_scale"] = {"name": "0-4", "levels": {str(g): f"grade {g}" for g in range(5)}}
    (study_dir / "study.json").write_text(json.dumps(header))
    (study_dir / "qrels.txt").write_text("A 0 d1 4\nA 0 d2 0\nA 0 d3 1\nB 0 d9 2\nB 0 d1 0\n")
    loaded = load_step(study_dir, qrels=study_dir / "qrels.txt", mode="strict")
    default = run_settings(None, lenient=None, has_qrels=True)
    assert default.config.gains.name == "auto" and not default.config.gains_fitted
    settings = default.settled(loaded.judgments, loaded.frame)
    assert settings.config.gains.name == "exp"
    # chosen from the judgments alone (a one-pass run, before any session): the same
    early = default.settled(loaded.judgments)
    assert early.config == settings.config and early.notes == settings.notes
    assert "gains = exp" in settings.notes[0] and "grade(s) [4]" in settings.notes[0]
    assert settings.settled(loaded.judgments, loaded.frame) is settings  # once: then a no-op
    ev = evaluate_step(loaded, settings.config)
    assert ev.per_session()["sdcg"].notna().all()
    outputs = RunOutputs(tmp_path / "out")
    write_configuration(outputs, settings, ev)
    toml = (outputs.root / "config.toml").read_text()
    assert '\ngains = "exp"\n' in toml and "# Note: gains = exp" in toml
    config = tmp_path / "c.toml"
    config.write_text('gains = "0-1-10-100"\n')
    explicit = run_settings(config, lenient=None, has_qrels=True)
    with pytest.raises(JudgmentError, match=r"gains = 0-1-10-100 has no gain for grade\(s\) \[4\]"):
        explicit.settled(loaded.judgments, loaded.frame)
    # the header's scale counts even when no judgment uses grade 4
    (study_dir / "qrels.txt").write_text("A 0 d1 3\nB 0 d9 2\n")
    scale_only = load_step(study_dir, qrels=study_dir / "qrels.txt", mode="strict")
    assert default.settled(scale_only.judgments).config.gains.name == "exp"
    # a scale the default covers keeps the default, without a note
    (study_dir / "study.json").unlink()
    fine = load_step(study_dir, qrels=study_dir / "qrels.txt", mode="strict")
    assert explicit.settled(fine.judgments) is explicit
    kept = default.settled(fine.judgments)
    assert kept.config.gains.name == "0-1-10-100" and kept.notes == ()


# ---------------------------------------------------------------------------------------------
# the output folder (issue 10, item 6)


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
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".sessionval-staging")] == []


def test_outputs_are_staged_until_the_run_finishes(tmp_path):
    first = RunOutputs(tmp_path)
    first.write_text("report.html", "old report")
    first.finish()
    second = RunOutputs(tmp_path)
    second.write_text("report.html", "half a new rep")
    second.write_text("tables/new.csv", "x")
    # nothing of the new run is visible before finish; a failed run discards it
    assert (tmp_path / "report.html").read_text() == "old report"
    assert not (tmp_path / "tables").exists()
    second.discard()
    assert (tmp_path / "report.html").read_text() == "old report"
    assert sorted(p.name for p in tmp_path.iterdir()) == [MANIFEST, "report.html"]


def test_a_planted_manifest_never_reaches_outside(tmp_path):
    """A crafted manifest and a symlink must not make a run delete a file outside --out."""
    outside = tmp_path / "outside"
    outside.mkdir()
    victim = outside / "precious.txt"
    victim.write_text("keep me")
    out = tmp_path / "out"
    out.mkdir()
    (out / "link").symlink_to(outside, target_is_directory=True)
    (out / "file_link").symlink_to(victim)
    (out / MANIFEST).write_text(
        json.dumps(
            {"files": ["link/precious.txt", "../outside/precious.txt", str(victim), "file_link"]}
        )
    )
    outputs = RunOutputs(out)
    outputs.write_text("report.html", "new")
    assert outputs.finish() == []
    assert victim.read_text() == "keep me" and (out / "file_link").is_symlink()
    # nor does a run write through a linked folder
    (out / "figures").symlink_to(outside, target_is_directory=True)
    outputs = RunOutputs(out)
    outputs.write_text("figures/f.png", "x")
    with pytest.raises(OutputError, match="symbolic link"):
        outputs.finish()
    assert sorted(p.name for p in outside.iterdir()) == ["precious.txt"]


def test_foreign_files_need_force_and_inputs_are_never_overwritten(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "report.html").write_text("someone's report")
    outputs = RunOutputs(out)
    outputs.write_text("report.html", "new")
    outputs.write_text("tables/t.csv", "x")
    with pytest.raises(OutputError, match="no earlier sessionval run wrote it"):
        outputs.finish()
    assert (out / "report.html").read_text() == "someone's report"
    assert not (out / "tables").exists()  # nothing moved: all or nothing
    forced = RunOutputs(out, force=True)
    forced.write_text("report.html", "new")
    forced.finish()
    assert (out / "report.html").read_text() == "new"
    # an input in the output folder is refused before any work, even with force
    config = out / "config.toml"
    config.write_text("b = 3.0\n")
    with pytest.raises(OutputError, match=f"--out {out} contains the input {config}"):
        RunOutputs(out, force=True, inputs=[config])
    assert config.read_text() == "b = 3.0\n"
    assert not [
        p for p in out.iterdir() if p.name.startswith((".sessionval-lock", ".sessionval-st"))
    ]


def test_csv_safe_outputs(tmp_path):
    outputs = RunOutputs(tmp_path, csv_safe=True)
    outputs.write_frame("t.csv", pd.DataFrame({"q": ["=HYPERLINK(1)", "ok"], "x": [-1.5, 2.0]}))
    outputs.finish()
    back = pd.read_csv(tmp_path / "t.csv")
    assert back["q"].tolist() == ["'=HYPERLINK(1)", "ok"] and back["x"].tolist() == [-1.5, 2.0]

"""The run's statistics and report scores from the partitions' cell sums (a distributed run).

A synthetic study is split by session into partitions (searchers and topics span
them), each partition evaluated on its own as a worker does, reduced to cell sums and
combined; the statistics, report scores and notes must equal those of the local run on
the whole study.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from sessionval.analysis.cell_sums import cell_sums, combine
from sessionval.analysis.correlations import rating_columns
from sessionval.analysis.covariates import with_covariates
from sessionval.analysis.rating_sums import combine_ratings
from sessionval.analysis.stats import score_table
from sessionval.evaluation.config import SessionConfig
from sessionval.evaluation.session import evaluate
from sessionval.output.report import unequal_counts, unjudged_sessions
from sessionval.synth import Assignment, generate_study, simulate_scores
from sessionval.validate.flat import frame_from_flat
from sessionval.validate.judgments import judgments_from_table
from sessionval.workflow import RunOutputs
from sessionval.workflow.correlations import (
    correlation_from_sums,
    correlation_step,
    rating_partial,
)
from sessionval.workflow.settings import run_settings
from sessionval.workflow.statistics import (
    StatisticsSettings,
    report_scores_from_cells,
    statistics_from_cells,
    statistics_partial,
    statistics_step,
)


def _evaluated(flat: pd.DataFrame, judgments) -> pd.DataFrame:
    loaded = frame_from_flat(flat)
    ev = evaluate(loaded.frame, judgments, SessionConfig())
    return with_covariates(ev.per_session(), ev.frame)


def _study_and_partitions(
    n_parts: int, assignment: Assignment | None = None, unjudged: bool = False
) -> tuple[pd.DataFrame, list[pd.DataFrame]]:
    """The whole per-session table and the partitions', each evaluated alone."""
    study = generate_study(n_sessions=48, seed=3, jsonl=False, assignment=assignment)
    flat = study.flat.to_pandas()
    qrels = study.judgments
    if unjudged:  # a topic without judgments: its sessions have no score
        qrels = qrels[qrels["topic_id"] != qrels["topic_id"].iloc[0]]
    judgments = judgments_from_table(qrels)
    whole = _evaluated(flat, judgments)
    sessions = whole["session_id"].astype(str).to_numpy()
    which = dict(
        zip(sessions, np.random.default_rng(1).integers(0, n_parts, sessions.size), strict=True)
    )
    part_of = flat["session_id"].astype(str).map(which).to_numpy()
    parts = []
    for k in range(n_parts):
        part = _evaluated(flat[part_of == k].reset_index(drop=True), judgments)
        # a searcher's place in its sequence is the study's, not the partition's
        order = whole.set_index(whole["session_id"].astype(str))["session_order"]
        part["session_order"] = order.loc[part["session_id"].astype(str)].to_numpy()
        parts.append(part)
    return whole, parts


def _assert_same(got, expected) -> None:
    for name in ("comparisons", "omnibus", "mixed"):
        a, b = getattr(got, name), getattr(expected, name)
        if b.empty:
            assert a.empty, name
        else:
            pd.testing.assert_frame_equal(a, b, rtol=1e-12)
    assert len(got.sections) == len(expected.sections)
    for a, b in zip(got.sections, expected.sections, strict=True):
        assert (a.id, a.title, a.intro, a.notes) == (b.id, b.title, b.intro, b.notes)
        assert [(t.title, t.note) for t in a.tables] == [(t.title, t.note) for t in b.tables]
        for ta, tb in zip(a.tables, b.tables, strict=True):
            pd.testing.assert_frame_equal(ta.table, tb.table, rtol=1e-12)


@pytest.mark.parametrize(
    "assignment",
    [None, Assignment(design="within", topics="crossed"), Assignment(design="between")],
)
def test_statistics_from_cells_equal_the_local_step(tmp_path, assignment) -> None:
    whole, parts = _study_and_partitions(3, assignment)
    settings = StatisticsSettings(mixed_model=False)
    expected = statistics_step(RunOutputs(tmp_path / "local"), whole, settings)
    cells = combine(*(cell_sums(p) for p in parts))
    outputs = RunOutputs(tmp_path / "cells")
    got = statistics_from_cells(outputs, cells, settings)
    _assert_same(got, expected)
    assert (outputs.root / "tables" / "comparisons.csv").is_file()
    assert (got.comparisons["block"] != "").all() and (got.comparisons["design"] != "").all()


def test_three_systems_give_the_omnibus_tests_and_the_mixed_model_note(tmp_path) -> None:
    ps = simulate_scores(design="within", topics="crossed", n_systems=3, n_searchers=6, seed=2)
    ps["sdcg"] = 5 * ps["nsdcg"]
    which = np.arange(len(ps)) % 4
    cells = combine(*(cell_sums(ps[which == k]) for k in range(4)))
    expected = statistics_step(RunOutputs(tmp_path / "a"), ps, StatisticsSettings())
    got = statistics_from_cells(RunOutputs(tmp_path / "b"), cells, StatisticsSettings())
    assert set(got.omnibus["test"]) == {"anova", "friedman"}
    pd.testing.assert_frame_equal(got.omnibus, expected.omnibus, rtol=1e-12)
    pd.testing.assert_frame_equal(got.comparisons, expected.comparisons, rtol=1e-12)
    assert not expected.mixed.empty and got.mixed.empty
    (note,) = [n for n in got.sections[0].notes if "mixed model" in n]
    assert "sessionval.stats.mixed_model" in note and "tables/per_session/" in note
    assert [s.id for s in got.sections] == ["comparison"]


def test_runs_get_the_local_note_on_the_mixed_model(tmp_path) -> None:
    ps = simulate_scores(design="by_topic", n_systems=2, n_topics=6, seed=4)
    cells = combine(cell_sums(ps[::2]), cell_sums(ps[1::2]))
    expected = statistics_step(RunOutputs(tmp_path / "a"), ps, StatisticsSettings())
    got = statistics_from_cells(RunOutputs(tmp_path / "b"), cells, StatisticsSettings())
    _assert_same(got, expected)
    assert any("the searcher is the system" in n for n in got.sections[0].notes)


def test_report_scores_and_notes_equal_the_local_report(tmp_path) -> None:
    whole, parts = _study_and_partitions(4, unjudged=True)
    settings = run_settings(None, lenient=None, has_qrels=True)
    cells = combine(*(cell_sums(p) for p in parts))
    scores, notes = report_scores_from_cells(cells, settings)
    measures = list(scores["measure"].drop_duplicates())
    assert {"nsdcg", "sdcg", "n_queries", "n_relevant_found"} <= set(measures)
    expected = score_table(whole, measures=measures)
    pd.testing.assert_frame_equal(scores, expected, rtol=1e-12)
    assert notes == (*unjudged_sessions(whole), *unequal_counts(expected))
    assert any("without judgments" in n for n in notes)


def test_correlations_from_sums_give_pearson_and_say_what_is_left_out(tmp_path) -> None:
    whole, parts = _study_and_partitions(3)
    settings = run_settings(None, lenient=None, has_qrels=True)
    local = correlation_step(RunOutputs(tmp_path / "a"), whole, settings, figure=False)
    sums = combine_ratings(*(rating_partial(p, settings) for p in parts))
    outputs = RunOutputs(tmp_path / "b")
    got = correlation_from_sums(outputs, sums)
    assert local is not None and got is not None
    a, b = got.tables[0].table, local.tables[0].table
    pd.testing.assert_frame_equal(a.iloc[:, :5], b.iloc[:, :5], rtol=1e-12)
    assert a.iloc[:, 5:].isna().all().all() and b.iloc[:, 5:].notna().any().any()
    assert got.intro == local.intro and not got.figures
    assert "Spearman" in got.notes[0] and "tables/per_session/" in got.notes[0]
    outputs.writes.wait()  # the tables are encoded on the run's writer thread
    assert (outputs.root / "tables" / "rating_correlations.csv").is_file()
    # without any rating: no section, as the local step
    empty = combine_ratings(rating_partial(whole.drop(columns=rating_columns(whole)), settings))
    assert correlation_from_sums(RunOutputs(tmp_path / "c"), empty) is None


def test_one_partial_per_partition_gives_every_distributed_result(tmp_path) -> None:
    import pickle

    whole, parts = _study_and_partitions(3)
    settings = run_settings(None, lenient=None, has_qrels=True)
    partials = [pickle.loads(pickle.dumps(statistics_partial(p, settings))) for p in parts]
    folded = partials[1].combine(partials[2]).combine(partials[0])
    got = statistics_from_cells(RunOutputs(tmp_path / "a"), folded.cells, settings.statistics)
    expected = statistics_step(RunOutputs(tmp_path / "b"), whole, settings.statistics)
    pd.testing.assert_frame_equal(got.comparisons, expected.comparisons, rtol=1e-12)
    scores, _ = report_scores_from_cells(folded.cells, settings)
    assert scores.loc[scores["measure"] == "n_queries", "n"].sum() == len(whole)
    section = correlation_from_sums(RunOutputs(tmp_path / "c"), folded.ratings)
    assert section is not None and section.tables[0].table["n"].max() == len(whole)

"""The judgment-coverage table of the study summary: per-system means counted over system
codes, the same numbers as a pandas group-by, without a per-row table (item 7 of issue 10:
that table was the memory peak of ``validate``)."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pandas as pd

from sessionval.analysis.summary import _coverage_table
from sessionval.frame import LoadedStudy
from sessionval.judgments.coverage import coverage_counts
from sessionval.judgments.lookup import result_grades
from sessionval.models.study import Study
from sessionval.problems import LoadReport
from sessionval.validate.flat import frame_from_flat
from tests import builders


def _study(n_sessions: int) -> LoadedStudy:
    n_q, n_r = 2, 15
    rows = n_sessions * n_q * n_r
    s = np.repeat(np.arange(n_sessions), n_q * n_r)
    rank = np.tile(np.arange(1, n_r + 1), n_sessions * n_q)
    flat = pd.DataFrame(
        {
            "session_id": pd.Series(s).map("s{}".format),
            "user_id": "u",
            "topic_id": np.where(s % 2, "A", "B"),
            "system_id": pd.Series(s % 3).map({0: "S2", 1: "S10", 2: "S1"}),
            "query_pos": np.tile(np.repeat(np.arange(1, n_q + 1), n_r), n_sessions),
            "rank": rank,
            "doc_id": pd.Series((s * 7 + rank) % 40).map("d{}".format),
            "clicks": (np.arange(rows) % 7 == 0).astype(int),
            "user_grade": pd.array(np.where(np.arange(rows) % 5 == 0, 1, None), dtype="Int64"),
        }
    )
    loaded = frame_from_flat(flat)
    frame, report = loaded.frame, loaded.report
    j = builders.judgments([(t, f"d{d}", d % 4) for t in "AB" for d in range(0, 40, 3)])
    return LoadedStudy(study=Study(name="x"), frame=frame, judgments=j, report=report)


def _reference(loaded: LoadedStudy) -> pd.DataFrame:
    """The straightforward per-row table the summary used to build."""
    f, r = loaded.frame, loaded.frame.results
    system = f.sessions["system_id"].astype(str).to_numpy()[r["session_id"].cat.codes.to_numpy()]
    judged = ~np.isnan(result_grades(f, loaded.judgments, source="reference"))
    top10 = r["rank"].to_numpy() <= 10
    t = pd.DataFrame(
        {
            "reference judged (all ranks)": judged.astype(float),
            "reference judged (top 10)": np.where(top10, judged, np.nan),
            "searcher judged": (~np.isnan(r["user_grade"].to_numpy())).astype(float),
            "clicked": (r["clicks"].to_numpy() > 0).astype(float),
        }
    )
    t["system"] = system
    by = t.groupby("system").mean()
    by.loc["all"] = t.drop(columns="system").mean()
    by.insert(0, "results", [*pd.Series(system).value_counts().reindex(by.index[:-1]), len(r)])
    return by


def _coverage(loaded: LoadedStudy) -> pd.DataFrame:
    """The summary's coverage table of a study in one piece (its counts, then the fractions)."""
    return _coverage_table(coverage_counts(loaded.frame, loaded.judgments))


def test_coverage_matches_a_group_by():
    loaded = _study(30)
    pd.testing.assert_frame_equal(_coverage(loaded), _reference(loaded))


def test_coverage_holds_no_per_row_table():
    loaded = _study(3000)  # 90,000 result rows
    n = loaded.frame.n_results
    tracemalloc.start()
    _coverage(loaded)
    coverage = tracemalloc.get_traced_memory()[1]
    tracemalloc.reset_peak()
    _reference(loaded)
    table = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    # a few boolean and code arrays (bytes per row), not strings and floats per row
    assert coverage < 0.5 * table, (coverage / n, table / n)


def test_coverage_of_a_study_without_results():
    loaded = frame_from_flat(builders.flat_table([("s1", "u", "A", "S", [[]])]))
    frame, report = loaded.frame, loaded.report
    loaded = LoadedStudy(study=Study(name="x"), frame=frame, judgments=None, report=report)
    table = _coverage(loaded)
    assert table.index.tolist() == ["all"] and table.loc["all", "results"] == 0
    assert np.isnan(table.loc["all", "clicked"])
    assert isinstance(report, LoadReport)


def test_coverage_counted_block_by_block_is_the_same(monkeypatch):
    """Blocks of whole queries (here of 7 rows or more) add up to the one-block counts."""
    from sessionval.judgments import coverage as coverage_module

    loaded = _study(40)
    whole = coverage_counts(loaded.frame, loaded.judgments)
    monkeypatch.setattr(coverage_module, "_BLOCK_ROWS", 7)
    from sessionval.kernels.segments import segment_blocks

    offsets = loaded.frame.query_offsets()
    assert len(segment_blocks(offsets, coverage_module._BLOCK_ROWS)) > 10
    pd.testing.assert_frame_equal(coverage_counts(loaded.frame, loaded.judgments), whole)
    pd.testing.assert_frame_equal(_coverage(loaded), _reference(loaded))


def test_coverage_holds_no_grade_per_row(monkeypatch):
    """Counted a block at a time: no array of every row's grade (8 bytes a row)."""
    from sessionval.judgments import coverage as coverage_module

    loaded = _study(3000)  # 90,000 result rows
    monkeypatch.setattr(coverage_module, "_BLOCK_ROWS", 1000)
    tracemalloc.start()
    coverage_counts(loaded.frame, loaded.judgments)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 2 * loaded.frame.n_results, peak / loaded.frame.n_results

"""Each phase of frame_from_flat on its own, in LOAD_PHASES order: a phase runs on the
results of the phases it reads."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

from sessionval.errors import InputFormatError, ParseError, ValidationFailed
from sessionval.models import GradeScale
from sessionval.validate.assemble import build_frame
from sessionval.validate.flat import LOAD_PHASES, frame_from_flat
from sessionval.validate.list_rules import check_results
from sessionval.validate.order import (
    Boundaries,
    Ranks,
    RowKeys,
    RowOrder,
    SessionRows,
    order_rows,
    read_ranks,
    read_sessions,
    row_order,
)
from sessionval.validate.phases import Checked, check_flat
from sessionval.validate.session_rules import ENTITY_COLUMNS, check_sessions
from sessionval.validate.settle import settle
from sessionval.validate.values import read_query_values, read_result_values
from tests.builders import small_flat


def read(flat: pd.DataFrame) -> SessionRows:
    """The first phase on ``flat`` (a table named t.csv, rows as lines)."""
    return read_sessions(flat, source="t.csv", location_kind="line", row_locations=None)


def ordered(flat: pd.DataFrame) -> tuple[SessionRows, Ranks, RowKeys, RowOrder, Boundaries]:
    """The phases up to the ordered rows."""
    rows = read(flat)
    ranks, keys = read_ranks(rows)
    order, bounds = order_rows(rows, ranks, keys)
    return rows, ranks, keys, order, bounds


def checked(flat: pd.DataFrame) -> Checked:
    """Every check phase on ``flat``."""
    return check_flat(
        flat,
        source="t.csv",
        location_kind="line",
        row_locations=None,
        user_grade_scale=None,
        max_rank=None,
        tick=lambda _phase: None,
        phases=LOAD_PHASES,
    )


def test_entity_columns_come_from_the_flat_layout():
    assert ENTITY_COLUMNS == ("user_id", "topic_id", "system_id")


def test_read_sessions_encodes_sessions_by_first_appearance():
    rows = read(small_flat(session_id=["s9", "s9", "s9", "s1"]))
    assert rows.names.tolist() == ["s9", "s1"]
    assert rows.session_of_row.tolist() == [0, 0, 0, 1]
    assert rows.n_rows == 4 and not rows.coll.problems


def test_read_sessions_checks_columns_and_rows():
    with pytest.raises(InputFormatError, match=r"t\.csv: missing column\(s\) doc_id"):
        read(small_flat().drop(columns="doc_id"))
    with pytest.raises(ParseError, match="no rows"):
        read(small_flat().iloc[:0])


def test_read_sessions_reports_rows_without_a_session():
    rows = read(small_flat(session_id=["s1", None, "s1", "s2"]))
    assert [(p.location, p.field, p.record) for p in rows.coll.problems] == [
        ("line 3", "session_id", "")
    ]


def test_read_ranks_keeps_sorted_input_in_place():
    _, _, keys, order, _ = ordered(small_flat())
    assert order.order is None  # already in (session, query, rank) order: no permutation
    assert order.q_first.tolist() == [0, 2, 3] and order.s_first.tolist() == [0, 3]
    assert keys.empty_row.tolist() == [False, False, True, False]


def test_read_ranks_orders_unsorted_input():
    _, _, _, order, _ = ordered(small_flat().iloc[[2, 1, 3, 0]])
    assert order.order is not None
    assert order.order.tolist() == [3, 1, 0, 2]  # s1 q1 r1, s1 q1 r2, s1 q2, s2 q1
    assert order.q_first.tolist() == [3, 0, 2]


def test_read_ranks_rank_without_document():
    rows, *_ = ordered(small_flat(rank=[1, 2, 1, 1]))
    assert [(p.location, p.field) for p in rows.coll.problems] == [("line 4", "doc_id")]
    assert rows.coll.bad_sessions == {0}


def test_check_sessions_one_topic_per_session_and_positions():
    rows, _, _, order, bounds = ordered(
        small_flat(topic_id=["T", "T", "U", "T"], query_pos=[1, 1, 3, 1])
    )
    sessions = check_sessions(rows, order, bounds)
    assert [(p.field, p.location) for p in rows.coll.problems] == [
        ("topic_id", "line 4"),
        ("query_pos", "line 4"),
    ]
    assert sessions.entity_at_start["topic_id"].astype(str).tolist() == ["T", "T"]
    assert sessions.q_pos.tolist() == [1, 3, 1]


def test_check_results_counts_results_per_query():
    rows, ranks, keys, order, bounds = ordered(small_flat())
    lists = check_results(rows, ranks, keys, order, bounds.query_start)
    assert lists.n_results.tolist() == [2, 0, 1]
    assert lists.result_sorted.tolist() == [True, True, False, True]
    assert not rows.coll.problems and lists.query_of_row is None


def test_check_results_ranks_and_duplicates():
    rows, ranks, keys, order, bounds = ordered(
        small_flat(rank=[1, 3, None, 1], doc_id=["a", "a", None, "a"])
    )
    lists = check_results(rows, ranks, keys, order, bounds.query_start)
    assert {p.field for p in rows.coll.problems} == {"rank", "doc_id"}
    assert rows.coll.bad_sessions == {0}
    assert [r.tolist() for r in lists.repeated_docs] == [[1]]
    assert lists.query_of_row is not None  # kept for the repair


def test_read_result_values_types_and_rules():
    flat = small_flat(
        clicks=[1, -1, None, 40000], dwell=[1.5, None, None, -2.0], user_grade=[3, 2, None, 9]
    )
    rows = read(flat)
    values = read_result_values(rows, GradeScale.default())
    assert values.clicks is not None and values.clicks.dtype == np.int16
    assert values.dwell is not None and values.dwell.dtype == np.float32
    messages = sorted((p.field, p.message) for p in rows.coll.problems)
    assert messages == [
        ("clicks", "must be <= 32767"),
        ("clicks", "must be >= 0"),
        ("dwell", "must be >= 0"),
        ("user_grade", "user_grade 9 is not on the grade scale (allowed: 0, 1, 2, 3)"),
    ]


def test_read_result_values_absent_columns():
    values = read_result_values(read(small_flat()), None)
    assert values.clicks is None and values.dwell is None and values.user_grade is None


def test_read_query_values_reads_once_per_query_and_clips_cut_lists():
    flat = small_flat(
        scan_depth=[5, 5, 0, 1],
        query_time=["2020-01-01T10:00:00Z", None, "2020-01-01T10:01:00Z", None],
        rating_sat=[4, 4, 4, 2],
    )
    n_results = np.array([2, 0, 1])
    rows, _, _, order, _ = ordered(flat)
    # the lists were cut at rank 2: scan depth 5 is clipped
    queries = read_query_values(rows, order, n_results, 2)
    assert queries.scan is not None and queries.scan.tolist() == [2.0, 0.0, 1.0]
    assert queries.q_time.notna().tolist() == [True, True, False]
    assert queries.ratings["rating_sat"].tolist() == [4.0, 2.0]
    assert not rows.coll.problems
    rows, _, _, order, _ = ordered(flat)
    read_query_values(rows, order, n_results, None)
    assert [p.message for p in rows.coll.problems] == [
        "must be between 0 and the number of results (2): log the results the searcher "
        "scanned, lower scan_depth, or leave it empty (the scan depth then goes unused); "
        "or --lenient to reject the session"
    ]


def test_settle_strict_raises_and_lenient_keeps_good_sessions():
    bad = small_flat(rank=[1, 3, None, 1])
    c = checked(bad)
    with pytest.raises(ValidationFailed):
        settle(c.rows, c.order, mode="strict", max_problems=5)
    c = checked(bad)
    report, keep = settle(c.rows, c.order, mode="lenient", max_problems=5)
    assert keep is not None and keep.tolist() == [False, False, False, True]
    assert (report.records_read, report.sessions_accepted, report.sessions_rejected) == (2, 1, 1)
    c = checked(small_flat())
    report, keep = settle(c.rows, c.order, mode="strict", max_problems=5)
    assert keep is None and report.sessions_accepted == 2 and not report.problems


def test_build_frame_equals_frame_from_flat():
    flat = small_flat(clicks=[1, 0, None, 2], query_text=["x", "x", "y", "z"]).iloc[[3, 0, 2, 1]]
    c = checked(flat)
    _, keep = settle(c.rows, c.order, mode="strict", max_problems=5)
    handed = [c]
    del c
    built = build_frame(handed, keep, grade_scale=None)
    assert not handed  # the build took the only reference
    direct = frame_from_flat(flat, source="t.csv", location_kind="line").frame
    for name in ("sessions", "queries", "results", "users", "topics", "systems"):
        pd.testing.assert_frame_equal(getattr(built, name), getattr(direct, name))


@settings(max_examples=200, deadline=None)
@given(
    hs.lists(hs.tuples(hs.integers(-3, 40), hs.integers(-2, 5), hs.integers(-1, 6)), max_size=60)
)
def test_row_order_is_lexsorts_stable_order(rows):
    """The packed-key sort gives the three-key lexsort's order, ties in input order."""
    s, p, r = (np.array([t[i] for t in rows], dtype=np.int32) for i in range(3))
    got = row_order(s, p, r)
    np.testing.assert_array_equal(got, np.lexsort((r, p, s)))


def test_row_order_falls_back_to_lexsort_when_the_key_would_overflow():
    big = np.iinfo(np.int32)
    s = np.array([big.max, big.min, 0, 0], dtype=np.int32)
    p = np.array([big.max, big.min, 5, 5], dtype=np.int32)
    r = np.array([3, 2, big.max, big.min], dtype=np.int32)
    np.testing.assert_array_equal(row_order(s, p, r), np.lexsort((r, p, s)))


def test_rows_of_a_top_first_layout_come_back_in_session_order():
    """Two sorted bands (ranks 1..2 of every query, then the rest) merge into session order."""
    head = [(sid, q, rk) for sid in range(3) for q in (1, 2) for rk in (1, 2)]
    tail = [(sid, q, rk) for sid in range(3) for q in (1, 2) for rk in (3, 4)]
    s, p, r = (np.array([t[i] for t in head + tail], dtype=np.int32) for i in range(3))
    order = row_order(s, p, r)
    got = list(zip(s[order].tolist(), p[order].tolist(), r[order].tolist(), strict=True))
    assert got == sorted(head + tail)


def test_a_scan_depth_out_of_range_is_shown_as_written():
    """Campaign 3: 2**63 - 1 was shown as 9.223372036854776e+18 (the parsed float)."""
    big = np.iinfo(np.int64).max
    flat = small_flat(scan_depth=np.array([big, big, 0, -1], dtype=np.int64))
    with pytest.raises(ValidationFailed) as err:
        frame_from_flat(flat)
    shown = [(p.field, p.value) for p in err.value.problems]
    assert shown == [("scan_depth", str(big)), ("scan_depth", "-1")]


def test_rows_without_a_session_id_are_records_read_and_rejected():
    """FL-2: each id-less row is a record of its own in the books (it was left out of them)."""
    flat = pd.DataFrame(
        {"session_id": ["s1", None, None], "user_id": "u", "topic_id": "T", "system_id": "S",
         "query_pos": 1, "rank": [1, 1, 2], "doc_id": ["d1", "d1", "d2"]}
    )  # fmt: skip
    loaded = frame_from_flat(flat, mode="lenient")
    frame, report = loaded.frame, loaded.report
    assert report.summary_line() == "3 records read = 1 sessions accepted + 2 rejected"
    assert (frame.n_sessions, report.rows_read) == (1, 3)
    assert [p.location for p in report.problems if p.field == "session_id"] == ["row 2", "row 3"]
    report = frame_from_flat(flat.iloc[1:], mode="lenient").report
    assert report.summary_line() == "2 records read = 0 sessions accepted + 2 rejected"


def test_the_build_frees_each_per_row_array_of_the_checks(monkeypatch: pytest.MonkeyPatch):
    """The memory goal: the per-row arrays are gone before the text columns are built."""
    import weakref

    from sessionval.validate import assemble

    c = checked(small_flat(clicks=[1, 0, None, 2], dwell=[1.0, 2.0, None, 3.0]))
    _, keep = settle(c.rows, c.order, mode="strict", max_problems=5)
    arrays = [c.ranks.ranks, c.ranks.doc_codes, c.order.session_sorted]
    arrays += [c.row_values.clicks, c.row_values.dwell]
    refs = [weakref.ref(a) for a in arrays]
    del arrays
    alive: list[int] = []
    monkeypatch.setattr(
        assemble, "release_free_memory", lambda: alive.append(sum(r() is not None for r in refs))
    )
    handed = [c]
    del c
    build_frame(handed, keep, grade_scale=None)
    assert alive[0] == len(refs) and alive[-1] == 0  # all held at the start, none at the end

"""Each phase of frame_from_flat on its own, in LOAD_PHASES order."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

from sessionval.errors import InputFormatError, ParseError, ValidationFailed
from sessionval.models import GradeScale
from sessionval.validate.assemble import build_frame
from sessionval.validate.flat import frame_from_flat
from sessionval.validate.phases import (
    ENTITY_COLUMNS,
    LoadState,
    _row_order,
    check_results,
    check_sessions,
    read_query_values,
    read_ranks,
    read_result_values,
    read_sessions,
    settle,
)
from tests.builders import small_flat


def state(flat: pd.DataFrame, *, upto: int) -> LoadState:
    """The state after the first ``upto`` phases (1: read_sessions ... 6: read_query_values)."""
    st = read_sessions(flat, source="t.csv", location_kind="line", row_locations=None)
    steps = [
        read_ranks,
        check_sessions,
        check_results,
        lambda s: read_result_values(s, None),
        lambda s: read_query_values(s, None),
    ]
    for step in steps[: upto - 1]:
        step(st)
    return st


def test_entity_columns_come_from_the_flat_layout():
    assert ENTITY_COLUMNS == ("user_id", "topic_id", "system_id")


def test_read_sessions_encodes_sessions_by_first_appearance():
    st = state(small_flat(session_id=["s9", "s9", "s9", "s1"]), upto=1)
    assert st.names.tolist() == ["s9", "s1"]
    assert st.s_codes.tolist() == [0, 0, 0, 1]
    assert st.n_rows == 4 and not st.coll.problems


def test_read_sessions_checks_columns_and_rows():
    with pytest.raises(InputFormatError, match=r"t\.csv: missing column\(s\) doc_id"):
        state(small_flat().drop(columns="doc_id"), upto=1)
    with pytest.raises(ParseError, match="no rows"):
        state(small_flat().iloc[:0], upto=1)


def test_read_sessions_reports_rows_without_a_session():
    st = state(small_flat(session_id=["s1", None, "s1", "s2"]), upto=1)
    assert [(p.location, p.field, p.record) for p in st.coll.problems] == [
        ("line 3", "session_id", "")
    ]


def test_read_ranks_keeps_sorted_input_in_place():
    st = state(small_flat(), upto=2)
    assert st.order is None  # already in (session, query, rank) order: no permutation
    assert st.q_first.tolist() == [0, 2, 3] and st.s_first.tolist() == [0, 3]
    assert st.empty_row.tolist() == [False, False, True, False]


def test_read_ranks_orders_unsorted_input():
    st = state(small_flat().iloc[[2, 1, 3, 0]], upto=2)
    assert st.order is not None
    assert st.order.tolist() == [3, 1, 0, 2]  # s1 q1 r1, s1 q1 r2, s1 q2, s2 q1
    assert st.q_first.tolist() == [3, 0, 2]


def test_read_ranks_rank_without_document():
    st = state(small_flat(rank=[1, 2, 1, 1]), upto=2)
    assert [(p.location, p.field) for p in st.coll.problems] == [("line 4", "doc_id")]
    assert st.coll.bad_sessions == {0}


def test_check_sessions_one_topic_per_session_and_positions():
    st = state(small_flat(topic_id=["T", "T", "U", "T"], query_pos=[1, 1, 3, 1]), upto=3)
    assert [(p.field, p.location) for p in st.coll.problems] == [
        ("topic_id", "line 4"),
        ("query_pos", "line 4"),
    ]
    assert st.entity_at_start["topic_id"].astype(str).tolist() == ["T", "T"]
    assert st.q_pos.tolist() == [1, 3, 1]


def test_check_results_counts_results_per_query():
    st = state(small_flat(), upto=4)
    assert st.n_res_q.tolist() == [2, 0, 1]
    assert st.res_mask.tolist() == [True, True, False, True]
    assert not st.coll.problems


def test_check_results_ranks_and_duplicates():
    st = state(small_flat(rank=[1, 3, None, 1], doc_id=["a", "a", None, "a"]), upto=4)
    assert {p.field for p in st.coll.problems} == {"rank", "doc_id"}
    assert st.coll.bad_sessions == {0}


def test_read_result_values_types_and_rules():
    flat = small_flat(
        clicks=[1, -1, None, 40000], dwell=[1.5, None, None, -2.0], user_grade=[3, 2, None, 9]
    )
    st = state(flat, upto=4)
    read_result_values(st, GradeScale.default())
    assert st.clicks is not None and st.clicks.dtype == np.int16
    assert st.dwell is not None and st.dwell.dtype == np.float32
    messages = sorted((p.field, p.message) for p in st.coll.problems)
    assert messages == [
        ("clicks", "must be <= 32767"),
        ("clicks", "must be >= 0"),
        ("dwell", "must be >= 0"),
        ("user_grade", "user_grade 9 is not on the grade scale (allowed: 0, 1, 2, 3)"),
    ]


def test_read_result_values_absent_columns():
    st = state(small_flat(), upto=5)
    assert st.clicks is None and st.dwell is None and st.ugrade is None


def test_read_query_values_reads_once_per_query_and_clips_cut_lists():
    flat = small_flat(
        scan_depth=[5, 5, 0, 1],
        query_time=["2020-01-01T10:00:00Z", None, "2020-01-01T10:01:00Z", None],
        rating_sat=[4, 4, 4, 2],
    )
    st = state(flat, upto=5)
    read_query_values(st, 2)  # the lists were cut at rank 2: scan depth 5 is clipped
    assert st.scan is not None and st.scan.tolist() == [2.0, 0.0, 1.0]
    assert st.q_time.notna().tolist() == [True, True, False]
    assert st.ratings["rating_sat"].tolist() == [4.0, 2.0]
    assert not st.coll.problems
    st = state(flat, upto=5)
    read_query_values(st, None)
    assert [p.message for p in st.coll.problems] == [
        "must be between 0 and the number of results (2): log the results the searcher "
        "scanned, lower scan_depth, or leave it empty (the scan depth then goes unused); "
        "or --lenient to reject the session"
    ]


def test_settle_strict_raises_and_lenient_keeps_good_sessions():
    bad = small_flat(rank=[1, 3, None, 1])
    with pytest.raises(ValidationFailed):
        settle(state(bad, upto=6), mode="strict", max_problems=5)
    report, keep = settle(state(bad, upto=6), mode="lenient", max_problems=5)
    assert keep is not None and keep.tolist() == [False, False, False, True]
    assert (report.records_read, report.sessions_accepted, report.sessions_rejected) == (2, 1, 1)
    report, keep = settle(state(small_flat(), upto=6), mode="strict", max_problems=5)
    assert keep is None and report.sessions_accepted == 2 and not report.problems


def test_build_frame_equals_frame_from_flat():
    flat = small_flat(clicks=[1, 0, None, 2], query_text=["x", "x", "y", "z"]).iloc[[3, 0, 2, 1]]
    st = state(flat, upto=6)
    _, keep = settle(st, mode="strict", max_problems=5)
    built = build_frame(st, keep, grade_scale=None)
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
    got = _row_order(s, p, r)
    np.testing.assert_array_equal(got, np.lexsort((r, p, s)))


def test_row_order_falls_back_to_lexsort_when_the_key_would_overflow():
    big = np.iinfo(np.int32)
    s = np.array([big.max, big.min, 0, 0], dtype=np.int32)
    p = np.array([big.max, big.min, 5, 5], dtype=np.int32)
    r = np.array([3, 2, big.max, big.min], dtype=np.int32)
    np.testing.assert_array_equal(_row_order(s, p, r), np.lexsort((r, p, s)))


def test_rows_of_a_top_first_layout_come_back_in_session_order():
    """Two sorted bands (ranks 1..2 of every query, then the rest) merge into session order."""
    head = [(sid, q, rk) for sid in range(3) for q in (1, 2) for rk in (1, 2)]
    tail = [(sid, q, rk) for sid in range(3) for q in (1, 2) for rk in (3, 4)]
    s, p, r = (np.array([t[i] for t in head + tail], dtype=np.int32) for i in range(3))
    order = _row_order(s, p, r)
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

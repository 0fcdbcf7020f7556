"""Gain schemes, negative/unjudged policies, grade lookup and ideal vectors."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from sessionval.errors import JudgmentError, MeasureSpecError
from sessionval.frame import JudgmentFrame, SessionFrame
from sessionval.judgments.gains import GAIN_SCHEMES, gain_scheme
from sessionval.judgments.ideal import ideal_gains
from sessionval.judgments.lookup import JudgmentIndex, lookup_grades, result_grades
from sessionval.judgments.unjudged import apply_unjudged
from sessionval.models.judgments import GradeScale
from tests.builders import judgments

NAN = float("nan")


def _judgments(rows) -> JudgmentFrame:
    return judgments(rows, default_scale=False)  # scale: the grades that occur


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("0-1-2-3", [0, 1, 2, 3]),
        ("0-1-1-1", [0, 1, 1, 1]),
        ("0-0-0-1", [0, 0, 0, 1]),
        ("0-1-10-100", [0, 1, 10, 100]),
        ("0-1-4-10", [0, 1, 4, 10]),
        ("exp", [0, 1, 3, 7]),
        ("grade", [0, 1, 2, 3]),
    ],
)
def test_named_schemes(name: str, expected: list[float]) -> None:
    s = gain_scheme(name)
    assert s is GAIN_SCHEMES[name]
    np.testing.assert_array_equal(s.gains([0, 1, 2, 3]), expected)


def test_nan_stays_nan_and_input_untouched() -> None:
    g = np.array([NAN, 2.0])
    out = gain_scheme("0-1-10-100").gains(g)
    assert np.isnan(out[0]) and out[1] == 10
    assert np.isnan(g[0]) and g[1] == 2.0


def test_grade_outside_mapping_is_named() -> None:
    with pytest.raises(JudgmentError, match="grade 4 is not in gain scheme 0-1-2-3"):
        gain_scheme("0-1-2-3").gains([1, 4])


def test_custom_mapping_and_unknown_spec() -> None:
    s = gain_scheme({0: 0, 1: 2, 2: 5})
    assert s.name == "{0:0,1:2,2:5}"
    assert gain_scheme(s.name) == s
    assert gain_scheme("0-2-5").gains([2]).tolist() == [5.0]
    with pytest.raises(MeasureSpecError, match="unknown gain scheme"):
        gain_scheme("steep")


def test_negative_policies() -> None:
    exp = gain_scheme("exp")
    np.testing.assert_array_equal(exp.gains([-1, -2, 1]), [0, 0, 1])  # clip (default)
    np.testing.assert_array_equal(exp.gains([-1, 1], negative="keep"), [-0.5, 1])
    with pytest.raises(JudgmentError, match="negative grade"):
        exp.gains([-2, 1], negative="error")
    r = exp.apply([-2, -1, 1, NAN], negative="keep", unjudged="zero")
    assert (r.n_negative, r.n_unjudged) == (2, 1)
    np.testing.assert_array_equal(r.gains, [-0.75, -0.5, 1, 0])
    with pytest.raises(JudgmentError, match="-1 is not in gain scheme"):
        gain_scheme("0-1-2-3").gains([-1], negative="keep")


def test_unjudged_policies() -> None:
    g, off, rows = apply_unjudged([1.0, NAN, 3.0, NAN], [0, 2, 4], policy="zero")
    np.testing.assert_array_equal(g, [1, 0, 3, 0])
    g, off, rows = apply_unjudged([1.0, NAN, 3.0, NAN], [0, 2, 2, 4], policy="condense")
    np.testing.assert_array_equal(g, [1, 3])
    np.testing.assert_array_equal(off, [0, 1, 1, 2])
    np.testing.assert_array_equal(rows, [0, 2])
    with pytest.raises(JudgmentError, match="unjudged"):
        apply_unjudged([NAN], [0, 1], policy="error")
    with pytest.raises(MeasureSpecError):
        apply_unjudged([1.0], [0, 1], policy="drop")  # type: ignore[arg-type]


def test_lookup_grades_against_dict() -> None:
    rng = np.random.default_rng(0)
    rows = {
        (f"t{t}", f"d{d}"): int(rng.integers(-2, 4))
        for t, d in zip(rng.integers(0, 20, 300), rng.integers(0, 50, 300), strict=True)
    }
    j = _judgments([(t, d, g) for (t, d), g in rows.items()])
    keys = [f"t{t}" for t in rng.integers(0, 25, 2000)]
    docs = [f"d{d}" for d in rng.integers(0, 60, 2000)]
    got = lookup_grades(pd.Categorical(keys), pd.Series(docs, dtype="category"), j)
    exp = np.array([rows.get((k, d), NAN) for k, d in zip(keys, docs, strict=True)], dtype=float)
    np.testing.assert_array_equal(got, exp)
    # a prebuilt index gives the same, and plain arrays work too
    np.testing.assert_array_equal(lookup_grades(keys, docs, JudgmentIndex.build(j)), exp)


def test_join_refuses_a_hand_built_frame_with_a_repeat() -> None:
    # the boundary keeps one grade per (topic, doc); a frame built around it is refused
    table = _judgments([("1", "a", 1), ("1", "b", 2)]).table.copy()
    table["doc_id"] = pd.Categorical(["a", "a"])
    with pytest.raises(JudgmentError, match="listed twice; build them with"):
        JudgmentIndex.build(JudgmentFrame(table, GradeScale.default(), "hand"))


def test_ideal_gains_segments_and_dense() -> None:
    j = _judgments(
        [("1", "a", 1), ("1", "b", 3), ("1", "c", 0), ("1", "d", -1), ("2", "a", 2), ("3", "x", 0)]
    )
    ideal = ideal_gains(j, "0-1-10-100")
    assert list(ideal.keys) == ["1", "2", "3"]
    np.testing.assert_array_equal(ideal.n_relevant, [2, 1, 0])
    np.testing.assert_array_equal(ideal.values, [100, 1, 10])
    pos = ideal.positions(["3", "1", "nope"])
    np.testing.assert_array_equal(pos, [2, 0, -1])
    off, vals = ideal.segments(pos, depth=1)
    np.testing.assert_array_equal(off, [0, 0, 1, 1])
    np.testing.assert_array_equal(vals, [100])
    np.testing.assert_array_equal(ideal.dense(pos, depth=3), [[0, 0, 0], [100, 1, 0], [0, 0, 0]])


def _frame() -> SessionFrame:
    sessions = pd.DataFrame(
        {
            "session_id": pd.Categorical(["s1"]),
            "user_id": pd.Categorical(["u"]),
            "topic_id": pd.Categorical(["1"]),
            "system_id": pd.Categorical(["A"]),
            "start_time": pd.Series([pd.NaT], dtype="datetime64[ns, UTC]"),
            "end_time": pd.Series([pd.NaT], dtype="datetime64[ns, UTC]"),
            "n_queries": np.array([2], dtype=np.int16),
        }
    )
    queries = pd.DataFrame(
        {
            "session_id": pd.Categorical(["s1", "s1"]),
            "query_pos": np.array([1, 2], dtype=np.int16),
            "query_id": pd.Series(["s1:1", "s1:2"], dtype="string"),
            "text": pd.Series(["a", "b"], dtype="string"),
            "time": pd.Series([pd.NaT, pd.NaT], dtype="datetime64[ns, UTC]"),
            "n_results": np.array([3, 1], dtype=np.int32),
            "scan_depth": pd.array([pd.NA, pd.NA], dtype="Int32"),
            "qrels_id": pd.Categorical(["1", "2"]),
        }
    )
    results = pd.DataFrame(
        {
            "query_idx": np.array([0, 0, 0, 1], dtype=np.int32),
            "session_id": pd.Categorical(["s1"] * 4),
            "query_pos": np.array([1, 1, 1, 2], dtype=np.int16),
            "rank": np.array([1, 2, 3, 1], dtype=np.int32),
            "doc_id": pd.Categorical(["b", "z", "a", "a"]),
            "clicks": np.zeros(4, dtype=np.int16),
            "dwell": np.full(4, np.nan, dtype=np.float32),
            "user_grade": np.array([3, np.nan, 0, 1], dtype=np.float32),
        }
    )
    return SessionFrame(sessions, queries, results)


def test_result_grades_reference_and_searcher() -> None:
    j = _judgments([("1", "a", 1), ("1", "b", 3), ("2", "a", 2)])
    f = _frame()
    np.testing.assert_array_equal(result_grades(f, j), [3, NAN, 1, 2])
    np.testing.assert_array_equal(result_grades(f, None, source="searcher"), [3, NAN, 0, 1])
    with pytest.raises(JudgmentError, match="needs judgments"):
        result_grades(f, None)


def test_ranked_lists_from_frame() -> None:
    from sessionval.measures.cg import gain_scalar
    from sessionval.measures.lists import RankedLists

    j = _judgments([("1", "a", 1), ("1", "b", 3), ("2", "a", 2), ("2", "q", 3)])
    lists = RankedLists.from_frame(_frame(), j)
    assert list(lists.query_ids) == ["s1:1", "s1:2"]
    np.testing.assert_array_equal(lists.n_relevant(), [2, 2])
    v = gain_scalar(lists, kind="nCG", cutoff=1, gain="0-1-2-3")
    np.testing.assert_allclose(v, [1.0, 2 / 3])

"""Vectors (tidy frames), policies and edge cases of the single-query measures."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from sessionval.errors import InputFormatError, JudgmentError, MeasureSpecError
from sessionval.evaluation.lists import evaluate_lists
from sessionval.measures.cg import (
    avg_pos,
    avg_vect,
    discounted_cumulated_gain,
    gain_scalar,
    gain_vectors,
    norm_vect,
)
from sessionval.measures.lists import RankedLists
from tests.builders import judgments

NAN = float("nan")


@pytest.mark.parametrize("discount", ["jk2008", "jk2002", "jk2002rn", "log2p1", "none"])
@pytest.mark.parametrize("b", [2.0, 4.0, 10.0])
def test_vectors_equal_per_list_loop(discount: str, b: float) -> None:
    rng = np.random.default_rng(7)
    lens = rng.integers(0, 12, 20)
    grades = rng.integers(0, 4, lens.sum()).astype(float)
    off = np.concatenate([[0], np.cumsum(lens)])
    lists = RankedLists.from_arrays([f"q{i}" for i in range(20)], off, grades)
    depth = 8
    frame = gain_vectors(lists, kind="DCG", depth=depth, discount=discount, b=b)
    assert list(frame.columns) == ["query_id", "rank", "value"]
    assert len(frame) == 20 * depth
    for i in range(20):
        g = np.zeros(depth)
        own = grades[off[i] : off[i + 1]][:depth]
        g[: own.size] = own
        expected = discounted_cumulated_gain(g, discount=discount, b=b)
        got = frame[frame["query_id"] == f"q{i}"]["value"].to_numpy()
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)
    # the scalar at k is the vector's k-th value
    at5 = gain_scalar(lists, kind="DCG", cutoff=5, discount=discount, b=b)
    np.testing.assert_allclose(at5, frame[frame["rank"] == 5]["value"].to_numpy(), atol=1e-12)


def test_normalised_vectors_nan_on_empty_recall_base_and_zero_option() -> None:
    lists = RankedLists.from_arrays(["a", "b"], [0, 2, 4], [2, 0, 0, 0])
    v = gain_vectors(lists, kind="nDCG", depth=3)
    assert np.isnan(v[v["query_id"] == "b"]["value"]).all()
    v0 = gain_vectors(lists, kind="nDCG", depth=3, empty="zero")
    assert (v0[v0["query_id"] == "b"]["value"] == 0).all()
    assert (v[v["query_id"] == "a"]["value"] == 1).all()


def test_avg_and_norm_vect_and_avg_pos_on_columnar_vectors() -> None:
    lists = RankedLists.from_arrays(
        ["a", "b"], [0, 3, 6], [3, 0, 1, 1, 2, 0], recall_base=[[3, 1], [2, 1]]
    )
    raw = gain_vectors(lists, kind="CG", depth=3)
    ideal = gain_vectors(lists, kind="CG", depth=3, ideal=True)
    avg, avg_i = avg_vect(raw), avg_vect(ideal)
    np.testing.assert_allclose(avg["value"], [2.0, 3.0, 3.5])
    np.testing.assert_allclose(avg_i["value"], [2.5, 3.5, 3.5])
    np.testing.assert_allclose(norm_vect(avg, avg_i)["value"], [0.8, 3 / 3.5, 1.0])
    ap = avg_pos(raw, 3)
    np.testing.assert_allclose(ap.set_index("query_id")["value"].loc[["a", "b"]], [10 / 3, 7 / 3])
    with pytest.raises(MeasureSpecError, match="shorter than k=4"):
        avg_pos(raw, 4)


def test_negative_keep_goes_through_the_gain_function() -> None:
    lists = RankedLists.from_arrays(["q"], [0, 2], [-1, 2], recall_base=[[2]], negative="keep")
    dcg = gain_scalar(lists, kind="DCG", gain="exp")
    assert dcg[0] == pytest.approx(-0.5 + 3 / np.log2(3))
    clipped = RankedLists.from_arrays(["q"], [0, 2], [-1, 2], recall_base=[[2]])
    assert gain_scalar(clipped, kind="DCG", gain="exp")[0] == pytest.approx(3 / np.log2(3))
    with pytest.raises(JudgmentError, match="negative"):
        RankedLists.from_arrays(["q"], [0, 1], [-2], negative="error")


def test_unjudged_condense_moves_documents_up() -> None:
    zero = RankedLists.from_arrays(["q"], [0, 3], [NAN, NAN, 1], recall_base=[[1]])
    cond = RankedLists.from_arrays(
        ["q"], [0, 3], [NAN, NAN, 1], recall_base=[[1]], unjudged="condense"
    )
    assert evaluate_lists(zero, ["RR"]).long()["value"].tolist() == [pytest.approx(1 / 3)]
    assert evaluate_lists(cond, ["RR"]).long()["value"].tolist() == [1.0]
    assert zero.n_unjudged == 2
    with pytest.raises(JudgmentError, match="unjudged"):
        RankedLists.from_arrays(["q"], [0, 1], [NAN], unjudged="error")


def test_summary_counts_and_means() -> None:
    lists = RankedLists.from_arrays(["a", "b", "c"], [0, 1, 2, 2], [1, 0])
    ev = evaluate_lists(lists, ["AP", "P@1"])
    assert ev.n_empty_recall_base == 2
    s = ev.summary()
    assert s["measure"].tolist() == ["AP", "P@1"]
    assert s["n"].tolist() == [1, 3]
    np.testing.assert_allclose(s["value"], [1.0, 1 / 3])
    z = evaluate_lists(lists, ["AP"], empty="zero").summary()
    assert z["value"].tolist() == [pytest.approx(1 / 3)]


_jf = judgments


def test_from_run_rejects_duplicates_and_bad_columns() -> None:
    j = _jf([("1", "a", 1)])
    run = pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", "a"], "score": [1.0, 2.0]})
    with pytest.raises(InputFormatError, match="'a' appears twice for query '1'"):
        RankedLists.from_run(run, j)
    with pytest.raises(InputFormatError, match="missing column 'score'"):
        RankedLists.from_run(run.drop(columns="score"), j)
    with pytest.raises(MeasureSpecError, match="tie-break"):
        RankedLists.from_run(run, j, ties="random")  # type: ignore[arg-type]


def test_from_run_tie_breaks() -> None:
    j = _jf([("1", "b", 1)])
    run = pd.DataFrame({"query_id": ["1"] * 3, "doc_id": ["c", "b", "a"], "score": [1.0] * 3})

    def rr(ties: str) -> float:
        lists = RankedLists.from_run(run, j, ties=ties)  # type: ignore[arg-type]
        return float(evaluate_lists(lists, ["RR"]).long()["value"][0])

    assert rr("doc_id") == 0.5  # a, b, c
    assert rr("trec_eval") == 0.5  # c, b, a
    assert rr("input") == 0.5  # c, b, a as given
    run2 = run.assign(doc_id=["b", "c", "a"])
    lists = RankedLists.from_run(run2, j, ties="doc_id")
    assert float(evaluate_lists(lists, ["RR"]).long()["value"][0]) == 0.5
    lists = RankedLists.from_run(run2, j, ties="input")
    assert float(evaluate_lists(lists, ["RR"]).long()["value"][0]) == 1.0


def test_score_order_and_duplicates_match_simple_definitions() -> None:
    from sessionval.validate.ranking import _score_order, first_duplicate

    rng = np.random.default_rng(11)
    for trial in range(300):
        n = int(rng.integers(0, 60))
        q = rng.integers(0, 6, n).astype(np.int64)
        if trial % 3 == 0:
            q = np.sort(q)  # grouped
        s = rng.integers(0, 4, n).astype(float)
        if trial % 7 == 0 and n:
            s[0] = -np.inf
        np.testing.assert_array_equal(_score_order(q, s), np.lexsort((-s, q)))
        # one very long block forces the lexsort fallback
    q = np.r_[np.zeros(5000, dtype=np.int64), np.arange(1, 50)]
    s = rng.random(q.size)
    np.testing.assert_array_equal(_score_order(q, s), np.lexsort((-s, q)))
    qq = np.array([0, 0, 0, 1, 1, 2])
    assert first_duplicate(qq, np.array([1, 2, 3, 1, 2, 1])) == -1
    assert first_duplicate(qq, np.array([1, 2, 3, 4, 4, 1])) == 4
    assert first_duplicate(qq, np.array([5, 2, 5, 4, 3, 1])) == 2

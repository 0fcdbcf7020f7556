"""Fast paths of run ingestion agree with the plain definitions they replace."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from sessionval.evaluation.lists import evaluate_lists
from sessionval.frame import JudgmentFrame
from sessionval.judgments.lookup import JudgmentIndex
from sessionval.measures.lists import RankedLists
from sessionval.models.judgments import GradeScale
from sessionval.validate import ranking as single
from sessionval.validate.ranking import _score_order, factorize_ids


def _judgments(qrels: pd.DataFrame) -> JudgmentFrame:
    t = pd.DataFrame(
        {
            "topic_id": qrels["query_id"].astype(str).astype("category"),
            "doc_id": qrels["doc_id"].astype(str).astype("category"),
            "grade": qrels["grade"].astype("int16"),
            "assessor": pd.Categorical([""] * len(qrels)),
        }
    )
    return JudgmentFrame(t, GradeScale.default())


def _data(seed: int, n_q: int = 40) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    rows = []
    for q in range(n_q):
        depth = int(rng.integers(1, 30)) if seed % 2 else 20  # ragged or equal lengths
        docs = rng.choice(200, size=depth, replace=False)
        for d in docs:
            rows.append((f"q{q}", f"d{d}", float(rng.integers(0, 5))))  # many ties
    run = pd.DataFrame(rows, columns=["query_id", "doc_id", "score"])
    jd = [(f"q{q}", f"d{d}", int(rng.integers(0, 4))) for q in range(n_q) for d in range(0, 200, 3)]
    return run, pd.DataFrame(jd, columns=["query_id", "doc_id", "grade"])


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
@pytest.mark.parametrize("ties", ["trec_eval", "doc_id", "input"])
def test_id_encodings_and_row_order_give_the_same_lists(seed: int, ties: str) -> None:
    run, qrels = _data(seed)
    j = _judgments(qrels)
    ref = RankedLists.from_run(run.astype({"query_id": object, "doc_id": object}), j, ties=ties)
    variants = [
        run,  # pandas' default str (Arrow-backed)
        run.astype({"query_id": "category", "doc_id": "category"}),  # sorted categories
        run.astype(
            {
                "query_id": pd.CategoricalDtype(run["query_id"].unique()),
                "doc_id": pd.CategoricalDtype(run["doc_id"].unique()),  # unsorted categories
            }
        ),
    ]
    if ties != "input":
        variants.append(run.iloc[::-1].reset_index(drop=True))  # input order is irrelevant
    for v in variants:
        got = RankedLists.from_run(v, j, ties=ties)
        np.testing.assert_array_equal(got.offsets, ref.offsets)
        np.testing.assert_array_equal(got.grades, ref.grades)
        assert got.query_ids.tolist() == ref.query_ids.tolist()


def test_trec_eval_ties_break_by_doc_id_descending() -> None:
    run = pd.DataFrame(
        {"query_id": ["q"] * 4, "doc_id": ["a", "b", "c", "d"], "score": [1.0, 2.0, 1.0, 1.0]}
    )
    qrels = pd.DataFrame({"query_id": ["q"] * 4, "doc_id": list("abcd"), "grade": [1, 2, 3, 0]})
    j = _judgments(qrels)
    for r in (run, run.astype({"doc_id": "category"})):
        assert RankedLists.from_run(r, j, ties="trec_eval").grades.tolist() == [2, 0, 3, 1]
        assert RankedLists.from_run(r, j, ties="doc_id").grades.tolist() == [2, 1, 3, 0]


@pytest.mark.parametrize("block", [1 << 20, 7])
def test_unstable_score_order_sorts_by_query_then_score(block: int) -> None:
    # block=7: many small blocks of lists
    rng = np.random.default_rng(5)
    for trial in range(200):
        n = int(rng.integers(1, 80))
        q = np.sort(rng.integers(0, 5, n)) if trial % 2 else rng.integers(0, 5, n)
        s = rng.integers(0, 6, n).astype(float)
        if trial % 5 == 0:
            s[int(rng.integers(0, n))] = -np.inf
        o = _score_order(q.astype(np.int64), s, stable=False, block=block)
        assert sorted(o.tolist()) == list(range(n))
        ref = np.lexsort((-s, q))
        np.testing.assert_array_equal(q[o], q[ref])
        np.testing.assert_array_equal(s[o], s[ref])
        stable = _score_order(q.astype(np.int64), s, block=block)
        np.testing.assert_array_equal(stable, ref)  # stable


def test_arrow_codes_match_factorize() -> None:
    s = pd.Series(["b", "a", None, "b", "c"])
    codes, cats = factorize_ids(s)
    ref_codes, ref_cats = pd.factorize(s)
    np.testing.assert_array_equal(codes, ref_codes)
    assert cats.tolist() == list(ref_cats)
    chunked = pd.Series(
        pd.arrays.ArrowStringArray(pa.chunked_array([["x", "y"], ["y", "z", "x"]])),
        dtype=pd.StringDtype("pyarrow", na_value=np.nan),
    )
    codes, cats = factorize_ids(chunked)
    assert cats[codes].tolist() == ["x", "y", "y", "z", "x"]
    assert factorize_ids(pd.Series([], dtype="str"))[0].size == 0


def test_grouped_lookup_matches_row_lookup() -> None:
    run, qrels = _data(7)
    index = JudgmentIndex.build(_judgments(qrels))
    run = run.sort_values("query_id", kind="stable")
    qc, qcat = factorize_ids(run["query_id"])
    dc, dcat = factorize_ids(run["doc_id"])
    labels = pd.Index(["zz", *list(qcat)])  # a list whose key has no judgments
    counts = np.r_[2, np.bincount(qc)]
    keyc = np.repeat(np.arange(labels.size), counts)
    dcodes = np.r_[dc[:2], dc]
    lookup = index.prepare(labels, dcat)
    got = lookup.lists(np.arange(labels.size), counts, dcodes)
    ref = lookup.rows(keyc, dcodes)
    np.testing.assert_array_equal(got, ref)
    assert np.isnan(got[:2]).all()
    ev = evaluate_lists(RankedLists.from_run(run, _judgments(qrels)), ["AP", "RR"])
    assert ev.n_queries == 40


@pytest.mark.parametrize("block", [1 << 20, 3])
def test_first_duplicate_in_blocks(block: int) -> None:
    qq = np.array([0, 0, 0, 1, 1, 2, 3, 3, 3, 3])
    dup = single.first_duplicate
    assert dup(qq, np.array([1, 2, 3, 1, 2, 1, 4, 5, 6, 7]), block=block) == -1
    assert dup(qq, np.array([1, 2, 3, 1, 2, 1, 4, 5, 4, 7]), block=block) == 8
    assert dup(qq, np.array([1, 2, 3, 4, 4, 1, 4, 5, 4, 7]), block=block) == 4

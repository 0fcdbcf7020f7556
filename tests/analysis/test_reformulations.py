"""``reformulations``: each column against a plain Python computation of the same pairs."""

from __future__ import annotations

import re
from itertools import pairwise

import numpy as np
import pandas as pd
import pytest

from sessionval import SessionConfig, evaluate, load_study, reformulations, write_study
from sessionval.analysis.reformulation_types import GROUPS, TYPES
from sessionval.analysis.reformulations import REFORMULATION_COLUMNS
from sessionval.validate.flat import frame_from_flat
from tests.builders import judgments


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    root = tmp_path_factory.mktemp("study")
    write_study(root, n_sessions=24, seed=11, formats="jsonl")
    loaded = load_study(root, qrels=root / "qrels.txt")
    config = SessionConfig(cutoff=5)
    ev = evaluate(loaded.frame, loaded.judgments, config)
    return loaded, ev, reformulations(ev, loaded.judgments)


def _expected(loaded, ev, cutoff):
    """The pairs computed session by session with sets and dictionaries."""
    frame = loaded.frame
    jt = loaded.judgments.table
    grade = {
        (str(t), str(d)): int(g)
        for t, d, g in zip(jt["topic_id"], jt["doc_id"], jt["grade"], strict=True)
    }
    res = frame.results
    top: dict[tuple[str, int], list[str]] = {}
    for s, p, r, d in zip(
        res["session_id"], res["query_pos"], res["rank"], res["doc_id"], strict=True
    ):
        if r <= cutoff:
            top.setdefault((str(s), int(p)), []).append(str(d))
    pq = ev.per_query()
    dcg = {
        (str(s), int(p)): v
        for s, p, v in zip(pq["session_id"], pq["query_pos"], pq["dcg"], strict=True)
    }
    sdcg = {
        (str(s), int(p)): v
        for s, p, v in zip(pq["session_id"], pq["query_pos"], pq["sdcg"], strict=True)
    }
    q = frame.queries
    rows = []
    by_session = {}
    for s, p, text, t, key in zip(
        q["session_id"], q["query_pos"], q["text"], q["time"], q["qrels_id"], strict=True
    ):
        by_session.setdefault(str(s), []).append((int(p), text, t, str(key)))
    for s, queries in by_session.items():
        seen = set(top.get((s, 1), []))
        for (p1, a, t1, _), (p2, b, t2, key) in pairwise(queries):
            ta = set(re.findall(r"\w+", str(a).lower()))
            tb = set(re.findall(r"\w+", str(b).lower()))
            da, db = set(top.get((s, p1), [])), set(top.get((s, p2), []))
            new = db - seen
            seen |= db
            rows.append({
                "session_id": s, "from_pos": p1, "to_pos": p2,
                "terms_added": set(tb - ta), "terms_removed": set(ta - tb), "terms_kept": ta & tb,
                "term_jaccard": len(ta & tb) / len(ta | tb) if ta | tb else 1.0,
                "result_jaccard": len(da & db) / len(da | db) if da | db else 1.0,
                "new_docs": len(new),
                "new_relevant": sum(grade.get((key, d), 0) >= 1 for d in new),
                "delta_dcg": dcg[(s, p2)] - dcg[(s, p1)],
                "delta_sdcg": sdcg[(s, p2)] - sdcg[(s, p1)],
                "seconds": (t2 - t1).total_seconds() if pd.notna(t1) and pd.notna(t2) else np.nan,
            })  # fmt: skip
    return pd.DataFrame(rows)


def test_columns_in_order_and_types_known(synthetic):
    _, _, table = synthetic
    assert list(table.columns)[: len(REFORMULATION_COLUMNS)] == list(REFORMULATION_COLUMNS)
    assert set(table["type"].astype(str)) <= set(TYPES)
    assert (table["group"].astype(str) == table["type"].astype(str).map(GROUPS)).all()
    assert (table["to_pos"] == table["from_pos"] + 1).all()


def test_every_column_agrees_with_a_plain_computation(synthetic):
    loaded, ev, table = synthetic
    want = _expected(loaded, ev, cutoff=5)
    assert len(table) == len(want) > 20
    assert table["session_id"].astype(str).tolist() == want["session_id"].tolist()
    assert table["from_pos"].tolist() == want["from_pos"].tolist()
    for col in ("terms_added", "terms_removed", "terms_kept"):
        got = [set(str(x).split()) for x in table[col]]
        assert got == want[col].tolist(), col
    for col in ("term_jaccard", "result_jaccard", "delta_dcg", "delta_sdcg", "seconds"):
        np.testing.assert_allclose(
            table[col].to_numpy(float), want[col].to_numpy(float), err_msg=col
        )
    for col in ("new_docs", "new_relevant"):
        assert table[col].astype(int).tolist() == want[col].tolist(), col
    assert table["new_relevant"].sum() > 0 and (table["result_jaccard"] < 1).any()


def _flat(texts, docs, times=None):
    rows = []
    for pos, (text, ranked) in enumerate(zip(texts, docs, strict=True), start=1):
        for rank, d in enumerate(ranked, start=1):
            row = {"session_id": "s1", "user_id": "u1", "topic_id": "t", "system_id": "A",
                   "query_pos": pos, "rank": rank, "doc_id": d, "query_text": text}  # fmt: skip
            if times is not None:
                row["query_time"] = times[pos - 1]
            rows.append(row)
    return frame_from_flat(pd.DataFrame(rows)).frame


def test_small_session_by_hand():
    frame = _flat(
        ["ipod nano", "ipod nano", "nano ipod shuffle"],
        [["d1", "d2", "d9"], ["d2", "d1", "d3"], ["d3", "d4", "d4b"]],
        times=["2024-01-01T10:00:00Z", "2024-01-01T10:00:30Z", "2024-01-01T10:02:00Z"],
    )
    qrels = judgments([("t", "d3", 1), ("t", "d4", 2), ("t", "d9", 3), ("t", "d1", 0)])
    table = reformulations(evaluate(frame, qrels, SessionConfig(cutoff=2)), qrels)
    assert table["type"].astype(str).tolist() == ["same", "add_words"]
    assert table["terms_added"].tolist() == ["", "shuffle"]
    # top 2: {d1,d2} -> {d2,d1} -> {d3,d4}; d9 at rank 3 lies beyond X
    assert table["result_jaccard"].tolist() == [1.0, 0.0]
    assert table["new_docs"].tolist() == [0, 2]
    assert table["new_relevant"].tolist() == [0, 2]
    assert table["seconds"].tolist() == [30.0, 90.0]


def test_without_judgments_or_times_the_columns_are_missing_not_zero():
    frame = _flat(["a b", "a c"], [["d1"], ["d2"]])
    qrels = judgments([("t", "d2", 3)])
    table = reformulations(evaluate(frame, qrels, SessionConfig()))
    assert table["new_relevant"].isna().all() and table["seconds"].isna().all()
    assert table["new_docs"].tolist() == [1]


def test_one_query_sessions_have_no_pair():
    frame = _flat(["only"], [["d1"]])
    qrels = judgments([("t", "d1", 1)])
    table = reformulations(evaluate(frame, qrels, SessionConfig()), qrels)
    assert table.empty and list(table.columns)[:18] == list(REFORMULATION_COLUMNS)


def test_only_the_previous_query_overlaps_and_a_document_is_new_once_per_session():
    # d2 comes back two queries later: in no overlap, and new to neither pair
    frame = _flat(["a", "a b", "a b c"], [["d1", "d2"], ["d3", "d1"], ["d2", "d3"]])
    qrels = judgments([("t", "d3", 2), ("t", "d2", 1)])
    table = reformulations(evaluate(frame, qrels, SessionConfig(cutoff=3)), qrels)
    assert table["result_jaccard"].tolist() == pytest.approx([1 / 3, 1 / 3])
    assert table["new_docs"].tolist() == [1, 0]
    assert table["new_relevant"].tolist() == [1, 0]


def test_judged_topics_by_category_are_the_texts_answer():
    # a categorical topic column is probed once per category (as text), its codes take
    # the answer; missing topics and unused categories are not judged
    from sessionval.analysis.reformulations import _judged

    ids = pd.Series(["1", "2", None, "3", "1"], dtype=object)
    topics = pd.Series([1, 3, 9])
    want = ids.astype(str).isin(topics.astype(str)).to_numpy()
    coded = ids.astype(pd.CategoricalDtype(["3", "2", "1", "7"]))
    np.testing.assert_array_equal(_judged(coded, topics), want)
    np.testing.assert_array_equal(_judged(ids, topics), want)
    assert want.tolist() == [True, False, False, True, True]

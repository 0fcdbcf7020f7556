"""Properties of the session measures on random studies (Hypothesis)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from sessionval.evaluation.config import SessionConfig
from sessionval.evaluation.session import evaluate
from sessionval.frame import JudgmentFrame
from sessionval.validate.flat import frame_from_flat
from tests import builders
from tests.builders import judgments

DOCS = [f"d{i}" for i in range(10)]


def _judgments(qrels: dict[str, int]) -> JudgmentFrame:
    return judgments([("T", d, g) for d, g in qrels.items()] or [("T", "zz", 0)])


def flat(sessions: list[list[list[str]]], order: list[int] | None = None) -> pd.DataFrame:
    """Session ``k`` by searcher ``u<k % 3>`` on system ``S<k % 2>``, in ``order``."""
    return builders.flat_table(
        [
            (f"s{k}", f"u{k % 3}", "T", f"S{k % 2}", sessions[k])
            for k in order or range(len(sessions))
        ]
    )


lists = st.lists(st.lists(st.sampled_from(DOCS), max_size=8, unique=True), min_size=1, max_size=5)
study = st.lists(lists, min_size=1, max_size=12)
qrels_st = st.dictionaries(st.sampled_from(DOCS), st.integers(0, 3), max_size=8)
options = st.fixed_dictionaries(
    {
        "cutoff": st.integers(1, 6),
        "bq": st.sampled_from([1.5, 4.0, 10.0]),
        "discount": st.sampled_from(["jk2008", "jk2002", "log2p1", "none"]),
        "short_lists": st.sampled_from(["pad", "none", "min:3"]),
        "duplicates": st.sampled_from(["every", "first", "drop"]),
    }
)


@settings(deadline=None, max_examples=40)
@given(qrels_st, st.lists(st.integers(1, 5), min_size=1, max_size=8), options)
def test_ideal_sessions_score_one_everywhere(
    qrels: dict[str, int], n_queries: list[int], opts: dict
) -> None:
    # every query returns the ideal ranking (then non-relevant documents)
    ideal_list = sorted((d for d, g in qrels.items() if g > 0), key=lambda d: -qrels[d])
    rest = [d for d in DOCS if d not in ideal_list]
    sessions = [[ideal_list + rest[:2]] * n for n in n_queries]
    opts = {**opts, "duplicates": "every", "short_lists": "pad"}
    ev = evaluate(frame_from_flat(flat(sessions)).frame, _judgments(qrels), SessionConfig(**opts))
    pos = ev.per_position()
    defined = pos["ideal"] > 0
    np.testing.assert_allclose(pos.loc[defined, "nsdcg"], 1.0, rtol=1e-12)
    assert pos.loc[~defined, "nsdcg"].isna().all()


@settings(deadline=None, max_examples=40)
@given(study, qrels_st, options)
def test_padding_never_adds_gain(sessions: list, qrels: dict[str, int], opts: dict) -> None:
    frame = frame_from_flat(flat(sessions)).frame
    j = _judgments(qrels)
    finals = []
    for short in ("pad", "none", "min:3"):
        ev = evaluate(frame, j, SessionConfig(**{**opts, "short_lists": short}))
        pos = ev.per_position()
        assert (pos.loc[pos["doc_rank"].isna(), "gain"] == 0).all()
        finals.append(ev.per_session()["sdcg"].to_numpy())
    # padded positions carry no gain and slot ranks do not move: same final sDCG
    np.testing.assert_allclose(finals[0], finals[1], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(finals[0], finals[2], rtol=1e-12, atol=1e-12)


@settings(deadline=None, max_examples=40)
@given(study, qrels_st, options)
def test_first_never_exceeds_every(sessions: list, qrels: dict[str, int], opts: dict) -> None:
    frame = frame_from_flat(flat(sessions)).frame
    j = _judgments(qrels)
    every = evaluate(frame, j, SessionConfig(**{**opts, "duplicates": "every"}))
    first = evaluate(frame, j, SessionConfig(**{**opts, "duplicates": "first"}))
    assert (first.positions().sdcg <= every.positions().sdcg + 1e-9).all()
    assert (first.per_session()["sdcg"] <= every.per_session()["sdcg"] + 1e-9).all()


@settings(deadline=None, max_examples=40)
@given(study, qrels_st, options, st.randoms(use_true_random=False))
def test_session_order_changes_nothing(
    sessions: list, qrels: dict[str, int], opts: dict, rnd
) -> None:
    order = list(range(len(sessions)))
    rnd.shuffle(order)
    j = _judgments(qrels)
    cfg = SessionConfig(**opts)
    a = evaluate(frame_from_flat(flat(sessions)).frame, j, cfg).per_session()
    b = evaluate(frame_from_flat(flat(sessions, order)).frame, j, cfg).per_session()
    a = a.assign(session_id=a["session_id"].astype(str)).set_index("session_id").sort_index()
    b = b.assign(session_id=b["session_id"].astype(str)).set_index("session_id").sort_index()
    for c in ("user_id", "topic_id", "system_id"):
        a[c] = a[c].astype(str)
        b[c] = b[c].astype(str)
    pd.testing.assert_frame_equal(a, b, check_exact=False, rtol=1e-12)


@settings(deadline=None, max_examples=40)
@given(study, qrels_st, options)
def test_query_discount_and_vectors_monotone(
    sessions: list, qrels: dict[str, int], opts: dict
) -> None:
    ev = evaluate(frame_from_flat(flat(sessions)).frame, _judgments(qrels), SessionConfig(**opts))
    q = ev.per_query()
    # query discount never increases along a session; equals 1 for the first query
    assert (q.loc[q["query_pos"] == 1, "qd"] == 1).all()
    # with non-negative gains the session vector never decreases inside a session
    pos = ev.per_position()
    d = pos.groupby("session_id", observed=True)["sdcg"].diff().dropna()
    assert (d >= -1e-12).all()

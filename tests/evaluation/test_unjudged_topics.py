"""A session whose topic has no judgments has no score (NaN), not 0 (issue 23, item 5)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from sessionval.evaluation.session import evaluate
from sessionval.validate.flat import frame_from_flat
from sessionval.validate.judgments import judgments_from_records


def _study():
    flat = pd.DataFrame(
        {
            "session_id": ["s1", "s1", "s2", "s2", "s3"],
            "user_id": "u",
            "topic_id": ["A", "A", "B", "B", "A"],
            "system_id": "S",
            "query_pos": [1, 2, 1, 2, 1],
            "rank": 1,
            "doc_id": ["a", "b", "a", "b", "c"],
        }
    )
    frame = frame_from_flat(flat).frame
    return frame, judgments_from_records([("A", "a", 1), ("A", "b", 2)])


def test_a_session_on_an_unjudged_topic_has_no_score():
    frame, qrels = _study()
    ev = evaluate(frame, qrels, measures=["sDCG@10", "last(RR)", "RR"])
    ps = ev.per_session().set_index("session_id")
    # before: s2 (topic B, no judgments) had sdcg 0, averaged in as a failure
    for col in ("sdcg", "ideal", "nsdcg", "avg_pos_sdcg", "sdcg_per_query", "last_sdcg"):
        assert np.isnan(ps.loc["s2", col]), col
    assert np.isnan(ps.loc["s2", "sDCG@10"]) and np.isnan(ps.loc["s2", "last(RR)"])
    assert pd.isna(ps.loc["s2", "n_relevant_found"])
    # counts that need no judgments keep their values; judged sessions keep their scores
    assert ps.loc["s2", "n_queries"] == 2 and ps.loc["s2", "n_positions"] > 0
    assert ps.loc["s1", "sdcg"] > 0 and ps.loc["s1", "n_relevant_found"] == 2
    assert ps.loc["s3", "sdcg"] == 0 and ps.loc["s3", "nsdcg"] == 0  # judged, nothing found
    pq = ev.per_query()
    b = pq[pq["topic_id"] == "B"]
    assert b[["dcg", "ideal_dcg", "RR"]].isna().all().all()
    assert (b["n_available"] == 1).all()
    # the means are over the judged sessions only, the same for sDCG and nsDCG
    assert ps["sdcg"].notna().sum() == ps["nsdcg"].notna().sum() == 2
    assert ev.n_empty_ideal == 0  # an unjudged session's ideal is missing, not empty


def test_positions_and_curves_leave_unjudged_sessions_out():
    from sessionval.analysis.curves import session_curves

    frame, qrels = _study()
    ev = evaluate(frame, qrels)
    pp = ev.per_position()
    assert pp.loc[pp["session_id"] == "s2", ["sdcg", "ideal", "nsdcg"]].isna().all().all()
    assert pp.loc[pp["session_id"] != "s2", "sdcg"].notna().all()
    # the curve's first point averages the two judged sessions, not s2 as 0
    c = session_curves(ev)
    first = c[(c["position"] == 1) & (c["measure"] == "sdcg")].iloc[0]
    assert first["n_sessions"] == 2
    want = pp[(pp["position"] == 1) & (pp["session_id"] != "s2")]["sdcg"].mean()
    assert first["value"] == want

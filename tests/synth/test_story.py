"""The generated study tells the story of Järvelin et al. (2008), sections 3.2-3.3."""

from __future__ import annotations

import numpy as np
import pytest

from sessionval.synth import generate_study

GAIN = {0: 0.0, 1: 1.0, 2: 10.0, 3: 100.0}  # the paper's 0-1-10-100 weighting


def _queries(study, *, cutoff=10):
    """Per query: DCG@cutoff (jk2008 discount, b=2) from the reference judgments."""
    df = study.flat.to_pandas()
    for c in ("session_id", "topic_id", "system_id", "doc_id"):
        df[c] = df[c].astype(object)
    j = study.judgments.astype({"topic_id": object, "doc_id": object})
    df = df.merge(j[["topic_id", "doc_id", "grade"]], on=["topic_id", "doc_id"], how="left")
    rank = df["rank"].fillna(1).to_numpy(dtype=float)
    gain = df["grade"].map(GAIN).fillna(0.0).to_numpy(dtype=float)
    df["dg"] = np.where(df["rank"].fillna(cutoff + 1) <= cutoff, gain / (1 + np.log2(rank)), 0.0)
    q = (
        df.groupby(["session_id", "query_pos"], sort=False)
        .agg(
            dcg=("dg", "sum"),
            system=("system_id", "first"),
            topic=("topic_id", "first"),
            n=("rank", "count"),
            judged=("grade", "count"),
            unjudged=("grade", lambda g: g.isna().sum()),
        )
        .reset_index()
    )
    q["n_queries"] = q.groupby("session_id")["query_pos"].transform("max")
    q["last"] = q["query_pos"] == q["n_queries"]
    ideal = {}
    for t, g in j.groupby("topic_id"):
        top = np.sort(g["grade"].map(GAIN).to_numpy())[::-1][:cutoff]
        ideal[t] = float((top / (1 + np.log2(np.arange(1, len(top) + 1)))).sum())
    q["ideal"] = q["topic"].map(ideal)
    return df, q


@pytest.fixture(scope="module")
def sample(sample_study):
    return _queries(sample_study)


def test_last_queries_far_better_than_earlier_ones(sample):
    _, q = sample
    multi = q[q["n_queries"] > 1]
    first = multi[multi["query_pos"] == 1]["dcg"].mean()
    last = multi[multi["last"]]["dcg"].mean()
    non_last = q[~q["last"]]["dcg"].mean()
    assert last > 3 * first
    assert q[q["last"]]["dcg"].mean() > 3 * non_last
    for system in ("S1", "S2"):
        s = q[q["system"] == system]
        assert s[s["last"]]["dcg"].mean() > 3 * s[~s["last"]]["dcg"].mean()


def test_system2_somewhat_better(sample):
    _, q = sample
    last = q[q["last"]].groupby("system")["dcg"].mean()
    assert last["S2"] > last["S1"]
    # normalised session DCG over concatenated top-10s (bq = 4), as in Figure 2
    q = q.assign(qd=1 / (1 + np.log(q["query_pos"]) / np.log(4)))
    per = (
        q.assign(s=q["dcg"] * q["qd"], i=q["ideal"] * q["qd"])
        .groupby("session_id")
        .agg(s=("s", "sum"), i=("i", "sum"), system=("system", "first"))
    )
    nsdcg = (per["s"] / per["i"]).groupby(per["system"]).mean()
    assert nsdcg["S2"] > nsdcg["S1"]
    assert nsdcg["S2"] - nsdcg["S1"] < 0.2  # somewhat, not overwhelmingly


def test_ranked_lists_are_realistic(sample):
    df, q = sample
    assert q["n"].max() == 100
    assert (q["n"] == 0).any() and ((q["n"] > 0) & (q["n"] < 10)).any()
    assert (q["n"] == 100).mean() > 0.5
    results = df[df["rank"].notna()]
    # unjudged documents are retrieved, and most judged ones are judged not relevant
    assert results["grade"].isna().mean() > 0.5
    assert (results["grade"] == 0).sum() > (results["grade"] > 0).sum()
    # documents recur across the queries of a session
    recurring = results.duplicated(["session_id", "doc_id"])
    assert 0.02 < recurring.mean() < 0.5
    multi = q[q["n_queries"] > 1]["session_id"].unique()
    with_repeats = results[recurring]["session_id"].unique()
    assert len(set(with_repeats) & set(multi)) > 0.5 * len(multi)


def test_searchers_view_and_judge(sample):
    df, _ = sample
    clicked = df[df["clicks"] > 0]
    assert len(clicked) > 200
    assert clicked["dwell"].notna().all() and (clicked["dwell"] > 0).all()
    assert df.loc[df["clicks"] == 0, "user_grade"].isna().all()
    own = clicked.dropna(subset=["user_grade", "grade"])
    # own judgments agree with the assessor more often than not, yet not always
    agree = (own["user_grade"] == own["grade"]).mean()
    assert 0.3 < agree < 0.95
    # clicks concentrate at the top of the lists
    assert (clicked["rank"] <= 10).mean() > 0.8


def test_satisfaction_follows_success(sample_study):
    df, q = _queries(sample_study)
    sessions = df.drop_duplicates("session_id").set_index("session_id")
    last = q[q["last"]].set_index("session_id")["dcg"]
    sat = sessions["rating_satisfaction"].reindex(last.index)
    assert last[sat >= 4].mean() > last[sat <= 2].mean()
    durations = (sessions["session_end"] - sessions["session_start"]).dt.total_seconds()
    assert 60 < durations.median() < 900  # "a short time frame of several minutes"


def test_story_holds_in_a_larger_study():
    study = generate_study(n_sessions=2000, seed=11, jsonl=False)
    _, q = _queries(study)
    last = q[q["last"]].groupby("system")["dcg"].mean()
    non_last = q[~q["last"]].groupby("system")["dcg"].mean()
    assert (last > 3 * non_last).all()
    assert last["S2"] > 1.1 * last["S1"]


def test_every_document_a_searcher_found_relevant_was_judged(sample):
    # the paper's procedure: all documents judged relevant by at least one searcher were
    # judged by the independent assessor
    df, _ = sample
    found = df[df["user_grade"] > 0]
    assert len(found) > 100
    assert found["grade"].notna().all()

"""Drawing the sessions: chunk invariants, the segment kernels it uses, and the story.

The generated study tells the story of Järvelin et al. (2008), sections 3.2-3.3.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from sessionval.kernels.segments import offsets_from_counts, segment_cumsum_int, segment_ranks
from sessionval.synth import generate_study
from sessionval.synth.design import design_study
from sessionval.synth.simulate import CHUNK_SESSIONS, _run_position, n_chunks, simulate_chunk

# --------------------------------------------------------------------------- the story

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


# --------------------------------------------------------------------------- chunks


@pytest.fixture(scope="module")
def chunk():
    return simulate_chunk(design_study(400, 5), 0)


def test_chunk_rows_are_the_flat_layout(chunk):
    c = chunk
    q_rows = np.maximum(c.q_n, 1)
    r_off = offsets_from_counts(q_rows)
    # rows: ranks 1..k per query, one placeholder row per query without results
    assert np.array_equal(np.diff(r_off), np.bincount(c.r_query, minlength=len(c.q_n)))
    assert np.array_equal(c.r_rank, segment_ranks(r_off))
    assert np.array_equal(c.r_real, np.repeat(c.q_n > 0, q_rows))
    assert ((c.q_n >= 0) & (c.q_n <= 100)).all()
    # queries: positions 1..n per session, times inside the session, in order
    q_off = offsets_from_counts(c.n_queries)
    assert np.array_equal(c.q_pos, segment_ranks(q_off))
    assert np.array_equal(c.q_session, np.repeat(np.arange(len(c.user)), c.n_queries))
    s = c.q_session
    assert ((c.start[s] <= c.q_time) & (c.q_time <= c.end[s])).all()
    assert (np.diff(c.q_time)[np.diff(s) == 0] > 0).all()
    # sessions of a searcher follow one another
    same_user = np.diff(c.user) == 0
    assert (c.start[1:][same_user] > c.end[:-1][same_user]).all()
    # behaviour: clicks only where scanned, dwell exactly on the clicked rows
    assert ((c.r_clicks > 0) == ~np.isnan(c.r_dwell)).all()
    assert (c.r_rank[c.r_clicks > 0] <= c.q_scan[c.r_query[c.r_clicks > 0]]).all()
    assert (c.r_user_grade[c.r_clicks == 0] == -1).all()


def test_no_document_repeats_within_a_list(chunk):
    c = chunk
    real = np.flatnonzero(c.r_real)
    key = c.r_query[real].astype(np.int64) * 100_000 + c.r_doc[real]
    assert len(np.unique(key)) == len(key)


def test_a_chunk_depends_only_on_the_design_and_its_number():
    d = design_study(CHUNK_SESSIONS + 8, 3)
    assert n_chunks(d.n_sessions) == 2
    alone = simulate_chunk(d, 1)  # drawn without drawing chunk 0 first
    simulate_chunk(d, 0)
    again = simulate_chunk(d, 1)
    assert alone.first_session == CHUNK_SESSIONS and len(alone.user) == 8
    for name in ("start", "q_time", "r_rank", "r_doc", "r_clicks", "r_user_grade"):
        assert np.array_equal(getattr(alone, name), getattr(again, name)), name


# --------------------------------------------------------------------------- segment kernels
# The generator's private segment helpers were merged into kernels.segments; these
# reference implementations are the helpers as they were, and the kernels must agree
# bit for bit (the sample_logs/ bytes depend on it).


def _old_starts(lengths):
    out = np.zeros(len(lengths), dtype=np.int64)
    if len(lengths) > 1:
        np.cumsum(lengths[:-1], out=out[1:])
    return out


def _old_segment_arange(lengths):
    return np.arange(int(lengths.sum()), dtype=np.int64) - np.repeat(_old_starts(lengths), lengths)


def _old_segment_cumsum(values, lengths):
    cs = np.cumsum(values, axis=0)
    starts = _old_starts(lengths)
    return cs - np.repeat(cs[starts] - values[starts], lengths, axis=0)


def _old_run_position(key):
    order = np.argsort(key, kind="stable")
    ks = key[order]
    new = np.ones(len(ks), dtype=bool)
    new[1:] = ks[1:] != ks[:-1]
    first = np.flatnonzero(new)
    pos = np.arange(len(ks), dtype=np.int64) - np.repeat(first, np.diff(np.append(first, len(ks))))
    out = np.empty_like(pos)
    out[order] = pos
    return out


lengths_st = hnp.arrays(np.int64, st.integers(1, 30), elements=st.integers(1, 12))


@settings(deadline=None, max_examples=60)
@given(lengths=lengths_st, width=st.integers(0, 5), seed=st.integers(0, 2**32 - 1))
def test_library_segment_kernels_agree_with_the_old_helpers(lengths, width, seed):
    rng = np.random.default_rng(seed)
    shape = (int(lengths.sum()),) if width == 0 else (int(lengths.sum()), width)
    values = rng.integers(-(10**12), 10**12, shape)
    offsets = offsets_from_counts(lengths)
    assert np.array_equal(offsets[:-1], _old_starts(lengths))
    assert np.array_equal(segment_ranks(offsets) - 1, _old_segment_arange(lengths))
    got = segment_cumsum_int(values, offsets)
    assert got.dtype == np.int64
    assert np.array_equal(got, _old_segment_cumsum(values, lengths))
    key = rng.integers(0, 7, len(values))
    assert np.array_equal(_run_position(key), _old_run_position(key))


def test_run_position_counts_earlier_equal_keys():
    key = np.array([5, 3, 5, 5, 3, 9])
    assert _run_position(key).tolist() == [0, 0, 1, 2, 1, 0]
    assert _run_position(np.array([], dtype=np.int64)).tolist() == []

"""Drawing the sessions of a designed study: queries, ranked lists, behaviour, time.

Everything is NumPy array code driven by one local ``np.random.Generator`` per
chunk of whole searchers' sessions (:func:`simulate_chunk`), so a million sessions
(about 200 million result rows) are drawn chunk by chunk in bounded memory.  The
same ``(n_sessions, seed)`` always gives the same study.

It tells the story of Järvelin et al. (2008), sections 3.2–3.3: early queries are
weak, the last query of a session is far better (searchers stop when satisfied,
some give up), and System 2 is somewhat better on average.  The generative model is
described in :func:`sessionval.synth.generate_study`.

References
----------
Järvelin et al. (2008), ECIR, doi:10.1007/978-3-540-78646-7_4 (``jarvelin2008``).

Examples
--------
>>> from sessionval.synth.design import design_study
>>> c = simulate_chunk(design_study(8, 1), 0)
>>> c.n_queries.tolist(), c.q_pos[:7].tolist()
([2, 1, 4, 2, 1, 3, 1, 3], [1, 2, 1, 1, 2, 3, 4])
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

from .._types import BoolArray, FloatArray, IntArray
from ..errors import SessionvalError
from ..kernels.segments import offsets_from_counts, segment_cumsum_int, segment_ranks
from .design import N_CAT, SCENARIOS, Design, seeded_rng

__all__ = [
    "CHUNK_SESSIONS",
    "Chunk",
    "check_chunks",
    "n_chunks",
    "simulate_chunk",
]

#: Sessions per generated chunk (a multiple of 4 so a searcher's sessions stay together).
#: Part of the random stream: changing it changes every study.
CHUNK_SESSIONS: Final = 32_768

_Q_LEVELS: Final = 64  # query quality is quantised for the category table
_U_LEVELS: Final = 256  # and so is the per-row uniform draw
_MAX_RANK: Final = 100
_GOLDEN32: Final = np.uint32(2_654_435_769)  # 2**32 / golden ratio


@functools.cache
def _category_table() -> npt.NDArray[np.uint8]:
    """Category of a result by (quality level, rank, uniform level), flattened.

    A query of quality ``q`` puts a relevant document at rank ``i`` with probability
    ``0.85 q exp(-(i-1)/(6 + 14 q)) + 0.004`` (good queries are good deep down, weak ones
    find a relevant document by chance), graded 3 with share ``0.15 + 0.35 q`` and 2 with
    share 0.35; a judged non-relevant document (one some searcher thought relevant) with
    probability ``0.22 exp(-(i-1)/25) + 0.03``; otherwise an unjudged one.
    """
    q = (np.arange(_Q_LEVELS) + 0.5)[:, None, None] / _Q_LEVELS
    r0 = np.arange(_MAX_RANK, dtype=np.float64)[None, :, None]
    u = (np.arange(_U_LEVELS) + 0.5)[None, None, :] / _U_LEVELS
    p_rel = 0.85 * q * np.exp(-r0 / (6.0 + 14.0 * q)) + 0.004
    p3 = p_rel * (0.15 + 0.35 * q)
    p32 = p3 + p_rel * 0.35
    p_zero = 0.22 * np.exp(-r0 / 25.0) + 0.03
    cat = (u < p_rel + p_zero).astype(np.uint8) + (u < p_rel) + (u < p32) + (u < p3)
    return cat.astype(np.uint8).ravel()


@dataclass(frozen=True)
class Chunk:
    """One chunk of whole searchers' sessions as arrays (chunk-local indices).

    Result arrays hold one row per result *and* one placeholder row per query without
    results (``r_real`` false), i.e. exactly the rows of the flat table.
    """

    first_session: int
    # sessions
    user: IntArray
    topic: IntArray
    system: IntArray
    start: IntArray  # seconds since the epoch
    end: IntArray
    satisfaction: FloatArray
    difficulty: FloatArray
    n_queries: IntArray
    # queries
    q_session: npt.NDArray[np.int32]
    q_pos: IntArray
    q_text: IntArray  # code into design.query_texts()
    q_time: IntArray
    q_scan: IntArray
    q_n: IntArray
    # rows (sorted by query, rank)
    r_query: npt.NDArray[np.int32]
    r_real: BoolArray
    r_rank: npt.NDArray[np.int32]
    r_doc: npt.NDArray[np.int32]  # collection code
    r_clicks: npt.NDArray[np.int16]
    r_dwell: npt.NDArray[np.float32]  # NaN when not clicked
    r_user_grade: npt.NDArray[np.int16]  # -1 when none


def n_chunks(n_sessions: int) -> int:
    """Number of chunks of :data:`CHUNK_SESSIONS` sessions a study of this size is drawn in."""
    return -(-n_sessions // CHUNK_SESSIONS)


def check_chunks(d: Design) -> None:
    """Raise :class:`SessionvalError` when a searcher's sessions would straddle two chunks.

    A chunk times its searchers' sessions one after the other from the searcher's start,
    so a searcher continued in the next chunk would start again.  The paper's layout (4
    sessions per searcher) never straddles; other assignments must keep each searcher in
    one chunk of :data:`CHUNK_SESSIONS` sessions.
    """
    cuts = np.arange(CHUNK_SESSIONS, d.n_sessions, CHUNK_SESSIONS)
    if (d.session_user[cuts] == d.session_user[cuts - 1]).any():
        raise SessionvalError(
            f"synth: with this assignment a searcher's sessions would straddle the generator's "
            f"chunks of {CHUNK_SESSIONS:,} sessions; give sessions_per_searcher dividing "
            f"{CHUNK_SESSIONS:,} (by_topic: at most {CHUNK_SESSIONS:,} sessions in all)"
        )


def _run_position(key: IntArray) -> IntArray:
    """For each element, how many earlier elements share its key (keys need not be sorted).

    Kept here rather than in :mod:`sessionval.kernels.segments`: it is a grouping of
    unsorted keys (a stable sort, then segment ranks over the runs of equal keys), which
    only the generator needs.
    """
    order = np.argsort(key, kind="stable")
    ks = key[order]
    new = np.ones(len(ks), dtype=bool)
    new[1:] = ks[1:] != ks[:-1]
    runs = np.append(np.flatnonzero(new), len(ks))
    out = np.empty(len(ks), dtype=np.int64)
    out[order] = segment_ranks(runs) - 1
    return out


def simulate_chunk(d: Design, k: int) -> Chunk:
    """Draw chunk ``k`` of the study: its sessions' queries, ranked lists, behaviour and times.

    Chunk ``k`` holds sessions ``k * CHUNK_SESSIONS`` up to the next chunk and draws from
    its own random stream, so chunks can be drawn in any order and give the same study.
    """
    rng = seeded_rng(d.seed, 1, k)
    s0 = k * CHUNK_SESSIONS
    s1 = min(d.n_sessions, s0 + CHUNK_SESSIONS)
    ns = s1 - s0
    user = d.session_user[s0:s1]
    topic = d.session_topic[s0:s1]
    system = d.session_system[s0:s1]
    fail = d.session_fail[s0:s1]
    nq = d.n_queries[s0:s1]
    skill = d.user_attrs["skill"][user].astype(np.float64)
    tdiff = np.array([sc.difficulty for sc in SCENARIOS])[topic]

    # ---- queries: quality rises at the last query (unless the searcher gave up)
    q_offsets = offsets_from_counts(nq)
    q_session = np.repeat(np.arange(ns, dtype=np.int32), nq)
    q_pos = segment_ranks(q_offsets)
    n_q = len(q_session)
    # the system's strength: 0 and 1 for the paper's two systems, k / (K - 1) for K
    q_sys = d.system_strength[system[q_session]]
    last = q_pos == nq[q_session]
    good_last = last & ~fail[q_session]
    weak = rng.beta(1.3, 7.0, n_q) + 0.02 * np.minimum(q_pos - 1, 5)
    strong = rng.beta(10.0, 3.7, n_q)
    quality = np.where(good_last, strong, weak)
    quality += np.where(good_last, 0.16, 0.12) * q_sys
    quality += 0.03 * (skill[q_session] - 2.4) - 0.05 * tdiff[q_session]
    quality = np.clip(quality, 0.01, 0.97)

    # ---- list lengths: empty, short, medium or a full top-100
    u = rng.random(n_q)
    p_empty = np.where(good_last, 0.0, 0.10 - 0.03 * q_sys)
    p_short = p_empty + np.where(last, 0.07, 0.14)
    p_medium = p_short + 0.14
    short_n = rng.integers(1, 10, n_q)
    medium_n = rng.integers(10, _MAX_RANK, n_q)
    q_n = np.where(
        u < p_empty, 0, np.where(u < p_short, short_n, np.where(u < p_medium, medium_n, _MAX_RANK))
    ).astype(np.int64)

    # ---- rows: the results plus one placeholder row per empty query
    q_rows = np.maximum(q_n, 1)
    r_offsets = offsets_from_counts(q_rows)
    q_first = r_offsets[:-1]
    nr = int(r_offsets[-1])
    r_query = np.repeat(np.arange(n_q, dtype=np.int32), q_rows)
    r_rank = segment_ranks(r_offsets).astype(np.int32)
    r_real = np.repeat(q_n > 0, q_rows)

    # a category per row from the table, with a low-discrepancy draw down each list
    # (random start, golden-ratio steps): the number of relevant documents per list stays
    # close to its expectation, so the story already shows at 120 sessions
    q_level = np.minimum((quality * _Q_LEVELS).astype(np.int32), _Q_LEVELS - 1)
    q_base = q_level * (_MAX_RANK * _U_LEVELS) - _U_LEVELS
    phase = rng.integers(0, 1 << 32, n_q, dtype=np.uint32)
    u8 = (
        (np.repeat(phase, q_rows) + r_rank.astype(np.uint32) * _GOLDEN32) >> np.uint32(24)
    ).astype(np.int32)
    cat = _category_table()[np.repeat(q_base, q_rows) + r_rank * _U_LEVELS + u8]
    del u8
    cat[~r_real] = 0

    # a distinct document per row: the j-th document of a (query, category) is the j-th
    # step of the session's walk through the scenario's pool of that category
    q_topic = topic[q_session]
    pool_size = d.pools.size[q_topic].astype(np.int32)  # (n_q, N_CAT)
    judged = np.flatnonzero(cat)
    j_judged = _run_position(r_query[judged].astype(np.int64) * N_CAT + cat[judged])
    over = j_judged >= pool_size[r_query[judged], cat[judged]]
    cat[judged[over]] = 0  # pool exhausted: the system returns some other document
    judged, j_judged = judged[~over], j_judged[~over].astype(np.int32)
    is_judged = (cat > 0).astype(np.int32)
    # rank among the query's unjudged rows: rank - 1 minus the judged rows above.  A
    # segment cumsum kept inline in int32: the library's kernels give float64 or int64,
    # which at ~7M rows a chunk raises the chunk's peak memory by half (246 -> 362 MB)
    excl = np.cumsum(is_judged, dtype=np.int32) - is_judged
    j = r_rank - 1 - (excl - np.repeat(excl[q_first], q_rows))
    del excl, is_judged

    # each session walks its pools from its own offset with its own stride; later queries
    # drift a little, so documents recur across the queries of a session
    sess_off = rng.integers(0, 1 << 30, (ns, N_CAT))
    sess_stride = rng.integers(0, 8, (ns, N_CAT))
    drift = np.where(
        np.arange(N_CAT) == 0,
        rng.integers(0, 40, (n_q, N_CAT)),
        rng.integers(0, 3, (n_q, N_CAT)),
    )
    drift[q_pos == 1] = 0
    cols = np.arange(N_CAT)
    q_offset = ((sess_off[q_session] + segment_cumsum_int(drift, q_offsets)) % pool_size).astype(
        np.int32
    )
    q_stride = d.pools.strides[q_topic[:, None], cols, sess_stride[q_session]].astype(np.int32)
    q_pool = d.pools.base[q_topic].astype(np.int32)
    # every row as if unjudged (per-query values spread with np.repeat, which is cheap) ...
    slot = np.repeat(q_offset[:, 0], q_rows) + np.repeat(q_stride[:, 0], q_rows) * j
    slot %= np.repeat(pool_size[:, 0], q_rows)
    slot += np.repeat(q_pool[:, 0], q_rows)
    # ... then the judged rows from their own pools
    qc = r_query[judged].astype(np.int64) * N_CAT + cat[judged]
    slot[judged] = q_pool.ravel()[qc] + (
        (q_offset.ravel()[qc] + q_stride.ravel()[qc] * j_judged) % pool_size.ravel()[qc]
    )
    r_doc = d.pools.docs32[slot]
    del qc, slot, j

    # ---- the searcher scans the top, clicks, reads and judges
    q_scan = np.minimum(q_n, 1 + rng.geometric(np.where(last, 0.12, 0.2)))
    # a satisfied searcher stops because the last query showed a fairly or highly relevant
    # document near the top: they scan down to it and open it
    good_rows = np.flatnonzero((cat >= 3) & (r_rank <= 20) & np.repeat(good_last, q_rows))
    if len(good_rows):
        first = np.ones(len(good_rows), dtype=bool)
        first[1:] = r_query[good_rows][1:] != r_query[good_rows][:-1]
        found = good_rows[first]
        q_scan[r_query[found]] = np.maximum(q_scan[r_query[found]], r_rank[found])
    else:
        found = good_rows
    forced = np.zeros(nr, dtype=bool)
    forced[found] = True
    seen = np.flatnonzero(r_rank <= np.repeat(q_scan.astype(np.int32), q_rows))
    c_seen = cat[seen].astype(np.int64)
    p_click = np.array([0.06, 0.22, 0.40, 0.55, 0.70])[c_seen] / (1.0 + 0.08 * (r_rank[seen] - 1))
    hit = (rng.random(len(seen)) < p_click) | forced[seen]
    ci = seen[hit]
    c_cat = c_seen[hit]
    n_c = len(ci)
    r_clicks = np.zeros(nr, dtype=np.int16)
    r_clicks[ci] = 1 + (rng.random(n_c) < 0.12)
    grade_c = np.maximum(c_cat - 1, 0)
    dwell = np.maximum(np.round(rng.lognormal(np.log(14.0 + 10.0 * grade_c), 0.6), 1), 1.0)
    r_dwell = np.full(nr, np.nan, dtype=np.float32)
    r_dwell[ci] = dwell
    # own judgment: close to the assessor's grade for judged documents; unjudged ones were
    # judged not relevant (had a searcher found one relevant, the assessor would have judged it)
    noise = rng.choice(np.array([-1, 0, 1]), n_c, p=[0.2, 0.6, 0.2])
    own = np.where(c_cat >= 2, np.clip(grade_c + noise, 0, 3), 0)
    own = np.where(c_cat == 1, rng.choice(np.array([0, 1, 2]), n_c, p=[0.4, 0.4, 0.2]), own)
    own[rng.random(n_c) < 0.04] = -1  # forgot to judge
    r_user_grade = np.full(nr, -1, dtype=np.int16)
    r_user_grade[ci] = own

    # ---- time: reading the scenario, typing, scanning, reading documents
    dwell_q = np.bincount(r_query[ci], weights=dwell, minlength=n_q)
    examine = np.rint(4.0 * q_scan + dwell_q).astype(np.int64) + 6
    think = np.where(q_pos == 1, rng.integers(30, 120, n_q), 8 + rng.geometric(0.05, n_q))
    q_rel = segment_cumsum_int(think + np.r_[0, examine[:-1]] * (q_pos > 1), q_offsets)
    q_last = np.flatnonzero(last)
    duration = q_rel[q_last] + examine[q_last] + rng.integers(15, 60, ns)
    gap = duration + rng.integers(60, 300, ns)  # break before the searcher's next session
    user_offsets = offsets_from_counts(np.bincount(user - user[0]))
    before = segment_cumsum_int(gap, user_offsets) - gap
    start = d.user_start[user] + before
    end = start + duration
    q_time = start[q_session] + q_rel

    # ---- query texts: weak formulations first, a good one at the end when satisfied
    n_txt = len(SCENARIOS[0].queries)
    weak_txt = np.minimum((quality * 10.0).astype(np.int64) + rng.integers(0, 4, n_q), 7)
    good_txt = 8 + rng.integers(0, n_txt - 8, n_q)
    txt = np.where(good_last, good_txt, weak_txt)
    same = np.zeros(n_q, dtype=bool)
    same[1:] = (txt[1:] == txt[:-1]) & (q_pos[1:] > 1)
    txt = np.where(same, np.where(txt < 7, txt + 1, txt - 1), txt)

    # ---- post-task questionnaire
    best = np.full(ns, -1, dtype=np.int64)  # best own grade of the session
    np.maximum.at(best, q_session[r_query[ci]], own)
    sat = 1 + np.maximum(best, 0) + (rng.random(ns) < 0.35) - (rng.random(ns) < 0.1) - fail
    diff = 1.2 + 0.4 * (nq - 1) + 0.5 * tdiff + rng.normal(0.0, 0.7, ns)

    return Chunk(
        first_session=s0,
        user=user,
        topic=topic,
        system=system,
        start=start,
        end=end,
        satisfaction=np.clip(sat, 1, 5).astype(np.float64),
        difficulty=np.clip(np.rint(diff), 1, 5),
        n_queries=nq,
        q_session=q_session,
        q_pos=q_pos,
        q_text=q_topic * n_txt + txt,
        q_time=q_time,
        q_scan=q_scan.astype(np.int64),
        q_n=q_n,
        r_query=r_query,
        r_real=r_real,
        r_rank=r_rank,
        r_doc=r_doc,
        r_clicks=r_clicks,
        r_dwell=r_dwell,
        r_user_grade=r_user_grade,
    )

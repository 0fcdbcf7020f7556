"""A seeded, vectorised generator of synthetic session-search studies.

The generated study mirrors the design of the interactive study that
Järvelin, Price, Delcambre and Nielsen (2008, section 3.1) used to illustrate
sDCG: family physicians searching a health portal of about 25,000 documents
for four realistic decision scenarios with two systems, in a Latin-square
design.  At the default size (120 sessions) it reproduces that design exactly:

- 30 searchers with attributes distributed like the paper's Table 1;
- 4 scenarios (``A``–``D``) and 2 systems (``S1`` full text + keywords,
  ``S2`` + semantic components);
- each searcher does 2 scenarios per system (4 distinct scenarios), 15
  sessions per scenario × system, counterbalanced order;
- the number of queries per session is *exactly* Table 2 for each system
  (343 queries, averages 2.53 and 3.18).

It also tells the paper's story: early queries are weak, the last query of a
session is far better (searchers stop when satisfied, some give up), and
System 2 is somewhat better on average.  Larger studies scale the design
(more searchers, Table 2 proportions apportioned per system).

Everything is NumPy array code driven by one local ``np.random.Generator`` per
chunk of sessions, so a million sessions (about 200 million result rows) stream
to Parquet chunk by chunk.  The same ``(n_sessions, seed)`` always gives the
same study.

References
----------
Järvelin, K., Price, S. L., Delcambre, L. M. L., and Nielsen, M. L. (2008).
Discounted cumulated gain based evaluation of multiple-query IR sessions.
ECIR 2008, LNCS 4956, 4–15. doi:10.1007/978-3-540-78646-7_4 (key ``jarvelin2008``).

Examples
--------
>>> study = generate_study(n_sessions=8, seed=1)
>>> study.header.name
'synthetic portal study (8 sessions, seed 1)'
>>> len(study.header.users), [t.topic_id for t in study.header.topics]
(2, ['A', 'B', 'C', 'D'])
>>> sorted(set(study.flat.column("system_id").to_pylist()))
['S1', 'S2']
"""

from __future__ import annotations

import functools
import itertools
import json
import math
import os
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal

import numpy as np
import numpy.typing as npt
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from ..errors import SessionvalError
from ..models.judgments import GradeScale
from ..models.study import Study, System, Topic, User

__all__ = [
    "TABLE2_COUNTS",
    "OutputFormat",
    "SynthSummary",
    "SyntheticStudy",
    "flat_schema",
    "generate_study",
    "iter_flat_batches",
    "study_header",
    "write_study",
]

OutputFormat = Literal["jsonl", "parquet", "both"]

#: Table 2 of Järvelin et al. (2008): sessions (of 60 per system) issuing exactly 1..11 queries.
TABLE2_COUNTS: Final[dict[str, tuple[int, ...]]] = {
    "S1": (28, 7, 10, 4, 5, 4, 1, 1, 0, 0, 0),
    "S2": (21, 7, 9, 11, 2, 4, 2, 2, 0, 1, 1),
}

_I64 = npt.NDArray[np.int64]
_F64 = npt.NDArray[np.float64]

# Sessions per generated chunk (a multiple of 4 so a searcher's sessions stay together).
# Part of the random stream: changing it changes every study.
_CHUNK_SESSIONS: Final = 32_768
_COLLECTION_SIZE: Final = 25_000
_STUDY_START: Final = np.datetime64("2007-11-05T00:00:00", "s")  # a Monday
_EPOCH: Final = np.datetime64("1970-01-01T00:00:00", "s")

# Result categories: index 0 unjudged, 1 judged non-relevant, 2..4 grades 1..3.
_N_CAT: Final = 5


@dataclass(frozen=True, slots=True)
class _Scenario:
    topic_id: str
    title: str
    description: str
    difficulty: float  # shifts query counts and query quality
    n_relevant: tuple[int, int, int]  # recall base: documents of grade 1, 2, 3
    n_judged_zero: int
    queries: tuple[str, ...]  # from vague to precise; the last third are the good ones


_SCENARIOS: Final[tuple[_Scenario, ...]] = (
    _Scenario(
        "A",
        "Antibiotics for acute otitis media in a toddler",
        "A 2-year-old has had ear pain and fever of 38.6 °C for one day; the parents ask for "
        "antibiotics. Find the current recommendation on watchful waiting versus immediate "
        "amoxicillin, and when to re-examine.",
        -0.4,
        (14, 9, 6),
        64,
        (
            "ear infection",
            "Otitis",
            "otitis media",
            "ear pain child fever",
            "otitis antibiotics",
            "otitis media children",
            "acute otitis media treatment",
            "otitis media antibiotics children",
            "otitis media watchful waiting",
            "acute otitis media amoxicillin guideline",
            "otitis media children watchful waiting antibiotics",
            "acute otitis media under 2 years antibiotic recommendation",
        ),
    ),
    _Scenario(
        "B",
        "Warfarin and tooth extraction",
        "A patient on warfarin for atrial fibrillation (INR 2.7) is scheduled for a molar "
        "extraction next week. Decide whether warfarin should be paused or bridged, and "
        "what INR is acceptable for the dentist.",
        0.0,
        (18, 11, 7),
        88,
        (
            "warfarin",
            "Marevan",
            "anticoagulation dentist",
            "warfarin surgery",
            "warfarin tooth",
            "anticoagulant bleeding risk",
            "warfarin pause before surgery",
            "tooth extraction anticoagulation",
            "warfarin dental extraction INR",
            "anticoagulation dental procedure guideline",
            "warfarin tooth extraction continue INR",
            "dental extraction warfarin bridging recommendation",
        ),
    ),
    _Scenario(
        "C",
        "Vaccination of a pregnant traveller",
        "A woman 14 weeks pregnant will travel to Ghana in a month and asks which "
        "vaccinations and malaria prophylaxis are safe. Decide what to give and what to "
        "advise against.",
        0.3,
        (11, 7, 4),
        70,
        (
            "travel",
            "vaccination pregnancy",
            "Ghana",
            "yellow fever",
            "travel vaccines",
            "malaria pregnant",
            "yellow fever vaccine pregnancy",
            "pregnant travel vaccination",
            "travel vaccination pregnancy Africa",
            "yellow fever vaccination pregnant contraindication",
            "malaria prophylaxis pregnancy mefloquine",
            "pregnant traveller West Africa vaccines malaria prophylaxis",
        ),
    ),
    _Scenario(
        "D",
        "Referral after a transient ischaemic attack",
        "A 67-year-old had 20 minutes of right-arm weakness yesterday and is now well. Find "
        "the regional referral pathway for suspected TIA and how urgently the patient must "
        "be seen.",
        0.6,
        (16, 10, 5),
        96,
        (
            "TIA",
            "stroke",
            "tia referral",
            "transient ischemic attack",
            "region:north stroke unit",
            "TIA treatment",
            "transient ischaemic attack referral",
            "stroke unit referral region",
            "TIA acute referral pathway",
            "transient ischaemic attack urgent assessment",
            "TIA referral stroke unit within 24 hours",
            "suspected TIA regional referral guideline",
        ),
    ),
)

_SYSTEMS: Final[tuple[tuple[str, str, str], ...]] = (
    (
        "S1",
        "full text + keywords",
        "Baseline engine of the portal: full-text and keyword indexing.",
    ),
    (
        "S2",
        "+ semantic components",
        "The baseline indexing plus semantic components (supplemental document indexing "
        "that affects the query language and the ranking).",
    ),
)


def _conditions() -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Scenario order and system of the 30 searcher conditions of the Latin-square design.

    Conditions 0–23 run through all 24 orders of the four scenarios, in pairs whose
    system blocks are swapped (so every scenario gets each system once per pair), with the
    first system alternating between pairs; conditions 24–29 use each of the six ways to
    split the scenarios over the systems once.  Over 30 searchers every scenario is
    searched 15 times with each system, 15 searchers start with each system, and every
    scenario is searched 7 or 8 times in each position (first, second, third, fourth).
    """
    orders: list[tuple[int, ...]] = []
    firsts: list[int] = []
    seen: set[tuple[int, ...]] = set()
    for p in itertools.permutations(range(4)):
        if p in seen:
            continue
        swapped = (p[2], p[3], p[0], p[1])
        seen |= {p, swapped}
        orders += [p, swapped]
        firsts += [len(firsts) // 2 % 2] * 2
    # the six splits of the scenarios over the systems, ordered so that every scenario
    # takes every position once or twice (found by exhaustive search)
    orders += [(2, 3, 0, 1), (0, 1, 2, 3), (1, 3, 0, 2), (3, 1, 2, 0), (3, 0, 1, 2), (1, 2, 3, 0)]
    firsts += [1, 1, 1, 0, 0, 0]
    first = np.array(firsts, dtype=np.int64)[:, None]
    system = np.where(np.arange(4) < 2, first, 1 - first)
    return np.array(orders, dtype=np.int64), system


_ORDER, _ORDER_SYSTEM = _conditions()


# --------------------------------------------------------------------------- design


@dataclass(frozen=True)
class _Design:
    """Everything fixed before results are drawn: searchers, sessions, query counts."""

    n_sessions: int
    seed: int
    user_attrs: dict[str, npt.NDArray[Any]]  # per searcher
    session_user: _I64
    session_topic: _I64
    session_system: _I64
    session_fail: npt.NDArray[np.bool_]
    n_queries: _I64
    query_offsets: _I64  # first query of each session, length n_sessions + 1
    user_start: _I64  # seconds since the epoch when the searcher's first session starts
    pools: _Pools

    @property
    def n_users(self) -> int:
        return len(self.user_attrs["skill"])


@dataclass(frozen=True)
class _Pools:
    """Per scenario and category, the documents a system can return (codes into the collection)."""

    docs: _I64  # concatenated pools
    docs32: npt.NDArray[np.int32]  # the same as int32
    base: _I64  # (n_topics, _N_CAT) start of each pool in ``docs``
    size: _I64  # (n_topics, _N_CAT)
    strides: _I64  # (n_topics, _N_CAT, 8) strides coprime with the pool size


def _rng(seed: int, *key: int) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=key))


def _standardised(rng: np.random.Generator, n: int) -> _F64:
    """Draw standard normals rescaled to sample mean 0 and SD 1 (Table 1 moments at n = 30)."""
    z = rng.standard_normal(n)
    if n >= 2 and z.std() > 0:
        z = (z - z.mean()) / z.std(ddof=1)
    return z


def _apportion(n: int, counts: Sequence[int]) -> _I64:
    """Split ``n`` sessions over query counts in the proportions of ``counts`` (largest remainder).

    Exact when ``n`` is a multiple of ``sum(counts)``; ties go to the smaller count.
    """
    p = np.asarray(counts, dtype=np.float64) / sum(counts)
    raw = n * p
    out = np.floor(raw).astype(np.int64)
    rest = n - int(out.sum())
    order = np.lexsort((np.arange(len(p)), -(raw - out)))
    out[order[:rest]] += 1
    return out


def _users(rng: np.random.Generator, n_users: int) -> dict[str, npt.NDArray[Any]]:
    z = np.stack([_standardised(rng, n_users) for _ in range(4)])
    # skill correlates with internet experience, as one would expect
    z[2] = 0.5 * z[0] + math.sqrt(0.75) * z[2]
    if n_users >= 2 and z[2].std() > 0:
        z[2] = (z[2] - z[2].mean()) / z[2].std(ddof=1)
    internet = np.clip(np.rint(7.2 + 2.8 * z[0]), 1, 15).astype(np.int64)
    portal = np.clip(np.rint(2 * (2.4 + 1.4 * z[1])) / 2, 0.0, 6.0)
    skill = np.clip(np.rint(2.4 + 0.9 * z[2]), 1, 5).astype(np.int64)
    professional = np.clip(np.rint(21.4 + 7.6 * z[3]), 2, 42).astype(np.int64)
    age = professional + 26 + rng.integers(0, 6, n_users)
    female = rng.random(n_users) < 0.5
    return {
        "internet_search_years": internet,
        "portal_years": portal,
        "skill": skill,
        "professional_years": professional,
        "age": age,
        "female": female,
    }


def _pools(rng: np.random.Generator) -> _Pools:
    """Disjoint per-scenario document pools drawn from the collection."""
    sizes = np.zeros((len(_SCENARIOS), _N_CAT), dtype=np.int64)
    for t, sc in enumerate(_SCENARIOS):
        sizes[t] = (2_400 + 300 * t, sc.n_judged_zero, *sc.n_relevant)
    perm = rng.permutation(_COLLECTION_SIZE).astype(np.int64)
    docs = perm[: int(sizes.sum())]
    base = np.zeros(sizes.size, dtype=np.int64)
    base[1:] = np.cumsum(sizes.ravel())[:-1]
    strides = np.zeros((*sizes.shape, 8), dtype=np.int64)
    for idx, m in np.ndenumerate(sizes):
        cands = [s for s in range(1, 64) if math.gcd(s, int(m)) == 1]
        strides[idx] = cands[:8]
    return _Pools(
        docs=docs,
        docs32=docs.astype(np.int32),
        base=base.reshape(sizes.shape),
        size=sizes,
        strides=strides,
    )


def _latin_square(n_sessions: int) -> tuple[_I64, _I64, _I64]:
    """Searcher, scenario and system of each session: searcher ``u`` has condition ``u % 30``."""
    n_users = -(-n_sessions // 4)
    cond = np.arange(n_users, dtype=np.int64) % len(_ORDER)
    users = np.repeat(np.arange(n_users, dtype=np.int64), 4)[:n_sessions]
    topic = _ORDER[cond].ravel()[:n_sessions]
    system = _ORDER_SYSTEM[cond].ravel()[:n_sessions]
    return users, topic, system


def _design(n_sessions: int, seed: int) -> _Design:
    rng = _rng(seed, 0)
    users, topic, system = _latin_square(n_sessions)
    n_users = int(users[-1]) + 1
    attrs = _users(rng, n_users)
    pools = _pools(rng)
    difficulty = np.array([sc.difficulty for sc in _SCENARIOS])
    skill = attrs["skill"].astype(np.float64)
    # latent effort: harder scenarios and less skilled searchers need more queries
    latent = difficulty[topic] + 0.3 * (2.4 - skill[users]) + rng.normal(0.0, 0.8, n_sessions)
    n_queries = np.zeros(n_sessions, dtype=np.int64)
    for k, sys_id in enumerate(("S1", "S2")):
        idx = np.flatnonzero(system == k)
        quota = _apportion(len(idx), TABLE2_COUNTS[sys_id])
        counts = np.repeat(np.arange(1, len(quota) + 1, dtype=np.int64), quota)
        n_queries[idx[np.argsort(latent[idx], kind="stable")]] = counts
    # some searchers give up: their last query is no better than the others
    p_fail = 0.06 + 0.03 * np.minimum(n_queries - 1, 6) + 0.04 * difficulty[topic] - 0.04 * system
    fail = rng.random(n_sessions) < p_fail
    offsets = np.zeros(n_sessions + 1, dtype=np.int64)
    np.cumsum(n_queries, out=offsets[1:])
    # searchers come to the lab on working days, about three a day (more seats at scale)
    n_days = max(1, min(-(-n_users // 3), 240))
    day = (np.arange(n_users) * n_days) // n_users
    week, weekday = np.divmod(day, 5)
    start_of_day = (_STUDY_START - _EPOCH).astype(np.int64) + (week * 7 + weekday) * 86_400
    user_start = start_of_day + 7 * 3600 + rng.integers(0, 7 * 3600 // 60, n_users) * 60
    return _Design(
        n_sessions=n_sessions,
        seed=seed,
        user_attrs=attrs,
        session_user=users,
        session_topic=topic,
        session_system=system,
        session_fail=fail,
        n_queries=n_queries,
        query_offsets=offsets,
        user_start=user_start.astype(np.int64),
        pools=pools,
    )


# --------------------------------------------------------------------------- chunks

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
class _Chunk:
    """One chunk of whole searchers' sessions as arrays (chunk-local indices).

    Result arrays hold one row per result *and* one placeholder row per query without
    results (``r_real`` false), i.e. exactly the rows of the flat table.
    """

    first_session: int
    # sessions
    user: _I64
    topic: _I64
    system: _I64
    start: _I64  # seconds since the epoch
    end: _I64
    satisfaction: _F64
    difficulty: _F64
    n_queries: _I64
    # queries
    q_session: npt.NDArray[np.int32]
    q_pos: _I64
    q_text: _I64  # code into _query_texts()
    q_time: _I64
    q_scan: _I64
    q_n: _I64
    # rows (sorted by query, rank)
    r_query: npt.NDArray[np.int32]
    r_real: npt.NDArray[np.bool_]
    r_rank: npt.NDArray[np.int32]
    r_doc: npt.NDArray[np.int32]  # collection code
    r_clicks: npt.NDArray[np.int16]
    r_dwell: npt.NDArray[np.float32]  # NaN when not clicked
    r_user_grade: npt.NDArray[np.int16]  # -1 when none


def _starts(lengths: npt.NDArray[Any]) -> _I64:
    """Exclusive cumulative sum: where each segment starts."""
    out = np.zeros(len(lengths), dtype=np.int64)
    if len(lengths) > 1:
        np.cumsum(lengths[:-1], out=out[1:])
    return out


def _segment_arange(lengths: _I64) -> _I64:
    """``0..n-1`` restarted for each segment of the given lengths."""
    return np.arange(int(lengths.sum()), dtype=np.int64) - np.repeat(_starts(lengths), lengths)


def _segment_cumsum(values: npt.NDArray[Any], lengths: _I64) -> npt.NDArray[Any]:
    """Inclusive cumulative sum along axis 0, restarted at each segment (lengths >= 1)."""
    cs: npt.NDArray[Any] = np.cumsum(values, axis=0)
    starts = _starts(lengths)
    out: npt.NDArray[Any] = cs - np.repeat(cs[starts] - values[starts], lengths, axis=0)
    return out


def _run_position(key: _I64) -> _I64:
    """For each element, how many earlier elements share its key (keys need not be sorted)."""
    order = np.argsort(key, kind="stable")
    ks = key[order]
    new = np.ones(len(ks), dtype=bool)
    new[1:] = ks[1:] != ks[:-1]
    first = np.flatnonzero(new)
    pos = np.arange(len(ks), dtype=np.int64) - np.repeat(first, np.diff(np.append(first, len(ks))))
    out = np.empty_like(pos)
    out[order] = pos
    return out


def _chunk(d: _Design, k: int) -> _Chunk:
    rng = _rng(d.seed, 1, k)
    s0 = k * _CHUNK_SESSIONS
    s1 = min(d.n_sessions, s0 + _CHUNK_SESSIONS)
    ns = s1 - s0
    user = d.session_user[s0:s1]
    topic = d.session_topic[s0:s1]
    system = d.session_system[s0:s1]
    fail = d.session_fail[s0:s1]
    nq = d.n_queries[s0:s1]
    skill = d.user_attrs["skill"][user].astype(np.float64)
    tdiff = np.array([sc.difficulty for sc in _SCENARIOS])[topic]

    # ---- queries: quality rises at the last query (unless the searcher gave up)
    q_session = np.repeat(np.arange(ns, dtype=np.int32), nq)
    q_pos = _segment_arange(nq) + 1
    n_q = len(q_session)
    q_sys = system[q_session]
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
    q_first = _starts(q_rows)
    nr = int(q_rows.sum())
    r_query = np.repeat(np.arange(n_q, dtype=np.int32), q_rows)
    r_rank = (np.arange(nr, dtype=np.int32) - np.repeat(q_first.astype(np.int32), q_rows)) + 1
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
    pool_size = d.pools.size[q_topic].astype(np.int32)  # (n_q, _N_CAT)
    judged = np.flatnonzero(cat)
    j_judged = _run_position(r_query[judged].astype(np.int64) * _N_CAT + cat[judged])
    over = j_judged >= pool_size[r_query[judged], cat[judged]]
    cat[judged[over]] = 0  # pool exhausted: the system returns some other document
    judged, j_judged = judged[~over], j_judged[~over].astype(np.int32)
    is_judged = (cat > 0).astype(np.int32)
    excl = np.cumsum(is_judged, dtype=np.int32) - is_judged
    j = r_rank - 1 - (excl - np.repeat(excl[q_first], q_rows))  # rank among unjudged rows
    del excl, is_judged

    # each session walks its pools from its own offset with its own stride; later queries
    # drift a little, so documents recur across the queries of a session
    sess_off = rng.integers(0, 1 << 30, (ns, _N_CAT))
    sess_stride = rng.integers(0, 8, (ns, _N_CAT))
    drift = np.where(
        np.arange(_N_CAT) == 0,
        rng.integers(0, 40, (n_q, _N_CAT)),
        rng.integers(0, 3, (n_q, _N_CAT)),
    )
    drift[q_pos == 1] = 0
    cols = np.arange(_N_CAT)
    q_offset = ((sess_off[q_session] + _segment_cumsum(drift, nq)) % pool_size).astype(np.int32)
    q_stride = d.pools.strides[q_topic[:, None], cols, sess_stride[q_session]].astype(np.int32)
    q_pool = d.pools.base[q_topic].astype(np.int32)
    # every row as if unjudged (per-query values spread with np.repeat, which is cheap) ...
    slot = np.repeat(q_offset[:, 0], q_rows) + np.repeat(q_stride[:, 0], q_rows) * j
    slot %= np.repeat(pool_size[:, 0], q_rows)
    slot += np.repeat(q_pool[:, 0], q_rows)
    # ... then the judged rows from their own pools
    qc = r_query[judged].astype(np.int64) * _N_CAT + cat[judged]
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
    q_rel = _segment_cumsum(think + np.r_[0, examine[:-1]] * (q_pos > 1), nq)
    q_last = np.flatnonzero(last)
    duration = q_rel[q_last] + examine[q_last] + rng.integers(15, 60, ns)
    gap = duration + rng.integers(60, 300, ns)  # break before the searcher's next session
    before = _segment_cumsum(gap, np.bincount(user - user[0])) - gap
    start = d.user_start[user] + before
    end = start + duration
    q_time = start[q_session] + q_rel

    # ---- query texts: weak formulations first, a good one at the end when satisfied
    n_txt = len(_SCENARIOS[0].queries)
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

    return _Chunk(
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


# --------------------------------------------------------------------------- output


def _query_texts() -> list[str]:
    return [q for sc in _SCENARIOS for q in sc.queries]


@functools.cache
def _doc_names() -> npt.NDArray[np.str_]:
    names = np.char.add("d", np.char.zfill(np.arange(1, _COLLECTION_SIZE + 1).astype(str), 5))
    return np.asarray(names, dtype=np.str_)


def _id_width(n: int, minimum: int) -> int:
    return max(minimum, len(str(n)))


def _session_ids(first: int, n: int, total: int) -> list[str]:
    w = _id_width(total, 3)
    return [f"s{i:0{w}d}" for i in range(first + 1, first + n + 1)]


def _user_ids(first: int, n: int, total: int) -> list[str]:
    w = _id_width(total, 2)
    return [f"u{i:0{w}d}" for i in range(first + 1, first + n + 1)]


_PLAIN_COLUMNS: Final = ("rank", "clicks", "dwell", "user_grade")  # one value per row


def flat_schema() -> pa.Schema:
    """Return the Arrow schema of ``sessions.parquet`` as read back (``docs/formats.md`` layout).

    Identifier and text columns are dictionary-encoded strings; times are UTC timestamps.
    A query without results is one row whose ``rank`` and ``doc_id`` are null (its
    ``clicks`` is 0); ``dwell`` and ``user_grade`` are null where the searcher did not
    view or judge.  On disk every per-session and per-query column is dictionary-encoded.

    Examples
    --------
    >>> flat_schema().field("doc_id").type
    DictionaryType(dictionary<values=string, indices=int32, ordered=0>)
    """
    ids = pa.dictionary(pa.int32(), pa.string())
    ts = pa.timestamp("ms", tz="UTC")
    return pa.schema(
        [
            ("session_id", ids),
            ("user_id", ids),
            ("topic_id", ids),
            ("system_id", ids),
            ("session_start", ts),
            ("session_end", ts),
            ("rating_satisfaction", pa.float64()),
            ("rating_difficulty", pa.float64()),
            ("query_pos", pa.int16()),
            ("query_text", ids),
            ("query_time", ts),
            ("scan_depth", pa.int32()),
            ("rank", pa.int32()),
            ("doc_id", ids),
            ("clicks", pa.int16()),
            ("dwell", pa.float32()),
            ("user_grade", pa.int16()),
        ]
    )


def _storage_schema() -> pa.Schema:
    """Return the schema of the chunk tables: all but the per-row columns are dictionaries."""
    fields = []
    for f in flat_schema():
        if f.name in _PLAIN_COLUMNS or pa.types.is_dictionary(f.type):
            fields.append(f)
        else:
            fields.append(pa.field(f.name, pa.dictionary(pa.int32(), f.type)))
    return pa.schema(fields)


_TS: Final = pa.timestamp("ms", tz="UTC")


def _arrow(values: npt.NDArray[Any] | pa.Array, type_: pa.DataType | None) -> pa.Array:
    arr = values if isinstance(values, pa.Array) else pa.array(values)
    return arr.view(type_) if type_ is not None else arr


def _chunk_table(d: _Design, c: _Chunk) -> pa.Table:
    """Build the chunk's flat table: one row per result, one row per empty query.

    Columns repeated per session or per query are dictionary arrays over the session or
    query index (no per-row copies); Parquet stores them dictionary-encoded and reads them
    back as plain columns (:func:`flat_schema`).
    """
    ns = len(c.user)
    u0 = int(c.user[0])
    r_session = pa.array(c.q_session[c.r_query])
    r_query = pa.array(c.r_query)

    def per_session(
        values: npt.NDArray[Any] | pa.Array, type_: pa.DataType | None = None
    ) -> pa.Array:
        return pa.DictionaryArray.from_arrays(r_session, _arrow(values, type_))

    def per_query(
        values: npt.NDArray[Any] | pa.Array, type_: pa.DataType | None = None
    ) -> pa.Array:
        return pa.DictionaryArray.from_arrays(r_query, _arrow(values, type_))

    # string columns get dictionaries without repeats (readers turn them into categoricals)
    q_rows = np.maximum(c.q_n, 1)

    def coded(per_query_codes: npt.NDArray[Any], values: Sequence[str]) -> pa.Array:
        idx = np.repeat(per_query_codes.astype(np.int32), q_rows)
        return pa.DictionaryArray.from_arrays(pa.array(idx), pa.array(values, type=pa.string()))

    qs = c.q_session
    users = _user_ids(u0, int(c.user[-1]) - u0 + 1, d.n_users)
    texts = _query_texts()
    used_txt = np.zeros(len(texts), dtype=bool)
    used_txt[c.q_text] = True
    txt_code = np.cumsum(used_txt) - 1
    # documents: a dictionary of what the chunk uses, in collection (= id) order
    used = np.zeros(_COLLECTION_SIZE, dtype=bool)
    used[c.r_doc[c.r_real]] = True
    doc_code = (np.cumsum(used, dtype=np.int32) - 1)[c.r_doc]
    placeholder = ~c.r_real
    doc_code[placeholder] = 0  # null rows: keep the hidden index in range
    cols = [
        per_session(pa.array(_session_ids(c.first_session, ns, d.n_sessions))),
        coded((c.user - u0)[qs], users),
        coded(c.topic[qs], [sc.topic_id for sc in _SCENARIOS]),
        coded(c.system[qs], [s[0] for s in _SYSTEMS]),
        per_session(c.start * 1000, _TS),
        per_session(c.end * 1000, _TS),
        per_session(c.satisfaction),
        per_session(c.difficulty),
        per_query(c.q_pos.astype(np.int16)),
        coded(txt_code[c.q_text], [t for t, u in zip(texts, used_txt.tolist(), strict=True) if u]),
        per_query(c.q_time * 1000, _TS),
        per_query(c.q_scan.astype(np.int32)),
        pa.array(c.r_rank, mask=placeholder),
        pa.DictionaryArray.from_arrays(
            pa.array(doc_code, mask=placeholder), pa.array(_doc_names()[used])
        ),
        pa.array(c.r_clicks),
        pa.array(c.r_dwell, mask=np.isnan(c.r_dwell)),
        pa.array(c.r_user_grade, mask=c.r_user_grade < 0),
    ]
    return pa.Table.from_arrays(cols, schema=_storage_schema())


def _iso(seconds: _I64) -> list[str]:
    stamps = seconds.astype("datetime64[s]")
    return [s + "Z" for s in np.datetime_as_string(stamps, unit="s").tolist()]


def _chunk_jsonl(d: _Design, c: _Chunk) -> Iterator[str]:
    """One JSON line per session, exactly ``Session.model_dump_json(exclude_defaults=True)``."""
    ns = len(c.user)
    sids = _session_ids(c.first_session, ns, d.n_sessions)
    u0 = int(c.user[0])
    uids = _user_ids(u0, int(c.user[-1]) - u0 + 1, d.n_users)
    start, end, qtime = _iso(c.start), _iso(c.end), _iso(c.q_time)
    texts = _query_texts()
    names = _doc_names()[c.r_doc].tolist()
    rank = c.r_rank.tolist()
    clicks = c.r_clicks.tolist()
    dwell = c.r_dwell.astype(np.float64).round(1).tolist()
    ugrade = c.r_user_grade.tolist()
    rs = _starts(np.maximum(c.q_n, 1)).tolist()
    qn = c.q_n.tolist()
    qs = _starts(c.n_queries).tolist()
    nq = c.n_queries.tolist()
    pos, txt, scan = c.q_pos.tolist(), c.q_text.tolist(), c.q_scan.tolist()
    dumps = json.dumps
    for s in range(ns):
        queries = []
        for q in range(qs[s], qs[s] + nq[s]):
            query: dict[str, Any] = {
                "position": pos[q],
                "text": texts[txt[q]],
                "time": qtime[q],
                "scan_depth": scan[q],
            }
            if qn[q]:
                results = []
                for r in range(rs[q], rs[q] + qn[q]):
                    res: dict[str, Any] = {"rank": rank[r], "doc_id": names[r]}
                    if clicks[r]:
                        res["clicks"] = clicks[r]
                        res["dwell"] = dwell[r]
                    if ugrade[r] >= 0:
                        res["user_grade"] = ugrade[r]
                    results.append(res)
                query["results"] = results
            queries.append(query)
        session = {
            "session_id": sids[s],
            "user_id": uids[int(c.user[s]) - u0],
            "topic_id": _SCENARIOS[int(c.topic[s])].topic_id,
            "system_id": _SYSTEMS[int(c.system[s])][0],
            "start_time": start[s],
            "end_time": end[s],
            "ratings": {
                "satisfaction": float(c.satisfaction[s]),
                "difficulty": float(c.difficulty[s]),
            },
            "queries": queries,
        }
        yield dumps(session, separators=(",", ":"), ensure_ascii=False)


def _header(d: _Design) -> Study:
    a = d.user_attrs
    ids = _user_ids(0, d.n_users, d.n_users)
    cols = {k: v.tolist() for k, v in a.items()}
    users = tuple(
        User(
            user_id=ids[i],
            attributes={
                "internet_search_years": cols["internet_search_years"][i],
                "portal_years": cols["portal_years"][i],
                "search_skill": cols["skill"][i],
                "professional_years": cols["professional_years"][i],
                "age": cols["age"][i],
                "gender": "female" if cols["female"][i] else "male",
            },
        )
        for i in range(d.n_users)
    )
    return Study(
        name=f"synthetic portal study ({d.n_sessions} sessions, seed {d.seed})",
        description=(
            "Synthetic family-practice search study generated by sessionval.synth, mirroring the "
            "design of Järvelin et al. (ECIR 2008, section 3.1): 4 decision scenarios, 2 systems, "
            "Latin-square assignment (2 scenarios per system per searcher), queries per session as "
            "in its Table 2, reference judgments 0-3 by one domain expert."
        ),
        grade_scale=GradeScale.default(),
        user_grade_scale=GradeScale.default(),
        users=users,
        topics=tuple(
            Topic(topic_id=sc.topic_id, title=sc.title, description=sc.description)
            for sc in _SCENARIOS
        ),
        systems=tuple(System(system_id=s, name=n, description=ds) for s, n, ds in _SYSTEMS),
    )


def _judgments(d: _Design) -> pd.DataFrame:
    """List every judged document of every scenario, sorted by topic and doc."""
    p = d.pools
    topic_parts, doc_parts, grade_parts = [], [], []
    for t in range(len(_SCENARIOS)):
        for c in range(1, _N_CAT):
            docs = p.docs[p.base[t, c] : p.base[t, c] + p.size[t, c]]
            topic_parts.append(np.full(len(docs), t))
            doc_parts.append(docs)
            grade_parts.append(np.full(len(docs), c - 1))
    topic = np.concatenate(topic_parts)
    doc = np.concatenate(doc_parts)
    grade = np.concatenate(grade_parts)
    order = np.lexsort((doc, topic))
    return pd.DataFrame(
        {
            "topic_id": pd.array([_SCENARIOS[t].topic_id for t in topic[order]], dtype="string"),
            "doc_id": pd.array(_doc_names()[doc[order]].tolist(), dtype="string"),
            "grade": grade[order].astype(np.int16),
            "assessor": pd.array(["expert"] * len(order), dtype="string"),
        }
    )


def _write_table(writer: pq.ParquetWriter, table: pa.Table) -> None:
    writer.write_table(table, row_group_size=max(table.num_rows, 1))


def _check_options(n_sessions: int, seed: int) -> None:
    for name, value, low in (("n_sessions", n_sessions, 1), ("seed", seed, 0)):
        if isinstance(value, bool) or not isinstance(value, int | np.integer):
            raise SessionvalError(f"{name} must be an integer >= {low}, got {value!r}")
        if value < low:
            raise SessionvalError(f"{name} must be an integer >= {low}, got {value}")


def _n_chunks(n_sessions: int) -> int:
    return -(-n_sessions // _CHUNK_SESSIONS)


# --------------------------------------------------------------------------- public API


@dataclass(frozen=True)
class SyntheticStudy:
    """A generated study held in memory (use :func:`write_study` for large sizes).

    Attributes
    ----------
    header
        The :class:`~sessionval.models.Study` header (users, topics, systems, scales; no
        sessions), i.e. the content of ``study.json``.
    flat
        The sessions in the flat layout (:func:`flat_schema`): one row per result, one row
        with null ``rank``/``doc_id`` per query without results.
    judgments
        Reference judgments: ``topic_id``, ``doc_id``, ``grade``, ``assessor``.
    jsonl
        One JSON line per session (``Session`` model), or ``()`` if not requested.
    """

    header: Study
    flat: pa.Table
    judgments: pd.DataFrame
    jsonl: tuple[str, ...] = ()


@dataclass(frozen=True)
class SynthSummary:
    """What :func:`write_study` wrote: counts, files and the time it took."""

    n_sessions: int
    n_queries: int
    n_rows: int
    n_results: int
    files: tuple[Path, ...]
    seconds: float


def study_header(*, n_sessions: int = 120, seed: int = 2008) -> Study:
    """Return the ``study.json`` header of the synthetic study of this size and seed.

    Examples
    --------
    >>> h = study_header()
    >>> len(h.users), len(h.topics), len(h.systems)
    (30, 4, 2)
    """
    _check_options(n_sessions, seed)
    return _header(_design(n_sessions, seed))


def iter_flat_batches(*, n_sessions: int = 120, seed: int = 2008) -> Iterator[pa.Table]:
    """Yield the flat table chunk by chunk (32,768 sessions each), in session order.

    Parameters
    ----------
    n_sessions
        Number of sessions (>= 1).
    seed
        Seed of the study; the same ``(n_sessions, seed)`` gives the same study.

    Yields
    ------
    pyarrow.Table
        Consecutive row blocks with schema :func:`flat_schema`.
    """
    _check_options(n_sessions, seed)
    d = _design(n_sessions, seed)
    for k in range(_n_chunks(n_sessions)):
        yield _chunk_table(d, _chunk(d, k)).cast(flat_schema())


def generate_study(
    *, n_sessions: int = 120, seed: int = 2008, jsonl: bool = True
) -> SyntheticStudy:
    """Generate a synthetic study mirroring Järvelin et al. (2008), section 3.1, in memory.

    Parameters
    ----------
    n_sessions
        Number of sessions; 120 (the default) is the paper's design exactly (30 searchers ×
        4 scenarios, Table 2 per system).  Other sizes scale it: ``ceil(n/4)`` searchers,
        Table 2 proportions apportioned per system by largest remainder.
    seed
        Seed of the study's random streams.
    jsonl
        Also render the sessions as JSON lines (slow for very large studies).

    Returns
    -------
    SyntheticStudy
        Header, flat table, reference judgments and (optionally) JSON lines.

    Notes
    -----
    The generative model, all of it vectorised over sessions, queries and result rows:

    - *Design.*  Searcher ``u`` gets Latin-square condition ``u % 30`` (scenario order
      and system blocks).  Query counts are Table 2's per system, given to sessions in
      order of a latent effort (scenario difficulty, low skill, noise).  Some sessions
      fail (more often when long or hard, less with System 2).
    - *Query quality* ``q``: ``Beta(1.3, 7)`` for every query but the last of a
      successful session, which draws ``Beta(10, 3.7)``.  System 2 adds 0.12 to weak
      queries and 0.16 to last ones, skill adds a little and scenario difficulty takes a
      little away.
    - *Lists*: empty (10 % of weak queries, 7 % with System 2, never a successful last
      one), short (1–9), medium (10–99) or a full 100.  At rank ``i`` a relevant document
      comes with probability ``0.85 q exp(-(i-1)/(6+14q)) + 0.004``: grade 3 with share
      ``0.15 + 0.35 q``, grade 2 with share 0.35, the rest grade 1.  A judged non-relevant
      document comes with probability ``0.22 exp(-(i-1)/25) + 0.03``, otherwise an
      unjudged one.  The draw down a list is low-discrepancy, so the story shows at 120
      sessions already.
    - *Documents*: the ``j``-th document of a category in a list is step ``j`` of the
      session's walk through the scenario's pool (its own offset and a stride coprime
      with the pool size).  No document repeats within a list.  Later queries drift a
      little, so documents recur within a session.
    - *Behaviour*: geometric scan depth (longer on the last query).  A satisfied searcher
      scans to the first fairly or highly relevant document in the top 20 and opens it.
      Clicks depend on grade and rank, dwell is log-normal (longer for relevant
      documents), and own grades are the assessor's grade ± 1 (judged-0 documents get 0–2,
      unjudged ones 0).  Times add reading, typing, scanning and dwell.  Satisfaction
      follows the best own grade of the session; difficulty follows the query count.

    References
    ----------
    Järvelin et al. (2008), ECIR, doi:10.1007/978-3-540-78646-7_4 (``jarvelin2008``).

    Examples
    --------
    >>> s = generate_study()
    >>> s.header.users[0].user_id, len(s.jsonl)
    ('u01', 120)
    """
    _check_options(n_sessions, seed)
    d = _design(n_sessions, seed)
    tables: list[pa.Table] = []
    lines: list[str] = []
    for k in range(_n_chunks(n_sessions)):
        c = _chunk(d, k)
        tables.append(_chunk_table(d, c))
        if jsonl:
            lines.extend(_chunk_jsonl(d, c))
    flat = pa.concat_tables(tables).unify_dictionaries() if len(tables) > 1 else tables[0]
    flat = flat.cast(flat_schema())
    return SyntheticStudy(header=_header(d), flat=flat, judgments=_judgments(d), jsonl=tuple(lines))


def write_study(
    out_dir: str | os.PathLike[str],
    *,
    n_sessions: int = 120,
    seed: int = 2008,
    formats: OutputFormat = "both",
    progress: bool = False,
) -> SynthSummary:
    """Generate a study and stream it to ``out_dir`` chunk by chunk.

    Writes ``study.json``, ``qrels.txt``, ``judgments.csv`` and, by ``formats``,
    ``sessions.jsonl`` and/or ``sessions.parquet`` (zstd level 3, one row group per
    chunk of 32,768 sessions, identifiers dictionary-encoded).  All text files are
    byte-identical for the same ``(n_sessions, seed)``; the Parquet file has identical
    content (its bytes also carry the pyarrow version).  Parquet encoding runs in one
    background thread while the next chunk is generated.  JSON lines are written by
    Python and are large (about 8 kB per session): for a million sessions use
    ``formats="parquet"``.

    Parameters
    ----------
    out_dir
        Folder to write to (created if missing; existing files are replaced).
    n_sessions
        Number of sessions (see :func:`generate_study`).
    seed
        Seed of the study.
    formats
        ``"jsonl"``, ``"parquet"`` or ``"both"``.
    progress
        Show a progress bar (tqdm, on stderr).

    Returns
    -------
    SynthSummary
        Counts, written files and elapsed seconds.
    """
    _check_options(n_sessions, seed)
    if formats not in ("jsonl", "parquet", "both"):
        raise SessionvalError(f"formats must be 'jsonl', 'parquet' or 'both', got {formats!r}")
    t0 = time.perf_counter()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    d = _design(n_sessions, seed)
    files: list[Path] = []

    header = out / "study.json"
    header.write_text(_header(d).model_dump_json(indent=2) + "\n", encoding="utf-8")
    files.append(header)
    j = _judgments(d)
    qrels = out / "qrels.txt"
    lines = [
        f"{t} 0 {doc} {g}\n"
        for t, doc, g in zip(
            j["topic_id"].tolist(), j["doc_id"].tolist(), j["grade"].tolist(), strict=True
        )
    ]
    with qrels.open("w", encoding="utf-8", newline="\n") as fh:
        fh.writelines(lines)
    csv = out / "judgments.csv"
    j.to_csv(csv, index=False, lineterminator="\n")
    files += [qrels, csv]

    want_parquet = formats in ("parquet", "both")
    want_jsonl = formats in ("jsonl", "both")
    writer = None
    jfh = None
    n_rows = n_results = 0
    try:
        if want_parquet:
            writer = pq.ParquetWriter(
                out / "sessions.parquet",
                _storage_schema(),
                compression="zstd",
                compression_level=3,
                use_dictionary=[n for n in flat_schema().names if n not in _PLAIN_COLUMNS],
                write_statistics=list(_PLAIN_COLUMNS),
                dictionary_pagesize_limit=1 << 24,
                version="2.6",
                data_page_version="1.0",
                store_schema=True,
            )
            files.append(out / "sessions.parquet")
        if want_jsonl:
            jfh = (out / "sessions.jsonl").open("w", encoding="utf-8", newline="\n")
            files.append(out / "sessions.jsonl")
        chunks: Any = range(_n_chunks(n_sessions))
        if progress:
            from tqdm import tqdm

            chunks = tqdm(chunks, desc="synth", unit="chunk", leave=False)
        # one writer thread: Parquet encoding (which releases the GIL) of chunk k overlaps
        # the generation of chunk k + 1; chunks are written in order, so output is unchanged
        with ThreadPoolExecutor(max_workers=1) as pool:
            pending: Future[None] | None = None
            for k in chunks:
                c = _chunk(d, k)
                n_rows += len(c.r_rank)
                n_results += int(np.count_nonzero(c.r_real))
                if writer is not None:
                    table = _chunk_table(d, c)
                    if pending is not None:
                        pending.result()
                    pending = pool.submit(_write_table, writer, table)
                if jfh is not None:
                    for line in _chunk_jsonl(d, c):
                        jfh.write(line)
                        jfh.write("\n")
                del c
            if pending is not None:
                pending.result()
    finally:
        if writer is not None:
            writer.close()
        if jfh is not None:
            jfh.close()
    return SynthSummary(
        n_sessions=n_sessions,
        n_queries=int(d.query_offsets[-1]),
        n_rows=n_rows,
        n_results=n_results,
        files=tuple(files),
        seconds=time.perf_counter() - t0,
    )

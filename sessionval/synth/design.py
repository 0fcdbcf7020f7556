"""The study design of the synthetic generator: everything fixed before results are drawn.

The design mirrors the interactive study that Järvelin, Price, Delcambre and
Nielsen (2008, section 3.1) used to illustrate sDCG: family physicians searching a
health portal of about 25,000 documents for four realistic decision scenarios with
two systems, in a Latin-square design.  At the default size (120 sessions) it is
that design exactly:

- 30 searchers with attributes distributed like the paper's Table 1;
- 4 scenarios (``A``–``D``) and 2 systems (``S1`` full text + keywords,
  ``S2`` + semantic components);
- each searcher does 2 scenarios per system (4 distinct scenarios), 15
  sessions per scenario × system, counterbalanced order;
- the number of queries per session is *exactly* Table 2 for each system
  (343 queries, averages 2.53 and 3.18).

Larger studies scale the design (``ceil(n/4)`` searchers, Table 2 proportions
apportioned per system).  With ``n_systems = K > 2`` (for meta-evaluation: systems of
graded, known quality) searcher ``u``'s ``j``-th session uses system ``(u + j) mod K``,
system ``k`` has strength :math:`k/(K-1)` (``S1`` the weakest, ``SK`` the strongest;
with two systems the strengths are 0 and 1 as in the paper's design) and its query
counts blend Table 2's two columns by that strength.  This module also names what the
design holds (searcher, session and document identifiers), builds the ``study.json``
header and lists the reference judgments (the scenarios' judged pools).

References
----------
Järvelin, K., Price, S. L., Delcambre, L. M. L., and Nielsen, M. L. (2008).
Discounted cumulated gain based evaluation of multiple-query IR sessions.
ECIR 2008, LNCS 4956, 4–15. doi:10.1007/978-3-540-78646-7_4 (key ``jarvelin2008``).

Examples
--------
>>> d = design_study(120, 2008)
>>> d.n_users, int(d.query_offsets[-1])
(30, 343)
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import numpy as np
import numpy.typing as npt
import pandas as pd

from .._types import BoolArray, FloatArray, IntArray
from ..errors import SessionvalError
from ..kernels.segments import offsets_from_counts
from ..models.judgments import GradeScale
from ..models.study import Study, System, Topic, User
from .assignment import Assignment

__all__ = [
    "COLLECTION_SIZE",
    "N_CAT",
    "SCENARIOS",
    "SYSTEMS",
    "TABLE2_COUNTS",
    "Design",
    "Pools",
    "Scenario",
    "check_options",
    "design_study",
    "doc_names",
    "header_of",
    "judgments_of",
    "query_texts",
    "seeded_rng",
    "session_ids",
    "study_header",
    "system_table",
    "user_ids",
]

#: Table 2 of Järvelin et al. (2008): sessions (of 60 per system) issuing exactly 1..11 queries.
TABLE2_COUNTS: Final[dict[str, tuple[int, ...]]] = {
    "S1": (28, 7, 10, 4, 5, 4, 1, 1, 0, 0, 0),
    "S2": (21, 7, 9, 11, 2, 4, 2, 2, 0, 1, 1),
}

#: Documents in the portal's collection (ids ``d00001`` … ``d25000``).
COLLECTION_SIZE: Final = 25_000
_STUDY_START: Final = np.datetime64("2007-11-05T00:00:00", "s")  # a Monday
_EPOCH: Final = np.datetime64("1970-01-01T00:00:00", "s")

# Result categories: index 0 unjudged, 1 judged non-relevant, 2..4 grades 1..3.
N_CAT: Final = 5


@dataclass(frozen=True, slots=True)
class Scenario:
    """One decision scenario (a topic): its text, difficulty, recall base and query wordings."""

    topic_id: str
    title: str
    description: str
    difficulty: float  # shifts query counts and query quality
    n_relevant: tuple[int, int, int]  # recall base: documents of grade 1, 2, 3
    n_judged_zero: int
    queries: tuple[str, ...]  # from vague to precise; the last third are the good ones


SCENARIOS: Final[tuple[Scenario, ...]] = (
    Scenario(
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
    Scenario(
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
    Scenario(
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
    Scenario(
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

#: The two systems: ``(system_id, name, description)``.
SYSTEMS: Final[tuple[tuple[str, str, str], ...]] = (
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


def system_table(n_systems: int = 2) -> tuple[tuple[str, str, str], ...]:
    """The systems of a study of ``n_systems``: the paper's two, or ``S1``…``SK`` graded.

    Examples
    --------
    >>> [s[0] for s in system_table(3)], system_table(2) == SYSTEMS
    (['S1', 'S2', 'S3'], True)
    """
    if n_systems == 2:
        return SYSTEMS
    return tuple(
        (
            f"S{k + 1}",
            f"system {k + 1} of {n_systems}",
            f"Synthetic system of known quality: strength {k / max(n_systems - 1, 1):.3f} "
            f"(rank {k + 1} of {n_systems}, S{n_systems} the strongest).",
        )
        for k in range(n_systems)
    )


def _conditions() -> tuple[IntArray, IntArray]:
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


@dataclass(frozen=True)
class Design:
    """Everything fixed before results are drawn: searchers, sessions, query counts."""

    n_sessions: int
    seed: int
    user_attrs: dict[str, npt.NDArray[Any]]  # per searcher
    session_user: IntArray
    session_topic: IntArray
    session_system: IntArray
    session_fail: BoolArray  # the searcher gave up: the last query is no better
    n_queries: IntArray
    query_offsets: IntArray  # first query of each session, length n_sessions + 1
    user_start: IntArray  # seconds since the epoch when the searcher's first session starts
    pools: Pools
    systems: tuple[tuple[str, str, str], ...] = SYSTEMS
    system_strength: FloatArray = field(default_factory=lambda: np.array([0.0, 1.0]))
    assignment: Assignment = field(default_factory=Assignment)

    @property
    def n_users(self) -> int:
        """Number of searchers."""
        return len(self.user_attrs["skill"])


@dataclass(frozen=True)
class Pools:
    """Per scenario and category, the documents a system can return (codes into the collection)."""

    docs: IntArray  # concatenated pools
    docs32: npt.NDArray[np.int32]  # the same as int32
    base: IntArray  # (n_topics, N_CAT) start of each pool in ``docs``
    size: IntArray  # (n_topics, N_CAT)
    strides: IntArray  # (n_topics, N_CAT, 8) strides coprime with the pool size


def seeded_rng(seed: int, *key: int) -> np.random.Generator:
    """Return one random stream of the study (``key``: ``0`` the design, ``1, k`` chunk ``k``)."""
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=key))


def _standardised(rng: np.random.Generator, n: int) -> FloatArray:
    """Draw standard normals rescaled to sample mean 0 and SD 1 (Table 1 moments at n = 30)."""
    z = rng.standard_normal(n)
    if n >= 2 and z.std() > 0:
        z = (z - z.mean()) / z.std(ddof=1)
    return z


def _apportion(n: int, counts: Sequence[int]) -> IntArray:
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


def _pools(rng: np.random.Generator) -> Pools:
    """Disjoint per-scenario document pools drawn from the collection."""
    sizes = np.zeros((len(SCENARIOS), N_CAT), dtype=np.int64)
    for t, sc in enumerate(SCENARIOS):
        sizes[t] = (2_400 + 300 * t, sc.n_judged_zero, *sc.n_relevant)
    perm = rng.permutation(COLLECTION_SIZE).astype(np.int64)
    docs = perm[: int(sizes.sum())]
    base = np.zeros(sizes.size, dtype=np.int64)
    base[1:] = np.cumsum(sizes.ravel())[:-1]
    strides = np.zeros((*sizes.shape, 8), dtype=np.int64)
    for idx, m in np.ndenumerate(sizes):
        cands = [s for s in range(1, 64) if math.gcd(s, int(m)) == 1]
        strides[idx] = cands[:8]
    return Pools(
        docs=docs,
        docs32=docs.astype(np.int32),
        base=base.reshape(sizes.shape),
        size=sizes,
        strides=strides,
    )


def _latin_square(n_sessions: int) -> tuple[IntArray, IntArray, IntArray]:
    """Searcher, scenario and system of each session: searcher ``u`` has condition ``u % 30``."""
    n_users = -(-n_sessions // 4)
    cond = np.arange(n_users, dtype=np.int64) % len(_ORDER)
    users = np.repeat(np.arange(n_users, dtype=np.int64), 4)[:n_sessions]
    topic = _ORDER[cond].ravel()[:n_sessions]
    system = _ORDER_SYSTEM[cond].ravel()[:n_sessions]
    return users, topic, system


def design_study(
    n_sessions: int, seed: int, n_systems: int = 2, assignment: Assignment | None = None
) -> Design:
    """Lay out the study: searchers, Latin-square sessions, query counts, failures, pools, days.

    Query counts are Table 2's per system, given to sessions in order of a latent effort
    (scenario difficulty, low skill, noise); some sessions fail (more often when long or
    hard, less with a stronger system).  ``n_systems > 2``: the graded design of the
    module docstring.  ``assignment``: another design, sessions per searcher or system
    effect (:class:`~sessionval.synth.assignment.Assignment`; default the paper's).
    """
    a = Assignment() if assignment is None else assignment
    rng = seeded_rng(seed, 0)
    if a.paper_layout:
        users, topic, system = _latin_square(n_sessions)
        if n_systems != 2:
            system = (users + np.arange(n_sessions, dtype=np.int64) % 4) % n_systems
    else:
        users, topic, system = a.sessions(n_sessions, len(SCENARIOS), n_systems)
    strength = a.system_effect * (np.arange(n_systems, dtype=np.float64) / max(n_systems - 1, 1))
    n_users = int(users[-1]) + 1
    attrs = _users(rng, n_users)
    pools = _pools(rng)
    difficulty = np.array([sc.difficulty for sc in SCENARIOS])
    skill = attrs["skill"].astype(np.float64)
    # latent effort: harder scenarios and less skilled searchers need more queries
    latent = difficulty[topic] + 0.3 * (2.4 - skill[users]) + rng.normal(0.0, 0.8, n_sessions)
    n_queries = np.zeros(n_sessions, dtype=np.int64)
    weak, strong = (np.asarray(TABLE2_COUNTS[s], dtype=np.float64) for s in ("S1", "S2"))
    for k in range(n_systems):
        idx = np.flatnonzero(system == k)
        counts_k = (1.0 - strength[k]) * weak + strength[k] * strong
        quota = _apportion(len(idx), counts_k.tolist())
        counts = np.repeat(np.arange(1, len(quota) + 1, dtype=np.int64), quota)
        n_queries[idx[np.argsort(latent[idx], kind="stable")]] = counts
    # some searchers give up: their last query is no better than the others
    p_fail = (
        0.06
        + 0.03 * np.minimum(n_queries - 1, 6)
        + 0.04 * difficulty[topic]
        - 0.04 * strength[system]
    )
    fail = rng.random(n_sessions) < p_fail
    offsets = offsets_from_counts(n_queries)
    # searchers come to the lab on working days, about three a day (more seats at scale)
    n_days = max(1, min(-(-n_users // 3), 240))
    day = (np.arange(n_users) * n_days) // n_users
    week, weekday = np.divmod(day, 5)
    start_of_day = (_STUDY_START - _EPOCH).astype(np.int64) + (week * 7 + weekday) * 86_400
    user_start = start_of_day + 7 * 3600 + rng.integers(0, 7 * 3600 // 60, n_users) * 60
    return Design(
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
        systems=system_table(n_systems),
        system_strength=strength,
        assignment=a,
    )


# --------------------------------------------------------------------------- identifiers


def query_texts() -> list[str]:
    """Every scenario's query wordings, concatenated (a query's text code indexes this)."""
    return [q for sc in SCENARIOS for q in sc.queries]


@functools.cache
def doc_names() -> npt.NDArray[np.str_]:
    """Document ids of the collection (``d00001`` …), indexed by collection code."""
    names = np.char.add("d", np.char.zfill(np.arange(1, COLLECTION_SIZE + 1).astype(str), 5))
    return np.asarray(names, dtype=np.str_)


def _id_width(n: int, minimum: int) -> int:
    return max(minimum, len(str(n)))


def session_ids(first: int, n: int, total: int) -> list[str]:
    """Ids of sessions ``first .. first + n - 1`` of ``total`` (zero-padded, at least 3 digits)."""
    w = _id_width(total, 3)
    return [f"s{i:0{w}d}" for i in range(first + 1, first + n + 1)]


def user_ids(first: int, n: int, total: int) -> list[str]:
    """Ids of searchers ``first .. first + n - 1`` of ``total`` (zero-padded, at least 2 digits)."""
    w = _id_width(total, 2)
    return [f"u{i:0{w}d}" for i in range(first + 1, first + n + 1)]


# --------------------------------------------------------------------------- header, judgments


def header_of(d: Design) -> Study:
    """Return the study header of the design: searchers (Table 1 attributes), topics, systems."""
    a = d.user_attrs
    ids = user_ids(0, d.n_users, d.n_users)
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
    k = len(d.systems)
    assigned = d.assignment
    return Study(
        name=f"synthetic portal study ({d.n_sessions} sessions, seed {d.seed}"
        + (f", {k} systems" if k != 2 else "")
        + assigned.label()
        + ")",
        description=(
            "Synthetic family-practice search study generated by sessionval.synth, mirroring the "
            "design of Järvelin et al. (ECIR 2008, section 3.1): 4 decision scenarios, 2 systems, "
            f"{assigned.describe(k)}, queries per session as "
            "in its Table 2, reference judgments 0-3 by one domain expert."
        ),
        grade_scale=GradeScale.default(),
        user_grade_scale=GradeScale.default(),
        users=users,
        topics=tuple(
            Topic(topic_id=sc.topic_id, title=sc.title, description=sc.description)
            for sc in SCENARIOS
        ),
        systems=tuple(System(system_id=s, name=n, description=ds) for s, n, ds in d.systems),
    )


def judgments_of(d: Design) -> pd.DataFrame:
    """List every judged document of every scenario (its pools of grades 0-3), by topic and doc."""
    p = d.pools
    topic_parts, doc_parts, grade_parts = [], [], []
    for t in range(len(SCENARIOS)):
        for c in range(1, N_CAT):
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
            "topic_id": pd.array([SCENARIOS[t].topic_id for t in topic[order]], dtype="string"),
            "doc_id": pd.array(doc_names()[doc[order]].tolist(), dtype="string"),
            "grade": grade[order].astype(np.int16),
            "assessor": pd.array(["expert"] * len(order), dtype="string"),
        }
    )


def check_options(n_sessions: int, seed: int, n_systems: int = 2) -> None:
    """Raise :class:`SessionvalError` unless the options are integers in range.

    ``n_sessions >= 1``, ``seed >= 0`` and ``n_systems >= 2``.
    """
    checks = (("n_sessions", n_sessions, 1), ("seed", seed, 0), ("n_systems", n_systems, 2))
    for name, value, low in checks:
        if isinstance(value, bool) or not isinstance(value, int | np.integer):
            raise SessionvalError(f"{name} must be an integer >= {low}, got {value!r}")
        if value < low:
            raise SessionvalError(f"{name} must be an integer >= {low}, got {value}")


def study_header(
    *,
    n_sessions: int = 120,
    seed: int = 2008,
    n_systems: int = 2,
    assignment: Assignment | None = None,
) -> Study:
    """Return the ``study.json`` header of the synthetic study of this size and seed.

    Examples
    --------
    >>> h = study_header()
    >>> len(h.users), len(h.topics), len(h.systems)
    (30, 4, 2)
    """
    check_options(n_sessions, seed, n_systems)
    return header_of(design_study(n_sessions, seed, n_systems, assignment))

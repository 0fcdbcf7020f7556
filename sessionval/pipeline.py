"""Session evaluation pipeline: a typed configuration and :func:`evaluate`.

``evaluate(frame, judgments, config)`` runs the sDCG pipeline of Järvelin et al.
(2008) on a whole study at once: grades → gains → unjudged policy → session
vectors (duplicates, short lists, scan depth, ideal) → tidy tables.  The
:class:`SessionConfig` (a frozen Pydantic model) holds every parameter; it is
attached to every table (``df.attrs["config"]``) and serialises to JSON so each
number can be traced to its parameters.  Named presets reproduce published
variants (``SessionConfig.preset("jiang-allan-2016")``; table in
``docs/sessions.md``).

Output tables (column names are stable; documented in ``docs/sessions.md``)
---------------------------------------------------------------------------
``SessionEvaluation.per_position()``
    one row per session position: ``session_id, query_pos, rank, position,
    doc_id, doc_rank, grade, gain, sdcg, ideal, nsdcg``.
``SessionEvaluation.per_query()``
    one row per query: ``session_id, user_id, topic_id, system_id, query_pos,
    query_id, qrels_id, n_results, n_available, n_scored, padded, n_repeats, qd,
    dcg, sdcg, ideal_dcg, ndcg, is_last, is_best`` and one column per requested
    single-query measure.
``SessionEvaluation.per_session()``
    one row per session: ``session_id, user_id, topic_id, system_id, n_queries,
    n_positions, sdcg, ideal, nsdcg, avg_pos_sdcg, avg_pos_nsdcg, sdcg_per_query,
    last_sdcg, last_dcg, best_query_pos, best_sdcg, best_dcg, first_rel_query,
    first_rel_rank, first_hrel_query, first_hrel_rank, n_relevant_found,
    n_highly_relevant_found`` and the ``rating_*`` columns of the study.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Final, Literal, cast

import numpy as np
import numpy.typing as npt
import pandas as pd
from pydantic import ConfigDict, Field, field_validator

from .errors import InputFormatError, JudgmentError, MeasureSpecError
from .frame import JudgmentFrame, SessionFrame
from .judgments.gains import (
    GainScheme,
    IdealGains,
    JudgmentIndex,
    NegativePolicy,
    UnjudgedPolicy,
    apply_unjudged,
    gain_scheme,
    ideal_gains,
)
from .metrics._registry import parse_measures
from .metrics.session import (
    DuplicatePolicy,
    IdealRule,
    QueryDiscount,
    RankDiscount,
    parse_short_lists,
    session_vectors,
    weighted_sum,
)
from .metrics.single import RankedLists
from .models._base import Model
from .models.judgments import GradeScale

__all__ = [
    "PRESETS",
    "Positions",
    "SessionConfig",
    "SessionEvaluation",
    "config_from_mapping",
    "evaluate",
]


# ---------------------------------------------------------------------------------------------
# configuration

PRESETS: Final[dict[str, dict[str, Any]]] = {
    "jarvelin-2008": {
        "description": "sDCG as in Järvelin et al. (2008): b=2, bq=4, X=10, gains 0-1-10-100, "
        "rank discount 1+log_b(i), query discount 1+log_bq(q), every duplicate counted, "
        "short lists padded, ideal = topic's ideal top-X repeated per query (the defaults)",
        "citation": "jarvelin2008",
        "params": {},
    },
    "jiang-allan-2016": {
        "description": "sDCG/nsDCG of the CHIIR 2016 session-metrics code: query discount "
        "1/log_bq(q+bq-1), rank discount 1/log_b(r+b-1), gain 2^g-1 (negative grades kept), "
        "top-k of each query (padding adds no gain, and the ideal copy of every query keeps k "
        "positions as in that code), every duplicate counted, ideal = the session's judged pool "
        "sorted, repeated per query (load judgments keyed per session)",
        "citation": "jiang2016",
        "params": {
            "gains": "exp",
            "negative": "keep",
            "discount": "shifted-log",
            "query_discount": "shifted-log",
        },
    },
    "trec-dd-no-repeat": {
        "description": "ideal session without repeated documents (greedy: the largest gains "
        "on the most valuable discounted positions, each relevant document once) as in the "
        "TREC Dynamic Domain jig, with repeats earning nothing; other parameters as "
        "jarvelin-2008",
        "citation": "yang2015dd",
        "params": {"ideal": "no-repeat", "duplicates": "first"},
    },
    "kanoulas-2011-no-qdiscount": {
        "description": "sDCG without query discount (bq -> infinity): the sum of the queries' "
        "DCG@X, as the no-discount baseline of Kanoulas et al. (2011)",
        "citation": "kanoulas2011",
        "params": {"query_discount": "none"},
    },
}
"""Named parameter sets reproducing published variants (``docs/sessions.md`` variant table)."""


class SessionConfig(Model):
    """Every parameter of the session measures (spec section 4); defaults = the paper.

    Defaults are the illustration of Järvelin et al. (2008): ``b = 2``, ``bq = 4``,
    ``X = 10`` (``cutoff``), gains 0-1-10-100, rank discount ``jk2008``, duplicates
    counted every time, short lists padded, reference judgments, the topic's ideal
    repeated per query, per-session normalisation, sessions held after stopping.

    Examples
    --------
    >>> cfg = SessionConfig()
    >>> cfg.b, cfg.bq, cfg.cutoff, cfg.gains, cfg.duplicates, cfg.short_lists
    (2.0, 4.0, 10, '0-1-10-100', 'every', 'pad')
    >>> SessionConfig.model_validate_json(cfg.model_dump_json()) == cfg
    True
    >>> SessionConfig.preset("jiang-allan-2016").query_discount
    'shifted-log'
    """

    b: float = Field(2.0, gt=1, description="log base of the rank discount")
    bq: float = Field(4.0, gt=1, description="log base of the query discount (inf: none)")
    cutoff: int = Field(10, ge=1, description="X: top ranks of each query concatenated")
    scan_depth: Literal["ignore", "replace", "cap"] = Field(
        "ignore",
        description="per-query scan depth from the log: ignore it (X for every query), "
        "replace X by it where known, or cap X by it (min)",
    )
    gains: str | dict[int, float] = Field("0-1-10-100", description="gain scheme")
    negative: NegativePolicy = "clip"
    unjudged: UnjudgedPolicy = "zero"
    judgments: Literal["reference", "searcher"] = Field(
        "reference", description="whose grades drive the gains"
    )
    discount: RankDiscount = "jk2008"
    query_discount: QueryDiscount = "jk2008"
    duplicates: DuplicatePolicy = "every"
    short_lists: str = Field("pad", description="pad, none or min:m")
    ideal: IdealRule = "repeat"
    normalise: Literal["per-session", "of-averages"] = "per-session"
    stopped: Literal["hold", "active"] = "hold"
    empty_ideal: Literal["nan", "zero"] = Field(
        "nan", description="value of nsDCG / nDCG where the ideal is 0"
    )
    best_by: Literal["dcg", "sdcg"] = Field(
        "dcg", description="the best query of a session: highest DCG_q or highest sDCG_q"
    )
    high_grade: int | None = Field(
        None, description="lowest 'highly relevant' grade (None: the top grade of the scale)"
    )
    preset_name: str | None = Field(None, description="preset the configuration started from")

    model_config = ConfigDict(**Model.model_config, ser_json_inf_nan="constants")

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = PRESETS

    @field_validator("short_lists")
    @classmethod
    def _short(cls, v: str) -> str:
        parse_short_lists(v)
        return v

    @field_validator("gains")
    @classmethod
    def _gains(cls, v: str | dict[int, float]) -> str | dict[int, float]:
        gain_scheme(v)
        return v

    @classmethod
    def preset(cls, name: str, **overrides: Any) -> SessionConfig:
        """Return the configuration of a named published variant, with optional overrides.

        Raises
        ------
        MeasureSpecError
            Unknown preset name (the message lists the known ones).
        """
        if name not in PRESETS:
            raise MeasureSpecError(f"unknown session preset {name!r}; known: {', '.join(PRESETS)}")
        params = {**PRESETS[name]["params"], "preset_name": name, **overrides}
        return cls(**params)

    def scheme(self) -> GainScheme:
        """Return the gain scheme object."""
        return gain_scheme(self.gains)


# ---------------------------------------------------------------------------------------------
# chunked runner

_CHUNK_ROWS: Final = 1 << 20
"""Result rows per chunk: bounds the kernels' temporary memory (about 40 arrays of it)."""

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True)
class _Context:
    """Arrays prepared once per evaluation, sliced per chunk of sessions."""

    cfg: SessionConfig
    scheme: GainScheme
    frame: SessionFrame
    qs: IntArray
    qp: IntArray
    depth: IntArray
    query_ideal: IntArray
    ideal: IdealGains
    q_row_off: IntArray
    s_q_off: IntArray
    row_qidx: npt.NDArray[np.integer[Any]]
    row_rank: npt.NDArray[np.integer[Any]]
    doc_codes: npt.NDArray[np.integer[Any]]
    index: JudgmentIndex | None
    q_key: IntArray | None
    doc_map: IntArray | None
    user_grade: FloatArray | None
    high: float

    def grades(self, r0: int, r1: int) -> FloatArray:
        """Grades of result rows ``r0:r1`` (NaN = unjudged)."""
        if self.user_grade is not None:
            return self.user_grade[r0:r1].astype(np.float64)
        if self.index is None or self.q_key is None or self.doc_map is None:
            raise JudgmentError("reference judgments are required to look up grades")
        kc = self.q_key[self.row_qidx[r0:r1]]
        dc = self.doc_map[self.doc_codes[r0:r1]]
        return self.index.lookup_codes(kc, self.index.topics, dc, self.index.docs)

    def chunks(self, target: int | None = None) -> list[tuple[int, int]]:
        """Session ranges ``(s0, s1)`` of about ``target`` rows each (never splitting one)."""
        target = target or _CHUNK_ROWS
        n_s = self.s_q_off.size - 1
        s_row_off = self.q_row_off[self.s_q_off]
        total = int(s_row_off[-1])
        cuts = np.searchsorted(s_row_off, np.arange(target, max(total, 1), target), side="left")
        bounds = np.unique(np.concatenate(([0], cuts, [n_s])))
        return list(zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True))


@dataclass
class _Chunk:
    """Outputs of one chunk: per query, per session and (on request) per position."""

    q: dict[str, npt.NDArray[Any]]
    s: dict[str, npt.NDArray[Any]]
    p: dict[str, npt.NDArray[Any]] | None
    n_unjudged: int
    n_negative: int


def _ratio(num: FloatArray, den: FloatArray, empty: str) -> FloatArray:
    with np.errstate(divide="ignore", invalid="ignore"):
        out: FloatArray = num / den
    out[den == 0] = 0.0 if empty == "zero" else np.nan
    return out


def _run_chunk(ctx: _Context, s0: int, s1: int, *, positions: bool) -> _Chunk:
    """Run the pipeline on sessions ``s0:s1`` (contiguous queries and rows)."""
    cfg = ctx.cfg
    q0, q1 = int(ctx.s_q_off[s0]), int(ctx.s_q_off[s1])
    r0, r1 = int(ctx.q_row_off[q0]), int(ctx.q_row_off[q1])
    n_s = s1 - s0
    grades = ctx.grades(r0, r1)
    n_unj = int(np.count_nonzero(np.isnan(grades)))
    n_neg = int(np.count_nonzero(grades < 0))
    gain = ctx.scheme.gains(grades, negative=cfg.negative)
    local_off = ctx.q_row_off[q0 : q1 + 1] - r0
    rows: IntArray | None = None
    if cfg.unjudged == "zero":
        np.nan_to_num(gain, copy=False, nan=0.0)
    else:
        gain, _, rows = apply_unjudged(gain, local_off, policy=cfg.unjudged)
    if cfg.negative == "clip":
        grades = np.where(grades < 0, 0.0, grades)
    row_q = ctx.row_qidx[r0:r1].astype(np.int64) - q0
    row_rank: npt.ArrayLike | None = ctx.row_rank[r0:r1]
    row_doc: IntArray | None = (
        ctx.doc_codes[r0:r1].astype(np.int64) if cfg.duplicates != "every" else None
    )
    if rows is not None:
        row_q = row_q[rows]
        grades = grades[rows]
        row_rank = None  # condensed lists: ranks move up
        row_doc = row_doc[rows] if row_doc is not None else None
    v = session_vectors(
        row_query=row_q,
        row_gain=gain,
        row_doc=row_doc,
        query_session=ctx.qs[q0:q1] - s0,
        query_pos=ctx.qp[q0:q1],
        query_depth=ctx.depth[q0:q1],
        query_ideal=ctx.query_ideal[q0:q1],
        ideal_offsets=ctx.ideal.offsets,
        ideal_values=ctx.ideal.values,
        n_sessions=n_s,
        b=cfg.b,
        bq=cfg.bq,
        discount=cfg.discount,
        qdiscount=cfg.query_discount,
        duplicates=cfg.duplicates,
        short_lists=cfg.short_lists,
        ideal=cfg.ideal,
        row_rank=row_rank,
    )
    n_pos = np.diff(v.session_offsets)
    pos_s = np.repeat(np.arange(n_s, dtype=np.int64), n_pos)
    ratio = _ratio(v.sdcg, v.ideal, cfg.empty_ideal)
    shown = np.flatnonzero(v.pos_row >= 0)
    krow = v.pos_row[shown]
    frame_row = (rows[krow] if rows is not None else krow) + r0
    g_shown = grades[krow]
    s_out: dict[str, npt.NDArray[Any]] = {
        "n_positions": n_pos,
        "final": v.final,
        "ideal_final": v.ideal_final,
        "sum_sdcg": weighted_sum(pos_s, v.sdcg, n_s),
        "sum_nsdcg": weighted_sum(pos_s, ratio, n_s),
    }
    doc_all = ctx.doc_codes[frame_row].astype(np.int64)
    ndoc = int(doc_all.max(initial=0)) + 1
    for tag, hit in (("rel", g_shown > 0), ("hrel", g_shown >= ctx.high)):
        idx = np.flatnonzero(hit)
        hs = pos_s[shown[idx]]
        fq = np.zeros(n_s, dtype=np.int16)
        fr = np.zeros(n_s, dtype=np.int32)
        found = np.zeros(n_s, dtype=bool)
        if idx.size:
            first = idx[np.r_[True, hs[1:] != hs[:-1]]]
            fs = pos_s[shown[first]]
            found[fs] = True
            fq[fs] = ctx.qp[q0 + v.pos_query[shown[first]]]
            fr[fs] = ctx.row_rank[frame_row[first]]
        s_out[f"first_{tag}_query"] = fq
        s_out[f"first_{tag}_rank"] = fr
        s_out[f"found_{tag}"] = found
        uniq = np.unique(hs * ndoc + doc_all[idx])
        s_out[f"n_{tag}"] = np.bincount(uniq // ndoc, minlength=n_s).astype(np.int32)
    q_out: dict[str, npt.NDArray[Any]] = {
        "n_available": v.n_available,
        "n_repeats": v.n_repeats,
        "n_scored": np.diff(v.slot_offsets),
        "qd": v.qd,
        "dcg": v.dcg,
        "ideal_dcg": v.ideal_dcg,
    }
    p_out = None
    if positions:
        full_row = np.full(v.pos_row.size, -1, dtype=np.int64)
        full_row[shown] = frame_row
        grade_pos = np.full(v.pos_row.size, np.nan)
        grade_pos[shown] = g_shown
        p_out = {
            "session": pos_s + s0,
            "query": v.pos_query + q0,
            "slot": v.pos_slot,
            "frame_row": full_row,
            "grade": grade_pos,
            "gain": v.gain,
            "sdcg": v.sdcg,
            "ideal": v.ideal,
        }
    return _Chunk(q_out, s_out, p_out, n_unj, n_neg)


def _concat(parts: list[dict[str, npt.NDArray[Any]]]) -> dict[str, npt.NDArray[Any]]:
    if not parts:
        return {}
    return {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}


# ---------------------------------------------------------------------------------------------
# result object


@dataclass(frozen=True)
class Positions:
    """Per-position arrays of every session, concatenated in session order.

    ``session`` / ``query`` index ``frame.sessions`` / ``frame.queries``; ``slot`` is
    the rank in the query's slot; ``frame_row`` the row of ``frame.results`` shown
    there (−1 on padding); ``grade``, ``gain`` (credited), ``sdcg`` (``S``),
    ``ideal`` (``I``); ``offsets`` are the sessions' position offsets.
    """

    session: IntArray
    query: IntArray
    slot: IntArray
    frame_row: IntArray
    grade: FloatArray
    gain: FloatArray
    sdcg: FloatArray
    ideal: FloatArray
    offsets: IntArray


@dataclass(frozen=True)
class SessionEvaluation:
    """Result of :func:`evaluate`: per-query and per-session scores and the tables.

    Per-position vectors are not kept (a million sessions have tens of millions of
    positions): :meth:`positions` and :meth:`per_position` recompute them, chunk by
    chunk, when asked.

    Attributes
    ----------
    config
        The configuration used (also in every table's ``attrs["config"]``).
    frame
        The evaluated study.
    queries
        Per-query arrays (``n_available``, ``n_repeats``, ``n_scored``, ``qd``,
        ``dcg``, ``ideal_dcg`` and requested measures), in ``frame.queries`` order.
    sessions
        Per-session arrays (``n_positions``, ``final``, ``ideal_final``,
        ``sum_sdcg``, ``sum_nsdcg``, first-found and found counts).
    n_unjudged, n_negative
        Result rows without a judgment / with a negative grade.
    n_empty_ideal
        Sessions whose ideal is 0 at the end (empty recall base): nsDCG undefined.
    high_grade
        The lowest grade counted as highly relevant.
    measures
        Requested single-query measures (canonical names, the ``per_query`` columns).
    """

    config: SessionConfig
    frame: SessionFrame
    query_session: IntArray
    query_pos: IntArray
    queries: dict[str, npt.NDArray[Any]]
    sessions: dict[str, npt.NDArray[Any]]
    n_unjudged: int
    n_negative: int
    n_empty_ideal: int
    high_grade: float
    measures: tuple[str, ...]
    _ctx: _Context = field(repr=False, compare=False)
    _cache: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def ideal_source(self) -> IdealGains:
        """Ideal gain vectors per judgment key (segment layout) the evaluation used."""
        return self._ctx.ideal

    @property
    def query_ideal(self) -> IntArray:
        """Position of each query's judgment key in :attr:`ideal_source` (−1: none)."""
        return self._ctx.query_ideal

    # ---- helpers
    def _attach(self, df: pd.DataFrame) -> pd.DataFrame:
        df.attrs["config"] = self.config.model_dump(mode="json")
        return df

    def _ratio(self, num: FloatArray, den: FloatArray) -> FloatArray:
        return _ratio(num, den, self.config.empty_ideal)

    def positions(self) -> Positions:
        """Per-position arrays of every session (recomputed chunk by chunk, then cached)."""
        if "positions" not in self._cache:
            parts = [
                _run_chunk(self._ctx, s0, s1, positions=True).p for s0, s1 in self._ctx.chunks()
            ]
            p = _concat([x for x in parts if x is not None])
            n_s = self.frame.n_sessions
            offsets = np.zeros(n_s + 1, dtype=np.int64)
            np.cumsum(self.sessions["n_positions"], out=offsets[1:])
            if not p:
                e = np.zeros(0)
                ei = np.zeros(0, dtype=np.int64)
                p = {
                    "session": ei,
                    "query": ei,
                    "slot": ei,
                    "frame_row": ei,
                    "grade": e,
                    "gain": e,
                    "sdcg": e,
                    "ideal": e,
                }
            self._cache["positions"] = Positions(offsets=offsets, **p)
        pos: Positions = self._cache["positions"]
        return pos

    def nsdcg(self) -> FloatArray:
        """``S[p] / I[p]`` for every position (NaN or 0 where the ideal is 0)."""
        p = self.positions()
        return self._ratio(p.sdcg, p.ideal)

    def row_gains(self) -> tuple[IntArray, FloatArray]:
        """Gain of each result row after the unjudged policy: (frame rows kept, gains)."""
        rows, gain, _ = self._kept_gains()
        return rows, gain

    def ranked_gains(self) -> tuple[IntArray, IntArray, FloatArray]:
        """Each kept result row's query index, rank and gain, after the unjudged policy.

        Under ``condense`` unjudged rows leave their list and later rows move up, so
        ``rank`` is the position in the condensed list; otherwise the logged rank.
        """
        rows, gain, offsets = self._kept_gains()
        qidx = self.frame.results["query_idx"].to_numpy()[rows].astype(np.int64)
        rank = np.arange(qidx.size, dtype=np.int64) - offsets[qidx] + 1
        return qidx, rank, gain

    def _kept_gains(self) -> tuple[IntArray, FloatArray, IntArray]:
        """(frame rows kept, their gains, per-query offsets) after the unjudged policy."""
        ctx = self._ctx
        grades = ctx.grades(0, self.frame.n_results)
        gain = ctx.scheme.gains(grades, negative=self.config.negative)
        gain, offsets, rows = apply_unjudged(gain, ctx.q_row_off, policy=self.config.unjudged)
        return rows, gain, offsets

    # ---- tables
    def per_position(self) -> pd.DataFrame:
        """One row per session position (columns in the module docstring).

        ``rank`` is the rank inside the query's slot (what the discount uses);
        ``doc_rank`` the document's rank in the logged list (<NA> on padded
        positions; differs from ``rank`` under ``drop``/``condense``); ``position``
        runs 1..P within the session.
        """
        if "position" in self._cache:
            df_cached: pd.DataFrame = self._cache["position"]
            return df_cached
        p = self.positions()
        res = self.frame.results
        shown = p.frame_row >= 0
        fr = p.frame_row[shown]
        doc_codes = np.full(shown.size, -1, dtype=np.int64)
        doc_codes[shown] = res["doc_id"].cat.codes.to_numpy()[fr]
        ranks = np.zeros(shown.size, dtype=np.int32)
        ranks[shown] = res["rank"].to_numpy()[fr]
        doc_rank = pd.array(ranks, dtype="Int32")
        doc_rank[~shown] = pd.NA
        within = np.arange(p.session.size, dtype=np.int64) - p.offsets[p.session]
        df = pd.DataFrame(
            {
                "session_id": pd.Categorical.from_codes(
                    p.session,
                    dtype=cast(pd.CategoricalDtype, self.frame.sessions["session_id"].dtype),
                ),
                "query_pos": self.query_pos[p.query].astype(np.int16),
                "rank": p.slot.astype(np.int32),
                "position": (within + 1).astype(np.int32),
                "doc_id": pd.Categorical.from_codes(
                    doc_codes, dtype=cast(pd.CategoricalDtype, res["doc_id"].dtype)
                ),
                "doc_rank": doc_rank,
                "grade": p.grade,
                "gain": p.gain,
                "sdcg": p.sdcg,
                "ideal": p.ideal,
                "nsdcg": self.nsdcg(),
            }
        )
        self._cache["position"] = self._attach(df)
        return df

    def last_and_best(self) -> tuple[IntArray, IntArray]:
        """Return the query index of the last and of the best query of each session (−1: none)."""
        n_s = self.frame.n_sessions
        qs = self.query_session
        nq = qs.size
        last = np.full(n_s, -1, dtype=np.int64)
        best = np.full(n_s, -1, dtype=np.int64)
        if nq == 0:
            return last, best
        ends = np.flatnonzero(np.r_[qs[1:] != qs[:-1], True])
        starts = np.r_[0, ends[:-1] + 1]
        last[qs[ends]] = ends
        dcg = self.queries["dcg"]
        val = dcg if self.config.best_by == "dcg" else dcg * self.queries["qd"]
        top = np.maximum.reduceat(val, starts)
        is_top = val == np.repeat(top, ends - starts + 1)
        idx = np.flatnonzero(is_top)
        first = idx[np.r_[True, qs[idx][1:] != qs[idx][:-1]]]
        best[qs[first]] = first
        return last, best

    def per_query(self) -> pd.DataFrame:
        """One row per query (columns in the module docstring).

        ``dcg`` is ``DCG_q[L_q]`` of the query's slot (duplicate policy applied, no
        query discount); ``sdcg = qd · dcg``; ``ndcg = dcg / ideal_dcg``;
        ``n_scored`` is ``L_q`` (positions the query occupies), ``padded`` is true when
        some of them are padding; ``is_best`` marks the query with the highest
        ``dcg`` (or ``sdcg``, per ``best_by``), the earliest on ties.
        """
        if "query" in self._cache:
            df_cached: pd.DataFrame = self._cache["query"]
            return df_cached
        qa = self.queries
        q = self.frame.queries
        s = self.frame.sessions
        qs = self.query_session
        nq = qs.size
        last, best = self.last_and_best()
        is_last = np.zeros(nq, dtype=bool)
        is_last[last[last >= 0]] = True
        is_best = np.zeros(nq, dtype=bool)
        is_best[best[best >= 0]] = True
        df = pd.DataFrame(
            {
                "session_id": q["session_id"].to_numpy(),
                "user_id": s["user_id"].to_numpy()[qs],
                "topic_id": s["topic_id"].to_numpy()[qs],
                "system_id": s["system_id"].to_numpy()[qs],
                "query_pos": q["query_pos"].to_numpy(),
                "query_id": q["query_id"].to_numpy(),
                "qrels_id": q["qrels_id"].to_numpy(),
                "n_results": q["n_results"].to_numpy(),
                "n_available": qa["n_available"].astype(np.int32),
                "n_scored": qa["n_scored"].astype(np.int32),
                "padded": qa["n_scored"] > qa["n_available"],
                "n_repeats": qa["n_repeats"].astype(np.int32),
                "qd": qa["qd"],
                "dcg": qa["dcg"],
                "sdcg": qa["qd"] * qa["dcg"],
                "ideal_dcg": qa["ideal_dcg"],
                "ndcg": self._ratio(qa["dcg"], qa["ideal_dcg"]),
                "is_last": is_last,
                "is_best": is_best,
            }
        )
        for col in ("session_id", "user_id", "topic_id", "system_id", "qrels_id"):
            df[col] = df[col].astype(q[col].dtype if col in q else s[col].dtype)
        for name in self.measures:
            df[name] = qa[name]
        self._cache["query"] = self._attach(df)
        return df

    def per_session(self) -> pd.DataFrame:
        """One row per session with every summary score of spec section 4.

        ``sdcg`` = ``S[P]``, ``ideal`` = ``I[P]``, ``nsdcg`` = their ratio;
        ``avg_pos_*`` = mean over the session's ``P`` positions (avg-pos of
        Järvelin & Kekäläinen 2002); ``sdcg_per_query`` = ``sdcg / n_queries`` (Jiang
        & Allan 2016's sDCG/q); ``last_*`` / ``best_*`` = the last / best query's
        ``sdcg`` and ``dcg``; ``first_rel_*`` / ``first_hrel_*`` = query position and
        logged rank of the first scored document with grade > 0 / grade >=
        ``high_grade`` (<NA> when none); ``n_relevant_found`` /
        ``n_highly_relevant_found`` = distinct such documents shown in the session
        vector.  Then the study's ``rating_*`` columns.
        """
        if "session" in self._cache:
            df_cached: pd.DataFrame = self._cache["session"]
            return df_cached
        sa = self.sessions
        qa = self.queries
        s = self.frame.sessions
        n_s = self.frame.n_sessions
        n_pos = sa["n_positions"]
        n_queries = np.bincount(self.query_session, minlength=n_s)
        with np.errstate(divide="ignore", invalid="ignore"):
            avg_pos = sa["sum_sdcg"] / n_pos
            avg_pos_n = sa["sum_nsdcg"] / n_pos
            per_q = sa["final"] / n_queries
        last, best = self.last_and_best()
        qsdcg = qa["qd"] * qa["dcg"]

        def pick(arr: npt.NDArray[Any], idx: IntArray) -> FloatArray:
            out: FloatArray = np.full(idx.size, np.nan)
            ok = idx >= 0
            out[ok] = arr[idx[ok]]
            return out

        def nullable(values: npt.NDArray[Any], found: npt.NDArray[np.bool_]) -> Any:
            return pd.arrays.IntegerArray(np.asarray(values), ~np.asarray(found, dtype=bool))

        best_pos = np.zeros(n_s, dtype=np.int16)
        best_pos[best >= 0] = self.query_pos[best[best >= 0]]
        df = pd.DataFrame(
            {
                "session_id": s["session_id"],
                "user_id": s["user_id"],
                "topic_id": s["topic_id"],
                "system_id": s["system_id"],
                "n_queries": n_queries.astype(np.int16),
                "n_positions": n_pos.astype(np.int32),
                "sdcg": sa["final"],
                "ideal": sa["ideal_final"],
                "nsdcg": self._ratio(sa["final"], sa["ideal_final"]),
                "avg_pos_sdcg": avg_pos,
                "avg_pos_nsdcg": avg_pos_n,
                "sdcg_per_query": per_q,
                "last_sdcg": pick(qsdcg, last),
                "last_dcg": pick(qa["dcg"], last),
                "best_query_pos": nullable(best_pos, best >= 0),
                "best_sdcg": pick(qsdcg, best),
                "best_dcg": pick(qa["dcg"], best),
                "first_rel_query": nullable(sa["first_rel_query"], sa["found_rel"]),
                "first_rel_rank": nullable(sa["first_rel_rank"], sa["found_rel"]),
                "first_hrel_query": nullable(sa["first_hrel_query"], sa["found_hrel"]),
                "first_hrel_rank": nullable(sa["first_hrel_rank"], sa["found_hrel"]),
                "n_relevant_found": sa["n_rel"],
                "n_highly_relevant_found": sa["n_hrel"],
            }
        )
        for c in s.columns:
            if str(c).startswith("rating_"):
                df[c] = s[c].to_numpy()
        self._cache["session"] = self._attach(df)
        return df

    def summary(self) -> dict[str, Any]:
        """Return the counts a report needs (sessions, queries, unjudged, empty ideals)."""
        return {
            "n_sessions": self.frame.n_sessions,
            "n_queries": int(self.query_session.size),
            "n_positions": int(self.sessions["n_positions"].sum()),
            "n_unjudged": self.n_unjudged,
            "n_negative": self.n_negative,
            "n_empty_ideal": self.n_empty_ideal,
            "config": self.config.model_dump(mode="json"),
        }


# ---------------------------------------------------------------------------------------------
# evaluate


# ---------------------------------------------------------------------------------------------
# evaluate


def _searcher_ideal(
    frame: SessionFrame, scheme: GainScheme, negative: NegativePolicy
) -> IdealGains:
    """Recall base from the searchers' own grades: max grade per (qrels_id, document)."""
    res = frame.results
    ug = res["user_grade"].to_numpy(dtype=np.float64, na_value=np.nan)
    ok = ~np.isnan(ug)
    qcat = frame.queries["qrels_id"]
    key = qcat.to_numpy()[res["query_idx"].to_numpy()[ok]]
    t = pd.DataFrame({"topic_id": key, "doc_id": res["doc_id"].to_numpy()[ok], "grade": ug[ok]})
    t = t.groupby(["topic_id", "doc_id"], observed=True, sort=False)["grade"].max().reset_index()
    table = pd.DataFrame(
        {
            "topic_id": pd.Categorical(
                t["topic_id"].astype(str), categories=qcat.cat.categories.astype(str)
            ),
            "doc_id": t["doc_id"].astype(str).astype("category"),
            "grade": t["grade"].astype(np.int16),
            "assessor": pd.Categorical(["searcher"] * len(t)),
        }
    )
    scale = frame.grade_scale or GradeScale.from_grades(sorted({int(x) for x in t["grade"]}) or [0])
    return ideal_gains(
        JudgmentFrame(table, scale, source="searchers' grades"), scheme, negative=negative
    )


def _check_order(
    query_session: npt.NDArray[np.int64], query_pos: npt.NDArray[np.int64], source: str
) -> None:
    if query_session.size < 2:
        return
    ds = np.diff(query_session)
    bad = (ds < 0) | ((ds == 0) & (np.diff(query_pos) != 1))
    if bad.any():
        i = int(np.flatnonzero(bad)[0]) + 1
        raise InputFormatError(
            f"{source}: queries table row {i}: queries must be grouped by session in session "
            f"order with positions 1..n (got session index {int(query_session[i])}, "
            f"query_pos {int(query_pos[i])} after {int(query_pos[i - 1])})"
        )


def evaluate(
    frame: SessionFrame,
    judgments: JudgmentFrame | None,
    config: SessionConfig | None = None,
    *,
    measures: Sequence[str] = (),
) -> SessionEvaluation:
    """Score every session of a study with sDCG and its summaries.

    Parameters
    ----------
    frame
        The study (results sorted by query, queries grouped by session).
    judgments
        Reference judgments keyed by ``queries.qrels_id``; may be ``None`` with
        ``config.judgments = "searcher"`` (the ideal then pools the searchers' grades).
    config
        Parameters (default: the paper's, :class:`SessionConfig`).
    measures
        Single-query measures to add to :meth:`SessionEvaluation.per_query`, in the
        measure grammar of :mod:`sessionval.metrics` (``"nDCG(gain=0-1-10-100)@10"``,
        ``"AP"``, ``"RR"``); each is computed on every query's own logged list with
        its own parameters (the registry's defaults, not the session's), using the
        configuration's judgment source, negative and unjudged policies.  The column
        is the measure's canonical name.

    Returns
    -------
    SessionEvaluation

    Raises
    ------
    JudgmentError
        No judgments for the reference source; unjudged documents under ``error``.
    MeasureSpecError
        An invalid option or measure.
    InputFormatError
        The frame's queries are not grouped by session.

    Notes
    -----
    Järvelin et al. (2008), sections 2.2 and 3.3: ``sDCG_q = DCG_q / (1 + log_bq q)``,
    top-X of each query concatenated, the ideal session = the topic's ideal top-X
    repeated and discounted the same way, ``nsDCG = S / I`` component-wise.
    Sessions are processed in chunks of about a million result rows (a loop over
    chunks, each fully vectorised), so memory stays bounded; per-position vectors
    are recomputed only when asked for.

    Examples
    --------
    A one-query session equals the query's DCG (rank discount ``1 + log_2 i``):

    >>> from sessionval.io.tables import frame_from_flat
    >>> flat = pd.DataFrame({"session_id": "s", "user_id": "u", "topic_id": "T",
    ...     "system_id": "S", "query_pos": 1, "rank": [1, 2, 3], "doc_id": ["a", "b", "c"]})
    >>> frame, _ = frame_from_flat(flat)
    >>> qrels = pd.DataFrame({"topic_id": "T", "doc_id": ["a", "c"], "grade": [1, 3],
    ...     "assessor": ""}).astype({"topic_id": "category", "doc_id": "category",
    ...     "grade": "int16", "assessor": "category"})
    >>> ev = evaluate(frame, JudgmentFrame(qrels, GradeScale.default()))
    >>> round(float(ev.per_session()["sdcg"][0]), 4)  # 1/1 + 100/(1 + log2 3)
    39.6853
    """
    cfg = config or SessionConfig()
    scheme = cfg.scheme()
    q = frame.queries
    qs = q["session_id"].cat.codes.to_numpy().astype(np.int64)
    qp = q["query_pos"].to_numpy().astype(np.int64)
    _check_order(qs, qp, frame.source)
    q_row_off = frame.query_offsets()
    if int(q_row_off[-1]) != frame.n_results:
        raise InputFormatError(
            f"{frame.source}: queries.n_results sums to {int(q_row_off[-1])} but results has "
            f"{frame.n_results} rows"
        )
    parsed = parse_measures(measures) if measures else []
    if cfg.unjudged not in ("zero", "condense", "error"):  # pragma: no cover - pydantic
        raise MeasureSpecError(f"unjudged policy {cfg.unjudged!r} unknown")
    res = frame.results
    index: JudgmentIndex | None = None
    q_key = doc_map = None
    user_grade = None
    qcat = q["qrels_id"].cat
    if cfg.judgments == "reference":
        if judgments is None:
            raise JudgmentError(
                "judgment source 'reference' needs judgments (qrels); none were given"
            )
        index = JudgmentIndex.build(judgments)
        ideal = ideal_gains(judgments, scheme, negative=cfg.negative)
        scale: GradeScale | None = judgments.scale
        kmap = np.append(index.topics.get_indexer(pd.Index(qcat.categories)), -1).astype(np.int64)
        q_key = kmap[qcat.codes.to_numpy().astype(np.int64)]
        doc_map = np.append(
            index.docs.get_indexer(pd.Index(res["doc_id"].cat.categories)), -1
        ).astype(np.int64)
    else:
        ideal = _searcher_ideal(frame, scheme, cfg.negative)
        scale = frame.grade_scale
        user_grade = res["user_grade"].to_numpy(dtype=np.float64, na_value=np.nan)
    query_ideal = ideal.positions(q["qrels_id"])
    if cfg.high_grade is not None:
        high = float(cfg.high_grade)
    elif scale is not None:
        high = float(max(scale.grades))
    else:
        observed = user_grade[~np.isnan(user_grade)] if user_grade is not None else np.zeros(0)
        high = float(observed.max()) if observed.size else float("inf")

    x = cfg.cutoff
    depth = np.full(len(q), x, dtype=np.int64)
    if cfg.scan_depth != "ignore":
        sd = q["scan_depth"].to_numpy(dtype=np.float64, na_value=np.nan)
        known = ~np.isnan(sd)
        if cfg.scan_depth == "replace":
            depth[known] = sd[known].astype(np.int64)
        else:
            depth[known] = np.minimum(sd[known].astype(np.int64), x)

    n_s = frame.n_sessions
    s_q_off = np.zeros(n_s + 1, dtype=np.int64)
    np.cumsum(np.bincount(qs, minlength=n_s), out=s_q_off[1:])
    ctx = _Context(
        cfg=cfg,
        scheme=scheme,
        frame=frame,
        qs=qs,
        qp=qp,
        depth=depth,
        query_ideal=query_ideal,
        ideal=ideal,
        q_row_off=q_row_off,
        s_q_off=s_q_off,
        row_qidx=res["query_idx"].to_numpy(),
        row_rank=res["rank"].to_numpy(),
        doc_codes=res["doc_id"].cat.codes.to_numpy(),
        index=index,
        q_key=q_key,
        doc_map=doc_map,
        user_grade=user_grade,
        high=high,
    )
    chunks = [_run_chunk(ctx, s0, s1, positions=False) for s0, s1 in ctx.chunks()]
    qa = _concat([c.q for c in chunks])
    sa = _concat([c.s for c in chunks])
    if not chunks:  # a study without sessions
        qa = {
            k: np.zeros(0)
            for k in (
                "n_available",
                "n_repeats",
                "n_scored",
                "qd",
                "dcg",
                "ideal_dcg",
            )
        }
    if parsed:
        # single-query measures from the registry, on each query's own logged list
        lists = RankedLists.from_frame(
            frame, judgments, source=cfg.judgments, negative=cfg.negative, unjudged=cfg.unjudged
        )
        for m in parsed:
            qa[repr(m)] = m.compute(lists, empty=cfg.empty_ideal)
    return SessionEvaluation(
        config=cfg,
        frame=frame,
        query_session=qs,
        query_pos=qp,
        queries=qa,
        sessions=sa,
        n_unjudged=sum(c.n_unjudged for c in chunks),
        n_negative=sum(c.n_negative for c in chunks),
        n_empty_ideal=int(np.count_nonzero(sa["ideal_final"] == 0)) if chunks else 0,
        high_grade=high,
        measures=tuple(repr(m) for m in parsed),
        _ctx=ctx,
    )


def config_from_mapping(values: Mapping[str, Any]) -> SessionConfig:
    """Build a :class:`SessionConfig` from a mapping, honouring a ``preset`` key first."""
    vals = dict(values)
    name = vals.pop("preset", None)
    if name:
        return SessionConfig.preset(str(name), **vals)
    return SessionConfig(**vals)

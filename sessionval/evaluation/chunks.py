"""One chunk of whole sessions through the sDCG pipeline: the unit an engine runs.

:class:`ChunkContext` holds what an evaluation prepares once (plain arrays and
frozen typed values, so it pickles); :func:`run_chunk` is pure: it turns the
sessions ``s0:s1`` into per-query, per-session and (on request) per-position
arrays with the kernels of :mod:`sessionval.kernels`.  An
:class:`~sessionval.evaluation.engine.Engine` decides where chunks run.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from .._types import BoolArray, FloatArray, IntArray
from ..errors import JudgmentError
from ..judgments.gains import GainScheme, NegativePolicy
from ..judgments.lookup import GradeLookup
from ..judgments.unjudged import UnjudgedPolicy, apply_unjudged
from ..kernels.segments import (
    gather_ranges,
    offsets_from_counts,
    segment_ids,
    segment_ranks,
    segment_sum,
)
from ..kernels.session import SessionParams, SessionVectors, session_vectors
from ..measures.session import SessionView, normalise

__all__ = [
    "QUERY_ARRAYS",
    "SESSION_ARRAYS",
    "ChunkContext",
    "ChunkResult",
    "PositionMeasure",
    "concat_parts",
    "run_chunk",
]

PositionMeasure = tuple[str, Callable[..., FloatArray], tuple[tuple[str, Any], ...]]
"""A positional session measure a chunk computes: (column, ``fn(view, **params)``, params)."""


@dataclass(frozen=True)
class ChunkContext:
    """Everything a chunk of sessions needs, prepared once per evaluation.

    Queries are grouped by session and results by query (segment layout:
    ``session_query_offsets``, ``query_row_offsets``).  Grades come from the
    prepared reference join (``lookup`` with each query's judgment-key code in
    ``query_keys``) or from the searchers' own grades (``user_grade``).  Every
    field is an array or a frozen value.

    Parameters
    ----------
    params
        The session kernel's typed parameters.
    scheme, negative, unjudged, empty_ideal
        Gain scheme, negative-grade, unjudged and empty-ideal policies.
    query_session, query_pos, query_cutoff, query_ideal
        Per query: session index, position, cut-off (X or its scan depth) and
        position of its judgment key in ``ideal_offsets`` (−1: none).
    ideal_offsets, ideal_values
        Ideal gains per judgment key (segment layout, descending).
    query_row_offsets, session_query_offsets
        Rows per query and queries per session.
    row_query, row_rank, doc_codes
        Per result row: query index, logged rank, document code.
    lookup, query_keys, user_grade
        The grade source (see above).
    high
        Lowest grade counted as highly relevant.
    session_base, query_base, row_base
        Index of this context's first session, query and result row in the whole
        study: 0, except in a context :meth:`restrict` cut out of a larger one (the
        per-position indices a chunk reports are then still the study's).
    extra
        Positional session measures to compute on each chunk's
        :class:`~sessionval.measures.session.SessionView` (their values become
        per-session arrays named by their column).
    gain_top, cutoff, max_queries
        What the view reports: the gain of the scale's top grade, X, the query limit.
    top_rows
        Whether a chunk may take only the rows a query can show (its first
        ``query_cutoff`` rows) through the gains and the slots: true when no policy
        moves a later row up (no ``drop``, no ``condense``) and every grade of the
        judgments has a gain (decided by
        :func:`~sessionval.evaluation.session.chunk_context`); the other rows are
        still joined, and counted as unjudged or negative.
    """

    params: SessionParams
    scheme: GainScheme
    negative: NegativePolicy
    unjudged: UnjudgedPolicy
    empty_ideal: str
    query_session: IntArray
    query_pos: IntArray
    query_cutoff: IntArray
    query_ideal: IntArray
    ideal_offsets: IntArray
    ideal_values: FloatArray
    query_row_offsets: IntArray
    session_query_offsets: IntArray
    row_query: npt.NDArray[np.integer[Any]]
    row_rank: npt.NDArray[np.integer[Any]]
    doc_codes: npt.NDArray[np.integer[Any]]
    lookup: GradeLookup | None
    query_keys: IntArray | None
    user_grade: FloatArray | None
    high: float
    session_base: int = 0
    query_base: int = 0
    row_base: int = 0
    extra: tuple[PositionMeasure, ...] = ()
    gain_top: float = 1.0
    cutoff: int = 10
    max_queries: int | None = None
    top_rows: bool = False

    @property
    def n_sessions(self) -> int:
        """Number of sessions."""
        return int(self.session_query_offsets.size - 1)

    @property
    def session_row_offsets(self) -> IntArray:
        """Result rows per session (segment layout), what an engine cuts chunks by."""
        out: IntArray = self.query_row_offsets[self.session_query_offsets]
        return out

    def restrict(self, s0: int, s1: int) -> ChunkContext:
        """The context of sessions ``s0:s1`` alone: its arrays sliced and re-based.

        What a distributed engine ships to a worker: only the rows of those
        sessions, plus the parts every chunk shares (the grade lookup and the
        ideal gains, which an engine broadcasts once).  ``run_chunk(sub, 0, s1 - s0)``
        equals ``run_chunk(self, s0, s1)``, indices included.
        """
        q0, q1 = int(self.session_query_offsets[s0]), int(self.session_query_offsets[s1])
        r0, r1 = int(self.query_row_offsets[q0]), int(self.query_row_offsets[q1])

        def rows(a: npt.NDArray[Any] | None) -> Any:
            return None if a is None else a[r0:r1]

        return replace(
            self,
            query_session=self.query_session[q0:q1] - s0,
            query_pos=self.query_pos[q0:q1],
            query_cutoff=self.query_cutoff[q0:q1],
            query_ideal=self.query_ideal[q0:q1],
            query_row_offsets=self.query_row_offsets[q0 : q1 + 1] - r0,
            session_query_offsets=self.session_query_offsets[s0 : s1 + 1] - q0,
            row_query=self.row_query[r0:r1] - q0,
            row_rank=self.row_rank[r0:r1],
            doc_codes=self.doc_codes[r0:r1],
            query_keys=None if self.query_keys is None else self.query_keys[q0:q1],
            user_grade=rows(self.user_grade),
            session_base=self.session_base + s0,
            query_base=self.query_base + q0,
            row_base=self.row_base + r0,
        )

    def grades(self, q0: int, q1: int) -> FloatArray:
        """Grades of the result rows of queries ``q0:q1`` (NaN = unjudged)."""
        r0, r1 = int(self.query_row_offsets[q0]), int(self.query_row_offsets[q1])
        if self.user_grade is not None:
            return self.user_grade[r0:r1].astype(np.float64)
        if self.lookup is None or self.query_keys is None:
            raise JudgmentError("reference judgments are required to look up grades")
        return self.lookup.lists(
            self.query_keys[q0:q1],
            np.diff(self.query_row_offsets[q0 : q1 + 1]),
            self.doc_codes[r0:r1],
        )


@dataclass
class ChunkResult:
    """Outputs of one chunk: per query, per session and (on request) per position."""

    q: dict[str, npt.NDArray[Any]]
    s: dict[str, npt.NDArray[Any]]
    p: dict[str, npt.NDArray[Any]] | None
    n_unjudged: int
    n_negative: int


@dataclass(frozen=True)
class _Rows:
    """A chunk's result rows after the gain, negative and unjudged policies."""

    grades: FloatArray  # kept rows (negative grades clipped under "clip")
    gain: FloatArray
    query: IntArray  # chunk-local query index
    rank: IntArray | None  # logged rank when the lists were not condensed
    doc: IntArray | None  # document codes when the duplicate policy needs them
    kept: IntArray | None  # kept rows' positions among the chunk's rows (condense, top rows)
    n_unjudged: int
    n_negative: int
    n_available: IntArray | None = None  # rows per query when only the top rows were kept


def _top_rows(ctx: ChunkContext, q0: int, q1: int, n_unj: int, n_neg: int) -> IntArray | None:
    """The chunk's rows a query can show (its first ``query_cutoff``), or ``None``: all rows.

    ``None`` unless :attr:`ChunkContext.top_rows`, and when an ``error`` policy is about
    to raise (its message counts every row).
    """
    if not ctx.top_rows or (n_unj and ctx.unjudged == "error"):
        return None
    if n_neg and ctx.negative == "error":
        return None
    local_off = ctx.query_row_offsets[q0 : q1 + 1] - int(ctx.query_row_offsets[q0])
    # the frame's rows of a query are ranks 1..k in order: the first min(k, cut-off)
    shown = np.minimum(np.diff(local_off), ctx.query_cutoff[q0:q1])
    return gather_ranges(local_off[:-1], np.maximum(shown, 0))


def _rows(ctx: ChunkContext, q0: int, q1: int) -> _Rows:
    """Step 1: grades -> gains -> unjudged policy for the rows of queries ``q0:q1``.

    Every row's grade is joined and counted (unjudged, negative); with
    :attr:`ChunkContext.top_rows` only the rows a query can show go on.
    """
    r0, r1 = int(ctx.query_row_offsets[q0]), int(ctx.query_row_offsets[q1])
    grades = ctx.grades(q0, q1)
    n_unj = int(np.count_nonzero(np.isnan(grades)))
    n_neg = int(np.count_nonzero(grades < 0))
    kept = _top_rows(ctx, q0, q1, n_unj, n_neg)
    if kept is not None:
        grades = grades[kept]
    gain = ctx.scheme.gains(grades, negative=ctx.negative)
    condensed = False
    if kept is not None or ctx.unjudged == "zero":  # "error" with a NaN left raised above
        np.nan_to_num(gain, copy=False, nan=0.0)
    else:
        local_off = ctx.query_row_offsets[q0 : q1 + 1] - r0
        gain, _, kept = apply_unjudged(gain, local_off, policy=ctx.unjudged)
        grades, condensed = grades[kept], True
    if ctx.negative == "clip":
        grades = np.where(grades < 0, 0.0, grades)
    query = _local(ctx.row_query[r0:r1], kept) - q0
    rank = None if condensed else _local(ctx.row_rank[r0:r1], kept)  # condensed: ranks move up
    doc = _local(ctx.doc_codes[r0:r1], kept) if ctx.params.duplicates != "every" else None
    every = None if kept is None or condensed else np.diff(ctx.query_row_offsets[q0 : q1 + 1])
    return _Rows(grades, gain, query, rank, doc, kept, n_unj, n_neg, every)


def _local(values: npt.NDArray[np.integer[Any]], kept: IntArray | None) -> IntArray:
    """A chunk's row values, of the rows kept (all when ``None``), as int64."""
    out: IntArray = (values if kept is None else values[kept]).astype(np.int64, copy=False)
    return out


def _first_found(
    ctx: ChunkContext,
    hit: BoolArray,
    shown: IntArray,
    pos_s: IntArray,
    v: SessionVectors,
    q0: int,
    frame_row: IntArray,
    doc_all: IntArray,
    n_s: int,
) -> tuple[npt.NDArray[Any], ...]:
    """First query and rank of a shown hit per session, whether one was found, distinct hits."""
    idx = np.flatnonzero(hit)
    hs = pos_s[shown[idx]]
    fq = np.zeros(n_s, dtype=np.int16)
    fr = np.zeros(n_s, dtype=np.int32)
    found = np.zeros(n_s, dtype=bool)
    if idx.size:
        first = idx[np.r_[True, hs[1:] != hs[:-1]]]
        fs = pos_s[shown[first]]
        found[fs] = True
        fq[fs] = ctx.query_pos[q0 + v.pos_query[shown[first]]]
        fr[fs] = ctx.row_rank[frame_row[first]]
    ndoc = int(doc_all.max(initial=0)) + 1
    # distinct (session, document) pairs: the keys come grouped by session, so a plain sort
    # is nearly linear (np.unique takes ~20x longer on them)
    keys = np.sort(hs * ndoc + doc_all[idx])
    uniq = keys[np.r_[True, keys[1:] != keys[:-1]]] if keys.size else keys
    return fq, fr, found, np.bincount(uniq // ndoc, minlength=n_s).astype(np.int32)


def run_chunk(ctx: ChunkContext, s0: int, s1: int, *, positions: bool = False) -> ChunkResult:
    """Run the pipeline on sessions ``s0:s1`` (contiguous queries and rows); pure.

    Steps: rows (grades, gains, unjudged policy), the session vectors, then the
    per-session sums, the first relevant and highly relevant documents found and,
    with ``positions``, the per-position arrays.
    """
    q0, q1 = int(ctx.session_query_offsets[s0]), int(ctx.session_query_offsets[s1])
    r0 = int(ctx.query_row_offsets[q0])
    n_s = s1 - s0
    rows = _rows(ctx, q0, q1)
    v = session_vectors(
        row_query=rows.query,
        row_gain=rows.gain,
        row_doc=rows.doc,
        query_session=ctx.query_session[q0:q1] - s0,
        query_pos=ctx.query_pos[q0:q1],
        query_cutoff=ctx.query_cutoff[q0:q1],
        query_ideal=ctx.query_ideal[q0:q1],
        ideal_offsets=ctx.ideal_offsets,
        ideal_values=ctx.ideal_values,
        n_sessions=n_s,
        params=ctx.params,
        row_rank=rows.rank,
    )
    n_pos = np.diff(v.session_offsets)
    pos_s = segment_ids(v.session_offsets)
    shown = np.flatnonzero(v.pos_row >= 0)
    krow = v.pos_row[shown]
    frame_row = (rows.kept[krow] if rows.kept is not None else krow) + r0
    g_shown = rows.grades[krow]
    doc_all = ctx.doc_codes[frame_row].astype(np.int64)
    s_out: dict[str, npt.NDArray[Any]] = {
        "n_positions": n_pos,
        "final": v.final,
        "ideal_final": v.ideal_final,
        "sum_sdcg": segment_sum(v.sdcg, pos_s, n_s),
        "sum_nsdcg": segment_sum(normalise(v.sdcg, v.ideal, ctx.empty_ideal), pos_s, n_s),
    }
    for tag, hit in (("rel", g_shown > 0), ("hrel", g_shown >= ctx.high)):
        fq, fr, found, n_found = _first_found(
            ctx, hit, shown, pos_s, v, q0, frame_row, doc_all, n_s
        )
        s_out[f"first_{tag}_query"] = fq
        s_out[f"first_{tag}_rank"] = fr
        s_out[f"found_{tag}"] = found
        s_out[f"n_{tag}"] = n_found
    q_out: dict[str, npt.NDArray[Any]] = {
        "n_available": v.n_available if rows.n_available is None else rows.n_available,
        "n_repeats": v.n_repeats,
        "n_scored": np.diff(v.slot_offsets),
        "qd": v.qd,
        "dcg": v.dcg,
        "ideal_dcg": v.ideal_dcg,
    }
    if ctx.extra:
        view = _view(ctx, v, (s0, s1), q0, shown, doc_all)
        for name, fn, params in ctx.extra:
            s_out[name] = fn(view, **dict(params))
    p_out = None
    if positions:
        full_row = np.full(v.pos_row.size, -1, dtype=np.int64)
        full_row[shown] = frame_row + ctx.row_base
        grade_pos = np.full(v.pos_row.size, np.nan)
        grade_pos[shown] = g_shown
        p_out = {
            "session": pos_s + (s0 + ctx.session_base),
            "query": v.pos_query + (q0 + ctx.query_base),
            "slot": v.pos_slot,
            "frame_row": full_row,
            "grade": grade_pos,
            "gain": v.gain,
            "sdcg": v.sdcg,
            "ideal": v.ideal,
        }
    return ChunkResult(q_out, s_out, p_out, rows.n_unjudged, rows.n_negative)


def _session_ideal(
    ctx: ChunkContext, q0: int, n_s: int, session_q_off: IntArray, limit: IntArray
) -> tuple[IntArray, FloatArray]:
    """Each session's ideal gains (its first query's judgment key), at most ``limit`` each."""
    key = np.full(n_s, -1, dtype=np.int64)
    has = np.diff(session_q_off) > 0
    key[has] = ctx.query_ideal[q0 + session_q_off[:-1][has]]
    ioff = ctx.ideal_offsets
    safe = np.maximum(key, 0)
    length = np.zeros(n_s, dtype=np.int64)
    if ioff.size > 1:
        length = np.where(key >= 0, np.minimum(ioff[safe + 1] - ioff[safe], limit), 0)
    off = offsets_from_counts(length)
    seg = segment_ids(off)
    values = ctx.ideal_values[ioff[safe[seg]] + segment_ranks(off, seg) - 1]
    return off, values


def _view(
    ctx: ChunkContext,
    v: SessionVectors,
    sessions: tuple[int, int],
    q0: int,
    shown: IntArray,
    shown_doc: IntArray,
) -> SessionView:
    """The chunk's session positions (sessions ``s0:s1``) as a positional measure reads them."""
    s0, s1 = sessions
    n_s = s1 - s0
    n_q = v.qd.size
    query_session = ctx.query_session[q0 : q0 + n_q] - s0
    session_q_off = offsets_from_counts(np.bincount(query_session, minlength=n_s))
    is_shown = np.zeros(v.pos_row.size, dtype=bool)
    is_shown[shown] = True
    doc = np.full(v.pos_row.size, -1, dtype=np.int64)
    doc[shown] = shown_doc
    n_queries = np.diff(session_q_off)
    grid = n_queries if ctx.max_queries is None else np.full(n_s, ctx.max_queries)
    limit = np.maximum(np.diff(v.session_offsets), grid * ctx.cutoff) + 1
    i_off, i_val = _session_ideal(ctx, q0, n_s, session_q_off, limit)
    return SessionView(
        n_sessions=n_s,
        session_offsets=v.session_offsets,
        slot_offsets=v.slot_offsets,
        query_session=query_session,
        query_pos=ctx.query_pos[q0 : q0 + n_q],
        pos_query=v.pos_query,
        pos_slot=v.pos_slot,
        gain=v.gain,
        shown=is_shown,
        doc=doc,
        ideal_offsets=i_off,
        ideal_values=i_val,
        gain_top=ctx.gain_top,
        cutoff=ctx.cutoff,
        max_queries=ctx.max_queries,
        empty=ctx.empty_ideal,
    )


QUERY_ARRAYS: tuple[str, ...] = ("n_available", "n_repeats", "n_scored", "qd", "dcg", "ideal_dcg")
"""Per-query arrays of a chunk (what a study without sessions gets empty)."""

SESSION_ARRAYS: tuple[tuple[str, type[np.generic]], ...] = (
    ("n_positions", np.int64),
    ("final", np.float64),
    ("ideal_final", np.float64),
    ("sum_sdcg", np.float64),
    ("sum_nsdcg", np.float64),
    *(
        (name.format(tag), dtype)
        for tag in ("rel", "hrel")
        for name, dtype in (
            ("first_{}_query", np.int16),
            ("first_{}_rank", np.int32),
            ("found_{}", np.bool_),
            ("n_{}", np.int32),
        )
    ),
)
"""Per-session arrays of a chunk (what a study without sessions gets empty)."""


def concat_parts(parts: list[dict[str, npt.NDArray[Any]]]) -> dict[str, npt.NDArray[Any]]:
    """Concatenate the chunks' arrays of one kind, key by key, in chunk order."""
    if not parts:
        return {}
    return {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}

"""The result of a session evaluation: per-position, per-query and per-session tables.

:class:`SessionEvaluation` keeps per-query and per-session arrays; per-position
vectors are recomputed chunk by chunk through the evaluation's engine when asked
for (a million sessions have tens of millions of positions).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any, cast

import numpy as np
import numpy.typing as npt
import pandas as pd

from .._types import FloatArray, IntArray
from ..errors import SessionvalError
from ..frame import SessionFrame
from ..judgments.ideal import IdealGains
from ..judgments.unjudged import apply_unjudged
from ..kernels.segments import offsets_from_counts, segment_ids, segment_ranks
from ..measures.registry import parse_measures
from ..measures.session import normalise
from ..validate.memory import release_free_memory
from .chunks import ChunkContext, run_chunk
from .columns import QUERY_IDS, QUERY_SCORES, SESSION_IDS, SESSION_SCORES, ordered_table
from .config import SessionConfig
from .engine import Engine
from .protocol import EvaluationResult, LegacySummary, summarise_long

__all__ = [
    "QUERY_IDS",
    "QUERY_SCORES",
    "SESSION_IDS",
    "SESSION_SCORES",
    "PositionFill",
    "Positions",
    "SessionEvaluation",
]


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

    def block(self, lo: int, hi: int) -> Positions:
        """Positions ``lo .. hi - 1`` (views; ``offsets`` stay the sessions')."""
        cut = slice(lo, hi)
        return replace(
            self,
            session=self.session[cut],
            query=self.query[cut],
            slot=self.slot[cut],
            frame_row=self.frame_row[cut],
            grade=self.grade[cut],
            gain=self.gain[cut],
            sdcg=self.sdcg[cut],
            ideal=self.ideal[cut],
        )


_POSITION_DTYPES: dict[str, type] = {
    "session": np.int64,
    "query": np.int64,
    "slot": np.int64,
    "frame_row": np.int64,
    "grade": np.float64,
    "gain": np.float64,
    "sdcg": np.float64,
    "ideal": np.float64,
}


class PositionFill:
    """The chunks' per-position arrays copied into whole arrays as each chunk arrives.

    ``capacity`` bounds the positions of every chunk together (a query occupies at
    most its cut-off's positions: their sum, exact with padded lists).  Each array is
    allocated once at that size and filled in chunk order; pages past the last
    position are never touched, so they take no memory.  A chunk's arrays are copied
    while they are fresh and can be freed at once: no chunk is held for a
    concatenation, and every chunk's temporaries reuse the same memory.
    """

    def __init__(self, capacity: int) -> None:
        self._capacity = capacity
        self._arrays: dict[str, npt.NDArray[Any]] = {}
        self._at = 0

    def add(self, part: dict[str, npt.NDArray[Any]]) -> None:
        """Copy one chunk's arrays (``run_chunk(positions=True)``'s) after the previous chunk's."""
        size = part["session"].size
        if self._at + size > self._capacity:
            raise SessionvalError(
                f"internal: the chunks hold more than the {self._capacity:,} positions "
                "bounded by the cut-offs; please report this with the command that ran"
            )
        if not self._arrays:
            self._arrays = {k: np.empty(self._capacity, dtype=part[k].dtype) for k in part}
        for k, dest in self._arrays.items():
            dest[self._at : self._at + size] = part[k]
        self._at += size

    def arrays(self, n: int) -> dict[str, npt.NDArray[Any]]:
        """The whole arrays of ``n`` positions (the sessions' count): every chunk added."""
        if self._at != n:
            raise SessionvalError(
                f"internal: the chunks hold {self._at:,} positions, the sessions count {n:,}; "
                "please report this with the command that ran"
            )
        if not self._arrays:  # no chunk (a study without sessions)
            return {k: np.empty(0, dtype=d) for k, d in _POSITION_DTYPES.items()}
        return {k: a[:n] for k, a in self._arrays.items()}


@dataclass(frozen=True)
class SessionEvaluation(EvaluationResult):
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
    session_measures
        Requested session measures (canonical names, the ``per_session`` columns).
    session_values
        Their values, one array per measure in ``frame.sessions`` order.
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
    _ctx: ChunkContext = field(repr=False, compare=False)
    _engine: Engine = field(repr=False, compare=False)
    _ideal: IdealGains = field(repr=False, compare=False)
    session_measures: tuple[str, ...] = ()
    session_values: dict[str, FloatArray] = field(default_factory=dict, repr=False)
    _cache: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def ideal_source(self) -> IdealGains:
        """Ideal gain vectors per judgment key (segment layout) the evaluation used."""
        return self._ideal

    @property
    def query_ideal(self) -> IntArray:
        """Position of each query's judgment key in :attr:`ideal_source` (−1: none)."""
        return self._ctx.query_ideal

    def forget_per_position(self) -> None:
        """Drop the cached per-position table (rebuilt if asked again).

        One row per position of every session is the largest table of an evaluation;
        the run drops it once ``tables/per_position`` is written, so it does not add
        to the memory of the figures (which keep the per-position arrays).
        """
        self._cache.pop("position", None)

    # ---- helpers
    def _attach(self, df: pd.DataFrame) -> pd.DataFrame:
        df.attrs["config"] = self.config.model_dump(mode="json")
        return df

    def _ratio(self, num: FloatArray, den: FloatArray) -> FloatArray:
        return normalise(num, den, self.config.empty_ideal)

    def positions(self) -> Positions:
        """Per-position arrays of every session (recomputed through the engine, then cached).

        An evaluation run with ``keep_positions`` (:func:`~sessionval.evaluation.session.evaluate`)
        has them from its own pass already: the same arrays, not computed twice.
        """
        if "positions" not in self._cache:
            parts = self._engine.map_sessions(partial(run_chunk, positions=True), self._ctx)
            self.keep_positions([x.p for x in parts if x.p is not None])
        pos: Positions = self._cache["positions"]
        return pos

    def keep_positions(self, parts: list[dict[str, npt.NDArray[Any]]] | PositionFill) -> None:
        """Cache the per-position arrays from the chunks' (``run_chunk(positions=True)``).

        ``parts`` are the chunks' dictionaries in session order, consumed: each is
        emptied once copied into the preallocated whole, so its memory goes back
        chunk by chunk (pages of the whole are touched only as it fills) instead of
        every chunk and the whole being held at once (the run's peak at 200k sessions
        was this concatenation: +818 MB over the evaluation); or a :class:`PositionFill`
        that took each chunk's as it was made (:func:`~sessionval.evaluation.session.evaluate`).
        """
        n = int(self.sessions["n_positions"].sum())
        if isinstance(parts, PositionFill):
            fill = parts
        else:
            fill = PositionFill(n)
            for i, part in enumerate(parts):
                fill.add(part)
                part.clear()
                parts[i] = {}
        p = fill.arrays(n)
        judged = self.sessions.get("judged")
        if judged is not None and not judged.all():
            # a session without judgments has no score at any position either
            gone = ~judged[p["session"]]
            for k in ("gain", "sdcg", "ideal"):
                p[k][gone] = np.nan
        offsets = offsets_from_counts(self.sessions["n_positions"])
        release_free_memory()
        self._cache["positions"] = Positions(offsets=offsets, **p)

    def nsdcg(self) -> FloatArray:
        """``S[p] / I[p]`` for every position (NaN or 0 where the ideal is 0)."""
        p = self.positions()
        return self._ratio(p.sdcg, p.ideal)

    def row_gains(self) -> tuple[IntArray, FloatArray]:
        """Gain of each result row after the unjudged policy: (frame rows kept, gains)."""
        rows, gain, _ = self._kept_gains()
        return rows, gain

    def ranked_gains(
        self, queries: tuple[int, int] | None = None
    ) -> tuple[IntArray, IntArray, FloatArray]:
        """Each kept result row's query index, rank and gain, after the unjudged policy.

        Under ``condense`` unjudged rows leave their list and later rows move up, so
        ``rank`` is the position in the condensed list; otherwise the logged rank.
        ``queries=(q0, q1)``: the rows of queries ``q0 .. q1 - 1`` only (a chunk of the
        figures' curves).  Unless every row's join is cached already (a call without
        ``queries``), a chunk's grades are looked up for its rows alone and not cached, so a
        pass over the queries chunk by chunk holds a chunk's rows, not every row's: the
        same values either way (the gains are per row; ranks count within a query).
        """
        if queries is not None and "kept_gains" not in self._cache:
            return self._chunk_gains(*queries)
        rows, gain, offsets = self._kept_gains()
        lo, hi = 0, rows.size
        if queries is not None:
            n_q = offsets.size - 1
            lo, hi = int(offsets[min(queries[0], n_q)]), int(offsets[min(queries[1], n_q)])
            rows, gain = rows[lo:hi], gain[lo:hi]
        qidx = self.frame.results["query_idx"].to_numpy()[rows].astype(np.int64)
        rank = np.arange(lo, hi, dtype=np.int64) - offsets[qidx] + 1
        return qidx, rank, gain

    def _chunk_gains(self, q0: int, q1: int) -> tuple[IntArray, IntArray, FloatArray]:
        """:meth:`ranked_gains` of queries ``q0 .. q1 - 1``, their grades looked up alone."""
        gain, offsets, _, _ = self._joined_gains(q0, q1)
        # the kept rows come query after query: each query's from its offsets, not a gather
        # of the frame's query column (the same values)
        local = segment_ids(offsets)
        rank = segment_ranks(offsets, local)
        local += min(q0, self._ctx.query_session.size)  # the queries' own numbers
        return local, rank, gain

    def _joined_gains(self, q0: int, q1: int) -> tuple[FloatArray, IntArray, IntArray, int]:
        """Grades of queries ``q0 .. q1 - 1`` joined, as gains, after the unjudged policy.

        Returns ``(gains, per-query offsets, rows kept, r0)``: rows and offsets count from
        ``r0``, the first frame row of query ``q0``.
        """
        ctx = self._ctx
        n_q = ctx.query_session.size
        q0, q1 = min(q0, n_q), min(q1, n_q)
        r0 = int(ctx.query_row_offsets[q0])
        gain = ctx.scheme.gains(ctx.grades(q0, q1), negative=ctx.negative)
        local = ctx.query_row_offsets[q0 : q1 + 1] - r0
        gain, offsets, rows = apply_unjudged(gain, local, policy=ctx.unjudged)
        return gain, offsets, rows, r0

    def _kept_gains(self) -> tuple[IntArray, FloatArray, IntArray]:
        """(frame rows kept, their gains, per-query offsets) after the unjudged policy.

        Cached, read-only: the grade join over every result row is the costly part (the
        run's figures take it chunk by chunk instead: :meth:`ranked_gains` with ``queries``).
        """
        if "kept_gains" not in self._cache:
            kept = self._joined_gains(0, self._ctx.query_session.size)[:3]
            for a in kept:
                a.setflags(write=False)
            self._cache["kept_gains"] = kept
        gain, offsets, rows = self._cache["kept_gains"]
        return rows, gain, offsets

    # ---- tables
    def per_position(self, rows: tuple[int, int] | None = None) -> pd.DataFrame:
        """One row per session position (columns: ``evaluation/columns.py``'s ``POSITION_COLUMNS``).

        ``rank`` is the rank inside the query's slot (what the discount uses);
        ``doc_rank`` the document's rank in the logged list (<NA> on padded
        positions; differs from ``rank`` under ``drop``/``condense``); ``position``
        runs 1..P within the session.  ``rows=(lo, hi)``: the rows ``lo .. hi - 1`` of
        the table only (bounds clipped to the table as a slice's are), not cached (the
        run writes the largest table block by block).
        """
        if rows is None and "position" in self._cache:
            df_cached: pd.DataFrame = self._cache["position"]
            return df_cached
        whole = self.positions()
        n = whole.session.size
        # a slice's bounds, as Python's: rows past the end are simply not there
        lo, hi = (0, n) if rows is None else (min(max(rows[0], 0), n), min(max(rows[1], 0), n))
        hi = max(lo, hi)
        p = whole if rows is None else whole.block(lo, hi)
        res = self.frame.results
        shown = p.frame_row >= 0
        fr = p.frame_row[shown]
        doc_codes = np.full(shown.size, -1, dtype=np.int64)
        # the categorical's own codes (a view): ``.cat.codes`` copies every result row's
        doc_codes[shown] = cast(pd.Categorical, res["doc_id"].array).codes[fr]
        ranks = np.zeros(shown.size, dtype=np.int32)
        ranks[shown] = res["rank"].to_numpy()[fr]
        doc_rank = pd.array(ranks, dtype="Int32")
        doc_rank[~shown] = pd.NA
        within = np.arange(lo, hi, dtype=np.int64) - p.offsets[p.session]
        df = ordered_table(
            "position",
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
                "nsdcg": self._ratio(p.sdcg, p.ideal),
            },
        )
        if rows is None:
            self._cache["position"] = df
        return self._attach(df)

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
        top = np.fmax.reduceat(val, starts)  # a query without judgments (NaN) is never best
        is_top = val == np.repeat(top, ends - starts + 1)
        idx = np.flatnonzero(is_top)
        if idx.size:  # none when no query of any session has judgments
            first = idx[np.r_[True, qs[idx][1:] != qs[idx][:-1]]]
            best[qs[first]] = first
        return last, best

    def per_query(self) -> pd.DataFrame:
        """One row per query (columns: ``evaluation/columns.py``'s ``QUERY_COLUMNS``).

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
        df = ordered_table(
            "query",
            {
                # the frame's own arrays (categorical codes taken), not their values:
                # rebuilding a categorical from text hashes every row (0.8 s at 570k queries)
                "session_id": q["session_id"].array,
                "user_id": s["user_id"].array.take(qs),
                "topic_id": s["topic_id"].array.take(qs),
                "system_id": s["system_id"].array.take(qs),
                "query_pos": q["query_pos"].to_numpy(),
                "query_id": q["query_id"].to_numpy(),
                "qrels_id": q["qrels_id"].array,
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
            },
        )
        for col in ("session_id", "user_id", "topic_id", "system_id", "qrels_id"):
            df[col] = df[col].astype(q[col].dtype if col in q else s[col].dtype)
        for name in self.measures:
            df[name] = qa[name]
        self._cache["query"] = self._attach(df)
        return df

    def per_session(self) -> pd.DataFrame:
        """One row per session with every summary score of spec section 4.

        Columns: ``evaluation/columns.py``'s ``SESSION_COLUMNS``, described in the data
        dictionary (:mod:`sessionval.output.columns`).

        ``sdcg`` = ``S[P]``, ``ideal`` = ``I[P]``, ``nsdcg`` = their ratio;
        ``avg_pos_*`` = mean over the session's ``P`` positions (avg-pos of
        Järvelin & Kekäläinen 2002); ``sdcg_per_query`` = ``sdcg / n_queries`` (Jiang
        & Allan 2016's sDCG/q); ``last_*`` / ``best_*`` = the last / best query's
        ``sdcg`` and ``dcg``; ``first_rel_*`` / ``first_hrel_*`` = query position and
        logged rank of the first scored document with grade > 0 / grade >=
        ``high_grade`` (<NA> when none); ``n_relevant_found`` /
        ``n_highly_relevant_found`` = distinct such documents shown in the session
        vector.  Then the study's ``rating_*`` columns and the requested session
        measures (one column each, named by the canonical name).
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

        judged = sa.get("judged", np.ones(n_s, dtype=bool))
        best_pos = np.zeros(n_s, dtype=np.int16)
        best_pos[best >= 0] = self.query_pos[best[best >= 0]]
        df = ordered_table(
            "session",
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
                # missing (<NA>) on a session without judgments, as every score
                "n_relevant_found": nullable(sa["n_rel"], judged),
                "n_highly_relevant_found": nullable(sa["n_hrel"], judged),
            },
        )
        for c in s.columns:
            if str(c).startswith("rating_"):
                df[c] = s[c].to_numpy()
        for name in self.session_measures:
            df[name] = self.session_values[name]
        self._cache["session"] = self._attach(df)
        return df

    def _means_by_system(self) -> pd.DataFrame:
        """Sessions and mean final sDCG and nsDCG per system (vectorised, no positions)."""
        system = self.frame.sessions["system_id"].cat.remove_unused_categories()
        nsdcg = self._ratio(self.sessions["final"], self.sessions["ideal_final"])
        table = pd.DataFrame({"system_id": system, "sdcg": self.sessions["final"], "nsdcg": nsdcg})
        g = table.groupby("system_id", observed=True)
        out = g[["sdcg", "nsdcg"]].mean()
        out.insert(0, "sessions", g.size())
        return out.reset_index()

    def _facts(self) -> list[str]:
        c = self.config
        facts = [
            f"{self.frame.n_sessions} sessions",
            f"{self.query_session.size} queries",
            f"b={c.b:g}, bq={c.bq:g}, cutoff={c.cutoff}, gains {c.gains.name}",
        ]
        if self.n_unjudged:
            facts.append(f"{self.n_unjudged} results unjudged ({c.unjudged})")
        if self.n_empty_ideal:
            facts.append(f"{self.n_empty_ideal} sessions with an empty ideal")
        return facts

    def __repr__(self) -> str:
        """One line: sessions, queries, the parameters and each system's mean nsDCG."""
        means = self._means_by_system()
        by_system = ", ".join(
            f"{s} {v:.4f}" for s, v in zip(means["system_id"], means["nsdcg"], strict=True)
        )
        return f"SessionEvaluation({'; '.join(self._facts())}; mean nsDCG {by_system})"

    def _repr_html_(self) -> str:
        """The counts, the parameters and the per-system means, for a notebook."""
        from .display import html_block

        return html_block(
            "SessionEvaluation",
            self._facts(),
            {"mean final sDCG and nsDCG per system": self._means_by_system()},
        )

    def long(self, level: str = "session") -> pd.DataFrame:
        """Tidy table of one level: identifying columns, ``measure``, ``value``.

        ``level="session"``: ``session_id, user_id, topic_id, system_id`` and the
        scores ``sdcg``, ``nsdcg`` and the requested session measures;
        ``level="query"``: ``session_id, user_id, topic_id, system_id, query_pos,
        query_id`` and ``dcg``, ``ndcg`` and the requested single-query measures.
        One row per unit and measure, unit-major (all measures of a unit together),
        values as in :meth:`per_session` / :meth:`per_query`.

        Raises
        ------
        SessionvalError
            A level other than ``"session"`` or ``"query"``.
        """
        ids: tuple[str, ...]
        if level == "session":
            wide, ids = self.per_session(), SESSION_IDS
            scores = (*SESSION_SCORES, *self.session_measures)
        elif level == "query":
            wide, ids = self.per_query(), QUERY_IDS
            scores = (*QUERY_SCORES, *self.measures)
        else:
            raise SessionvalError(
                f"level={level!r} unknown; a session evaluation has 'session' and 'query'"
            )
        n, k = len(wide), len(scores)
        unit = np.repeat(np.arange(n), k)  # unit-major, as SingleEvaluation.long()
        out = wide[list(ids)].iloc[unit].reset_index(drop=True)
        out["measure"] = np.tile(np.array(scores, dtype=object), n)
        values = wide[list(scores)].to_numpy(dtype=np.float64).reshape(-1) if k else np.zeros(0)
        out["value"] = values
        return self._attach(out)

    def summary(self) -> pd.DataFrame:
        """Mean of each score of :meth:`long`: the session level, then the query level.

        Each measure is aggregated over the sessions (or queries) with a defined value,
        as it declares (``MeasureDef.aggregate``: the mean, the sum for counts,
        ``exp`` of the mean for ``GMAP``); the counts are :meth:`counts`.

        Returns
        -------
        pandas.DataFrame
            ``measure``, ``value``, ``n`` (units aggregated); reading a count by key
            (``summary()["n_sessions"]``, the dict of before) still works and warns.
        """
        names = (*SESSION_SCORES, *self.session_measures, *QUERY_SCORES, *self.measures)
        how = {
            repr(m): m.definition.aggregate
            for m in parse_measures([*self.session_measures, *self.measures])
        }
        table = pd.concat([self.long("session"), self.long("query")], ignore_index=True)
        legacy = {**self.counts(), "config": self.config.model_dump(mode="json")}
        return LegacySummary.of(summarise_long(table, names, how), legacy)

    def counts(self) -> dict[str, int]:
        """Return the counts a report needs (sessions, queries, unjudged, empty ideals)."""
        return {
            "n_sessions": self.frame.n_sessions,
            "n_queries": int(self.query_session.size),
            "n_positions": int(self.sessions["n_positions"].sum()),
            "n_unjudged": self.n_unjudged,
            "n_negative": self.n_negative,
            "n_empty_ideal": self.n_empty_ideal,
        }

"""A partitioned study's scores: computed on the workers, put in the study's order on the client.

Each partition is evaluated on its worker (:func:`score_partition`, the local
engine's :func:`~sessionval.evaluation.session.evaluate`), and the client gathers
its per-query and per-session arrays (:class:`PartScores`).  A session sits in
one file and every value of a session depends on that session alone (and on the
judgments, which every worker has), so each partition's values are the study's;
:func:`assemble` puts them in the study's session order (session-id order,
:meth:`~sessionval.frame.SessionFrame.in_id_order`).  The tables are the local
engine's, bit for bit.  When the partitions' evaluations are kept on the workers,
the per-position arrays, the kept result rows' gains (the figures) and the
per-position table are computed there and gathered only when asked for
(:class:`RemoteEvaluation`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Final, cast

import numpy as np
import numpy.typing as npt
import pandas as pd

from .._types import FloatArray, IntArray
from ..errors import SessionvalError
from ..frame import JudgmentFrame, SessionFrame
from ..kernels.segments import gather_ranges, offsets_from_counts, segment_ids
from .config import SessionConfig
from .dask_engine import DaskEngine
from .engine import LocalEngine
from .result import Positions, SessionEvaluation
from .session import chunk_context, evaluate, grade_source, study_layout

__all__ = [
    "PartScores",
    "RemoteEvaluation",
    "assemble",
    "score_partition",
    "scores_of",
]

#: a column added to each partition's sessions on its worker: the session's row in the file
ROW: Final = "_sessionval_row"


# ---------------------------------------------------------------------------------------------
# on the workers


@dataclass(frozen=True)
class PartScores:
    """One partition's evaluation as the client gathers it (its sessions in its id order)."""

    file_row: IntArray  # each session's row among the partition's sessions (file order)
    n_queries: IntArray
    n_rows: IntArray  # result rows of each session
    queries: dict[str, npt.NDArray[Any]]
    sessions: dict[str, npt.NDArray[Any]]
    session_values: dict[str, FloatArray]
    n_unjudged: int
    n_negative: int
    high_grade: float
    measures: tuple[str, ...]
    session_measures: tuple[str, ...]


def score_partition(
    frame: SessionFrame,
    judgments: JudgmentFrame | None,
    config: SessionConfig,
    measures: Sequence[str],
) -> SessionEvaluation:
    """On a worker: the partition evaluated, each session marked with its row in the file."""
    rows = np.arange(frame.n_sessions, dtype=np.int64)
    marked = replace(frame, sessions=frame.sessions.assign(**{ROW: rows}))
    return evaluate(marked, judgments, config, measures=measures, engine=LocalEngine())


def scores_of(ev: SessionEvaluation) -> PartScores:
    """What the client gathers of a partition's evaluation (:func:`score_partition`)."""
    ctx = ev._ctx
    return PartScores(
        file_row=ev.frame.sessions[ROW].to_numpy(),
        n_queries=np.diff(ctx.session_query_offsets),
        n_rows=np.diff(ctx.session_row_offsets),
        queries=ev.queries,
        sessions=ev.sessions,
        session_values=ev.session_values,
        n_unjudged=ev.n_unjudged,
        n_negative=ev.n_negative,
        high_grade=ev.high_grade,
        measures=ev.measures,
        session_measures=ev.session_measures,
    )


def _positions_of(ev: SessionEvaluation) -> dict[str, npt.NDArray[Any]]:
    p = ev.positions()
    return {
        k: getattr(p, k) for k in ("query", "slot", "frame_row", "grade", "gain", "sdcg", "ideal")
    }


def _ranked_of(ev: SessionEvaluation) -> dict[str, npt.NDArray[Any]]:
    qidx, rank, gain = ev.ranked_gains()
    rows, _ = ev.row_gains()
    return {"query": qidx, "rank": rank, "gain": gain, "row": rows}


def _per_position_of(ev: SessionEvaluation) -> tuple[pd.DataFrame, pd.Index]:
    """The partition's per-position table, ids as codes, and its document categories."""
    df = ev.per_position().copy(deep=False)
    cats = df["doc_id"].cat.categories
    df["doc_id"] = df["doc_id"].cat.codes.to_numpy().astype(np.int64)
    df["session_id"] = df["session_id"].cat.codes.to_numpy().astype(np.int64)
    return df, cats


# ---------------------------------------------------------------------------------------------
# on the client


@dataclass(frozen=True)
class _Order:
    """Where each partition's sessions go in the study's session order.

    The partitions' sessions concatenated (each partition in its own id order) are
    the *gathered* order; ``take`` lists, for each session of the study in id order,
    its place in the gathered order.
    """

    take: IntArray
    n_queries: IntArray  # per gathered session
    n_rows: IntArray
    query_base: IntArray  # per partition: its first query and row in the gathered order
    row_base: IntArray
    part_of_session: IntArray

    def blocks(self, counts: IntArray) -> IntArray:
        """Gathered positions of each session's items, sessions in the study's order.

        ``counts`` are the items per gathered session.
        """
        return gather_ranges(offsets_from_counts(counts)[:-1][self.take], counts[self.take])


def _order(file_row: IntArray, parts: Sequence[PartScores], part_sessions: Sequence[int]) -> _Order:
    """The gathered order of the partitions' sessions mapped onto the study's id order.

    ``file_row``: for each session of the study in id order, its row in file order
    (:func:`_study_frame`).
    """
    n_s = file_row.size
    base = offsets_from_counts(np.asarray(part_sessions, dtype=np.int64))[:-1]
    gathered_file_row = np.concatenate(
        [p.file_row + b for p, b in zip(parts, base, strict=True)] or [np.zeros(0, np.int64)]
    )
    where = np.empty(n_s, dtype=np.int64)  # file-order row -> gathered position
    where[gathered_file_row] = np.arange(n_s, dtype=np.int64)
    n_q = [p.n_queries for p in parts]
    n_r = [p.n_rows for p in parts]
    return _Order(
        take=where[file_row],
        n_queries=np.concatenate(n_q).astype(np.int64),
        n_rows=np.concatenate(n_r).astype(np.int64),
        query_base=offsets_from_counts(np.array([int(q.sum()) for q in n_q], dtype=np.int64)),
        row_base=offsets_from_counts(np.array([int(r.sum()) for r in n_r], dtype=np.int64)),
        part_of_session=np.repeat(np.arange(len(parts)), [p.file_row.size for p in parts]),
    )


def _merge(arrays: Sequence[dict[str, npt.NDArray[Any]]], take: IntArray) -> dict[str, Any]:
    """The partitions' arrays concatenated key by key, then put in the study's order."""
    # a partition without sessions (all rejected) brings untyped empty arrays: left out
    return {
        k: np.concatenate([a[k] for a in arrays if a[k].size] or [arrays[0][k]])[take]
        for k in arrays[0]
    }


def _study_frame(frame: SessionFrame) -> tuple[SessionFrame, IntArray]:
    """The study's frame (no result rows) in id order, ``n_results`` kept; each session's row.

    The second value gives, for each session in id order, its row in file order: one
    :meth:`~sessionval.frame.SessionFrame.in_id_order` serves both.
    """
    n_s, n_q = frame.n_sessions, len(frame.queries)
    zero = replace(
        frame,
        sessions=frame.sessions.assign(**{ROW: np.arange(n_s, dtype=np.int64)}),
        queries=frame.queries.assign(
            n_results=np.int32(0), **{ROW: np.arange(n_q, dtype=np.int64)}
        ),
    )
    ordered = zero.in_id_order()
    file_row = ordered.sessions[ROW].to_numpy()
    q_row = ordered.queries[ROW].to_numpy()
    queries = ordered.queries.drop(columns=[ROW])
    queries["n_results"] = frame.queries["n_results"].iloc[q_row].reset_index(drop=True)
    sessions = ordered.sessions.drop(columns=[ROW])
    return replace(ordered, sessions=sessions, queries=queries), file_row


def assemble(
    study_frame: SessionFrame,
    part_sessions: Sequence[int],
    scores: Sequence[PartScores],
    judgments: JudgmentFrame | None,
    cfg: SessionConfig,
    engine: DaskEngine,
    evs: Sequence[Any],
) -> RemoteEvaluation:
    """The study's evaluation from its partitions' scores, in session-id order.

    Parameters
    ----------
    study_frame
        The study's sessions and queries (no result rows), the partitions' in file
        order (:func:`~sessionval.io.partitioned.combine_partitions`).
    part_sessions, scores
        Each partition's number of sessions and scores, in file order.
    judgments, cfg, engine
        What the partitions were scored with, and where.
    evs
        The futures of the partitions' evaluations kept on the workers (for the
        per-position passes); empty when they were not kept (a study has one file or more).
    """
    frame, file_row = _study_frame(study_frame)
    order = _order(file_row, scores, part_sessions)
    zero = replace(frame, queries=frame.queries.assign(n_results=np.int32(0)))
    lay = study_layout(zero)
    if not np.array_equal(order.n_queries[order.take], np.diff(lay.session_query_offsets)):
        raise SessionvalError(  # pragma: no cover - the partitions are the frame's
            "the partitions' queries on the workers do not match the study's"
        )
    src = grade_source(zero, judgments, cfg)
    ideal = src.ideal(zero, cfg)
    ctx = chunk_context(zero, lay, src, cfg, ideal)
    qa = _merge([s.queries for s in scores], order.blocks(order.n_queries))
    sa = _merge([s.sessions for s in scores], order.take)
    first = scores[0]
    values = _merge([s.session_values for s in scores], order.take) if first.session_values else {}
    return RemoteEvaluation(
        config=cfg,
        frame=frame,
        query_session=lay.query_session,
        query_pos=lay.query_pos,
        queries=qa,
        sessions=sa,
        n_unjudged=sum(s.n_unjudged for s in scores),
        n_negative=sum(s.n_negative for s in scores),
        n_empty_ideal=int(np.count_nonzero(sa["ideal_final"] == 0)),
        high_grade=first.high_grade,
        measures=first.measures,
        session_measures=first.session_measures,
        session_values=values,
        _ctx=ctx,
        _engine=engine,
        _ideal=ideal,
        _remote=_Remote(engine, tuple(evs), order),
    )


@dataclass(frozen=True)
class _Remote:
    """The partitions' evaluations on the workers, and where their sessions go."""

    engine: DaskEngine
    evs: tuple[Any, ...]  # empty: not kept (score_remote)
    order: _Order


@dataclass(frozen=True)
class RemoteEvaluation(SessionEvaluation):
    """A :class:`SessionEvaluation` whose per-position and per-row arrays stay on the workers.

    :meth:`positions`, :meth:`ranked_gains`, :meth:`row_gains` and
    :meth:`per_position` are computed on the workers (each partition's, from its
    kept evaluation), gathered and put in the study's order when asked for.
    """

    _remote: _Remote | None = field(default=None, repr=False, compare=False)

    def _parts(self) -> _Remote:
        if self._remote is None or not self._remote.evs:
            raise SessionvalError(
                "this evaluation kept no result rows on the workers (score_remote): the "
                "per-position arrays, the rows' gains and the per-position table need "
                "load_remote and evaluate_remote"
            )
        return self._remote

    def _study_query(self, local: IntArray, part: IntArray, gathered_session: IntArray) -> IntArray:
        """Partition-local query indices as the study's (by their place in their session)."""
        o = self._parts().order
        q_off = offsets_from_counts(o.n_queries)
        within = local + o.query_base[part] - q_off[gathered_session]
        study_session = self._study_session(gathered_session)
        out: IntArray = self._ctx.session_query_offsets[study_session] + within
        return out

    def _study_session(self, gathered_session: IntArray) -> IntArray:
        o = self._parts().order
        inverse = np.empty(o.take.size, dtype=np.int64)
        inverse[o.take] = np.arange(o.take.size, dtype=np.int64)
        out: IntArray = inverse[gathered_session]
        return out

    def _study_row(self, local: IntArray, part: IntArray, gathered_session: IntArray) -> IntArray:
        """Partition-local result rows as rows of the study (−1 stays −1)."""
        o = self._parts().order
        r_off = offsets_from_counts(o.n_rows)
        n_res = self.frame.queries["n_results"].to_numpy(dtype=np.int64)
        per_session = np.bincount(
            self.query_session, weights=n_res, minlength=self.frame.n_sessions
        )
        study_r_off = offsets_from_counts(per_session.astype(np.int64))
        within = local + o.row_base[part] - r_off[gathered_session]
        study = study_r_off[self._study_session(gathered_session)] + within
        out: IntArray = np.where(local >= 0, study, -1)
        return out

    def _gathered(
        self, fn: Callable[[SessionEvaluation], dict[str, npt.NDArray[Any]]], session_of: str
    ) -> tuple[dict[str, npt.NDArray[Any]], IntArray, IntArray]:
        """Per-item arrays of every partition in the study's order.

        Also returns each item's gathered session and partition.
        """
        r = self._parts()
        o = r.order
        parts = r.engine.map_futures(fn, r.evs)
        counts = []
        sessions = []
        part_ids = []
        s_base = 0
        n_sessions = np.bincount(o.part_of_session, minlength=len(parts))
        for i, (p, n_s) in enumerate(zip(parts, n_sessions, strict=True)):
            sess = _segment_of(p, session_of, o, i)
            counts.append(np.bincount(sess, minlength=int(n_s)))
            sessions.append(sess + s_base)
            part_ids.append(np.full(sess.size, i, dtype=np.int64))
            s_base += int(n_s)
        take = o.blocks(np.concatenate(counts).astype(np.int64))
        merged = _merge(parts, take)
        return merged, np.concatenate(sessions)[take], np.concatenate(part_ids)[take]

    def positions(self) -> Positions:
        """Per-position arrays (computed on the workers, gathered, then cached)."""
        if "positions" not in self._cache:
            p, g_sess, part = self._gathered(_positions_of, "query")
            offsets = offsets_from_counts(self.sessions["n_positions"])
            self._cache["positions"] = Positions(
                session=segment_ids(offsets),
                query=self._study_query(p["query"], part, g_sess),
                slot=p["slot"],
                frame_row=self._study_row(p["frame_row"], part, g_sess),
                grade=p["grade"],
                gain=p["gain"],
                sdcg=p["sdcg"],
                ideal=p["ideal"],
                offsets=offsets,
            )
        pos: Positions = self._cache["positions"]
        return pos

    def _ranked(self) -> dict[str, npt.NDArray[Any]]:
        if "ranked" not in self._cache:
            p, g_sess, part = self._gathered(_ranked_of, "query")
            p["query"] = self._study_query(p["query"], part, g_sess)
            p["row"] = self._study_row(p["row"], part, g_sess)
            self._cache["ranked"] = p
        out: dict[str, npt.NDArray[Any]] = self._cache["ranked"]
        return out

    def ranked_gains(
        self, queries: tuple[int, int] | None = None
    ) -> tuple[IntArray, IntArray, FloatArray]:
        """Each kept result row's query index, rank and gain (computed on the workers)."""
        p = self._ranked()
        if queries is None:
            return p["query"], p["rank"], p["gain"]
        lo, hi = np.searchsorted(p["query"], queries)  # rows in query order
        return p["query"][lo:hi], p["rank"][lo:hi], p["gain"][lo:hi]

    def row_gains(self) -> tuple[IntArray, FloatArray]:
        """Rows of the study kept after the unjudged policy and their gains (on the workers)."""
        p = self._ranked()
        return p["row"], p["gain"]

    def per_position(self, rows: tuple[int, int] | None = None) -> pd.DataFrame:
        """One row per session position: each partition's table, in the study's order.

        ``rows=(lo, hi)``: those rows of the whole table (gathered once, then cached).
        """
        if rows is not None:
            whole = self.per_position()
            block = whole.iloc[rows[0] : rows[1]].reset_index(drop=True)
            block.attrs = dict(whole.attrs)
            return block
        if "position" in self._cache:
            cached: pd.DataFrame = self._cache["position"]
            return cached
        r = self._parts()
        o = r.order
        parts = r.engine.map_futures(_per_position_of, r.evs)
        docs = cast(pd.CategoricalDtype, self.frame.results["doc_id"].dtype)
        tables = []
        counts = []
        n_sessions = np.bincount(o.part_of_session, minlength=len(parts))
        for (table, cats), n_s in zip(parts, n_sessions, strict=True):
            recode = np.append(docs.categories.get_indexer(cats), -1).astype(np.int64)
            table["doc_id"] = recode[table["doc_id"].to_numpy()]  # -1 (padding) stays -1
            # the table's session codes are the partition's session indices (id order)
            counts.append(np.bincount(table["session_id"].to_numpy(), minlength=int(n_s)))
            tables.append(table)
        take = o.blocks(np.concatenate(counts).astype(np.int64))
        df = pd.concat(tables, ignore_index=True).take(take).reset_index(drop=True)
        offsets = offsets_from_counts(self.sessions["n_positions"])
        df["session_id"] = pd.Categorical.from_codes(
            segment_ids(offsets),
            dtype=cast(pd.CategoricalDtype, self.frame.sessions["session_id"].dtype),
        )
        df["doc_id"] = pd.Categorical.from_codes(df["doc_id"].to_numpy(), dtype=docs)
        df.attrs = {}
        self._cache["position"] = self._attach(df)
        return df


def _segment_of(part: dict[str, npt.NDArray[Any]], key: str, order: _Order, i: int) -> IntArray:
    """The gathered session (within partition ``i``) of each item, from its local query."""
    q_counts = order.n_queries[order.part_of_session == i]
    q_session = np.repeat(np.arange(q_counts.size, dtype=np.int64), q_counts)
    out: IntArray = q_session[part[key]]
    return out

"""Scoring a whole study: :func:`evaluate`, the sDCG pipeline of Järvelin et al. (2008).

``evaluate(frame, judgments, config)`` runs the sDCG pipeline of Järvelin et al.
(2008) on a whole study at once: grades → gains → unjudged policy → session
vectors (duplicates, short lists, scan depth, ideal) → tidy tables.  The
:class:`SessionConfig` (a frozen Pydantic model) holds every parameter; it is
attached to every table (``df.attrs["config"]``) and serialises to JSON so each
number can be traced to its parameters.  Named presets reproduce published
variants (``SessionConfig.preset("jiang-allan-2016")``; table in
``docs/sessions.md``).

Output tables (column names are stable)
---------------------------------------
:meth:`SessionEvaluation.per_position`, :meth:`~SessionEvaluation.per_query` and
:meth:`~SessionEvaluation.per_session`, one row per position, query and session, then
one column per requested measure (its canonical name: ``sDCG(b=2,bq=4)@10``,
``last(nDCG@10)``).  Their columns are named and ordered once, in
:mod:`sessionval.evaluation.columns` (the tables are built from it), listed for
people in ``docs/sessions.md`` section 3 and described in the data dictionary
(:mod:`sessionval.output.columns`); tests keep both in step with the list.

Every table has one row per session (query, position) in the order of the
session ids (:func:`sessionval.frame.id_order`, not the input's order): ``evaluate``
scores :meth:`SessionFrame.in_id_order <sessionval.frame.SessionFrame.in_id_order>`
of its frame (``SessionEvaluation.frame``).  Every value of a session depends on
that session alone, summed in its own order, so the same sessions read in any line
order, file split or chunking give bit-identical tables.

The chunks of whole sessions run through an
:class:`~sessionval.evaluation.engine.Engine` (:class:`LocalEngine` by default).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from .._types import BoolArray, FloatArray, IntArray
from ..errors import InputFormatError, JudgmentError, MeasureSpecError
from ..frame import JudgmentFrame, SessionFrame
from ..judgments.ideal import IdealGains, ideal_gains, searcher_ideal_gains
from ..judgments.lookup import GradeLookup, JudgmentIndex, frame_lookup
from ..kernels.segments import offsets_from_counts
from ..measures.grammar import Measure
from ..measures.lists import RankedLists
from ..measures.registry import parse_measures
from ..measures.session import PositionCompute, SessionScores
from ..models.judgments import GradeScale
from .chunks import (
    QUERY_ARRAYS,
    SESSION_ARRAYS,
    ChunkContext,
    ChunkResult,
    PositionMeasure,
    concat_parts,
    run_chunk,
)
from .config import SessionConfig
from .engine import Engine, LocalEngine, chunk_results
from .gain_fit import fit_gains, warn_notes
from .result import PositionFill, SessionEvaluation

__all__ = [
    "chunk_context",
    "evaluate",
    "grade_source",
    "study_layout",
]


@dataclass(frozen=True)
class _Layout:
    """The study's segment layout: queries per session, rows per query."""

    query_session: IntArray
    query_pos: IntArray
    query_row_offsets: IntArray
    session_query_offsets: IntArray


def study_layout(frame: SessionFrame) -> _Layout:
    """Step 1: the study's layout, checked (queries grouped by session, rows by query)."""
    q = frame.queries
    qs = q["session_id"].cat.codes.to_numpy().astype(np.int64)
    qp = q["query_pos"].to_numpy().astype(np.int64)
    if qs.size > 1:
        ds = np.diff(qs)
        bad = (ds < 0) | ((ds == 0) & (np.diff(qp) != 1))
        if bad.any():
            i = int(np.flatnonzero(bad)[0]) + 1
            raise InputFormatError(
                f"{frame.source}: queries table row {i}: queries must be grouped by session in "
                f"session order with positions 1..n (got session index {int(qs[i])}, "
                f"query_pos {int(qp[i])} after {int(qp[i - 1])})"
            )
    q_row_off = frame.query_offsets()
    if int(q_row_off[-1]) != frame.n_results:
        raise InputFormatError(
            f"{frame.source}: queries.n_results sums to {int(q_row_off[-1])} but results has "
            f"{frame.n_results} rows"
        )
    s_q_off = offsets_from_counts(np.bincount(qs, minlength=frame.n_sessions))
    return _Layout(qs, qp, q_row_off, s_q_off)


@dataclass(frozen=True)
class _GradeSource:
    """Where grades come from: the prepared reference join or the searchers' grades."""

    judgments: JudgmentFrame | None
    lookup: GradeLookup | None
    query_keys: IntArray | None
    user_grade: FloatArray | None
    scale: GradeScale | None

    def ideal(self, frame: SessionFrame, cfg: SessionConfig) -> IdealGains:
        """Ideal gains per judgment key under the configuration's gains and negative policy."""
        if self.judgments is not None:
            return ideal_gains(self.judgments, cfg.gains, negative=cfg.negative)
        return searcher_ideal_gains(frame, cfg.gains, cfg.negative)

    def gain_top(self, cfg: SessionConfig) -> float:
        """The gain of the top grade (of the scale, else the largest grade observed)."""
        top = self.high(cfg.replace(high_grade=None))
        if not np.isfinite(top):
            return 1.0
        return float(cfg.gains.gains(np.array([top]), negative=cfg.negative)[0])

    def high(self, cfg: SessionConfig) -> float:
        """The lowest grade counted as highly relevant."""
        if cfg.high_grade is not None:
            return float(cfg.high_grade)
        if self.scale is not None:
            return float(max(self.scale.grades))
        ug = self.user_grade if self.user_grade is not None else np.zeros(0)
        observed = ug[~np.isnan(ug)]
        return float(observed.max()) if observed.size else float("inf")


def grade_source(
    frame: SessionFrame, judgments: JudgmentFrame | None, cfg: SessionConfig
) -> _GradeSource:
    """Step 2: prepare the grade lookup once (reference) or take the searchers' grades."""
    if cfg.judgments == "reference":
        if judgments is None:
            raise JudgmentError(
                "judgment source 'reference' needs judgments (qrels); none were given"
            )
        lookup = frame_lookup(frame, JudgmentIndex.build(judgments))
        keys = frame.queries["qrels_id"].cat.codes.to_numpy().astype(np.int64)
        return _GradeSource(judgments, lookup, keys, None, judgments.scale)
    user_grade = frame.results["user_grade"].to_numpy(dtype=np.float64, na_value=np.nan)
    return _GradeSource(None, None, None, user_grade, frame.grade_scale)


def _query_cutoffs(frame: SessionFrame, cfg: SessionConfig) -> IntArray:
    """Cut-off of each query: X or its scan depth (``scan_depth``); 0 past ``max_queries``."""
    x = cfg.cutoff
    cut = np.full(len(frame.queries), x, dtype=np.int64)
    if cfg.scan_depth != "ignore":
        sd = frame.queries["scan_depth"].to_numpy(dtype=np.float64, na_value=np.nan)
        known = ~np.isnan(sd)
        if cfg.scan_depth == "replace":
            cut[known] = sd[known].astype(np.int64)
        else:
            cut[known] = np.minimum(sd[known].astype(np.int64), x)
    if cfg.max_queries is not None:  # queries after the N-th occupy no position
        cut[frame.queries["query_pos"].to_numpy() > cfg.max_queries] = 0
    return cut


def chunk_context(
    frame: SessionFrame,
    lay: _Layout,
    src: _GradeSource,
    cfg: SessionConfig,
    ideal: IdealGains,
    extra: tuple[PositionMeasure, ...] = (),
) -> ChunkContext:
    """Step 3: the arrays every chunk reads, prepared once."""
    res = frame.results
    return ChunkContext(
        params=cfg.session_params(),
        scheme=cfg.gains,
        negative=cfg.negative,
        unjudged=cfg.unjudged,
        empty_ideal=cfg.empty_ideal,
        query_session=lay.query_session,
        query_pos=lay.query_pos,
        query_cutoff=_query_cutoffs(frame, cfg),
        query_ideal=ideal.positions(frame.queries["qrels_id"]),
        ideal_offsets=ideal.offsets,
        ideal_values=ideal.values,
        query_row_offsets=lay.query_row_offsets,
        session_query_offsets=lay.session_query_offsets,
        row_query=res["query_idx"].to_numpy(),
        row_rank=res["rank"].to_numpy(),
        doc_codes=res["doc_id"].cat.codes.to_numpy(),
        lookup=src.lookup,
        query_keys=src.query_keys,
        user_grade=src.user_grade,
        high=src.high(cfg),
        extra=extra,
        gain_top=src.gain_top(cfg),
        cutoff=cfg.cutoff,
        max_queries=cfg.max_queries,
        top_rows=_top_rows_suffice(cfg, src),
    )


def _top_rows_suffice(cfg: SessionConfig, src: _GradeSource) -> bool:
    """Whether a chunk may take only the rows each query can show (``ChunkContext.top_rows``).

    A row ranked below its query's cut-off is never shown (slot lengths never exceed
    the cut-off: :func:`~sessionval.kernels.slots.slot_lengths`) unless a policy moves
    later rows up (``drop``, ``condense``); its gain would only raise an error if its
    grade had none, which is tried here on every distinct grade of the judgments.  (The
    ``error`` policies for unjudged and negative grades are checked on every row.)
    """
    if cfg.duplicates == "drop" or cfg.unjudged == "condense" or src.lookup is None:
        return False
    negative = "keep" if cfg.negative == "error" else cfg.negative
    try:
        cfg.gains.gains(np.unique(src.lookup.grades), negative=negative)
    except JudgmentError:
        return False
    return True


def _gather(
    chunks: list[ChunkResult],
) -> tuple[dict[str, npt.NDArray[Any]], dict[str, npt.NDArray[Any]]]:
    """Per-query and per-session arrays of all chunks, in session order."""
    qa = concat_parts([c.q for c in chunks])
    sa = concat_parts([c.s for c in chunks])
    if not chunks:  # a study without sessions: every array, empty
        qa = {k: np.zeros(0) for k in QUERY_ARRAYS}
        sa = {k: np.zeros(0, dtype=dtype) for k, dtype in SESSION_ARRAYS}
    return qa, sa


def _scores(
    qa: dict[str, npt.NDArray[Any]], sa: dict[str, npt.NDArray[Any]], lay: _Layout
) -> SessionScores:
    return SessionScores(
        final=sa["final"],
        ideal_final=sa["ideal_final"],
        n_positions=sa["n_positions"],
        query_offsets=lay.session_query_offsets,
        dcg=qa["dcg"],
        qd=qa["qd"],
        ideal_dcg=qa["ideal_dcg"],
    )


#: Per-query / per-session arrays that need judgments (missing on an unjudged topic).
_JUDGED_QUERY_ARRAYS = ("dcg", "ideal_dcg")
_JUDGED_SESSION_ARRAYS = ("final", "ideal_final", "sum_sdcg", "sum_nsdcg")


def _judged_queries(
    frame: SessionFrame, judgments: JudgmentFrame | None, cfg: SessionConfig
) -> BoolArray:
    """Which queries' judgment keys have reference judgments (every query, for searchers').

    A key without a judgment (a topic declared ``judged: false``, or simply absent from
    the qrels) has no score: not 0, which would average the topic in as a failure.
    """
    keys = frame.queries["qrels_id"]
    if cfg.judgments != "reference" or judgments is None:
        return np.ones(len(keys), dtype=bool)
    topics = pd.Index(judgments.topics.astype(str))
    known = np.append(keys.cat.categories.astype(str).isin(topics), False)
    out: BoolArray = known[keys.cat.codes.to_numpy()]  # code -1 (no key) -> False
    return out


def _without_judgments(
    judged_q: BoolArray,
    lay: _Layout,
    qa: dict[str, npt.NDArray[Any]],
    sa: dict[str, npt.NDArray[Any]],
    values: dict[str, FloatArray],
    measures: Sequence[str],
) -> None:
    """Step 5: scores that need judgments set missing (NaN) where there are none, in place.

    A query without judgments loses ``dcg``, ``ideal_dcg`` and its single-query
    measures; a session none of whose queries has judgments loses every score and its
    session measures (``sa["judged"]`` records which sessions keep theirs).  Counts
    that need no judgments (queries, positions, results) keep their values.
    """
    n_s = lay.session_query_offsets.size - 1
    judged_s = np.bincount(lay.query_session[judged_q], minlength=n_s) > 0
    sa["judged"] = judged_s
    if judged_s.all() and judged_q.all():
        return
    for k in (*_JUDGED_QUERY_ARRAYS, *measures):
        qa[k] = np.where(judged_q, qa[k], np.nan)
    for k in _JUDGED_SESSION_ARRAYS:
        sa[k] = np.where(judged_s, sa[k], np.nan)
    for k in ("found_rel", "found_hrel"):
        sa[k] = sa[k] & judged_s
    for k in values:
        values[k] = np.where(judged_s, values[k], np.nan)


def _position_plans(
    cfg: SessionConfig, parsed: Sequence[Measure]
) -> dict[str, tuple[SessionConfig, tuple[PositionMeasure, ...]]]:
    """The positional session measures, grouped by the configuration they run under."""
    plans: dict[str, tuple[SessionConfig, tuple[PositionMeasure, ...]]] = {}
    for m in parsed:
        compute = m.definition.compute
        if m.scope != "session" or not isinstance(compute, PositionCompute):
            continue
        cfg_m = _measure_config(cfg, m)
        key = cfg_m.model_dump_json()
        job: PositionMeasure = (repr(m), compute.fn, tuple(m.own_params().items()))
        plans[key] = (cfg_m, (*plans.get(key, (cfg_m, ()))[1], job))
    return plans


def _measure_config(cfg: SessionConfig, m: Measure) -> SessionConfig:
    """The configuration of a session measure's column: its parameters override ``cfg``."""
    changed = cfg.replace(**m.config_changes())
    rule = m.definition.validate
    if rule is not None:

        def value(name: str) -> Any:
            return getattr(changed, m.definition.param(name).field or name)

        problem = rule(m.given(), value)
        if problem:
            raise MeasureSpecError(f"{m!r} under this configuration: {problem}")
    return changed


def evaluate(
    frame: SessionFrame,
    judgments: JudgmentFrame | None,
    config: SessionConfig | None = None,
    *,
    measures: Sequence[str | Measure] = (),
    engine: Engine | None = None,
    keep_positions: bool = False,
) -> SessionEvaluation:
    """Score every session of a study with sDCG, its summaries and requested measures.

    Parameters
    ----------
    frame
        The study (results sorted by query, queries grouped by session).  It is
        scored in session-id order (:meth:`SessionFrame.in_id_order`), the order of
        the returned tables and of ``SessionEvaluation.frame``.
    judgments
        Reference judgments keyed by ``queries.qrels_id``; may be ``None`` with
        ``config.judgments = "searcher"`` (the ideal then pools the searchers' grades).
    config
        Parameters (default: the paper's, :class:`SessionConfig`).  ``gains = "auto"``
        (the default) is fitted to the data's grade scale first
        (:func:`~sessionval.evaluation.gain_fit.fit_gains`: 0-1-10-100 when it covers
        every grade, else ``exp`` with a :class:`~sessionval.evaluation.gain_fit.ConfigNote`
        warning); ``SessionEvaluation.config`` has the scheme used.
    measures
        Measures in the grammar of :mod:`sessionval.measures`.  *Single-query*
        measures (``"nDCG(gain=0-1-10-100)@10"``, ``"AP"``, ``"RR"``) become
        :meth:`SessionEvaluation.per_query` columns: each is computed on every query's
        own logged list with its own parameters (the registry's defaults, not the
        session's), using the configuration's judgment source, negative and unjudged
        policies.  *Session* measures (``"sDCG(b=2,bq=4)@10"``, ``"nsDCG@10"``,
        ``"last(nDCG@10)"``, ``"best(AP)"``) become :meth:`SessionEvaluation.per_session`
        columns: ``sDCG``/``nsDCG`` run the session vectors with the configuration
        changed by the measure's parameters (``@X`` sets ``cutoff``), aggregates take
        their single-query measure per query.  Columns are named by canonical names.
    engine
        Runs the chunks of whole sessions (default :class:`LocalEngine`, chunks of
        about a million result rows in this process).
    keep_positions
        Keep the per-position vectors of the scoring pass
        (:meth:`SessionEvaluation.positions`, held with the result) instead of
        recomputing them when asked: for a caller that will ask (the run's tables and
        figures), a second pass over every result row saved.

    Returns
    -------
    SessionEvaluation

    Raises
    ------
    JudgmentError
        No judgments for the reference source; unjudged documents under ``error``; a
        gain scheme chosen by the caller without a gain for a grade of the data.
    MeasureSpecError
        An invalid option or measure.
    InputFormatError
        The frame's queries are not grouped by session.

    Notes
    -----
    Järvelin et al. (2008), sections 2.2 and 3.3: ``sDCG_q = DCG_q / (1 + log_bq q)``,
    top-X of each query concatenated, the ideal session = the topic's ideal top-X
    repeated and discounted the same way, ``nsDCG = S / I`` component-wise.
    Steps: the layout, the grade source (the judgment join prepared once), the
    chunk context, the chunks through the engine, the requested measures, then the
    scores of queries and sessions without judgments set missing (NaN).
    Per-position vectors are recomputed (through the same engine) only when asked,
    unless ``keep_positions``.

    Examples
    --------
    A one-query session equals the query's DCG (rank discount ``1 + log_2 i``):

    >>> import pandas as pd
    >>> from sessionval.validate.flat import frame_from_flat
    >>> flat = pd.DataFrame({"session_id": "s", "user_id": "u", "topic_id": "T",
    ...     "system_id": "S", "query_pos": 1, "rank": [1, 2, 3], "doc_id": ["a", "b", "c"]})
    >>> frame = frame_from_flat(flat).frame
    >>> qrels = pd.DataFrame({"topic_id": "T", "doc_id": ["a", "c"], "grade": [1, 3],
    ...     "assessor": ""}).astype({"topic_id": "category", "doc_id": "category",
    ...     "grade": "int16", "assessor": "category"})
    >>> ev = evaluate(frame, JudgmentFrame(qrels, GradeScale.default()),
    ...               measures=["sDCG(b=2)@3", "last(RR)"])
    >>> round(float(ev.per_session()["sdcg"][0]), 4)  # 1/1 + 100/(1 + log2 3)
    39.6853
    >>> ev.per_session()[["sDCG(b=2)@3", "last(RR)"]].round(4).values.tolist()
    [[39.6853, 1.0]]
    """
    cfg, notes = fit_gains(config or SessionConfig(), judgments, frame)
    warn_notes(notes)
    eng = engine if engine is not None else LocalEngine()
    study_layout(frame)  # checked as given, so a message names the caller's rows
    frame = frame.in_id_order()  # the same sessions in any input order: the same tables
    lay = study_layout(frame)
    parsed = parse_measures(measures) if measures else []
    src = grade_source(frame, judgments, cfg)
    ideal = src.ideal(frame, cfg)
    plans = _position_plans(cfg, parsed)
    base_key = cfg.model_dump_json()
    ctx = chunk_context(frame, lay, src, cfg, ideal, plans.pop(base_key, (cfg, ()))[1])
    chunks = []
    # a query occupies at most its cut-off's positions: the whole arrays' bound
    fill = PositionFill(int(np.maximum(ctx.query_cutoff, 0).sum())) if keep_positions else None
    for chunk in chunk_results(eng, partial(run_chunk, positions=keep_positions), ctx):
        if fill is not None and chunk.p is not None:  # copied while fresh, then freed
            fill.add(chunk.p)
            chunk.p = None
        chunks.append(chunk)
    qa, sa = _gather(chunks)

    # single-query measures (and the measures inside aggregates), on each query's list
    inner = [m for m in parsed if m.scope == "query"]
    inner += [m.inner for m in parsed if m.inner is not None and m.inner not in inner]
    values: dict[str, FloatArray] = {}
    if inner:
        lists = RankedLists.from_frame(
            frame, judgments, source=cfg.judgments, negative=cfg.negative, unjudged=cfg.unjudged
        )
        values = {repr(m): m.compute(lists, empty=cfg.empty_ideal) for m in inner}
    query_ms = [m for m in parsed if m.scope == "query"]
    for m in query_ms:
        qa[repr(m)] = values[repr(m)]

    # session measures: one run of the session vectors per distinct configuration
    runs: dict[str, tuple[SessionScores, dict[str, npt.NDArray[Any]]]] = {
        base_key: (_scores(qa, sa, lay), sa)
    }
    session_values: dict[str, FloatArray] = {}
    for m in parsed:
        if m.scope != "session":
            continue
        if m.inner is not None:
            session_values[repr(m)] = m.definition.compute(
                values[repr(m.inner)], lay.session_query_offsets
            )
            continue
        cfg_m = _measure_config(cfg, m)
        key = cfg_m.model_dump_json()
        if key not in runs:
            extra = plans.get(key, (cfg_m, ()))[1]
            ctx_m = chunk_context(frame, lay, src, cfg_m, src.ideal(frame, cfg_m), extra)
            qa_m, sa_m = _gather(eng.map_sessions(run_chunk, ctx_m))
            runs[key] = (_scores(qa_m, sa_m, lay), sa_m)
        scores, arrays = runs[key]
        if isinstance(m.definition.compute, PositionCompute):
            session_values[repr(m)] = arrays.get(repr(m), np.zeros(0))
        else:
            session_values[repr(m)] = m.definition.compute(
                scores, empty=cfg.empty_ideal, **m.own_params()
            )
    _without_judgments(
        _judged_queries(frame, judgments, cfg),
        lay,
        qa,
        sa,
        session_values,
        [repr(m) for m in query_ms],
    )
    ctx = replace(ctx, extra=())  # the positions pass recomputes the vectors, not the measures
    ev = SessionEvaluation(
        config=cfg,
        frame=frame,
        query_session=lay.query_session,
        query_pos=lay.query_pos,
        queries=qa,
        sessions=sa,
        n_unjudged=sum(c.n_unjudged for c in chunks),
        n_negative=sum(c.n_negative for c in chunks),
        # an unjudged session's ideal is missing, not empty: it is not counted here
        n_empty_ideal=int(np.count_nonzero(sa["ideal_final"] == 0)) if chunks else 0,
        high_grade=ctx.high,
        measures=tuple(repr(m) for m in query_ms),
        session_measures=tuple(session_values),
        session_values=session_values,
        _ctx=ctx,
        _engine=eng,
        _ideal=ideal,
    )
    if fill is not None:  # the scoring pass's own vectors (the measures do not change them)
        ev.keep_positions(fill)
    return ev

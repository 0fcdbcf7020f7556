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

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
import pandas as pd

from ..errors import InputFormatError, JudgmentError, MeasureSpecError
from ..frame import JudgmentFrame, SessionFrame
from ..judgments.ideal import _searcher_ideal, ideal_gains
from ..judgments.lookup import JudgmentIndex
from ..measures.lists import RankedLists
from ..measures.registry import parse_measures
from ..models.judgments import GradeScale
from .chunks import _concat, _Context, _run_chunk
from .config import SessionConfig
from .result import SessionEvaluation

__all__ = [
    "evaluate",
]


# ---------------------------------------------------------------------------------------------
# configuration


# ---------------------------------------------------------------------------------------------
# chunked runner


# ---------------------------------------------------------------------------------------------
# result object


# ---------------------------------------------------------------------------------------------
# evaluate


# ---------------------------------------------------------------------------------------------
# evaluate


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
        measure grammar of :mod:`sessionval.measures` (``"nDCG(gain=0-1-10-100)@10"``,
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

    >>> from sessionval.validate.flat import frame_from_flat
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

r"""Session kernels: sDCG session vectors, every policy of spec section 4, vectorised.

Pure array functions: no I/O, no validation of files, no pandas.  The pipeline
(:mod:`sessionval.evaluation`) turns a :class:`~sessionval.frame.SessionFrame` and
judgments into the arrays these kernels take, and their outputs into tidy tables.

Layout
------
*Rows* are result rows grouped by query (``row_query`` non-decreasing, ranks in
order inside a query).  *Queries* are grouped by session (``query_session``
non-decreasing, query positions ``1..n`` in order).  A *position* is one component
of a session vector: query ``q`` occupies ``L_q`` consecutive positions (its
*slot*), so a session of ``n`` queries has ``P = L_1 + … + L_n`` positions (``nX``
with the default padding).  Every kernel works on the concatenation of all
sessions with offsets, never with a Python loop per session or per query; the only
loop is over query *positions* 1..max(n) for the ``drop`` duplicate policy (each
pass is vectorised over all sessions).

Formulas (Järvelin et al. 2008, ECIR, section 2 and appendix; spec section 4)
--------------------------------------------------------------------------------
.. math::

    qd(q) = \frac{1}{1 + \log_{bq} q}, \qquad
    S[p] = \sum_{q' < q} qd(q')\, DCG_{q'}[L_{q'}] + qd(q)\, DCG_q[i]

for position ``p`` in slot ``i`` of query ``q``; since every DCG is a running sum,
``S`` is the running sum over the session of ``qd(q) · G_q[i] / d(i)``, which is
how it is computed (a cumulative sum with a reset at each session start).

References
----------
Järvelin, K., Price, S. L., Delcambre, L. M. L., Nielsen, M. L. (2008). Discounted
cumulated gain based evaluation of multiple-query IR sessions. ECIR 2008, LNCS 4956,
4-15. https://doi.org/10.1007/978-3-540-78646-7_4

Jiang, J., Allan, J. (2016). Correlation between system and user metrics in a
session. CHIIR 2016 (the ``shifted-log`` discounts).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal, TypeAlias, get_args

import numpy as np
import numpy.typing as npt

from .._types import BoolArray, FloatArray, IntArray
from ..errors import MeasureSpecError
from .discounts import QueryDiscount, RankDiscount, query_discount, rank_discount
from .segments import (
    offsets_from_counts,
    segment_cumsum,
    segment_ids,
    segment_ranks,
    segment_sum,
)
from .slots import DuplicatePolicy, ShortLists, row_slots

__all__ = [
    "IDEAL_RULES",
    "IdealRule",
    "SessionParams",
    "SessionVectors",
    "session_vectors",
]


IdealRule: TypeAlias = Literal["repeat", "no-repeat"]

IDEAL_RULES: Final[tuple[IdealRule, ...]] = get_args(IdealRule)


# ---------------------------------------------------------------------------------------------
# typed parameters (parsed once at the boundary, trusted by the kernels)


@dataclass(frozen=True, slots=True)
class SessionParams:
    """The parameters :func:`session_vectors` uses, as typed, already validated values.

    Built from a :class:`~sessionval.evaluation.config.SessionConfig`
    (``config.session_params()``); the kernel trusts every field.

    Parameters
    ----------
    b, discount
        Rank discount :func:`~sessionval.kernels.discounts.rank_discount`.
    bq, query_discount
        Query discount :func:`~sessionval.kernels.discounts.query_discount`.
    duplicates
        ``"every"``: each appearance earns its gain (Järvelin et al. 2008's choice);
        ``"first"``: a document shown by an earlier query of the session earns 0 but
        keeps its rank; ``"drop"``: it is removed and the list moves up.
    short_lists
        :class:`~sessionval.kernels.slots.ShortLists`
        (:func:`~sessionval.kernels.slots.slot_lengths`).
    ideal
        ``"repeat"``: the top-``L_q`` ideal gains of each query's judgment key in its
        slot, discounted like the query (Järvelin et al. 2008, section 3.3);
        ``"no-repeat"``: each relevant document of the session's key used once,
        largest gains on the positions of largest weight ``qd(q)/d(i)`` (greedy over
        discounted positions, which maximises the final ideal value), as in the TREC
        Dynamic Domain jig.  ``no-repeat`` needs one judgment key per session.
    ideal_grid
        ``(N, X)`` or ``None``.  With ``no-repeat``, the ideal session is the best session
        of ``N`` queries of ``X`` positions each, whatever the session's own length (the
        TREC DD jig's ``sDCG_bound_per_topic``: the iteration cut-off times 5 documents);
        ``I[p]`` is that ideal's running value at the position's (query, rank) cell and
        the final ideal its total.  ``None``: the session's own positions.
    """

    b: float
    bq: float
    discount: RankDiscount
    query_discount: QueryDiscount
    duplicates: DuplicatePolicy
    short_lists: ShortLists
    ideal: IdealRule
    ideal_grid: tuple[int, int] | None = None


# ---------------------------------------------------------------------------------------------
# the session vectors


@dataclass(frozen=True, slots=True)
class SessionVectors:
    """Session vectors of many sessions, concatenated, with per-query and per-session sums.

    Per position (length ``P``, sessions one after another, queries in order):
    ``pos_query`` (query index), ``pos_slot`` (1-based rank in the query's slot, the
    rank the discount uses), ``pos_row`` (input row shown there, −1 when padded),
    ``gain`` (gain credited after the duplicate policy), ``sdcg`` (``S[p]``) and
    ``ideal`` (``I[p]``).

    Per query: ``slot_offsets`` (positions owned by each query, ``n_q + 1``),
    ``n_available`` (rows after ``drop``), ``n_repeats`` (rows that were repeats of an
    earlier scored document of the session, counted for ``first``/``drop``), ``qd``,
    ``dcg`` (``DCG_q[L_q]``, no query discount), ``ideal_dcg``.

    Per session: ``session_offsets`` (positions, ``n_s + 1``), ``final`` (``S[P]``,
    summed per query without cancellation), ``ideal_final``.

    Per input row: ``row_scored`` (shown at a session position) and ``row_slot``
    (its slot rank when scored, else 0).
    """

    pos_query: IntArray
    pos_slot: IntArray
    pos_row: IntArray
    gain: FloatArray
    sdcg: FloatArray
    ideal: FloatArray
    slot_offsets: IntArray
    n_available: IntArray
    n_repeats: IntArray
    qd: FloatArray
    dcg: FloatArray
    ideal_dcg: FloatArray
    session_offsets: IntArray
    final: FloatArray
    ideal_final: FloatArray
    row_scored: BoolArray
    row_slot: IntArray


@dataclass(frozen=True, slots=True)
class _Layout:
    """Session positions: offsets, owners, slot ranks and the discount weights."""

    slot_offsets: IntArray
    session_offsets: IntArray
    pos_query: IntArray
    pos_slot: IntArray
    inv_d: FloatArray  # 1 / d(i) for slot ranks 1..width
    inv_pos: FloatArray  # 1 / d(i) per position
    qd: FloatArray  # per query
    qd_pos: FloatArray  # per position


def _layout(
    lengths: IntArray, qs: IntArray, qp: IntArray, n_sessions: int, params: SessionParams
) -> _Layout:
    """Step 2: lay the slots out as session positions and weigh them ``qd(q) / d(i)``."""
    slot_off = offsets_from_counts(lengths)
    pos_query = segment_ids(slot_off)
    pos_slot = segment_ranks(slot_off)
    s_counts = np.bincount(qs, weights=lengths, minlength=n_sessions).astype(np.int64)
    qd = query_discount(qp, bq=params.bq, kind=params.query_discount)
    # discount table for slot ranks 1..max, gathered (one log per distinct rank)
    width = int(lengths.max(initial=0))
    inv_d = 1.0 / rank_discount(np.arange(1, width + 1), b=params.b, kind=params.discount)
    return _Layout(
        slot_off,
        offsets_from_counts(s_counts),
        pos_query,
        pos_slot,
        inv_d,
        inv_d[pos_slot - 1],
        qd,
        qd[pos_query],
    )


def _ideal_repeat(
    lay: _Layout,
    lengths: IntArray,
    qs: IntArray,
    qkey: IntArray,
    ioff: IntArray,
    ival: FloatArray,
    n_sessions: int,
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Ideal ``repeat``: each query's slot holds its key's top ideal gains.

    Returns the ideal vector ``I``, the per-query ideal DCG and the per-session final ideal.
    """
    nq = qs.size
    width = lay.inv_d.size
    # per judgment key used here: cumulative discounted ideal over slot ranks 1..width
    uk, kinv = np.unique(qkey, return_inverse=True)
    kinv = kinv.astype(np.int64)
    valid = uk >= 0
    safe = np.where(valid, uk, 0)
    r_len = np.zeros(uk.size, dtype=np.int64)
    if ioff.size > 1:
        r_len = np.where(valid, np.minimum(ioff[safe + 1] - ioff[safe], width), 0)
    table = np.zeros((uk.size, width))
    t_off = offsets_from_counts(r_len)
    t_key = segment_ids(t_off)
    t_col = segment_ranks(t_off, t_key) - 1
    if t_key.size:
        table[t_key, t_col] = ival[ioff[safe[t_key]] + t_col]
    icum = np.cumsum(table * lay.inv_d[None, :], axis=1)
    ideal_dcg = np.zeros(nq)
    has_pos = lengths > 0
    ideal_dcg[has_pos] = icum[kinv[has_pos], lengths[has_pos] - 1]
    isq = lay.qd * ideal_dcg
    sq_off = offsets_from_counts(np.bincount(qs, minlength=n_sessions))
    ibase = segment_cumsum(isq, sq_off) - isq
    ideal_vec = ibase[lay.pos_query] + lay.qd_pos * icum[kinv[lay.pos_query], lay.pos_slot - 1]
    return ideal_vec, ideal_dcg, segment_sum(isq, qs, n_sessions)


def session_vectors(
    *,
    row_query: npt.ArrayLike,
    row_gain: npt.ArrayLike,
    row_doc: npt.ArrayLike | None,
    query_session: npt.ArrayLike,
    query_pos: npt.ArrayLike,
    query_cutoff: npt.ArrayLike,
    query_ideal: npt.ArrayLike,
    ideal_offsets: npt.ArrayLike,
    ideal_values: npt.ArrayLike,
    n_sessions: int,
    params: SessionParams,
    row_rank: npt.ArrayLike | None = None,
) -> SessionVectors:
    r"""Concatenated top-X session vectors ``S`` and ideal ``I`` of many sessions.

    Parameters
    ----------
    row_query
        Query index of each result row (non-decreasing; rows of a query in rank order).
    row_gain
        Gain of each row (no NaN: unjudged already handled).
    row_doc
        Integer document code of each row; required when ``params.duplicates`` is
        ``first`` or ``drop`` (may be ``None`` for ``every``).
    query_session
        Session index of each query (non-decreasing; positions in order).
    query_pos
        Position ``q`` of each query in its session (1..n).
    query_cutoff
        Cut-off of each query: ``X`` or the searcher's scan depth.
    query_ideal
        Index of each query's judgment key into ``ideal_offsets`` (−1: no judgments).
    ideal_offsets, ideal_values
        Ideal gain vectors per judgment key in segment layout (descending gains).
    n_sessions
        Number of sessions (sessions without queries get empty vectors).
    params
        Discounts, duplicate, short-list and ideal policies (:class:`SessionParams`),
        already validated: the kernel does not check them again.
    row_rank
        Optional rank of each row inside its query's list when it is known to be
        ``1..k`` without gaps (saves recomputing it; ignored for ``drop``).

    Returns
    -------
    SessionVectors

    Notes
    -----
    With ``w_p = qd(q)/d(i)`` for position ``p`` in slot ``i`` of query ``q``:
    :math:`S[p] = \sum_{p' \le p} w_{p'} G_{p'}` within the session, which equals
    :math:`\sum_{q'<q} qd(q') DCG_{q'}[L_{q'}] + qd(q) DCG_q[i]` (spec section 4).
    Three steps: rows to slots (duplicates, short lists), slots to weighted
    positions, then the running sums of the run and of the ideal.

    Examples
    --------
    One session, two queries, ``X = 3``, gains 0-1-10-100: query 1 shows grades
    (0, 3, 0), query 2 shows (3); the ideal of the topic is (100, 10).

    >>> paper = SessionParams(b=2, bq=4, discount="jk2008", query_discount="jk2008",
    ...     duplicates="every", short_lists=ShortLists("pad"), ideal="repeat")
    >>> v = session_vectors(row_query=[0, 0, 0, 1], row_gain=[0, 100, 0, 100.0],
    ...     row_doc=None, query_session=[0, 0], query_pos=[1, 2],
    ...     query_cutoff=[3, 3], query_ideal=[0, 0], ideal_offsets=[0, 2],
    ...     ideal_values=[100, 10.0], n_sessions=1, params=paper)
    >>> v.sdcg.round(2)  # 100/2 at rank 2; then (1/1.5)·100/1 at query 2 rank 1
    array([  0.  ,  50.  ,  50.  , 116.67, 116.67, 116.67])
    >>> v.ideal.round(2)
    array([100.  , 105.  , 105.  , 171.67, 175.  , 175.  ])
    """
    rq = np.asarray(row_query, dtype=np.int64)
    rg = np.asarray(row_gain, dtype=np.float64)
    rd = None if row_doc is None else np.asarray(row_doc, dtype=np.int64)
    qs = np.asarray(query_session, dtype=np.int64)
    qp = np.asarray(query_pos, dtype=np.int64)
    qkey = np.asarray(query_ideal, dtype=np.int64)
    ioff = np.asarray(ideal_offsets, dtype=np.int64)
    ival = np.asarray(ideal_values, dtype=np.float64)
    rr = None if row_rank is None else np.asarray(row_rank, dtype=np.int64)
    nq = qs.size

    qcut = np.asarray(query_cutoff, dtype=np.int64)
    sl = row_slots(
        rq,
        rg,
        rd,
        qs,
        qp,
        qcut,
        duplicates=params.duplicates,
        short_lists=params.short_lists,
        row_rank=rr,
    )
    lay = _layout(sl.lengths, qs, qp, n_sessions, params)

    # the run: credited gains at their positions, then running sums
    rows_scored = np.flatnonzero(sl.scored)
    at = lay.slot_offsets[rq[rows_scored]] + sl.slot[rows_scored] - 1
    n_pos = int(lay.slot_offsets[-1])
    gain = np.zeros(n_pos)
    gain[at] = sl.credited[rows_scored]
    pos_row = np.full(n_pos, -1, dtype=np.int64)
    pos_row[at] = rows_scored
    g_inv = gain * lay.inv_pos
    dcg = segment_sum(g_inv, lay.pos_query, nq)
    sdcg = segment_cumsum(lay.qd_pos * g_inv, lay.session_offsets)

    # the ideal
    if params.ideal == "repeat":
        ideal_vec, ideal_dcg, ideal_final = _ideal_repeat(
            lay, sl.lengths, qs, qkey, ioff, ival, n_sessions
        )
    elif params.ideal_grid is None:
        weight = lay.qd_pos * lay.inv_pos
        pos_session = segment_ids(lay.session_offsets)
        skey = _session_keys(qs, qkey, n_sessions)
        ideal_gain = _ideal_no_repeat(skey, ioff, ival, weight, pos_session, lay.session_offsets)
        ideal_vec = segment_cumsum(weight * ideal_gain, lay.session_offsets)
        ideal_dcg = segment_sum(ideal_gain * lay.inv_pos, lay.pos_query, nq)
        ideal_final = segment_sum(lay.qd * ideal_dcg, qs, n_sessions)
    else:
        ideal_vec, ideal_dcg, ideal_final = _ideal_grid(
            lay, qs, qp, _session_keys(qs, qkey, n_sessions), ioff, ival, params, params.ideal_grid
        )
    return SessionVectors(
        pos_query=lay.pos_query,
        pos_slot=lay.pos_slot,
        pos_row=pos_row,
        gain=gain,
        sdcg=sdcg,
        ideal=ideal_vec,
        slot_offsets=lay.slot_offsets,
        n_available=sl.n_available,
        n_repeats=np.bincount(rq[sl.repeat], minlength=nq).astype(np.int64),
        qd=lay.qd,
        dcg=dcg,
        ideal_dcg=ideal_dcg,
        session_offsets=lay.session_offsets,
        final=segment_sum(lay.qd * dcg, qs, n_sessions),
        ideal_final=ideal_final,
        row_scored=sl.scored,
        row_slot=sl.slot,
    )


def _session_keys(query_session: IntArray, query_key: IntArray, n_s: int) -> IntArray:
    """The one judgment key of each session (−1: no query); several keys are an error."""
    skey = np.full(n_s, -1, dtype=np.int64)
    if not query_session.size:
        return skey
    starts = np.flatnonzero(np.r_[True, query_session[1:] != query_session[:-1]])
    owner = np.searchsorted(starts, np.arange(query_session.size), side="right") - 1
    diff = query_key != query_key[starts][owner]
    if diff.any():
        q = int(np.flatnonzero(diff)[0])
        raise MeasureSpecError(
            f"ideal 'no-repeat' needs one judgment key per session; session index "
            f"{int(query_session[q])} uses several (first change at query index {q}); "
            "use ideal 'repeat' for per-turn judgments"
        )
    skey[query_session[starts]] = query_key[starts]
    return skey


def _ideal_no_repeat(
    skey: IntArray,
    ioff: IntArray,
    ival: FloatArray,
    weight: FloatArray,
    pos_session: IntArray,
    sess_off: IntArray,
) -> FloatArray:
    """Greedy ideal without repeated documents: sort each session's positions by weight."""
    n_pos = weight.size
    # rank of each position inside its session by decreasing weight (ties: earlier first);
    # weights equal in exact arithmetic (q1 rank 2 and q2 rank 1 under shifted-log with
    # b = bq) can differ in the last bit, so they are compared to 12 decimals
    order = np.lexsort((np.arange(n_pos), -np.round(weight, 12), pos_session))
    j = np.empty(n_pos, dtype=np.int64)
    j[order] = segment_ranks(sess_off) - 1
    key = skey[pos_session]
    ok = key >= 0
    safe = np.where(ok, key, 0)
    r_len = (
        np.where(ok, ioff[safe + 1] - ioff[safe], 0)
        if ioff.size > 1
        else np.zeros(n_pos, dtype=np.int64)
    )
    has = ok & (j < r_len)
    out = np.zeros(n_pos)
    if ival.size:
        out[has] = ival[ioff[safe[has]] + j[has]]
    return out


def _ideal_grid(
    lay: _Layout,
    qs: IntArray,
    qp: IntArray,
    skey: IntArray,
    ioff: IntArray,
    ival: FloatArray,
    params: SessionParams,
    grid: tuple[int, int],
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Ideal ``no-repeat`` over a fixed grid of ``N`` queries × ``X`` ranks (TREC DD bound).

    The grid's cells, weighted ``qd(q)/d(i)``, are sorted once (the same for every
    session); each judgment key's ideal gains fill them greedily, each document once.
    Returns the ideal vector at the sessions' positions, the per-query ideal DCG of
    the grid's rows and the per-session final (the grid's total).
    """
    n_grid, width = grid
    qd = query_discount(np.arange(1, n_grid + 1), bq=params.bq, kind=params.query_discount)
    inv_d = 1.0 / rank_discount(np.arange(1, width + 1), b=params.b, kind=params.discount)
    w = (qd[:, None] * inv_d[None, :]).ravel()
    order = np.argsort(-w, kind="stable")
    uk, kinv = np.unique(skey, return_inverse=True)
    valid = uk >= 0
    safe = np.where(valid, uk, 0)
    r_len = np.zeros(uk.size, dtype=np.int64)
    if ioff.size > 1:
        r_len = np.where(valid, np.minimum(ioff[safe + 1] - ioff[safe], w.size), 0)
    gains = np.zeros((uk.size, w.size))
    t_off = offsets_from_counts(r_len)
    t_key = segment_ids(t_off)
    t_j = segment_ranks(t_off, t_key) - 1
    if t_key.size:
        gains[t_key, order[t_j]] = ival[ioff[safe[t_key]] + t_j]
    cum = np.cumsum(gains * w[None, :], axis=1)
    # each position reads the grid cell of its (query, rank), clipped into the grid
    pos_key = kinv[qs[lay.pos_query]]
    q_cell = np.minimum(qp[lay.pos_query], n_grid) - 1
    i_cell = np.minimum(lay.pos_slot, width) - 1
    ideal_vec = cum[pos_key, q_cell * width + i_cell] if w.size else np.zeros(lay.pos_slot.size)
    row_dcg = (gains * np.tile(inv_d, n_grid)[None, :]).reshape(uk.size, n_grid, width).sum(2)
    in_grid = qp <= n_grid
    ideal_dcg = np.zeros(qs.size)
    ideal_dcg[in_grid] = row_dcg[kinv[qs[in_grid]], qp[in_grid] - 1]
    total = cum[:, -1] if w.size else np.zeros(uk.size)
    return ideal_vec, ideal_dcg, total[kinv]

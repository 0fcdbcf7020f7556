r"""Session kernels: sDCG session vectors, every policy of spec section 4, vectorised.

Pure array functions: no I/O, no validation of files, no pandas.  The pipeline
(:mod:`sessionval.pipeline`) turns a :class:`~sessionval.frame.SessionFrame` and
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

import math
import re
from dataclasses import dataclass
from typing import Final, Literal, TypeAlias

import numpy as np
import numpy.typing as npt
import pandas as pd

from ..errors import MeasureSpecError

__all__ = [
    "DUPLICATE_POLICIES",
    "IDEAL_RULES",
    "QUERY_DISCOUNTS",
    "RANK_DISCOUNTS",
    "DuplicatePolicy",
    "IdealRule",
    "QueryDiscount",
    "RankDiscount",
    "SessionVectors",
    "parse_short_lists",
    "query_discount",
    "rank_discount",
    "segment_cumsum",
    "session_vectors",
    "slot_lengths",
    "weighted_sum",
]

FloatArray: TypeAlias = npt.NDArray[np.float64]
IntArray: TypeAlias = npt.NDArray[np.int64]
BoolArray: TypeAlias = npt.NDArray[np.bool_]

DuplicatePolicy: TypeAlias = Literal["every", "first", "drop"]
IdealRule: TypeAlias = Literal["repeat", "no-repeat"]
QueryDiscount: TypeAlias = Literal["jk2008", "shifted-log", "none"]
RankDiscount: TypeAlias = Literal["jk2008", "jk2002", "jk2002rn", "log2p1", "shifted-log", "none"]

DUPLICATE_POLICIES: Final = ("every", "first", "drop")
IDEAL_RULES: Final = ("repeat", "no-repeat")
QUERY_DISCOUNTS: Final = ("jk2008", "shifted-log", "none")
RANK_DISCOUNTS: Final = ("jk2008", "jk2002", "jk2002rn", "log2p1", "shifted-log", "none")

_SHORT = re.compile(r"^(pad|none|min:(\d+))$")


# ---------------------------------------------------------------------------------------------
# discounts


def query_discount(
    positions: npt.ArrayLike, *, bq: float = 4.0, kind: QueryDiscount = "jk2008"
) -> FloatArray:
    r"""Multiplier of the query at each session position ``q`` (1-based).

    Parameters
    ----------
    positions
        Query positions ``q >= 1``.
    bq
        Log base of the query discount, ``bq > 1``; ``math.inf`` turns the discount off.
    kind
        ``"jk2008"``: :math:`1 / (1 + \log_{bq} q)` (Järvelin et al. 2008, eq. 1);
        ``"shifted-log"``: :math:`1 / \log_{bq}(q + bq - 1)` (Jiang & Allan 2016's
        session-metrics code); ``"none"``: 1.

    Returns
    -------
    numpy.ndarray
        float64 multipliers, 1 at ``q = 1`` for every kind.

    Raises
    ------
    MeasureSpecError
        ``bq <= 1`` or an unknown ``kind``.

    Examples
    --------
    >>> query_discount([1, 2, 4, 16], bq=4)
    array([1.        , 0.66666667, 0.5       , 0.33333333])
    >>> query_discount([1, 2], bq=4, kind="shifted-log").round(4)
    array([1.    , 0.8614])
    """
    q = np.asarray(positions, dtype=np.float64)
    if not bq > 1:
        raise MeasureSpecError(f"query log base bq must be > 1, got {bq}")
    if kind == "none" or math.isinf(bq):
        return np.ones_like(q)
    if kind == "jk2008":
        return 1.0 / (1.0 + np.log(q) / math.log(bq))
    if kind == "shifted-log":
        return math.log(bq) / np.log(q + bq - 1.0)
    raise MeasureSpecError(f"query discount {kind!r} unknown; use one of {QUERY_DISCOUNTS}")


def rank_discount(
    ranks: npt.ArrayLike, *, b: float = 2.0, kind: RankDiscount = "jk2008"
) -> FloatArray:
    r"""Denominator ``d(i)`` of the rank discount: ``DCG[i] = Σ_{j<=i} G[j] / d(j)``.

    Parameters
    ----------
    ranks
        Ranks ``i >= 1`` (within a query's slot).
    b
        Log base ``b > 1``.
    kind
        ``"jk2008"``: :math:`1 + \log_b i` (Järvelin et al. 2008, appendix eq. 2);
        ``"jk2002"``: 1 for ``i < b``, :math:`\log_b i` otherwise (TOIS 2002);
        ``"jk2002rn"``: 1 at ``i = 1``, :math:`\log_b i` from 2 on (RN-2002-2);
        ``"log2p1"``: :math:`\log_2(i + 1)` (Burges et al. 2005); ``"shifted-log"``:
        :math:`\log_b(i + b - 1)` (Jiang & Allan 2016's code); ``"none"``: 1 (CG).

    Returns
    -------
    numpy.ndarray
        float64 denominators.

    Examples
    --------
    The appendix of Järvelin et al. (2008), ``b = 4``, ``G' = <3,2,3,0,0,1,2,2,3,0>``:
    the formula gives ``<3, 4.33, 6.01, 6.01, 6.01, 6.44, 7.28, 8.08, 9.24, 9.24>``.
    The paper prints 4 and 8.14 at ranks 2 and 8 (slips; spec section 2 erratum).

    >>> g = np.array([3, 2, 3, 0, 0, 1, 2, 2, 3, 0.0])
    >>> np.cumsum(g / rank_discount(np.arange(1, 11), b=4)).round(2)
    array([3.  , 4.33, 6.01, 6.01, 6.01, 6.44, 7.28, 8.08, 9.24, 9.24])
    """
    r = np.asarray(ranks, dtype=np.float64)
    if not b > 1:
        raise MeasureSpecError(f"rank log base b must be > 1, got {b}")
    lb = math.log(b)
    if kind == "jk2008":
        return 1.0 + np.log(r) / lb
    if kind == "jk2002":
        return np.where(r < b, 1.0, np.log(np.maximum(r, 1.0)) / lb)
    if kind == "jk2002rn":
        return np.where(r < 2, 1.0, np.log(np.maximum(r, 1.0)) / lb)
    if kind == "log2p1":
        return np.log2(r + 1.0)
    if kind == "shifted-log":
        return np.log(r + b - 1.0) / lb
    if kind == "none":
        return np.ones_like(r)
    raise MeasureSpecError(f"rank discount {kind!r} unknown; use one of {RANK_DISCOUNTS}")


# ---------------------------------------------------------------------------------------------
# segment helpers


def segment_cumsum(values: FloatArray, offsets: IntArray) -> FloatArray:
    """Compute the running sum of ``values``, restarting at every segment start.

    One global ``cumsum`` minus the total before each segment.  Absolute rounding
    error is at most about ``eps · Σ|values|`` (1e-7 on 30 million positions of
    gain 100), far below any reported digit.

    Examples
    --------
    >>> segment_cumsum(np.array([1.0, 2, 3, 4, 5]), np.array([0, 2, 2, 5]))
    array([ 1.,  3.,  3.,  7., 12.])
    """
    if values.size == 0:
        return values.astype(np.float64, copy=True)
    cs = np.cumsum(values, dtype=np.float64)
    before = np.concatenate(([0.0], cs))[offsets[:-1]]
    lengths = np.diff(offsets)
    out: FloatArray = cs - np.repeat(before, lengths)
    return out


def _within(offsets: IntArray) -> IntArray:
    """0-based index of each element inside its segment."""
    lengths = np.diff(offsets)
    n = int(offsets[-1])
    return np.arange(n, dtype=np.int64) - np.repeat(offsets[:-1], lengths)


def weighted_sum(index: IntArray, weights: npt.ArrayLike, n: int) -> FloatArray:
    """Sum ``weights`` per index value (``np.bincount`` with float64 result)."""
    out: FloatArray = np.bincount(
        index, weights=np.asarray(weights, dtype=np.float64), minlength=n
    ).astype(np.float64, copy=False)
    return out


def _offsets(counts: npt.NDArray[np.integer]) -> IntArray:
    off = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=off[1:])
    return off


# ---------------------------------------------------------------------------------------------
# short lists


def parse_short_lists(spec: str) -> tuple[Literal["pad", "none", "min"], int]:
    """Parse a short-list policy: ``"pad"``, ``"none"`` or ``"min:m"``.

    Examples
    --------
    >>> parse_short_lists("min:3")
    ('min', 3)
    """
    m = _SHORT.match(spec.strip())
    if not m:
        raise MeasureSpecError(
            f"short-list policy {spec!r} unknown; use 'pad', 'none' or 'min:m' with m >= 0"
        )
    if m.group(2) is not None:
        return "min", int(m.group(2))
    return ("pad" if m.group(1) == "pad" else "none"), 0


def slot_lengths(
    n_available: npt.ArrayLike, depth: npt.ArrayLike, *, short_lists: str = "pad"
) -> IntArray:
    """Count the session positions ``L_q`` each query occupies.

    Parameters
    ----------
    n_available
        Results the query can show (after ``drop``/``condense`` removed rows).
    depth
        The query's depth: ``X``, or its scan depth from the log.
    short_lists
        ``"pad"``: ``L = depth`` (missing results count as gain 0, charging the
        searcher's time); ``"none"``: ``L = min(depth, n)``; ``"min:m"``:
        ``L = min(depth, max(n, m))``, a minimum of ``m`` positions per query
        (spec section 4, the hybrid Järvelin et al. 2008 suggest).

    Examples
    --------
    >>> n, x = np.array([0, 3, 12]), np.array([10, 10, 10])
    >>> slot_lengths(n, x), slot_lengths(n, x, short_lists="none")
    (array([10, 10, 10]), array([ 0,  3, 10]))
    >>> slot_lengths(n, x, short_lists="min:5")
    array([ 5,  5, 10])
    """
    n = np.asarray(n_available, dtype=np.int64)
    d = np.asarray(depth, dtype=np.int64)
    kind, m = parse_short_lists(short_lists)
    if kind == "pad":
        return d.copy()
    if kind == "none":
        return np.minimum(d, n)
    return np.minimum(d, np.maximum(n, m))


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


def _repeats_first(row_session: IntArray, row_doc: IntArray, candidate: BoolArray) -> BoolArray:
    """Mark candidate rows whose (session, doc) was a candidate at an earlier row."""
    out = np.zeros(row_session.size, dtype=bool)
    idx = np.flatnonzero(candidate)
    if idx.size == 0:
        return out
    ndoc = int(row_doc.max()) + 1 if row_doc.size else 1
    keys = row_session[idx] * ndoc + row_doc[idx]
    # rows are in session order, so "earlier row" is "earlier in the session"
    out[idx] = pd.Series(keys).duplicated(keep="first").to_numpy()
    return out


def _drop_passes(
    *,
    row_query: IntArray,
    row_session: IntArray,
    row_doc: IntArray,
    query_pos: IntArray,
    depth: IntArray,
    short_lists: str,
    n_queries: int,
) -> tuple[IntArray, BoolArray, IntArray, BoolArray]:
    """``drop`` policy: one vectorised pass per query position (not per query).

    A row is a repeat when its document was *shown* (scored) by an earlier query
    of the same session; repeats are removed and later rows move up.  Returns the
    slot rank of each row (0 for a repeat), the repeat flags, the available count
    per query and the scored flags.
    """
    n = row_query.size
    slot = np.zeros(n, dtype=np.int64)
    repeat = np.zeros(n, dtype=bool)
    scored = np.zeros(n, dtype=bool)
    avail = np.zeros(n_queries, dtype=np.int64)
    if n == 0:
        return slot, repeat, avail, scored
    ndoc = int(row_doc.max()) + 1
    pair, _ = pd.factorize(row_session * ndoc + row_doc)
    seen = np.zeros(int(pair.max()) + 1, dtype=bool)
    row_pos = query_pos[row_query]
    order = np.argsort(row_pos, kind="stable")  # rows grouped by query position
    bounds = np.searchsorted(row_pos[order], np.arange(1, int(row_pos.max()) + 2))
    for p in range(int(bounds.size) - 1):  # loop over query positions, not queries
        rows = order[bounds[p] : bounds[p + 1]]
        if rows.size == 0:
            continue
        rep = seen[pair[rows]]
        keep = ~rep
        rq = row_query[rows]
        # rows of one query are contiguous here (stable sort); new rank = running count
        start = np.ones(rows.size, dtype=bool)
        start[1:] = rq[1:] != rq[:-1]
        cs = np.cumsum(keep)
        first = np.flatnonzero(start)
        base = np.repeat(cs[first] - keep[first], np.diff(np.append(first, rows.size)))
        new_rank = np.where(keep, cs - base, 0)
        av = np.bincount(rq, weights=keep, minlength=n_queries).astype(np.int64)
        qs = np.unique(rq)
        avail[qs] = av[qs]
        lengths = slot_lengths(av, depth, short_lists=short_lists)
        sc = keep & (new_rank <= lengths[rq])
        slot[rows] = np.where(sc, new_rank, 0)
        repeat[rows] = rep
        scored[rows] = sc
        seen[pair[rows[sc]]] = True
    return slot, repeat, avail, scored


def session_vectors(
    *,
    row_query: npt.ArrayLike,
    row_gain: npt.ArrayLike,
    row_doc: npt.ArrayLike | None,
    query_session: npt.ArrayLike,
    query_pos: npt.ArrayLike,
    query_depth: npt.ArrayLike,
    query_ideal: npt.ArrayLike,
    ideal_offsets: npt.ArrayLike,
    ideal_values: npt.ArrayLike,
    n_sessions: int,
    b: float = 2.0,
    bq: float = 4.0,
    discount: RankDiscount = "jk2008",
    qdiscount: QueryDiscount = "jk2008",
    duplicates: DuplicatePolicy = "every",
    short_lists: str = "pad",
    ideal: IdealRule = "repeat",
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
        Integer document code of each row (needed for ``first``/``drop``).
    query_session
        Session index of each query (non-decreasing; positions in order).
    query_pos
        Position ``q`` of each query in its session (1..n).
    query_depth
        Depth of each query: ``X`` or the searcher's scan depth.
    query_ideal
        Index of each query's judgment key into ``ideal_offsets`` (−1: no judgments).
    ideal_offsets, ideal_values
        Ideal gain vectors per judgment key in segment layout (descending gains).
    n_sessions
        Number of sessions (sessions without queries get empty vectors).
    b, bq, discount, qdiscount
        Rank and query discounts (:func:`rank_discount`, :func:`query_discount`).
    duplicates
        ``"every"``: each appearance earns its gain (Järvelin et al. 2008's choice);
        ``"first"``: a document shown by an earlier query of the session earns 0 but
        keeps its rank; ``"drop"``: it is removed and the list moves up.
    short_lists
        ``"pad"``, ``"none"`` or ``"min:m"`` (:func:`slot_lengths`).
    row_rank
        Optional rank of each row inside its query's list when it is known to be
        ``1..k`` without gaps (saves recomputing it; ignored for ``drop``).
    ideal
        ``"repeat"``: the top-``L_q`` ideal gains of each query's judgment key in its
        slot, discounted like the query (Järvelin et al. 2008, section 3.3);
        ``"no-repeat"``: each relevant document of the session's key used once,
        largest gains on the positions of largest weight ``qd(q)/d(i)`` (greedy over
        discounted positions, which maximises the final ideal value), as in the TREC
        Dynamic Domain jig.  ``no-repeat`` needs one judgment key per session.

    Returns
    -------
    SessionVectors

    Notes
    -----
    With ``w_p = qd(q)/d(i)`` for position ``p`` in slot ``i`` of query ``q``:
    :math:`S[p] = \sum_{p' \le p} w_{p'} G_{p'}` within the session, which equals
    :math:`\sum_{q'<q} qd(q') DCG_{q'}[L_{q'}] + qd(q) DCG_q[i]` (spec section 4).

    Examples
    --------
    One session, two queries, ``X = 3``, gains 0-1-10-100: query 1 shows grades
    (0, 3, 0), query 2 shows (3); the ideal of the topic is (100, 10).

    >>> v = session_vectors(row_query=[0, 0, 0, 1], row_gain=[0, 100, 0, 100.0],
    ...     row_doc=[0, 1, 2, 1], query_session=[0, 0], query_pos=[1, 2],
    ...     query_depth=[3, 3], query_ideal=[0, 0], ideal_offsets=[0, 2],
    ...     ideal_values=[100, 10.0], n_sessions=1)
    >>> v.sdcg.round(2)  # 100/2 at rank 2; then (1/1.5)·100/1 at query 2 rank 1
    array([  0.  ,  50.  ,  50.  , 116.67, 116.67, 116.67])
    >>> v.ideal.round(2)
    array([100.  , 105.  , 105.  , 171.67, 175.  , 175.  ])
    """
    rq = np.asarray(row_query, dtype=np.int64)
    rg = np.asarray(row_gain, dtype=np.float64)
    qs = np.asarray(query_session, dtype=np.int64)
    qp = np.asarray(query_pos, dtype=np.int64)
    qdepth = np.asarray(query_depth, dtype=np.int64)
    qkey = np.asarray(query_ideal, dtype=np.int64)
    ioff = np.asarray(ideal_offsets, dtype=np.int64)
    ival = np.asarray(ideal_values, dtype=np.float64)
    nq = qs.size
    n_rows = rq.size
    if duplicates not in DUPLICATE_POLICIES:
        raise MeasureSpecError(
            f"duplicate policy {duplicates!r} unknown; use one of {DUPLICATE_POLICIES}"
        )
    if ideal not in IDEAL_RULES:
        raise MeasureSpecError(f"ideal rule {ideal!r} unknown; use one of {IDEAL_RULES}")
    parse_short_lists(short_lists)
    if duplicates != "every" and row_doc is None:
        raise MeasureSpecError(f"duplicate policy {duplicates!r} needs document ids")

    counts = np.bincount(rq, minlength=nq).astype(np.int64)
    row_off = _offsets(counts)
    row_session = qs[rq]

    # ---- duplicates: slot rank and credited gain of every row
    if duplicates == "drop":
        rd = np.asarray(row_doc, dtype=np.int64)
        slot, repeat, avail, scored = _drop_passes(
            row_query=rq,
            row_session=row_session,
            row_doc=rd,
            query_pos=qp,
            depth=qdepth,
            short_lists=short_lists,
            n_queries=nq,
        )
        lengths = slot_lengths(avail, qdepth, short_lists=short_lists)
        credited = rg
    else:
        slot = _within(row_off) + 1 if row_rank is None else np.asarray(row_rank, dtype=np.int64)
        avail = counts
        lengths = slot_lengths(avail, qdepth, short_lists=short_lists)
        scored = slot <= lengths[rq]
        if duplicates == "first":
            rd = np.asarray(row_doc, dtype=np.int64)
            repeat = _repeats_first(row_session, rd, scored)
            credited = np.where(repeat, 0.0, rg)
        else:
            repeat = np.zeros(n_rows, dtype=bool)
            credited = rg
        slot = np.where(scored, slot, 0)

    # ---- positions
    slot_off = _offsets(lengths)
    n_pos = int(slot_off[-1])
    pos_query = np.repeat(np.arange(nq, dtype=np.int64), lengths)
    pos_slot = _within(slot_off) + 1
    s_counts = np.bincount(qs, weights=lengths, minlength=n_sessions).astype(np.int64)
    sess_off = _offsets(s_counts)

    rows_scored = np.flatnonzero(scored)
    at = slot_off[rq[rows_scored]] + slot[rows_scored] - 1
    gain = np.zeros(n_pos)
    gain[at] = credited[rows_scored]
    pos_row = np.full(n_pos, -1, dtype=np.int64)
    pos_row[at] = rows_scored

    qd = query_discount(qp, bq=bq, kind=qdiscount)
    # discount table for slot ranks 1..max, gathered (one log per distinct rank)
    width = int(lengths.max(initial=0))
    inv_d = 1.0 / rank_discount(np.arange(1, width + 1), b=b, kind=discount)
    inv_pos = inv_d[pos_slot - 1]
    qd_pos = qd[pos_query]
    q_counts = np.bincount(qs, minlength=n_sessions)
    sq_off = _offsets(q_counts)

    g_inv = gain * inv_pos
    dcg = weighted_sum(pos_query, g_inv, nq)
    sdcg = segment_cumsum(qd_pos * g_inv, sess_off)
    final = weighted_sum(qs, qd * dcg, n_sessions)

    # ---- ideal
    if ideal == "repeat":
        # per judgment key used here: cumulative discounted ideal over slot ranks 1..width
        uk, kinv = np.unique(qkey, return_inverse=True)
        kinv = kinv.astype(np.int64)
        valid = uk >= 0
        safe = np.where(valid, uk, 0)
        r_len = np.zeros(uk.size, dtype=np.int64)
        if ioff.size > 1:
            r_len = np.where(valid, np.minimum(ioff[safe + 1] - ioff[safe], width), 0)
        table = np.zeros((uk.size, width))
        t_off = _offsets(r_len)
        t_key = np.repeat(np.arange(uk.size, dtype=np.int64), r_len)
        t_col = _within(t_off)
        if t_key.size:
            table[t_key, t_col] = ival[ioff[safe[t_key]] + t_col]
        icum = np.cumsum(table * inv_d[None, :], axis=1)
        ideal_dcg = np.zeros(nq)
        has_pos = lengths > 0
        ideal_dcg[has_pos] = icum[kinv[has_pos], lengths[has_pos] - 1]
        isq = qd * ideal_dcg
        ibase = segment_cumsum(isq, sq_off) - isq
        ideal_vec = ibase[pos_query] + qd_pos * icum[kinv[pos_query], pos_slot - 1]
        ideal_final = weighted_sum(qs, isq, n_sessions)
    else:
        weight = qd_pos * inv_pos
        pos_session = np.repeat(np.arange(n_sessions, dtype=np.int64), s_counts)
        ideal_gain = _ideal_no_repeat(qs, qkey, ioff, ival, weight, pos_session, sess_off)
        ideal_vec = segment_cumsum(weight * ideal_gain, sess_off)
        ideal_dcg = weighted_sum(pos_query, ideal_gain * inv_pos, nq)
        ideal_final = weighted_sum(qs, qd * ideal_dcg, n_sessions)
    n_repeats = np.bincount(rq[repeat], minlength=nq).astype(np.int64)
    return SessionVectors(
        pos_query=pos_query,
        pos_slot=pos_slot,
        pos_row=pos_row,
        gain=gain,
        sdcg=sdcg,
        ideal=ideal_vec,
        slot_offsets=slot_off,
        n_available=avail,
        n_repeats=n_repeats,
        qd=qd,
        dcg=dcg,
        ideal_dcg=ideal_dcg,
        session_offsets=sess_off,
        final=final,
        ideal_final=ideal_final,
        row_scored=scored,
        row_slot=slot,
    )


def _ideal_no_repeat(
    query_session: IntArray,
    query_key: IntArray,
    ioff: IntArray,
    ival: FloatArray,
    weight: FloatArray,
    pos_session: IntArray,
    sess_off: IntArray,
) -> FloatArray:
    """Greedy ideal without repeated documents: sort each session's positions by weight."""
    n_s = sess_off.size - 1
    n_pos = weight.size
    # one judgment key per session
    first_q = np.full(n_s, -1, dtype=np.int64)
    if query_session.size:
        starts = np.flatnonzero(np.r_[True, query_session[1:] != query_session[:-1]])
        first_q[query_session[starts]] = starts
        diff = (
            query_key
            != query_key[starts][
                np.searchsorted(starts, np.arange(query_session.size), side="right") - 1
            ]
        )
        if diff.any():
            q = int(np.flatnonzero(diff)[0])
            raise MeasureSpecError(
                f"ideal 'no-repeat' needs one judgment key per session; session index "
                f"{int(query_session[q])} uses several (first change at query index {q}); "
                "use ideal 'repeat' for per-turn judgments"
            )
    skey = np.where(first_q >= 0, query_key[np.maximum(first_q, 0)], -1)
    # rank of each position inside its session by decreasing weight (ties: earlier first)
    order = np.lexsort((np.arange(n_pos), -weight, pos_session))
    j = np.empty(n_pos, dtype=np.int64)
    j[order] = _within(sess_off)
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

"""The cumulated-gain-by-rank engine and its curves: Figure 1 of 2008, Figures 1-4 of 2002.

One engine (:func:`rank_gains` + :func:`~sessionval.kernels.cumulate.cumulate_by_rank`,
re-exported here) computes cumulated (discounted) gain by rank aggregated over groups
of ranked lists: each result row's gain (or discounted gain) is summed into its
(group, rank) cell with a weighted ``bincount`` and the cells are cumulated along
ranks, so a list shorter than ``ranks`` holds its final value.  No Python loop per
query.  :func:`~sessionval.measures.cg.gain_vectors` (one cell per list) and
:func:`cumulated_squares` (the bands) are the same engine.  Two curves use it:

:func:`query_curves` (Järvelin et al. 2008, Figure 1)
    ``<by>, group, rank, measure, value, n_queries``: the mean sDCG_q vector
    (``measure = "sdcg_q"``; ``"dcg_q"`` without query discount) of the last
    query vs the earlier ones, or of the best query vs the others.
:func:`cg_curves` (Järvelin & Kekäläinen 2002, Figures 1-4)
    ``<by>, rank, measure, value, n_queries``: the mean CG, DCG, nCG and nDCG
    vectors of each system's queries, and the ideal curve.

Both use the evaluation's gains (scheme, unjudged and negative policies) and rank
discount (``discount``, ``b``).  ``ranks`` (the last rank drawn; the papers: 100)
is the figures' length, not the cut-off X of the session measures
(``SessionConfig.cutoff``).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Final, Literal

import numpy as np
import numpy.typing as npt
import pandas as pd

from .._types import FloatArray, IntArray
from ..errors import MeasureSpecError
from ..evaluation.result import SessionEvaluation
from ..kernels.cumulate import cumulate_by_rank, cumulate_lists
from ..kernels.discounts import rank_discount
from .groups import group_codes

__all__ = [
    "CG_MEASURES",
    "RankGains",
    "add_bands",
    "cg_curves",
    "cumulate_by_rank",
    "cumulated_squares",
    "query_curves",
    "rank_gains",
]

CG_MEASURES: Final[tuple[str, ...]] = ("CG", "DCG", "nCG", "nDCG")

#: Queries per chunk of the curves (and per dense block of :func:`cumulated_squares`):
#: the curves hold a chunk's rows at a time, not every result row of the study.
QUERY_BLOCK: Final[int] = 1 << 14


@dataclass(frozen=True)
class RankGains:
    """The evaluation's result rows down to rank ``ranks``, ready to cumulate by rank.

    Attributes
    ----------
    query
        Query index of each row (into ``frame.queries``).
    rank
        Rank of each row, ``1..ranks`` (the condensed rank under ``unjudged="condense"``).
    gain
        Gain of each row after the unjudged and negative policies.
    discounted
        ``gain / d(rank)`` with the evaluation's rank discount ``d``.
    discount
        ``d(1..ranks)``.
    """

    query: IntArray
    rank: IntArray
    gain: FloatArray
    discounted: FloatArray
    discount: FloatArray


def _ranks_argument(ranks: int, depth: int | None, function: str) -> int:
    """``ranks``, or the value of the old keyword ``depth`` (with a deprecation warning)."""
    if depth is not None:
        warnings.warn(
            f"{function}(depth=...) is deprecated; use ranks=... (the last rank of the curves)",
            DeprecationWarning,
            stacklevel=3,
        )
        ranks = depth
    if ranks < 1:
        raise MeasureSpecError(f"ranks must be >= 1, got {ranks}")
    return ranks


def rank_gains(ev: SessionEvaluation, ranks: int) -> RankGains:
    """Each kept result row of ``ev`` at rank ``<= ranks``, its gain and discounted gain.

    The gains are the evaluation's (gain scheme, unjudged and negative policies)
    and the rank discount is its ``discount`` with base ``b``; no session policy
    applies (every document counts, no padding: a curve holds its value after the
    list ends).
    """
    qidx, rank, gain = ev.ranked_gains()
    if rank.size and int(rank.max()) > ranks:  # a copy of every row only when some are cut
        cut = rank <= ranks
        qidx, rank, gain = qidx[cut], rank[cut], gain[cut]
    disc = rank_discount(np.arange(1, ranks + 1), b=ev.config.b, kind=ev.config.discount)
    return RankGains(
        query=qidx, rank=rank, gain=gain, discounted=gain / disc[rank - 1], discount=disc
    )


def _query_chunks(
    ev: SessionEvaluation, ranks: int
) -> Iterator[tuple[int, IntArray, IntArray, FloatArray]]:
    """``(q0, query, rank, gain)``: the rows of :func:`rank_gains`, by :data:`QUERY_BLOCK` queries.

    The rows of queries ``q0 .. q0 + QUERY_BLOCK - 1`` (``query`` is non-decreasing), cut
    at ``ranks``: the same rows in the same order as :func:`rank_gains`, so sums added
    chunk after chunk in row order are bit for bit the one-call sums.
    """
    for q0 in range(0, ev.query_session.size, QUERY_BLOCK):
        q, r, g = ev.ranked_gains(queries=(q0, q0 + QUERY_BLOCK))
        if r.size and int(r.max()) > ranks:
            cut = r <= ranks
            q, r, g = q[cut], r[cut], g[cut]
        yield q0, q, r, g


def cumulated_squares(
    query: IntArray,
    rank: IntArray,
    values: npt.ArrayLike,
    query_cell: IntArray,
    *,
    n_cells: int,
    ranks: int,
    divisor: tuple[FloatArray, IntArray] | None = None,
    block: int = QUERY_BLOCK,
    out: FloatArray | None = None,
) -> FloatArray:
    r"""Sum over each cell's lists of the squared cumulated vector, :math:`\sum_q C_q[i]^2`.

    The spread of the curves behind their confidence bands: with the sums of
    :func:`cumulate_by_rank` it gives the standard deviation of :math:`C_q[i]` over the
    lists of a cell.  Lists are expanded to dense vectors in fixed-size blocks (bounded
    memory, no loop per list).

    Parameters
    ----------
    query
        List (query) index of each row, non-decreasing.
    rank
        Rank of each row, ``1..ranks``.
    values
        What each row adds at its rank.
    query_cell
        Cell of each list (``-1``: left out).
    n_cells, ranks
        Shape of the result.
    divisor
        ``(matrix, row)``: divide list ``q``'s vector by ``matrix[row[q]]`` first (the
        ideal vector of its topic, for nCG and nDCG).
    block
        Lists per dense block.
    out
        ``(n_cells, ranks)`` sums to add to in place (and return): the squares of a
        study taken chunk by chunk of ``block`` lists (list indices from 0 in each).

    Returns
    -------
    numpy.ndarray
        ``(n_cells, ranks)``.

    Examples
    --------
    Two lists in cell 0, gains (3, 2) and (1, 0): cumulated (3, 5) and (1, 1):

    >>> cumulated_squares(np.array([0, 0, 1]), np.array([1, 2, 1]), [3.0, 2.0, 1.0],
    ...                   np.array([0, 0]), n_cells=1, ranks=2)
    array([[10., 26.]])
    """
    v = np.asarray(values, dtype=np.float64)
    n_q = query_cell.size
    if out is None:
        out = np.zeros((n_cells, ranks))
    starts = np.searchsorted(query, np.arange(0, n_q + block, block))
    for b, q0 in enumerate(range(0, n_q, block)):
        q1 = min(n_q, q0 + block)
        r0, r1 = int(starts[b]), int(starts[b + 1])
        # each list its own cell of the one engine
        cum = cumulate_by_rank(
            query[r0:r1] - q0, rank[r0:r1], v[r0:r1], n_cells=q1 - q0, ranks=ranks
        )
        if divisor is not None:
            matrix, row = divisor
            with np.errstate(divide="ignore", invalid="ignore"):
                cum = cum / matrix[row[q0:q1]]
        cells = query_cell[q0:q1]
        keep = np.flatnonzero(cells >= 0)
        # the lists of each cell summed as one segment (np.add.at on rows: 10x slower)
        order = keep[np.argsort(cells[keep], kind="stable")]
        cell = cells[order]
        first = np.flatnonzero(np.r_[True, cell[1:] != cell[:-1]]) if cell.size else cell
        out[cell[first]] += np.add.reduceat(cum[order] ** 2, first, axis=0)
    return out


def add_bands(
    table: pd.DataFrame,
    *,
    mean: str,
    sumsq: FloatArray,
    n: npt.ArrayLike,
    confidence: float,
) -> pd.DataFrame:
    r"""Add ``se``, ``ci_low`` and ``ci_high`` to a curve table, row by row.

    :math:`se = \sqrt{(\sum x^2 - n\bar x^2)/(n - 1)} / \sqrt n` and the Student t
    interval :math:`\bar x \pm t_{(1+c)/2,\,n-1}\, se` of each point's mean (NaN below
    two lists or sessions).

    Parameters
    ----------
    table
        The curve rows (``mean`` column holds each point's mean).
    mean
        Column of the means.
    sumsq
        Sum of squares behind each row's mean, in row order.
    n
        Number of values behind each row's mean.
    confidence
        Level of the interval, in (0, 1).
    """
    from scipy import stats

    if not 0.0 < confidence < 1.0:
        raise MeasureSpecError(f"confidence must be in (0, 1), got {confidence}")
    m = table[mean].to_numpy(dtype=np.float64)
    nn = np.asarray(n, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        var = np.maximum(np.asarray(sumsq, dtype=np.float64) - nn * m**2, 0.0) / (nn - 1.0)
        se = np.where(nn >= 2, np.sqrt(var / nn), np.nan)
        half = stats.t.ppf((1.0 + confidence) / 2.0, nn - 1.0) * se
    out = table.copy()
    out["se"] = se
    out["ci_low"] = m - half
    out["ci_high"] = m + half
    return out


def query_curves(
    ev: SessionEvaluation,
    *,
    by: Sequence[str] = ("system_id",),
    compare: Literal["last", "best"] = "last",
    ranks: int = 100,
    depth: int | None = None,
    confidence: float | None = None,
) -> pd.DataFrame:
    """Mean sDCG_q vectors of the last (or best) query vs the others (Figure 1).

    Parameters
    ----------
    ev
        An evaluation.  The curves use each query's logged list to ``ranks`` (gains
        after the unjudged policy, every document counted, no padding needed: a
        DCG vector holds its value after the list ends), so the frame must hold the
        ranks up to ``ranks``.
    by
        Session columns to group by.
    compare
        ``"last"``: last query vs earlier ones (one-query sessions count only as
        last); ``"best"``: the best query (``config.best_by``) vs the others.
    ranks
        Last rank (the paper: 100).
    depth
        Deprecated name of ``ranks``.
    confidence
        When given, add ``se``, ``ci_low`` and ``ci_high``: the standard error of each
        point's mean over the queries and its Student t interval (:func:`add_bands`).

    Returns
    -------
    pandas.DataFrame
        ``<by>, group, rank, measure, value, n_queries`` with ``group`` in
        ``("last", "non-last")`` or ``("best", "other")`` and ``measure`` in
        ``"sdcg_q"`` (mean of ``qd(q) · DCG_q[rank]``) and ``"dcg_q"``.
    """
    if compare not in ("last", "best"):
        raise MeasureSpecError(f"compare must be 'last' or 'best', got {compare!r}")
    ranks = _ranks_argument(ranks, depth, "query_curves")
    cfg = ev.config
    sessions = ev.frame.sessions
    gcode, labels = group_codes(sessions, by, np.ones(len(sessions), dtype=bool))
    n_g = len(labels)
    last, best = ev.last_and_best()
    chosen = last if compare == "last" else best
    is_sel = np.zeros(ev.query_session.size, dtype=bool)
    is_sel[chosen[chosen >= 0]] = True
    qclass = np.where(is_sel, 0, 1)  # 0: last/best, 1: other
    qgroup = gcode[ev.query_session] * 2 + qclass
    n_cls = n_g * 2
    n_per = np.bincount(qgroup, minlength=n_cls).astype(np.int64)
    disc = rank_discount(np.arange(1, ranks + 1), b=cfg.b, kind=cfg.discount)
    qd = np.asarray(ev.queries["qd"], dtype=np.float64)
    # the (cell, rank) sums chunk by chunk of queries: a chunk's rows in memory, not all
    sums = {"dcg": np.zeros((n_cls, ranks)), "sdcg": np.zeros((n_cls, ranks))}
    dcg = sdcg = np.zeros((n_cls, ranks))  # the curves of a study without results
    squares: dict[str, FloatArray] = {}
    if confidence is not None:
        squares = {"sdcg_q": np.zeros((n_cls, ranks)), "dcg_q": np.zeros((n_cls, ranks))}
    for q0, q, r, g in _query_chunks(ev, ranks):
        d = g / disc[r - 1]
        dq = d * qd[q]
        cells = qgroup[q]
        dcg = cumulate_by_rank(cells, r, d, n_cells=n_cls, ranks=ranks, sums=sums["dcg"])
        sdcg = cumulate_by_rank(cells, r, dq, n_cells=n_cls, ranks=ranks, sums=sums["sdcg"])
        for measure, vals in (("sdcg_q", dq), ("dcg_q", d)) if squares else ():
            cumulated_squares(
                q - q0,
                r,
                vals,
                qgroup[q0 : q0 + QUERY_BLOCK],
                n_cells=n_cls,
                ranks=ranks,
                out=squares[measure],
            )
    with np.errstate(divide="ignore", invalid="ignore"):
        dcg_m = dcg / n_per[:, None]
        sdcg_m = sdcg / n_per[:, None]
    names = ("last", "non-last") if compare == "last" else ("best", "other")
    rank_axis = np.arange(1, ranks + 1)
    parts = []
    for measure, arr in (("sdcg_q", sdcg_m), ("dcg_q", dcg_m)):
        part = pd.DataFrame(
            {
                "group": np.tile(np.repeat(np.array(names, dtype=object), ranks), n_g),
                "rank": np.tile(rank_axis, n_cls).astype(np.int32),
                "measure": measure,
                "value": arr.ravel(),
                "n_queries": np.repeat(n_per, ranks),
            }
        )
        for c in reversed(list(by)):
            part.insert(0, c, np.repeat(labels[c].to_numpy(), 2 * ranks))
        if confidence is not None:
            part = add_bands(
                part,
                mean="value",
                sumsq=squares[measure].ravel(),
                n=part["n_queries"],
                confidence=confidence,
            )
        parts.append(part)
    out = pd.concat(parts, ignore_index=True)
    for c in by:
        out[c] = out[c].astype(sessions[c].dtype)
    out = out[out["n_queries"] > 0].reset_index(drop=True)
    out.attrs["config"] = cfg.model_dump(mode="json")
    return out


def cg_curves(
    ev: SessionEvaluation,
    *,
    by: str = "system_id",
    ranks: int = 100,
    ideal_label: str = "ideal",
    depth: int | None = None,
    confidence: float | None = None,
) -> pd.DataFrame:
    r"""Mean CG, DCG, nCG and nDCG vectors by rank per system, and the ideal curve.

    Järvelin & Kekäläinen (2002) plot, for each run, the average CG, DCG, nCG and
    nDCG vector over the topics at ranks 1-100, against the ideal curve.  In a
    session study every query is such a ranked list: this averages the vectors of
    all queries of each system (``avg-vect``), and the ideal vector of the queries'
    topics, with the evaluation's gains and rank discount.

    Parameters
    ----------
    ev
        An evaluation (its gains and rank discount are used; no session policy).
    by
        Session column that names the curves (the system).
    ranks
        Last rank (the paper: 100).
    ideal_label
        Value of ``by`` on the ideal curve's rows.
    depth
        Deprecated name of ``ranks``.
    confidence
        When given, add ``se``, ``ci_low`` and ``ci_high`` to each system's rows: the
        standard error of the mean vector over the system's queries and its Student t
        interval (:func:`add_bands`); NaN on the ideal curve.

    Returns
    -------
    pandas.DataFrame
        ``<by> (str), rank, measure, value, n_queries``.  For each system the mean
        over its queries of ``CG_q[r]``, ``DCG_q[r]`` and of ``nCG_q[r] =
        CG_q[r] / CG_I[r]``, ``nDCG_q[r] = DCG_q[r] / DCG_I[r]`` (queries whose
        topic has no relevant document are left out of the normalised means and of
        their ``n_queries``).  The ``ideal_label`` rows hold the mean ideal CG and
        DCG over all queries, and 1 for nCG and nDCG.

    Notes
    -----
    :math:`CG[i] = \sum_{j \le i} G[j]`, :math:`DCG[i] = \sum_{j \le i} G[j]/d(j)`
    with the evaluation's discount ``d`` (Järvelin & Kekäläinen 2002, section 2;
    the formula of each kind is in :data:`sessionval.kernels.discounts.RANK_DISCOUNT_TABLE`);
    normalised vectors are divided component-wise by the ideal's (``norm-vect``),
    then averaged (``avg-vect``).

    References
    ----------
    Järvelin & Kekäläinen (2002), ACM TOIS 20(4), 422-446, Figures 1-4 (jarvelin2002).
    """
    ranks = _ranks_argument(ranks, depth, "cg_curves")
    sessions = ev.frame.sessions
    if by not in sessions.columns:
        raise MeasureSpecError(
            f"cannot name curves by {by!r}; "
            f"session columns: {', '.join(map(str, sessions.columns))}"
        )
    # curves are named by the system's text (sorted as text), whatever the column's dtype
    gcode, labels = group_codes(
        sessions[[by]].astype(str), (by,), np.ones(len(sessions), dtype=bool)
    )
    names = labels[by].to_numpy(dtype=object)
    n_g = names.size
    qsys = gcode[ev.query_session]
    # topics (ideal positions) actually used, compressed to 0..n_t-1 (-1: no judgments)
    used, qtop = np.unique(np.asarray(ev.query_ideal, dtype=np.int64), return_inverse=True)
    n_t = used.size
    disc = rank_discount(np.arange(1, ranks + 1), b=ev.config.b, kind=ev.config.discount)
    ioff, ivals = ev.ideal_source.segments(used, depth=ranks)  # -1 gives an empty list
    icg = cumulate_lists(ioff, ivals, ranks=ranks)  # (n_t, ranks)
    idcg = cumulate_lists(ioff, ivals, ranks=ranks, discount=disc)
    defined = icg[:, 0] > 0  # topic has a relevant document (CG_I and DCG_I > 0 at every rank)
    # the (cell, rank) sums chunk by chunk of queries: a chunk's rows in memory, not all
    shape = (n_g, n_t, ranks)
    sums = {"cg": np.zeros((n_g * n_t, ranks)), "dcg": np.zeros((n_g * n_t, ranks))}
    cg = dcg = np.zeros((n_g * n_t, ranks))  # the curves of a study without results
    squares: dict[str, FloatArray] = {}
    if confidence is not None:
        squares = {m: np.zeros((n_g, ranks)) for m in CG_MEASURES}
    defined_cell = np.where(defined[qtop], qsys, -1)
    for q0, q, r, g in _query_chunks(ev, ranks):
        d = g / disc[r - 1]
        cells = qsys[q] * n_t + qtop[q]
        cg = cumulate_by_rank(cells, r, g, n_cells=n_g * n_t, ranks=ranks, sums=sums["cg"])
        dcg = cumulate_by_rank(cells, r, d, n_cells=n_g * n_t, ranks=ranks, sums=sums["dcg"])
        q1 = q0 + QUERY_BLOCK
        for m, vals, qcell, div in (
            (
                ("CG", g, qsys, None),
                ("DCG", d, qsys, None),
                ("nCG", g, defined_cell, (icg, qtop[q0:q1])),
                ("nDCG", d, defined_cell, (idcg, qtop[q0:q1])),
            )
            if squares
            else ()
        ):
            cumulated_squares(
                q - q0,
                r,
                vals,
                qcell[q0:q1],
                n_cells=n_g,
                ranks=ranks,
                divisor=div,
                out=squares[m],
            )
    cg, dcg = cg.reshape(shape), dcg.reshape(shape)
    count = np.bincount(qsys * n_t + qtop, minlength=n_g * n_t).reshape(n_g, n_t).astype(float)
    n_sys = count.sum(axis=1)  # queries per system
    n_norm = count[:, defined].sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = {
            "CG": cg.sum(axis=1) / n_sys[:, None],
            "DCG": dcg.sum(axis=1) / n_sys[:, None],
            "nCG": (cg[:, defined, :] / icg[None, defined, :]).sum(axis=1) / n_norm[:, None],
            "nDCG": (dcg[:, defined, :] / idcg[None, defined, :]).sum(axis=1) / n_norm[:, None],
        }
        weight = count.sum(axis=0)
        ideal = {
            "CG": weight @ icg / weight.sum(),
            "DCG": weight @ idcg / weight.sum(),
            "nCG": np.ones(ranks),
            "nDCG": np.ones(ranks),
        }
    rank_axis = np.arange(1, ranks + 1, dtype=np.int64)
    parts = []
    for m in CG_MEASURES:
        nqs = n_norm if m.startswith("n") else n_sys
        part = pd.DataFrame(
            {
                by: np.repeat(names, ranks),
                "rank": np.tile(rank_axis, n_g).astype(np.int32),
                "measure": m,
                "value": mean[m].reshape(-1),
                "n_queries": np.repeat(nqs.astype(np.int64), ranks),
            }
        )
        if confidence is not None:
            part = add_bands(
                part,
                mean="value",
                sumsq=squares[m].ravel(),
                n=part["n_queries"],
                confidence=confidence,
            )
        parts.append(part)
        parts.append(
            pd.DataFrame(
                {
                    by: ideal_label,
                    "rank": rank_axis.astype(np.int32),
                    "measure": m,
                    "value": ideal[m],
                    "n_queries": int(weight[defined].sum() if m.startswith("n") else weight.sum()),
                }
            )
        )
    out = pd.concat(parts, ignore_index=True)
    out = out[out["n_queries"] > 0].reset_index(drop=True)
    out.attrs["config"] = ev.config.model_dump(mode="json")
    return out

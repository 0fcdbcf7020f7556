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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd

from .._types import FloatArray, IntArray
from ..errors import MeasureSpecError
from ..evaluation.config import SessionConfig
from ..evaluation.result import SessionEvaluation
from ..kernels.cumulate import cumulate_by_rank
from ..kernels.discounts import rank_discount
from .curve_bands import add_bands, cumulated_squares
from .rank_sums import CG_MEASURES, CgSums, QuerySums, cg_sums, query_sums, rank_sums

__all__ = [
    "CG_MEASURES",
    "CgSums",
    "QuerySums",
    "RankGains",
    "add_bands",
    "cg_curves",
    "cg_sums",
    "cg_table",
    "cumulate_by_rank",
    "cumulated_squares",
    "query_curves",
    "query_sums",
    "query_table",
    "rank_gains",
    "rank_sums",
]


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
        ``"sdcg_q"`` (mean of ``qd(q) · DCG_q[rank]``) and ``"dcg_q"``: the
        :func:`query_table` of :func:`query_sums`.
    """
    ranks = _ranks_argument(ranks, depth, "query_curves")
    sums = query_sums(ev, by=by, compare=compare, ranks=ranks, squares=confidence is not None)
    dtypes = {c: ev.frame.sessions[c].dtype for c in by}
    return query_table(sums, ev.config, dtypes=dtypes, confidence=confidence)


def query_table(
    sums: QuerySums,
    config: SessionConfig,
    *,
    dtypes: Mapping[str, Any],
    confidence: float | None = None,
) -> pd.DataFrame:
    """The table of :func:`query_curves` from its sums (of one evaluation, or combined).

    ``dtypes``: the dtype of each ``by`` column (the sessions'); ``config`` goes to the
    table's attrs.
    """
    by = list(sums.labels.columns)
    n_g = len(sums.labels)
    n_per = sums.n
    ranks = next(iter(sums.sums.values())).shape[1]
    if confidence is not None and "dcg_q2" not in sums.sums:
        raise MeasureSpecError("the query sums hold no squares: take them with squares=True")
    names = ("last", "non-last") if sums.compare == "last" else ("best", "other")
    rank_axis = np.arange(1, ranks + 1)
    parts = []
    for measure in ("sdcg_q", "dcg_q"):
        with np.errstate(divide="ignore", invalid="ignore"):
            mean = np.cumsum(sums.sums[measure], axis=1) / n_per[:, None]
        part = pd.DataFrame(
            {
                "group": np.tile(np.repeat(np.array(names, dtype=object), ranks), n_g),
                "rank": np.tile(rank_axis, 2 * n_g).astype(np.int32),
                "measure": measure,
                "value": mean.ravel(),
                "n_queries": np.repeat(n_per, ranks),
            }
        )
        for c in reversed(by):
            part.insert(0, c, np.repeat(sums.labels[c].to_numpy(), 2 * ranks))
        if confidence is not None:
            part = add_bands(
                part,
                mean="value",
                sumsq=sums.sums[measure + "2"].ravel(),
                n=part["n_queries"],
                confidence=confidence,
            )
        parts.append(part)
    out = pd.concat(parts, ignore_index=True)
    for c in by:
        out[c] = out[c].astype(dtypes[c])
    out = out[out["n_queries"] > 0].reset_index(drop=True)
    out.attrs["config"] = config.model_dump(mode="json")
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
    sums = cg_sums(ev, by=by, ranks=ranks, squares=confidence is not None)
    return cg_table(sums, ev.config, by=by, ideal_label=ideal_label, confidence=confidence)


def cg_table(
    sums: CgSums,
    config: SessionConfig,
    *,
    by: str = "system_id",
    ideal_label: str = "ideal",
    confidence: float | None = None,
) -> pd.DataFrame:
    """The table of :func:`cg_curves` from its sums (of one evaluation, or combined).

    ``config`` goes to the table's attrs.
    """
    if confidence is not None and "CG" not in sums.sums:
        raise MeasureSpecError("the CG sums hold no squares: take them with squares=True")
    n_g = sums.names.size
    ranks = sums.icg.shape[1]
    icg, idcg, count = sums.icg, sums.idcg, sums.count.astype(float)
    cg = np.cumsum(sums.sums["cg"], axis=2)
    dcg = np.cumsum(sums.sums["dcg"], axis=2)
    defined = icg[:, 0] > 0
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
                by: np.repeat(sums.names, ranks),
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
                sumsq=sums.sums[m].ravel(),
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
    out.attrs["config"] = config.model_dump(mode="json")
    return out

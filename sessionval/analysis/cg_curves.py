"""Single-query cumulated-gain curves by rank per system: the data of 000's Figures 1–4.

Järvelin & Kekäläinen (2002) plot, for each run, the average CG, DCG, nCG and
nDCG vector over the topics at ranks 1–100, against the ideal curve.  In a
session study every query is such a ranked list; :func:`cg_curves` averages the
vectors of all queries of each system (``avg-vect``), and the ideal vector of
the queries' topics.  It runs on a :class:`~sessionval.evaluation.result.SessionEvaluation`
so the gains (scheme, unjudged and negative policies) and the rank discount
(``discount``, ``b``) are the evaluation's.

No Python loop per query: per-rank increments are summed into (system, topic,
rank) cells with ``bincount`` and cumulated along ranks; a list shorter than the
depth holds its final value (its gains after the list's end are 0), which the
cumulative sums give for free.
"""

from __future__ import annotations

from typing import Final

import numpy as np
import numpy.typing as npt
import pandas as pd

from ..errors import MeasureSpecError
from ..evaluation.result import SessionEvaluation
from ..judgments.ideal import IdealGains
from ..kernels.discounts import rank_discount

__all__ = [
    "CG_MEASURES",
    "cg_curves",
]

CG_MEASURES: Final[tuple[str, ...]] = ("CG", "DCG", "nCG", "nDCG")


def _ideal_of(ev: SessionEvaluation) -> tuple[IdealGains, npt.NDArray[np.int64]]:
    """Return the evaluation's ideal gain vectors and each query's position in them."""
    return ev.ideal_source, np.asarray(ev.query_ideal, dtype=np.int64)


def cg_curves(
    ev: SessionEvaluation,
    *,
    by: str = "system_id",
    depth: int = 100,
    ideal_label: str = "ideal",
) -> pd.DataFrame:
    r"""Mean CG, DCG, nCG and nDCG vectors by rank per system, and the ideal curve.

    Parameters
    ----------
    ev
        An evaluation (its gains and rank discount are used; no session policy).
    by
        Session column that names the curves (the system).
    depth
        Last rank (the paper: 100).
    ideal_label
        Value of ``by`` on the ideal curve's rows.

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
    ``jk2008``: :math:`d(j) = 1 + \log_b j`); normalised vectors are divided
    component-wise by the ideal's (``norm-vect``), then averaged (``avg-vect``).

    References
    ----------
    Järvelin & Kekäläinen (2002), ACM TOIS 20(4), 422–446, Figures 1–4 (jarvelin2002).
    """
    if depth < 1:
        raise MeasureSpecError(f"depth must be >= 1, got {depth}")
    sessions = ev.frame.sessions
    if by not in sessions.columns:
        raise MeasureSpecError(
            f"cannot name curves by {by!r}; "
            f"session columns: {', '.join(map(str, sessions.columns))}"
        )
    cfg = ev.config
    labels = sessions[by].astype(str).to_numpy()
    names, gcode_s = np.unique(labels, return_inverse=True)
    n_g = names.size
    qsys = gcode_s[ev.query_session].astype(np.int64)
    ideal_source, query_ideal = _ideal_of(ev)
    # topics (ideal positions) actually used, compressed to 0..n_t-1 (-1: no judgments)
    qpos = np.asarray(query_ideal, dtype=np.int64)
    used, qtop = np.unique(qpos, return_inverse=True)
    n_t = used.size
    ideal_dense = ideal_source.dense(used, depth=depth)  # -1 gives a zero row
    ranks = np.arange(1, depth + 1, dtype=np.int64)
    disc = rank_discount(ranks, b=cfg.b, kind=cfg.discount)
    icg = np.cumsum(ideal_dense, axis=1)  # (n_t, depth)
    idcg = np.cumsum(ideal_dense / disc, axis=1)

    qidx, rank, gain = ev.ranked_gains()
    cut = rank <= depth
    g = gain[cut]
    r0 = rank[cut] - 1
    q = qidx[cut]
    cell = (qsys[q] * n_t + qtop[q]) * depth + r0
    size = n_g * n_t * depth
    cg = np.cumsum(np.bincount(cell, weights=g, minlength=size).reshape(n_g, n_t, depth), axis=2)
    dcg = np.cumsum(
        np.bincount(cell, weights=g / disc[r0], minlength=size).reshape(n_g, n_t, depth), axis=2
    )
    count = np.bincount(qsys * n_t + qtop, minlength=n_g * n_t).reshape(n_g, n_t).astype(float)
    n_sys = count.sum(axis=1)  # queries per system
    defined = icg[:, 0] > 0  # topic has a relevant document (CG_I and DCG_I > 0 at every rank)
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
            "nCG": np.ones(depth),
            "nDCG": np.ones(depth),
        }
    parts = []
    for m in CG_MEASURES:
        nqs = n_norm if m.startswith("n") else n_sys
        parts.append(
            pd.DataFrame(
                {
                    by: np.repeat(names.astype(object), depth),
                    "rank": np.tile(ranks, n_g).astype(np.int32),
                    "measure": m,
                    "value": mean[m].reshape(-1),
                    "n_queries": np.repeat(nqs.astype(np.int64), depth),
                }
            )
        )
        parts.append(
            pd.DataFrame(
                {
                    by: ideal_label,
                    "rank": ranks.astype(np.int32),
                    "measure": m,
                    "value": ideal[m],
                    "n_queries": int(weight[defined].sum() if m.startswith("n") else weight.sum()),
                }
            )
        )
    out = pd.concat(parts, ignore_index=True)
    out = out[out["n_queries"] > 0].reset_index(drop=True)
    out.attrs["config"] = cfg.model_dump(mode="json")
    return out

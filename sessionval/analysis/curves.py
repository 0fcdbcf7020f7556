"""The curves behind the papers' figures: session, individual, query and cumulated-gain curves.

Every function takes a :class:`~sessionval.evaluation.result.SessionEvaluation` and returns a
tidy long DataFrame (one row per group × position or rank × measure) with stable columns.
Järvelin et al. (2008), Figures 1-4:

:func:`session_curves` (Figures 2 and 3)
    ``<by columns>, position, query, measure, value, n_sessions``: the average
    session vector per group (``measure`` = ``"sdcg"``, ``"ideal"``, ``"nsdcg"``)
    up to the longest selected session.  ``query`` = ⌈position / X⌉, the query block
    under padded short lists (the x axis labels Q1, Q2, … of Figure 2).
:func:`individual_curves` (Figure 4)
    ``session_id, user_id, topic_id, system_id, position, query, stopped, measure,
    value``: each selected session's vector, held after it stopped (``stopped`` is
    true on the held positions).
:func:`query_curves` (Figure 1)
    ``<by columns>, group, rank, measure, value, n_queries``: the mean sDCG_q vector
    (``measure = "sdcg_q"``; ``"dcg_q"`` without query discount) to rank ``ranks``
    of the last query vs the earlier ones (``group`` = ``"last"`` / ``"non-last"``),
    or of the best query vs the others (``"best"`` / ``"other"``).

Järvelin & Kekäläinen (2002), Figures 1-4:

:func:`cg_curves`
    ``<by>, rank, measure, value, n_queries``: the mean CG, DCG, nCG and nDCG
    vectors of each system's queries to rank ``ranks``, and the ideal curve.

Sessions of different lengths (spec section 4): ``stopped="hold"`` (default; the
paper's figures) lets a session keep its final value up to the longest session;
``"active"`` averages at each position only the sessions still running.
Normalisation: ``"per-session"`` (default) averages each session's ``S/I``;
``"of-averages"`` divides the average ``S`` by the average ``I`` (the paper's
``norm-vect`` of averages).  Both default to the evaluation's configuration.

No Python loop per session: session curves are weighted ``bincount`` over
(group, position) cells plus a difference array for the held values.  The query
and cumulated-gain curves come from the cumulated-gain-by-rank engine of
:mod:`sessionval.analysis.rank_curves` and are re-exported here.

``ranks`` (the last rank drawn; the papers: 100) is the figures' length, not the
cut-off X of the session measures (``SessionConfig.cutoff``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
import numpy.typing as npt
import pandas as pd

from ..errors import MeasureSpecError
from ..evaluation.result import SessionEvaluation
from ..kernels.segments import segment_sum
from .groups import group_codes
from .rank_curves import CG_MEASURES, add_bands, cg_curves, query_curves

__all__ = [
    "CG_MEASURES",
    "Normalise",
    "Stopped",
    "cg_curves",
    "individual_curves",
    "query_curves",
    "session_curves",
]

Stopped = Literal["hold", "active"]
Normalise = Literal["per-session", "of-averages"]


def _session_mask(
    ev: SessionEvaluation, min_queries: int, where: npt.ArrayLike | None
) -> npt.NDArray[np.bool_]:
    n_s = ev.frame.n_sessions
    nq = np.bincount(ev.query_session, minlength=n_s)
    mask = nq >= min_queries
    if where is not None:
        w = np.asarray(where, dtype=bool)
        if w.shape != (n_s,):
            raise MeasureSpecError(
                f"'where' must be a boolean array with one value per session ({n_s}), "
                f"got shape {w.shape}"
            )
        mask &= w
    return mask


def session_curves(
    ev: SessionEvaluation,
    *,
    by: Sequence[str] = ("system_id",),
    min_queries: int = 1,
    where: npt.ArrayLike | None = None,
    stopped: Stopped | None = None,
    normalise: Normalise | None = None,
    max_position: int | None = None,
    confidence: float | None = None,
) -> pd.DataFrame:
    r"""Average session vectors per group (Järvelin et al. 2008, Figures 2 and 3).

    Parameters
    ----------
    ev
        An evaluation.
    by
        Session columns to group by (``("system_id", "topic_id")`` for system ×
        scenario; ``()`` for all sessions together).
    min_queries
        Keep sessions with at least this many queries (Figure 3's "at least 4").
    where
        Optional boolean mask over sessions (in ``frame.sessions`` order).
    stopped
        ``"hold"`` or ``"active"`` (default: ``ev.config.stopped``).
    normalise
        ``"per-session"`` or ``"of-averages"`` (default: ``ev.config.normalise``).
    max_position
        Last position (default: the longest selected session).
    confidence
        When given, add ``se``, ``ci_low`` and ``ci_high``: the standard error of each
        point's mean over the sessions and its Student t interval
        (:func:`sessionval.analysis.rank_curves.add_bands`).  Under ``of-averages`` the
        nsDCG ratio of means gets the delta-method standard error
        :math:`\sqrt{(s_S^2 - 2R\,s_{SI} + R^2 s_I^2)/n}\,/\,\bar I`.

    Returns
    -------
    pandas.DataFrame
        ``<by>, position, query, measure, value, n_sessions``; ``measure`` is
        ``"sdcg"`` (mean ``S``), ``"ideal"`` (mean ``I``) and ``"nsdcg"``; for
        ``nsdcg`` under ``per-session``, ``n_sessions`` counts the sessions with a
        defined ratio.

    Notes
    -----
    ``avg-vect`` and ``norm-vect`` of Järvelin & Kekäläinen (2002), applied to the
    session vectors; with ``hold``, a session of ``P`` positions contributes
    ``S[P]`` at every later position.
    """
    cfg = ev.config
    stop = stopped or cfg.stopped
    norm = normalise or cfg.normalise
    if stop not in ("hold", "active"):
        raise MeasureSpecError(f"stopped must be 'hold' or 'active', got {stop!r}")
    if norm not in ("per-session", "of-averages"):
        raise MeasureSpecError(f"normalise must be 'per-session' or 'of-averages', got {norm!r}")
    sessions = ev.frame.sessions
    mask = _session_mask(ev, min_queries, where)
    gcode, labels = group_codes(sessions, by, mask)
    n_g = len(labels)
    v = ev.positions()
    plen = np.diff(v.offsets)
    sel = gcode >= 0
    longest = int(plen[sel].max()) if sel.any() else 0
    n_p = longest if max_position is None else int(max_position)
    ps = v.session
    j = np.arange(ps.size, dtype=np.int64) - v.offsets[ps]
    keep = (gcode[ps] >= 0) & (j < n_p)
    cell = gcode[ps[keep]] * n_p + j[keep]
    n_cells = n_g * n_p
    ratio = ev.nsdcg()

    def grid(
        values: npt.NDArray[np.float64], finals: npt.NDArray[np.float64]
    ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        """Sum and count per (group, position), holding finals when asked."""
        ok = ~np.isnan(values[keep])
        total = segment_sum(values[keep][ok], cell[ok], n_cells).reshape(n_g, n_p)
        count = segment_sum(np.ones(int(ok.sum())), cell[ok], n_cells).reshape(n_g, n_p)
        if stop == "hold" and n_p:
            s_ok = sel & (plen < n_p) & ~np.isnan(finals)
            start = gcode[s_ok] * (n_p + 1) + plen[s_ok]
            d_tot = segment_sum(finals[s_ok], start, n_g * (n_p + 1)).reshape(n_g, n_p + 1)
            d_cnt = segment_sum(np.ones(int(s_ok.sum())), start, n_g * (n_p + 1)).reshape(
                n_g, n_p + 1
            )
            total += np.cumsum(d_tot, axis=1)[:, :n_p]
            count += np.cumsum(d_cnt, axis=1)[:, :n_p]
        return total, count

    final_s = np.full(ev.frame.n_sessions, np.nan)
    final_i = np.full(ev.frame.n_sessions, np.nan)
    final_n = np.full(ev.frame.n_sessions, np.nan)
    has = plen > 0
    last = v.offsets[1:] - 1
    final_s[has] = v.sdcg[last[has]]
    final_i[has] = v.ideal[last[has]]
    final_n[has] = ratio[last[has]]
    # sessions with no position hold 0 (they gained nothing), unless they have no judgments
    judged = ev.sessions.get("judged", np.ones(ev.frame.n_sessions, dtype=bool))
    final_s[~has & judged] = 0.0
    final_i[~has & judged] = 0.0
    s_tot, s_cnt = grid(v.sdcg, final_s)
    i_tot, _ = grid(v.ideal, final_i)
    with np.errstate(divide="ignore", invalid="ignore"):
        s_mean = s_tot / s_cnt
        i_mean = i_tot / s_cnt
        if norm == "per-session":
            n_tot, n_cnt = grid(ratio, final_n)
            n_mean = n_tot / n_cnt
        else:
            n_mean = s_tot / i_tot
            n_cnt = s_cnt
    if cfg.empty_ideal == "zero":
        n_mean = np.where(np.isnan(n_mean) & (s_cnt > 0), 0.0, n_mean)
    pos = np.arange(1, n_p + 1)
    squares: dict[str, npt.NDArray[np.float64]] = {}
    if confidence is not None:
        squares["sdcg"] = grid(v.sdcg**2, final_s**2)[0]
        squares["ideal"] = grid(v.ideal**2, final_i**2)[0]
        if norm == "per-session":
            squares["nsdcg"] = grid(ratio**2, final_n**2)[0]
        else:
            squares["nsdcg"] = _ratio_squares(
                s_mean, i_mean, squares["sdcg"], squares["ideal"],
                grid(v.sdcg * v.ideal, final_s * final_i)[0], s_cnt,
            )  # fmt: skip
    parts = []
    for name, val, cnt in (
        ("sdcg", s_mean, s_cnt),
        ("ideal", i_mean, s_cnt),
        ("nsdcg", n_mean, n_cnt),
    ):
        part = pd.DataFrame(
            {
                "position": np.tile(pos, n_g).astype(np.int32),
                "query": ((np.tile(pos, n_g) - 1) // cfg.cutoff + 1).astype(np.int32),
                "measure": name,
                "value": val.ravel(),
                "n_sessions": cnt.ravel().astype(np.int64),
            }
        )
        for c in reversed(list(by)):
            part.insert(0, c, np.repeat(labels[c].to_numpy(), n_p))
        if confidence is not None:
            part = add_bands(
                part,
                mean="value",
                sumsq=squares[name].ravel(),
                n=part["n_sessions"],
                confidence=confidence,
            )
        parts.append(part)
    out = pd.concat(parts, ignore_index=True)
    for c in by:
        out[c] = out[c].astype(sessions[c].dtype)
    out.attrs["config"] = cfg.model_dump(mode="json")
    out.attrs["stopped"] = stop
    out.attrs["normalise"] = norm
    return out


def _ratio_squares(
    s_mean: npt.NDArray[np.float64],
    i_mean: npt.NDArray[np.float64],
    s_sq: npt.NDArray[np.float64],
    i_sq: npt.NDArray[np.float64],
    si: npt.NDArray[np.float64],
    n: npt.NDArray[np.float64],
) -> npt.NDArray[np.float64]:
    r"""Pseudo sums of squares whose :func:`add_bands` standard error is the delta method's.

    For :math:`R = \bar S / \bar I`, :math:`Var(R) \approx (s_S^2 - 2R s_{SI} + R^2
    s_I^2) / (n \bar I^2)`; returned as :math:`(n-1) Var(R)\, n + n R^2`, which
    :func:`add_bands` turns back into that variance.
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        r = s_mean / i_mean
        var_s = (s_sq - n * s_mean**2) / (n - 1)
        var_i = (i_sq - n * i_mean**2) / (n - 1)
        cov = (si - n * s_mean * i_mean) / (n - 1)
        var_r = np.maximum(var_s - 2 * r * cov + r**2 * var_i, 0.0) / (n * i_mean**2)
        out: npt.NDArray[np.float64] = (n - 1) * var_r * n + n * r**2
    return out


def individual_curves(
    ev: SessionEvaluation,
    *,
    sessions: Sequence[str] | None = None,
    where: npt.ArrayLike | None = None,
    max_position: int | None = None,
) -> pd.DataFrame:
    """Each selected session's vector, held after it stopped (Figure 4).

    Parameters
    ----------
    ev
        An evaluation.
    sessions
        Session ids to include (default: all; meant for small subsets such as one
        system × scenario, since the output has one row per session × position).
    where
        Optional boolean mask over sessions (combined with ``sessions``).
    max_position
        Last position (default: the longest selected session).

    Returns
    -------
    pandas.DataFrame
        ``session_id, user_id, topic_id, system_id, position, query, stopped,
        measure, value`` with ``measure`` in ``"sdcg"``, ``"ideal"``, ``"nsdcg"``.
    """
    s = ev.frame.sessions
    n_s = len(s)
    mask = _session_mask(ev, 0, where)
    if sessions is not None:
        wanted = pd.Index([str(x) for x in sessions])
        known = pd.Index(s["session_id"].astype(str))
        unknown = wanted.difference(known)
        if len(unknown):
            raise MeasureSpecError(f"unknown session id(s): {', '.join(unknown[:5])}")
        mask &= known.isin(wanted)
    idx = np.flatnonzero(mask)
    v = ev.positions()
    plen = np.diff(v.offsets)
    n_p = int(plen[idx].max()) if idx.size and max_position is None else int(max_position or 0)
    ratio = ev.nsdcg()
    j = np.arange(n_p, dtype=np.int64)
    # gather index: the session's own position, or its last position when stopped
    start = v.offsets[idx]
    held = j[None, :] >= plen[idx][:, None]
    at = start[:, None] + np.minimum(j[None, :], np.maximum(plen[idx] - 1, 0)[:, None])
    empty = plen[idx] == 0
    parts = []
    for name, arr in (("sdcg", v.sdcg), ("ideal", v.ideal), ("nsdcg", ratio)):
        vals = arr[np.minimum(at, max(arr.size - 1, 0))] if arr.size else np.zeros(at.shape)
        vals = np.where(empty[:, None], 0.0 if name != "nsdcg" else np.nan, vals)
        parts.append(
            pd.DataFrame(
                {
                    "session_id": np.repeat(s["session_id"].to_numpy()[idx], n_p),
                    "user_id": np.repeat(s["user_id"].to_numpy()[idx], n_p),
                    "topic_id": np.repeat(s["topic_id"].to_numpy()[idx], n_p),
                    "system_id": np.repeat(s["system_id"].to_numpy()[idx], n_p),
                    "position": np.tile(j + 1, idx.size).astype(np.int32),
                    "query": (np.tile(j, idx.size) // ev.config.cutoff + 1).astype(np.int32),
                    "stopped": held.ravel(),
                    "measure": name,
                    "value": vals.ravel(),
                }
            )
        )
    out = pd.concat(parts, ignore_index=True)
    for c in ("session_id", "user_id", "topic_id", "system_id"):
        out[c] = out[c].astype(s[c].dtype)
    out.attrs["config"] = ev.config.model_dump(mode="json")
    del n_s
    return out

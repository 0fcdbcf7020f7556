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

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

import numpy as np
import numpy.typing as npt
import pandas as pd

from .._types import FloatArray, IntArray
from ..errors import MeasureSpecError
from ..evaluation.config import SessionConfig
from ..evaluation.result import SessionEvaluation
from ..kernels.segments import gather_ranges, segment_sum
from ..measures.session import normalise as normalise_ratio
from .groups import group_codes
from .rank_curves import CG_MEASURES, add_bands, cg_curves, query_curves

__all__ = [
    "CG_MEASURES",
    "IDS",
    "Normalise",
    "SessionSums",
    "Stopped",
    "cg_curves",
    "individual_curves",
    "individual_table",
    "query_curves",
    "session_curves",
    "session_sums",
    "session_table",
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


def _policies(
    ev: SessionEvaluation, stopped: Stopped | None, normalise: Normalise | None
) -> tuple[Stopped, Normalise]:
    """The session policies asked for, or the evaluation's; checked."""
    stop = stopped or ev.config.stopped
    norm = normalise or ev.config.normalise
    if stop not in ("hold", "active"):
        raise MeasureSpecError(f"stopped must be 'hold' or 'active', got {stop!r}")
    if norm not in ("per-session", "of-averages"):
        raise MeasureSpecError(f"normalise must be 'per-session' or 'of-averages', got {norm!r}")
    return stop, norm


@dataclass(frozen=True)
class SessionSums:
    """What a session curve averages: sums and counts per (group, position).

    The sufficient statistics of :func:`session_curves`, which add up over sessions
    split in any way (:func:`sessionval.analysis.curve_partials.combine_figure_partials`).

    Attributes
    ----------
    labels
        One row per group (the ``by`` columns, the sessions' values).
    n_sessions
        Selected sessions per group (a group is shown when it has one).
    longest
        Positions of each group's longest selected session.
    stopped, normalise
        The session policies the sums were taken under.
    sums
        ``(n_groups, width)`` arrays: ``s`` (sum of sDCG), ``n`` (its count), ``i``
        (sum of the ideal), under ``per-session`` ``r`` and ``r_n`` (the nsDCG ratio
        and its count), and for the bands ``s2``, ``i2`` and ``r2`` (squares) or ``si``
        (the cross product, ``of-averages``).  The last column is the tail: what each
        later position adds (every session held at its final value under ``hold``,
        nothing under ``active``), so sums of different widths line up.
    """

    labels: pd.DataFrame
    n_sessions: IntArray
    longest: IntArray
    stopped: Stopped
    normalise: Normalise
    sums: dict[str, FloatArray]

    def columns(self, n_p: int) -> dict[str, FloatArray]:
        """The sums at positions ``1..n_p``: cut, or continued with the tail."""
        out = {}
        for k, a in self.sums.items():
            width = a.shape[1]
            if n_p <= width:
                out[k] = a[:, :n_p]
            else:
                tail = a[:, -1:] if self.stopped == "hold" else np.zeros((a.shape[0], 1))
                out[k] = np.concatenate([a, np.repeat(tail, n_p - width, axis=1)], axis=1)
        return out

    def take(self, rows: npt.ArrayLike, by: Sequence[str]) -> SessionSums:
        """The groups ``rows`` (positions), labelled by the columns ``by`` only."""
        r = np.asarray(rows, dtype=np.int64)
        return SessionSums(
            labels=self.labels.iloc[r][list(by)].reset_index(drop=True),
            n_sessions=self.n_sessions[r],
            longest=self.longest[r],
            stopped=self.stopped,
            normalise=self.normalise,
            sums={k: a[r] for k, a in self.sums.items()},
        )


def session_sums(
    ev: SessionEvaluation,
    *,
    by: Sequence[str] = ("system_id",),
    min_queries: int = 1,
    where: npt.ArrayLike | None = None,
    stopped: Stopped | None = None,
    normalise: Normalise | None = None,
    squares: bool = False,
) -> SessionSums:
    """The sums behind :func:`session_curves` (same parameters; ``squares`` for the bands).

    Weighted ``bincount`` over (group, position) cells plus a difference array for the
    held values; no Python loop per session.
    """
    stop, norm = _policies(ev, stopped, normalise)
    sessions = ev.frame.sessions
    mask = _session_mask(ev, min_queries, where)
    gcode, labels = group_codes(sessions, by, mask)
    n_g = len(labels)
    v = ev.positions()
    plen = np.diff(v.offsets)
    sel = gcode >= 0
    longest = np.zeros(n_g, dtype=np.int64)
    np.maximum.at(longest, gcode[sel], plen[sel])
    n_p = int(longest.max(initial=0)) + 1  # one more: the tail column
    # the selected sessions' positions only (Figure 3: a scenario's), in position order, and
    # each one's (group, position) cell, from the sessions' offsets (no pass over every position)
    chosen = np.flatnonzero(sel)
    counts = plen[chosen]
    rows = None if chosen.size == sel.size else gather_ranges(v.offsets[chosen], counts)
    cell = gather_ranges(gcode[chosen] * n_p, counts)  # group * n_p + the position's index
    n_cells = n_g * n_p

    def taken(values: FloatArray) -> FloatArray:
        return values if rows is None else values[rows]

    sdcg, ideal = taken(v.sdcg), taken(v.ideal)
    empty = ev.config.empty_ideal

    def grid(
        values: npt.NDArray[np.float64], finals: npt.NDArray[np.float64], counted: bool = False
    ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        """Sum and count per (group, position), holding finals when asked.

        The count only with ``counted`` (else an empty array): a square or the ideal has
        the NaN pattern of a sum already counted.
        """
        kept, at = values, cell
        nan = np.isnan(values)
        if nan.any():
            ok = ~nan
            kept, at = values[ok], cell[ok]
        total = segment_sum(kept, at, n_cells).reshape(n_g, n_p)
        count: npt.NDArray[np.float64] = np.zeros(0)
        if counted:  # the rows counted: exact in float64, as a sum of ones
            count = np.bincount(at, minlength=n_cells).astype(np.float64).reshape(n_g, n_p)
        if stop == "hold":
            s_ok = sel & ~np.isnan(finals)
            start = gcode[s_ok] * (n_p + 1) + plen[s_ok]
            d_tot = segment_sum(finals[s_ok], start, n_g * (n_p + 1)).reshape(n_g, n_p + 1)
            total += np.cumsum(d_tot, axis=1)[:, :n_p]
            if counted:
                d_cnt = segment_sum(np.ones(int(s_ok.sum())), start, n_g * (n_p + 1))
                count += np.cumsum(d_cnt.reshape(n_g, n_p + 1), axis=1)[:, :n_p]
        return total, count

    final_s = np.full(ev.frame.n_sessions, np.nan)
    final_i = np.full(ev.frame.n_sessions, np.nan)
    final_n = np.full(ev.frame.n_sessions, np.nan)
    has = plen > 0
    last = v.offsets[1:] - 1
    final_s[has] = v.sdcg[last[has]]
    final_i[has] = v.ideal[last[has]]
    final_n[has] = normalise_ratio(final_s[has], final_i[has], empty)
    # sessions with no position hold 0 (they gained nothing), unless they have no judgments
    judged = ev.sessions.get("judged", np.ones(ev.frame.n_sessions, dtype=bool))
    final_s[~has & judged] = 0.0
    final_i[~has & judged] = 0.0
    sums: dict[str, FloatArray] = {}
    sums["s"], sums["n"] = grid(sdcg, final_s, counted=True)
    sums["i"] = grid(ideal, final_i)[0]
    ratio = normalise_ratio(sdcg, ideal, empty) if norm == "per-session" else None
    if ratio is not None:
        sums["r"], sums["r_n"] = grid(ratio, final_n, counted=True)
    if squares:
        sums["s2"] = grid(sdcg**2, final_s**2)[0]
        sums["i2"] = grid(ideal**2, final_i**2)[0]
        if ratio is not None:
            sums["r2"] = grid(ratio**2, final_n**2)[0]
        else:
            sums["si"] = grid(sdcg * ideal, final_s * final_i)[0]
    return SessionSums(
        labels=labels,
        n_sessions=np.bincount(gcode[sel], minlength=n_g).astype(np.int64),
        longest=longest,
        stopped=stop,
        normalise=norm,
        sums=sums,
    )


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
    ``S[P]`` at every later position.  The table is :func:`session_table` of
    :func:`session_sums`.
    """
    sums = session_sums(
        ev,
        by=by,
        min_queries=min_queries,
        where=where,
        stopped=stopped,
        normalise=normalise,
        squares=confidence is not None,
    )
    dtypes = {c: ev.frame.sessions[c].dtype for c in by}
    return session_table(
        sums, ev.config, dtypes=dtypes, max_position=max_position, confidence=confidence
    )


def session_table(
    sums: SessionSums,
    config: SessionConfig,
    *,
    dtypes: Mapping[str, Any],
    max_position: int | None = None,
    confidence: float | None = None,
) -> pd.DataFrame:
    """The table of :func:`session_curves` from its sums.

    Parameters
    ----------
    sums
        :func:`session_sums` (of one evaluation, or combined over partitions).
    config
        The evaluation's configuration (``cutoff``, ``empty_ideal``; the table's attrs).
    dtypes
        Dtype of each ``by`` column of the table (the sessions').
    max_position, confidence
        As :func:`session_curves`.
    """
    by = list(sums.labels.columns)
    n_g = len(sums.labels)
    norm = sums.normalise
    n_p = int(sums.longest.max(initial=0)) if max_position is None else int(max_position)
    c = sums.columns(n_p)
    s_tot, s_cnt, i_tot = c["s"], c["n"], c["i"]
    with np.errstate(divide="ignore", invalid="ignore"):
        s_mean = s_tot / s_cnt
        i_mean = i_tot / s_cnt
        if norm == "per-session":
            n_mean = c["r"] / c["r_n"]
            n_cnt = c["r_n"]
        else:
            n_mean = s_tot / i_tot
            n_cnt = s_cnt
    if config.empty_ideal == "zero":
        n_mean = np.where(np.isnan(n_mean) & (s_cnt > 0), 0.0, n_mean)
    pos = np.arange(1, n_p + 1)
    squares: dict[str, npt.NDArray[np.float64]] = {}
    if confidence is not None:
        if "s2" not in c:
            raise MeasureSpecError(
                "the session sums hold no squares: take them with squares=True for bands"
            )
        squares["sdcg"], squares["ideal"] = c["s2"], c["i2"]
        if norm == "per-session":
            squares["nsdcg"] = c["r2"]
        else:
            squares["nsdcg"] = _ratio_squares(s_mean, i_mean, c["s2"], c["i2"], c["si"], s_cnt)
    parts = []
    for name, val, cnt in (
        ("sdcg", s_mean, s_cnt),
        ("ideal", i_mean, s_cnt),
        ("nsdcg", n_mean, n_cnt),
    ):
        part = pd.DataFrame(
            {
                "position": np.tile(pos, n_g).astype(np.int32),
                "query": ((np.tile(pos, n_g) - 1) // config.cutoff + 1).astype(np.int32),
                "measure": name,
                "value": val.ravel(),
                "n_sessions": cnt.ravel().astype(np.int64),
            }
        )
        for col in reversed(by):
            part.insert(0, col, np.repeat(sums.labels[col].to_numpy(), n_p))
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
    for col in by:
        out[col] = out[col].astype(dtypes[col])
    out.attrs["config"] = config.model_dump(mode="json")
    out.attrs["stopped"] = sums.stopped
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
    plen = np.diff(v.offsets)[idx]
    n_p = int(plen.max()) if idx.size and max_position is None else int(max_position or 0)
    return individual_table(
        s.iloc[idx][list(IDS)].reset_index(drop=True),
        v.offsets[idx],
        plen,
        {"sdcg": v.sdcg, "ideal": v.ideal, "nsdcg": ev.nsdcg()},
        ev.config,
        n_p=n_p,
    )


#: The id columns of :func:`individual_curves`, in its order.
IDS: Final[tuple[str, ...]] = ("session_id", "user_id", "topic_id", "system_id")


def individual_table(
    ids: pd.DataFrame,
    start: IntArray,
    plen: IntArray,
    vectors: Mapping[str, FloatArray],
    config: SessionConfig,
    *,
    n_p: int,
) -> pd.DataFrame:
    """The table of :func:`individual_curves`: each session's vectors held to ``n_p`` positions.

    Parameters
    ----------
    ids
        One row per session: :data:`IDS` (their dtypes are the table's).
    start, plen
        Where each session's positions start in ``vectors`` and how many it has.
    vectors
        ``sdcg``, ``ideal`` and ``nsdcg`` by position.
    config
        The evaluation's configuration (``cutoff``; the table's attrs).
    n_p
        Positions per session in the table.
    """
    j = np.arange(n_p, dtype=np.int64)
    # gather index: the session's own position, or its last position when stopped
    held = j[None, :] >= plen[:, None]
    at = start[:, None] + np.minimum(j[None, :], np.maximum(plen - 1, 0)[:, None])
    empty = plen == 0
    n_s = len(ids)
    parts = []
    for name in ("sdcg", "ideal", "nsdcg"):
        arr = vectors[name]
        vals = arr[np.minimum(at, max(arr.size - 1, 0))] if arr.size else np.zeros(at.shape)
        vals = np.where(empty[:, None], 0.0 if name != "nsdcg" else np.nan, vals)
        part: dict[str, Any] = {c: np.repeat(ids[c].to_numpy(), n_p) for c in IDS}
        part |= {
            "position": np.tile(j + 1, n_s).astype(np.int32),
            "query": (np.tile(j, n_s) // config.cutoff + 1).astype(np.int32),
            "stopped": held.ravel(),
            "measure": name,
            "value": vals.ravel(),
        }
        parts.append(pd.DataFrame(part))
    out = pd.concat(parts, ignore_index=True)
    for c in IDS:
        out[c] = out[c].astype(ids[c].dtype)
    out.attrs["config"] = config.model_dump(mode="json")
    return out

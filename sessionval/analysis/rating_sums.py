r"""Pearson's correlations of measures with ratings from sums over partitions of sessions.

A distributed run reduces each partition's per-session table to :class:`RatingSums`
(:func:`rating_sums`): per measure × rating, the sessions with both values, their
means and their centred sums of squares and cross-products.  :func:`combine_ratings`
merges partials (Chan, Golub & LeVeque 1983 [chan1983], for the co-moment too), and
:func:`pearson_from_sums` gives the Pearson rows of
:func:`~sessionval.analysis.correlations.rating_correlations` on the whole table:

.. math::

    r = \frac{C_{xy}}{\sqrt{M_{xx} M_{yy}}}, \qquad
    C_{xy} = C^A_{xy} + C^B_{xy} + \frac{n_A n_B}{n} (\bar x_B - \bar x_A)(\bar y_B - \bar y_A)

with the two-sided p-value of scipy's ``pearsonr`` (the null distribution of
:math:`r` is Beta(n/2 - 1, n/2 - 1) on (-1, 1)).  Spearman's :math:`\rho` and Kendall's
:math:`\tau_b` rank every session of the study: no sum over partitions gives them, so
they are NaN here (compute them on the per-session table the workers wrote).

Sizes are measures × ratings, whatever the number of sessions.

References
----------
Jiang, J., Allan, J. (2016). Correlation between system and user metrics in a session.
CHIIR 2016 [jiang2016].
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from .._types import FloatArray, IntArray
from ..errors import StatisticsError
from .correlations import CORRELATION_COLUMNS

__all__ = ["RatingSums", "combine_ratings", "pearson_from_sums", "rating_sums"]


@dataclass(frozen=True)
class RatingSums:
    """Per measure × rating (arrays of that shape) the sums Pearson's r needs.

    Attributes
    ----------
    measures, ratings
        Row and column names.
    rated
        Per rating: sessions with a rating (the rating is shown when any has one).
    n
        Sessions with both values.
    mean_x, mean_y
        Their means (0 where ``n`` is 0).
    mxx, myy, mxy
        Centred sums of squares and of cross-products.
    lo_x, hi_x, lo_y, hi_y
        Smallest and largest values (a constant column has no correlation; ``inf``
        and ``-inf`` without a value).
    """

    measures: tuple[str, ...]
    ratings: tuple[str, ...]
    rated: IntArray
    n: IntArray
    mean_x: FloatArray
    mean_y: FloatArray
    mxx: FloatArray
    myy: FloatArray
    mxy: FloatArray
    lo_x: FloatArray
    hi_x: FloatArray
    lo_y: FloatArray
    hi_y: FloatArray


def rating_sums(
    per_session: pd.DataFrame, measures: Sequence[str], ratings: Sequence[str]
) -> RatingSums:
    """Reduce one partition's per-session table to its sums per measure × rating.

    ``ratings`` may hold columns this partition has no value of (every ``rating_*``
    column of the study): another partition may have them.

    Examples
    --------
    >>> ps = pd.DataFrame({"x": [0.1, 0.4, 0.3], "rating_p": [1.0, 3.0, np.nan]})
    >>> s = rating_sums(ps, ["x"], ["rating_p"])
    >>> s.n.tolist(), s.mean_x.round(2).tolist(), s.mxy.round(2).tolist()
    ([[2]], [[0.25]], [[0.3]])
    """
    missing = [c for c in (*measures, *ratings) if c not in per_session.columns]
    if missing:
        raise StatisticsError(
            f"per-session table: column(s) {missing} missing to correlate; columns are "
            f"{list(per_session.columns)}"
        )
    m, r = len(measures), len(ratings)

    def matrix(cols: Sequence[str]) -> FloatArray:
        if not cols:
            return np.zeros((len(per_session), 0))
        return np.column_stack(
            [per_session[c].to_numpy(dtype=np.float64, na_value=np.nan) for c in cols]
        ).reshape(len(per_session), len(cols))

    x, y = matrix(measures), matrix(ratings)
    # sessions × measures × ratings would grow with the sessions times the pairs: one
    # rating at a time keeps it sessions × measures
    shape = (m, r)
    out = {k: np.zeros(shape) for k in ("mean_x", "mean_y", "mxx", "myy", "mxy")}
    # no value: the smallest is +inf and the largest -inf (fmin/fmax merge them)
    out |= {k: np.full(shape, np.inf) for k in ("lo_x", "lo_y")}
    out |= {k: np.full(shape, -np.inf) for k in ("hi_x", "hi_y")}
    n = np.zeros(shape, dtype=np.int64)
    for j in range(r):
        both = ~(np.isnan(x) | np.isnan(y[:, [j]]))
        k = both.sum(axis=0)
        n[:, j] = k
        xs = np.where(both, x, 0.0)
        ys = np.where(both, y[:, [j]], 0.0)
        with np.errstate(invalid="ignore", divide="ignore"):
            mx = np.where(k > 0, xs.sum(axis=0) / k, 0.0)
            my = np.where(k > 0, ys.sum(axis=0) / k, 0.0)
        dx, dy = np.where(both, x - mx, 0.0), np.where(both, y[:, [j]] - my, 0.0)
        out["mean_x"][:, j], out["mean_y"][:, j] = mx, my
        out["mxx"][:, j] = (dx * dx).sum(axis=0)
        out["myy"][:, j] = (dy * dy).sum(axis=0)
        out["mxy"][:, j] = (dx * dy).sum(axis=0)
        yj = y[:, [j]] + np.zeros_like(x)
        out["lo_x"][:, j] = np.where(both, x, np.inf).min(axis=0, initial=np.inf)
        out["hi_x"][:, j] = np.where(both, x, -np.inf).max(axis=0, initial=-np.inf)
        out["lo_y"][:, j] = np.where(both, yj, np.inf).min(axis=0, initial=np.inf)
        out["hi_y"][:, j] = np.where(both, yj, -np.inf).max(axis=0, initial=-np.inf)
    return RatingSums(
        measures=tuple(measures),
        ratings=tuple(ratings),
        rated=(~np.isnan(y)).sum(axis=0).astype(np.int64),
        n=n,
        **out,
    )


def _aligned(part: RatingSums, ratings: tuple[str, ...]) -> RatingSums:
    """``part`` with the columns of ``ratings`` (no session for a rating it lacks)."""
    if part.ratings == ratings:
        return part
    at = [part.ratings.index(r) if r in part.ratings else -1 for r in ratings]
    has = np.array([i >= 0 for i in at])
    idx = np.array([max(i, 0) for i in at], dtype=np.intp)

    def take(a: np.ndarray, fill: float) -> np.ndarray:
        got = a[..., idx] if a.size else np.zeros((*a.shape[:-1], len(ratings)), a.dtype)
        return np.where(has, got, fill)

    fields: dict[str, Any] = {
        k: take(getattr(part, k), 0.0) for k in ("mean_x", "mean_y", "mxx", "myy", "mxy")
    }
    fields |= {k: take(getattr(part, k), np.inf) for k in ("lo_x", "lo_y")}
    fields |= {k: take(getattr(part, k), -np.inf) for k in ("hi_x", "hi_y")}
    return replace(
        part,
        ratings=ratings,
        rated=take(part.rated, 0).astype(np.int64),
        n=take(part.n, 0).astype(np.int64),
        **fields,
    )


def combine_ratings(*parts: RatingSums) -> RatingSums:
    """Merge partials (the union of their ratings): associative and commutative.

    Raises
    ------
    StatisticsError
        No partial, or partials of different measures.
    """
    if not parts:
        raise StatisticsError("combine_ratings: no rating sums to combine")
    ratings = tuple(sorted({r for p in parts for r in p.ratings}))
    acc = _aligned(parts[0], ratings)
    for p in parts[1:]:
        if p.measures != acc.measures:
            raise StatisticsError(
                f"combine_ratings: partials of different measures ({list(acc.measures)} and "
                f"{list(p.measures)})"
            )
        acc = _merge(acc, _aligned(p, ratings))
    return acc


def _merge(a: RatingSums, b: RatingSums) -> RatingSums:
    """Chan et al.'s merge of two parts' means and centred (co-)moments."""
    n = a.n + b.n
    with np.errstate(invalid="ignore", divide="ignore"):
        wb = np.where(n > 0, b.n / n, 0.0)
        cross = np.where(n > 0, a.n * b.n / n, 0.0)
    dx, dy = b.mean_x - a.mean_x, b.mean_y - a.mean_y
    return replace(
        a,
        rated=a.rated + b.rated,
        n=n,
        mean_x=a.mean_x + dx * wb,
        mean_y=a.mean_y + dy * wb,
        mxx=a.mxx + b.mxx + cross * dx * dx,
        myy=a.myy + b.myy + cross * dy * dy,
        mxy=a.mxy + b.mxy + cross * dx * dy,
        lo_x=np.fmin(a.lo_x, b.lo_x),
        hi_x=np.fmax(a.hi_x, b.hi_x),
        lo_y=np.fmin(a.lo_y, b.lo_y),
        hi_y=np.fmax(a.hi_y, b.hi_y),
    )


def pearson_from_sums(sums: RatingSums) -> pd.DataFrame:
    """The rows of :func:`~sessionval.analysis.correlations.rating_correlations` from sums.

    The ratings with a value anywhere, in name order; ``n`` and Pearson's r and p as
    the local table's (to about 1e-14), Spearman's and Kendall's columns NaN (module
    docstring).
    """
    from scipy import stats

    shown = [j for j, k in enumerate(sums.rated) if k > 0]
    rows = []
    for i, m in enumerate(sums.measures):
        for j in shown:
            k = int(sums.n[i, j])
            r = p = np.nan
            varies = sums.hi_x[i, j] > sums.lo_x[i, j] and sums.hi_y[i, j] > sums.lo_y[i, j]
            if k >= 3 and varies:
                r = float(np.clip(sums.mxy[i, j] / np.sqrt(sums.mxx[i, j] * sums.myy[i, j]), -1, 1))
                ab = k / 2 - 1
                p = float(2 * stats.beta(ab, ab, loc=-1, scale=2).sf(abs(r)))
            rows.append((m, sums.ratings[j], k, r, p, *([np.nan] * 4)))
    out = pd.DataFrame(rows, columns=list(CORRELATION_COLUMNS))
    out["n"] = out["n"].astype(np.int64)
    return out

"""Measures against what searchers felt: correlations of per-session scores with their ratings.

Jiang & Allan (CHIIR 2016) ask which session measure agrees with the searchers'
post-task ratings (performance, difficulty) by correlating each measure with each
rating over the sessions; :func:`rating_correlations` does this for any per-session
table with ``rating_*`` columns (``sessionval run`` writes it as
``tables/rating_correlations.csv`` and shows it in the report).

References
----------
Jiang, J., Allan, J. (2016). Correlation between system and user metrics in a session.
CHIIR 2016 [jiang2016].
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt
import pandas as pd

from .._types import FloatArray
from ..errors import SessionvalError

__all__ = [
    "CORRELATION_COLUMNS",
    "rating_columns",
    "rating_correlations",
]

CORRELATION_COLUMNS: Final = (
    "measure",
    "rating",
    "n",
    "pearson_r",
    "pearson_p",
    "spearman_rho",
    "spearman_p",
    "kendall_tau",
    "kendall_p",
)
"""The columns of :func:`rating_correlations`, in order."""

#: Columns of a per-session table that identify a session rather than score it.
_ID_COLUMNS: Final = frozenset({"session_id", "user_id", "topic_id", "system_id"})


def rating_columns(per_session: pd.DataFrame) -> list[str]:
    """The ``rating_*`` columns of a per-session table that hold at least one rating."""
    return [
        str(c)
        for c in per_session.columns
        if str(c).startswith("rating_") and per_session[c].notna().any()
    ]


def _default_measures(per_session: pd.DataFrame) -> list[str]:
    return [
        str(c)
        for c in per_session.columns
        if str(c) not in _ID_COLUMNS
        and not str(c).startswith("rating_")
        and pd.api.types.is_numeric_dtype(per_session[c])
        and not pd.api.types.is_bool_dtype(per_session[c])
    ]


def rating_correlations(
    per_session: pd.DataFrame,
    measures: Sequence[str] | None = None,
    ratings: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Pearson, Spearman and Kendall correlations of each measure with each rating.

    Parameters
    ----------
    per_session
        One row per session (``SessionEvaluation.per_session()``), not modified.
    measures
        Score columns (default: every numeric column that is neither an id nor a rating).
    ratings
        Rating columns (default: every ``rating_*`` column with a value).

    Returns
    -------
    pandas.DataFrame
        One row per (measure, rating), in the order given: ``measure, rating, n,
        pearson_r, pearson_p, spearman_rho, spearman_p, kendall_tau, kendall_p``.  ``n``
        counts the sessions with both values (the others are left out); the
        coefficients and their two-sided p-values (scipy: ``pearsonr``, ``spearmanr``,
        ``kendalltau``, tau-b) are NaN with fewer than 3 sessions or a constant column.

    Raises
    ------
    SessionvalError
        A requested column is not in the table, or is not numeric.

    Examples
    --------
    >>> ps = pd.DataFrame({"nsdcg": [0.1, 0.4, 0.3, 0.8],
    ...                    "rating_performance": [1.0, 3.0, 2.0, 5.0]})
    >>> r = rating_correlations(ps)
    >>> r[["measure", "rating", "n", "spearman_rho", "kendall_tau"]].to_numpy().tolist()
    [['nsdcg', 'rating_performance', 4, 1.0, 1.0]]
    """
    from scipy import stats

    measures = list(measures) if measures is not None else _default_measures(per_session)
    ratings = list(ratings) if ratings is not None else rating_columns(per_session)
    for col in (*measures, *ratings):
        if col not in per_session.columns:
            raise SessionvalError(
                f"rating_correlations: column {col!r} not in the per-session table; "
                f"columns are {list(per_session.columns)}"
            )
        if not pd.api.types.is_numeric_dtype(per_session[col]):
            raise SessionvalError(
                f"rating_correlations: column {col!r} is not numeric "
                f"({per_session[col].dtype}); give score and rating columns"
            )
    values = {
        c: per_session[c].to_numpy(dtype=np.float64, na_value=np.nan)
        for c in dict.fromkeys([*measures, *ratings])
    }
    # each column sorted once over the sessions where it has a value: a pair whose
    # sessions are exactly those reuses it for Spearman's ranks and Kendall's counts
    sorts: dict[str, _Sorted] = {}
    rows = []
    for m in measures:
        x_all = values[m]
        for r in ratings:
            y_all = values[r]
            both = ~(np.isnan(x_all) | np.isnan(y_all))
            x, y = x_all[both], y_all[both]
            row: dict[str, object] = {"measure": m, "rating": r, "n": int(both.sum())}
            coefficients = [np.nan] * 6
            if x.size >= 3 and np.ptp(x) > 0 and np.ptp(y) > 0:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    pr = stats.pearsonr(x, y)
                    rho, rho_p = _spearman(
                        _ranked(sorts, m, x_all, both), _ranked(sorts, r, y_all, both)
                    )
                    kt = _kendall(sorts, m, x_all, r, y_all, both)
                    if kt is None:  # no tie, or a rating of many values: scipy's own
                        res = stats.kendalltau(x, y)
                        kt = (float(res[0]), float(res[1]))
                coefficients = [float(pr[0]), float(pr[1]), rho, rho_p, *kt]
            row.update(zip(CORRELATION_COLUMNS[3:], coefficients, strict=True))
            rows.append(row)
    out = pd.DataFrame(rows, columns=list(CORRELATION_COLUMNS))
    out["n"] = out["n"].astype(np.int64)
    return out


def _ranked(
    cache: dict[str, _Sorted], column: str, values: FloatArray, rows: npt.NDArray[np.bool_]
) -> FloatArray:
    """Average ranks of ``values[rows]`` (scipy's ``rankdata``), from the column's one sort.

    When ``rows`` are the column's present values the ranks come from its
    :class:`_Sorted` (the tie group of each value: ranks ``s + 1 .. e`` average to
    ``(s + 1 + e) / 2``, exact in binary); otherwise ``rankdata`` ranks those rows.
    """
    from scipy import stats

    sv = _sorted(cache, column, values)
    if not np.array_equal(sv.present, rows):
        return np.asarray(stats.rankdata(values[rows]), dtype=np.float64)
    starts = sv.start[np.r_[True, sv.start[1:] != sv.start[:-1]]]  # each group's first position
    ends = np.r_[starts[1:], sv.order.size]
    return np.asarray((starts[sv.dense] + 1 + ends[sv.dense]) / 2, dtype=np.float64)


def _spearman(rx: FloatArray, ry: FloatArray) -> tuple[float, float]:
    r"""Spearman's rho of two rankings and its two-sided p-value, as scipy's ``spearmanr``.

    The correlation of the average ranks, and the p-value of
    :math:`t = \rho \sqrt{(n - 2) / ((1 + \rho)(1 - \rho))}` on n - 2 degrees of
    freedom (Spearman 1904; Zar 1972, JASA 67(339), 578-580): the computation of
    ``scipy.stats.spearmanr`` step for step, so the same bits, without ranking the
    columns again for every pair.

    Examples
    --------
    >>> from scipy import stats
    >>> x, y = np.array([0.1, 0.4, 0.3, 0.8, 0.5]), np.array([1.0, 3.0, 2.0, 5.0, 3.0])
    >>> _spearman(stats.rankdata(x), stats.rankdata(y)) == tuple(stats.spearmanr(x, y))
    True
    """
    from scipy import special

    rs = np.asarray(np.corrcoef(np.column_stack((rx, ry)), rowvar=False))[1, 0]
    dof = rx.size - 2
    with np.errstate(divide="ignore"):
        t = rs * np.sqrt((dof / ((rs + 1.0) * (1.0 - rs))).clip(0))
    return float(rs), float(2 * special.stdtr(dof, -np.abs(t)))


#: Distinct values of a rating up to which Kendall's tau counts its discordant pairs
#: level by level (:func:`_kendall`); a rating of more values goes to scipy.
_KENDALL_LEVELS: Final = 64


@dataclass(frozen=True)
class _Sorted:
    """A column's present values: their stable order, x-group starts and dense codes."""

    present: npt.NDArray[np.bool_]
    order: npt.NDArray[np.intp]
    start: npt.NDArray[np.intp]  # in sorted order: where each value's group of ties starts
    dense: npt.NDArray[np.intp]  # in the column's order: 0 .. levels-1, by value
    levels: int


def _sorted(cache: dict[str, _Sorted], column: str, values: FloatArray) -> _Sorted:
    """The column's :class:`_Sorted`, made once."""
    if column not in cache:
        present = ~np.isnan(values)
        v = values[present]
        order = np.argsort(v, kind="mergesort")
        s = v[order]
        new = np.r_[True, s[1:] != s[:-1]]
        starts = np.flatnonzero(new)
        dense = np.empty(v.size, dtype=np.intp)
        dense[order] = np.cumsum(new) - 1
        cache[column] = _Sorted(present, order, starts[dense[order]], dense, int(starts.size))
    return cache[column]


def _tie_sums(counts: npt.NDArray[np.int64]) -> tuple[int, int, int]:
    """The tie terms of Kendall's variance from the counts of each value, in value order."""
    cnt = counts[counts > 1]
    return (
        int((cnt * (cnt - 1) // 2).sum()),
        int((cnt * (cnt - 1.0) * (cnt - 2)).sum()),
        int((cnt * (cnt - 1.0) * (2 * cnt + 5)).sum()),
    )


def _kendall(
    cache: dict[str, _Sorted],
    measure: str,
    x_all: FloatArray,
    rating: str,
    y_all: FloatArray,
    rows: npt.NDArray[np.bool_],
) -> tuple[float, float] | None:
    r"""Kendall's tau-b of a measure and a rating and its two-sided p, as scipy's ``kendalltau``.

    Kendall (1945, Biometrika 33(3), 239-251): :math:`\tau_b = (n_c - n_d) /
    \sqrt{(n_0 - n_x)(n_0 - n_y)}` with the asymptotic normal p-value of the variance
    with ties.  The counts are integers and the formula is scipy's step for step, so
    the numbers are scipy's bit for bit; what differs is how the discordant pairs are
    counted: each measure is sorted once (shared by every rating), and the pairs
    :math:`x_i < x_j,\ y_i > y_j` are counted rating level by level from prefix counts
    (:math:`O(n \cdot \text{levels})`).  ``None`` (scipy's own then) when the pair's
    sessions are not both columns' present ones, the rating has more than
    :data:`_KENDALL_LEVELS` values, or neither column has a tie (scipy's exact p).

    Examples
    --------
    >>> from scipy import stats
    >>> x = np.array([0.1, 0.4, 0.3, 0.8, 0.5, 0.2, 0.9, 0.4] * 5)
    >>> y = np.array([1.0, 3.0, 2.0, 5.0, 3.0, 1.0, 4.0, 2.0] * 5)
    >>> got = _kendall({}, "x", x, "y", y, np.ones(x.size, dtype=bool))
    >>> got == tuple(stats.kendalltau(x, y))
    True
    """
    from scipy import special

    sx, sy = _sorted(cache, measure, x_all), _sorted(cache, rating, y_all)
    if sy.levels > _KENDALL_LEVELS or not (
        np.array_equal(sx.present, rows) and np.array_equal(sy.present, rows)
    ):
        return None
    size = int(sx.order.size)
    ys = sy.dense[sx.order]  # the rating's level in the measure's order
    # discordant: for each session, the sessions of a smaller measure and a higher rating
    dis = 0
    for level in range(sy.levels - 1):
        higher = np.concatenate(([0], np.cumsum(ys > level)))  # before each position
        dis += int(higher[sx.start[ys == level]].sum())
    x_groups = np.cumsum(np.r_[True, sx.start[1:] != sx.start[:-1]]) - 1
    joint = np.bincount(x_groups * sy.levels + ys)
    cnt = joint[joint > 1].astype(np.int64)
    ntie = int((cnt * (cnt - 1) // 2).sum())
    xtie, x0, x1 = _tie_sums(np.bincount(sx.dense).astype(np.int64))
    ytie, y0, y1 = _tie_sums(np.bincount(sy.dense).astype(np.int64))
    tot = (size * (size - 1)) // 2
    if (xtie == 0 and ytie == 0) or xtie == tot or ytie == tot:
        return None
    con_minus_dis = tot - xtie - ytie + ntie - 2 * dis
    tau = con_minus_dis / np.sqrt(tot - xtie) / np.sqrt(tot - ytie)
    tau = np.minimum(1.0, max(-1.0, tau))
    m = size * (size - 1.0)
    var = (
        (m * (2 * size + 5) - x1 - y1) / 18 + (2 * xtie * ytie) / m + x0 * y0 / (9 * m * (size - 2))
    )
    z = con_minus_dis / np.sqrt(var)
    return float(tau), float(2 * special.ndtr(-np.abs(z)))

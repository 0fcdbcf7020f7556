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
    # each column ranked once over the sessions where it has a value: a pair whose
    # sessions are exactly those reuses it (Spearman's rho needs no other ranking)
    ranks: dict[str, tuple[npt.NDArray[np.bool_], FloatArray]] = {}
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
                        _ranked(ranks, m, x_all, both), _ranked(ranks, r, y_all, both)
                    )
                    kt = stats.kendalltau(x, y)
                coefficients = [float(pr[0]), float(pr[1]), rho, rho_p, float(kt[0]), float(kt[1])]
            row.update(zip(CORRELATION_COLUMNS[3:], coefficients, strict=True))
            rows.append(row)
    out = pd.DataFrame(rows, columns=list(CORRELATION_COLUMNS))
    out["n"] = out["n"].astype(np.int64)
    return out


def _ranked(
    cache: dict[str, tuple[npt.NDArray[np.bool_], FloatArray]],
    column: str,
    values: FloatArray,
    rows: npt.NDArray[np.bool_],
) -> FloatArray:
    """Average ranks of ``values[rows]``, from ``cache`` when the column was ranked on them."""
    from scipy import stats

    present = ~np.isnan(values)
    if column not in cache:
        cache[column] = (present, stats.rankdata(values[present]))
    ranked_on, ranks = cache[column]
    if np.array_equal(ranked_on, rows):
        return ranks
    return np.asarray(stats.rankdata(values[rows]), dtype=np.float64)


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

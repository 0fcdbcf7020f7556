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
import pandas as pd

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
    rows = []
    for m in measures:
        x_all = per_session[m].to_numpy(dtype=np.float64, na_value=np.nan)
        for r in ratings:
            y_all = per_session[r].to_numpy(dtype=np.float64, na_value=np.nan)
            both = ~(np.isnan(x_all) | np.isnan(y_all))
            x, y = x_all[both], y_all[both]
            row: dict[str, object] = {"measure": m, "rating": r, "n": int(both.sum())}
            values = [np.nan] * 6
            if x.size >= 3 and np.ptp(x) > 0 and np.ptp(y) > 0:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    pr = stats.pearsonr(x, y)
                    sr = stats.spearmanr(x, y)
                    kt = stats.kendalltau(x, y)
                values = [
                    float(pr[0]),
                    float(pr[1]),
                    float(sr[0]),
                    float(sr[1]),
                    float(kt[0]),
                    float(kt[1]),
                ]
            row.update(zip(CORRELATION_COLUMNS[3:], values, strict=True))
            rows.append(row)
    out = pd.DataFrame(rows, columns=list(CORRELATION_COLUMNS))
    out["n"] = out["n"].astype(np.int64)
    return out

"""Statistics on tidy score tables: per-system means with confidence intervals, paired tests."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ..errors import SessionvalError

__all__ = [
    "paired_comparison",
    "score_table",
]
if TYPE_CHECKING:
    pass


def score_table(
    per_session: pd.DataFrame,
    *,
    measures: Sequence[str],
    by: str = "system_id",
    confidence: float = 0.95,
) -> pd.DataFrame:
    r"""Per system: number of sessions, mean, SD and t confidence interval of each score.

    Parameters
    ----------
    per_session
        One row per session (not modified).
    measures
        Score columns to summarise.
    by
        Grouping column (the system).
    confidence
        Confidence level of the interval, in (0, 1).

    Returns
    -------
    pandas.DataFrame
        One row per (system, measure): ``system, measure, n, mean, sd, ci_low, ci_high``.

    Notes
    -----
    The interval is :math:`\bar x \pm t_{(1+c)/2,\,n-1}\, s/\sqrt n` over the
    sessions with a value (NaN scores are left out and not counted); with
    fewer than two values it is NaN.

    Examples
    --------
    >>> ps = pd.DataFrame({"system_id": ["A", "A", "A", "B"], "nsdcg": [0.2, 0.4, 0.6, 0.5]})
    >>> t = score_table(ps, measures=["nsdcg"])
    >>> t.round(3).to_numpy().tolist()
    [['A', 'nsdcg', 3, 0.4, 0.2, -0.097, 0.897], ['B', 'nsdcg', 1, 0.5, nan, nan, nan]]
    """
    from scipy import stats

    if not 0.0 < confidence < 1.0:
        raise SessionvalError(f"confidence must be in (0, 1), got {confidence}")
    missing = [c for c in (by, *measures) if c not in per_session.columns]
    if missing:
        raise SessionvalError(
            f"score_table: column(s) {missing} not in the per-session table; "
            f"columns are {list(per_session.columns)}"
        )
    keys = per_session[by].astype(str)
    values = per_session.loc[:, list(measures)].astype("float64")
    grouped = values.groupby(keys.to_numpy(), sort=True)
    n = grouped.count()
    mean = grouped.mean()
    sd = grouped.std(ddof=1)
    rows = pd.DataFrame(
        {
            "system": np.repeat(n.index.to_numpy(dtype=object), len(measures)),
            "measure": np.tile(np.asarray(measures, dtype=object), len(n)),
            "n": n.to_numpy().reshape(-1).astype(np.int64),
            "mean": mean.to_numpy().reshape(-1),
            "sd": sd.to_numpy().reshape(-1),
        }
    )
    nn = rows["n"].to_numpy(dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        tq = stats.t.ppf((1.0 + confidence) / 2.0, nn - 1.0)
        half = tq * rows["sd"].to_numpy() / np.sqrt(nn)
    half = np.where(nn >= 2, half, np.nan)
    rows["ci_low"] = rows["mean"].to_numpy() - half
    rows["ci_high"] = rows["mean"].to_numpy() + half
    return rows


def paired_comparison(
    per_session: pd.DataFrame,
    *,
    measures: Sequence[str],
    a: str,
    b: str,
    subject: str = "user_id",
    system: str = "system_id",
) -> pd.DataFrame:
    """Paired t and Wilcoxon signed-rank tests of system ``a`` against ``b`` by searcher.

    Each searcher's sessions are averaged per system (a Latin-square study gives
    every searcher sessions with both systems on different topics); searchers
    with a value for both systems form the pairs.

    Parameters
    ----------
    per_session
        One row per session (not modified).
    measures
        Score columns to compare.
    a, b
        The two systems (values of ``system``).
    subject, system
        Pairing unit and condition columns.

    Returns
    -------
    pandas.DataFrame
        One row per measure: ``measure, a, b, n_pairs, mean_a, mean_b, mean_diff,
        t, p_t, W, p_wilcoxon`` (two-sided; NaN with fewer than two pairs).

    Examples
    --------
    >>> ps = pd.DataFrame({"user_id": ["u1", "u1", "u2", "u2", "u3", "u3"],
    ...                    "system_id": ["A", "B"] * 3, "x": [1.0, 2.0, 2.0, 3.5, 3.0, 3.5]})
    >>> r = paired_comparison(ps, measures=["x"], a="A", b="B")
    >>> r[["n_pairs", "mean_diff"]].to_numpy().tolist()
    [[3.0, -1.0]]
    """
    from scipy import stats

    for col in (subject, system, *measures):
        if col not in per_session.columns:
            raise SessionvalError(f"paired_comparison: column {col!r} not in the table")
    systems = set(per_session[system].astype(str))
    for s in (a, b):
        if s not in systems:
            raise SessionvalError(
                f"paired_comparison: system {s!r} not found; systems are {sorted(systems)}"
            )
    keys = [per_session[subject].astype(str).to_numpy(), per_session[system].astype(str).to_numpy()]
    means = per_session.loc[:, list(measures)].astype("float64").groupby(keys).mean()
    rows = []
    for m in measures:
        table = means[m].unstack(level=1)  # noqa: PD010
        pair = table.loc[:, [a, b]].dropna()
        xa, xb = pair[a].to_numpy(), pair[b].to_numpy()
        n = len(pair)
        t = p_t = w = p_w = np.nan
        if n >= 2:
            d = xa - xb
            if np.any(d != d[0]) or d[0] != 0:
                res = stats.ttest_rel(xa, xb)
                t, p_t = float(res.statistic), float(res.pvalue)
            if np.any(d != 0):
                wres = stats.wilcoxon(xa, xb)
                w, p_w = float(wres.statistic), float(wres.pvalue)
        rows.append(
            {
                "measure": m,
                "a": a,
                "b": b,
                "n_pairs": float(n),
                "mean_a": float(xa.mean()) if n else np.nan,
                "mean_b": float(xb.mean()) if n else np.nan,
                "mean_diff": float((xa - xb).mean()) if n else np.nan,
                "t": t,
                "p_t": p_t,
                "W": w,
                "p_wilcoxon": p_w,
            }
        )
    return pd.DataFrame(rows)

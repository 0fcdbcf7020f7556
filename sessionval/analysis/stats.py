"""Statistics on tidy score tables: per-system means with confidence intervals, paired tests."""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd

from ..errors import SessionvalError

__all__ = [
    "paired_comparison",
    "score_rows",
    "score_table",
]


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
    return score_rows(
        n.index.to_numpy(dtype=object),
        measures,
        n.to_numpy(),
        grouped.mean().to_numpy(),
        grouped.std(ddof=1).to_numpy(),
        confidence,
    )


def score_rows(
    systems: np.ndarray,
    measures: Sequence[str],
    n: np.ndarray,
    mean: np.ndarray,
    sd: np.ndarray,
    confidence: float,
) -> pd.DataFrame:
    r"""The rows of :func:`score_table` from each system's counts, means and SDs.

    ``n``, ``mean`` and ``sd`` are systems × measures; the interval is
    :math:`\bar x \pm t_{(1+c)/2,\,n-1}\, s/\sqrt n`, NaN below two values.  The one
    formula of the local table and of :func:`~sessionval.analysis.cell_sums.
    score_table_from_cells`.
    """
    from scipy import stats

    rows = pd.DataFrame(
        {
            "system": np.repeat(systems, len(measures)),
            "measure": np.tile(np.asarray(measures, dtype=object), len(systems)),
            "n": n.reshape(-1).astype(np.int64),
            "mean": mean.reshape(-1),
            "sd": sd.reshape(-1),
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
    design: str | None = None,
    block: str | None = None,
) -> pd.DataFrame:
    """System ``a`` against ``b`` as the study's design asks (deprecated wrapper).

    .. deprecated::
        Use :func:`sessionval.analysis.by_design.compare_per_session` (every pair, the
        test, correction and effect size of your choice), which this function calls.
        It no longer always pairs by searcher: it follows the design that
        :func:`~sessionval.analysis.design.detect_design` finds (or ``design``/``block``),
        so a Latin square is analysed with searcher and topic blocks and a
        between-searcher study with Welch's test.

    Parameters
    ----------
    per_session
        One row per session (not modified); ``topic_id`` is optional here (without it
        every session counts as one topic).
    measures
        Score columns to compare.
    a, b
        The two systems (values of ``system``); differences are ``a − b``.
    subject, system
        Searcher and system columns.
    design, block
        Override of the detected design (as :func:`compare_per_session`).

    Returns
    -------
    pandas.DataFrame
        One row per measure: ``measure, a, b, n_pairs, mean_a, mean_b, mean_diff, t,
        p_t, W, p_wilcoxon, design, block, test, note``.  ``t``/``p_t`` are the design's
        test of ``a − b`` (the paired t test when the systems are paired by one block,
        else the blocks model's or Welch's t, named in ``test``); ``W``/``p_wilcoxon``
        the Wilcoxon signed-rank test on the same pairs, NaN where the design has no
        pairs; ``n_pairs`` the blocks used (``n`` of :func:`compare_per_session`);
        ``note`` why a row has no test.

    Examples
    --------
    >>> import warnings
    >>> ps = pd.DataFrame({"user_id": ["u1", "u1", "u2", "u2", "u3", "u3"],
    ...                    "system_id": ["A", "B"] * 3, "x": [1.0, 2.0, 2.0, 3.5, 3.0, 3.5]})
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", DeprecationWarning)
    ...     r = paired_comparison(ps, measures=["x"], a="A", b="B")
    >>> r[["n_pairs", "mean_diff", "design", "block"]].to_numpy().tolist()
    [[3.0, -1.0, 'within', 'searcher']]
    """
    from .by_design import compare_per_session

    warnings.warn(
        "paired_comparison is deprecated: use sessionval.analysis.by_design."
        "compare_per_session, which it now calls (it follows the study's design)",
        DeprecationWarning,
        stacklevel=2,
    )
    for col in (system, *measures):
        if col not in per_session.columns:
            raise SessionvalError(f"paired_comparison: column {col!r} not in the table")
    names = per_session[system].astype(str)
    systems = set(names)
    for s in (a, b):
        if s not in systems:
            raise SessionvalError(
                f"paired_comparison: system {s!r} not found; systems are {sorted(systems)}"
            )
    keep = names.isin([a, b]).to_numpy()
    table = pd.DataFrame(
        {
            "session_id": np.arange(int(keep.sum())),
            # the categories fix the order of the pair: differences are a − b
            "system_id": pd.Categorical(names[keep], categories=[a, b]),
            "topic_id": (
                per_session["topic_id"].astype(str).to_numpy()[keep]
                if "topic_id" in per_session.columns
                else ""
            ),
            **{m: per_session[m].to_numpy()[keep] for m in measures},
        }
    )
    if subject in per_session.columns:
        table["user_id"] = per_session[subject].astype(str).to_numpy()[keep]
    if "session_order" in per_session.columns:
        table["session_order"] = per_session["session_order"].to_numpy()[keep]
    kw = {"measures": list(measures), "design": design, "block": block, "correction": "none"}
    main = compare_per_session(table, test="paired-t", **kw)  # type: ignore[arg-type]
    out = pd.DataFrame(
        {
            "measure": main["measure"].to_numpy(),
            "a": a,
            "b": b,
            "n_pairs": main["n"].to_numpy(dtype=np.float64),
            "mean_a": main["mean_a"].to_numpy(dtype=np.float64),
            "mean_b": main["mean_b"].to_numpy(dtype=np.float64),
            "mean_diff": main["diff"].to_numpy(dtype=np.float64),
            "t": main["statistic"].to_numpy(dtype=np.float64),
            "p_t": main["p"].to_numpy(dtype=np.float64),
            "W": np.nan,
            "p_wilcoxon": np.nan,
            "design": main["design"].to_numpy(),
            "block": main["block"].to_numpy(),
            "test": main["test"].to_numpy(),
            "note": main["note"].to_numpy(),
        }
    )
    if main.attrs["design"].block in ("topic", "searcher"):
        rank = compare_per_session(table, test="wilcoxon", **kw)  # type: ignore[arg-type]
        out["W"] = rank["statistic"].to_numpy(dtype=np.float64)
        out["p_wilcoxon"] = rank["p"].to_numpy(dtype=np.float64)
    return out

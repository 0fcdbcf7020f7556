"""The long score table of the statistics: one row per system × topic (× measure).

Every statistic takes this tidy table (``system, topic, measure, value``; the names
configurable): :func:`score_matrix` turns one measure of it into the topics × systems
matrix the procedures work on, :func:`system_means` gives each system's mean per
measure.  Both check the table once: known systems, one score per cell, and finite
scores (NaN, or no row, marks a missing score).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from .._types import FloatArray
from ..errors import StatisticsError

__all__ = ["levels_in_order", "score_matrix", "system_means", "with_measures"]


def score_matrix(
    scores: pd.DataFrame,
    measure: str | None = None,
    *,
    systems: Sequence[str] | None = None,
    system: str = "system",
    topic: str = "topic",
    value: str = "value",
    measure_column: str = "measure",
) -> tuple[FloatArray, list[str], pd.Index]:
    """The topics × systems matrix of one measure (NaN where a system has no score).

    Parameters
    ----------
    scores
        Long table: one row per system × topic (× measure).
    measure
        Rows of this measure (``None``: the table has one measure).
    systems
        Column order (default: order of first appearance, or the categories' order).
    system, topic, value, measure_column
        Column names.

    Returns
    -------
    matrix, systems, topics

    Raises
    ------
    StatisticsError
        A column is missing, a system is unknown, a (system, topic) has two scores, or
        a score is infinite (NaN, a missing score, is allowed).

    Examples
    --------
    >>> t = pd.DataFrame({"system": ["A", "A", "B"], "topic": ["1", "2", "1"],
    ...                   "value": [0.5, 0.25, 1.0]})
    >>> x, names, topics = score_matrix(t)
    >>> x.tolist(), names
    ([[0.5, 1.0], [0.25, nan]], ['A', 'B'])
    """
    missing = [c for c in (system, topic, value) if c not in scores.columns]
    if missing:
        raise StatisticsError(
            f"scores: column(s) {missing} missing; columns are {list(scores.columns)}"
        )
    rows = scores
    if measure is not None:
        if measure_column not in scores.columns:
            raise StatisticsError(f"scores: no {measure_column!r} column to select {measure!r}")
        rows = scores[scores[measure_column].astype(str) == measure]
        if rows.empty:
            found = sorted(set(scores[measure_column].astype(str)))
            raise StatisticsError(f"no scores of measure {measure!r}; measures: {found}")
    _check_finite(rows, system, topic, value, measure_column)
    sys_col = rows[system]
    names = levels_in_order(scores[system]) if systems is None else [str(s) for s in systems]
    unknown = sorted(set(sys_col.astype(str)) - set(names))
    if unknown:
        raise StatisticsError(f"scores of unknown system(s) {unknown}; systems: {names}")
    s_codes = pd.Index(names).get_indexer(pd.Index(sys_col.astype(str)))
    t_codes, topics = pd.factorize(rows[topic].astype(str), sort=True)
    key = t_codes.astype(np.int64) * len(names) + s_codes
    if np.unique(key).size != key.size:
        dup = rows.loc[pd.Series(key).duplicated(keep=False).to_numpy(), [system, topic]]
        raise StatisticsError(
            f"scores: more than one score per system and topic, e.g. "
            f"{dup.iloc[0].tolist()} ({len(dup)} rows)"
        )
    x = np.full((topics.size, len(names)), np.nan)
    x[t_codes, s_codes] = rows[value].to_numpy(dtype=np.float64)
    return x, names, pd.Index(topics, name=topic)


def _check_finite(
    rows: pd.DataFrame, system: str, topic: str, value: str, measure_column: str
) -> None:
    """Refuse an infinite score of a long table, naming its measure, system and topic."""
    values = pd.to_numeric(rows[value], errors="coerce").to_numpy(dtype=np.float64)
    bad = np.isinf(values)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        rec = rows.iloc[i]
        where = f"measure {rec[measure_column]!r}, " if measure_column in rows.columns else ""
        raise StatisticsError(
            f"scores: {where}system {rec[system]!r}, topic {rec[topic]!r}: {value} is "
            f"{values[i]}; scores must be finite numbers (NaN or no row marks a missing "
            f"score), {int(bad.sum())} row(s) are not"
        )


def levels_in_order(col: pd.Series) -> list[str]:
    """Distinct values as text: the categories' order, else order of first appearance."""
    if isinstance(col.dtype, pd.CategoricalDtype):
        # the categories present, by their codes: no string per row
        codes = col.cat.codes.to_numpy()
        seen = np.bincount(codes[codes >= 0], minlength=len(col.cat.categories)) > 0
        present = {str(c) for c, s in zip(col.cat.categories, seen, strict=True) if s}
        return [str(c) for c in col.cat.categories if str(c) in present]
    return [str(s) for s in pd.unique(col.astype(str))]


def with_measures(
    scores: pd.DataFrame, measures: Sequence[str] | None, measure_column: str, value: str
) -> tuple[pd.DataFrame, list[str]]:
    """The table with a measure column (a table of one score gets one), and the measures wanted."""
    if measure_column not in scores.columns:
        scores = scores.assign(**{measure_column: value})
    wanted = list(measures) if measures is not None else levels_in_order(scores[measure_column])
    return scores, wanted


def system_means(
    scores: pd.DataFrame,
    *,
    system: str = "system",
    topic: str = "topic",
    value: str = "value",
    measure_column: str = "measure",
    how: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """Each system's score on each measure over the topics it was scored on.

    Each measure is aggregated as it declares (``MeasureDef.aggregate``, as
    ``evaluate`` summarises it): the mean; the sum for a count (trec_eval's
    ``num_ret``); ``exp`` of the mean for a per-topic log (``GMAP``, trec_eval's
    ``gm_map``, whose per-topic values are ``log(max(AP, 1e-5))``).

    Parameters
    ----------
    scores
        Tidy per-topic scores.
    system, topic, value, measure_column
        Column names of ``scores``.
    how
        ``measure -> "mean" | "sum" | "exp_mean"``; by default the mapping
        :func:`~sessionval.evaluation.runs.score_runs` records in
        ``scores.attrs["aggregate"]`` (the mean for a measure not named).

    Returns
    -------
    pandas.DataFrame
        ``system, measure, n, mean`` (systems and measures in the table's order;
        ``mean`` is the aggregate, named for the common case).

    Examples
    --------
    >>> t = pd.DataFrame({"system": ["A", "A", "B"], "topic": ["1", "2", "1"],
    ...                   "measure": "AP", "value": [0.5, 0.25, 1.0]})
    >>> system_means(t).to_numpy().tolist()
    [['A', 'AP', 2, 0.375], ['B', 'AP', 1, 1.0]]
    >>> logs = t.assign(measure="GMAP", value=np.log([0.5, 0.125, 1.0]))
    >>> system_means(logs, how={"GMAP": "exp_mean"})["mean"].round(6).tolist()
    [0.25, 1.0]
    """
    kinds = dict(how if how is not None else scores.attrs.get("aggregate", {}))
    scores, measures = with_measures(scores, None, measure_column, value)
    _check_finite(scores, system, topic, value, measure_column)
    names = levels_in_order(scores[system])
    g = scores.groupby(
        [scores[system].astype(str), scores[measure_column].astype(str)], sort=False
    )[value]
    agg = pd.DataFrame({"n": g.count(), "mean": g.mean(), "sum": g.sum()})
    index = pd.MultiIndex.from_product([names, measures])
    agg = agg.reindex(index).dropna(subset=["mean"]).reset_index()
    agg.columns = ["system", "measure", "n", "mean", "sum"]
    kind = agg["measure"].map(lambda m: kinds.get(m, "mean")).to_numpy(dtype=object)
    mean = agg["mean"].to_numpy(dtype=np.float64)
    agg["mean"] = np.where(
        kind == "sum",
        agg["sum"].to_numpy(dtype=np.float64),
        np.where(kind == "exp_mean", np.exp(mean), mean),
    )
    agg["n"] = agg["n"].astype(np.int64)
    out = agg.drop(columns="sum")
    # what "mean" is for measures that are not a mean (named in tables' legends)
    out.attrs["aggregate"] = {m: k for m, k in kinds.items() if k != "mean" and m in measures}
    return out

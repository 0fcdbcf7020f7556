r"""Sums per design cell: the statistics of a study whose sessions are split in partitions.

A distributed run (``run --engine dask``) keeps the per-session table on the workers.
Each partition reduces its part to :class:`CellSums`, :func:`cell_sums`: per design
cell (searcher ``user_id`` × ``topic_id`` × ``system_id``, and ``session_order`` when
the period effect of a Latin square may be needed) the number of sessions and, per
measure, the count of values, their sum, their sum of squares about the cell's mean
and their largest magnitude.  Its size grows with the cells, never with the sessions
of a cell.  :func:`combine` folds partials (concatenate, then reduce per cell), so the
client holds one partial at a time; the sessions of one cell may come from several
partitions.

From the combined sums, the functions below give what the local functions give on
the whole per-session table: :func:`score_table_from_cells` (:func:`~sessionval.
analysis.stats.score_table`), :func:`design_from_cells` (:func:`~sessionval.analysis.
design.detect_design`), :func:`blocked_scores_from_cells` (:func:`~sessionval.analysis.
compare.blocked_scores`) and :func:`unjudged_from_cells` (the report's note on sessions
without judgments); :func:`sessionval.analysis.by_design.compare_cells` compares the
systems as :func:`~sessionval.analysis.by_design.compare_per_session` does.

Notes
-----
Sums of squares are kept about each cell's mean, not as raw :math:`\sum x^2`: merging
two parts :math:`(n_i, S_i, M_i)` of one group is exact in real arithmetic,

.. math::

    M = \sum_i M_i + \sum_i n_i (\bar x_i - \bar x)^2, \qquad \bar x = \sum_i S_i / \sum_i n_i

(Chan, Golub & LeVeque 1983, *The American Statistician* 37(3), 242-247
[chan1983]), and needs no difference of two large sums, so a score of little spread
keeps its variance to the last digits.  Floating-point sums depend on their order:
the cell sums add the partitions' sums in the order they were combined, so results
agree with the local run's to about 1e-15 relative, not bit for bit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from pandas.api.types import union_categoricals

from .._types import FloatArray, IntArray
from ..errors import StatisticsError
from .design import Design, design_of_cells
from .stats import score_rows

__all__ = [
    "KEY_COLUMNS",
    "CellSums",
    "blocked_scores_from_cells",
    "cell_sums",
    "combine",
    "design_from_cells",
    "group_sums",
    "score_measures",
    "score_table_from_cells",
    "unjudged_from_cells",
]

#: The key columns of a cell, in order (``session_order`` when summed by order).
KEY_COLUMNS: tuple[str, ...] = ("user_id", "topic_id", "system_id", "session_order")
#: Columns of a per-session table that are not scores.
_NOT_SCORES = frozenset(
    {"session_id", "user_id", "topic_id", "system_id", "session_start", "session_end",
     "duration_s", "session_order"}
)  # fmt: skip


@dataclass(frozen=True)
class CellSums:
    """Per design cell, the sessions and per measure the sums the statistics need.

    Attributes
    ----------
    keys
        One row per cell, sorted: ``user_id``, ``topic_id``, ``system_id`` (and
        ``session_order``) as text (``"nan"`` where missing, as ``astype(str)``),
        categorical.
    measures
        The measures summed, in the order given (default: the table's column order).
    n
        Sessions per cell.
    count, total, m2, absmax
        Cells × measures: values present, their sum, their sum of squares about the
        cell's mean (0 where the count is 0) and their largest magnitude (0 likewise).
    systems
        ``system_id`` → the first session (id) of that system, for the systems' order
        when the column is not categorical.
    categorical
        The ``system_id`` column is categorical: systems in id order of their values.
    has_searcher
        The table has a ``user_id`` column with a value.
    """

    keys: pd.DataFrame
    measures: tuple[str, ...]
    n: IntArray
    count: IntArray
    total: FloatArray
    m2: FloatArray
    absmax: FloatArray
    systems: dict[str, str]
    categorical: bool
    has_searcher: bool

    @property
    def n_sessions(self) -> int:
        """Sessions summed."""
        return int(self.n.sum())

    @property
    def by_order(self) -> bool:
        """The cells are split by ``session_order`` too."""
        return "session_order" in self.keys.columns

    def mean(self) -> FloatArray:
        """Cells × measures: each cell's mean (NaN where it has no value)."""
        with np.errstate(invalid="ignore", divide="ignore"):
            out: FloatArray = np.where(self.count > 0, self.total / self.count, np.nan)
        return out

    def system_order(self) -> list[str]:
        """The systems in the order the local statistics use (:func:`levels_in_order`)."""
        from ..frame.order import id_order

        present = list(self.systems)
        if self.categorical:  # categories in id order of the values (in_id_order)
            return [present[i] for i in id_order(present)]
        # first appearance in session order (sessions are in id order in every table)
        first = [self.systems[s] for s in present]
        return [present[i] for i in id_order(first)]


def score_measures(per_session: pd.DataFrame) -> list[str]:
    """The numeric score columns of a per-session table (not ids, covariates or ratings)."""
    return [
        str(c)
        for c in per_session.columns
        if str(c) not in _NOT_SCORES
        and not str(c).startswith(("rating_", "user_"))
        and pd.api.types.is_numeric_dtype(per_session[c])
        and not pd.api.types.is_bool_dtype(per_session[c])
    ]


def cell_sums(
    per_session: pd.DataFrame,
    measures: Sequence[str] | None = None,
    *,
    by_order: bool = True,
) -> CellSums:
    """Reduce one partition's per-session table to its sums per design cell.

    Parameters
    ----------
    per_session
        One row per session, in session order: ``system_id``, ``topic_id`` (``user_id``
        and ``session_order`` optional) and the scores.
    measures
        Score columns to sum (default: :func:`score_measures`).
    by_order
        Split the cells by ``session_order`` (when the table has it), which the blocks
        model of a Latin square needs for its period effect.  In a log of many sessions
        per searcher this makes about a cell per session: pass ``False`` there.

    Returns
    -------
    CellSums

    Raises
    ------
    StatisticsError
        A key or measure column is missing, or a measure is not numeric.

    Examples
    --------
    >>> ps = pd.DataFrame({"session_id": ["1", "2", "3"], "user_id": "u1", "topic_id": "t1",
    ...                    "system_id": ["A", "A", "B"], "x": [0.2, 0.4, 0.5]})
    >>> c = cell_sums(ps)
    >>> c.keys["system_id"].tolist(), c.n.tolist(), c.total.ravel().round(3).tolist()
    (['A', 'B'], [2, 1], [0.6, 0.5])
    >>> c.m2.ravel().round(3).tolist()
    [0.02, 0.0]
    """
    wanted = score_measures(per_session) if measures is None else list(measures)
    missing = [c for c in ("system_id", "topic_id", *wanted) if c not in per_session.columns]
    if missing:
        raise StatisticsError(
            f"per-session table: column(s) {missing} missing to sum its cells; columns are "
            f"{list(per_session.columns)}"
        )
    bad = [m for m in wanted if not pd.api.types.is_numeric_dtype(per_session[m])]
    if bad:
        raise StatisticsError(
            f"per-session table: column(s) {bad} are not numeric scores; give score columns"
        )
    has_searcher = "user_id" in per_session.columns and bool(per_session["user_id"].notna().any())
    names = [c for c in KEY_COLUMNS if c in per_session.columns]
    if not by_order and "session_order" in names:
        names.remove("session_order")
    keys = pd.DataFrame({c: per_session[c] for c in names}).reset_index(drop=True)
    if "user_id" not in keys:
        keys.insert(0, "user_id", "nan")
    codes, cells = _cell_codes(keys)
    y = np.column_stack(
        [per_session[m].to_numpy(dtype=np.float64, na_value=np.nan) for m in wanted]
    ).reshape(len(per_session), len(wanted))
    present = ~np.isnan(y)
    zeroed = np.where(present, y, 0.0)
    count = _group_sum(present.astype(np.int64), codes, len(cells))
    total = _group_sum(zeroed, codes, len(cells))
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(count > 0, total / count, 0.0)
    centred = np.where(present, y - mean[codes], 0.0)
    system = per_session["system_id"]
    first = (
        pd.Series(
            per_session["session_id"].astype(str).to_numpy()
            if "session_id" in per_session.columns
            else np.arange(len(per_session)).astype(str),
        )
        .groupby(system.astype(str).to_numpy(), sort=True)
        .first()
    )
    return CellSums(
        keys=cells,
        measures=tuple(wanted),
        n=np.bincount(codes, minlength=len(cells)).astype(np.int64),
        count=count,
        total=total,
        m2=_group_sum(centred * centred, codes, len(cells)),
        absmax=_group_max(np.abs(zeroed), codes, len(cells)),
        systems={str(k): str(v) for k, v in first.items()},
        categorical=isinstance(system.dtype, pd.CategoricalDtype),
        has_searcher=has_searcher,
    )


def _text_codes(col: pd.Series) -> tuple[IntArray, pd.Index]:
    """Codes of a key column's values as text (``astype(str)``) and those texts, sorted.

    A categorical column is coded through its categories (no text per row).
    """
    if isinstance(col.dtype, pd.CategoricalDtype):
        codes = col.cat.codes.to_numpy().astype(np.int64)
        text = np.asarray(col.cat.categories.astype(str), dtype=object)
        if (codes < 0).any():  # a missing value reads "nan", as astype(str) writes it
            text = np.append(text, "nan")
            codes = np.where(codes < 0, text.size - 1, codes)
        recode, levels = pd.factorize(text, sort=True)
        return np.asarray(recode, dtype=np.int64)[codes], pd.Index(levels, dtype=object)
    k, levels = pd.factorize(col.astype(str).to_numpy(dtype=object), sort=True)
    return np.asarray(k, dtype=np.int64), pd.Index(levels, dtype=object)


def _cell_codes(keys: pd.DataFrame) -> tuple[IntArray, pd.DataFrame]:
    """Each row's cell (codes in sorted key order) and the cells' keys (categorical).

    Each key column is coded in the sorted order of its texts and the codes folded
    column by column into one integer, compacted after each column (so no product of
    level counts can overflow): integer sorts instead of pandas' grouping on several
    text columns.  The cells' keys are categorical, so a partial holds each searcher's
    or topic's text once, not once per cell.
    """
    codes = np.zeros(len(keys), dtype=np.int64)
    coded = []
    for col in keys.columns:
        k, levels = _text_codes(keys[col])
        coded.append((k, levels))
        codes = np.unique(codes * max(len(levels), 1) + k, return_inverse=True)[1].ravel()
    codes = codes.astype(np.int64)
    first = np.full(int(codes.max()) + 1 if codes.size else 0, len(keys), dtype=np.int64)
    np.minimum.at(first, codes, np.arange(len(keys), dtype=np.int64))
    cells = pd.DataFrame(
        {
            col: pd.Categorical.from_codes(k[first], categories=levels).remove_unused_categories()
            for col, (k, levels) in zip(keys.columns, coded, strict=True)
        }
    )
    return codes, cells


def _group_sum(x: np.ndarray, codes: IntArray, n: int) -> np.ndarray:
    """Column sums of ``x`` per group (pandas' compensated group sums, vectorised)."""
    if x.shape[0] == 0:
        return np.zeros((n, x.shape[1]), dtype=x.dtype)
    out: np.ndarray = pd.DataFrame(x).groupby(codes, sort=True).sum().to_numpy(dtype=x.dtype)
    return out.reshape(n, x.shape[1])


def _group_max(x: FloatArray, codes: IntArray, n: int) -> FloatArray:
    if x.shape[0] == 0:
        return np.zeros((n, x.shape[1]))
    out: FloatArray = pd.DataFrame(x).groupby(codes, sort=True).max().to_numpy(np.float64)
    return out.reshape(n, x.shape[1])


def combine(*parts: CellSums) -> CellSums:
    """Fold partials into one: the same cells' sums added (associative and commutative).

    Call it as each partial arrives (``acc = combine(acc, part)``): the result's size
    is the number of distinct cells, whatever the number of partials or sessions.

    Raises
    ------
    StatisticsError
        No partial, or partials of different measures or key columns.
    """
    if not parts:
        raise StatisticsError("combine: no cell sums to combine")
    first = parts[0]
    for p in parts[1:]:
        if p.measures != first.measures or list(p.keys.columns) != list(first.keys.columns):
            raise StatisticsError(
                f"combine: partials of different measures or cells ({list(first.measures)} by "
                f"{list(first.keys.columns)} and {list(p.measures)} by {list(p.keys.columns)})"
            )
    if len(parts) == 1:
        return first
    keys = pd.DataFrame(
        {
            c: union_categoricals([p.keys[c] for p in parts], ignore_order=True)
            for c in first.keys.columns
        }
    )
    codes, cells = _cell_codes(keys)
    g = len(cells)
    count = _group_sum(np.concatenate([p.count for p in parts]), codes, g)
    total = _group_sum(np.concatenate([p.total for p in parts]), codes, g)
    with np.errstate(invalid="ignore", divide="ignore"):
        part_mean = np.concatenate([np.where(p.count > 0, p.total / p.count, 0.0) for p in parts])
        mean = np.where(count > 0, total / count, 0.0)
    part_count = np.concatenate([p.count for p in parts])
    shift = part_mean - mean[codes]
    m2 = _group_sum(np.concatenate([p.m2 for p in parts]) + part_count * shift * shift, codes, g)
    systems: dict[str, str] = {}
    from ..frame.order import id_order

    for p in parts:
        for s, sid in p.systems.items():
            if s not in systems or id_order([systems[s], sid])[0] == 1:
                systems[s] = sid
    return CellSums(
        keys=cells,
        measures=first.measures,
        n=_group_sum(np.concatenate([p.n for p in parts])[:, None], codes, g).ravel(),
        count=count,
        total=total,
        m2=m2,
        absmax=_group_max(np.concatenate([p.absmax for p in parts]), codes, g),
        systems=dict(sorted(systems.items())),
        categorical=all(p.categorical for p in parts),
        has_searcher=any(p.has_searcher for p in parts),
    )


def _columns(cells: CellSums, measures: Sequence[str]) -> list[int]:
    """Positions of ``measures`` among the summed ones."""
    missing = [m for m in measures if m not in cells.measures]
    if missing:
        raise StatisticsError(
            f"cell sums: measure(s) {missing} were not summed; summed: {list(cells.measures)}"
        )
    return [cells.measures.index(m) for m in measures]


def group_sums(cells: CellSums, by: Sequence[str], measures: Sequence[str]) -> tuple[
    pd.DataFrame, IntArray, IntArray, FloatArray, FloatArray
]:  # fmt: skip
    """The sums per group of ``by`` key columns: keys, sessions, counts, sums, centred SS."""
    cols = _columns(cells, measures)
    keys = cells.keys.loc[:, list(by)]
    codes, groups = _cell_codes(keys)
    g = len(groups)
    count = _group_sum(cells.count[:, cols], codes, g)
    total = _group_sum(cells.total[:, cols], codes, g)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(count > 0, total / count, 0.0)
        cell_mean = np.where(
            cells.count[:, cols] > 0, cells.total[:, cols] / cells.count[:, cols], 0.0
        )
    shift = cell_mean - mean[codes]
    m2 = _group_sum(cells.m2[:, cols] + cells.count[:, cols] * shift * shift, codes, g)
    n = np.bincount(codes, weights=cells.n, minlength=g).astype(np.int64)
    return groups, n, count, total, m2


def score_table_from_cells(
    cells: CellSums, *, measures: Sequence[str], confidence: float = 0.95
) -> pd.DataFrame:
    """:func:`~sessionval.analysis.stats.score_table` of the sessions the cells sum.

    Per system and measure the number of values, their mean, SD (from the pooled sums
    of squares, module Notes) and t interval, in the local table's order and dtypes.
    """
    groups, _, count, total, m2 = group_sums(cells, ["system_id"], measures)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(count > 0, total / count, np.nan)
        sd = np.where(count > 1, np.sqrt(m2 / (count - 1)), np.nan)
    return score_rows(
        groups["system_id"].to_numpy(dtype=object), measures, count, mean, sd, confidence
    )


def design_from_cells(
    cells: CellSums, *, design: str | None = None, block: str | None = None
) -> Design:
    """:func:`~sessionval.analysis.design.detect_design` of the sessions the cells sum."""
    from .design import BLOCKS, DESIGNS

    if design not in (None, *DESIGNS) or block not in (None, *BLOCKS):
        # the same message as the local detection: checked on an empty table
        from .design import detect_design

        detect_design(pd.DataFrame(columns=["system_id", "topic_id"]), design=design, block=block)
    text = {c: cells.keys[c].to_numpy(dtype=object) for c in ("user_id", "system_id", "topic_id")}
    triples = pd.DataFrame(
        {"u": text["user_id"] if cells.has_searcher else "", "s": text["system_id"],
         "t": text["topic_id"]}
    ).drop_duplicates()  # fmt: skip
    return design_of_cells(
        triples,
        n_sessions=cells.n_sessions,
        has_searcher=cells.has_searcher,
        design=design,
        block=block,
    )


def blocked_scores_from_cells(
    cells: CellSums, *, measures: Sequence[str], block: str = "user_id"
) -> pd.DataFrame:
    """:func:`~sessionval.analysis.compare.blocked_scores` of the sessions the cells sum.

    Each system's values averaged per block (``user_id`` or ``topic_id``), as the long
    ``system, topic, measure, value`` table, the systems categorical in their order.
    """
    groups, _, count, total, _ = group_sums(cells, ["system_id", block], measures)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(count > 0, total / count, np.nan)
    wide = pd.DataFrame(mean, columns=list(measures))
    wide.insert(0, "system", groups["system_id"].to_numpy(dtype=object))
    wide.insert(1, "topic", groups[block].to_numpy(dtype=object))
    long = wide.melt(id_vars=["system", "topic"], var_name="measure", value_name="value")
    long = long.dropna(subset=["value"]).reset_index(drop=True)
    long["system"] = pd.Categorical(long["system"], categories=cells.system_order())
    return long


def unjudged_from_cells(cells: CellSums) -> tuple[int, list[str]]:
    """Sessions without an ``sdcg`` (their topic has no judgments) and their topics, sorted.

    ``(0, [])`` when ``sdcg`` was not summed.
    """
    if "sdcg" not in cells.measures:
        return 0, []
    gone = cells.n - cells.count[:, cells.measures.index("sdcg")]
    topics = sorted(set(cells.keys["topic_id"].to_numpy()[gone > 0].tolist()))
    return int(gone.sum()), [str(t) for t in topics]

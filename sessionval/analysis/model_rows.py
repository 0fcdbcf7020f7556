"""The rows the comparison of systems is computed on: a table's sessions, or cells of sessions.

:func:`~sessionval.analysis.by_design.compare_per_session` and
:func:`~sessionval.analysis.by_design.compare_cells` run one analysis on either source:
:class:`SessionRows` (a per-session table, each session of weight 1) and
:class:`CellRows` (:class:`~sessionval.analysis.cell_sums.CellSums`, each cell's mean
weighted by its sessions, with the cells' own sums of squares).  Both give the block
means of the paired designs, the systems in their order and the :class:`ModelRows` of
the blocks model and Welch's test.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pandas as pd

from .._types import FloatArray
from .cell_sums import CellSums, blocked_scores_from_cells
from .compare import blocked_scores
from .design import factorized
from .score_table import levels_in_order

__all__ = ["CellRows", "ModelRows", "SessionRows"]


class SessionRows:
    """The rows of the models: the sessions of a per-session table, each of weight 1."""

    def __init__(self, per_session: pd.DataFrame) -> None:
        self.table = per_session

    def systems(self) -> list[str]:
        """The systems in the order of the local statistics (pairs: a before b)."""
        return levels_in_order(self.table["system_id"])

    def blocked(self, measures: list[str], column: str) -> pd.DataFrame:
        """The long table of block means (``column``: ``user_id`` or ``topic_id``)."""
        return blocked_scores(self.table, measures=measures, block=column)

    def has_order(self) -> bool:
        """The rows carry ``session_order`` (the period effect of a Latin square)."""
        return "session_order" in self.table.columns

    def rows(self, measures: list[str], period: bool) -> ModelRows:
        """The rows of the blocks model and of Welch's test (with the order: ``period``)."""
        t = self.table
        columns = {"system": "system_id", "searcher": "user_id", "topic": "topic_id"}
        if period:
            columns["order"] = "session_order"
        keys = pd.DataFrame({k: text_levels(t[c]) for k, c in columns.items()})
        return ModelRows(keys, t[measures].astype("float64").to_numpy())


def text_levels(col: pd.Series) -> pd.Categorical:
    """A key column as its values' text, coded: the distinct texts, sorted, as categories.

    Compared, grouped and sorted (``pd.factorize(sort=True)``) as ``col.astype(str)``
    would be, without a string per session: the column is factorized (a categorical
    by its codes) and only its distinct values become text (values of one text, 1 and
    ``"1"``, are one level; a missing value stays missing).
    """
    codes, uniques = factorized(col)
    # the texts sorted as pandas sorts them (factorize(sort=True) of the text)
    merged, levels = pd.factorize(pd.Index(uniques.astype(str)), sort=True)
    coded = merged[np.maximum(codes, 0)] if len(levels) else codes
    return pd.Categorical.from_codes(
        np.where(codes < 0, -1, coded), categories=pd.Index(levels, dtype="str")
    ).remove_unused_categories()


class CellRows:
    """The rows of the models: the cells of :class:`CellSums`, weighted by their sessions."""

    def __init__(self, cells: CellSums) -> None:
        self.cells = cells

    def systems(self) -> list[str]:
        """The systems in the order of the local statistics (pairs: a before b)."""
        return self.cells.system_order()

    def blocked(self, measures: list[str], column: str) -> pd.DataFrame:
        """The long table of block means (``column``: ``user_id`` or ``topic_id``)."""
        return blocked_scores_from_cells(self.cells, measures=measures, block=column)

    def has_order(self) -> bool:
        """The rows carry ``session_order`` (the period effect of a Latin square)."""
        return self.cells.by_order

    def rows(self, measures: list[str], period: bool) -> ModelRows:
        """The rows of the blocks model and of Welch's test (with the order: ``period``)."""
        c = self.cells
        cols = [c.measures.index(m) for m in measures]
        keys = pd.DataFrame(
            {
                "system": c.keys["system_id"].to_numpy(),
                "searcher": c.keys["user_id"].to_numpy(),
                "topic": c.keys["topic_id"].to_numpy(),
            }
        )
        if period:
            keys["order"] = c.keys["session_order"].to_numpy()
        return ModelRows(
            keys,
            c.mean()[:, cols],
            weight=c.count[:, cols].astype(np.float64),
            within=c.m2[:, cols],
            absmax=c.absmax[:, cols],
        )


@dataclass(frozen=True)
class ModelRows:
    """Rows × measures of a model: values, and for cells their weights, sums of squares, |max|."""

    keys: pd.DataFrame
    y: FloatArray
    weight: FloatArray | None = None
    within: FloatArray | None = None
    absmax: FloatArray | None = None

    def missing(self, rows: npt.NDArray[np.intp]) -> npt.NDArray[np.bool_]:
        """Rows × measures without a value (cells: without a session of a value)."""
        return np.isnan(self.y[rows]) if self.weight is None else self.weight[rows] == 0

    def take(self, used: npt.NDArray[np.intp], cols: npt.NDArray[np.intp]) -> ModelRows:
        """The ``used`` rows of the ``cols`` measures (one pattern: the same weights)."""
        part = None if self.weight is None else self.weight[used, cols[0]]
        at = np.ix_(used, cols)
        return ModelRows(
            self.keys.iloc[used].reset_index(drop=True),
            self.y[at],
            weight=part,
            within=None if self.within is None else self.within[at],
            absmax=None if self.absmax is None else self.absmax[at],
        )

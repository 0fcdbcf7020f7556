"""Evaluate ranked lists with registered measures: per-query values, means and counts."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial

import numpy as np
import pandas as pd

from .._types import FloatArray
from ..errors import MeasureSpecError
from ..measures.lists import EmptyPolicy, RankedLists
from ..measures.registry import Measure, parse_measures
from .engine import ItemMapper

__all__ = [
    "SingleEvaluation",
    "evaluate_lists",
]


@dataclass(frozen=True)
class SingleEvaluation:
    """Result of :func:`evaluate_lists`.

    Parameters
    ----------
    per_query
        Long form: ``query_id``, ``measure`` (canonical name), ``value``; one row per
        list and measure, lists in input order, measures in request order.
    measures
        The measures, in request order.
    n_queries
        Number of lists evaluated.
    n_empty_recall_base
        Lists whose judgment key has no relevant document (normalised measures are NaN
        there under ``empty="nan"``).
    n_negative, n_unjudged
        Result rows with a negative grade / without a judgment.
    n_skipped
        Queries left out because their topic has no judgments.
    """

    per_query: pd.DataFrame
    measures: tuple[Measure, ...]
    n_queries: int
    n_empty_recall_base: int
    n_negative: int
    n_unjudged: int
    n_skipped: int

    def summary(self) -> pd.DataFrame:
        """Mean per measure over the lists with a defined value.

        Returns
        -------
        pandas.DataFrame
            ``measure``, ``value`` (mean, NaN values left out), ``n`` (lists averaged).
        """
        g = self.per_query.groupby("measure", sort=False)["value"]
        out = pd.DataFrame({"value": g.mean(), "n": g.count().astype(np.int64)}).reset_index()
        order = {repr(m): i for i, m in enumerate(self.measures)}
        return out.sort_values("measure", key=lambda s: s.map(order)).reset_index(drop=True)

    def wide(self) -> pd.DataFrame:
        """One row per list, one column per measure."""
        w = self.per_query.pivot_table(
            index="query_id", columns="measure", values="value", sort=False, dropna=False
        )
        return w[[repr(m) for m in self.measures]]


def _compute(m: Measure, *, lists: RankedLists, empty: EmptyPolicy) -> FloatArray:
    """One measure on every list (the unit a mapper runs)."""
    return m.compute(lists, empty=empty)


def evaluate_lists(
    lists: RankedLists,
    measures: Sequence[str | Measure],
    *,
    empty: EmptyPolicy = "nan",
    mapper: ItemMapper | None = None,
) -> SingleEvaluation:
    """Compute every measure for every list (one vectorised pass per measure).

    Parameters
    ----------
    lists
        The ranked lists (:meth:`RankedLists.from_run`, :meth:`RankedLists.from_frame`).
    measures
        Measure strings in the grammar (``"nDCG@10"``) or :class:`Measure` objects.
    empty
        ``"nan"`` (default): a normalised measure is NaN for a list with an empty recall
        base; ``"zero"``: 0, as trec_eval.
    mapper
        Computes the measures, one item each (an engine's ``map_items``: a
        :class:`~sessionval.evaluation.dask_engine.DaskEngine` runs them on its
        workers); default: one after another here.  The values are the same.

    Returns
    -------
    SingleEvaluation

    Examples
    --------
    >>> lists = RankedLists.from_arrays(["q1", "q2"], [0, 2, 3], [2, 0, 0])
    >>> ev = evaluate_lists(lists, ["RR", "nDCG@2"])
    >>> ev.per_query["value"].tolist()
    [1.0, 1.0, 0.0, nan]
    >>> ev.n_empty_recall_base
    1
    """
    if empty not in ("nan", "zero"):
        raise MeasureSpecError(f"empty={empty!r} unknown; use 'nan' or 'zero'")
    ms = tuple(parse_measures(measures))
    if not ms:
        raise MeasureSpecError("no measure given")
    sessions = [repr(m) for m in ms if m.scope != "query"]
    if sessions:
        raise MeasureSpecError(
            f"{', '.join(sessions)}: session measure(s) need sessions; ranked lists take "
            "single-query measures (use sessionval.evaluate on a study for session measures)"
        )
    n = lists.n
    fn = partial(_compute, lists=lists, empty=empty)
    values = mapper.map_items(fn, ms) if mapper is not None else [fn(m) for m in ms]
    qids = np.asarray(lists.query_ids, dtype=object)
    per_query = pd.DataFrame(
        {
            "query_id": np.tile(qids, len(ms)),
            "measure": np.repeat(np.array([repr(m) for m in ms], dtype=object), n),
            "value": np.concatenate(values) if values else np.zeros(0),
        }
    )
    # query-major order (all measures of a query together), as trec_eval -q prints
    order = np.lexsort((np.repeat(np.arange(len(ms)), n), np.tile(np.arange(n), len(ms))))
    per_query = per_query.iloc[order].reset_index(drop=True)
    return SingleEvaluation(
        per_query,
        ms,
        n,
        int(np.count_nonzero(lists.n_relevant() == 0)),
        lists.n_negative,
        lists.n_unjudged,
        lists.n_skipped,
    )

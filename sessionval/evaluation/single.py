"""The result of a single-query evaluation (:func:`~sessionval.evaluation.lists.evaluate_run`).

:class:`SingleEvaluation` follows the evaluation protocol
(:mod:`sessionval.evaluation.protocol`): ``per_query()`` wide, ``long()`` tidy,
``summary()`` a ``measure, value, n`` table, ``means`` and ``counts()``.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import pandas as pd

from ..errors import SessionvalError
from ..measures.registry import Measure
from .protocol import EvaluationResult, LegacyLongTable, finish_summary, summary_parts

__all__ = [
    "SingleEvaluation",
]


@dataclass(frozen=True)
class SingleEvaluation(EvaluationResult):
    """Result of :func:`~sessionval.evaluation.lists.evaluate_lists` and ``evaluate_run``.

    Parameters
    ----------
    values
        Long form: ``query_id``, ``measure`` (canonical name), ``value``; one row per
        list and measure, lists in input order, measures in request order (what
        :meth:`long` returns).
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
    notes
        What the reader noticed without failing: document ids of the run and qrels
        that differ only by Unicode normalisation or invisible characters, and such
        spellings judged with different grades (:mod:`sessionval.validate.ids`).
    parts
        The summary's sums and counts per measure
        (:func:`~sessionval.evaluation.protocol.summary_parts`) when the per-query
        values were not gathered (a run scored on a cluster without ``-q``:
        ``values`` is then empty); ``None``: the summary is made from ``values``.
    """

    values: pd.DataFrame
    measures: tuple[Measure, ...]
    n_queries: int
    n_empty_recall_base: int
    n_negative: int
    n_unjudged: int
    n_skipped: int
    notes: tuple[str, ...] = ()
    parts: pd.DataFrame | None = None

    @property
    def per_query(self) -> LegacyLongTable:
        """One row per list: ``query_id``, then one column per measure (canonical name).

        A method, as on :class:`~sessionval.evaluation.result.SessionEvaluation`:
        ``ev.per_query()``.  Read as an attribute it is the long table of before
        (deprecated: use :meth:`long`).
        """
        return LegacyLongTable.of(self.values, self._wide)

    def _pivot(self) -> pd.DataFrame:
        w = self.values.pivot_table(
            index="query_id", columns="measure", values="value", sort=False, dropna=False
        )
        return w[[repr(m) for m in self.measures]]

    def _wide(self) -> pd.DataFrame:
        w = self._pivot()
        w.columns.name = None
        return w.reset_index()

    def long(self, level: str = "query") -> pd.DataFrame:
        """Tidy table: ``query_id``, ``measure``, ``value``, query-major.

        Parameters
        ----------
        level
            ``"query"``, the only level of ranked lists.

        Raises
        ------
        SessionvalError
            Another level.
        """
        if level != "query":
            raise SessionvalError(
                f"level={level!r}: a single-query evaluation has one level, 'query'"
            )
        return self.values

    def summary(self) -> pd.DataFrame:
        """Mean per measure over the lists with a defined value.

        Each measure is aggregated as it declares (``MeasureDef.aggregate``): the mean;
        the sum for counts (``NumRet``, trec_eval's ``num_ret``); ``exp`` of the mean
        for a per-query log (``GMAP``, trec_eval's ``gm_map``).

        Returns
        -------
        pandas.DataFrame
            ``measure``, ``value`` (NaN values left out), ``n`` (lists aggregated).
        """
        how = {repr(m): m.definition.aggregate for m in self.measures}
        order = [repr(m) for m in self.measures]
        parts = summary_parts(self.values, order) if self.parts is None else self.parts
        return finish_summary(parts, order, how)

    def counts(self) -> dict[str, int]:
        """Lists evaluated, skipped, with an empty recall base; unjudged and negative rows."""
        return {
            "n_queries": self.n_queries,
            "n_skipped": self.n_skipped,
            "n_empty_recall_base": self.n_empty_recall_base,
            "n_unjudged": self.n_unjudged,
            "n_negative": self.n_negative,
        }

    def _facts(self) -> list[str]:
        facts = [f"{self.n_queries} queries"]
        if self.n_skipped:
            facts.append(f"{self.n_skipped} run queries without judgments skipped")
        if self.n_empty_recall_base:
            facts.append(f"{self.n_empty_recall_base} without relevant documents")
        if self.n_unjudged:
            facts.append(f"{self.n_unjudged} retrieved documents unjudged")
        return facts

    def __repr__(self) -> str:
        """One line: the counts and the mean of each measure.

        Examples
        --------
        >>> from sessionval.evaluation.lists import evaluate_run
        >>> ev = evaluate_run({"1": {"a": 1.0}}, {"1": {"a": 1}}, ["AP", "P@1"])
        >>> ev
        SingleEvaluation(1 queries; AP 1.0000, P@1 1.0000)
        """
        means = ", ".join(f"{m} {v:.4f}" for m, v in self.means.items())
        return f"SingleEvaluation({'; '.join([', '.join(self._facts()), means])})"

    def _repr_html_(self) -> str:
        """The counts and the table of means, for a notebook."""
        from .display import html_block

        return html_block("SingleEvaluation", self._facts(), {"means": self.summary()})

    def wide(self) -> pd.DataFrame:
        """Deprecated: ``per_query().set_index("query_id")``."""
        warnings.warn(
            "SingleEvaluation.wide() is per_query() now (query_id a column, as on "
            "SessionEvaluation)",
            DeprecationWarning,
            stacklevel=2,
        )
        return self._pivot()

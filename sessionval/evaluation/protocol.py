"""The one result protocol of the evaluation objects.

:class:`~sessionval.evaluation.result.SessionEvaluation` (from
:func:`~sessionval.evaluation.session.evaluate`) and
:class:`~sessionval.evaluation.single.SingleEvaluation` (from
:func:`~sessionval.evaluation.lists.evaluate_run` and ``evaluate_lists``) share
:class:`EvaluationResult`, so code written for one reads the other:

- tables are **methods** (``per_query()``, and ``per_session()`` /
  ``per_position()`` on sessions);
- ``per_query()`` is *wide*: one row per query (list), its identifying columns,
  then one column per score;
- ``long(level)`` is *tidy*: the identifying columns, ``measure``, ``value``, one
  row per query (or session) and measure, query-major;
- ``summary()`` is a tidy DataFrame ``measure, value, n``: each measure of
  ``long()`` aggregated over the units with a defined value, as the measure
  declares (the mean; the sum for counts; ``exp`` of the mean for ``GMAP``);
- ``means`` is that summary as a ``{measure: value}`` dict (ir_measures'
  ``calc_aggregate``); ``counts()`` the counts of the evaluation
  (``n_queries``, ``n_unjudged``, ``n_negative`` on both).

Methods were chosen over properties because they break fewer users: the session
tables have always been methods (they are computed, ``per_position`` through the
engine), while only ``SingleEvaluation.per_query`` was an attribute.  That
spelling (``ev.per_query["value"]``, the long table) still works and warns
(:class:`DeprecationWarning`), as does a count key of ``SessionEvaluation.summary()``
(``ev.summary()["n_sessions"]``), which was a dict.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, runtime_checkable

import numpy as np
import pandas as pd

__all__ = [
    "EvaluationResult",
    "LegacyLongTable",
    "LegacySummary",
    "add_summary_parts",
    "finish_summary",
    "summarise_long",
    "summary_parts",
]


@runtime_checkable
class EvaluationResult(Protocol):
    """What every evaluation object offers (see the module docstring for the shapes)."""

    def per_query(self) -> pd.DataFrame:
        """One row per query: identifying columns, then one column per score."""
        ...

    def long(self, level: str = "query") -> pd.DataFrame:
        """Tidy table of ``level``: identifying columns, ``measure``, ``value``."""
        ...

    def summary(self) -> pd.DataFrame:
        """``measure, value, n``: each measure aggregated over its units."""
        ...

    def counts(self) -> dict[str, int]:
        """Counts of the evaluation: ``n_queries``, ``n_unjudged``, ``n_negative``, ..."""
        ...

    @property
    def means(self) -> dict[str, float]:
        """``{measure: value}`` of :meth:`summary` (ir_measures' ``calc_aggregate``).

        Shared by the classes that subclass the protocol explicitly.
        """
        s = self.summary()
        return dict(zip(s["measure"], s["value"].astype(float), strict=True))


def summarise_long(
    long: pd.DataFrame, order: Sequence[str], how: Mapping[str, str] | None = None
) -> pd.DataFrame:
    """Aggregate a tidy ``measure, value`` table into ``measure, value, n``.

    :func:`summary_parts` finished by :func:`finish_summary` (a mean is the sum over
    the count, bit for bit pandas' grouped mean).

    Parameters
    ----------
    long
        The tidy table (``measure``, ``value``; other columns ignored).
    order
        The measures in the order of the result (every measure of ``long``).
    how
        ``measure -> "mean" | "sum" | "exp_mean"`` (``MeasureDef.aggregate``); the
        mean for a measure not named.  NaN values are left out and not counted.

    Returns
    -------
    pandas.DataFrame
        ``measure``, ``value``, ``n`` (the values aggregated), in ``order``.

    Examples
    --------
    >>> t = pd.DataFrame({"measure": ["AP", "AP", "NumRet", "NumRet"],
    ...                   "value": [0.5, float("nan"), 3.0, 4.0]})
    >>> summarise_long(t, ["AP", "NumRet"], {"NumRet": "sum"})
      measure  value  n
    0      AP    0.5  1
    1  NumRet    7.0  2
    """
    return finish_summary(summary_parts(long, order), order, how)


def summary_parts(long: pd.DataFrame, order: Sequence[str]) -> pd.DataFrame:
    """What a summary is made of, per measure: ``measure, sum, n`` of the defined values.

    Parts of disjoint sets of units add up (``sum`` and ``n`` summed per measure), so a
    summary of units scored in pieces (the partitions of a run scored on a cluster) is
    :func:`finish_summary` of the added parts.

    Examples
    --------
    >>> t = pd.DataFrame({"measure": ["AP", "AP"], "value": [0.5, float("nan")]})
    >>> summary_parts(t, ["AP"])
      measure  sum  n
    0      AP  0.5  1
    """
    g = long.groupby("measure", sort=False)["value"]
    return pd.DataFrame(
        {
            "measure": list(order),
            "sum": g.sum().reindex(list(order)).to_numpy(dtype=float),  # NaN: not scored
            "n": g.count().reindex(list(order)).fillna(0).to_numpy(dtype=np.int64),
        }
    )


def add_summary_parts(parts: Sequence[pd.DataFrame], order: Sequence[str]) -> pd.DataFrame:
    """:func:`summary_parts` of disjoint sets of units added: the parts of their union.

    Sums are added in the order given (the last bits of a float sum depend on it); a
    measure without a value anywhere keeps a NaN sum.

    Examples
    --------
    >>> a = pd.DataFrame({"measure": ["AP"], "sum": [0.5], "n": [1]})
    >>> b = pd.DataFrame({"measure": ["AP"], "sum": [0.25], "n": [2]})
    >>> add_summary_parts([a, b], ["AP"])
      measure   sum  n
    0      AP  0.75  3
    """
    g = pd.concat(list(parts), ignore_index=True).groupby("measure", sort=False)
    return pd.DataFrame(
        {
            "measure": list(order),
            "sum": g["sum"].sum(min_count=1).reindex(list(order)).to_numpy(dtype=float),
            "n": g["n"].sum().reindex(list(order)).fillna(0).to_numpy(dtype=np.int64),
        }
    )


def finish_summary(
    parts: pd.DataFrame, order: Sequence[str], how: Mapping[str, str] | None = None
) -> pd.DataFrame:
    """``measure, value, n`` from :func:`summary_parts` (added up): each measure as it declares.

    The mean is ``sum / n`` (NaN without a defined value), a count (``"sum"``) the
    sum, ``"exp_mean"`` (GMAP, trec_eval's ``gm_map``: a per-query log) ``exp`` of
    the mean.

    Examples
    --------
    >>> parts = pd.DataFrame({"measure": ["GMAP"], "sum": [-2.0], "n": [2]})
    >>> finish_summary(parts, ["GMAP"], {"GMAP": "exp_mean"})
      measure     value  n
    0    GMAP  0.367879  2
    """
    by = parts.set_index("measure").reindex(list(order))
    total = by["sum"].to_numpy(dtype=float)
    n = by["n"].fillna(0).to_numpy(dtype=np.int64)
    means = np.divide(total, n, out=np.full(len(n), np.nan), where=n > 0)
    kinds = np.array([(how or {}).get(m, "mean") for m in order], dtype=object)
    value = np.where(kinds == "sum", total, np.where(kinds == "exp_mean", np.exp(means), means))
    return pd.DataFrame({"measure": list(order), "value": value.astype(float), "n": n})


def _deprecated(message: str, depth: int = 3) -> None:
    # depth: frames between this call and the user's line (the dunder that warns, ...)
    warnings.warn(message, DeprecationWarning, stacklevel=depth)


class LegacyLongTable(pd.DataFrame):
    """``SingleEvaluation.per_query`` read as an attribute: the long table, deprecated.

    Calling it (``ev.per_query()``) is the method of the protocol and does not warn;
    using it as a table (``ev.per_query["value"]``, ``ev.per_query.head()``) gives
    the long table of before, with one :class:`DeprecationWarning` per object.
    """

    _metadata: ClassVar[list[str]] = ["_method", "_armed"]
    _method: Callable[[], pd.DataFrame]
    _armed: bool

    @classmethod
    def of(cls, data: pd.DataFrame, method: Callable[[], pd.DataFrame]) -> LegacyLongTable:
        """The long table ``data``; calling it calls ``method``."""
        table = cls(data)
        table._method = method
        table._armed = True
        return table

    @property
    def _constructor(self) -> type[pd.DataFrame]:
        # what pandas derives from it is a plain table
        return pd.DataFrame

    def __call__(self) -> pd.DataFrame:
        """The wide table of the method ``per_query()``."""
        method: Callable[[], pd.DataFrame] = object.__getattribute__(self, "_method")
        return method()

    def _warn_once(self) -> None:
        if object.__getattribute__(self, "__dict__").get("_armed"):
            object.__getattribute__(self, "__dict__")["_armed"] = False
            _deprecated(
                "SingleEvaluation.per_query is a method now (the wide table, as on "
                "SessionEvaluation); for the long table of before use ev.long()",
                depth=4,
            )

    def __getattribute__(self, name: str) -> Any:
        if not name.startswith("_"):
            object.__getattribute__(self, "_warn_once")()
        return super().__getattribute__(name)

    def __getitem__(self, key: Any) -> Any:
        self._warn_once()
        return super().__getitem__(key)

    def __iter__(self) -> Any:
        self._warn_once()
        return super().__iter__()


class LegacySummary(pd.DataFrame):
    """``SessionEvaluation.summary()``: the tidy table; a count key still reads the count.

    The summary was a dict of counts; ``summary()["n_sessions"]`` now warns
    (:class:`DeprecationWarning`) and returns ``counts()["n_sessions"]``
    (``"config"`` the configuration as JSON).
    """

    _metadata: ClassVar[list[str]] = ["_legacy"]
    _legacy: dict[str, Any]

    @classmethod
    def of(cls, data: pd.DataFrame, legacy: Mapping[str, Any]) -> LegacySummary:
        """The summary ``data``; ``legacy`` the dict of before."""
        table = cls(data)
        table._legacy = dict(legacy)
        return table

    @property
    def _constructor(self) -> type[pd.DataFrame]:
        return pd.DataFrame

    def __getitem__(self, key: Any) -> Any:
        legacy = object.__getattribute__(self, "__dict__").get("_legacy", {})
        if isinstance(key, str) and key in legacy and key not in self.columns:
            _deprecated(
                f"SessionEvaluation.summary() is a table (measure, value, n) now; "
                f"read {key!r} from ev.counts() (the configuration from ev.config)"
            )
            return legacy[key]
        return super().__getitem__(key)


if TYPE_CHECKING:  # mypy checks that both evaluation objects satisfy the protocol
    from .result import SessionEvaluation
    from .single import SingleEvaluation

    def _conforms(a: SessionEvaluation, b: SingleEvaluation) -> tuple[EvaluationResult, ...]:
        return (a, b)

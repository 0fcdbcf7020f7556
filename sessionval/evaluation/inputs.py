"""What ir_measures, ranx and ir_datasets users hold, as :func:`evaluate_run` reads it.

:func:`~sessionval.evaluation.lists.evaluate_run` takes ``(run, qrels)``, while
ir_measures (``calc_aggregate(measures, qrels, run)``), ranx (``evaluate(qrels, run,
metrics)``) and pytrec_eval (``RelevanceEvaluator(qrels, ...)``) put the qrels first.
:func:`run_and_qrels` recognises which argument is which from what each holds, so
both orders work; :func:`records_table` reads the iterables of named tuples that
ir_datasets (``qrels_iter()``: ``TrecQrel(query_id, doc_id, relevance, iteration)``)
and ir_measures (``Qrel``, ``ScoredDoc(query_id, doc_id, score)``) yield.
"""

from __future__ import annotations

import gzip
import os
from collections.abc import Iterable, Mapping
from itertools import chain
from pathlib import Path
from typing import Any, Literal

import pandas as pd

from ..frame import JudgmentFrame

__all__ = [
    "input_kind",
    "nested_table",
    "records_table",
    "run_and_qrels",
]

Kind = Literal["run", "qrels"] | None
#: the columns that tell a run (scores) from qrels (grades)
_RUN_COLUMNS = frozenset({"score"})
_QRELS_COLUMNS = frozenset({"relevance", "grade"})


def records_table(records: object) -> pd.DataFrame | None:
    """An iterable of named tuples as a table with their field names as columns.

    ``None`` when ``records`` is no such iterable (a table, a mapping, a path, a
    string).  The iterable is read once.

    Examples
    --------
    >>> from collections import namedtuple
    >>> Qrel = namedtuple("Qrel", "query_id doc_id relevance iteration")
    >>> records_table(iter([Qrel("1", "a", 2, "0")]))
    query_id doc_id  relevance iteration
    0        1      a          2         0
    """
    if (
        isinstance(records, str | bytes | os.PathLike | Mapping | pd.DataFrame | JudgmentFrame)
        or callable(getattr(records, "to_pandas", None))
        or not isinstance(records, Iterable)
    ):
        return None
    items = iter(records)
    first = next(items, None)
    fields = getattr(first, "_fields", None)
    if first is None or fields is None:
        return None if first is None else _not_records(first)
    return pd.DataFrame.from_records(list(chain([first], items)), columns=list(fields))


def nested_table(nested: Mapping[Any, Mapping[Any, Any]], value: str) -> pd.DataFrame:
    """pytrec_eval's and ranx's ``{query: {doc: value}}`` as ``query_id, doc_id, <value>``.

    Examples
    --------
    >>> nested_table({1: {"a": 2, "b": 0}}, "relevance")
      query_id doc_id  relevance
    0        1      a          2
    1        1      b          0
    """
    rows = [(str(q), str(d), v) for q, docs in nested.items() for d, v in docs.items()]
    return pd.DataFrame(rows, columns=["query_id", "doc_id", value])


def _not_records(first: object) -> pd.DataFrame | None:
    from ..errors import InputFormatError

    raise InputFormatError(
        f"an iterable of {type(first).__name__}: give named tuples with query_id, doc_id "
        "and relevance (qrels, as ir_datasets' qrels_iter()) or score (a run, as "
        "ir_measures' ScoredDoc), a DataFrame, a TREC file or a dict of dicts"
    )


def input_kind(value: object) -> Kind:
    """``"run"``, ``"qrels"`` or ``None`` (cannot tell) from what ``value`` holds.

    A table by its columns (``score``; ``relevance`` or ``grade``), a
    :class:`~sessionval.frame.JudgmentFrame` as qrels, a dict of dicts by its first
    value (a float: a run's score; an integer: a grade), a file by its first line
    (six fields: a TREC run; four: TREC qrels; a CSV header naming ``grade``: judgments).

    Examples
    --------
    >>> input_kind({"q1": {"d1": 12.5}}), input_kind({"q1": {"d1": 2}})
    ('run', 'qrels')
    >>> input_kind(pd.DataFrame(columns=["query_id", "doc_id", "relevance"]))
    'qrels'
    """
    if isinstance(value, JudgmentFrame):
        return "qrels"
    if isinstance(value, str | os.PathLike):
        return _file_kind(Path(value))
    if isinstance(value, Mapping):
        inner = next(iter(value.values()), None)
        first = next(iter(inner.values()), None) if isinstance(inner, Mapping) else None
        if isinstance(first, float):
            return "run"
        if isinstance(first, int) and not isinstance(first, bool):
            return "qrels"
        return None
    columns = getattr(value, "columns", None)
    if columns is None:
        columns = getattr(value, "column_names", None)  # an Arrow table
    if columns is None:
        return None
    names = {str(c) for c in columns}
    if names & _RUN_COLUMNS:
        return "run"
    return "qrels" if names & _QRELS_COLUMNS else None


def _file_kind(path: Path) -> Kind:
    if not path.is_file():
        return None
    try:  # the first lines only; the reader checks the file (and says what is wrong)
        with path.open("rb") as raw:
            gz = raw.read(2) == b"\x1f\x8b"
        with gzip.open(path, "rb") if gz else path.open("rb") as fh:
            head = fh.read(4096).decode("utf-8", errors="replace")
    except (OSError, EOFError):
        return None
    line = next((ln for ln in head.splitlines() if ln.strip()), "")
    if path.suffix.lower() in (".csv", ".tsv"):
        return "qrels" if "grade" in line else None
    fields = line.split()
    return {6: "run", 4: "qrels"}.get(len(fields))  # type: ignore[return-value]


def run_and_qrels(first: Any, second: Any) -> tuple[Any, Any]:
    """``(run, qrels)`` from two inputs given in either order.

    The order is swapped when the inputs say so (the first holds grades or the second
    scores, and neither says the opposite); otherwise it is ``(run, qrels)`` as given.
    Iterables of named tuples are read into tables first (:func:`records_table`).

    Examples
    --------
    >>> run = {"q1": {"d1": 1.5}}
    >>> qrels = {"q1": {"d1": 1}}
    >>> run_and_qrels(qrels, run) == (run, qrels) == run_and_qrels(run, qrels)
    True
    """
    first = _table_or_value(first)
    second = _table_or_value(second)
    a, b = input_kind(first), input_kind(second)
    swap = (a == "qrels" or b == "run") and a != "run" and b != "qrels"
    return (second, first) if swap else (first, second)


def _table_or_value(value: Any) -> Any:
    table = records_table(value)
    return value if table is None else table

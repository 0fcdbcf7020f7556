"""A scored run in, a checked run table out: the one boundary of run tables.

Every road a run comes in by ends here: :func:`sessionval.io.trec.read_run` (a TREC
run file: its scores, read as text, are checked by :func:`check_scores`), and a
DataFrame, Arrow table or ``{query: {doc: score}}`` dict given to ``evaluate_run`` or to
:meth:`RankedLists.from_run <sessionval.measures.lists.RankedLists.from_run>` (checked
by :func:`check_run_table`).  The rules, on whole columns:

* the columns ``query_id``, ``doc_id`` and ``score`` are present;
* every score is a number (a missing or non-numeric score cannot be ranked);
* every query and document id is present.

A document listed twice for one query is found where the lists are ranked
(:mod:`sessionval.measures.run_lists`), since that is where rows are sorted anyway.
The ids are kept as given (no dictionary is built here): the string-id join of
``evaluate_run`` reads them as they are.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

import numpy as np
import numpy.typing as npt
import pandas as pd

from ..errors import InputFormatError
from .collect import ProblemCollector

__all__ = ["RUN_COLUMNS", "check_run_table", "check_scores"]

#: the columns of a run table (ir_measures' names)
RUN_COLUMNS: Final = ("query_id", "doc_id", "score")


def check_scores(
    score: pd.Series, problems: ProblemCollector, line_at: Callable[[], npt.NDArray[Any]]
) -> npt.NDArray[np.float64]:
    """Scores as float64; a score that is not a number is a problem of its row.

    Examples
    --------
    >>> p = ProblemCollector("r.run", limit=5)
    >>> check_scores(pd.Series(["1.5", "high"], name="score"), p, lambda: np.array([1, 2]))
    array([1.5, nan])
    >>> str(p.problems[0])
    "r.run:2: score: must be a number (got 'high')"
    """
    vals = pd.to_numeric(score, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
    nan = np.isnan(vals)
    if nan.any():
        lines, raw = line_at(), score.to_numpy()
        for i in problems.first(nan):
            problems.add_at(int(lines[i]), "score", "must be a number", repr(str(raw[i])))
    return vals


def check_run_table(
    run: pd.DataFrame, *, source: str = "run table", max_problems: int = 50
) -> pd.DataFrame:
    """The run as ``query_id, doc_id, score`` (float64), every row checked.

    Parameters
    ----------
    run
        A table with at least the three columns; other columns are ignored.
    source
        Name used in messages; problems are located by row (0-based, as ``iloc``).
    max_problems
        Problems listed at most.

    Returns
    -------
    pandas.DataFrame
        The three columns, ids as given (text, categories or numbers).

    Raises
    ------
    InputFormatError
        A column is missing.
    ParseError
        A score that is not a number, or a missing id: every such row listed.

    Examples
    --------
    >>> check_run_table(pd.DataFrame({"query_id": ["1"], "doc_id": ["a"], "score": [2]}))
      query_id doc_id  score
    0        1      a    2.0
    """
    for col in RUN_COLUMNS:
        if col not in run.columns:
            raise InputFormatError(
                f"{source}: missing column {col!r} (found {', '.join(map(str, run.columns))}); "
                "ir_measures' names are query_id, doc_id, score (run) and query_id, doc_id, "
                "relevance (qrels)"
            )
    problems = ProblemCollector(source, limit=max_problems, unit="row", container="table")

    def rows() -> npt.NDArray[np.int64]:
        return np.arange(len(run), dtype=np.int64)

    score = run["score"]
    if score.dtype != np.float64 or np.isnan(score.to_numpy()).any():
        score = pd.Series(check_scores(score, problems, rows), index=run.index, name="score")
    for col in ("query_id", "doc_id"):
        missing = run[col].isna().to_numpy(dtype=bool)
        for i in problems.first(missing):
            problems.add_at(i, col, "is missing (every row needs one)")
    problems.raise_if_any("run")
    return pd.DataFrame(
        {"query_id": run["query_id"], "doc_id": run["doc_id"], "score": score}, copy=False
    )

"""The names and order of the evaluation's table columns: the one list of them.

:class:`~sessionval.evaluation.result.SessionEvaluation` builds ``per_session``,
``per_query`` and ``per_position`` through :func:`ordered_table`, so a table holds
exactly the columns listed here, in this order (then the study's ``rating_*``
columns and the requested measures).  What each column means is the data
dictionary, :mod:`sessionval.output.columns`, keyed by these names (a test fails on
a name it does not describe); the list for people is ``docs/sessions.md`` section 3.
The names live here, below ``output/``, because ``evaluation/`` may not import it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, Literal, TypeAlias

import pandas as pd

__all__ = [
    "POSITION_COLUMNS",
    "QUERY_COLUMNS",
    "QUERY_IDS",
    "QUERY_SCORES",
    "SESSION_COLUMNS",
    "SESSION_IDS",
    "SESSION_SCORES",
    "TABLE_COLUMNS",
    "Level",
    "ordered_table",
]

#: The table a column belongs to: some names mean different things per table
#: (``sdcg`` is the session's final sDCG, the query's sDCG_q or S[p] at a position).
Level: TypeAlias = Literal["session", "query", "position"]

#: Identifying columns of :meth:`SessionEvaluation.long` per level.
SESSION_IDS: Final = ("session_id", "user_id", "topic_id", "system_id")
QUERY_IDS: Final = (*SESSION_IDS, "query_pos", "query_id")
#: The built-in scores of each level in :meth:`SessionEvaluation.long` and ``summary()``.
SESSION_SCORES: Final = ("sdcg", "nsdcg")
QUERY_SCORES: Final = ("dcg", "ndcg")

#: ``per_session()``: the summary scores of spec section 4.
SESSION_COLUMNS: Final[tuple[str, ...]] = (
    *SESSION_IDS,
    "n_queries",
    "n_positions",
    "sdcg",
    "ideal",
    "nsdcg",
    "avg_pos_sdcg",
    "avg_pos_nsdcg",
    "sdcg_per_query",
    "last_sdcg",
    "last_dcg",
    "best_query_pos",
    "best_sdcg",
    "best_dcg",
    "first_rel_query",
    "first_rel_rank",
    "first_hrel_query",
    "first_hrel_rank",
    "n_relevant_found",
    "n_highly_relevant_found",
)
#: ``per_query()``.
QUERY_COLUMNS: Final[tuple[str, ...]] = (
    *SESSION_IDS,
    "query_pos",
    "query_id",
    "qrels_id",
    "n_results",
    "n_available",
    "n_scored",
    "padded",
    "n_repeats",
    "qd",
    "dcg",
    "sdcg",
    "ideal_dcg",
    "ndcg",
    "is_last",
    "is_best",
)
#: ``per_position()``.
POSITION_COLUMNS: Final[tuple[str, ...]] = (
    "session_id",
    "query_pos",
    "rank",
    "position",
    "doc_id",
    "doc_rank",
    "grade",
    "gain",
    "sdcg",
    "ideal",
    "nsdcg",
)
#: The built-in columns of each table, in order.
TABLE_COLUMNS: Final[Mapping[Level, tuple[str, ...]]] = {
    "session": SESSION_COLUMNS,
    "query": QUERY_COLUMNS,
    "position": POSITION_COLUMNS,
}


def ordered_table(level: Level, columns: Mapping[str, Any]) -> pd.DataFrame:
    """The table of ``level`` from its columns' values, in the order of :data:`TABLE_COLUMNS`.

    Parameters
    ----------
    level
        ``"session"``, ``"query"`` or ``"position"``.
    columns
        Each built-in column's values, by name.

    Raises
    ------
    KeyError
        A column is computed but not listed (it would have no description in the data
        dictionary), or listed but not computed: a bug of the table's builder, named.

    Examples
    --------
    >>> list(ordered_table("position", {c: [0] for c in reversed(POSITION_COLUMNS)}))[:3]
    ['session_id', 'query_pos', 'rank']
    """
    names = TABLE_COLUMNS[level]
    extra = set(columns) - set(names)
    missing = set(names) - set(columns)
    if extra or missing:
        raise KeyError(
            f"{level} table: columns {sorted(extra)} are not in evaluation/columns.py's "
            f"TABLE_COLUMNS (add them there and describe them in output/columns.py), "
            f"{sorted(missing)} are listed but not built"
        )
    return pd.DataFrame({name: columns[name] for name in names})

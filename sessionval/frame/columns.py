"""The frame's columns, declared once.

The tables of a :class:`~sessionval.frame.SessionFrame` and of a
:class:`~sessionval.frame.JudgmentFrame` (:class:`Column`), and the flat layout of one
row per result (:class:`FlatColumn`, :data:`FLAT_COLUMNS`).

``docs/frame.md`` and the flat section of ``docs/formats.md`` are generated from them
(:mod:`sessionval.frame.markdown`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

import pandas as pd

from ..errors import InputFormatError

__all__ = [
    "FLAT_COLUMNS",
    "FLAT_OPTIONAL",
    "FLAT_REQUIRED",
    "JUDGMENT_COLUMNS",
    "QUERY_COLUMNS",
    "RESULT_COLUMNS",
    "SESSION_COLUMNS",
    "Column",
    "FlatColumn",
    "check_columns",
]


@dataclass(frozen=True, slots=True)
class Column:
    """One column of a frame table: name, pandas dtype, whether required, meaning."""

    name: str
    dtype: str
    required: bool
    description: str


RESULT_COLUMNS: Final[tuple[Column, ...]] = (
    Column("query_idx", "int32", True, "row number of the query in `queries`"),
    Column("session_id", "category", True, "session identifier"),
    Column("query_pos", "int16", True, "position of the query in its session, 1..n"),
    Column("rank", "int32", True, "rank of the result in its list, 1..k without gaps"),
    Column("doc_id", "category", True, "document identifier"),
    Column("url", "string", False, "result URL"),
    Column("title", "string", False, "result title"),
    Column("snippet", "string", False, "result snippet"),
    Column("clicks", "int16", True, "number of clicks on the result (0 when not logged)"),
    Column("dwell", "float32", True, "total dwell time in seconds (NaN when unknown)"),
    Column("user_grade", "float32", True, "the searcher's own grade (NaN when not judged)"),
)

QUERY_COLUMNS: Final[tuple[Column, ...]] = (
    Column("session_id", "category", True, "session identifier"),
    Column("query_pos", "int16", True, "position of the query in its session, 1..n"),
    Column("query_id", "string", True, "query identifier (`<session>:<pos>` when not logged)"),
    Column("text", "string", True, "query text as typed"),
    Column("time", "datetime64[ns, UTC]", True, "time the query was issued (NaT when unknown)"),
    Column("n_results", "int32", True, "number of results logged for the query"),
    Column("scan_depth", "Int32", True, "last rank the searcher examined (<NA> when unknown)"),
    Column("qrels_id", "category", True, "judgment set that applies (topic, session or turn)"),
)

SESSION_COLUMNS: Final[tuple[Column, ...]] = (
    Column("session_id", "category", True, "session identifier"),
    Column("user_id", "category", True, "searcher identifier"),
    Column("topic_id", "category", True, "topic / scenario identifier"),
    Column("system_id", "category", True, "system / interface identifier"),
    Column("start_time", "datetime64[ns, UTC]", True, "session start (NaT when unknown)"),
    Column("end_time", "datetime64[ns, UTC]", True, "session end (NaT when unknown)"),
    Column("n_queries", "int16", True, "number of queries in the session"),
)

JUDGMENT_COLUMNS: Final[tuple[Column, ...]] = (
    Column("topic_id", "category", True, "topic (or session / turn) the judgment belongs to"),
    Column("doc_id", "category", True, "document identifier"),
    Column("grade", "int16", True, "relevance grade on the study's scale (may be negative)"),
    Column("assessor", "category", True, "who judged (empty string when unknown)"),
)


def check_columns(table: pd.DataFrame, columns: tuple[Column, ...], *, name: str) -> None:
    """Raise :class:`InputFormatError` if ``table`` lacks a required column or has a wrong dtype.

    Parameters
    ----------
    table
        The table to check.
    columns
        Its schema.
    name
        The table's name in the message (``"results"``).
    """
    problems: list[str] = []
    for col in columns:
        if col.name not in table.columns:
            if col.required:
                problems.append(f"missing column {col.name!r} ({col.dtype}: {col.description})")
            continue
        got = str(table[col.name].dtype)
        if got != col.dtype:
            problems.append(f"column {col.name!r} has dtype {got}, expected {col.dtype}")
    if problems:
        raise InputFormatError(f"{name} table: " + "; ".join(problems))


@dataclass(frozen=True, slots=True)
class FlatColumn:
    """One column of the flat layout (one row per result): the single declaration.

    ``level`` says how often the value changes: once per ``session``, once per
    ``query`` (read at the query's first row) or on every ``result`` row.  ``kind``
    is the logical type (``id``, ``text``, ``int``, ``float``, ``time``); ``required``
    is ``"yes"``, ``"yes*"`` (empty on the row of a query without results) or ``"no"``.
    """

    name: str
    kind: Literal["id", "text", "int", "float", "time"]
    level: Literal["session", "query", "result"]
    required: Literal["yes", "yes*", "no"]
    description: str


FLAT_COLUMNS: Final[tuple[FlatColumn, ...]] = (
    FlatColumn("session_id", "id", "session", "yes", "session identifier, on every row"),
    FlatColumn("user_id", "id", "session", "yes", "searcher, repeated on every row"),
    FlatColumn("topic_id", "id", "session", "yes", "topic / scenario, repeated on every row"),
    FlatColumn("system_id", "id", "session", "yes", "system / interface, repeated on every row"),
    FlatColumn("query_pos", "int", "query", "yes", "position of the query in its session, 1..n"),
    FlatColumn(
        "rank", "int", "result", "yes*", "1..k within the query; empty for a query without results"
    ),
    FlatColumn("doc_id", "id", "result", "yes*", "document; empty for a query without results"),
    FlatColumn("query_text", "text", "query", "no", "query text as typed"),
    FlatColumn("query_time", "time", "query", "no", "ISO-8601 time the query was issued"),
    FlatColumn("query_id", "id", "query", "no", "query identifier (default `<session>:<pos>`)"),
    FlatColumn("scan_depth", "int", "query", "no", "last rank the searcher examined"),
    FlatColumn("url", "text", "result", "no", "result URL"),
    FlatColumn("title", "text", "result", "no", "result title"),
    FlatColumn("snippet", "text", "result", "no", "result snippet"),
    FlatColumn("clicks", "int", "result", "no", "clicks on the result (default 0)"),
    FlatColumn("dwell", "float", "result", "no", "dwell time in seconds"),
    FlatColumn("user_grade", "int", "result", "no", "the searcher's own grade"),
    FlatColumn("session_start", "time", "session", "no", "ISO-8601 session start"),
    FlatColumn("session_end", "time", "session", "no", "ISO-8601 session end"),
    FlatColumn(
        "qrels_id",
        "id",
        "query",
        "no",
        "judgment key of the query when judgments are per session or per turn (default: topic)",
    ),
)
"""The flat layout (CSV/Parquet, one row per result), declared once.

Loaders, the validator, column mappings, writers, the synthetic generator and
``docs/formats.md`` all read it.  Post-task ratings add one ``rating_<name>``
float column each (session level).
"""

FLAT_REQUIRED: Final[tuple[str, ...]] = tuple(c.name for c in FLAT_COLUMNS if c.required != "no")
"""Columns every flat table must have."""

FLAT_OPTIONAL: Final[tuple[str, ...]] = tuple(c.name for c in FLAT_COLUMNS if c.required == "no")
"""Columns a flat table may have (besides ``rating_<name>``)."""

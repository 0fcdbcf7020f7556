"""The columnar frame: the one in-memory layout every measure runs on.

Every loader (JSON-lines, flat CSV/Parquet, TREC Session Track XML, lab tables,
TREC runs as sessions) ends in a :class:`SessionFrame`; every measure starts from
one.  It is a handful of pandas DataFrames linked by id columns, never a list of
Python objects, so a million sessions stay a few NumPy arrays.

Tables and columns (the single documented schema; ``docs/frame.md`` renders it):

``results`` (one row per result; sorted by session order, ``query_pos``, ``rank``)
    ``query_idx`` int32 row number into ``queries`` (the segment key of kernels);
    ``session_id`` category; ``query_pos`` int16; ``rank`` int32 (1..k, no gaps);
    ``doc_id`` category; optional ``url``/``title``/``snippet`` string;
    ``clicks`` int16 (0 when not logged); ``dwell`` float32 seconds (NaN unknown);
    ``user_grade`` float32 (the searcher's own judgment, NaN when none).
``queries`` (one row per query, including queries with no results; same order)
    ``session_id`` category; ``query_pos`` int16 (1..n, no gaps); ``query_id`` string;
    ``text`` string; ``time`` datetime64[ns, UTC] (NaT unknown); ``n_results`` int32;
    ``scan_depth`` Int32 (nullable: last rank the searcher examined);
    ``qrels_id`` category: key into the judgments' ``topic_id`` for this query
    (the session's topic unless judgments are per session or per turn).
``sessions`` (one row per session, in input order; ``session_id`` categories in that order)
    ``session_id``, ``user_id``, ``topic_id``, ``system_id`` category; ``start_time``,
    ``end_time`` datetime64[ns, UTC]; ``n_queries`` int16; ``rating_<name>`` float64 per
    post-task rating.
``users`` / ``topics`` / ``systems``
    one row per entity: ``user_id`` plus study attributes; ``topic_id``, ``title``,
    ``description``, ``judged`` bool; ``system_id``, ``name``, ``description``.

Judgments are a separate :class:`JudgmentFrame` (``topic_id`` category, ``doc_id``
category, ``grade`` int16, ``assessor`` category) plus the :class:`GradeScale`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal

import numpy as np
import pandas as pd

from .errors import InputFormatError, JudgmentError
from .models.judgments import GradeScale
from .models.study import Study
from .problems import LoadReport, Problem

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
    "JudgmentFrame",
    "LoadedStudy",
    "QrelsKey",
    "SessionFrame",
    "check_columns",
    "flat_layout_markdown",
    "frame_schema_markdown",
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


def frame_schema_markdown() -> str:
    """The schema of every frame table as Markdown (the text of ``docs/frame.md``).

    A test keeps the committed ``docs/frame.md`` equal to this, so the documented
    schema is the one the code checks.
    """
    parts = [
        "# The columnar frame",
        "",
        "Every loader ends in a `SessionFrame` (`sessionval/frame.py`): linked tables, one row per",
        "session, per query and per result, with ids as categoricals (integer codes). Judgments",
        "are a separate `JudgmentFrame`. Results are sorted by `query_idx`, then `rank`, so query",
        "`i` owns the rows `offsets[i]:offsets[i + 1]` of `SessionFrame.query_offsets()`: the",
        "segment layout every measure kernel uses. Generated from the code by",
        "`sessionval.frame.frame_schema_markdown()`; do not edit by hand.",
    ]
    for title, columns in (
        ("sessions", SESSION_COLUMNS),
        ("queries", QUERY_COLUMNS),
        ("results", RESULT_COLUMNS),
        ("judgments (JudgmentFrame.table)", JUDGMENT_COLUMNS),
    ):
        parts += [
            "",
            f"## {title}",
            "",
            "| column | dtype | required | meaning |",
            "|---|---|---|---|",
        ]
        parts += [
            f"| `{c.name}` | `{c.dtype}` | {'yes' if c.required else 'no'} | {c.description} |"
            for c in columns
        ]
    parts += [
        "",
        "`sessions` may carry one `rating_<name>` float64 column per post-task rating; `users`,",
        "`topics` and `systems` hold one row per entity with its attributes from `study.json`.",
        "",
    ]
    return "\n".join(parts)


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


@dataclass(frozen=True)
class JudgmentFrame:
    """Reference judgments in columnar form.

    Parameters
    ----------
    table
        One row per (topic, document): ``topic_id``, ``doc_id``, ``grade``, ``assessor``.
    scale
        The grade scale the grades belong to.
    source
        Where they were read from (for messages and summaries).
    """

    table: pd.DataFrame
    scale: GradeScale
    source: str = "<frame>"

    def __post_init__(self) -> None:
        check_columns(self.table, JUDGMENT_COLUMNS, name="judgments")

    @classmethod
    def from_records(
        cls,
        records: Iterable[tuple[str, str, int] | tuple[str, str, int, str]],
        *,
        scale: GradeScale | None = None,
        source: str = "<records>",
    ) -> JudgmentFrame:
        """Build judgments from ``(topic, doc, grade[, assessor])`` tuples.

        For judgments written in code (tests, notebooks, examples); files go through
        the vectorised readers of :mod:`sessionval.io.trec`.

        Parameters
        ----------
        records
            One tuple per judgment.
        scale
            The grade scale (default: one level per grade that occurs).
        source
            Name used in messages.

        Raises
        ------
        JudgmentError
            A grade is not on ``scale``.

        Examples
        --------
        >>> jf = JudgmentFrame.from_records([("T1", "d1", 3), ("T1", "d2", 0)])
        >>> jf.table["grade"].tolist(), list(jf.scale.grades)
        ([3, 0], [0, 3])
        """
        rows = [(str(r[0]), str(r[1]), int(r[2]), str(r[3]) if len(r) > 3 else "") for r in records]
        table = pd.DataFrame(rows, columns=["topic_id", "doc_id", "grade", "assessor"])
        grade = table["grade"].to_numpy(dtype=np.int16)
        if scale is None:
            scale = GradeScale.from_grades(sorted(set(grade.tolist())) or [0])
        off = ~np.isin(grade, np.asarray(scale.grades))
        if off.any():
            i = int(np.flatnonzero(off)[0])
            raise JudgmentError(
                f"{source}: record {i}: grade {int(grade[i])} is not on the scale {scale.name!r} "
                f"(allowed: {', '.join(map(str, scale.grades))})"
            )
        table = table.astype(
            {"topic_id": "category", "doc_id": "category", "grade": "int16", "assessor": "category"}
        )
        return cls(table, scale, source)

    @property
    def topics(self) -> pd.Index:
        """Topics (judgment keys) that have at least one judgment."""
        codes = np.unique(self.table["topic_id"].cat.codes.to_numpy())
        index: pd.Index = pd.Index(self.table["topic_id"].cat.categories[codes], name="topic_id")
        return index


@dataclass(frozen=True)
class SessionFrame:
    """A study in columnar form; see the module docstring for every column.

    Parameters
    ----------
    sessions, queries, results
        The three linked tables (one row per session, per query, per result).
    users, topics, systems
        One row per entity with its attributes.
    grade_scale
        The scale of the searchers' own grades (``user_grade``), if the log declares one.
    source
        Where the study was read from.
    """

    sessions: pd.DataFrame
    queries: pd.DataFrame
    results: pd.DataFrame
    users: pd.DataFrame = field(default_factory=lambda: pd.DataFrame({"user_id": []}))
    topics: pd.DataFrame = field(default_factory=lambda: pd.DataFrame({"topic_id": []}))
    systems: pd.DataFrame = field(default_factory=lambda: pd.DataFrame({"system_id": []}))
    grade_scale: GradeScale | None = None
    source: str = "<frame>"

    def __post_init__(self) -> None:
        check_columns(self.sessions, SESSION_COLUMNS, name="sessions")
        check_columns(self.queries, QUERY_COLUMNS, name="queries")
        check_columns(self.results, RESULT_COLUMNS, name="results")

    @property
    def n_sessions(self) -> int:
        """Number of sessions."""
        return len(self.sessions)

    @property
    def n_queries(self) -> int:
        """Number of queries (including queries without results)."""
        return len(self.queries)

    @property
    def n_results(self) -> int:
        """Number of result rows."""
        return len(self.results)

    def query_offsets(self) -> np.ndarray:
        """Start offsets of each query's results in ``results`` (length ``n_queries + 1``).

        Results are sorted by ``query_idx``, so query ``i`` owns rows
        ``offsets[i]:offsets[i + 1]``; this is the segment layout the kernels use.
        """
        counts = self.queries["n_results"].to_numpy(dtype=np.int64)
        offsets = np.zeros(len(counts) + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])
        return offsets


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


def flat_layout_markdown() -> str:
    """The flat layout as a Markdown table (the flat-table section of ``docs/formats.md``).

    Examples
    --------
    >>> flat_layout_markdown().splitlines()[2]
    '| `session_id` | id | session | yes | session identifier, on every row |'
    """
    rows = [
        "| column | type | level | required | meaning |",
        "|---|---|---|---|---|",
        *(
            f"| `{c.name}` | {c.kind} | {c.level} | {c.required} | {c.description} |"
            for c in FLAT_COLUMNS
        ),
        "| `rating_<name>` | float | session | no | a post-task rating, one column each |",
    ]
    return "\n".join(rows)


QrelsKey = Literal["topic", "session", "query_id"]
"""What the judgments' ``topic_id`` holds: the session's topic, the session id or the query id."""


@dataclass(frozen=True)
class LoadedStudy:
    """A validated study, whatever format it was read from: what every loader returns.

    Attributes
    ----------
    study
        The study header (name, grade scales, users, topics, systems; no sessions):
        read from ``study.json``, or built from the entities the input names.
    frame
        The sessions in columnar form.
    judgments
        Reference judgments, or ``None`` when none were given.
    report
        Records read / accepted / rejected and every problem of a rejected record.
    notes
        What lenient loading repaired or skipped without rejecting a session
        (escaped ``&`` in XML, skipped clicks, dropped rows, stray judgments), as
        :class:`~sessionval.problems.Problem` records; includes every entry of
        ``report.repairs``.
    qrels_key
        What the judgments are keyed by (the format's convention): ``"topic"``,
        ``"session"`` (per-session judgments, lab studies) or ``"query_id"``
        (per-turn judgments, TREC CAsT).  Each query's key is in
        ``frame.queries["qrels_id"]``.
    unjudged
        Judgment keys used by the queries that have no judgment at all, in order of
        first use (empty without judgments).  Their results count as unjudged.
    details
        Facts particular to the format, named in each loader's documentation
        (e.g. ``year`` and ``empty_serps`` for TREC Session XML).
    """

    study: Study
    frame: SessionFrame
    judgments: JudgmentFrame | None
    report: LoadReport
    notes: tuple[Problem, ...] = ()
    qrels_key: QrelsKey = "topic"
    unjudged: tuple[str, ...] = ()
    details: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # every repair of a kept record is a note too, whichever loader made the study
        have = set(self.notes)
        extra = tuple(p for p in self.report.repairs if p not in have)
        if extra:
            object.__setattr__(self, "notes", (*self.notes, *extra))

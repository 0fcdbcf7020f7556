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

from .errors import InputFormatError
from .kernels.segments import gather_ranges, offsets_from_counts
from .models.judgments import GradeScale
from .models.study import QrelsKey, Study
from .problems import LoadReport, Problem

__all__ = [
    "ENTITY_IDS",
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
    "id_order",
    "ratings_last",
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

    Notes
    -----
    Build judgments through the one boundary, :mod:`sessionval.validate.judgments`
    (``judgment_frame``, ``judgments_from_table``, ``judgments_from_records``; every
    reader calls it): the table then holds one grade per (topic, document), integer
    grades on ``scale``, and ids by the whitespace rule.  The constructor checks only
    the column names.
    """

    table: pd.DataFrame
    scale: GradeScale
    source: str = "<frame>"

    def __post_init__(self) -> None:
        check_columns(self.table, JUDGMENT_COLUMNS, name="judgments")

    @property
    def topics(self) -> pd.Index:
        """Topics (judgment keys) that have at least one judgment."""
        codes = np.unique(self.table["topic_id"].cat.codes.to_numpy())
        index: pd.Index = pd.Index(self.table["topic_id"].cat.categories[codes], name="topic_id")
        return index


def ratings_last(columns: Iterable[object]) -> list[str]:
    """Column names in a frame's order: the others as given, then ``rating_*`` sorted by name.

    The sessions table has the same columns in the same order whatever the input's
    format, column order or partitioning.

    >>> ratings_last(["session_id", "rating_z", "user_id", "rating_a"])
    ['session_id', 'user_id', 'rating_a', 'rating_z']
    """
    names = [str(c) for c in columns]
    ratings = [c for c in names if c.startswith("rating_")]
    return [c for c in names if c not in ratings] + sorted(ratings)


def id_order(ids: Iterable[str] | pd.Index | np.ndarray) -> np.ndarray:
    """Positions that sort ``ids`` into the canonical id order.

    Numeric order when every id is a run of decimal digits (``"2"`` before ``"10"``;
    equal numbers by their text, ``"07"`` before ``"7"``), else the order of Unicode
    code points (``"S10"`` before ``"S2"``).  The order depends on the set of ids
    alone, never on the order in which they were read: it is the order of sessions
    in every table of an evaluation, and of the categories of every id column of
    :meth:`SessionFrame.in_id_order`.

    Examples
    --------
    >>> id_order(["10", "9", "007", "7"]).tolist()
    [2, 3, 1, 0]
    >>> id_order(["s10", "s9", "S1"]).tolist()
    [2, 0, 1]
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    if isinstance(ids, pd.Index | pd.Series) and isinstance(ids.dtype, pd.StringDtype):
        text = pa.array(ids.array)  # Arrow-backed strings: no Python string per id
    else:
        text = pa.array(np.asarray(ids, dtype=object), type=pa.string())
    if len(text) and pc.all(pc.match_substring_regex(text, r"^[0-9]+$")).as_py():
        digits = pc.utf8_ltrim(text, characters="0")
        table = pa.table({"n": pc.utf8_length(digits), "d": digits, "t": text})
        keys = [("n", "ascending"), ("d", "ascending"), ("t", "ascending")]
    else:
        table, keys = pa.table({"t": text}), [("t", "ascending")]
    order: np.ndarray = pc.sort_indices(table, sort_keys=keys).to_numpy().astype(np.int64)
    return order


ENTITY_IDS: Final[tuple[tuple[str, str], ...]] = (
    ("sessions", "user_id"),
    ("sessions", "topic_id"),
    ("sessions", "system_id"),
    ("queries", "qrels_id"),
    ("results", "doc_id"),
)
"""Id columns (besides ``session_id``) whose categories :meth:`SessionFrame.in_id_order` sorts."""


def _category_order(col: pd.Series) -> np.ndarray | None:
    """Positions that put the categories of ``col`` in id order, None when they already are."""
    order = id_order(col.cat.categories.astype(str))
    return None if np.array_equal(order, np.arange(order.size)) else order


def _recoded(col: pd.Series, order: np.ndarray) -> pd.Series:
    """The categorical ``col`` with its categories taken in ``order`` (the same values)."""
    # new code of each old code, and -1 (missing) stays -1 through the appended slot; one
    # NumPy gather instead of pandas' recode (which looks every category up again)
    codes = col.cat.codes.to_numpy()
    new_code = np.empty(order.size + 1, dtype=codes.dtype)
    new_code[order] = np.arange(order.size, dtype=codes.dtype)
    new_code[-1] = -1
    dtype = pd.CategoricalDtype(col.cat.categories[order], ordered=col.cat.ordered)
    recoded = pd.Categorical.from_codes(new_code[codes], dtype=dtype, validate=False)
    return pd.Series(recoded, index=col.index, name=col.name, copy=False)


def _sorted_categories(col: pd.Series) -> pd.Series | None:
    """The categorical ``col`` with its categories in id order, None when they already are."""
    order = _category_order(col)
    return None if order is None else _recoded(col, order)


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
        return offsets_from_counts(self.queries["n_results"].to_numpy(dtype=np.int64))

    def in_id_order(self) -> SessionFrame:
        """The same study with sessions in id order: what every evaluation scores.

        Sessions (and with them their queries and results) are sorted by
        :func:`id_order` of ``session_id``; the categories of ``session_id`` and of the
        other id columns (:data:`ENTITY_IDS`) are put in id order, the ``rating_*``
        columns in name order and the ``users``/``topics``/``systems`` tables by id.
        So the same sessions read in any line order, file split or format give the
        same frame, and every table, sum and mean computed from it is bit for bit
        the same.  Returns ``self`` when the frame is already in that order (no copy).
        """
        sessions = self.sessions
        sid = sessions["session_id"]
        cats = sid.cat.categories
        cat_order = id_order(cats.astype(str))
        new_code = np.empty(cat_order.size, dtype=np.int64)
        new_code[cat_order] = np.arange(cat_order.size)
        s_codes = sid.cat.codes.to_numpy().astype(np.int64)
        s_new = new_code[s_codes] if s_codes.size else s_codes
        s_order = np.argsort(s_new, kind="stable")
        sorted_cols = ratings_last(sessions.columns)
        q_codes = self.queries["session_id"].cat.codes.to_numpy().astype(np.int64)
        q_new = new_code[q_codes] if q_codes.size else q_codes
        moved_s = not np.array_equal(s_order, np.arange(s_order.size))
        moved_q = bool(np.any(np.diff(q_new) < 0))
        recoded = not np.array_equal(cat_order, np.arange(cat_order.size))
        # each id column's category order is found once (sorting a million document ids
        # is the costly part) and applied to the rows where they end up
        orders = {
            (table, col): _category_order(getattr(self, table)[col]) for table, col in ENTITY_IDS
        }
        changed = [k for k, v in orders.items() if v is not None]
        extra = {}
        for name, key in (("users", "user_id"), ("topics", "topic_id"), ("systems", "system_id")):
            tab: pd.DataFrame = getattr(self, name)
            if key in tab.columns and len(tab) > 1:
                o = id_order(tab[key].astype(str))
                if not np.array_equal(o, np.arange(o.size)):
                    extra[name] = tab.iloc[o].reset_index(drop=True)
        if not (moved_s or moved_q or recoded or changed or extra) and sorted_cols == list(
            sessions.columns
        ):
            return self
        if moved_s:
            sessions = sessions.iloc[s_order].reset_index(drop=True)
        sessions = sessions.copy(deep=False)  # columns are replaced below, never written into
        queries, results = self.queries.copy(deep=False), self.results
        if moved_q:
            # a stable sort keeps each session's queries in order; results move by query
            q_take = np.argsort(q_new, kind="stable")
            r_off = self.query_offsets()
            r_take = gather_ranges(r_off[:-1][q_take], np.diff(r_off)[q_take])
            queries = self.queries.iloc[q_take].reset_index(drop=True)
            results = results.iloc[r_take].reset_index(drop=True)
            n_res = queries["n_results"].to_numpy(dtype=np.int64)
            results["query_idx"] = np.repeat(np.arange(len(queries), dtype=np.int32), n_res)
        elif recoded or ("results", "doc_id") in changed:
            results = results.copy(deep=False)
        if recoded:
            for part in (sessions, queries, results):
                part["session_id"] = _recoded(part["session_id"], cat_order)
        tables = {"sessions": sessions, "queries": queries, "results": results}
        for name, col in changed:
            order = orders[name, col]
            if order is not None:
                tables[name][col] = _recoded(tables[name][col], order)
        return SessionFrame(
            sessions=sessions[sorted_cols],
            queries=queries,
            results=results,
            users=extra.get("users", self.users),
            topics=extra.get("topics", self.topics),
            systems=extra.get("systems", self.systems),
            grade_scale=self.grade_scale,
            source=self.source,
        )


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


@dataclass(frozen=True)
class LoadedStudy:
    """A validated study, whatever format it was read from: what every loader returns.

    Attributes
    ----------
    study
        The study header (name, grade scales, users, topics, systems, the qrels key;
        no sessions): read from the header a toolkit format carries (``study.json``,
        a Parquet file's metadata, a CSV table's sidecar), or built from the entities
        the input names.  Its ``qrels_key`` is always the one below.
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
        # the header carries the qrels key into every format it is written to
        if self.study.qrels_key != self.qrels_key:
            object.__setattr__(
                self, "study", self.study.model_copy(update={"qrels_key": self.qrels_key})
            )
        # every repair of a kept record is a note too, whichever loader made the study
        have = set(self.notes)
        extra = tuple(p for p in self.report.repairs if p not in have)
        if extra:
            object.__setattr__(self, "notes", (*self.notes, *extra))

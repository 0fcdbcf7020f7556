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

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..kernels.segments import offsets_from_counts
from ..models.judgments import GradeScale
from ..models.study import QrelsKey, Study
from ..problems import LoadReport, Problem
from .columns import JUDGMENT_COLUMNS, QUERY_COLUMNS, RESULT_COLUMNS, SESSION_COLUMNS, check_columns
from .order import in_id_order

__all__ = [
    "JudgmentFrame",
    "LoadedStudy",
    "QrelsKey",
    "SessionFrame",
]


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

        See :func:`sessionval.frame.order.in_id_order`; returns ``self`` when the frame is
        already in that order (no copy).
        """
        return in_id_order(self)


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

"""Flat tables (one row per result) to a validated SessionFrame, and back.

This is the bulk path every loader funnels into: JSON-lines logs, CSV and
Parquet tables and the real-world formats all become a *flat* DataFrame (the
layout of :data:`sessionval.frame.FLAT_COLUMNS`, rendered in ``docs/formats.md``)
and pass through :func:`frame_from_flat`, which enforces the study's rules
(:mod:`sessionval.rules`, the same functions the models call) with vectorised
checks and reports every problem with its row.  A query without results is one
row whose ``rank`` and ``doc_id`` are null.

The work is done in named phases (:mod:`sessionval.validate.phases` and
:mod:`sessionval.validate.assemble`, one function per entry of
:data:`LOAD_PHASES`) over column converters
(:mod:`sessionval.validate.fields`) that report to a problem collector
(:mod:`sessionval.validate.collect`).  :func:`frame_to_flat` is the inverse.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final, Literal

import numpy as np
import numpy.typing as npt
import pandas as pd

from ..frame import FLAT_COLUMNS, LoadedStudy, SessionFrame
from ..models.judgments import GradeScale
from ..models.study import Study
from ..problems import LoadReport, Mode
from ..progress import ProgressLike, as_progress
from .assemble import build_frame
from .memory import release_free_memory
from .phases import check_flat
from .repair import remove_repeated_documents
from .settle import settle
from .sources import Columns

__all__ = [
    "LOAD_PHASES",
    "frame_from_flat",
    "frame_to_flat",
    "loaded_without_judgments",
]


#: the phases :func:`frame_from_flat` reports to its ``progress`` callback, in order
LOAD_PHASES: Final[tuple[str, ...]] = (
    "reading sessions",
    "reading documents and ranks",
    "checking sessions",
    "checking ranks and documents",
    "reading clicks and grades",
    "reading queries and sessions",
    "building tables",
)


#: flat column -> frame column, where the names differ
_FRAME_NAME: Final = {
    "query_text": "text",
    "query_time": "time",
    "session_start": "start_time",
    "session_end": "end_time",
}


def frame_from_flat(
    flat: pd.DataFrame | Columns,
    *,
    source: str | None = None,
    mode: Mode = "strict",
    max_problems: int = 50,
    user_grade_scale: GradeScale | None = None,
    location_kind: Literal["row", "line"] = "row",
    row_locations: npt.NDArray[np.integer[Any]] | None = None,
    progress: ProgressLike = None,
    max_rank: int | None = None,
    raise_problems: bool = True,
) -> LoadedStudy:
    """Validate a flat table and build the columnar :class:`SessionFrame`.

    The rules (:mod:`sessionval.rules`) are checked for all rows at once:
    query positions ``1..n`` per session, ranks ``1..k`` per query, a document at
    most once per list, searcher grades on the scale, non-negative clicks and
    dwell, and one user/topic/system per session.  Query- and session-level
    columns (query text and time, scan depth, session times, ratings) are read at
    the first row of each query or session.

    Parameters
    ----------
    flat
        One row per result (layout in the module docstring), as a DataFrame (not
        modified) or a column source such as
        :class:`~sessionval.validate.sources.ParquetColumns`, which reads a large file
        one column at a time.
    source
        File name used in messages (default: the column source's).
    mode
        ``"strict"``: collect up to ``max_problems`` problems then raise
        :class:`~sessionval.errors.ValidationFailed` with all of them.
        ``"lenient"``: drop every session with a problem and report it; a
        document listed twice in one result list is repaired instead (the later
        copy removed, the list moved up, each repair in ``report.repairs``; see
        :mod:`sessionval.validate.repair`).
    max_problems
        Limit of problems listed in strict mode.
    user_grade_scale
        Scale that ``user_grade`` values must be on (not checked when ``None``).
    location_kind, row_locations
        How rows are named in messages (``"row 3"``, ``"line 3"``); ``row_locations``
        gives the file line/row of each table row when it is not simply its index.
    progress
        A :class:`~sessionval.progress.Progress` told each phase of :data:`LOAD_PHASES`
        as it starts and its rows as it ends (a progress bar on long inputs), or a
        callback called with each phase's name.
    max_rank
        The result lists were cut at this rank when read (``load_sessions(max_rank=)``):
        a logged scan depth beyond a cut list is clipped to it instead of reported.
    raise_problems
        ``False``: in strict mode, return the sessions without problems and the
        report listing every problem instead of raising, so that a caller with
        checks of its own (study-level references, another table) can raise all
        problems at once.  Nothing is repaired either way.

    Returns
    -------
    LoadedStudy
        The frame, the load report (its repairs also in ``notes``), a header that
        names the study after ``source``'s stem and lists no entities (the frame
        holds the users, topics and systems; as ``load_study`` reads a folder without
        ``study.json``), and no judgments.

    Examples
    --------
    >>> flat = pd.DataFrame({"session_id": ["s1"] * 3, "user_id": "u1", "topic_id": "T1",
    ...     "system_id": "S1", "query_pos": [1, 1, 2], "rank": [1, 2, None],
    ...     "doc_id": ["d1", "d2", None]})
    >>> loaded = frame_from_flat(flat)
    >>> loaded.frame.queries["n_results"].tolist(), loaded.report.summary_line()
    ([2, 0], '1 records read = 1 sessions accepted + 0 rejected')
    """
    frame, report = _load(
        flat,
        source=source,
        mode=mode,
        max_problems=max_problems,
        user_grade_scale=user_grade_scale,
        location_kind=location_kind,
        row_locations=row_locations,
        progress=progress,
        max_rank=max_rank,
        repair=mode == "lenient",
        raise_problems=raise_problems,
    )
    return loaded_without_judgments(frame, report, "" if source is None else Path(source).stem)


def loaded_without_judgments(frame: SessionFrame, report: LoadReport, name: str) -> LoadedStudy:
    """The :class:`LoadedStudy` of sessions read without a header or judgments.

    Its header names the study and the searchers' grade scale only: building the
    entity lists from the frame would cost a model per user (seconds for 50,000
    users), and the frame holds them already.
    """
    header = Study(name=name, user_grade_scale=frame.grade_scale)
    return LoadedStudy(study=header, frame=frame, judgments=None, report=report)


def _load(
    flat: pd.DataFrame | Columns,
    *,
    source: str | None,
    mode: Mode,
    max_problems: int,
    user_grade_scale: GradeScale | None,
    location_kind: Literal["row", "line"],
    row_locations: npt.NDArray[np.integer[Any]] | None,
    progress: ProgressLike,
    max_rank: int | None,
    repair: bool,
    raise_problems: bool,
) -> tuple[SessionFrame, LoadReport]:
    """:func:`frame_from_flat`; ``repair``: remove repeated documents and load again."""
    shown = as_progress(progress)
    rows = len(flat)
    started = False

    def tick(phase: str) -> None:
        nonlocal started
        # each phase is one vectorised pass over every row: counted whole when it ends
        if started:
            shown.advance(rows)
        started = True
        # each phase frees arrays of the one before: give that memory back before it starts
        release_free_memory()
        shown.start(phase, rows, "rows")

    checked = check_flat(
        flat,
        source=source,
        location_kind=location_kind,
        row_locations=row_locations,
        user_grade_scale=user_grade_scale,
        max_rank=max_rank,
        tick=tick,
        phases=LOAD_PHASES,
    )
    if repair and checked.lists.repeated_docs:
        first = 2 if location_kind == "line" else 1
        locations = (
            np.arange(checked.rows.n_rows, dtype=np.int64) + first
            if row_locations is None
            else np.asarray(row_locations, dtype=np.int64)
        )
        fixed = remove_repeated_documents(checked, locations)
        if fixed is not None:
            table, kept_locations, repairs = fixed
            source = checked.rows.source
            del checked
            frame, report = _load(
                table,
                source=source,
                mode=mode,
                max_problems=max_problems,
                user_grade_scale=user_grade_scale,
                location_kind=location_kind,
                row_locations=kept_locations,
                progress=progress,
                max_rank=max_rank,
                repair=False,
                raise_problems=raise_problems,
            )
            report.rows_read += len(repairs)
            report.repairs[:0] = repairs
            return frame, report
    report, keep = settle(
        checked.rows,
        checked.order,
        mode=mode,
        max_problems=max_problems,
        raise_problems=raise_problems,
    )
    tick(LOAD_PHASES[6])
    # the build frees each per-row array as soon as its column is made: it gets the only
    # reference to the checks
    handed = [checked]
    del checked
    frame = build_frame(handed, keep, grade_scale=user_grade_scale)
    shown.advance(rows)
    shown.finish()
    release_free_memory()  # what the caller does next starts from the memory the frame needs
    return frame, report


def frame_to_flat(frame: SessionFrame) -> pd.DataFrame:
    """The inverse of :func:`frame_from_flat`: one row per result, empty queries as null rows.

    Columns come in the order of :data:`~sessionval.frame.FLAT_COLUMNS` (optional
    result columns only when the frame has them), then one ``rating_<name>`` column
    per post-task rating.

    Examples
    --------
    >>> flat = pd.DataFrame({"session_id": ["s1", "s1"], "user_id": "u", "topic_id": "T",
    ...     "system_id": "S", "query_pos": [1, 2], "rank": [1, None], "doc_id": ["d1", None]})
    >>> frame_to_flat(frame_from_flat(flat).frame)[["query_pos", "rank", "doc_id"]].to_dict("list")
    {'query_pos': [1, 2], 'rank': [1, None], 'doc_id': ['d1', None]}
    """
    q, r, s = frame.queries, frame.results, frame.sessions
    s_idx = q["session_id"].cat.codes.to_numpy()
    empty = np.flatnonzero(q["n_results"].to_numpy() == 0)
    # each result row, plus one placeholder row per empty query, in query order
    q_idx = np.concatenate([r["query_idx"].to_numpy(np.int64), empty])
    row_of = np.concatenate([np.arange(len(r)), np.full(len(empty), -1)])
    rank = np.concatenate([r["rank"].to_numpy(np.int64), np.zeros(len(empty), dtype=np.int64)])
    order = np.lexsort((rank, q_idx))
    q_idx, row_of = q_idx[order], row_of[order]
    has = row_of >= 0
    if not len(r):  # no result rows at all: every row is an empty-query placeholder
        r = r.reindex([0])  # one all-missing row (masked below); int columns become float
    safe = np.where(has, row_of, 0)
    sess_of = s_idx[q_idx]
    columns: dict[str, object] = {
        "rank": pd.arrays.IntegerArray(
            np.where(has, r["rank"].to_numpy()[safe], 0).astype(np.int32), ~has
        ),
        "doc_id": r["doc_id"].iloc[safe].reset_index(drop=True).astype(object).where(has, None),
    }
    for col in FLAT_COLUMNS:
        name = _FRAME_NAME.get(col.name, col.name)
        if col.name in columns:
            continue
        if col.level == "session":
            columns[col.name] = s[name].iloc[sess_of].reset_index(drop=True)
        elif col.level == "query":
            columns[col.name] = q[name].iloc[q_idx].reset_index(drop=True)
        elif name in r.columns:  # optional result columns (url, title, snippet) may be absent
            columns[col.name] = r[name].iloc[safe].reset_index(drop=True).where(has)
    out = pd.DataFrame({c.name: columns[c.name] for c in FLAT_COLUMNS if c.name in columns})
    for c in s.columns:
        if str(c).startswith("rating_"):
            out[c] = s[c].iloc[sess_of].to_numpy()
    return out

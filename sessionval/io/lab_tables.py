"""Per-session judgment tables as published by lab user studies.

The layout is that of Jiang & Allan (CHIIR 2016 / ECIR 2016): three tab-separated
files with one header line each (column names configurable with
:class:`LabColumns`):

``session``  one row per session: ``SessionID  User  Topic  <rating>...``
    every further numeric column is a post-task rating of the session
    (``Performance``, ``Difficulty``) and becomes ``rating_<name>`` (lower case).
``results``  one row per (session, query, rank): ``SessionID  Qno  rank  URL  title  snippet``;
    a query whose result page was empty is a row ``SessionID  Qno  no results``.
``qrels``    judgments **per session**: ``SessionID  URL  Relevance`` (grades may be
    negative; Jiang & Allan use −1..2).

Because judgments belong to a session, ``queries["qrels_id"]`` is the session id and
the judgments' ``topic_id`` is the session id too, so the ideal list of a session is
built from that session's judged pool.
"""

from __future__ import annotations

import csv
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import numpy as np
import numpy.typing as npt
import pandas as pd

from ..errors import (
    InputFormatError,
    JudgmentError,
    ParseError,
    ValidationFailed,
    raise_if_any,
)
from ..frame import JudgmentFrame, LoadedStudy
from ..models.judgments import GradeScale
from ..problems import LoadReport, Mode, Problem
from ..validate.flat import frame_from_flat
from ..validate.references import unjudged_keys
from .header import study_header
from .mapping import with_qrels_key

__all__ = [
    "JIANG_ALLAN_SCALE",
    "LabColumns",
    "find_lab_table",
    "is_lab_tables_input",
    "load_lab_tables",
    "read_lab_tables",
]

#: the grades of the Jiang & Allan qrels (the meaning of −1 is not documented there)
JIANG_ALLAN_SCALE: Final = GradeScale(
    name="Jiang & Allan -1..2",
    levels={-1: "negative (undocumented)", 0: "not relevant", 1: "relevant", 2: "highly relevant"},
)


@dataclass(frozen=True)
class LabColumns:
    """Column names of the three tables (defaults: Jiang & Allan's release).

    ``results_session`` / ``qrels_session`` name the session column of those tables
    when it differs from the session table's.
    ``system`` and ``text`` may name absent columns: the system id then is
    :attr:`default_system` and query texts are empty.  ``ratings=None`` takes every
    other numeric column of the session table as a rating.
    """

    session: str = "SessionID"
    user: str = "User"
    topic: str = "Topic"
    system: str = "System"
    query_pos: str = "Qno"
    rank: str = "rank"
    doc: str = "URL"
    url: str = "URL"
    title: str = "title"
    snippet: str = "snippet"
    text: str = "Query"
    grade: str = "Relevance"
    qrels_doc: str = "URL"
    ratings: tuple[str, ...] | None = None
    no_results: str = "no results"
    default_system: str = "lab"
    results_session: str | None = None
    qrels_session: str | None = None

    @property
    def res_session(self) -> str:
        """Session column of the results table (default: :attr:`session`)."""
        return self.results_session or self.session

    @property
    def q_session(self) -> str:
        """Session column of the qrels table (default: :attr:`session`)."""
        return self.qrels_session or self.session


def _read_tsv(path: Path, what: str) -> pd.DataFrame:
    if not path.exists():
        raise ParseError(f"{path}: no such file ({what} table)")
    try:
        df = pd.read_csv(
            path,
            sep="\t",
            dtype=str,
            keep_default_na=False,
            quoting=csv.QUOTE_NONE,
            encoding="utf-8",
        )
    except UnicodeDecodeError as exc:
        raise ParseError(f"{path}: not valid UTF-8 ({exc}); save the file as UTF-8") from exc
    except pd.errors.ParserError as exc:
        raise ParseError(f"{path}: malformed tab-separated {what} table ({exc})") from exc
    except pd.errors.EmptyDataError as exc:
        raise ParseError(f"{path}: file is empty (expected a header line)") from exc
    return df.replace("", None) if len(df) else df


def _need(df: pd.DataFrame, cols: list[str], path: Path, what: str) -> None:
    missing = [c for c in cols if c not in df.columns]
    if missing:
        raise InputFormatError(
            f"{path}: {what} table lacks column(s) {', '.join(missing)} "
            f"(found: {', '.join(map(str, df.columns))}); set them with LabColumns(...)"
        )


def load_lab_tables(
    session: str | os.PathLike[str],
    results: str | os.PathLike[str],
    qrels: str | os.PathLike[str] | None = None,
    *,
    columns: LabColumns | None = None,
    grade_scale: GradeScale | None = None,
    mode: Mode = "strict",
    max_problems: int = 50,
    progress: Callable[[str], None] | None = None,
) -> LoadedStudy:
    """Load per-session lab tables (session, results, per-session qrels).

    Parameters
    ----------
    session, results, qrels
        The three tab-separated files (qrels optional).
    columns
        Column names (default: Jiang & Allan's).
    grade_scale
        Scale of the qrels grades (default: :data:`JIANG_ALLAN_SCALE` when the grades fit
        it, else the grades observed).
    mode
        ``"strict"`` raises on any problem; ``"lenient"`` rejects the sessions concerned.
    max_problems
        Limit of problems listed in strict mode.
    progress
        Called with each loading phase's name (:data:`sessionval.validate.flat.LOAD_PHASES`).

    Returns
    -------
    LoadedStudy
        Judgments keyed by session (``qrels_key="session"``): ``queries["qrels_id"]``
        and the judgments' ``topic_id`` hold session ids.  ``notes`` lists what was
        skipped without rejecting a session (sessions without any result row,
        judgments of unknown sessions).  ``details``: ``ratings`` (the
        ``rating_<name>`` columns carried into ``frame.sessions``) and
        ``empty_serps`` (result pages marked empty).
    """
    c = columns or LabColumns()
    sp, rp = Path(session), Path(results)
    sess, res = _read_tables(sp, rp, c)
    rating_cols = _rating_columns(sess, c)
    _need(sess, rating_cols, sp, "session")
    lab = _flat_from_lab(sess, res, c, rating_cols, rp, mode=mode, max_problems=max_problems)
    frame, inner = frame_from_flat(
        lab.flat,
        source=str(rp),
        mode=mode,
        max_problems=max_problems,
        location_kind="line",
        row_locations=lab.row_lines,
        progress=progress,
    )
    rejected = {p.record for p in lab.problems}
    report = LoadReport(
        source=str(rp),
        records_read=len(rejected),
        sessions_rejected=len(rejected),
        problems=list(lab.problems),
    )
    report.merge(inner)
    frame = with_qrels_key(frame, by="session")
    known = pd.Index(sess[c.session].astype(str))
    notes = [
        Problem(
            str(sp), "", c.session, "session has no result rows; skipped", repr(sid), record=sid
        )
        for sid in sorted(set(known) - set(lab.flat["session_id"]))
    ]
    judgments = None
    if qrels is not None:
        judgments = _read_session_qrels(Path(qrels), c, grade_scale)
        stray = sorted(set(judgments.table["topic_id"].astype(str)) - set(known))
        notes += [
            Problem(
                str(qrels),
                "",
                c.session,
                "judgments for a session not in the session table",
                repr(sid),
                record=sid,
            )
            for sid in stray
        ]
    return LoadedStudy(
        study=study_header(frame, judgments=judgments, name=sp.parent.name),
        frame=frame,
        judgments=judgments,
        report=report,
        notes=tuple(notes),
        qrels_key="session",
        unjudged=unjudged_keys(frame, judgments),
        details={"ratings": lab.ratings, "empty_serps": lab.n_empty},
    )


def _read_tables(sp: Path, rp: Path, c: LabColumns) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The session and results tables, with their key columns; a session listed twice fails."""
    sess = _read_tsv(sp, "session")
    res = _read_tsv(rp, "results")
    _need(sess, [c.session, c.user, c.topic], sp, "session")
    _need(res, [c.res_session, c.query_pos, c.rank], rp, "results")
    if c.doc not in res.columns:
        raise InputFormatError(f"{rp}: results table lacks the document column {c.doc!r}")
    dup = sess[c.session].duplicated(keep=False)
    if dup.any():
        lines = (np.flatnonzero(dup.to_numpy()) + 2).tolist()
        raise ParseError(
            f"{sp}: session id(s) {sorted(set(sess[c.session][dup]))} listed more "
            f"than once (lines {lines})"
        )
    return sess, res


def _rating_columns(sess: pd.DataFrame, c: LabColumns) -> list[str]:
    """The rating columns: as configured, else every other column with a number in it."""
    if c.ratings is not None:
        return list(c.ratings)
    fixed = {c.session, c.user, c.topic, c.system}
    return [
        col
        for col in sess.columns
        if col not in fixed and pd.to_numeric(sess[col], errors="coerce").notna().any()
    ]


@dataclass(frozen=True)
class _LabFlat:
    """The results table as a flat table, with what was found on the way."""

    flat: pd.DataFrame
    row_lines: npt.NDArray[np.int64]  # file line of each flat row
    problems: list[Problem]  # result rows of unknown sessions
    ratings: tuple[str, ...]
    n_empty: int


def _flat_from_lab(
    sess: pd.DataFrame,
    res: pd.DataFrame,
    c: LabColumns,
    rating_cols: list[str],
    rp: Path,
    *,
    mode: Mode,
    max_problems: int,
) -> _LabFlat:
    """One flat row per results row, with its session's user, topic, system and ratings."""
    # empty result pages: the marker sits in the rank column
    is_marker = res[c.rank].astype("string").str.strip().str.lower() == c.no_results.lower()
    marker = is_marker.fillna(False).to_numpy(dtype=bool)
    pos = pd.Index(sess[c.session].astype(str)).get_indexer(
        pd.Index(res[c.res_session].astype(str))
    )
    problems = _unknown_sessions(res, c, pos < 0, rp, mode=mode, max_problems=max_problems)
    keep = pos >= 0
    safe = np.where(keep, pos, 0)
    flat = pd.DataFrame(
        {
            "session_id": res[c.res_session].astype(str),
            "user_id": sess[c.user].astype(str).to_numpy()[safe],
            "topic_id": sess[c.topic].astype(str).to_numpy()[safe],
            "system_id": (
                sess[c.system].astype(str).to_numpy()[safe]
                if c.system in sess.columns
                else c.default_system
            ),
            "query_pos": res[c.query_pos],
            "rank": res[c.rank].where(~marker, None),
            "doc_id": res[c.doc].where(~marker, None),
        }
    )
    if c.text in res.columns:
        flat["query_text"] = res[c.text].fillna("").astype(str).str.strip()
    for name, col in (("url", c.url), ("title", c.title), ("snippet", c.snippet)):
        if col in res.columns:
            flat[name] = res[col].where(~marker, None).astype("string").str.strip()
    ratings: list[str] = []
    for col in rating_cols:
        name = "rating_" + str(col).strip().lower().replace(" ", "_")
        flat[name] = pd.to_numeric(sess[col], errors="coerce").to_numpy(dtype=np.float64)[safe]
        ratings.append(name)
    flat = flat[keep].reset_index(drop=True)
    if len(flat) == 0:
        none = Problem(str(rp), "", "", "no result row belongs to a known session")
        raise ValidationFailed(problems[:max_problems] or [none])
    row_lines = (np.arange(len(res), dtype=np.int64) + 2)[keep]
    return _LabFlat(flat, row_lines, problems, tuple(ratings), int(marker.sum()))


def _unknown_sessions(
    res: pd.DataFrame,
    c: LabColumns,
    unknown: npt.NDArray[np.bool_],
    rp: Path,
    *,
    mode: Mode,
    max_problems: int,
) -> list[Problem]:
    """A problem per result row of a session the session table does not list.

    Strict mode raises the first ``max_problems``; lenient mode lists every one
    (each row is dropped, so records in = records out).
    """
    rows = np.flatnonzero(unknown)
    shown = rows[: max_problems + 1] if mode == "strict" else rows
    problems = [
        Problem(
            str(rp),
            f"line {i + 2}",
            c.res_session,
            "session id not in the session table",
            repr(sid),
            record=sid,
        )
        for i, sid in zip(
            shown.tolist(), res[c.res_session].iloc[shown].astype(str).tolist(), strict=True
        )
    ]
    if mode == "strict":
        raise_if_any(problems, limit=max_problems)
    return problems


def _read_session_qrels(path: Path, c: LabColumns, scale: GradeScale | None) -> JudgmentFrame:
    q = _read_tsv(path, "qrels")
    _need(q, [c.q_session, c.qrels_doc, c.grade], path, "qrels")
    grade = pd.to_numeric(q[c.grade], errors="coerce")
    bad = (grade.isna() | (grade != np.floor(grade))).to_numpy()
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ParseError(
            f"{path}:{i + 2}: {c.grade} must be an integer grade, got {q[c.grade].iloc[i]!r}"
        )
    g = grade.to_numpy(dtype=np.int64)
    key = q[c.q_session].astype(str) + "\x00" + q[c.qrels_doc].astype(str)
    dup = key.duplicated(keep=False).to_numpy()
    if dup.any():
        conflict = pd.Series(g[dup]).groupby(key[dup].to_numpy()).nunique()
        if (conflict > 1).any():
            k = str(conflict[conflict > 1].index[0])
            rows = (np.flatnonzero((key == k).to_numpy()) + 2).tolist()
            sid, d = k.split("\x00", 1)
            raise JudgmentError(
                f"{path}: {d!r} judged with different grades for session {sid} (lines {rows})"
            )
    first = ~key.duplicated().to_numpy()
    observed = sorted(set(g.tolist()))
    if scale is None:
        scale = (
            JIANG_ALLAN_SCALE
            if set(observed) <= set(JIANG_ALLAN_SCALE.grades)
            else GradeScale.from_grades(observed, name=f"observed in {path.name}")
        )
    else:
        off = sorted(set(observed) - set(scale.grades))
        if off:
            raise JudgmentError(
                f"{path}: grade(s) {off} not on the scale {scale.name} "
                f"(allowed: {', '.join(map(str, scale.grades))})"
            )
    table = pd.DataFrame(
        {
            "topic_id": q[c.q_session].astype(str)[first].astype("category"),
            "doc_id": q[c.qrels_doc].astype(str)[first].astype("category"),
            "grade": g[first].astype(np.int16),
            "assessor": pd.Categorical([""] * int(first.sum())),
        }
    ).reset_index(drop=True)
    return JudgmentFrame(table=table, scale=scale, source=str(path))


# ---------------------------------------------------------------------------------------------
# a study folder of lab tables


#: the names a lab table may have in a folder (``session``, ``session.tsv``, ...)
_TABLE_SUFFIXES: Final = ("", ".tsv", ".txt", ".csv")


def find_lab_table(folder: Path, stem: str) -> Path | None:
    """The table ``stem`` (``session``, ``results``, ``qrels``) in ``folder``, or ``None``."""
    for suffix in _TABLE_SUFFIXES:
        candidate = folder / f"{stem}{suffix}"
        if candidate.is_file():
            return candidate
    return None


def is_lab_tables_input(path: Path) -> bool:
    """A folder with ``session`` and ``results`` tables (or the session table beside them)."""
    folder = path if path.is_dir() else path.parent
    if path.is_file() and not path.name.startswith("session"):
        return False
    return find_lab_table(folder, "session") is not None and (
        find_lab_table(folder, "results") is not None
    )


def read_lab_tables(
    path: str | os.PathLike[str],
    *,
    qrels: str | os.PathLike[str] | None = None,
    mode: Mode = "strict",
    max_problems: int = 50,
    progress: Callable[[str], None] | None = None,
) -> LoadedStudy:
    """Load the lab tables of a folder (``session``, ``results``, optional ``qrels``).

    ``path`` is the folder or its session table; ``qrels`` defaults to the folder's
    ``qrels`` table when there is one.  See :func:`load_lab_tables`.

    Raises
    ------
    InputFormatError
        The folder has no session or results table.
    """
    p = Path(path)
    folder = p if p.is_dir() else p.parent
    session = p if p.is_file() else _need_table(folder, "session")
    q = qrels if qrels is not None else find_lab_table(folder, "qrels")
    return load_lab_tables(
        session,
        _need_table(folder, "results"),
        q,
        mode=mode,
        max_problems=max_problems,
        progress=progress,
    )


def _need_table(folder: Path, stem: str) -> Path:
    found = find_lab_table(folder, stem)
    if found is None:
        names = ", ".join(f"{stem}{s}" for s in _TABLE_SUFFIXES)
        raise InputFormatError(f"{folder}: no {stem!r} table (looked for {names})")
    return found

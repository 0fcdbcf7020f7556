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
import dataclasses
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import numpy as np
import numpy.typing as npt
import pandas as pd

from ..errors import (
    InputFormatError,
    ParseError,
    ValidationFailed,
    raise_if_any,
)
from ..frame import JudgmentFrame, LoadedStudy
from ..models.judgments import GradeScale
from ..problems import LoadReport, Mode, Problem, line_list
from ..validate.collect import ProblemCollector
from ..validate.flat import frame_from_flat
from ..validate.ids import strip_ids
from ..validate.judgments import judgment_frame
from ..validate.references import unjudged_keys
from .flat import read_csv_table
from .header import study_header
from .mapping import with_qrels_key
from .text import check_encoding

__all__ = [
    "JIANG_ALLAN_SCALE",
    "LabColumns",
    "find_lab_table",
    "is_lab_tables_input",
    "load_lab_tables",
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


def _read_tsv(path: Path, what: str, encoding: str | None) -> pd.DataFrame:
    if not path.exists():
        raise ParseError(f"{path}: no such file ({what} table)")
    # quotes are data in these tables (titles such as 'A "quoted'), not CSV quoting
    return read_csv_table(
        path, sep="\t", encoding=encoding, what=f"{what} table", quoting=csv.QUOTE_NONE
    )


def _need(df: pd.DataFrame, cols: list[str], path: Path, what: str) -> None:
    missing = [c for c in cols if c not in df.columns]
    if missing:
        raise InputFormatError(
            f"{path}: {what} table lacks column(s) {', '.join(missing)} "
            f"(found: {', '.join(map(str, df.columns))}); set them with LabColumns(...)"
        )


def load_lab_tables(
    session: str | os.PathLike[str],
    results: str | os.PathLike[str] | None = None,
    qrels: str | os.PathLike[str] | None = None,
    *,
    columns: LabColumns | None = None,
    grade_scale: GradeScale | None = None,
    mode: Mode = "strict",
    max_problems: int = 50,
    progress: Callable[[str], None] | None = None,
    encoding: str | None = None,
) -> LoadedStudy:
    """Load per-session lab tables (session, results, per-session qrels).

    A record is a row of the session table, or a session id that only the results
    table names; ``report.records_read == sessions_accepted + sessions_rejected``.
    A session is rejected (lenient) or reported (strict) when its id is missing or
    listed twice (every row of it), when it has no result row (a session needs a
    query, as in every format), when a rating is not a number, or when the study's
    rules reject its rows; every result row of a session the session table does not
    list is reported.  Strict mode reports all of these in one error (up to
    ``max_problems``).

    Parameters
    ----------
    session, results, qrels
        The three tab-separated files (qrels optional).  Without ``results``,
        ``session`` is a folder (or its session table) holding tables named
        ``session``, ``results`` and optionally ``qrels`` (each with no suffix or
        ``.tsv``, ``.txt``, ``.csv``); ``qrels`` then defaults to the folder's.
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
    encoding
        Text encoding of the three tables (default UTF-8; a byte-order mark overrides it).

    Returns
    -------
    LoadedStudy
        Judgments keyed by session (``qrels_key="session"``): ``queries["qrels_id"]``
        and the judgments' ``topic_id`` hold session ids.  ``notes`` lists judgments
        of sessions not in the session table.  ``details``: ``ratings`` (the
        ``rating_<name>`` columns carried into ``frame.sessions``, sorted by name) and
        ``empty_serps`` (result pages marked empty).
    """
    c = columns or LabColumns()
    if results is None:
        session, results, qrels = _folder_tables(Path(session), qrels)
    sp, rp = Path(session), Path(results)
    check_encoding(encoding)
    sess, res = _read_tables(sp, rp, c, encoding)
    rating_cols = _rating_columns(sess, c)
    _need(sess, rating_cols, sp, "session")
    lab = _flat_from_lab(sess, res, c, rating_cols, sp, rp)
    if lab.flat is None:  # no result row belongs to an accepted session
        raise ValidationFailed(
            lab.problems[:max_problems] if mode == "strict" else lab.problems,
            truncated=mode == "strict" and len(lab.problems) > max_problems,
        )
    loaded = frame_from_flat(
        lab.flat,
        source=str(rp),
        mode=mode,
        max_problems=max_problems,
        location_kind="line",
        row_locations=lab.row_lines,
        progress=progress,
        raise_problems=False,
    )
    frame, inner = loaded.frame, loaded.report
    report = LoadReport(
        source=str(rp),
        records_read=lab.n_rejected,
        sessions_rejected=lab.n_rejected,
        problems=list(lab.problems),
    )
    report.merge(inner)
    if mode == "strict":
        raise_if_any(report.problems, limit=max_problems)
    frame = with_qrels_key(frame, by="session")
    in_frame = set(frame.sessions["session_id"].astype(str))
    notes = [n for n in lab.unrated if n.record in in_frame]
    judgments = None
    if qrels is not None:
        judgments = _read_session_qrels(Path(qrels), c, grade_scale, encoding)
        known = set(strip_ids(sess[c.session].dropna().astype(str)))
        stray = sorted(set(judgments.table["topic_id"].astype(str)) - known)
        strays = ProblemCollector(str(qrels))
        for sid in stray:
            strays.add_at(
                None,
                c.session,
                "judgments for a session not in the session table",
                repr(sid),
                record=sid,
            )
        notes += strays.problems
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


def _read_tables(
    sp: Path, rp: Path, c: LabColumns, encoding: str | None
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The session and results tables, with their key columns."""
    sess = _read_tsv(sp, "session", encoding)
    res = _read_tsv(rp, "results", encoding)
    _need(sess, [c.session, c.user, c.topic], sp, "session")
    _need(res, [c.res_session, c.query_pos, c.rank], rp, "results")
    if c.doc not in res.columns:
        raise InputFormatError(f"{rp}: results table lacks the document column {c.doc!r}")
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

    flat: pd.DataFrame | None  # None: no result row of an accepted session
    row_lines: npt.NDArray[np.int64]  # file line of each flat row
    problems: list[Problem]  # records rejected before the rules: in input order
    n_rejected: int  # records those problems reject (session rows and unknown sessions)
    ratings: tuple[str, ...]
    n_empty: int
    unrated: list[Problem]  # notes: accepted session rows without a value for some rating


def _ids(col: pd.Series) -> pd.Series:
    """Ids as written, surrounding whitespace removed (the rule of every format); blank: NA."""
    ids = strip_ids(col)
    return ids.where(ids != "", pd.NA)


def _flat_from_lab(
    sess: pd.DataFrame,
    res: pd.DataFrame,
    c: LabColumns,
    rating_cols: list[str],
    sp: Path,
    rp: Path,
) -> _LabFlat:
    """One flat row per results row of an accepted session, with its user, topic, system, ratings.

    Session-table records are rejected here when their id is missing or repeated, a
    rating is not a number, or no result row names them; result rows of ids the
    session table does not list are each reported (their id is one rejected record).
    """
    # records rejected before the rules, in input order: the session table's, then the results'
    in_sess, in_res = ProblemCollector(str(sp)), ProblemCollector(str(rp))
    sess_id, res_id = _ids(sess[c.session]), _ids(res[c.res_session])
    s_line = np.arange(len(sess), dtype=np.int64) + 2  # the header is line 1
    r_line = np.arange(len(res), dtype=np.int64) + 2
    bad_row = sess_id.isna().to_numpy(dtype=bool).copy()
    for i in np.flatnonzero(bad_row).tolist():
        written = sess[c.session].iloc[i]
        shown = repr(written) if pd.notna(written) else ""
        in_sess.add_at(int(s_line[i]), c.session, "is required (blank session id)", shown)
    dup = sess_id.duplicated(keep=False).to_numpy() & ~bad_row
    for i in np.flatnonzero(dup).tolist():
        sid = str(sess_id.iloc[i])
        lines = s_line[(sess_id == sid).to_numpy(dtype=bool, na_value=False)].tolist()
        in_sess.add_at(
            int(s_line[i]),
            c.session,
            f"session id listed more than once (lines {line_list(lines)}); "
            "every row of it is rejected",
            repr(sid),
            record=sid,
        )
    bad_row |= dup
    ratings: dict[str, npt.NDArray[np.float64]] = {}
    for col in rating_cols:
        name = "rating_" + str(col).strip().lower().replace(" ", "_")
        raw = sess[col]
        vals = pd.to_numeric(raw, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
        not_num = np.isnan(vals) & raw.notna().to_numpy()
        for i in np.flatnonzero(not_num & ~bad_row).tolist():
            in_sess.add_at(
                int(s_line[i]),
                str(col),
                "must be a number (a post-task rating) or empty",
                repr(raw.iloc[i]),
                record=str(sess_id.iloc[i]),
            )
        bad_row |= not_num
        ratings[name] = vals
    # rows of the results table -> row of the session table (-1: unknown or rejected id)
    pos = pd.Index(sess_id[~bad_row].astype(object)).get_indexer(pd.Index(res_id.astype(object)))
    good_rows = np.append(np.flatnonzero(~bad_row), -1)  # -1: the slot of "not found"
    pos = good_rows[pos]
    listed = pd.Index(sess_id.dropna().astype(object))
    unknown = (pos < 0) & ~res_id.isin(listed).to_numpy(dtype=bool)  # rows of a rejected id: no
    n_unknown_ids = 0
    if unknown.any():
        u_ids = res_id[unknown].astype(object)
        n_unknown_ids = int(u_ids.fillna("").nunique())
        for i, sid in zip(np.flatnonzero(unknown).tolist(), u_ids.tolist(), strict=True):
            missing = sid is None or sid is pd.NA
            in_res.add_at(
                int(r_line[i]),
                c.res_session,
                "is required (blank session id)"
                if missing
                else "session id not in the session table",
                "" if missing else repr(sid),
                record="" if missing else str(sid),
            )
    if len(sess) == 0:
        in_sess.add_at(
            1, "", "the session table has a header but no rows (one row per session expected)"
        )
    keep = pos >= 0
    has_rows = np.zeros(len(sess), dtype=bool)
    has_rows[pos[keep]] = True
    for i in np.flatnonzero(~has_rows & ~bad_row).tolist():
        sid = str(sess_id.iloc[i])
        in_sess.add_at(
            int(s_line[i]),
            c.session,
            "session has no result rows (a session needs at least one query; an empty "
            f"result page is a row 'SessionID Qno {c.no_results}')",
            repr(sid),
            record=sid,
        )
    n_rejected = int(bad_row.sum()) + int((~has_rows & ~bad_row).sum()) + n_unknown_ids
    problems = [*in_sess.in_order(), *in_res.in_order()]
    names = sorted(ratings)  # a fixed order whatever the table's column order
    if not keep.any():
        return _LabFlat(None, r_line[:0], problems, n_rejected, tuple(names), 0, [])
    flat = _flat_rows(sess, res, c, keep, pos, res_id)
    for name in names:
        flat[name] = ratings[name][pos[keep]]
    marker = _empty_marker(res, c)
    unrated = _unrated(sess, rating_cols, has_rows & ~bad_row, sess_id, sp)
    return _LabFlat(
        flat, r_line[keep], problems, n_rejected, tuple(names), int(marker.sum()), unrated
    )


def _unrated(
    sess: pd.DataFrame, cols: list[str], kept: npt.NDArray[np.bool_], ids: pd.Series, sp: Path
) -> list[Problem]:
    """A note per kept session row with an empty rating, or cut short before one (CV-2)."""
    empty = sess[cols].isna().to_numpy(dtype=bool) & kept[:, None]
    notes = ProblemCollector(str(sp))
    for i in np.flatnonzero(empty.any(axis=1)).tolist():
        notes.add_at(
            i + 2,
            ", ".join(str(c) for c, e in zip(cols, empty[i], strict=True) if e),
            "no value (the field is empty, or the row ends before it): the session is kept "
            "without this post-task rating",
            record=str(ids.iloc[i]),
        )
    return notes.problems


def _empty_marker(res: pd.DataFrame, c: LabColumns) -> npt.NDArray[np.bool_]:
    """Rows marking an empty result page (the marker sits in the rank column)."""
    is_marker = res[c.rank].astype("string").str.strip().str.lower() == c.no_results.lower()
    return is_marker.fillna(False).to_numpy(dtype=bool)


def _flat_rows(
    sess: pd.DataFrame,
    res: pd.DataFrame,
    c: LabColumns,
    keep: npt.NDArray[np.bool_],
    pos: npt.NDArray[np.int64],
    res_id: pd.Series,
) -> pd.DataFrame:
    """The kept results rows in the flat layout; text columns as written."""
    marker = _empty_marker(res, c)
    at = pos[keep]

    def session_col(name: str) -> npt.NDArray[Any]:
        return sess[name].astype("string").to_numpy()[at]

    def result_col(name: str) -> pd.Series:
        return res[name][keep].reset_index(drop=True)

    flat = pd.DataFrame(
        {
            "session_id": res_id[keep].reset_index(drop=True),
            "user_id": session_col(c.user),
            "topic_id": session_col(c.topic),
            "system_id": session_col(c.system) if c.system in sess.columns else c.default_system,
            "query_pos": result_col(c.query_pos),
            "rank": res[c.rank].where(~marker, None)[keep].reset_index(drop=True),
            "doc_id": res[c.doc].where(~marker, None)[keep].reset_index(drop=True),
        }
    )
    if c.text in res.columns:
        flat["query_text"] = result_col(c.text).astype("string").fillna("")
    for name, col in (("url", c.url), ("title", c.title), ("snippet", c.snippet)):
        if col in res.columns:
            flat[name] = res[col].where(~marker, None)[keep].reset_index(drop=True).astype("string")
    return flat


def _read_session_qrels(
    path: Path, c: LabColumns, scale: GradeScale | None, encoding: str | None
) -> JudgmentFrame:
    """The per-session qrels through the judgments boundary (lines: the header is line 1)."""
    q = _read_tsv(path, "qrels", encoding)
    _need(q, [c.q_session, c.qrels_doc, c.grade], path, "qrels")
    line_of = np.arange(len(q), dtype=np.int64) + 2
    j = judgment_frame(
        q[c.q_session],
        q[c.qrels_doc],
        q[c.grade],
        source=str(path),
        scale=scale,
        what="qrels",
        problems=ProblemCollector(str(path), limit=50),
        line_at=lambda: line_of,
    )
    if scale is None and set(j.scale.grades) <= set(JIANG_ALLAN_SCALE.grades):
        return dataclasses.replace(j, scale=JIANG_ALLAN_SCALE)
    if scale is None:
        observed = GradeScale.from_grades(j.scale.grades, name=f"observed in {path.name}")
        return dataclasses.replace(j, scale=observed)
    return j


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


def _folder_tables(
    p: Path, qrels: str | os.PathLike[str] | None
) -> tuple[Path, Path, str | os.PathLike[str] | None]:
    """The session, results and qrels tables of a folder (``p``: it, or its session table).

    Raises
    ------
    InputFormatError
        The folder has no session or results table.
    """
    folder = p if p.is_dir() else p.parent
    session = p if p.is_file() else _need_table(folder, "session")
    q = qrels if qrels is not None else find_lab_table(folder, "qrels")
    return session, _need_table(folder, "results"), q


def _need_table(folder: Path, stem: str) -> Path:
    found = find_lab_table(folder, stem)
    if found is None:
        names = ", ".join(f"{stem}{s}" for s in _TABLE_SUFFIXES)
        raise InputFormatError(f"{folder}: no {stem!r} table (looked for {names})")
    return found

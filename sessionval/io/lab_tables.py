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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

import numpy as np
import pandas as pd

from ..errors import InputFormatError, JudgmentError, ParseError, ValidationFailed
from ..frame import JudgmentFrame, SessionFrame
from ..models.judgments import GradeScale
from ..problems import LoadReport, Mode, Problem
from ..validate.flat import frame_from_flat
from .mapping import with_qrels_key

__all__ = [
    "JIANG_ALLAN_SCALE",
    "LabColumns",
    "LabTablesLoad",
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


@dataclass(frozen=True)
class LabTablesLoad:
    """Result of :func:`load_lab_tables`.

    ``frame.queries["qrels_id"]`` is the session id; ``judgments.table["topic_id"]``
    holds session ids.  ``ratings`` lists the ``rating_<name>`` columns carried into
    ``frame.sessions``.  ``notes`` lists what was skipped without rejecting a session
    (sessions without any result row, judgments of unknown sessions).
    """

    frame: SessionFrame
    judgments: JudgmentFrame | None
    report: LoadReport
    ratings: tuple[str, ...]
    empty_serps: int
    notes: tuple[Problem, ...] = field(default_factory=tuple)


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
) -> LabTablesLoad:
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

    Returns
    -------
    LabTablesLoad
    """
    c = columns or LabColumns()
    sp, rp = Path(session), Path(results)
    sess = _read_tsv(sp, "session")
    res = _read_tsv(rp, "results")
    _need(sess, [c.session, c.user, c.topic], sp, "session")
    _need(res, [c.res_session, c.query_pos, c.rank], rp, "results")
    dup = sess[c.session].duplicated(keep=False)
    if dup.any():
        lines = (np.flatnonzero(dup.to_numpy()) + 2).tolist()
        raise ParseError(
            f"{sp}: session id(s) {sorted(set(sess[c.session][dup]))} listed more "
            f"than once (lines {lines})"
        )
    fixed = {c.session, c.user, c.topic, c.system}
    rating_cols = (
        list(c.ratings)
        if c.ratings is not None
        else [
            col
            for col in sess.columns
            if col not in fixed and pd.to_numeric(sess[col], errors="coerce").notna().any()
        ]
    )
    _need(sess, rating_cols, sp, "session")

    # empty result pages: the marker sits in the rank column
    is_marker = res[c.rank].astype("string").str.strip().str.lower() == c.no_results.lower()
    marker = is_marker.fillna(False).to_numpy(dtype=bool)
    n_empty = int(marker.sum())
    doc_col = res[c.doc] if c.doc in res.columns else None
    if doc_col is None:
        raise InputFormatError(f"{rp}: results table lacks the document column {c.doc!r}")
    rank = res[c.rank].where(~marker, None)
    doc = doc_col.where(~marker, None)

    # attach the session attributes; unknown session ids are problems
    sess_idx = pd.Index(sess[c.session].astype(str))
    pos = sess_idx.get_indexer(pd.Index(res[c.res_session].astype(str)))
    problems: list[Problem] = []
    unknown = pos < 0
    if unknown.any():
        for i in np.flatnonzero(unknown)[:max_problems].tolist():
            sid = str(res[c.res_session].iloc[i])
            problems.append(
                Problem(
                    str(rp),
                    f"line {i + 2}",
                    c.res_session,
                    "session id not in the session table",
                    repr(sid),
                    record=sid,
                )
            )
        if mode == "strict":
            raise ValidationFailed(problems[:max_problems], truncated=len(problems) > max_problems)
    keep = ~unknown
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
            "rank": rank,
            "doc_id": doc,
        }
    )
    if c.text in res.columns:
        flat["query_text"] = res[c.text].fillna("").astype(str).str.strip()
    for name, col in (("url", c.url), ("title", c.title), ("snippet", c.snippet)):
        if col in res.columns:
            flat[name] = res[col].where(~marker, None).astype("string").str.strip()
    rating_names: list[str] = []
    for col in rating_cols:
        name = "rating_" + str(col).strip().lower().replace(" ", "_")
        vals = pd.to_numeric(sess[col], errors="coerce").to_numpy(dtype=np.float64)
        flat[name] = vals[safe]
        rating_names.append(name)
    row_lines = (np.arange(len(res), dtype=np.int64) + 2)[keep]
    flat = flat[keep].reset_index(drop=True)
    if len(flat) == 0:
        raise ValidationFailed(
            problems[:max_problems]
            or [Problem(str(rp), "", "", "no result row belongs to a known session")]
        )
    frame, inner = frame_from_flat(
        flat,
        source=str(rp),
        mode=mode,
        max_problems=max_problems,
        location_kind="line",
        row_locations=row_lines,
    )
    report = LoadReport(source=str(rp))
    bad_ids = {p.record for p in problems}
    report.records_read = report.sessions_rejected = len(bad_ids)
    report.problems = list(problems)
    report.merge(inner)
    frame = with_qrels_key(frame, by="session")

    notes: list[Problem] = []
    no_rows = sorted(set(sess_idx) - set(flat["session_id"]))
    for sid in no_rows:
        notes.append(
            Problem(
                str(sp), "", c.session, "session has no result rows; skipped", repr(sid), record=sid
            )
        )

    judgments = None
    if qrels is not None:
        judgments = _read_session_qrels(Path(qrels), c, grade_scale)
        jt = judgments.table["topic_id"].astype(str)
        stray = sorted(set(jt) - set(sess_idx))
        for sid in stray:
            notes.append(
                Problem(
                    str(qrels),
                    "",
                    c.session,
                    "judgments for a session not in the session table",
                    repr(sid),
                    record=sid,
                )
            )
    return LabTablesLoad(
        frame=frame,
        judgments=judgments,
        report=report,
        ratings=tuple(rating_names),
        empty_serps=n_empty,
        notes=tuple(notes),
    )


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

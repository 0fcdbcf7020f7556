"""Load a whole study: header, sessions (JSON-lines, CSV or Parquet) and reference judgments.

``load_study("sample_logs/", qrels="sample_logs/qrels.txt")`` is the one call a
user needs: it finds the files, validates everything (models at the edges,
vectorised rules on the columns), checks the study-level references (every
session's user, topic and system known; every topic judged or declared
unjudged) and returns a :class:`LoadedStudy` with the columnar frame, the
judgments and the load report.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

import numpy as np
import pandas as pd
from pydantic import ValidationError

from ..errors import InputFormatError, ParseError, Problem, ValidationFailed
from ..frame import JudgmentFrame, SessionFrame
from ..models.study import Study
from ._columns import ParquetColumns
from .jsonl import load_jsonl
from .tables import LoadReport, Mode, frame_from_flat, read_flat_table

__all__ = ["LoadedStudy", "load_judgments", "load_sessions", "load_study", "read_study_header"]

SESSION_FILES: Final = ("sessions.jsonl", "sessions.parquet", "sessions.csv", "sessions.tsv")


@dataclass(frozen=True)
class LoadedStudy:
    """A validated study: header, columnar sessions, judgments and what loading found.

    Attributes
    ----------
    study
        The study header (name, scales, users, topics, systems; no sessions).
    frame
        The sessions in columnar form.
    judgments
        Reference judgments, or ``None`` when none were given.
    report
        Records read / accepted / rejected and every problem of a rejected record.
    """

    study: Study
    frame: SessionFrame
    judgments: JudgmentFrame | None
    report: LoadReport


def read_study_header(path: str | os.PathLike[str]) -> Study:
    """Read ``study.json`` (a :class:`~sessionval.models.Study` without sessions).

    Raises
    ------
    ParseError
        Unreadable or invalid JSON, or a study that breaks the model's rules; the
        message lists each field path with what was wrong.
    """
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ParseError(f"{p}: not valid UTF-8 ({exc.reason} at byte {exc.start})") from exc
    if not text.strip():
        raise ParseError(f"{p}: file is empty (expected a JSON study header)")
    try:
        return Study.model_validate_json(text)
    except ValidationError as exc:
        lines = []
        for err in exc.errors(include_url=False):
            loc = ".".join(str(x) for x in err["loc"]) or "<study>"
            lines.append(f"  {p}: {loc}: {err['msg']}")
        raise ParseError(f"{p}: invalid study header:\n" + "\n".join(lines)) from exc


def load_sessions(
    path: str | os.PathLike[str],
    *,
    mode: Mode = "strict",
    max_problems: int = 50,
    study: Study | None = None,
    progress: Callable[[str], None] | None = None,
    max_rank: int | None = None,
    columns: Sequence[str] | None = None,
) -> tuple[SessionFrame, LoadReport]:
    """Load a session log file by its extension: ``.jsonl``, ``.csv``/``.tsv`` or ``.parquet``.

    ``max_rank`` reads only the results down to that rank: enough for session
    measures over the top X, not for deep single-query measures or the rank-100
    figures.  ``columns`` (Parquet) reads only those optional columns besides the
    required ones, e.g. ``()`` for a bare evaluation of a million sessions.
    """
    p = Path(path)
    scale = (study.user_grade_scale or study.grade_scale) if study is not None else None
    suffixes = "".join(p.suffixes).lower()
    if ".jsonl" in suffixes or ".ndjson" in suffixes:
        if max_rank is not None:
            raise InputFormatError(f"{p}: max_rank is for Parquet and flat tables, not JSON-lines")
        return load_jsonl(
            p, mode=mode, max_problems=max_problems, user_grade_scale=scale, progress=progress
        )
    is_parquet = ".parquet" in suffixes or suffixes.endswith(".pq")
    # Parquet is read column by column (a million sessions never sit in one wide table)
    if is_parquet:
        flat: pd.DataFrame | ParquetColumns = ParquetColumns(p, max_rank=max_rank, columns=columns)
    else:
        flat = read_flat_table(p)
        if max_rank is not None:
            ranks = pd.to_numeric(flat["rank"], errors="coerce") if "rank" in flat else None
            if ranks is not None:
                flat = flat[(ranks <= max_rank) | flat["rank"].isna()]
    kind: Literal["row", "line"] = "row" if is_parquet else "line"
    return frame_from_flat(
        flat,
        source=str(p),
        mode=mode,
        max_problems=max_problems,
        user_grade_scale=scale,
        location_kind=kind,
        progress=progress,
        max_rank=max_rank,
    )


def load_judgments(path: str | os.PathLike[str], *, study: Study | None = None) -> JudgmentFrame:
    """Read reference judgments: TREC qrels (``topic iter doc grade``) or CSV/TSV.

    The CSV form has columns ``topic_id, doc_id, grade[, assessor]``.  Grades must
    be integers on the study's grade scale (when a study header gives one).
    """
    from .trec import read_judgments_csv, read_qrels

    p = Path(path)
    scale = study.grade_scale if study is not None else None
    suffixes = "".join(p.suffixes).lower()
    if any(s in suffixes for s in (".csv", ".tsv")):
        return read_judgments_csv(p, scale=scale)
    return read_qrels(p, scale=scale)


def _locate_sessions(root: Path) -> Path:
    for name in SESSION_FILES:
        if (root / name).exists():
            return root / name
    raise InputFormatError(f"{root}: no session log found (looked for {', '.join(SESSION_FILES)})")


def load_study(
    path: str | os.PathLike[str],
    *,
    qrels: str | os.PathLike[str] | None = None,
    header: str | os.PathLike[str] | None = None,
    mode: Mode = "strict",
    max_problems: int = 50,
    progress: Callable[[str], None] | None = None,
    max_rank: int | None = None,
) -> LoadedStudy:
    """Load and validate a study from a folder or a single session file.

    Parameters
    ----------
    path
        A folder with ``sessions.jsonl`` (or ``.parquet``/``.csv``) and optionally
        ``study.json``; or one session file.
    qrels
        Reference judgments (TREC qrels or CSV). Without them only the log is checked.
    header
        A ``study.json`` elsewhere than beside the sessions.
    mode
        ``"strict"`` (default) fails with every problem found (up to
        ``max_problems``); ``"lenient"`` rejects the bad sessions, keeps the rest and
        lists each rejected session with its reasons in ``report.rejects``.
    max_problems
        Limit of problems listed in strict mode.
    progress
        Called with each loading phase's name (:data:`sessionval.io.tables.LOAD_PHASES`).
    max_rank
        Read only results down to this rank (see :func:`load_sessions`).

    Returns
    -------
    LoadedStudy
    """
    p = Path(path)
    if not p.exists():
        raise ParseError(f"{p}: no such file or folder")
    root = p if p.is_dir() else p.parent
    sessions_path = _locate_sessions(p) if p.is_dir() else p
    header_path = Path(header) if header is not None else root / "study.json"
    study = read_study_header(header_path) if header_path.exists() else None
    frame, report = load_sessions(
        sessions_path,
        mode=mode,
        max_problems=max_problems,
        study=study,
        progress=progress,
        max_rank=max_rank,
    )
    judgments = load_judgments(qrels, study=study) if qrels is not None else None
    if study is None:
        scale = judgments.scale if judgments is not None else None
        study = Study(name=root.name, **({"grade_scale": scale} if scale is not None else {}))
    frame, report = _check_references(
        frame, report, study, judgments, str(sessions_path), mode, max_problems
    )
    frame = _attach_entities(frame, study)
    return LoadedStudy(study=study, frame=frame, judgments=judgments, report=report)


def _check_references(
    frame: SessionFrame,
    report: LoadReport,
    study: Study,
    judgments: JudgmentFrame | None,
    source: str,
    mode: Mode,
    max_problems: int,
) -> tuple[SessionFrame, LoadReport]:
    """Unknown users/topics/systems and unjudged topics, per session (vectorised by category)."""
    s = frame.sessions
    bad = np.zeros(len(s), dtype=bool)
    problems: list[Problem] = []
    for col, known in (
        ("user_id", [u.user_id for u in study.users]),
        ("topic_id", [t.topic_id for t in study.topics]),
        ("system_id", [x.system_id for x in study.systems]),
    ):
        if not known:
            continue
        unknown_mask = ~s[col].isin(known).to_numpy()
        listed = ", ".join(sorted(known)[:12]) + (" …" if len(known) > 12 else "")
        for i in np.flatnonzero(unknown_mask).tolist():
            problems.append(
                Problem(
                    source,
                    f"session {s['session_id'].iloc[i]}",
                    col,
                    f"unknown {col[:-3]} (known in the study header: {listed})",
                    repr(str(s[col].iloc[i])),
                    str(s["session_id"].iloc[i]),
                )
            )
        bad |= unknown_mask
    if judgments is not None:
        judged = set(judgments.topics.astype(str))
        declared = {t.topic_id for t in study.topics if not t.judged}
        keys = frame.queries["qrels_id"].astype(str)
        q_sess = frame.queries["session_id"].cat.codes.to_numpy()
        topic_of_q = s["topic_id"].astype(str).to_numpy()[q_sess]
        # the rule binds the topic's judgments; a query with its own judgment set (a CAsT
        # turn, a lab session) may legitimately have none: it is counted, not rejected
        q_bad = ~keys.isin(judged | declared).to_numpy() & (keys.to_numpy() == topic_of_q)
        sess_bad = np.zeros(len(s), dtype=bool)
        sess_bad[q_sess[q_bad]] = True
        for i in np.flatnonzero(sess_bad & ~bad).tolist():
            key = keys[(q_sess == i) & q_bad].iloc[0]
            problems.append(
                Problem(
                    source,
                    f"session {s['session_id'].iloc[i]}",
                    "topic_id",
                    f"topic {key!r} has no reference judgments in {judgments.source} "
                    "and is not declared "
                    'unjudged (add judgments, or set "judged": false on the topic in study.json)',
                    repr(key),
                    str(s["session_id"].iloc[i]),
                )
            )
        bad |= sess_bad
    if not problems:
        return frame, report
    if mode == "strict":
        raise ValidationFailed(problems[:max_problems], truncated=len(problems) > max_problems)
    report = dataclasses.replace(report, problems=[*report.problems, *problems])
    report.sessions_rejected += int(bad.sum())
    report.sessions_accepted -= int(bad.sum())
    return drop_sessions(frame, bad), report


def drop_sessions(frame: SessionFrame, drop: np.ndarray) -> SessionFrame:
    """A frame without the sessions flagged in ``drop`` (boolean per session row)."""
    if not drop.any():
        return frame
    keep_s = ~drop
    q_keep = keep_s[frame.queries["session_id"].cat.codes.to_numpy()]
    r_keep = q_keep[frame.results["query_idx"].to_numpy()]
    new_q_idx = np.cumsum(q_keep) - 1
    names = frame.sessions["session_id"].cat.categories[keep_s]
    cat = pd.CategoricalDtype(names)
    sessions = frame.sessions[keep_s].reset_index(drop=True)
    sessions["session_id"] = sessions["session_id"].astype(str).astype(cat)
    queries = frame.queries[q_keep].reset_index(drop=True)
    queries["session_id"] = queries["session_id"].astype(str).astype(cat)
    results = frame.results[r_keep].reset_index(drop=True)
    results["session_id"] = results["session_id"].astype(str).astype(cat)
    results["query_idx"] = new_q_idx[results["query_idx"].to_numpy()].astype(np.int32)
    return dataclasses.replace(frame, sessions=sessions, queries=queries, results=results)


def _attach_entities(frame: SessionFrame, study: Study) -> SessionFrame:
    """Replace the id-only entity tables with the header's attributes where it has them."""
    users, topics, systems = frame.users, frame.topics, frame.systems
    if study.users:
        attrs = pd.DataFrame([{"user_id": u.user_id, **u.attributes} for u in study.users])
        users = users.merge(attrs.astype({"user_id": "string"}), on="user_id", how="left")
    if study.topics:
        t = pd.DataFrame([t.model_dump() for t in study.topics]).astype({"topic_id": "string"})
        topics = topics[["topic_id"]].merge(t, on="topic_id", how="left")
        topics["judged"] = topics["judged"].fillna(True).astype(bool)
        topics[["title", "description"]] = topics[["title", "description"]].fillna("")
    if study.systems:
        x = pd.DataFrame([x.model_dump() for x in study.systems]).astype({"system_id": "string"})
        systems = systems[["system_id"]].merge(x, on="system_id", how="left").fillna("")
    return dataclasses.replace(
        frame,
        users=users,
        topics=topics,
        systems=systems,
        grade_scale=study.user_grade_scale or study.grade_scale,
    )

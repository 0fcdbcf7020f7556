"""Load a whole study: header, sessions (JSON-lines, CSV or Parquet) and reference judgments.

``load_study("sample_logs/", qrels="sample_logs/qrels.txt")`` is the one call a
user needs: it finds the files, validates everything (models at the edges,
vectorised rules on the columns), checks the study-level references (every
session's user, topic and system known; every topic judged or declared
unjudged) and returns a :class:`LoadedStudy` with the columnar frame, the
judgments and the load report.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Final, Literal

import pandas as pd
from pydantic import ValidationError

from ..errors import InputFormatError, ParseError
from ..frame import JudgmentFrame, LoadedStudy, SessionFrame
from ..models.study import Study
from ..problems import LoadReport, Mode
from ..validate.flat import frame_from_flat
from ..validate.references import _attach_entities, _check_references
from ..validate.sources import ParquetColumns
from .flat import read_flat_table
from .jsonl import load_jsonl

__all__ = [
    "SESSION_FILES",
    "load_judgments",
    "load_sessions",
    "load_study",
    "read_study_header",
]

SESSION_FILES: Final = ("sessions.jsonl", "sessions.parquet", "sessions.csv", "sessions.tsv")


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
        Called with each loading phase's name (:data:`sessionval.validate.flat.LOAD_PHASES`).
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

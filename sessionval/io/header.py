"""Study headers: where each toolkit format carries one, and one built from a frame.

A study header is a :class:`~sessionval.models.Study` without sessions: name,
description, grade scales, users with their attributes, topics (``judged: false``
included), systems and the qrels key.  Every output format keeps it, each in its
own carrier (:func:`header_carrier` writes it, :func:`find_header` reads it back):

* a folder (JSON-lines ``sessions.jsonl``, Parquet partitions): ``study.json``;
* a Parquet file: its schema metadata, under :data:`HEADER_KEY`;
* a CSV/TSV table: the sidecar ``<stem>.study.json`` beside it (:func:`header_sidecar`).

The other input formats get a header built from their frame (:func:`study_header`),
so every loader returns a :class:`~sessionval.frame.LoadedStudy` with a header.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from pydantic import ValidationError

from ..errors import ParseError
from ..frame import JudgmentFrame, SessionFrame
from ..models.judgments import GradeScale
from ..models.study import Study, System, Topic, User
from .text import read_input_text

__all__ = [
    "HEADER_KEY",
    "STUDY_JSON",
    "HeaderCarrier",
    "find_header",
    "header_carrier",
    "header_sidecar",
    "read_study_header",
    "study_header",
]

#: The header file of a study folder.
STUDY_JSON: Final = "study.json"
#: Key of a Parquet file's schema metadata that holds the study header (as ``study.json``).
HEADER_KEY: Final = b"sessionval.study"
_SIDECAR: Final = ".study.json"
_PARQUET: Final = (".parquet", ".pq")


def header_sidecar(table: str | os.PathLike[str]) -> Path:
    """The header file beside a CSV/TSV table: ``<stem>.study.json`` (``t.csv`` → ``t.study.json``).

    Examples
    --------
    >>> header_sidecar("out/unj.csv").as_posix()
    'out/unj.study.json'
    """
    return Path(table).with_suffix(_SIDECAR)


def _header_text(header: Study) -> str:
    return header.model_dump_json(indent=2, exclude={"sessions", "judgments"}) + "\n"


@dataclass(frozen=True)
class HeaderCarrier:
    """Where a study header goes for one output, and its text.

    Attributes
    ----------
    text
        The header as ``study.json`` holds it (indented JSON, no sessions or judgments).
    path
        The file to write ``text`` to (``study.json``, or a CSV table's sidecar);
        ``None`` for a Parquet file, which carries it in ``metadata``.
    metadata
        Schema metadata of a Parquet file (empty for the other outputs).
    """

    text: str
    path: Path | None = None
    metadata: dict[bytes, bytes] = field(default_factory=dict)


def header_carrier(
    header: Study, sessions: str | os.PathLike[str], layout: Literal["folder", "parquet", "csv"]
) -> HeaderCarrier:
    """Where and how an output of ``layout`` whose sessions go to ``sessions`` keeps ``header``.

    ``"folder"`` (JSON-lines, Parquet partitions): ``study.json`` in the folder
    ``sessions``; ``"parquet"``: the file's schema metadata; ``"csv"``: the table's
    sidecar (:func:`header_sidecar`).  :func:`find_header` reads each back.
    """
    p = Path(sessions)
    text = _header_text(header)
    if layout == "parquet":
        return HeaderCarrier(text, metadata={HEADER_KEY: text.encode("utf-8")})
    return HeaderCarrier(text, path=header_sidecar(p) if layout == "csv" else p / STUDY_JSON)


def _parse_header(text: str, where: str) -> Study:
    """The :class:`Study` of a header's JSON text; ``where`` names its place in messages."""
    if not text.strip():
        raise ParseError(f"{where}: file is empty (expected a JSON study header)")
    try:
        return Study.model_validate_json(text)
    except ValidationError as exc:
        lines = []
        for err in exc.errors(include_url=False):
            loc = ".".join(str(x) for x in err["loc"]) or "<study>"
            lines.append(f"  {where}: {loc}: {err['msg']}")
        raise ParseError(f"{where}: invalid study header:\n" + "\n".join(lines)) from exc


def _parquet_header(p: Path) -> Study | None:
    """The header in a Parquet file's schema metadata (``None``: the file carries none)."""
    try:
        meta = pq.read_schema(p).metadata or {}
    except (pa.ArrowException, OSError, ValueError):
        return None  # not readable as Parquet: the session reader says why, with its location
    raw = meta.get(HEADER_KEY)
    if raw is None:
        return None
    where = f"{p}: schema metadata {HEADER_KEY.decode()}"
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ParseError(f"{where}: not UTF-8 text ({exc.reason}); rewrite the file") from exc
    return _parse_header(text, where)


def find_header(
    sessions: str | os.PathLike[str],
    *,
    header: str | os.PathLike[str] | None = None,
    encoding: str | None = None,
) -> Study | None:
    """The study header of the sessions at ``sessions`` (``None``: none found).

    In order: ``header`` when given; in a folder its ``study.json``; for a single
    file the header it carries (:func:`header_carrier`: a Parquet file's schema
    metadata, a table's sidecar), else the ``study.json`` beside it (a study folder
    read through its session file).

    Raises
    ------
    ParseError
        A header found that is not a valid :class:`Study` (located).
    """
    p = Path(sessions)
    if header is not None:
        return read_study_header(header, encoding=encoding)
    if p.is_dir():
        candidates = [p / STUDY_JSON]
    else:
        if p.suffix.lower() in _PARQUET:
            found = _parquet_header(p)
            if found is not None:
                return found
        candidates = [header_sidecar(p), p.parent / STUDY_JSON]
    for c in candidates:
        if c.is_file():
            return read_study_header(c, encoding=encoding)
    return None


def read_study_header(path: str | os.PathLike[str], *, encoding: str | None = None) -> Study:
    """Read ``study.json`` (a :class:`~sessionval.models.Study` without sessions).

    ``encoding`` is the file's text encoding (default UTF-8; a byte-order mark wins).

    Raises
    ------
    ParseError
        Unreadable or invalid JSON, or a study that breaks the model's rules; the
        message lists each field path with what was wrong.
    """
    p = Path(path)
    return _parse_header(read_input_text(p, encoding), str(p))


def study_header(
    frame: SessionFrame, *, judgments: JudgmentFrame | None = None, name: str = ""
) -> Study:
    """Build the :class:`Study` header (no sessions) describing the frame's entities.

    Parameters
    ----------
    frame
        Source of users, topics and systems.
    judgments
        Their grade scale becomes the study's ``grade_scale`` (default scale otherwise).
    name
        Study name.
    """

    def attrs(row: dict[Any, Any], skip: str) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for k, v in row.items():
            if k == skip:
                continue
            if isinstance(v, float | np.floating) and math.isnan(float(v)):
                continue
            out[str(k)] = v.item() if isinstance(v, np.generic) else v
        return out

    users = tuple(
        User(user_id=str(r["user_id"]), attributes=attrs(r, "user_id"))
        for r in frame.users.to_dict("records")
    )
    topics = tuple(
        Topic(
            topic_id=str(r["topic_id"]),
            title=str(r.get("title", "") or ""),
            description=str(r.get("description", "") or ""),
            judged=bool(r.get("judged", True)),
        )
        for r in frame.topics.to_dict("records")
    )
    systems = tuple(
        System(
            system_id=str(r["system_id"]),
            name=str(r.get("name", "") or ""),
            description=str(r.get("description", "") or ""),
        )
        for r in frame.systems.to_dict("records")
    )
    scale = judgments.scale if judgments is not None else GradeScale.default()
    return Study(
        name=name,
        grade_scale=scale,
        user_grade_scale=frame.grade_scale,
        users=users,
        topics=topics,
        systems=systems,
    )

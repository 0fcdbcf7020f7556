"""Study headers: read ``study.json``, or build one from the entities a frame names.

A study header is a :class:`~sessionval.models.Study` without sessions: name, grade
scales, users with their attributes, topics and systems.  The toolkit's own layout
keeps it in ``study.json``; every other format gets one built from its frame, so
every loader returns a :class:`~sessionval.frame.LoadedStudy` with a header.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import ValidationError

from ..errors import ParseError
from ..frame import JudgmentFrame, SessionFrame
from ..models.judgments import GradeScale
from ..models.study import Study, System, Topic, User
from .text import read_input_text

__all__ = [
    "read_study_header",
    "study_header",
]


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
    text = read_input_text(p, encoding)
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

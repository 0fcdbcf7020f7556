"""The study header built from a frame's entities (:func:`study_header`).

Every loader returns a :class:`~sessionval.frame.LoadedStudy` with a header; an input
that carries none (a JSON-lines log, a table given in code, TREC Session XML, lab
tables, runs) gets one built here from the entities its frame names.  Where each
toolkit format carries a header is :mod:`sessionval.io.header`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..frame import JudgmentFrame, SessionFrame
from ..models.judgments import GradeScale
from ..models.study import Study, System, Topic, User

__all__ = ["study_header"]


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

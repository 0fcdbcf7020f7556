"""Searchers, topics, systems and the study that ties them to sessions."""

from __future__ import annotations

from typing import Literal, Self

from pydantic import Field, model_validator

from .._types import Identifier
from ._base import Model
from .judgments import GradeScale, Judgment
from .session import Session

__all__ = [
    "AttributeValue",
    "QrelsKey",
    "Study",
    "System",
    "Topic",
    "User",
]

AttributeValue = float | int | str | bool | None
#: What reference judgments are keyed by: the session's topic, the session itself (lab
#: studies judged per session) or each query's ``query_id`` (per-turn judgments, TREC CAsT).
QrelsKey = Literal["topic", "session", "query_id"]


class User(Model):
    """A searcher (study participant) with study attributes (experience, skill, …)."""

    user_id: Identifier
    attributes: dict[str, AttributeValue] = Field(default_factory=dict)


class Topic(Model):
    """A topic or search scenario.

    ``judged=False`` declares that no reference judgments exist for it on purpose;
    otherwise a topic without judgments is an error when judgments are checked.
    """

    topic_id: Identifier
    title: str = ""
    description: str = ""
    judged: bool = True


class System(Model):
    """A search system or interface condition."""

    system_id: Identifier
    name: str = ""
    description: str = ""


class Study(Model):
    """A whole study: its entities, sessions and (optionally) reference judgments.

    A JSON-lines log keeps the study header (everything but ``sessions`` and
    ``judgments``) in ``study.json`` and one :class:`Session` per line in
    ``sessions.jsonl``; the other formats keep the same header in their own carrier
    (``docs/formats.md``).  ``qrels_key`` records what the judgments are keyed by
    (each query's key travels as its ``qrels_id``).
    """

    name: str = ""
    description: str = ""
    grade_scale: GradeScale = Field(default_factory=GradeScale.default)
    user_grade_scale: GradeScale | None = None
    users: tuple[User, ...] = ()
    topics: tuple[Topic, ...] = ()
    systems: tuple[System, ...] = ()
    qrels_key: QrelsKey = "topic"
    sessions: tuple[Session, ...] = ()
    judgments: tuple[Judgment, ...] = ()

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        for kind, ids in (
            ("user", [u.user_id for u in self.users]),
            ("topic", [t.topic_id for t in self.topics]),
            ("system", [s.system_id for s in self.systems]),
            ("session", [s.session_id for s in self.sessions]),
        ):
            seen: set[str] = set()
            for i in ids:
                if i in seen:
                    raise ValueError(f"duplicate {kind} id {i!r}")
                seen.add(i)
        users = {u.user_id for u in self.users}
        topics = {t.topic_id for t in self.topics}
        systems = {s.system_id for s in self.systems}
        for k, s in enumerate(self.sessions):
            for kind, known, value in (
                ("user", users, s.user_id),
                ("topic", topics, s.topic_id),
                ("system", systems, s.system_id),
            ):
                if known and value not in known:
                    raise ValueError(f"sessions[{k}] ({s.session_id}): unknown {kind} {value!r}")
        scale = self.user_grade_scale or self.grade_scale
        for k, s in enumerate(self.sessions):
            for q in s.queries:
                for r in q.results:
                    if r.user_grade is not None and r.user_grade not in scale.levels:
                        raise ValueError(
                            f"sessions[{k}] ({s.session_id}) query {q.position} rank {r.rank}: "
                            f"user_grade {r.user_grade} is not on the scale {list(scale.grades)}"
                        )
        for j in self.judgments:
            if j.grade not in self.grade_scale.levels:
                raise ValueError(
                    f"judgment ({j.topic_id}, {j.doc_id}): grade {j.grade} is not on the scale "
                    f"{list(self.grade_scale.grades)}"
                )
        if self.judgments:
            judged = {j.topic_id for j in self.judgments}
            unjudged_ok = {t.topic_id for t in self.topics if not t.judged}
            for k, s in enumerate(self.sessions):
                if s.topic_id not in judged and s.topic_id not in unjudged_ok:
                    raise ValueError(
                        f"sessions[{k}] ({s.session_id}): topic {s.topic_id!r} has no judgments "
                        "and is not declared unjudged (set judged=false on the topic)"
                    )
        return self

    def header(self) -> Study:
        """The study without sessions and judgments (what ``study.json`` holds)."""
        return self.model_copy(update={"sessions": (), "judgments": ()})

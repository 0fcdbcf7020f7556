"""Pydantic v2 models of a session-search study (validation at the edges)."""

from .judgments import GradeScale, Judgment
from .session import Query, Result, Session
from .study import Study, System, Topic, User

__all__ = [
    "GradeScale",
    "Judgment",
    "Query",
    "Result",
    "Session",
    "Study",
    "System",
    "Topic",
    "User",
]

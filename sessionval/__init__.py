"""sessionval: evaluate interactive search in sessions of several queries."""

from .errors import (
    InputFormatError,
    JudgmentError,
    MeasureSpecError,
    ParseError,
    Problem,
    SessionvalError,
    ValidationFailed,
)
from .frame import JudgmentFrame, SessionFrame
from .models import GradeScale, Judgment, Query, Result, Session, Study, System, Topic, User

__version__ = "0.1.0"

__all__ = [
    "GradeScale",
    "InputFormatError",
    "Judgment",
    "JudgmentError",
    "JudgmentFrame",
    "MeasureSpecError",
    "ParseError",
    "Problem",
    "Query",
    "Result",
    "Session",
    "SessionFrame",
    "SessionvalError",
    "Study",
    "System",
    "Topic",
    "User",
    "ValidationFailed",
    "__version__",
]

"""Grade scales and reference judgments."""

from __future__ import annotations

from pydantic import Field, field_validator

from .._types import DocId, Grade, Identifier
from ..rules import check_in_levels
from ._base import Model

__all__ = [
    "GradeScale",
    "Judgment",
]


class GradeScale(Model):
    """An ordinal relevance scale: each grade with its label.

    Grade 0 conventionally means *not relevant*; grades above 0 are relevant
    (the recall base); negative grades (TREC's −2 spam, −1 off-topic) are allowed
    on a scale and handled by the gain functions' negative-grade policy.

    Examples
    --------
    >>> scale = GradeScale.default()
    >>> scale.grades
    (0, 1, 2, 3)
    >>> scale.label(3)
    'highly relevant'
    """

    name: str = "graded 0-3"
    levels: dict[Grade, str] = Field(min_length=1)

    @field_validator("levels")
    @classmethod
    def _sorted(cls, v: dict[int, str]) -> dict[int, str]:
        return dict(sorted(v.items()))

    @classmethod
    def default(cls) -> GradeScale:
        """The four-level scale of the papers (Sormunen 2002): 0, 1, 2, 3."""
        return cls(
            name="graded 0-3",
            levels={
                0: "not relevant",
                1: "marginally relevant",
                2: "fairly relevant",
                3: "highly relevant",
            },
        )

    @classmethod
    def from_grades(
        cls, grades: list[int] | tuple[int, ...], *, name: str = "observed"
    ) -> GradeScale:
        """A scale with the given grades labelled by their number."""
        return cls(name=name, levels={int(g): f"grade {int(g)}" for g in sorted(set(grades))})

    @property
    def grades(self) -> tuple[int, ...]:
        """The grades in ascending order."""
        return tuple(self.levels)

    @property
    def max_grade(self) -> int:
        """The highest grade."""
        return max(self.levels)

    def label(self, grade: int) -> str:
        """The label of ``grade``; raises ``KeyError`` for a grade not on the scale."""
        return self.levels[grade]

    def check(self, grade: int, *, what: str = "grade") -> None:
        """Raise ``ValueError`` if ``grade`` is not on the scale."""
        v = check_in_levels([grade], self.grades, what=what)
        if v:
            raise ValueError(v.messages[0])


class Judgment(Model):
    """One reference judgment: an assessor's grade of a document for a topic.

    ``topic_id`` is the key judgments are grouped by; for per-session or per-turn
    judgments it is the session or turn id (see ``qrels_id`` in the frame).
    """

    topic_id: Identifier
    doc_id: DocId
    grade: Grade
    assessor: str = ""

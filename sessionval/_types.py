"""Constrained scalar types shared by the models (``Annotated`` aliases)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, StringConstraints

__all__ = ["Cutoff", "DocId", "Grade", "Identifier", "NonNegativeFloat", "Position", "Rank"]

Identifier = Annotated[str, StringConstraints(min_length=1, strip_whitespace=True)]
"""A non-empty identifier (session, user, topic, system)."""

DocId = Annotated[str, StringConstraints(min_length=1, strip_whitespace=True)]
"""A non-empty document identifier."""

Rank = Annotated[int, Field(ge=1)]
"""A rank in a result list; ranks start at 1."""

Position = Annotated[int, Field(ge=1)]
"""A query's position in its session; positions start at 1."""

Cutoff = Annotated[int, Field(ge=1)]
"""A rank cut-off ``k >= 1``."""

Grade = int
"""A relevance grade; its admissible range is given by a :class:`GradeScale`."""

NonNegativeFloat = Annotated[float, Field(ge=0)]
"""A count or duration that cannot be negative."""

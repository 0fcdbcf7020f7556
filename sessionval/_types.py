"""Shared type aliases: constrained scalars of the models (``Annotated``) and array types."""

from __future__ import annotations

from typing import Annotated, TypeAlias

import numpy as np
import numpy.typing as npt
from pydantic import Field, StringConstraints

__all__ = [
    "BoolArray",
    "Cutoff",
    "DocId",
    "FloatArray",
    "Grade",
    "Identifier",
    "IntArray",
    "NonNegativeFloat",
    "Position",
    "Rank",
    "Text",
]

Identifier = Annotated[str, StringConstraints(min_length=1, strip_whitespace=True)]
"""A non-empty identifier (session, user, topic, system)."""

DocId = Annotated[str, StringConstraints(min_length=1, strip_whitespace=True)]
"""A non-empty document identifier."""

Text = Annotated[str, StringConstraints(strip_whitespace=False)]
"""Free text (query text, titles, snippets, URLs): kept exactly as written, in every format."""

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

FloatArray: TypeAlias = npt.NDArray[np.float64]
"""float64 array (gains, scores)."""

IntArray: TypeAlias = npt.NDArray[np.int64]
"""int64 array (offsets, indices, codes)."""

BoolArray: TypeAlias = npt.NDArray[np.bool_]
"""Boolean mask."""

"""The base model: frozen, no extra fields."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

__all__ = [
    "Model",
]


class Model(BaseModel):
    """Base of every sessionval model: immutable and strict about unknown fields."""

    model_config = ConfigDict(frozen=True, extra="forbid", str_strip_whitespace=True)

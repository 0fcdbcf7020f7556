"""Pydantic validation errors in the toolkit's words: one line per problem, no URLs.

Where a problem is and which keys are allowed depend on what was validated (a key of
the run's TOML file, a flag of ``run``, a field of a model built from Python): a
:class:`Locator` says so; the reason, the value given and the list items are worded
here once.  The run's configuration file uses it
(:mod:`sessionval.workflow.config_file`); :class:`FieldLocator` words the errors of a
model built from Python the same way.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, Protocol

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

__all__ = ["TYPE_TEXT", "FieldLocator", "Loc", "Locator", "explain", "problem"]

#: A location in the validated data (pydantic's ``loc``).
Loc = tuple[int | str, ...]

#: What a value of the wrong type must be, by pydantic's error type.
TYPE_TEXT: Final = {
    "bool_type": "must be true or false (a TOML boolean, without quotes)",
    "int_type": "must be a whole number (without quotes)",
    "float_type": "must be a number (without quotes)",
    "string_type": "must be text in quotes",
    "tuple_type": 'must be a list, e.g. ["a", "b"]',
    "list_type": 'must be a list, e.g. ["a", "b"]',
    "model_type": "must be a table",
    "dict_type": "must be a table",
    "too_short": "must not be empty",
}


class Locator(Protocol):
    """Names a location as the user wrote it, and the keys allowed there."""

    def where(self, loc: Loc) -> str:
        """The key (or table) at ``loc``, as the user wrote it."""
        ...

    def allowed(self, loc: Loc) -> str:
        """The keys the table at ``loc`` takes, for an unknown key's message."""
        ...

    def is_top(self, loc: Loc) -> bool:
        """Whether ``loc`` is the top level (unknown keys there are "at the top level")."""
        ...


@dataclass(frozen=True)
class FieldLocator:
    r"""The fields of a model built from Python: ``b``, ``short_lists.pad``.

    Examples
    --------
    >>> from pydantic import ConfigDict
    >>> class M(BaseModel):
    ...     model_config = ConfigDict(extra="forbid")
    ...     b: float = 2.0
    >>> try:
    ...     M.model_validate({"b": "x", "c": 1})
    ... except ValidationError as exc:
    ...     print("\n".join(explain(exc, FieldLocator(M))))
    b = 'x': must be a valid number, unable to parse string as a number
    unknown key(s) ['c'] at the top level; allowed: b
    """

    model: type[BaseModel]

    def where(self, loc: Loc) -> str:
        """The dotted field name."""
        return ".".join(str(p) for p in loc) or self.model.__name__

    def allowed(self, loc: Loc) -> str:
        """The model's fields."""
        return ", ".join(sorted(self.model.model_fields))

    def is_top(self, loc: Loc) -> bool:
        """The model itself."""
        return not loc


def explain(exc: ValidationError, locator: Locator) -> list[str]:
    """One line per problem: where, the value given, what is allowed (no pydantic URLs)."""
    unknown: dict[Loc, list[str]] = {}
    lines: list[str] = []
    for err in exc.errors(include_url=False):
        loc = tuple(err["loc"])
        if err["type"] == "extra_forbidden":
            unknown.setdefault(loc[:-1], []).append(str(loc[-1]))
            continue
        lines.append(problem(err, loc, locator))
    for table, keys in unknown.items():
        where = "at the top level" if locator.is_top(table) else f"in {locator.where(table)}"
        lines.append(f"unknown key(s) {sorted(keys)} {where}; allowed: {locator.allowed(table)}")
    return lines


def problem(err: ErrorDetails, loc: Loc, locator: Locator) -> str:
    """One problem: ``where = value: reason`` (``where: reason`` for a table)."""
    kind = err["type"]
    if kind in ("literal_error", "enum") and err.get("ctx"):
        reason = f"must be one of {err['ctx']['expected']}"
    elif kind in TYPE_TEXT:
        reason = TYPE_TEXT[kind]
    else:
        reason = err["msg"].removeprefix("Value error, ").replace("Input should be", "must be")
    if not loc:  # a problem of the whole (an unknown preset, ...)
        return reason
    item = ""
    if isinstance(loc[-1], int):  # an item of a list: name the list and the item
        item = f" item {loc[-1] + 1}"
        loc = loc[:-1]
    where = locator.where(loc) + item
    value = err.get("input")
    if kind in ("model_type", "dict_type") or isinstance(value, Mapping):
        return f"{where}: {reason}"
    return f"{where} = {value!r}: {reason}"

"""What a load read, accepted and rejected: :class:`Problem`, :class:`LoadReport`, :data:`Mode`.

Every reader reports problems as :class:`Problem` records (file, line or row, field,
message, the value as written); strict mode raises them together in one
:class:`~sessionval.errors.ValidationFailed`, lenient mode keeps them in the
:class:`LoadReport` of the rejected records.  This module sits below
:mod:`sessionval.frame` so that frames and loaders can both carry a report.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import pandas as pd

__all__ = [
    "LoadReport",
    "Mode",
    "Problem",
]


Mode = Literal["strict", "lenient"]


@dataclass
class LoadReport:
    """What a loader read, accepted and rejected.

    ``records_read == sessions_accepted + sessions_rejected`` always holds; a
    record is a session (a JSON line, or a session's rows of a flat table).
    ``rejects`` has one row per problem of a rejected record (lenient mode).
    """

    source: str
    records_read: int = 0
    rows_read: int = 0
    sessions_accepted: int = 0
    sessions_rejected: int = 0
    problems: list[Problem] = field(default_factory=list)

    @property
    def rejects(self) -> pd.DataFrame:
        """Every problem of every rejected record, as a table."""
        cols = ["record", "source", "location", "field", "message", "value"]
        return pd.DataFrame(
            [[p.record, p.source, p.location, p.field, p.message, p.value] for p in self.problems],
            columns=cols,
        )

    def merge(self, other: LoadReport) -> None:
        """Add the counts and problems of ``other`` (e.g. records rejected while parsing)."""
        self.records_read += other.records_read
        self.rows_read += other.rows_read
        self.sessions_accepted += other.sessions_accepted
        self.sessions_rejected += other.sessions_rejected
        self.problems.extend(other.problems)

    def summary_line(self) -> str:
        """``records read = accepted + rejected`` in words."""
        return (
            f"{self.records_read} records read = {self.sessions_accepted} sessions accepted"
            f" + {self.sessions_rejected} rejected"
        )


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing wrong with one record of an input.

    Parameters
    ----------
    source
        File name (or ``"<frame>"`` for in-memory tables).
    location
        ``"line 17"``, ``"row 3"``, ``"session s12"``: where in the source.
    field
        Dotted path of the offending field (``"queries[2].results[0].rank"``), or ``""``.
    message
        What was wrong and what is allowed.
    value
        The offending value, rendered with ``repr`` (may be ``""``).
    record
        Identifier of the record that is rejected in lenient mode (usually the session id).
    """

    source: str
    location: str
    field: str
    message: str
    value: str = ""
    record: str = ""

    def __str__(self) -> str:
        if self.location.startswith("line "):
            where = f"{self.source}:{self.location[5:]}"
        elif self.location:
            where = f"{self.source} ({self.location})"
        else:
            where = self.source
        field = f" {self.field}:" if self.field else ""
        got = f" (got {self.value})" if self.value else ""
        return f"{where}:{field} {self.message}{got}"

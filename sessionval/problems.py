"""What a load read, accepted and rejected: :class:`Problem`, :class:`LoadReport`, :data:`Mode`.

Every reader reports what is wrong with its input as :class:`Problem` records
(file, line or row, field, message, the value as written).  In ``"strict"``
mode they are raised together in one :class:`~sessionval.errors.ValidationFailed`,
so a user fixes a file in one pass; in ``"lenient"`` mode the records concerned
are rejected and their problems are kept in the :class:`LoadReport`.

This module sits below :mod:`sessionval.errors` and :mod:`sessionval.frame`, so
that exceptions, frames and loaders can all carry problems and reports.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Final, Literal

import numpy as np
import pandas as pd

__all__ = [
    "LINES_LISTED",
    "LoadReport",
    "Mode",
    "Problem",
    "line_list",
]

#: line numbers one problem lists at most (:func:`line_list`); the rest are counted
LINES_LISTED: Final = 10


Mode = Literal["strict", "lenient"]
"""How a loader treats bad records: ``"strict"`` raises, ``"lenient"`` rejects and reports."""


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing wrong with one record of an input.

    Parameters
    ----------
    source
        File name (or ``"<frame>"`` for in-memory tables).
    location
        Where in the source: ``"line 17"``, ``"row 3"``, ``"session s12"``.
    field
        Dotted path of the offending field (``"queries[2].results[0].rank"``), or ``""``.
    message
        What was wrong and what is allowed.
    value
        The offending value, rendered with ``repr`` (may be ``""``).
    record
        Identifier of the record that is rejected in lenient mode (usually the session id).

    Examples
    --------
    >>> str(Problem("logs.jsonl", "line 17", "rank", "must be >= 1", "0"))
    'logs.jsonl:17: rank: must be >= 1 (got 0)'
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


def line_list(lines: Iterable[int], *, limit: int = LINES_LISTED) -> str:
    """Line numbers for one problem's message: the first ``limit``, then how many more.

    A document repeated on a million lines is one problem; listing every line made a
    message of megabytes.  Every message that lists the lines of one problem uses this.

    Parameters
    ----------
    lines
        The line (or row) numbers, in the order to list them.
    limit
        Numbers written out at most.

    Examples
    --------
    >>> line_list([3, 7])
    '3, 7'
    >>> line_list(range(1, 1_000_001))
    '1, 2, 3, 4, 5, 6, 7, 8, 9, 10 and 999,990 more'
    """
    numbers = lines if isinstance(lines, Sequence | np.ndarray) else list(lines)
    listed = ", ".join(str(int(n)) for n in numbers[:limit])
    extra = len(numbers) - limit
    return listed + (f" and {extra:,} more" if extra > 0 else "")


@dataclass
class LoadReport:
    """What a loader read, accepted and rejected.

    A record is a session (a JSON line, or a session's rows of a flat table; a flat
    row without a session id is a record of its own, always rejected), and
    ``records_read == sessions_accepted + sessions_rejected`` always holds.

    Attributes
    ----------
    source
        The file (or files) read.
    records_read
        Records read, accepted or not.
    rows_read
        Rows of the flat table the sessions were read from.
    sessions_accepted, sessions_rejected
        Sessions kept in the frame, and records dropped (lenient mode).
    problems
        Every problem of every rejected record, in input order.
    repairs
        Every repair lenient mode made to a record it kept (e.g. a document listed
        twice in one result list: the later copy removed), in input order; the
        record stays accepted.
    """

    source: str
    records_read: int = 0
    rows_read: int = 0
    sessions_accepted: int = 0
    sessions_rejected: int = 0
    problems: list[Problem] = field(default_factory=list)
    repairs: list[Problem] = field(default_factory=list)

    @property
    def rejects(self) -> pd.DataFrame:
        """Every problem of every rejected record, as a table (one row per problem)."""
        return _table(self.problems)

    @property
    def repairs_table(self) -> pd.DataFrame:
        """Every repair of a kept record, as a table (one row per repair)."""
        return _table(self.repairs)

    def merge(self, other: LoadReport) -> None:
        """Add the counts and problems of ``other`` (e.g. records rejected while parsing)."""
        self.records_read += other.records_read
        self.rows_read += other.rows_read
        self.sessions_accepted += other.sessions_accepted
        self.sessions_rejected += other.sessions_rejected
        self.problems.extend(other.problems)
        self.repairs.extend(other.repairs)

    def summary_line(self) -> str:
        """``records read = accepted + rejected`` in words.

        Examples
        --------
        >>> report = LoadReport("s.jsonl", records_read=3, sessions_accepted=2, sessions_rejected=1)
        >>> report.summary_line()
        '3 records read = 2 sessions accepted + 1 rejected'
        """
        return (
            f"{self.records_read} records read = {self.sessions_accepted} sessions accepted"
            f" + {self.sessions_rejected} rejected"
        )


def _table(problems: list[Problem]) -> pd.DataFrame:
    cols = ["record", "source", "location", "field", "message", "value"]
    return pd.DataFrame(
        [[p.record, p.source, p.location, p.field, p.message, p.value] for p in problems],
        columns=cols,
    )

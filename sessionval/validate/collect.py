"""Problems of a flat table, collected per row and tied to the session each one rejects.

The vectorised checks of :mod:`sessionval.validate.phases` find the offending rows
of a whole column at once; a :class:`ProblemCollector` turns them into
:class:`~sessionval.problems.Problem` records that name the file row or line, and
remembers which sessions they reject (lenient mode drops those sessions whole).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal

import numpy as np
import numpy.typing as npt
import pandas as pd

from ..errors import JudgmentError, ParseError
from ..problems import Problem

__all__ = [
    "LocatedProblems",
    "ProblemCollector",
    "row_locator",
]


def row_locator(
    kind: Literal["row", "line"], row_locations: npt.ArrayLike | None = None
) -> Callable[[int], str]:
    """``table row -> "row 17"`` or ``"line 17"``, as a message names it.

    Parameters
    ----------
    kind
        ``"row"`` (1-based data row, e.g. Parquet) or ``"line"`` (file line of a
        text table with a header line).
    row_locations
        The file line or row of each table row, when it is not simply its index
        (rows built from JSON-lines records or XML elements).

    Examples
    --------
    >>> row_locator("row")(0), row_locator("line")(0), row_locator("line", [7, 9])(1)
    ('row 1', 'line 2', 'line 9')
    """
    if row_locations is None:
        first = 2 if kind == "line" else 1  # a text table's first data row is line 2
        return lambda row: f"{kind} {row + first}"
    located = np.asarray(row_locations)
    return lambda row: f"{kind} {int(located[row])}"


class LocatedProblems:
    """Problems of one input, collected in input order up to a limit, raised together.

    Each problem names where it is: ``line 7`` of a file, ``row 6`` of a table
    (0-based, as ``DataFrame.iloc``) or ``record 6`` of records given in code.

    Parameters
    ----------
    source
        The file or table name used in every problem.
    limit
        Problems listed at most (the others are counted).
    unit
        What a location counts: ``"line"``, ``"row"`` or ``"record"``.
    container
        What the input is, in the error's first line: ``"file"``, ``"table"``, ...
    """

    def __init__(
        self, source: str, limit: int, *, unit: str = "line", container: str = "file"
    ) -> None:
        self.source = source
        self.limit = max(int(limit), 1)
        self.unit = unit
        self.container = container
        self.found: list[tuple[int, Problem, bool]] = []  # (place, problem, judgment kind)
        self.uncounted = 0  # problems found beyond the limit of their kind, not kept

    def first(self, mask: npt.NDArray[np.bool_]) -> npt.NDArray[np.intp]:
        """Rows of ``mask`` to report: the first ``limit`` (the rest are only counted)."""
        rows = np.flatnonzero(mask)
        self.uncounted += max(rows.size - self.limit, 0)
        return rows[: self.limit]

    def add(
        self, line: int, field: str, message: str, value: str = "", *, judgment: bool = False
    ) -> None:
        """Keep one problem found at ``line`` (a line, row or record; ``judgment``: a grade's)."""
        where = f"{self.unit} {line}"
        self.found.append((line, Problem(self.source, where, field, message, value), judgment))

    def raise_if_any(self, what: str) -> None:
        """Raise one error listing every problem (JudgmentError when all are about grades)."""
        if not self.found:
            return
        ordered = sorted(self.found, key=lambda t: t[0])
        shown = ordered[: self.limit]
        n = len(ordered) + self.uncounted
        more = f" (the first {self.limit} are listed)" if n > self.limit else ""
        head = (
            f"{self.source}: {n} problem{'s' if n != 1 else ''} in the {what} "
            f"{self.container}{more}:"
        )
        text = str(shown[0][1]) if n == 1 else "\n".join([head, *(f"  {p}" for _, p, _ in shown)])
        if all(j for _, _, j in ordered):
            raise JudgmentError(text)
        raise ParseError(text)


class ProblemCollector:
    """Collect problems per row and the sessions they reject.

    Parameters
    ----------
    source
        File name used in every problem.
    session_codes
        Session code of each table row (``-1``: the row has no session id).
    names
        Session id of each code.
    locate
        ``row -> location`` (:func:`row_locator`).
    """

    def __init__(
        self,
        source: str,
        session_codes: npt.NDArray[np.int32],
        names: pd.Index,
        locate: Callable[[int], str],
    ) -> None:
        self.source = source
        self.session_codes = session_codes
        self.names = names
        self.locate = locate
        self.problems: list[Problem] = []
        self.bad_sessions: set[int] = set()

    def add(
        self,
        rows: npt.ArrayLike,
        field_name: str,
        messages: str | Sequence[str],
        values: Sequence[object] | None = None,
    ) -> None:
        """Record one problem per row (in the order given) and mark the rows' sessions bad.

        Parameters
        ----------
        rows
            Table rows (input order, not sorted order).
        field_name
            The column at fault.
        messages
            One message per row, or one message for all of them.
        values
            The offending value of each row (rendered with ``repr``), if any.
        """
        rows_arr = np.asarray(rows, dtype=np.int64)
        texts = [messages] * len(rows_arr) if isinstance(messages, str) else messages
        for k, row in enumerate(rows_arr.tolist()):
            code = int(self.session_codes[row])
            if code >= 0:  # a row without a session id is dropped with its own problem
                self.bad_sessions.add(code)
            self.problems.append(
                Problem(
                    source=self.source,
                    location=self.locate(row),
                    field=field_name,
                    message=texts[k],
                    value="" if values is None else repr(values[k]),
                    record=str(self.names[code]) if code >= 0 else "",
                )
            )

"""The one problem collector of every input: :class:`ProblemCollector`.

The vectorised checks find the offending rows of a whole column at once; a
:class:`ProblemCollector` turns them into :class:`~sessionval.problems.Problem`
records that name the file line, the table row or the record, keeps the first
``limit`` of each check (the others are counted), and raises them together in input
order.  Given the session of each row (a flat table,
:mod:`sessionval.validate.phases`), it also remembers which sessions they reject
(lenient mode drops those sessions whole); a file without sessions (qrels, runs, the
tables of a reader before its flat table) has none.
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


class ProblemCollector:
    """Problems of one input, by line, row or record, and the sessions they reject.

    Each problem names where it is: ``line 7`` of a file, ``row 6`` of a table
    (0-based, as ``DataFrame.iloc``) or ``record 6`` of records given in code.

    Parameters
    ----------
    source
        The file or table name used in every problem.
    session_codes
        Session code of each table row (``-1``: the row has no session id), for
        :meth:`add`; ``None``: an input without sessions.
    names
        Session id of each code.
    locate
        ``row -> location`` of :meth:`add` (:func:`row_locator`; default
        ``"<unit> <row>"``).
    limit
        Problems of one check listed at most (:meth:`first`), and problems listed by
        :meth:`raise_if_any` (the others are counted).
    unit
        What a location counts: ``"line"``, ``"row"`` or ``"record"``.
    container
        What the input is, in the error's first line: ``"file"``, ``"table"``, ...
    into
        The list to keep the problems in (a :class:`~sessionval.problems.LoadReport`'s,
        for a reader that reports as it streams); a new one by default.

    Examples
    --------
    >>> p = ProblemCollector("q.txt", limit=5)
    >>> p.add_at(3, "grade", "must be an integer", "'x'")
    >>> p.add_at(2, "", "qrels line has 3 fields, expected 4")
    >>> [str(x) for x in p.in_order()]
    ['q.txt:2: qrels line has 3 fields, expected 4', "q.txt:3: grade: must be an integer (got 'x')"]
    """

    def __init__(
        self,
        source: str,
        session_codes: npt.NDArray[np.int32] | None = None,
        names: pd.Index | None = None,
        locate: Callable[[int], str] | None = None,
        *,
        limit: int = 50,
        unit: str = "line",
        container: str = "file",
        into: list[Problem] | None = None,
    ) -> None:
        self.source = source
        self.session_codes = session_codes
        self.names = names if names is not None else pd.Index([], dtype=object)
        self.locate: Callable[[int], str] = (
            locate if locate is not None else (lambda row: f"{unit} {row}")
        )
        self.limit = max(int(limit), 1)
        self.unit = unit
        self.container = container
        self.problems: list[Problem] = [] if into is None else into
        self._before = len(self.problems)  # problems the list held before this collector
        self.bad_sessions: set[int] = set()
        self.uncounted = 0  # problems found beyond the limit of their check, not kept
        self._places: list[int] = []  # where each problem is, for the input order
        self._judgment: list[bool] = []  # whether each problem is about a grade

    def first(self, mask: npt.NDArray[np.bool_]) -> npt.NDArray[np.intp]:
        """Rows of ``mask`` to report: the first ``limit`` (the rest are only counted)."""
        rows = np.flatnonzero(mask)
        self.uncounted += max(rows.size - self.limit, 0)
        return rows[: self.limit]

    def add(
        self,
        rows: npt.ArrayLike,
        field_name: str,
        messages: str | Sequence[str],
        values: Sequence[object] | None = None,
    ) -> None:
        """Record one problem per table row (in the order given) and mark the rows' sessions bad.

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
        codes = self.session_codes
        for k, row in enumerate(rows_arr.tolist()):
            code = -1 if codes is None else int(codes[row])
            if code >= 0:  # a row without a session id is dropped with its own problem
                self.bad_sessions.add(code)
            self._keep(
                row,
                Problem(
                    source=self.source,
                    location=self.locate(row),
                    field=field_name,
                    message=texts[k],
                    value="" if values is None else repr(values[k]),
                    record=str(self.names[code]) if code >= 0 else "",
                ),
            )

    def add_at(
        self,
        place: int | None,
        field: str,
        message: str,
        value: str = "",
        *,
        column: int | None = None,
        record: str = "",
        judgment: bool = False,
    ) -> None:
        """Keep one problem found at ``place`` (a line, row or record; ``judgment``: a grade's).

        ``value`` is shown as given (already ``repr``-ed, or the text as written);
        ``column`` makes the location ``line 7:12``; ``place=None``: the problem is
        about the whole input (no location; listed first).
        """
        where = "" if place is None else f"{self.unit} {place}"
        if column is not None and place is not None:
            where += f":{column}"
        problem = Problem(self.source, where, field, message, value, record)
        self._keep(-1 if place is None else place, problem, judgment)

    def _keep(self, place: int, problem: Problem, judgment: bool = False) -> None:
        self.problems.append(problem)
        self._places.append(place)
        self._judgment.append(judgment)

    def in_order(self) -> list[Problem]:
        """Every problem kept, in input order (by place; ties in the order found)."""
        mine = self.problems[self._before :]
        order = sorted(range(len(mine)), key=self._places.__getitem__)
        return [mine[i] for i in order]

    def raise_if_any(self, what: str) -> None:
        """Raise one error listing every problem (JudgmentError when all are about grades).

        ``what`` names the input in the error's first line (``"qrels"``: "... in the
        qrels file").
        """
        ordered = self.in_order()
        if not ordered:
            return
        shown = ordered[: self.limit]
        n = len(ordered) + self.uncounted
        more = f" (the first {self.limit} are listed)" if n > self.limit else ""
        head = (
            f"{self.source}: {n} problem{'s' if n != 1 else ''} in the {what} "
            f"{self.container}{more}:"
        )
        text = str(shown[0]) if n == 1 else "\n".join([head, *(f"  {p}" for p in shown)])
        if all(self._judgment):
            raise JudgmentError(text)
        raise ParseError(text)

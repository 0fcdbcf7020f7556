"""After the checks of the flat load: raise the problems (strict) or pick the rows to keep."""

from __future__ import annotations

import numpy as np

from .._types import BoolArray
from ..errors import raise_if_any
from ..problems import LoadReport, Mode
from .order import RowOrder, SessionRows

__all__ = ["settle"]


def settle(
    rows: SessionRows,
    order: RowOrder,
    *,
    mode: Mode,
    max_problems: int,
    raise_problems: bool = True,
) -> tuple[LoadReport, BoolArray | None]:
    """Raise every problem (strict), or pick the sorted rows to keep (lenient).

    With ``raise_problems=False`` strict mode does not raise either: the caller
    raises the report's problems together with its own.

    Returns
    -------
    (LoadReport, keep)
        ``keep`` marks the sorted rows of accepted sessions, ``None`` when all are kept.

    Raises
    ------
    ValidationFailed
        Strict mode and at least one problem (up to ``max_problems`` listed).
    """
    coll = rows.coll
    # a row without a session id belongs to no session: it is a record of its own, read and
    # rejected (with its "is required" problem), so that the books count every row
    n_orphans = int(np.count_nonzero(rows.missing_session))
    report = LoadReport(
        source=rows.source, records_read=len(rows.names) + n_orphans, rows_read=rows.n_rows
    )
    if mode == "strict" and raise_problems:
        raise_if_any(coll.problems, limit=max_problems)
    # drop every row of a rejected session (and rows without a session)
    keep: BoolArray | None = None
    if coll.bad_sessions or n_orphans:
        bad_codes = np.fromiter(coll.bad_sessions, dtype=np.int64, count=len(coll.bad_sessions))
        bad_session = np.zeros(len(rows.names) + 1, dtype=bool)  # last slot: rows without a session
        bad_session[bad_codes] = True
        bad_session[-1] = True
        keep = ~bad_session[order.session_sorted]
    report.problems = coll.problems
    report.sessions_rejected = len(coll.bad_sessions) + n_orphans
    report.sessions_accepted = len(rows.names) - len(coll.bad_sessions)
    return report, keep

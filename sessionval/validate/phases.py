"""The checks of :func:`~sessionval.validate.flat.frame_from_flat`, phase after phase.

Each phase is a function of its own module that reads a few columns of the flat table,
checks the study's rules on them for all rows at once and returns a small frozen result:
reading and ordering rows (:mod:`~sessionval.validate.order`), the session rules
(:mod:`~sessionval.validate.session_rules`), the result-list rules
(:mod:`~sessionval.validate.list_rules`) and the values
(:mod:`~sessionval.validate.values`).  :func:`check_flat` runs them in the order of
:data:`~sessionval.validate.flat.LOAD_PHASES` and drops each result after the last phase
that reads it, which keeps the peak memory of a million-session load near the size of
the frame it builds; :class:`Checked` holds what the tables are built from.
:func:`~sessionval.validate.settle.settle` then raises (strict) or picks the sessions to
keep (lenient), and :func:`~sessionval.validate.assemble.build_frame` builds the tables.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
import pandas as pd

from ..models.judgments import GradeScale
from .list_rules import ListChecks, check_results
from .order import Ranks, RowKeys, RowOrder, SessionRows, order_rows, read_ranks, read_sessions
from .session_rules import SessionChecks, check_sessions
from .sources import Columns
from .values import QueryValues, RowValues, read_query_values, read_result_values

__all__ = ["Checked", "check_flat"]


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Checked:
    """The results of the check phases that the tables are built from.

    ``keys`` (query position, empty rows, rank present per input row) is kept only when
    a document repeats in a list: the lenient repair reads the positions.
    """

    rows: SessionRows
    ranks: Ranks
    order: RowOrder
    sessions: SessionChecks
    lists: ListChecks
    row_values: RowValues
    query_values: QueryValues
    keys: RowKeys | None


def check_flat(
    flat: pd.DataFrame | Columns,
    *,
    source: str | None,
    location_kind: Literal["row", "line"],
    row_locations: npt.NDArray[np.integer[Any]] | None,
    user_grade_scale: GradeScale | None,
    max_rank: int | None,
    tick: Callable[[str], None],
    phases: tuple[str, ...],
) -> Checked:
    """Run the check phases on ``flat``, calling ``tick`` with each of ``phases`` as it starts.

    Raises
    ------
    InputFormatError
        A required column is missing.
    ParseError
        The table has no rows.
    """
    tick(phases[0])
    rows = read_sessions(
        flat, source=source, location_kind=location_kind, row_locations=row_locations
    )
    tick(phases[1])
    ranks, keys = read_ranks(rows)
    order, bounds = order_rows(rows, ranks, keys)
    tick(phases[2])
    sessions = check_sessions(rows, order, bounds)
    # the sorted rows' positions and session starts are read by no later phase
    query_start = bounds.query_start
    del bounds
    tick(phases[3])
    lists = check_results(rows, ranks, keys, order, query_start)
    # the query starts are read by no later phase, the rows' keys only by the lenient
    # repair of repeated documents
    del query_start
    kept_keys = keys if lists.repeated_docs else None
    del keys
    tick(phases[4])
    values = read_result_values(rows, user_grade_scale)
    tick(phases[5])
    queries = read_query_values(rows, order, lists.n_results, max_rank)
    return Checked(rows, ranks, order, sessions, lists, values, queries, kept_keys)

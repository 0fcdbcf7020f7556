"""Phase "checking sessions" of :func:`~sessionval.validate.flat.frame_from_flat`.

One user, topic and system per session, and query positions ``1..n`` within the int16
range of the frame (:mod:`sessionval.rules`).  :func:`check_sessions` returns a
:class:`SessionChecks`: the entities of each session and the session and position of
each query, per session or per query (small), kept until the tables are built.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt
import pandas as pd

from ..frame import FLAT_COLUMNS
from ..rules import check_one_to_n
from .fields import as_category, blank_rows, take_rows
from .ids import strip_ids
from .order import Boundaries, RowOrder, SessionRows, report_blank

__all__ = [
    "ENTITY_COLUMNS",
    "MAX_QUERY_POS",
    "SessionChecks",
    "check_sessions",
]

#: the session-level ids besides ``session_id`` (user, topic, system): one value per session
ENTITY_COLUMNS: Final = tuple(
    c.name
    for c in FLAT_COLUMNS
    if c.level == "session" and c.kind == "id" and c.name != "session_id"
)

#: the largest query position (and number of queries in a session): the frame stores int16
MAX_QUERY_POS: Final = int(np.iinfo(np.int16).max)


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class SessionChecks:
    """What the checked sessions give the tables."""

    entity_at_start: dict[str, pd.Series]  # user, topic, system at each session's first row
    q_session: npt.NDArray[np.int32]  # session code of each query
    q_pos: npt.NDArray[np.int32]  # position of each query


def check_sessions(rows: SessionRows, order: RowOrder, bounds: Boundaries) -> SessionChecks:
    """Phase "checking sessions": one user, topic and system per session; positions 1..n."""
    entity_at_start = {name: _one_per_session(rows, order, bounds, name) for name in ENTITY_COLUMNS}
    q_session = order.session_sorted[order.q_first_sorted]
    q_pos = bounds.positions_sorted[order.q_first_sorted]
    coll, q_first = rows.coll, order.q_first
    v = check_one_to_n(q_pos, q_session, what="query position")
    if v:
        coll.add(q_first[v.rows], "query_pos", v.messages, q_pos[v.rows].tolist())
    # positions (and so queries per session) are stored in 16 bits: beyond, they would wrap;
    # one problem per session, at its first query beyond the limit
    beyond = np.flatnonzero(q_pos > MAX_QUERY_POS)
    if len(beyond):
        _, first = np.unique(q_session[beyond], return_index=True)
        qi = beyond[first]
        coll.add(
            q_first[qi],
            "query_pos",
            f"must be at most {MAX_QUERY_POS} (query positions and queries per session are "
            "stored in 16 bits)",
            q_pos[qi].tolist(),
        )
    return SessionChecks(entity_at_start, q_session, q_pos)


def _one_per_session(
    rows: SessionRows, order: RowOrder, bounds: Boundaries, name: str
) -> pd.Series:
    """The column's value at each session's first row; a row that differs is a problem."""
    fast = _one_per_session_on_codes(rows, order, bounds, name)
    if fast is not None:
        return fast
    src, coll = rows.src, rows.coll
    col = as_category(src.column(name))
    report_blank(coll, blank_rows(col), name, src)
    codes = col.cat.codes.to_numpy()
    miss = (codes < 0) & ~rows.missing_session
    if miss.any():
        coll.add(np.flatnonzero(miss), name, "is required")
    in_order = take_rows(codes, order.order)
    sc = order.session_sorted
    change = np.zeros(rows.n_rows, dtype=bool)
    change[1:] = (sc[1:] == sc[:-1]) & (in_order[1:] != in_order[:-1])
    del in_order
    if change.any():
        at = order.input_rows(np.flatnonzero(change))
        coll.add(
            at,
            name,
            f"differs from an earlier row of the same session (one {name[:-3]} per session)",
            col.iloc[at].astype(str).tolist(),
        )
    at_start: pd.Series = col.iloc[order.s_first].reset_index(drop=True)
    return at_start


def _one_per_session_on_codes(
    rows: SessionRows, order: RowOrder, bounds: Boundaries, name: str
) -> pd.Series | None:
    """:func:`_one_per_session` on the dictionary codes of a Parquet column, when all is well.

    Rows are compared by their codes into the row groups' dictionaries (equal code:
    equal value); values are looked at only where the code changes within a session
    (a session crossing a row group, or a dictionary listing a value twice) and at the
    sessions' first rows.  The categories are the used values, stripped, in the order of
    their first dictionary entry: those :func:`as_category` gives, so the sessions table
    is the same.  ``None`` (the caller takes the full path, which reports) when rows are
    not in order, a session id or a value is missing, a value is blank or one differs
    within a session.
    """
    entry_codes = getattr(rows.src, "entry_codes", None)
    if entry_codes is None or order.order is not None or rows.missing_session.any():
        return None
    found = entry_codes(name)
    if found is None:
        return None
    codes, dictionary = found
    if bool((codes < 0).any()):
        return None
    # rows whose code differs from the row before in the same session
    cand = np.flatnonzero((codes[1:] != codes[:-1]) & ~bounds.session_start[1:]) + 1
    at_first = codes[order.s_first]
    before, after = codes[cand - 1], codes[cand]
    del codes
    # every used entry is at a session's first row or where the code changes
    used = np.unique(np.concatenate([at_first, after]))
    import pyarrow as pa

    values = pd.Index(
        strip_ids(pd.Series(dictionary.take(pa.array(used, type=pa.int64())).to_pandas())),
        dtype="string",
    )
    if bool((values == "").any()):
        return None
    value_codes, categories = pd.factorize(values, sort=False)
    canon = value_codes.astype(np.int32)
    if len(cand) and bool(
        (canon[np.searchsorted(used, before)] != canon[np.searchsorted(used, after)]).any()
    ):
        return None
    codes_at_first = canon[np.searchsorted(used, at_first)]
    return pd.Series(
        pd.Categorical.from_codes(codes_at_first, categories=pd.Index(categories, dtype="string"))
    )

"""The canonical id order of a study: of ids, of categories, of a whole frame.

:func:`id_order` is the one rule (numeric when every id is digits, else code points);
:func:`in_id_order` puts a :class:`~sessionval.frame.SessionFrame` in it, the order every
evaluation scores.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import TYPE_CHECKING, Final

import numpy as np
import pandas as pd

from ..kernels.segments import gather_ranges

if TYPE_CHECKING:
    from .tables import SessionFrame

__all__ = [
    "ENTITY_IDS",
    "category_order",
    "id_order",
    "in_id_order",
    "ratings_last",
    "recoded",
    "sorted_categories",
]


def ratings_last(columns: Iterable[object]) -> list[str]:
    """Column names in a frame's order: the others as given, then ``rating_*`` sorted by name.

    The sessions table has the same columns in the same order whatever the input's
    format, column order or partitioning.

    >>> ratings_last(["session_id", "rating_z", "user_id", "rating_a"])
    ['session_id', 'user_id', 'rating_a', 'rating_z']
    """
    names = [str(c) for c in columns]
    ratings = [c for c in names if c.startswith("rating_")]
    return [c for c in names if c not in ratings] + sorted(ratings)


def id_order(ids: Iterable[str] | pd.Index | np.ndarray) -> np.ndarray:
    """Positions that sort ``ids`` into the canonical id order.

    Numeric order when every id is a run of decimal digits (``"2"`` before ``"10"``;
    equal numbers by their text, ``"07"`` before ``"7"``), else the order of Unicode
    code points (``"S10"`` before ``"S2"``).  The order depends on the set of ids
    alone, never on the order in which they were read: it is the order of sessions
    in every table of an evaluation, and of the categories of every id column of
    :meth:`SessionFrame.in_id_order`.

    Examples
    --------
    >>> id_order(["10", "9", "007", "7"]).tolist()
    [2, 3, 1, 0]
    >>> id_order(["s10", "s9", "S1"]).tolist()
    [2, 0, 1]
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    if isinstance(ids, pd.Index | pd.Series) and isinstance(ids.dtype, pd.StringDtype):
        text = pa.array(ids.array)  # Arrow-backed strings: no Python string per id
    else:
        text = pa.array(np.asarray(ids, dtype=object), type=pa.string())
    if len(text) and pc.all(pc.match_substring_regex(text, r"^[0-9]+$")).as_py():
        digits = pc.utf8_ltrim(text, characters="0")
        table = pa.table({"n": pc.utf8_length(digits), "d": digits, "t": text})
        keys = [("n", "ascending"), ("d", "ascending"), ("t", "ascending")]
    else:
        table, keys = pa.table({"t": text}), [("t", "ascending")]
    order: np.ndarray = pc.sort_indices(table, sort_keys=keys).to_numpy().astype(np.int64)
    return order


ENTITY_IDS: Final[tuple[tuple[str, str], ...]] = (
    ("sessions", "user_id"),
    ("sessions", "topic_id"),
    ("sessions", "system_id"),
    ("queries", "qrels_id"),
    ("results", "doc_id"),
)
"""Id columns (besides ``session_id``) whose categories :meth:`SessionFrame.in_id_order` sorts."""


def category_order(col: pd.Series) -> np.ndarray | None:
    """Positions that put the categories of ``col`` in id order, None when they already are."""
    order = id_order(col.cat.categories.astype(str))
    return None if np.array_equal(order, np.arange(order.size)) else order


def recoded(col: pd.Series, order: np.ndarray) -> pd.Series:
    """The categorical ``col`` with its categories taken in ``order`` (the same values)."""
    # new code of each old code, and -1 (missing) stays -1 through the appended slot; one
    # NumPy gather instead of pandas' recode (which looks every category up again)
    codes = col.cat.codes.to_numpy()
    new_code = np.empty(order.size + 1, dtype=codes.dtype)
    new_code[order] = np.arange(order.size, dtype=codes.dtype)
    new_code[-1] = -1
    dtype = pd.CategoricalDtype(col.cat.categories[order], ordered=col.cat.ordered)
    codes_in_order = pd.Categorical.from_codes(new_code[codes], dtype=dtype, validate=False)
    return pd.Series(codes_in_order, index=col.index, name=col.name, copy=False)


def sorted_categories(col: pd.Series) -> pd.Series | None:
    """The categorical ``col`` with its categories in id order, None when they already are."""
    order = category_order(col)
    return None if order is None else recoded(col, order)


def in_id_order(frame: SessionFrame) -> SessionFrame:
    """The same study with sessions in id order: what every evaluation scores.

    Sessions (and with them their queries and results) are sorted by
    :func:`id_order` of ``session_id``; the categories of ``session_id`` and of the
    other id columns (:data:`ENTITY_IDS`) are put in id order, the ``rating_*``
    columns in name order and the ``users``/``topics``/``systems`` tables by id.
    So the same sessions read in any line order, file split or format give the
    same frame, and every table, sum and mean computed from it is bit for bit
    the same.  Returns ``frame`` when the frame is already in that order (no copy).
    """
    sessions = frame.sessions
    sid = sessions["session_id"]
    cats = sid.cat.categories
    cat_order = id_order(cats.astype(str))
    new_code = np.empty(cat_order.size, dtype=np.int64)
    new_code[cat_order] = np.arange(cat_order.size)
    s_codes = sid.cat.codes.to_numpy().astype(np.int64)
    s_new = new_code[s_codes] if s_codes.size else s_codes
    s_order = np.argsort(s_new, kind="stable")
    sorted_cols = ratings_last(sessions.columns)
    q_codes = frame.queries["session_id"].cat.codes.to_numpy().astype(np.int64)
    q_new = new_code[q_codes] if q_codes.size else q_codes
    moved_s = not np.array_equal(s_order, np.arange(s_order.size))
    moved_q = bool(np.any(np.diff(q_new) < 0))
    renumbered = not np.array_equal(cat_order, np.arange(cat_order.size))
    # each id column's category order is found once (sorting a million document ids
    # is the costly part) and applied to the rows where they end up
    orders = {(table, col): category_order(getattr(frame, table)[col]) for table, col in ENTITY_IDS}
    changed = [k for k, v in orders.items() if v is not None]
    extra = {}
    for name, key in (("users", "user_id"), ("topics", "topic_id"), ("systems", "system_id")):
        tab: pd.DataFrame = getattr(frame, name)
        if key in tab.columns and len(tab) > 1:
            o = id_order(tab[key].astype(str))
            if not np.array_equal(o, np.arange(o.size)):
                extra[name] = tab.iloc[o].reset_index(drop=True)
    if not (moved_s or moved_q or renumbered or changed or extra) and sorted_cols == list(
        sessions.columns
    ):
        return frame
    if moved_s:
        sessions = sessions.iloc[s_order].reset_index(drop=True)
    sessions = sessions.copy(deep=False)  # columns are replaced below, never written into
    queries, results = frame.queries.copy(deep=False), frame.results
    if moved_q:
        # a stable sort keeps each session's queries in order; results move by query
        q_take = np.argsort(q_new, kind="stable")
        r_off = frame.query_offsets()
        r_take = gather_ranges(r_off[:-1][q_take], np.diff(r_off)[q_take])
        queries = frame.queries.iloc[q_take].reset_index(drop=True)
        results = results.iloc[r_take].reset_index(drop=True)
        n_res = queries["n_results"].to_numpy(dtype=np.int64)
        results["query_idx"] = np.repeat(np.arange(len(queries), dtype=np.int32), n_res)
    elif renumbered or ("results", "doc_id") in changed:
        results = results.copy(deep=False)
    if renumbered:
        for part in (sessions, queries, results):
            part["session_id"] = recoded(part["session_id"], cat_order)
    tables = {"sessions": sessions, "queries": queries, "results": results}
    for name, col in changed:
        order = orders[name, col]
        if order is not None:
            tables[name][col] = recoded(tables[name][col], order)
    return replace(
        frame,
        sessions=sessions[sorted_cols],
        queries=queries,
        results=results,
        users=extra.get("users", frame.users),
        topics=extra.get("topics", frame.topics),
        systems=extra.get("systems", frame.systems),
    )

"""Phases "reading clicks and grades" and "reading queries and sessions" of the flat load.

:func:`read_result_values` reads the per-row values (clicks, dwell, the searchers' own
grades) into a :class:`RowValues`, kept until the results table takes them;
:func:`read_query_values` reads what is logged once per query or session (scan depth,
times, ids, ratings) at their first rows into a :class:`QueryValues`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import numpy.typing as npt
import pandas as pd

from .._types import IntArray
from ..models.judgments import GradeScale
from ..rules import check_in_levels, scan_depth_fix
from .fields import missing_times, parse_integers, parse_numbers, parse_times
from .ids import strip_ids
from .order import RowOrder, SessionRows

__all__ = [
    "MAX_GRADE",
    "MIN_GRADE",
    "QueryValues",
    "RowValues",
    "read_query_values",
    "read_result_values",
]

#: the searcher grades allowed: grades are int16 wherever they are integers
MIN_GRADE: Final = int(np.iinfo(np.int16).min)
MAX_GRADE: Final = int(np.iinfo(np.int16).max)

#: row-level values are float32, query- and session-level ones float64
Floats = npt.NDArray[np.floating[Any]]


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class RowValues:
    """Per input row: clicks (int16), dwell and the searcher's grade (float32); ``None``: absent."""

    clicks: npt.NDArray[np.int16] | None
    dwell: Floats | None
    user_grade: Floats | None


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class QueryValues:
    """Per query or per session, read at its first row."""

    scan: Floats | None  # scan depth per query (NaN: not logged)
    q_time: pd.Series
    s_start: pd.Series
    s_end: pd.Series
    ratings: dict[str, Floats]  # rating_<name> per session, by name
    query_keys: dict[str, pd.Series]  # query_id, qrels_id: stripped, per query


def read_result_values(rows: SessionRows, user_grade_scale: GradeScale | None) -> RowValues:
    """Phase "reading clicks and grades": clicks, dwell and the searchers' own grades.

    Row-level values are float32 (exact for the values they hold) and clicks int16.
    """
    src, coll = rows.src, rows.coll
    clicks = None
    if "clicks" in src:
        clicks, _ = parse_integers(
            src.column("clicks"),
            "clicks",
            coll,
            fill=0,
            nullable_rows=np.ones(rows.n_rows, dtype=bool),
            dtype=np.int16,
        )
    dwell = _row_numbers(rows, "dwell", integer=False)
    ugrade = _user_grades(rows)
    for name, arr in (("clicks", clicks), ("dwell", dwell)):
        if arr is not None:
            neg = arr < 0
            if neg.any():
                at = np.flatnonzero(neg)
                coll.add(at, name, "must be >= 0", arr[at].tolist())
    if ugrade is not None and user_grade_scale is not None:
        v = check_in_levels(ugrade, user_grade_scale.grades, what="user_grade")
        if v:
            coll.add(v.rows, "user_grade", v.messages)
    if clicks is not None:
        too_many = clicks > np.iinfo(np.int16).max
        if too_many.any():
            at = np.flatnonzero(too_many)
            coll.add(at, "clicks", "must be <= 32767", clicks[at].tolist())
        clicks = clicks.clip(0, np.iinfo(np.int16).max).astype(np.int16, copy=False)
    return RowValues(clicks, dwell, ugrade)


def _user_grades(rows: SessionRows) -> Floats | None:
    """Searcher grades as float32 (exact for the int16 range), checked before the cast."""
    if "user_grade" not in rows.src:
        return None
    raw = rows.src.column("user_grade")
    if str(raw.dtype) in ("Int8", "Int16", "UInt8"):
        # stored in 16 bits or fewer: within the range, and exact as float32 (no float64 copy)
        return parse_numbers(raw, "user_grade", rows.coll, integer=True, dtype=np.float32)
    grades = parse_numbers(raw, "user_grade", rows.coll, integer=True, dtype=np.float64)
    beyond = (grades < MIN_GRADE) | (grades > MAX_GRADE)  # NaN compares False
    if beyond.any():
        at = np.flatnonzero(beyond)
        rows.coll.add(
            at,
            "user_grade",
            f"must be between {MIN_GRADE} and {MAX_GRADE} (grades are stored in 16 bits)",
            raw.iloc[at].tolist(),
        )
        grades[at] = np.nan
    return grades.astype(np.float32)


def _row_numbers(rows: SessionRows, name: str, *, integer: bool) -> Floats | None:
    if name not in rows.src:
        return None
    return parse_numbers(rows.src.column(name), name, rows.coll, integer=integer, dtype=np.float32)


def read_query_values(
    rows: SessionRows, order: RowOrder, n_results: IntArray, max_rank: int | None
) -> QueryValues:
    """Phase "reading queries and sessions": scan depth, times and ratings, once per query/session.

    ``n_results``: the results of each query.  ``max_rank``: the lists were cut at this
    rank when read, so a logged scan depth beyond a cut list is clipped to it instead of
    reported.
    """
    src, coll = rows.src, rows.coll
    q_first, s_first = order.q_first, order.s_first
    scan = _scan_depths(rows, q_first, n_results, max_rank) if "scan_depth" in src else None
    query_keys = {
        name: _query_ids(rows, name, q_first) for name in ("query_id", "qrels_id") if name in src
    }
    q_time = _times_at(rows, "query_time", q_first)
    s_start = _times_at(rows, "session_start", s_first)
    s_end = _times_at(rows, "session_end", s_first)
    # sorted by name: the sessions table has the same columns in the same order whatever
    # the input format or its column order
    ratings = {
        c: parse_numbers(src.take(c, s_first), c, coll, integer=False, at=s_first)
        for c in sorted(src.names)
        if c.startswith("rating_")
    }
    return QueryValues(scan, q_time, s_start, s_end, ratings, query_keys)


def _query_ids(rows: SessionRows, name: str, q_first: IntArray) -> pd.Series:
    """An optional id column at each query's first row, stripped; a blank one is a problem."""
    raw = rows.src.take(name, q_first).astype("string")
    ids = strip_ids(raw)
    blank = (ids == "").to_numpy(dtype=bool, na_value=False)
    if blank.any():
        qi = np.flatnonzero(blank)
        rows.coll.add(
            q_first[qi],
            name,
            "must not be empty (the id is only whitespace); leave it out for the default",
            raw.iloc[qi].tolist(),
        )
    return ids


def _scan_depths(
    rows: SessionRows, q_first: IntArray, n_res: IntArray, max_rank: int | None
) -> Floats:
    src = rows.src
    scan = parse_numbers(
        src.take("scan_depth", q_first), "scan_depth", rows.coll, integer=True, at=q_first
    )
    over = scan > n_res
    if max_rank is not None:
        cut = over & (n_res >= max_rank)
        scan[cut] = n_res[cut]
        over &= ~cut
    bad = ~np.isnan(scan) & ((scan < 0) | over)
    if bad.any():
        qi = np.flatnonzero(bad)
        rows.coll.add(
            q_first[qi],
            "scan_depth",
            [
                f"must be between 0 and the number of results ({int(n_res[i])}): "
                + scan_depth_fix(int(n_res[i]))
                for i in qi
            ],
            # the values as written (the parsed ones are floats: 2**63 - 1 would not show)
            list(src.take("scan_depth", q_first[qi])),
        )
    return scan


def _times_at(rows: SessionRows, name: str, at: IntArray) -> pd.Series:
    if name not in rows.src:
        return missing_times(len(at))
    return parse_times(rows.src.take(name, at), name, rows.coll, at)

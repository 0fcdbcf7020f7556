"""The integrity rules of a study, written once as vectorised array checks.

The Pydantic models call these functions on one record's small arrays; the bulk
loaders call the very same functions on whole columns (a group code per row).
So the rules cannot drift apart: a million-row Parquet file and a single JSON
session are held to identical constraints with identical messages.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = [
    "Violations",
    "check_in_levels",
    "check_one_to_n",
    "check_unique_within",
    "scan_depth_fix",
]


@dataclass(frozen=True, slots=True)
class Violations:
    """Rows that break a rule: their indices (into the input arrays) and one message each."""

    rows: npt.NDArray[np.int64]
    messages: tuple[str, ...]

    def __bool__(self) -> bool:
        return bool(len(self.rows))

    def __len__(self) -> int:
        return len(self.rows)


_EMPTY = Violations(np.zeros(0, dtype=np.int64), ())


def scan_depth_fix(n_results: int) -> str:
    """How to mend a logged scan depth deeper than the query's results (one phrase).

    The rule (``0 <= scan_depth <= number of results``) is checked by the model and by
    the bulk validator; both say the same thing.

    Examples
    --------
    >>> print(scan_depth_fix(0))  # doctest: +NORMALIZE_WHITESPACE
    a query without results scanned nothing: leave scan_depth empty or 0, or log its
    results; or --lenient to reject the session
    """
    what = (
        "a query without results scanned nothing: leave scan_depth empty or 0, or log its results"
        if n_results == 0
        else "log the results the searcher scanned, lower scan_depth, or leave it empty "
        "(the scan depth then goes unused)"
    )
    return f"{what}; or --lenient to reject the session"


def _as_group(group: npt.ArrayLike | None, n: int) -> npt.NDArray[np.integer[Any]]:
    if group is None:
        return np.zeros(n, dtype=np.int32)
    g = np.asarray(group)
    # keep native integer widths: the bulk path passes int32 codes for hundreds of millions
    # of rows, and an int64 copy of each would double the loader's memory
    return g if np.issubdtype(g.dtype, np.integer) else g.astype(np.int64)


def _as_ints(values: npt.ArrayLike) -> npt.NDArray[np.integer[Any]]:
    v = np.asarray(values)
    return v if np.issubdtype(v.dtype, np.integer) else v.astype(np.int64)


def check_one_to_n(
    values: npt.ArrayLike,
    group: npt.ArrayLike | None = None,
    *,
    what: str = "position",
    presorted: bool = False,
) -> Violations:
    """Within each group the values must be exactly ``1..n`` (no gaps, no repeats).

    Used for query positions within a session and ranks within a result list.
    ``presorted=True`` promises rows already ordered by (group, value), which
    skips the sort on the bulk path.  Reports the first offending row of each
    bad group (after a gap every later
    value is off by one, so one message per group is the useful one).

    Examples
    --------
    >>> check_one_to_n([1, 2, 3]).messages
    ()
    >>> check_one_to_n([1, 3, 4], what="rank").messages
    ('rank 3 leaves a gap: expected 2 (ranks must be 1..n without gaps)',)
    >>> check_one_to_n([1, 1], what="rank").messages
    ('rank 1 appears twice (ranks must be 1..n without gaps)',)
    """
    v = _as_ints(values)
    if not len(v):
        return _EMPTY
    g = _as_group(group, len(v))
    order = None if presorted else np.lexsort((v, g))
    gs, vs = (g, v) if order is None else (g[order], v[order])
    starts = np.ones(len(vs), dtype=bool)
    starts[1:] = gs[1:] != gs[:-1]
    # position within the group: running index minus the index where the group started
    idx: npt.NDArray[np.int64] = np.arange(len(vs), dtype=np.int64)
    run_start = np.maximum.accumulate(np.where(starts, idx, 0))
    expected = idx - run_start + 1
    del idx, run_start
    bad = vs != expected
    if not bad.any():
        return _EMPTY
    bad_idx = np.flatnonzero(bad)
    # first bad row per group only
    first = bad_idx[np.unique(gs[bad_idx], return_index=True)[1]]
    msgs: list[str] = []
    for i in first.tolist():
        val, exp = int(vs[i]), int(expected[i])
        plural = f"{what}s must be 1..n without gaps"
        if val < 1:
            msgs.append(f"{what} must be >= 1, got {val} ({plural})")
        elif i > 0 and not starts[i] and vs[i - 1] == val:
            msgs.append(f"{what} {val} appears twice ({plural})")
        else:
            msgs.append(f"{what} {val} leaves a gap: expected {exp} ({plural})")
    rows = first if order is None else order[first]
    return Violations(rows.astype(np.int64), tuple(msgs))


def check_unique_within(
    values: npt.ArrayLike,
    group: npt.ArrayLike | None = None,
    *,
    what: str = "document",
    presorted_groups: bool = False,
) -> Violations:
    """Within each group a value may occur at most once; every repeat is reported.

    ``values`` are non-negative integer codes (e.g. categorical codes of document
    ids).  With ``presorted_groups=True`` (rows of a group contiguous, groups
    ascending) one stable sort of a packed 64-bit key replaces the lexsort: the
    already ordered blocks make it close to linear.

    Examples
    --------
    >>> check_unique_within([5, 7, 5]).rows.tolist()
    [2]
    """
    v = _as_ints(values)
    if not len(v):
        return _EMPTY
    g = _as_group(group, len(v))
    if presorted_groups and len(v) and v.min() >= 0 and v.max() < (1 << 32):
        key = (g.astype(np.int64) << 32) | v.astype(np.int64)
        # fast path: a plain sort (no index) finds whether any repeat exists at all
        ordered = np.sort(key, kind="stable")
        if not (ordered[1:] == ordered[:-1]).any():
            return _EMPTY
        order = np.argsort(key, kind="stable")
    else:
        order = np.lexsort((np.arange(len(v)), v, g))
    gs, vs = g[order], v[order]
    rep = np.zeros(len(v), dtype=bool)
    rep[1:] = (gs[1:] == gs[:-1]) & (vs[1:] == vs[:-1])
    if not rep.any():
        return _EMPTY
    rows = np.sort(order[rep]).astype(np.int64)
    msg = f"{what} occurs more than once in the same result list"
    return Violations(rows, (msg,) * len(rows))


def check_in_levels(
    values: npt.ArrayLike, levels: npt.ArrayLike, *, what: str = "grade"
) -> Violations:
    """Every value must be one of ``levels`` (NaN counts as 'no value' and passes).

    Examples
    --------
    >>> check_in_levels([0, 3, 5], [0, 1, 2, 3]).messages
    ('grade 5 is not on the grade scale (allowed: 0, 1, 2, 3)',)
    """
    v = np.asarray(values, dtype=np.float64)
    lv = np.asarray(levels, dtype=np.float64)
    bad = ~np.isin(v, lv) & ~np.isnan(v)
    if not bad.any():
        return _EMPTY
    rows = np.flatnonzero(bad).astype(np.int64)
    allowed = ", ".join(str(int(x)) for x in np.sort(lv))
    msgs = tuple(
        f"{what} {_fmt(v[i])} is not on the grade scale (allowed: {allowed})" for i in rows.tolist()
    )
    return Violations(rows, msgs)


def _fmt(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else repr(float(x))

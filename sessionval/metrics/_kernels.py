"""Pure segment kernels behind the single-query measures (no validation, no I/O).

A *segment layout* is a flat per-row array plus ``offsets`` (int64, ``n + 1``):
segment ``i`` owns rows ``offsets[i]:offsets[i + 1]``.  Every kernel works on all
segments at once with NumPy primitives (``repeat``, ``cumsum``, ``bincount``,
fancy indexing); there is no Python loop per segment.
"""

from __future__ import annotations

from typing import Final, Literal, TypeAlias

import numpy as np
import numpy.typing as npt

FloatArray: TypeAlias = npt.NDArray[np.float64]
IntArray: TypeAlias = npt.NDArray[np.int64]
BoolArray: TypeAlias = npt.NDArray[np.bool_]
Discount: TypeAlias = Literal["jk2008", "jk2002", "jk2002rn", "log2p1", "none"]

DISCOUNTS: Final[tuple[str, ...]] = ("jk2008", "jk2002", "jk2002rn", "log2p1", "none")

__all__ = [
    "DISCOUNTS",
    "Discount",
    "cut",
    "discount",
    "first_true_rank",
    "lengths",
    "ranks",
    "segment_cumsum",
    "segment_ids",
    "segment_sum",
    "take_prefix",
]


def lengths(offsets: IntArray) -> IntArray:
    """Length of each segment."""
    return np.diff(offsets)


def segment_ids(offsets: IntArray) -> IntArray:
    """Segment number of every row."""
    n = offsets.size - 1
    return np.repeat(np.arange(n, dtype=np.int64), np.diff(offsets))


def ranks(offsets: IntArray, seg: IntArray | None = None) -> IntArray:
    """1-based position of every row within its segment."""
    s = segment_ids(offsets) if seg is None else seg
    return np.arange(s.size, dtype=np.int64) - offsets[s] + 1


def segment_sum(values: npt.ArrayLike, seg: IntArray, n: int) -> FloatArray:
    """Sum of ``values`` per segment (0 for an empty segment)."""
    w = np.asarray(values, dtype=np.float64)
    out: FloatArray = np.bincount(seg, weights=w, minlength=n).astype(np.float64, copy=False)
    return out


def segment_cumsum(values: npt.ArrayLike, offsets: IntArray, seg: IntArray) -> FloatArray:
    """Compute a running sum restarting at every segment start.

    Integer-valued inputs (counts, integer gains) are exact; for real values the
    absolute error is bounded by machine epsilon times the global running total.
    """
    v = np.asarray(values, dtype=np.float64)
    if v.size == 0:
        return v.copy()
    cs = np.cumsum(v)
    start = offsets[:-1]
    # total before each segment's first row (for empty segments, unused)
    before = np.concatenate([[0.0], cs])[start]
    out: FloatArray = cs - before[seg]
    return out


def first_true_rank(mask: BoolArray, offsets: IntArray, seg: IntArray) -> IntArray:
    """Rank (1-based) of the first True row of each segment, 0 when there is none."""
    n = offsets.size - 1
    out = np.zeros(n, dtype=np.int64)
    rows = np.flatnonzero(mask)
    if rows.size == 0:
        return out
    s = seg[rows]
    # rows are sorted, so the first occurrence of each segment is its first True row
    first = np.ones(rows.size, dtype=bool)
    first[1:] = s[1:] != s[:-1]
    out[s[first]] = rows[first] - offsets[s[first]] + 1
    return out


def cut(offsets: IntArray, k: int | None) -> tuple[IntArray, IntArray]:
    """Rows (indices) and new offsets keeping the first ``k`` rows of each segment."""
    if k is None:
        return np.arange(int(offsets[-1]), dtype=np.int64), offsets
    kept = np.minimum(np.diff(offsets), k)
    new = np.zeros_like(offsets)
    np.cumsum(kept, out=new[1:])
    # kept rows only: row j of the cut list i is offsets[i] + (j - new[i])
    rows: IntArray = np.arange(int(new[-1]), dtype=np.int64)
    rows += np.repeat(offsets[:-1] - new[:-1], kept)
    return rows, new


def take_prefix(cum: FloatArray, offsets: IntArray, which: IntArray, at: IntArray) -> FloatArray:
    """Value of a within-segment cumulative array at 1-based position ``at``.

    ``cum``/``offsets`` hold one cumulative vector per segment; request ``i`` reads
    segment ``which[i]`` at ``at[i]``, clipped to the segment's length (a cumulative
    vector holds its last value); ``at <= 0`` or an empty segment gives 0.
    """
    start = offsets[which]
    length = offsets[which + 1] - start
    pos = np.minimum(at, length)
    ok = pos > 0
    out = np.zeros(at.shape, dtype=np.float64)
    out[ok] = cum[start[ok] + pos[ok] - 1]
    return out


def discount(rank: IntArray, kind: str, b: float) -> FloatArray:
    """Discount divisor ``d(rank)`` (spec section 2; Järvelin & Kekäläinen 2002, 2008).

    ``jk2008``: 1 + log_b(j); ``jk2002``: 1 for j < b, log_b(j) for j >= b;
    ``jk2002rn``: 1 for j = 1, log_b(j) from j = 2; ``log2p1``: log2(j + 1); ``none``: 1.
    """
    j = np.asarray(rank, dtype=np.float64)
    if kind == "none":
        return np.ones_like(j)
    if kind == "log2p1":
        return np.asarray(np.log2(j + 1.0), dtype=np.float64)
    lb: FloatArray = np.log(j) / np.log(b)
    if kind == "jk2008":
        return 1.0 + lb
    if kind == "jk2002":
        return np.asarray(np.where(j < b, 1.0, lb), dtype=np.float64)
    if kind == "jk2002rn":
        return np.asarray(np.where(j == 1.0, 1.0, lb), dtype=np.float64)
    raise ValueError(f"unknown discount {kind!r}")

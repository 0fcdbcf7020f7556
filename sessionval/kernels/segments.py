"""The segment-kernel library: pure NumPy on the segment layout (no pandas, no validation).

A *segment layout* is a flat per-row array plus ``offsets`` (int64, ``n + 1``):
segment ``i`` owns rows ``offsets[i]:offsets[i + 1]``.  Ranked lists (rows of a
query), session vectors (positions of a session) and ideal vectors (gains of a
judgment key) all use it.  Every kernel works on all segments at once with NumPy
primitives (``repeat``, ``cumsum``, ``bincount``, fancy indexing); there is no
Python loop per segment.  These are the only segment primitives of the package:
measures, session kernels, aggregations and the synthetic generator call them.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from .._types import BoolArray, FloatArray, IntArray

__all__ = [
    "cut_segments",
    "first_true_rank",
    "gather_ranges",
    "offsets_from_counts",
    "segment_blocks",
    "segment_cumsum",
    "segment_first",
    "segment_ids",
    "segment_last",
    "segment_lengths",
    "segment_max",
    "segment_min",
    "segment_nanmean",
    "segment_nansum",
    "segment_ranks",
    "segment_sum",
    "take_prefix",
]


def offsets_from_counts(counts: npt.ArrayLike) -> IntArray:
    """Offsets (``n + 1``, starting at 0) of segments with the given lengths.

    Examples
    --------
    >>> offsets_from_counts([2, 0, 3])
    array([0, 2, 2, 5])
    """
    c = np.asarray(counts, dtype=np.int64)
    off = np.zeros(c.size + 1, dtype=np.int64)
    np.cumsum(c, out=off[1:])
    return off


def gather_ranges(starts: npt.ArrayLike, counts: npt.ArrayLike) -> IntArray:
    """Indices ``starts[i] .. starts[i] + counts[i] - 1`` of every range, in range order.

    The gather that moves whole segments (lists, a query's rows) to new places in one
    vectorised step: ``np.arange(total)`` shifted, range by range, from its place in
    the output to its source ``starts[i]``.

    Examples
    --------
    >>> gather_ranges([5, 0], [2, 3]).tolist()
    [5, 6, 0, 1, 2]
    """
    s = np.asarray(starts, dtype=np.int64)
    c = np.asarray(counts, dtype=np.int64)
    off = offsets_from_counts(c)
    out: IntArray = np.arange(int(off[-1]), dtype=np.int64)
    out += np.repeat(s - off[:-1], c)  # in place: one temporary of the output's size
    return out


def segment_blocks(offsets: IntArray, target_rows: int) -> list[tuple[int, int]]:
    """Ranges ``(s0, s1)`` of whole segments of about ``target_rows`` rows each, in order.

    ``offsets`` (``n_segments + 1``) are the segments' row offsets; a segment longer
    than ``target_rows`` is a range of its own; no segment is split (the engine's
    chunks of whole sessions, a pass over blocks of whole queries).

    Examples
    --------
    >>> segment_blocks(np.array([0, 3, 4, 9, 10]), 4)
    [(0, 2), (2, 3), (3, 4)]
    >>> segment_blocks(np.array([0]), 4)
    []
    """
    n_s = offsets.size - 1
    total = int(offsets[-1])
    cuts = np.searchsorted(offsets, np.arange(target_rows, max(total, 1), target_rows), side="left")
    bounds = np.unique(np.concatenate(([0], cuts, [n_s])))
    return list(zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True))


def segment_lengths(offsets: IntArray) -> IntArray:
    """Length of each segment."""
    return np.diff(offsets)


def segment_ids(offsets: IntArray) -> IntArray:
    """Segment number of every row.

    Examples
    --------
    >>> segment_ids(np.array([0, 2, 2, 5]))
    array([0, 0, 2, 2, 2])
    """
    n = offsets.size - 1
    return np.repeat(np.arange(n, dtype=np.int64), np.diff(offsets))


def segment_ranks(offsets: IntArray, seg: IntArray | None = None) -> IntArray:
    """1-based position of every row within its segment (``seg``: precomputed ids).

    Examples
    --------
    >>> segment_ranks(np.array([0, 2, 2, 5]))
    array([1, 2, 1, 2, 3])
    """
    s = segment_ids(offsets) if seg is None else seg
    return np.arange(s.size, dtype=np.int64) - offsets[s] + 1


def segment_sum(values: npt.ArrayLike, seg: IntArray, n: int) -> FloatArray:
    """Sum of ``values`` per segment id in ``seg`` (0 for an empty segment), as float64.

    ``seg`` need not be sorted: this is also the grouped sum of the aggregations.

    Examples
    --------
    >>> segment_sum([1.0, 2, 3], np.array([0, 0, 2]), 3)
    array([3., 0., 3.])
    """
    w = np.asarray(values, dtype=np.float64)
    out: FloatArray = np.bincount(seg, weights=w, minlength=n).astype(np.float64, copy=False)
    return out


def segment_cumsum(
    values: npt.ArrayLike, offsets: IntArray, seg: IntArray | None = None
) -> FloatArray:
    """Running sum of ``values`` restarting at every segment start, as float64.

    Each segment's running sum starts from 0 at its first row and adds its rows in
    order, so a segment's values are bit for bit those of ``np.cumsum`` of that
    segment alone: they do not depend on the segments before it (their number,
    order or chunking).  (One global ``cumsum`` minus the total before each segment
    would carry the rounding of everything before into every segment.)  Segments
    advance together one row at a time, in blocks of about 65,536 rows that stay in
    the cache: step ``j`` adds row ``j - 1`` to row ``j`` of every segment longer than
    ``j``.  Segments longer than 256 rows are summed one by one with ``np.cumsum``.
    Boolean and integer inputs (counts) are summed in exact int64 arithmetic.  ``seg``
    is accepted for symmetry with the other kernels and unused.

    Examples
    --------
    >>> segment_cumsum(np.array([1.0, 2, 3, 4, 5]), np.array([0, 2, 2, 5]))
    array([ 1.,  3.,  3.,  7., 12.])
    """
    del seg
    raw = np.asarray(values)
    if raw.dtype.kind in "bui" and raw.ndim == 1:  # counts: exact in int64 whatever the order
        return segment_cumsum_int(raw, offsets).astype(np.float64)
    out = np.array(raw, dtype=np.float64)  # a copy; first rows are their own sums
    lengths = np.diff(offsets)
    multi = np.flatnonzero(lengths > 1)
    if multi.size == 0:
        return out
    long = multi[lengths[multi] > _STEP_LENGTH]
    for a, n in zip(offsets[long].tolist(), lengths[long].tolist(), strict=True):
        np.cumsum(out[a : a + n], out=out[a : a + n])
    stepped = np.where(lengths > _STEP_LENGTH, 0, lengths)
    # the other segments step by step, in blocks of consecutive segments that stay in
    # the cache; within a block longest first, so at step j the segments longer than
    # j are a prefix, and row j adds row j - 1 (the same addition as a cumsum's)
    cuts = np.searchsorted(offsets, np.arange(0, out.size, _STEP_BLOCK), side="right") - 1
    cuts = np.unique(np.concatenate((cuts, [lengths.size])))
    for s0, s1 in zip(cuts[:-1].tolist(), cuts[1:].tolist(), strict=True):
        order = np.argsort(-stepped[s0:s1], kind="stable")
        by_length = stepped[s0:s1][order]
        if by_length.size == 0 or by_length[0] < 2:
            continue
        starts = offsets[s0:s1][order]
        active = np.searchsorted(-by_length, -np.arange(int(by_length[0])), side="left")
        for j in range(1, int(by_length[0])):
            rows = starts[: active[j]] + j
            out[rows] += out[rows - 1]
    return out


_STEP_LENGTH = 256
"""Longest segment summed in the vectorised steps; longer ones are summed one by one."""

_STEP_BLOCK = 1 << 16
"""Rows per block of the vectorised steps (512 kB of float64: the block stays in cache)."""


def segment_last(values: npt.ArrayLike, offsets: IntArray) -> FloatArray:
    """Last value of each segment (NaN for an empty segment), as float64.

    Examples
    --------
    >>> segment_last([1.0, 2, 3], np.array([0, 2, 2, 3]))
    array([ 2., nan,  3.])
    """
    v = np.asarray(values, dtype=np.float64)
    out = np.full(offsets.size - 1, np.nan)
    full = np.diff(offsets) > 0
    out[full] = v[offsets[1:][full] - 1]
    return out


def segment_max(values: npt.ArrayLike, offsets: IntArray) -> FloatArray:
    """Largest value of each segment, NaN values left out (NaN: empty or all NaN).

    Examples
    --------
    >>> segment_max([1.0, np.nan, 3, np.nan], np.array([0, 3, 3, 4]))
    array([ 3., nan, nan])
    """
    v = np.asarray(values, dtype=np.float64)
    out = np.full(offsets.size - 1, np.nan)
    full = np.flatnonzero(np.diff(offsets) > 0)
    if full.size:
        # empty segments are skipped: each reduction runs to the next non-empty start
        out[full] = np.fmax.reduceat(v, offsets[full])
    return out


def segment_min(values: npt.ArrayLike, offsets: IntArray) -> FloatArray:
    """Smallest value of each segment, NaN values left out (NaN: empty or all NaN).

    Examples
    --------
    >>> segment_min([1.0, np.nan, 3, np.nan], np.array([0, 3, 3, 4]))
    array([ 1., nan, nan])
    """
    return -segment_max(-np.asarray(values, dtype=np.float64), offsets)


def segment_first(values: npt.ArrayLike, offsets: IntArray) -> FloatArray:
    """First value of each segment (NaN for an empty segment), as float64.

    Examples
    --------
    >>> segment_first([1.0, 2, 3], np.array([0, 2, 2, 3]))
    array([ 1., nan,  3.])
    """
    v = np.asarray(values, dtype=np.float64)
    out = np.full(offsets.size - 1, np.nan)
    full = np.diff(offsets) > 0
    out[full] = v[offsets[:-1][full]]
    return out


def segment_nansum(values: npt.ArrayLike, offsets: IntArray) -> FloatArray:
    """Sum of each segment, NaN values left out (NaN: empty or all NaN), as float64.

    Examples
    --------
    >>> segment_nansum([1.0, np.nan, 3, np.nan], np.array([0, 3, 3, 4]))
    array([ 4., nan, nan])
    """
    v = np.asarray(values, dtype=np.float64)
    n = offsets.size - 1
    seg = segment_ids(offsets)
    ok = ~np.isnan(v)
    total = segment_sum(np.where(ok, v, 0.0), seg, n)
    total[np.bincount(seg, weights=ok, minlength=n) == 0] = np.nan
    return total


def segment_nanmean(values: npt.ArrayLike, offsets: IntArray) -> FloatArray:
    """Mean of each segment, NaN values left out (NaN: empty or all NaN), as float64.

    Examples
    --------
    >>> segment_nanmean([1.0, np.nan, 3, np.nan], np.array([0, 3, 3, 4]))
    array([ 2., nan, nan])
    """
    v = np.asarray(values, dtype=np.float64)
    seg = segment_ids(offsets)
    count = np.bincount(seg, weights=~np.isnan(v), minlength=offsets.size - 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        out: FloatArray = segment_nansum(v, offsets) / count
    return out


def first_true_rank(mask: BoolArray, offsets: IntArray, seg: IntArray) -> IntArray:
    """Rank (1-based) of the first True row of each segment, 0 when there is none.

    Examples
    --------
    >>> off = np.array([0, 3, 5])
    >>> first_true_rank(np.array([False, True, True, False, False]), off, segment_ids(off))
    array([2, 0])
    """
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


def cut_segments(offsets: IntArray, cutoff: int | None) -> tuple[IntArray, IntArray]:
    """Rows (indices) and new offsets keeping the first ``cutoff`` rows of each segment.

    Examples
    --------
    >>> cut_segments(np.array([0, 3, 4]), 2)
    (array([0, 1, 3]), array([0, 2, 3]))
    """
    if cutoff is None:
        return np.arange(int(offsets[-1]), dtype=np.int64), offsets
    kept = np.minimum(np.diff(offsets), cutoff)
    new = offsets_from_counts(kept)
    # kept rows only: row j of the cut list i is offsets[i] + (j - new[i])
    rows: IntArray = np.arange(int(new[-1]), dtype=np.int64)
    rows += np.repeat(offsets[:-1] - new[:-1], kept)
    return rows, new


def take_prefix(cum: FloatArray, offsets: IntArray, which: IntArray, at: IntArray) -> FloatArray:
    """Value of a within-segment cumulative array at 1-based position ``at``.

    ``cum``/``offsets`` hold one cumulative vector per segment; request ``i`` reads
    segment ``which[i]`` at ``at[i]``, clipped to the segment's length (a cumulative
    vector holds its last value); ``at <= 0`` or an empty segment gives 0.

    Examples
    --------
    >>> take_prefix(np.array([1.0, 3, 6]), np.array([0, 3]), np.array([0, 0, 0]),
    ...             np.array([0, 2, 9]))
    array([0., 3., 6.])
    """
    start = offsets[which]
    length = offsets[which + 1] - start
    pos = np.minimum(at, length)
    ok = pos > 0
    out = np.zeros(at.shape, dtype=np.float64)
    out[ok] = cum[start[ok] + pos[ok] - 1]
    return out


def segment_cumsum_int(values: IntArray, offsets: IntArray) -> IntArray:
    """Running sum along axis 0 restarting at every segment start, in exact int64.

    The integer, axis-aware sibling of :func:`segment_cumsum` (which returns float64 of
    a 1-D array): ``values`` may have trailing axes (one running sum per column).  Sums
    are exact whenever each segment's own sums fit int64; the global running sum may
    wrap around, since the difference is taken modulo the same power of two.

    Examples
    --------
    >>> segment_cumsum_int(np.array([[1, 10], [2, 20], [3, 30]]), np.array([0, 2, 2, 3]))
    array([[ 1, 10],
           [ 3, 30],
           [ 3, 30]])
    """
    cs = np.cumsum(values, axis=0, dtype=np.int64)
    # total before each segment's first row (empty segments: unused)
    before = np.concatenate((np.zeros((1, *values.shape[1:]), dtype=np.int64), cs))[offsets[:-1]]
    out: IntArray = cs - np.repeat(before, np.diff(offsets), axis=0)
    return out

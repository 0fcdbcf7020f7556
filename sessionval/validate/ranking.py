"""Ordering a scored run into ranked lists: score order, tie-breaks, duplicate check.

The one place of trec_eval's order (score descending, ties by document id in byte
order, descending): :meth:`RankedLists.from_run` and the runs read as sessions
(:mod:`sessionval.io.runs_as_sessions`) both rank with :func:`run_order`.  It sits
below ``io`` (which may not import ``measures``); :mod:`sessionval.measures.ranking`
re-exports it.  TREC runs usually list each query's documents together, best first;
the helpers detect that in O(n) and otherwise sort whole lists as rows of a padded
matrix, in fixed-size blocks (bounded memory).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final, Literal

import numpy as np
import numpy.typing as npt
import pandas as pd

from .._types import FloatArray, IntArray
from ..kernels.blocks import for_blocks
from ..kernels.segments import gather_ranges, offsets_from_counts
from .list_rules import first_repeated_document

__all__ = [
    "SORT_BLOCK_ROWS",
    "coded_doc_ranks",
    "factorize_ids",
    "first_duplicate",
    "order_within_lists",
    "run_order",
    "string_ranks",
]


def string_ranks(values: pd.Index) -> IntArray:
    """Rank (0-based) of each id in byte order (C ``strcmp``, as trec_eval sorts).

    Examples
    --------
    >>> string_ranks(pd.Index(["b", "B", "a"])).tolist()
    [2, 0, 1]
    """
    if len(values) == 0:
        return np.zeros(0, dtype=np.int64)
    import pyarrow as pa
    import pyarrow.compute as pc

    arr = pa.array(
        np.asarray(values.astype(str), dtype=object)
        if values.dtype == object
        else values.astype(str).array
    )
    order = np.asarray(pc.sort_indices(arr).to_numpy(), dtype=np.int64)
    ranks = np.empty(len(values), dtype=np.int64)
    ranks[order] = np.arange(len(values), dtype=np.int64)
    return ranks


def _id_ranks(codes: npt.NDArray[np.integer], cats: pd.Index) -> IntArray:
    """Byte-order rank (``strcmp``, as trec_eval) of the ids ``cats[codes]``, as int64.

    Only relative order matters: when ``cats`` are strings already in order (pandas
    sorts categories; UTF-8 byte order is code-point order) the codes are the ranks.
    """
    c = codes.astype(np.int64)
    if pd.api.types.is_string_dtype(cats.dtype) and cats.dtype != object:
        if cats.is_monotonic_increasing:
            return c
    uniq, inv = np.unique(c, return_inverse=True)
    out: IntArray = string_ranks(pd.Index(cats[uniq]))[inv]
    return out


def _blocks(q: npt.NDArray[np.integer]) -> tuple[IntArray, IntArray]:
    """Starts and lengths of the runs of equal values in ``q``."""
    n = q.size
    starts = np.concatenate([[0], np.flatnonzero(q[1:] != q[:-1]) + 1]).astype(np.int64)
    return starts, np.diff(np.concatenate([starts, [n]])).astype(np.int64)


SORT_BLOCK_ROWS: Final[int] = 1 << 20
"""Rows per block when whole lists are sorted or checked as padded matrices (bounds memory)."""


def _padded(n: int, lengths: IntArray) -> bool:
    """Whether a (blocks x longest block) matrix stays small (per-row sorts pay off)."""
    return lengths.size > 0 and lengths.size * int(lengths.max()) <= 4 * n + 1024


def _score_order(
    q: npt.NDArray[np.integer],
    score: FloatArray,
    *,
    stable: bool = True,
    block: int = SORT_BLOCK_ROWS,
    ties: npt.NDArray[np.bool_] | None = None,
) -> IntArray:
    """Order rows by query rank, then score descending.

    With ``stable=True`` rows of equal query and score keep their input order; with
    ``stable=False`` their order is unspecified (callers that break ties themselves
    use the faster unstable sort).  ``ties`` (``n - 1`` places), when given, is set to
    whether each ranked row has the query and score of the next one: from the scores
    each path already holds in order (within each sorted block, on the pool), not by
    gathering every row's query and score again.

    TREC runs usually list each query's documents together, best first: then only the
    blocks move (an O(n) check, no sort of the rows).  Otherwise rows are grouped by
    query (blocks moved, or a stable sort when a query's rows are scattered) and each
    query's scores are sorted as one row of a padded matrix, which is much faster than
    one global lexsort; when every query has the same number of rows the matrix is a
    reshape of the grouped scores.  ``block``: rows per padded matrix.
    """
    n = q.size
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    starts, lengths = _blocks(q)
    block_q = q[starts]
    # ``grouped``: the rows in query order; ``moved``: where each list's rows start in
    # the input when whole lists move (a block gathers its own rows from it)
    grouped: IntArray | None = None
    moved: IntArray | None = None
    if np.unique(block_q).size == block_q.size:
        # each query's rows are contiguous: move whole blocks into query order
        border = np.argsort(block_q, kind="stable")
        lengths = lengths[border]
        if not np.array_equal(border, np.arange(border.size)):
            moved = starts[border]
        starts = offsets_from_counts(lengths)[:-1]
    else:
        grouped = np.argsort(q, kind="stable").astype(np.int64)
        starts, lengths = _blocks(q[grouped])
    if not _padded(n, lengths):
        if moved is not None:
            grouped = gather_ranges(moved, lengths)
        return _score_order_uneven(q, score, grouped, starts, ties)
    # the result overwrites ``grouped`` block by block (a block only reads its own rows)
    out = np.empty(n, dtype=np.int64) if grouped is None else grouped
    # whole lists in blocks of about ``block`` rows (a loop over fixed-size blocks,
    # not over lists): the matrices stay small, which bounds peak memory
    firsts = np.unique(np.searchsorted(starts, np.arange(0, n, block), side="right") - 1)
    bounds = np.append(firsts, lengths.size).tolist()

    def sort_block(l0: int, l1: int) -> None:
        r0 = int(starts[l0])
        r1 = int(starts[l1]) if l1 < lengths.size else n
        src: IntArray | None = None  # the block's rows in the input (None: r0 .. r1 - 1)
        if moved is not None:
            src = gather_ranges(moved[l0:l1], lengths[l0:l1])
        elif grouped is not None:
            src = grouped[r0:r1]
        gs = score[r0:r1] if src is None else score[src]
        at = starts[l0:l1] - r0
        best_first = gs[1:] <= gs[:-1]
        best_first[at[1:] - 1] = True  # list boundaries always pass
        local: IntArray
        if best_first.all():  # TREC runs list each query best first: nothing to sort
            local = np.arange(r1 - r0, dtype=np.int64)
        else:
            # +inf padding must sort after every real row: a stable sort keeps real
            # +inf (score -inf) rows before it; without such scores any sort does
            kind: Literal["stable", "quicksort"] = (
                "stable" if stable or np.isinf(gs).any() else "quicksort"
            )
            local = order_within_lists(
                gs, at, lengths[l0:l1], pad=np.inf, kind=kind, descending=True
            )
        if ties is not None:  # the block's scores in order: a row ties with the next one
            ss = gs[local]
            t = ties[r0 : r1 - 1]
            np.equal(ss[1:], ss[:-1], out=t)
            t[at[1:] - 1] = False  # the next row opens another list
            if r1 < n:
                ties[r1 - 1] = False  # a block ends with a list
        if src is None:
            local += r0
            out[r0:r1] = local
        else:
            out[r0:r1] = src[local]  # gathered before the rows are overwritten

    for_blocks(sort_block, bounds)  # blocks read and write only their own rows
    return out


def _score_order_uneven(
    q: npt.NDArray[np.integer],
    score: FloatArray,
    grouped: IntArray | None,
    starts: IntArray,
    ties: npt.NDArray[np.bool_] | None,
) -> IntArray:
    """:func:`_score_order` of lists too uneven for a padded matrix: one lexsort.

    Unless each query's rows (``grouped``: in query order) are best first already.
    """
    n = q.size
    gs = score if grouped is None else score[grouped]
    best_first = gs[1:] <= gs[:-1]
    best_first[starts[1:] - 1] = True  # list boundaries always pass
    if best_first.all():
        if ties is not None:
            np.equal(gs[1:], gs[:-1], out=ties)
            ties[starts[1:] - 1] = False
        return np.arange(n, dtype=np.int64) if grouped is None else grouped
    rows = np.asarray(np.lexsort((-score, q)), dtype=np.int64)
    if ties is not None:
        ss, q_rows = score[rows], q[rows]
        np.equal(ss[1:], ss[:-1], out=ties)
        ties &= q_rows[1:] == q_rows[:-1]
    return rows


def run_order(
    query_codes: npt.NDArray[np.integer],
    query_ranks: npt.NDArray[np.integer],
    score: FloatArray,
    doc_ranks: Callable[[IntArray], npt.NDArray[np.integer]],
    *,
    ties: Literal["doc_id", "trec_eval", "input"],
) -> IntArray:
    """Rows of a run in ranked order: query rank, score descending, then the tie-break.

    ``query_codes`` code each row's query; ``query_ranks`` rank the query codes (the
    order lists are printed in).  Ties in score are broken by document id ascending
    (``"doc_id"``), descending (``"trec_eval"``) or kept in input order
    (``"input"``).  Only tied rows have their ids compared: ``doc_ranks(rows)`` gives
    the ids of those rows integer keys in byte order (any integers that sort as the ids
    do: ranks, :func:`coded_doc_ranks` for dictionary codes, or the ids' own bytes as
    one big-endian word); each group of tied rows is sorted by them on its own.
    """
    # ties are broken by doc id below unless ties="input": the sort need not be stable
    if ties == "input" or score.size < 2:
        return _score_order(query_ranks[query_codes], score, stable=ties == "input")
    # same[i]: ranked rows i and i + 1 tie (one query, one score)
    same = np.empty(score.size - 1, dtype=bool)
    rows = _score_order(query_ranks[query_codes], score, stable=False, ties=same)
    if not same.any():
        return rows
    tied = np.zeros(rows.size, dtype=bool)
    tied[1:] |= same
    tied[:-1] |= same
    at = np.flatnonzero(tied)
    del tied
    # a tied row opens a new group unless it ties with the row before it
    opens = ~np.concatenate([[False], same])[at]
    at_rows = rows[at]
    dkey = doc_ranks(at_rows)
    if ties == "trec_eval":
        dkey = dkey.max() - dkey  # any integer order key: descending, same dtype
    rows[at] = at_rows[_order_in_groups(dkey, opens)]
    return rows


def _order_in_groups(keys: npt.NDArray[np.integer], opens: npt.NDArray[np.bool_]) -> IntArray:
    """Order of ``keys`` within the groups of consecutive rows that ``opens`` starts.

    The groups of tied rows are short: each is sorted as one row of a padded matrix
    (:func:`order_within_lists`); a group too long for the matrix sends every group
    through one lexsort.  The keys are distinct within a group, so the order is unique.
    """
    starts = np.flatnonzero(opens)
    lengths = np.diff(np.append(starts, keys.size))
    if not _padded(keys.size, lengths):
        return np.asarray(np.lexsort((keys, np.cumsum(opens))), dtype=np.int64)
    top = np.iinfo(keys.dtype).max
    kind: Literal["stable", "quicksort"] = "stable" if (keys == top).any() else "quicksort"
    return order_within_lists(keys, starts, lengths, pad=top, kind=kind)


def coded_doc_ranks(
    doc_codes: npt.NDArray[np.integer], doc_categories: pd.Index
) -> Callable[[IntArray], IntArray]:
    """``doc_ranks`` of :func:`run_order` for ids coded against ``doc_categories``."""

    def ranks(rows: IntArray) -> IntArray:
        return _id_ranks(doc_codes[rows], doc_categories)

    return ranks


def order_within_lists(
    values: npt.NDArray[Any],
    starts: IntArray,
    lengths: IntArray,
    *,
    pad: float | int,
    kind: Literal["stable", "quicksort"] = "quicksort",
    descending: bool = False,
) -> IntArray:
    """Order of ``values`` that sorts each list of consecutive rows (one matrix row each).

    List ``i`` owns ``values[starts[i] : starts[i] + lengths[i]]`` (``starts[0] == 0``, the
    lists back to back); the result indexes ``values``.  Each list is one row of a
    matrix, sorted by one ``argsort`` along the rows: many sorts of a few hundred values
    in cache, several times faster than one sort of all values.  When every list has
    the same length the values *are* the matrix; otherwise the rows are padded with
    ``pad``, which must sort after every value of the sorted matrix (equal to one only
    with a stable sort).  The padding is dropped by gathering each row's first
    ``lengths[i]`` places with the index that scattered the values in (no boolean mask
    of the matrix).  ``descending``: the matrix holds ``-values`` (and ``pad``).

    Examples
    --------
    >>> order_within_lists(np.array([3.0, 1.0, 2.0, 5.0, 4.0]), np.array([0, 3]),
    ...                    np.array([3, 2]), pad=np.inf).tolist()
    [1, 2, 0, 4, 3]
    """
    n, rows = values.size, lengths.size
    width = int(lengths.max()) if rows else 0
    if rows * width == n:
        # equal lengths: the values are the matrix
        m = np.negative(values) if descending else values
        o = np.argsort(m.reshape(rows, width), axis=1, kind=kind)
        o += starts[:, None]
        return np.asarray(o.ravel(), dtype=np.int64)
    # row i of list b goes to b * width + (i - starts[b]): the same index scatters the
    # values in and gathers the sorted places back out
    flat = gather_ranges(np.arange(rows, dtype=np.int64) * width, lengths)
    m = np.full(rows * width, -pad if descending else pad, dtype=values.dtype)
    m[flat] = values
    if descending:
        np.negative(m, out=m)
    om = np.argsort(m.reshape(rows, width), axis=1, kind=kind)
    del m
    om += starts[:, None]
    out: IntArray = om.ravel()[flat]
    return out


def first_duplicate(
    q_rows: npt.NDArray[np.integer],
    d_rows: npt.NDArray[np.integer],
    *,
    block: int = SORT_BLOCK_ROWS,
) -> int:
    """Row of a document repeated within its list (rows grouped by list), or -1.

    The first such row in row order, found by the one detection of a repeated
    document (:func:`~sessionval.validate.list_rules.first_repeated_document`, which
    the flat load's checks use too); ``block``: rows per piece of whole lists.

    Examples
    --------
    >>> first_duplicate(np.array([0, 0, 1, 1, 1]), np.array([3, 4, 5, 6, 5]))
    4
    """
    if q_rows.size < 2:
        return -1
    # the one detection wants lists numbered in ascending row order
    starts = np.empty(q_rows.size, dtype=bool)
    starts[0] = True
    np.not_equal(q_rows[1:], q_rows[:-1], out=starts[1:])
    lists = np.cumsum(starts) - 1
    return first_repeated_document(lists, d_rows, block=block)


def factorize_ids(col: pd.Series) -> tuple[npt.NDArray[np.int32], pd.Index]:
    """Integer codes of an id column and the ids they stand for (``pd.factorize``, faster).

    Categoricals keep their codes; Arrow-backed strings use Arrow's hash encoder; a
    missing id gets code -1.
    """
    if isinstance(col.dtype, pd.CategoricalDtype):
        codes = col.cat.codes.to_numpy()
        return codes.astype(np.int32, copy=False), pd.Index(col.cat.categories)
    if isinstance(col.dtype, pd.StringDtype) and col.dtype.storage == "pyarrow":
        # Arrow-backed strings (pandas' default ``str``): Arrow's hash encoder on the
        # zero-copy array is faster than pd.factorize (no round trip through pandas)
        import pyarrow as pa
        import pyarrow.compute as pc

        enc = pc.dictionary_encode(pa.chunked_array(pa.array(col.array)))
        enc = enc.unify_dictionaries()
        idx = [ch.indices.fill_null(-1).to_numpy(zero_copy_only=False) for ch in enc.chunks]
        acodes = np.concatenate([np.zeros(0, dtype=np.int32), *idx]).astype(np.int32)
        dictionary = enc.chunk(0).dictionary if enc.num_chunks else pa.array([], pa.string())
        return acodes, pd.Index(pd.array(dictionary, dtype=col.dtype))
    fcodes, uniq = pd.factorize(col if pd.api.types.is_string_dtype(col.dtype) else col.astype(str))
    return fcodes.astype(np.int32), pd.Index(uniq)

"""Phase "checking ranks and documents" of :func:`~sessionval.validate.flat.frame_from_flat`.

Ranks ``1..k`` per query and each document at most once per result list
(:mod:`sessionval.rules`).  :func:`first_repeated_document` is the one detection of a
document listed twice in one list: the checks of the flat table call it, and so do the
readers of scored runs (the run-file message of :func:`~sessionval.evaluation.lists.evaluate_run`).
:func:`check_results` returns a :class:`ListChecks`, kept until the tables are built.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from .._types import BoolArray, IntArray
from ..rules import check_one_to_n, check_unique_within
from .fields import take_rows
from .order import CHECK_CHUNK, Ranks, RowKeys, RowOrder, SessionRows

__all__ = [
    "REPEATED_DOCUMENT",
    "ListChecks",
    "check_results",
    "first_repeated_document",
    "repeated_documents",
]

#: the message of a document listed twice in one result list (lenient mode repairs it)
REPEATED_DOCUMENT: Final = "document occurs more than once in the same result list"

#: a dense list x position table may hold this many cells per row (the rest is padding
#: for shorter lists); beyond, the documents are checked by one sort of keys
_DENSE_SLACK: Final = 4


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class ListChecks:
    """What the checked result lists give the tables (and the repair of repeated documents)."""

    result_sorted: BoolArray  # sorted row is a result (not an empty query's row)
    n_results: IntArray  # results per query
    # input rows repeating a document of their result list
    repeated_docs: list[IntArray] = field(default_factory=list)
    # the query of each sorted row, kept only for the repair (``None`` without a repeat:
    # the results table makes it again)
    query_of_row: npt.NDArray[np.int32] | None = None


def check_results(
    rows: SessionRows, ranks: Ranks, keys: RowKeys, order: RowOrder, query_start: BoolArray
) -> ListChecks:
    """Phase "checking ranks and documents": ranks 1..k per query, each document once.

    ``query_start``: whether each sorted row starts a query
    (:attr:`~sessionval.validate.order.Boundaries.query_start`).  Checked in pieces of
    whole queries, so the temporaries stay bounded.
    """
    coll = rows.coll
    n_q = order.n_queries
    q_rows = order.rows_per_query()
    q_of_row = order.query_of_row(q_rows)
    empty_sorted = take_rows(keys.empty_row, order.order)
    present_sorted = take_rows(keys.rank_present, order.order)
    res_mask = present_sorted & ~empty_sorted
    empty_q = np.zeros(n_q, dtype=bool)
    empty_q[q_of_row[empty_sorted & ~present_sorted]] = True
    # results per query: its rows less those that are not results (empty-result rows, few)
    n_res_q = q_rows - np.bincount(q_of_row[~res_mask], minlength=n_q)
    del q_rows
    mixed = empty_q & (n_res_q > 0)
    if mixed.any():
        at = order.q_first[np.flatnonzero(mixed)]
        coll.add(at, "doc_id", "a query has both results and an empty-result row")
    del empty_sorted, present_sorted, empty_q, mixed
    rank_s = take_rows(ranks.ranks, order.order)
    doc_s = take_rows(ranks.doc_codes, order.order)
    repeated: list[IntArray] = []
    for a, b in _segment_bounds(query_start, CHECK_CHUNK):
        in_order = ranks_in_order(res_mask[a:b], rank_s[a:b], query_start[a:b])
        if in_order:
            res = res_mask[a:b]
            # ranks 1..k in turn: a repeat is the rule's only possible problem here
            if first_repeated_document(q_of_row[a:b][res], doc_s[a:b][res]) < 0:
                continue  # the usual case: nothing to report in this piece
        in_piece = np.flatnonzero(res_mask[a:b]) + a
        rq, rr = q_of_row[in_piece], rank_s[in_piece]
        if not in_order:
            v = check_one_to_n(rr, rq, what="rank", presorted=True)  # sorted space
            if v:
                coll.add(
                    order.input_rows(in_piece[v.rows]), "rank", v.messages, rr[v.rows].tolist()
                )
        v = check_unique_within(doc_s[in_piece], rq, what="document", presorted_groups=True)
        if v:
            at = order.input_rows(in_piece[v.rows])
            repeated.append(at)
            docs = ranks.doc_categories[ranks.doc_codes[at]].astype(str).tolist()
            coll.add(at, "doc_id", REPEATED_DOCUMENT, docs)
    return ListChecks(res_mask, n_res_q, repeated, q_of_row if repeated else None)


def ranks_in_order(result: BoolArray, ranks: npt.NDArray[np.int32], query_start: BoolArray) -> bool:
    """Whether every query of these sorted rows lists its results at ranks 1, 2, .. k in turn.

    One comparison per row with the row before: a result row starting its query has
    rank 1, any other follows a result row of rank one less.  ``True`` implies that
    :func:`~sessionval.rules.check_one_to_n` finds nothing (it is stricter: a query
    whose first row is not a result, e.g. one mixing results and an empty-result
    row, gives ``False`` and goes to the full check).
    """
    ok = np.empty(len(ranks), dtype=bool)
    ok[0] = ranks[0] == 1
    np.equal(ranks[1:] - ranks[:-1], 1, out=ok[1:])
    ok[1:] &= result[:-1]
    np.copyto(ok, ranks == 1, where=query_start)
    ok |= ~result
    return bool(ok.all())


def first_repeated_document(
    lists: npt.NDArray[np.integer[Any]],
    docs: npt.NDArray[np.integer[Any]],
    *,
    block: int = CHECK_CHUNK,
) -> int:
    """The first row that repeats a document listed before it in its list, or -1.

    ``lists``: the list of each row, the rows of a list contiguous and the lists in
    ascending order; ``docs``: non-negative document codes; ``block``: rows per piece of
    whole lists (bounds the temporaries).  Each row gets the cell ``(list, position in
    list)`` of a dense table, and sorting each table row (short rows of codes:
    vectorised) finds a repeat as two equal neighbours, without the sort of 64-bit keys
    over all rows; padding cells hold distinct negative values, which never equal a code
    or each other.  When the table would be mostly padding (one long list among short
    ones), :func:`repeated_documents` decides.

    Examples
    --------
    >>> first_repeated_document(np.array([0, 0, 0, 1, 1]), np.array([4, 5, 6, 4, 4]))
    4
    >>> first_repeated_document(np.array([0, 0, 1]), np.array([4, 5, 4]))
    -1
    """
    n = len(docs)
    if n < 2:
        return -1
    list_start = np.empty(n, dtype=bool)
    list_start[0] = True
    np.not_equal(lists[1:], lists[:-1], out=list_start[1:])
    # pieces of whole lists in row order: the first piece with a repeat holds the first one
    for a, b in _segment_bounds(list_start, block):
        found = _first_in_piece(list_start[a:b], lists[a:b], docs[a:b])
        if found >= 0:
            return a + found
    return -1


def _first_in_piece(
    list_start: BoolArray, lists: npt.NDArray[np.integer[Any]], docs: npt.NDArray[np.integer[Any]]
) -> int:
    """:func:`first_repeated_document` on rows that start with a list's first row."""
    n = len(docs)
    starts = np.flatnonzero(list_start)
    lengths = np.diff(starts, append=n)
    n_lists, width = len(starts), int(lengths.max())
    if n_lists * width > _DENSE_SLACK * n + 1024 or int(docs.max()) >= 2**31:
        later = repeated_documents(lists, docs)
        return int(later[0]) if len(later) else -1
    table = np.empty((n_lists, width), dtype=np.int32)
    table[:] = -1 - np.arange(width, dtype=np.int32)
    cell = np.repeat(np.arange(n_lists, dtype=np.int64) * width - starts, lengths)
    cell += np.arange(n, dtype=np.int64)  # row i of list l: l * width + (i - start of l)
    table.ravel()[cell] = docs
    del cell
    table.sort(axis=1)
    hit = np.flatnonzero((table[:, 1:] == table[:, :-1]).any(axis=1))
    if not len(hit):
        return -1
    # the first list with a repeat: its first row whose document came before
    a = int(starts[hit[0]])
    in_list = docs[a : a + int(lengths[hit[0]])]
    _, first = np.unique(in_list, return_index=True)
    later = np.setdiff1d(np.arange(len(in_list)), first)
    return a + int(later[0])


def repeated_documents(
    lists: npt.NDArray[np.integer[Any]], docs: npt.NDArray[np.integer[Any]]
) -> IntArray:
    """Every row that repeats a document listed before it in its list, in row order.

    ``lists`` and ``docs`` as for :func:`first_repeated_document`; the rule is
    :func:`~sessionval.rules.check_unique_within`'s (one stable sort of packed keys).

    Examples
    --------
    >>> repeated_documents(np.array([0, 0, 0, 1, 1]), np.array([4, 4, 4, 4, 5])).tolist()
    [1, 2]
    """
    rows: IntArray = np.sort(
        check_unique_within(docs, lists, presorted_groups=True).rows.astype(np.int64)
    )
    return rows


def _segment_bounds(starts: BoolArray, chunk: int) -> list[tuple[int, int]]:
    """Split ``range(len(starts))`` into pieces of about ``chunk`` rows at group starts."""
    n = len(starts)
    if n <= chunk:
        return [(0, n)]
    start_idx = np.flatnonzero(starts)
    cuts = np.unique(
        start_idx[
            np.searchsorted(start_idx, np.arange(chunk, n, chunk)).clip(max=len(start_idx) - 1)
        ]
    )
    edges = [0, *[int(c) for c in cuts if c > 0], n]
    return [(a, b) for a, b in itertools.pairwise(edges) if b > a]

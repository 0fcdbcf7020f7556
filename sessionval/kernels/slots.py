"""Rows to slots: which result row each query shows at which slot rank (spec section 4).

Pure NumPy kernels of the session vectors (:mod:`sessionval.kernels.session`):
the short-list policy (how many positions ``L_q`` a query occupies) and the
duplicate policy (``every``, ``first``, ``drop``: what a document already shown by
an earlier query of the session earns).  Parameters arrive as typed values
(:class:`ShortLists`, a :data:`DuplicatePolicy`) and are trusted.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final, Literal, TypeAlias, get_args

import numpy as np
import numpy.typing as npt
import pandas as pd

from .._types import BoolArray, FloatArray, IntArray
from ..errors import MeasureSpecError
from .segments import offsets_from_counts, segment_ranks

__all__ = [
    "DUPLICATE_POLICIES",
    "DuplicatePolicy",
    "ShortLists",
    "Slots",
    "row_slots",
    "slot_lengths",
]


DuplicatePolicy: TypeAlias = Literal["every", "first", "drop"]

DUPLICATE_POLICIES: Final[tuple[DuplicatePolicy, ...]] = get_args(DuplicatePolicy)

_SHORT = re.compile(r"^(pad|none|min:(\d+))$")


# ---------------------------------------------------------------------------------------------
# short lists


@dataclass(frozen=True, slots=True)
class ShortLists:
    """The short-list policy as a typed value: ``pad``, ``none`` or ``min:m``.

    Parsed once from its text (:meth:`parse`) where a configuration or a measure is
    read; :func:`slot_lengths` takes the value and never parses a string.
    ``str(value)`` is the text again.

    Examples
    --------
    >>> ShortLists.parse("min:3")
    ShortLists(kind='min', minimum=3)
    >>> str(ShortLists("none"))
    'none'
    """

    kind: Literal["pad", "none", "min"]
    minimum: int = 0

    def __str__(self) -> str:
        return f"min:{self.minimum}" if self.kind == "min" else self.kind

    @classmethod
    def parse(cls, spec: str | ShortLists) -> ShortLists:
        """Read ``"pad"``, ``"none"`` or ``"min:m"`` (``m >= 0``); a value is returned as is.

        Raises
        ------
        MeasureSpecError
            Any other text (the message lists the allowed forms).
        """
        if isinstance(spec, ShortLists):
            return spec
        m = _SHORT.match(str(spec).strip())
        if not m:
            raise MeasureSpecError(
                f"short-list policy {spec!r} unknown; use 'pad', 'none' or 'min:m' with m >= 0"
            )
        if m.group(2) is not None:
            return cls("min", int(m.group(2)))
        return cls("pad" if m.group(1) == "pad" else "none")


def slot_lengths(
    n_available: npt.ArrayLike, cutoff: npt.ArrayLike, *, short_lists: ShortLists
) -> IntArray:
    """Count the session positions ``L_q`` each query occupies.

    Parameters
    ----------
    n_available
        Results the query can show (after ``drop``/``condense`` removed rows).
    cutoff
        The query's cut-off: ``X``, or its scan depth from the log.
    short_lists
        ``pad``: ``L = cutoff`` (missing results count as gain 0, charging the
        searcher's time); ``none``: ``L = min(cutoff, n)``; ``min:m``:
        ``L = min(cutoff, max(n, m))``, a minimum of ``m`` positions per query
        (spec section 4, the hybrid Järvelin et al. 2008 suggest).

    Examples
    --------
    >>> n, x = np.array([0, 3, 12]), np.array([10, 10, 10])
    >>> slot_lengths(n, x, short_lists=ShortLists("pad"))
    array([10, 10, 10])
    >>> slot_lengths(n, x, short_lists=ShortLists("none"))
    array([ 0,  3, 10])
    >>> slot_lengths(n, x, short_lists=ShortLists("min", 5))
    array([ 5,  5, 10])
    """
    n = np.asarray(n_available, dtype=np.int64)
    x = np.asarray(cutoff, dtype=np.int64)
    if short_lists.kind == "pad":
        return x.copy()
    if short_lists.kind == "none":
        return np.minimum(x, n)
    return np.minimum(x, np.maximum(n, short_lists.minimum))


# ---------------------------------------------------------------------------------------------
# duplicates


def _repeats_first(row_session: IntArray, row_doc: IntArray, candidate: BoolArray) -> BoolArray:
    """Mark candidate rows whose (session, doc) was a candidate at an earlier row."""
    out = np.zeros(row_session.size, dtype=bool)
    idx = np.flatnonzero(candidate)
    if idx.size == 0:
        return out
    ndoc = int(row_doc.max()) + 1 if row_doc.size else 1
    keys = row_session[idx] * ndoc + row_doc[idx]
    # rows are in session order, so "earlier row" is "earlier in the session"
    out[idx] = pd.Series(keys).duplicated(keep="first").to_numpy()
    return out


def _drop_passes(
    *,
    row_query: IntArray,
    row_session: IntArray,
    row_doc: IntArray,
    query_pos: IntArray,
    cutoff: IntArray,
    short_lists: ShortLists,
    n_queries: int,
) -> tuple[IntArray, BoolArray, IntArray, BoolArray]:
    """``drop`` policy: one vectorised pass per query position (not per query).

    A row is a repeat when its document was *shown* (scored) by an earlier query
    of the same session; repeats are removed and later rows move up.  Returns the
    slot rank of each row (0 for a repeat), the repeat flags, the available count
    per query and the scored flags.
    """
    n = row_query.size
    slot = np.zeros(n, dtype=np.int64)
    repeat = np.zeros(n, dtype=bool)
    scored = np.zeros(n, dtype=bool)
    avail = np.zeros(n_queries, dtype=np.int64)
    if n == 0:
        return slot, repeat, avail, scored
    ndoc = int(row_doc.max()) + 1
    pair, _ = pd.factorize(row_session * ndoc + row_doc)
    seen = np.zeros(int(pair.max()) + 1, dtype=bool)
    row_pos = query_pos[row_query]
    order = np.argsort(row_pos, kind="stable")  # rows grouped by query position
    bounds = np.searchsorted(row_pos[order], np.arange(1, int(row_pos.max()) + 2))
    for p in range(int(bounds.size) - 1):  # loop over query positions, not queries
        rows = order[bounds[p] : bounds[p + 1]]
        if rows.size == 0:
            continue
        rep = seen[pair[rows]]
        keep = ~rep
        rq = row_query[rows]
        # rows of one query are contiguous here (stable sort); new rank = running count
        start = np.ones(rows.size, dtype=bool)
        start[1:] = rq[1:] != rq[:-1]
        cs = np.cumsum(keep)
        first = np.flatnonzero(start)
        base = np.repeat(cs[first] - keep[first], np.diff(np.append(first, rows.size)))
        new_rank = np.where(keep, cs - base, 0)
        av = np.bincount(rq, weights=keep, minlength=n_queries).astype(np.int64)
        qs = np.unique(rq)
        avail[qs] = av[qs]
        lengths = slot_lengths(av, cutoff, short_lists=short_lists)
        sc = keep & (new_rank <= lengths[rq])
        slot[rows] = np.where(sc, new_rank, 0)
        repeat[rows] = rep
        scored[rows] = sc
        seen[pair[rows[sc]]] = True
    return slot, repeat, avail, scored


@dataclass(frozen=True, slots=True)
class Slots:
    """Where each row lands after the duplicate and short-list policies."""

    slot: IntArray  # slot rank of each row, 0 when not shown
    scored: BoolArray
    repeat: BoolArray
    credited: FloatArray  # gain each row earns
    n_available: IntArray  # per query
    lengths: IntArray  # L_q per query


def row_slots(
    rq: IntArray,
    rg: FloatArray,
    rd: IntArray | None,
    qs: IntArray,
    qp: IntArray,
    qcut: IntArray,
    *,
    duplicates: DuplicatePolicy,
    short_lists: ShortLists,
    row_rank: IntArray | None,
) -> Slots:
    """Slot rank, scored flag and credited gain of every row (duplicate and short-list policies).

    ``rq``/``rg``/``rd``: query index, gain and document code of each row (rows
    grouped by query); ``qs``/``qp``/``qcut``: session, position and cut-off of each
    query; ``row_rank``: the rows' ranks when known to be ``1..k`` (else recomputed).
    """
    nq = qs.size
    counts = np.bincount(rq, minlength=nq).astype(np.int64)
    row_session = qs[rq]
    if duplicates == "drop":
        if rd is None:
            raise MeasureSpecError("duplicate policy 'drop' needs document ids")
        slot, repeat, avail, scored = _drop_passes(
            row_query=rq,
            row_session=row_session,
            row_doc=rd,
            query_pos=qp,
            cutoff=qcut,
            short_lists=short_lists,
            n_queries=nq,
        )
        lengths = slot_lengths(avail, qcut, short_lists=short_lists)
        return Slots(slot, scored, repeat, rg, avail, lengths)
    rank = segment_ranks(offsets_from_counts(counts)) if row_rank is None else row_rank
    lengths = slot_lengths(counts, qcut, short_lists=short_lists)
    scored = rank <= lengths[rq]
    if duplicates == "first":
        if rd is None:
            raise MeasureSpecError("duplicate policy 'first' needs document ids")
        repeat = _repeats_first(row_session, rd, scored)
        credited = np.where(repeat, 0.0, rg)
    else:
        repeat = np.zeros(rq.size, dtype=bool)
        credited = rg
    return Slots(np.where(scored, rank, 0), scored, repeat, credited, counts, lengths)

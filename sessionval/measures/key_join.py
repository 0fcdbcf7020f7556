"""The grade join on 64-bit keys of string ids: judgments sorted by (topic, key).

The run's document ids, read as :class:`~sessionval.measures.string_ids.IdKeys`, are
packed with their list's topic (:func:`pack_keys`), sorted within each list (lists in
topic order: :func:`sorted_in_lists`) and searched in the judgments sorted once by
(topic, key) (:class:`JudgedKeys`): sorted probes walk the array forward.  A match is
confirmed on the ids' full words, so exactness does not rest on the fingerprints.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, Literal

import numpy as np
import numpy.typing as npt

from .._types import FloatArray, IntArray
from ..kernels.blocks import for_blocks
from ..kernels.segments import gather_ranges, offsets_from_counts
from ..validate.ranking import order_within_lists
from .string_ids import SPREAD, IdKeys, KeyCollision, U64Array

__all__ = ["JudgedKeys", "each_sorted_in_lists", "pack_keys", "sorted_in_lists"]


@dataclass(frozen=True)
class JudgedKeys:
    """Judgments sorted by (topic, document key): the 64-bit key grade join.

    The implementation of :class:`~sessionval.judgments.join.GradeJoin` on documents
    read as :class:`IdKeys` (:meth:`lists`).

    Parameters
    ----------
    packed
        Sorted ``topic << (64 - tbits) | spread(key) >> tbits``: the topic in the high
        bits, below it the high bits of the key multiplied by an odd constant (a
        bijection that carries differences in the low bits, where similar ids such
        as ``d123456`` and ``d123457`` differ, into the high bits kept).
    tbits
        Bits of the topic part.
    rows
        The judgment row at each sorted position.
    grades
        The grade at each sorted position.
    docs
        The judgments' :class:`IdKeys` (by judgment row).
    """

    packed: U64Array
    tbits: int
    rows: IntArray
    grades: FloatArray
    docs: IdKeys

    @classmethod
    def build(
        cls, topic: IntArray, n_topics: int, docs: IdKeys, grades: FloatArray
    ) -> JudgedKeys | None:
        """Sort the judgments by (topic, key).

        ``topic`` codes each judgment's topic (0..n_topics-1).  Returns ``None`` when
        two judgments of one topic share a packed key (a document judged twice, or two
        ids whose keys collide): the caller takes the dictionary road, whose boundary
        (:func:`sessionval.validate.judgments.judgment_frame`) applies the rule of one
        grade per (topic, document).  The join itself decides nothing about repeats.
        """
        tbits = max(1, int(n_topics).bit_length())
        got = _sorted_by_topic(topic, n_topics, docs.keys, tbits)
        if got is None:  # a topic's rows scattered: one sort of every packed key
            packed = pack_keys(topic, docs.keys, tbits)
            order = np.argsort(packed).astype(np.int64)
            packed = packed[order]
        else:
            order, packed = got
        if (packed[1:] == packed[:-1]).any():
            return None
        return cls(packed, tbits, order, grades[order], docs)

    def lists(self, key_codes: npt.ArrayLike, counts: npt.ArrayLike, docs: IdKeys) -> FloatArray:
        """Grade of each row (NaN when unjudged): list ``i`` owns the next ``counts[i]`` rows.

        The 64-bit key implementation of :class:`~sessionval.judgments.join.GradeJoin`:
        ``key_codes`` holds each list's judgment topic code (as given to :meth:`build`),
        ``docs`` the rows' keys.  The rows' packed keys are sorted and the (fewer,
        sorted) judgments searched in them: sorted probes walk the array forward,
        several times faster than one search per row.  A match of the packed key is
        confirmed on the whole id.  Lists in topic order are joined block by block of
        whole lists on the pool (each block sorted within its lists, then searched for
        the slice of judgments its keys span): no full-length sorted copy is made.

        Raises
        ------
        KeyCollision
            Two rows of one list share a packed key: the same id twice, or (never
            seen) two ids whose packed keys collide.
        """
        topic = np.asarray(key_codes, dtype=np.int64)
        counts = np.asarray(counts, dtype=np.int64)
        n = docs.keys.size
        if self.packed.size == 0 or n == 0:
            return np.full(n, np.nan)
        out = np.empty(n)  # each block fills its own rows

        def match(r0: int, probe: U64Array, order: IntArray) -> None:
            self._match(r0, probe, order, docs, out)

        # lists in topic order: sorting within each list sorts the whole array
        if not (
            bool(np.all(topic[1:] > topic[:-1]))
            and each_sorted_in_lists(docs.keys, topic, self.tbits, counts, match)
        ):
            probe = pack_keys(topic, docs.keys, self.tbits, counts)
            order = np.argsort(probe)
            match(0, probe[order], order)
        return out

    def _match(
        self, r0: int, probe: U64Array, order: IntArray, docs: IdKeys, out: FloatArray
    ) -> None:
        """Grades of rows ``r0 ..`` (sorted packed keys ``probe``, from rows ``order``).

        ``order`` holds whole lists, the rows ``r0 .. r0 + order.size - 1``; their rows
        of ``out`` are set (NaN: unjudged).  The judgments in ``probe``'s span are
        searched in it, a match confirmed on the ids.
        """
        out[r0 : r0 + order.size] = np.nan
        clash = np.flatnonzero(probe[1:] == probe[:-1])
        if clash.size:  # same packed key in one list: a repeated document or a collision
            raise KeyCollision((int(order[clash[0]]), int(order[clash[0] + 1])))
        if probe.size == 0:
            return
        j0 = int(np.searchsorted(self.packed, probe[0]))
        j1 = int(np.searchsorted(self.packed, probe[-1], side="right"))
        wanted = self.packed[j0:j1]
        at = np.searchsorted(probe, wanted)
        np.minimum(at, probe.size - 1, out=at)
        judged = np.flatnonzero(probe[at] == wanted)
        rows = order[at[judged]]
        judged += j0
        ok = docs.same(rows, self.docs, self.rows[judged])
        out[rows[ok]] = self.grades[judged[ok]]


def _sorted_by_topic(
    topic: IntArray, n_topics: int, keys: U64Array, tbits: int
) -> tuple[IntArray, U64Array] | None:
    """Order and sorted packed keys of judgments whose topics' rows are contiguous.

    Qrels list each topic's judgments together: the runs of rows are put in topic
    order (whole runs moved) and each is sorted on its own (:func:`sorted_in_lists`),
    which sorts the whole array as one sort of every packed key does (the topic is
    the high bits).  ``None`` when a topic's rows are scattered or the runs too uneven.
    """
    n = topic.size
    if n == 0:
        return None
    heads = np.flatnonzero(np.concatenate([[True], topic[1:] != topic[:-1]]))
    if heads.size != n_topics:
        return None  # a topic in several runs of rows (or a topic code without rows)
    lens = np.diff(np.append(heads, n))
    by_topic = np.argsort(topic[heads])
    if np.array_equal(by_topic, np.arange(heads.size)):
        grouped = None
    else:
        heads, lens = heads[by_topic], lens[by_topic]
        grouped = gather_ranges(heads, lens)
    got = sorted_in_lists(
        keys if grouped is None else keys[grouped],
        topic[heads].astype(np.int64),
        tbits,
        lens,
    )
    if got is None:
        return None
    order, packed = got
    return (order if grouped is None else grouped[order]), packed


def pack_keys(
    topic: IntArray,
    keys: U64Array,
    tbits: int,
    counts: IntArray | None = None,
    out: U64Array | None = None,
) -> U64Array:
    """Packed keys of rows (:attr:`JudgedKeys.packed`): the topic above the spread key.

    ``counts``: ``topic`` holds one code per list of rows, list ``i`` owning the next
    ``counts[i]`` rows.  ``out``: where to write them (``keys``' length).
    """
    packed = np.multiply(keys, SPREAD, out=out)  # odd multiplier: a bijection of 64-bit keys
    packed >>= np.uint64(tbits)
    high = topic.astype(np.uint64) << np.uint64(64 - tbits)
    packed |= high if counts is None else np.repeat(high, counts)
    return packed


_LIST_BLOCK_ROWS: Final = 1 << 20
"""Rows per padded matrix when lists are sorted row by row (bounds memory)."""


def sorted_in_lists(
    keys: U64Array, topic: IntArray, tbits: int, counts: IntArray
) -> tuple[IntArray, U64Array] | None:
    """Order and sorted values of the packed keys of lists in topic order.

    List ``i`` (topic ``topic[i]``) owns the next ``counts[i]`` keys.  Each list is
    packed and sorted as one row of a matrix padded with the largest key: many sorts
    of ~100 keys in cache instead of one sort of all keys (several times faster),
    in blocks of rows on the pool (:func:`each_sorted_in_lists`).  ``None`` when the
    lists are too uneven for a padded matrix.
    """
    n = keys.size
    order = np.empty(n, dtype=np.int64)
    packed = np.empty(n, dtype=np.uint64)

    def store(r0: int, v: U64Array, o: IntArray) -> None:
        packed[r0 : r0 + v.size] = v
        order[r0 : r0 + o.size] = o

    if not each_sorted_in_lists(keys, topic, tbits, counts, store):
        return None
    return order, packed


def each_sorted_in_lists(
    keys: U64Array,
    topic: IntArray,
    tbits: int,
    counts: IntArray,
    each: Callable[[int, U64Array, IntArray], None],
) -> bool:
    """Sort the packed keys of lists in topic order block by block; hand each block on.

    List ``i`` (topic ``topic[i]``) owns the next ``counts[i]`` keys.  Blocks of whole
    lists (about a million rows) are packed and sorted as rows of a matrix padded with
    the largest key, on the pool; ``each(r0, values, order)`` gets a block's sorted
    packed keys and the rows (indexes of ``keys``) they came from: the block's own
    rows, ``r0 .. r0 + values.size - 1``.  The blocks together are the one sort of
    every packed key (topics rise from list to list).  ``False`` (nothing called)
    when the lists are too uneven for a padded matrix.
    """
    n = keys.size
    if counts.size == 0:
        return True
    width = int(counts.max())
    if counts.size * width > 4 * n + 1024:
        return False
    top = np.iinfo(np.uint64).max
    starts = offsets_from_counts(counts)

    def block(l0: int, l1: int) -> None:
        r0, r1 = int(starts[l0]), int(starts[l1])
        c = counts[l0:l1]
        v = pack_keys(topic[l0:l1], keys[r0:r1], tbits, c)
        # padding sorts after every real key unless a real key is the largest one:
        # then a stable sort keeps the real rows first
        kind: Literal["stable", "quicksort"] = "stable" if (v == top).any() else "quicksort"
        o = order_within_lists(v, starts[l0:l1] - r0, c, pad=top, kind=kind)
        v = v[o]
        o += r0
        each(r0, v, o)

    per = max(1, _LIST_BLOCK_ROWS // max(width, 1))
    for_blocks(block, [*range(0, counts.size, per), counts.size])
    return True

"""String ids as 64-bit keys read from Arrow's buffers, and the grade join on them.

A run of 28M rows holds about 1M distinct document ids; hashing them into a dictionary
(``pyarrow.compute.dictionary_encode``, ``pandas.factorize``) costs a cache miss per
row and dominated single-query evaluation from string DataFrames.  Here no dictionary
of documents is built:

* every id becomes the 64-bit words of its bytes, zero-padded to a common width, read
  with NumPy straight from the Arrow array's offsets and data buffers (one unaligned
  8-byte load per id and word, a mask for the bytes past its end; no Python string,
  no Arrow kernel).  The words hold the bytes little-endian; byte-swapped (only where
  order matters: tie-breaks, query ids) they compare as ``strcmp``.  Ids of at most
  8 bytes *are* their word, an exact key; longer ids get a 64-bit fingerprint;
* the judgments are sorted by (judgment topic, key) once; the run's keys, packed with
  their list's topic, are sorted within each list (lists in topic order) and the
  sorted judgments are searched in them: sorted probes walk the array forward;
* query ids, which come in runs of rows, are ranked from the first row of each run
  (:func:`id_codes`): no hash table of all rows.

Exactness does not rest on the fingerprints: a match is confirmed on the full words,
and a collision among the judgments of one topic (never seen; 2^-64 per pair) returns
``None`` so the caller takes the dictionary path.  Non-ASCII ids, ids with a NUL
byte, missing ids and non-string columns also return ``None``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, Final, Literal

import numpy as np
import numpy.typing as npt
import pandas as pd

from .._types import FloatArray, IntArray
from ..kernels.blocks import for_blocks
from ..kernels.segments import gather_ranges, offsets_from_counts
from ..validate.ranking import order_within_lists

__all__ = [
    "IdKeys",
    "JudgedKeys",
    "KeyCollision",
    "each_sorted_in_lists",
    "id_codes",
    "id_key_jobs",
    "id_keys",
    "pack_keys",
    "sorted_in_lists",
    "splitmix",
]

U64Array = npt.NDArray[np.uint64]


class KeyCollision(Exception):
    """Two rows share a key where keys must differ (``rows``: their positions).

    Either the same id twice (the caller reports it) or two ids whose keys collide
    (the caller takes the dictionary road).
    """

    def __init__(self, rows: tuple[int, int] = (-1, -1)) -> None:
        super().__init__(rows)
        self.rows = rows


# splitmix64's constants (Steele et al. 2014): a seed and two odd multipliers
_MIX: Final = (
    np.uint64(0x9E3779B97F4A7C15),
    np.uint64(0xBF58476D1CE4E5B9),
    np.uint64(0x94D049BB133111EB),
)


def _arrow_strings(col: Any) -> Any | None:
    """The column as one Arrow string array, or ``None`` when it is not plain strings."""
    import pyarrow as pa

    if isinstance(col, pd.Series):
        if isinstance(col.dtype, pd.CategoricalDtype):
            return None
        if isinstance(col.dtype, pd.StringDtype) and col.dtype.storage == "pyarrow":
            arr = pa.array(col.array)  # zero-copy: pandas' Arrow-backed strings
        elif col.dtype == object:
            try:
                arr = pa.array(col.to_numpy(), type=pa.large_string())
            except (pa.ArrowInvalid, pa.ArrowTypeError):
                return None
        else:
            return None
    elif isinstance(col, pa.ChunkedArray | pa.Array):
        arr = col
    else:
        return None
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks() if arr.num_chunks != 1 else arr.chunk(0)
    if not (pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type)):
        return None
    return arr


@dataclass(frozen=True)
class IdKeys:
    """One 64-bit key per id; ``words`` keeps the full ids when keys are fingerprints.

    Parameters
    ----------
    keys
        ``exact``: the id's bytes as one little-endian word (byte-swapped it sorts
        as ``strcmp``); otherwise a fingerprint of ``words``.
    words
        ``(n, width / 8)`` little-endian words of the zero-padded ids (``None`` when
        exact).
    """

    keys: U64Array
    words: U64Array | None

    @property
    def exact(self) -> bool:
        """Whether the keys are the ids themselves (ids of at most 8 bytes)."""
        return self.words is None

    def same(self, rows: IntArray, other: IdKeys, other_rows: IntArray) -> npt.NDArray[np.bool_]:
        """Whether ``self[rows]`` and ``other[other_rows]`` are the same ids."""
        same: npt.NDArray[np.bool_] = self.keys[rows] == other.keys[other_rows]
        if self.words is not None and other.words is not None:
            same &= (self.words[rows] == other.words[other_rows]).all(axis=1)
        return same

    def take(self, rows: IntArray) -> IdKeys:
        """The keys of ``rows``."""
        return IdKeys(self.keys[rows], None if self.words is None else self.words[rows])

    def order_keys(self, rows: IntArray) -> npt.NDArray[np.integer]:
        """Integer keys of the ids at ``rows`` that sort as the ids do (``strcmp``).

        Exact keys are their own order key once byte-swapped (no ranking); fingerprints
        are ranked on the words (:meth:`order_ranks`).
        """
        if self.words is None:
            return self.keys[rows].byteswap()
        return self.order_ranks(rows)

    def order_ranks(self, rows: IntArray) -> IntArray:
        """Rank of the ids at ``rows`` in byte order (``strcmp``, as trec_eval)."""
        # the words hold the bytes little-endian: swapped, they compare as strcmp
        if self.words is None:
            return np.unique(self.keys[rows].byteswap(), return_inverse=True)[1].astype(np.int64)
        w = self.words[rows].byteswap()
        order = np.lexsort(w.T[::-1])
        sw = w[order]
        new = np.ones(rows.size, dtype=bool)
        new[1:] = (sw[1:] != sw[:-1]).any(axis=1)
        ranks = np.empty(rows.size, dtype=np.int64)
        ranks[order] = np.cumsum(new) - 1
        return ranks


# _KEEP[k]: the k first bytes of a little-endian word (the bytes after an id's end cleared)
_KEEP: Final = np.array([(1 << (8 * k)) - 1 for k in range(9)], dtype=np.uint64)


_CHUNK_ROWS: Final = 1 << 20
"""Ids per chunk when words are read: the temporaries stay small and in cache."""


@dataclass(frozen=True)
class _Bytes:
    """A string array's offsets and bytes, as Arrow holds them (no copy).

    ``offsets[i] - base`` is where id ``i`` starts in ``data``.
    """

    offsets: npt.NDArray[np.integer]
    base: int
    data: npt.NDArray[np.uint8]

    @property
    def width(self) -> int:
        """Bytes of the longest id."""
        n, top = self.offsets.size - 1, 0
        for c0 in range(0, n, _CHUNK_ROWS):
            c1 = min(c0 + _CHUNK_ROWS, n)
            top = max(top, int((self.offsets[c0 + 1 : c1 + 1] - self.offsets[c0:c1]).max()))
        return top

    @classmethod
    def read(cls, arr: Any) -> _Bytes | None:
        """The buffers of ``arr``; ``None`` for nulls, non-ASCII or NUL bytes."""
        import pyarrow as pa

        if arr.null_count:
            return None
        odt = np.dtype(np.int64 if pa.types.is_large_string(arr.type) else np.int32)
        n = len(arr)
        bufs = arr.buffers()
        offsets = np.frombuffer(bufs[1], dtype=odt, count=n + 1, offset=arr.offset * odt.itemsize)
        lo, hi = (int(offsets[0]), int(offsets[-1])) if n else (0, 0)
        data = np.zeros(0, dtype=np.uint8)
        if hi > lo:
            data = np.frombuffer(bufs[2], dtype=np.uint8, count=hi - lo, offset=lo)
            # ASCII without NUL: characters are bytes, and the zero padding of the
            # words cannot make two different ids equal
            if data.max() > 127 or data.min() == 0:
                return None
        return cls(offsets, lo, data)

    def words(self, width8: int) -> U64Array:
        """``(n, width8 / 8)`` words of the ids' bytes, zero-padded (little-endian).

        One unaligned 8-byte load per id and word (a strided view of the bytes) and a
        mask that clears the bytes past the id's end, in chunks of rows.  No Python
        string is made.  Byte-swapped, the words compare as ``strcmp``.
        """
        n, nw = self.offsets.size - 1, width8 // 8
        out = np.empty((n, nw), dtype=np.uint64)
        if n == 0:
            return out
        # loads straight from the bytes, except for the last ids (a suffix: offsets
        # rise), whose loads could pass the end: those read a zero-padded copy of the
        # last bytes, so the bytes are never copied whole
        size = self.data.size
        tail0 = max(0, size - width8 - 8)
        tail = np.zeros(size - tail0 + width8 + 8, dtype=np.uint8)
        tail[: size - tail0] = self.data[tail0:]
        cut = int(np.searchsorted(self.offsets, tail0 + self.base)) if tail0 else 0
        u8 = np.dtype("<u8")
        head_loads = np.ndarray((max(size - 7, 0),), dtype=u8, buffer=self.data, strides=(1,))
        tail_loads = np.ndarray((tail.size - 7,), dtype=u8, buffer=tail, strides=(1,))

        def chunk(c0: int, c1: int) -> None:
            start = self.offsets[c0:c1].astype(np.int64)
            length = self.offsets[c0 + 1 : c1 + 1] - self.offsets[c0:c1]
            start -= self.base + (tail0 if c0 >= cut else 0)
            loads = tail_loads if c0 >= cut else head_loads
            for j in range(nw):
                w = loads[start]
                w &= _KEEP[np.clip(length, 0, 8) if nw > 1 else length]
                out[c0:c1, j] = w
                if j + 1 < nw:
                    start += 8
                    length -= 8

        for_blocks(chunk, sorted({*range(0, n, _CHUNK_ROWS), cut, n}))
        return out


def _fingerprint(words: U64Array) -> U64Array:
    """A 64-bit mix of each row of words (splitmix64 steps); not an identity: confirm on words."""
    h = np.full(words.shape[0], _MIX[0], dtype=np.uint64)
    for j in range(words.shape[1]):
        h ^= words[:, j]
        h *= _MIX[1]
        h ^= h >> np.uint64(31)
    h *= _MIX[2]
    h ^= h >> np.uint64(29)
    return h


def splitmix(x: U64Array) -> U64Array:
    """splitmix64's output function of each word (Steele et al. 2014): a 64-bit mix.

    A bijection: equal outputs mean equal inputs; used to fingerprint sequences.

    Examples
    --------
    >>> splitmix(np.array([0, 1], dtype=np.uint64)).tolist()
    [16294208416658607535, 10451216379200822465]
    """
    z = x + _MIX[0]
    z ^= z >> np.uint64(30)
    z *= _MIX[1]
    z ^= z >> np.uint64(27)
    z *= _MIX[2]
    z ^= z >> np.uint64(31)
    return z


def id_keys(columns: Sequence[Any]) -> list[IdKeys] | None:
    """Keys of several string id columns in one key space (one common width).

    Returns ``None`` when a column is not plain ASCII strings without missing values
    (categoricals, numbers, nulls, non-ASCII, NUL bytes): the dictionary path
    handles those.

    Examples
    --------
    >>> a, b = id_keys([pd.Series(["d2", "d10"], dtype="str"), pd.Series(["d10"], dtype="str")])
    >>> a.exact, bool(a.keys[1] == b.keys[0]), a.order_ranks(np.array([0, 1])).tolist()
    (True, True, [1, 0])
    """
    jobs = id_key_jobs(columns)
    return None if jobs is None else [job() for job in jobs]


def id_key_jobs(columns: Sequence[Any]) -> list[Callable[[], IdKeys]] | None:
    """:func:`id_keys` in two steps: the checks now, each column's words when called.

    The buffers are read and the common width found at once (``None`` as
    :func:`id_keys`); each returned call reads one column's words, so the columns can
    be read on different threads (NumPy releases the GIL).
    """
    arrays = [_arrow_strings(c) for c in columns]
    if any(a is None for a in arrays):
        return None
    read = [_Bytes.read(a) for a in arrays]
    if any(b is None for b in read):
        return None
    width8 = _width8(max((b.width for b in read if b is not None), default=0))
    return [partial(_column_keys, b, width8) for b in read if b is not None]


def _column_keys(read: _Bytes, width8: int) -> IdKeys:
    return _keys(read.words(width8))


def _width8(width: int) -> int:
    """Bytes of the words that hold ids of ``width`` bytes (a multiple of 8)."""
    return max(8, -(-width // 8) * 8)


def id_codes(col: pd.Series) -> tuple[npt.NDArray[np.int32], pd.Index] | None:
    """Codes of an id column whose equal ids come in runs of rows (query ids of a run).

    The codes are the ids' ranks in byte order (``strcmp``), the categories sorted:
    only the first row of each run of equal ids is ranked, so no hash table of all
    rows is built.  ``None`` (use a dictionary encoder) when the column is not plain
    ASCII strings without missing values, or when its ids do not come in runs.

    Examples
    --------
    >>> codes, cats = id_codes(pd.Series(["q2", "q2", "q10", "q2"], dtype="str"))
    >>> codes.tolist(), cats.tolist()
    ([1, 1, 0, 1], ['q10', 'q2'])
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    arr = _arrow_strings(col)
    if arr is None or _Bytes.read(arr) is None:
        return None
    n = len(arr)
    if n == 0:
        return np.zeros(0, dtype=np.int32), pd.Index(col.iloc[:0].array)
    # where the id changes: Arrow compares neighbouring strings (several times faster
    # than reading every row's words); only the first row of each run is read as words
    change = pc.not_equal(arr.slice(1), arr.slice(0, n - 1)).to_numpy(zero_copy_only=False)
    heads = np.flatnonzero(np.concatenate([[True], change]))
    if heads.size > n // 4 + 16:
        return None  # ids scattered over the rows: a hash table is faster
    first_rows = _Bytes.read(arr.take(pa.array(heads)))
    if first_rows is None:  # pragma: no cover - the rows passed the same check
        return None
    ranks = _keys(first_rows.words(_width8(first_rows.width))).order_ranks(np.arange(heads.size))
    first = np.zeros(int(ranks.max()) + 1, dtype=np.int64)
    first[ranks[::-1]] = heads[::-1]  # the first row of each id
    codes = np.repeat(ranks.astype(np.int32), np.diff(np.append(heads, n)))
    return codes, pd.Index(col.iloc[first].array)


def _keys(words: U64Array) -> IdKeys:
    """Exact keys (one word) or fingerprints confirmed on the words."""
    if words.shape[1] == 1:
        return IdKeys(words[:, 0], None)  # a view: the (n, 1) words are contiguous
    return IdKeys(_fingerprint(words), words)


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
    packed = np.multiply(keys, _MIX[1], out=out)  # odd multiplier: a bijection of 64-bit keys
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

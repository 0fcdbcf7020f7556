"""String ids as 64-bit keys read from Arrow's buffers (the grade join on them: ``key_join``).

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
  sorted judgments are searched in them: sorted probes walk the array forward
  (:class:`~sessionval.measures.key_join.JudgedKeys`);
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
from typing import Any, Final

import numpy as np
import numpy.typing as npt
import pandas as pd

from .._types import IntArray
from ..kernels.blocks import for_blocks

__all__ = [
    "SPREAD",
    "IdKeys",
    "KeyCollision",
    "U64Array",
    "id_codes",
    "id_key_jobs",
    "id_keys",
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
#: The odd multiplier that spreads a key's low bits into its high bits (a bijection of
#: 64-bit keys: :func:`~sessionval.measures.key_join.pack_keys`).
SPREAD: Final = _MIX[1]


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

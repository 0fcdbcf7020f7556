"""String ids as 64-bit keys read from Arrow's buffers, and the grade join on them.

A run of 28M rows holds about 1M distinct document ids; hashing them into a dictionary
(``pyarrow.compute.dictionary_encode``, ``pandas.factorize``) costs a cache miss per
row and dominated single-query evaluation from string DataFrames.  Here no dictionary
of documents is built:

* every id becomes the big-endian 64-bit words of its bytes, zero-padded to a common
  width (one ``utf8_rpad`` and a cast to fixed-size binary in Arrow, then a NumPy view:
  no Python string is made).  Ids of at most 8 bytes *are* their word: an exact key
  that sorts as ``strcmp``; longer ids get a 64-bit fingerprint of their words;
* the judgments are sorted by (judgment topic, key) once and each run row is found by
  a branch-free binary search inside its topic's block (a few vectorised passes, all
  in cache), not by hashing.

Exactness does not rest on the fingerprints: a match is confirmed on the full words,
and a collision among the judgments of one topic (never seen; 2^-64 per pair) returns
``None`` so the caller takes the dictionary path.  Non-ASCII ids, missing ids and
non-string columns also return ``None``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import numpy.typing as npt
import pandas as pd

from .._types import FloatArray, IntArray

__all__ = [
    "IdKeys",
    "JudgedKeys",
    "KeyCollision",
    "id_keys",
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
        ``exact``: the id's bytes as one big-endian word (sorts as ``strcmp``);
        otherwise a fingerprint of ``words``.
    words
        ``(n, width / 8)`` big-endian words of the zero-padded ids (``None`` when exact).
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

    def order_ranks(self, rows: IntArray) -> IntArray:
        """Rank of the ids at ``rows`` in byte order (``strcmp``, as trec_eval)."""
        if self.words is None:
            return np.unique(self.keys[rows], return_inverse=True)[1].astype(np.int64)
        w = self.words[rows]
        order = np.lexsort(w.T[::-1])
        sw = w[order]
        new = np.ones(rows.size, dtype=bool)
        new[1:] = (sw[1:] != sw[:-1]).any(axis=1)
        ranks = np.empty(rows.size, dtype=np.int64)
        ranks[order] = np.cumsum(new) - 1
        return ranks


def _width(arr: Any) -> int | None:
    """Bytes of the longest id, or ``None`` for nulls or non-ASCII ids."""
    import pyarrow.compute as pc

    if arr.null_count or not pc.all(pc.string_is_ascii(arr)).as_py():
        return None
    longest = pc.max(pc.binary_length(arr)).as_py()
    return int(longest or 0)


def _words(arr: Any, width8: int) -> U64Array:
    """``(n, width8 / 8)`` native uint64 words of the ids, zero-padded (no Python strings)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    n = len(arr)
    if n == 0:
        return np.zeros((0, width8 // 8), dtype=np.uint64)
    padded = pc.utf8_rpad(arr, width8, "\x00")  # ASCII: characters are bytes
    binary = pa.large_binary() if pa.types.is_large_string(arr.type) else pa.binary()
    fixed = padded.cast(binary).cast(pa.binary(width8))
    raw = np.frombuffer(fixed.buffers()[1], dtype=">u8", count=n * (width8 // 8))
    return raw.reshape(n, width8 // 8).astype(np.uint64)


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


def id_keys(columns: Sequence[Any]) -> list[IdKeys] | None:
    """Keys of several string id columns in one key space (one common width).

    Returns ``None`` when a column is not plain ASCII strings without missing values
    (categoricals, numbers, nulls, non-ASCII): the dictionary path handles those.

    Examples
    --------
    >>> a, b = id_keys([pd.Series(["d2", "d10"], dtype="str"), pd.Series(["d10"], dtype="str")])
    >>> a.exact, bool(a.keys[1] == b.keys[0]), a.order_ranks(np.array([0, 1])).tolist()
    (True, True, [1, 0])
    """
    arrays = [_arrow_strings(c) for c in columns]
    if any(a is None for a in arrays):
        return None
    widths = [_width(a) for a in arrays]
    if any(w is None for w in widths):
        return None
    width8 = max(8, -(-max(w for w in widths if w is not None) // 8) * 8)
    out = []
    for a in arrays:
        words = _words(a, width8)
        if width8 == 8:
            out.append(IdKeys(words[:, 0].copy(), None))
        else:
            out.append(IdKeys(_fingerprint(words), words))
    return out


@dataclass(frozen=True)
class JudgedKeys:
    """Judgments sorted by (topic, document key) for the grade join.

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

    @staticmethod
    def _pack(
        topic: IntArray, keys: U64Array, tbits: int, counts: IntArray | None = None
    ) -> U64Array:
        """Packed keys of rows; ``counts``: ``topic`` holds one code per list of rows."""
        out: U64Array = keys * _MIX[1]  # odd multiplier: a bijection of 64-bit keys
        out >>= np.uint64(tbits)
        high = topic.astype(np.uint64) << np.uint64(64 - tbits)
        out |= high if counts is None else np.repeat(high, counts)
        return out

    @classmethod
    def build(
        cls, topic: IntArray, n_topics: int, docs: IdKeys, grades: FloatArray
    ) -> JudgedKeys | tuple[int, int] | None:
        """Sort the judgments by (topic, key).

        ``topic`` codes each judgment's topic (0..n_topics-1).  Returns the two rows of
        a (topic, document) judged twice, or ``None`` when two different ids of one
        topic share a packed key (the caller takes the dictionary path).
        """
        tbits = max(1, int(n_topics).bit_length())
        packed = cls._pack(topic, docs.keys, tbits)
        order = np.argsort(packed).astype(np.int64)
        packed = packed[order]
        dup = np.flatnonzero(packed[1:] == packed[:-1])
        if dup.size:
            a, b = order[dup], order[dup + 1]
            same = docs.same(a, docs, b)
            if same.any():
                i = int(np.flatnonzero(same)[0])
                return int(a[i]), int(b[i])
            return None
        return cls(packed, tbits, order, grades[order], docs)

    def grades_of(
        self, topic: IntArray, docs: IdKeys, counts: IntArray | None = None
    ) -> FloatArray:
        """Grade of each row (topic code, document), NaN when unjudged.

        ``counts``: rows come in lists, ``topic`` holding one code per list and list
        ``i`` owning the next ``counts[i]`` rows.  The rows' packed keys are sorted
        once and the (fewer, sorted) judgments searched in them: sorted probes walk
        the array forward, several times faster than one search per row.  A match of
        the packed key is confirmed on the whole id.

        Raises
        ------
        KeyCollision
            Two rows of one list share a packed key: the same id twice, or (never
            seen) two ids whose packed keys collide.
        """
        n = docs.keys.size
        out = np.full(n, np.nan)
        if self.packed.size == 0 or n == 0:
            return out
        probe = self._pack(topic, docs.keys, self.tbits, counts)
        order = np.argsort(probe)
        probe = probe[order]
        clash = np.flatnonzero(probe[1:] == probe[:-1])
        if clash.size:  # same packed key in one list: a repeated document or a collision
            raise KeyCollision((int(order[clash[0]]), int(order[clash[0] + 1])))
        at = np.searchsorted(probe, self.packed)
        np.minimum(at, n - 1, out=at)
        judged = np.flatnonzero(probe[at] == self.packed)
        rows = order[at[judged]]
        ok = docs.same(rows, self.docs, self.rows[judged])
        out[rows[ok]] = self.grades[judged[ok]]
        return out

"""The one (judgment key, document) -> grade join, on integer codes.

Ids are encoded once per category (Arrow hashing for strings), pairs combined
into one int64 key and probed against the sorted judgment keys.  Every grade a
measure sees comes through :class:`JudgmentIndex`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

import numpy as np
import numpy.typing as npt
import pandas as pd

from .._types import FloatArray, IntArray
from ..errors import JudgmentError, MeasureSpecError
from ..frame import JudgmentFrame, SessionFrame

__all__ = [
    "JudgmentIndex",
    "index_in",
    "lookup_grades",
    "result_grades",
    "string_ranks",
]


def _is_string_index(idx: pd.Index) -> bool:
    return idx.dtype == object or pd.api.types.is_string_dtype(idx.dtype)


def index_in(values: pd.Index, lookup: pd.Index) -> IntArray:
    """Position of each of ``values`` in ``lookup`` (−1 when absent), as int64.

    String indexes go through Arrow's hash table (``pyarrow.compute.index_in``),
    several times faster than ``Index.get_indexer`` on millions of ids; other dtypes
    use pandas.  ``lookup`` must not contain duplicates.
    """
    if len(values) == 0:
        return np.zeros(0, dtype=np.int64)
    if _is_string_index(values) and _is_string_index(lookup):
        import pyarrow as pa
        import pyarrow.compute as pc

        res = pc.index_in(
            pa.array(
                np.asarray(values.astype(str), dtype=object)
                if values.dtype == object
                else values.array
            ),
            value_set=pa.array(
                np.asarray(lookup.astype(str), dtype=object)
                if lookup.dtype == object
                else lookup.array
            ),
        )
        return np.asarray(res.fill_null(-1).to_numpy(zero_copy_only=False), dtype=np.int64)
    return np.asarray(lookup.get_indexer(values), dtype=np.int64)


def string_ranks(values: pd.Index) -> IntArray:
    """Rank (0-based) of each id in byte order (C ``strcmp``, as trec_eval sorts)."""
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


@dataclass(frozen=True, slots=True)
class JudgmentIndex:
    """Judgments prepared for joins: sorted int64 keys ``topic_code * n_docs + doc_code``.

    Build once with :meth:`build` and reuse for many :func:`lookup_grades` calls.
    """

    topics: pd.Index
    docs: pd.Index
    keys: IntArray
    grades: FloatArray
    source: str
    key_index: pd.Index

    @property
    def _grades_nan(self) -> FloatArray:
        return np.append(self.grades, np.nan)

    @classmethod
    def build(cls, judgments: JudgmentFrame) -> JudgmentIndex:
        """Sort the judgments' combined keys; raise on a (topic, doc) judged twice."""
        t = judgments.table
        tcat = t["topic_id"].cat
        dcat = t["doc_id"].cat
        tc = tcat.codes.to_numpy().astype(np.int64)
        dc = dcat.codes.to_numpy().astype(np.int64)
        nd = max(len(dcat.categories), 1)
        keys = tc * nd + dc
        order = np.argsort(keys, kind="stable")
        keys = keys[order]
        grades = t["grade"].to_numpy().astype(np.float64)[order]
        missing = (tc < 0) | (dc < 0)
        if missing.any():
            row = int(np.flatnonzero(missing)[0])
            raise JudgmentError(
                f"{judgments.source}: row {row}: judgment without topic_id or doc_id"
            )
        dup = np.flatnonzero(keys[1:] == keys[:-1])
        if dup.size:
            k = int(keys[dup[0]])
            raise JudgmentError(
                f"{judgments.source}: document {dcat.categories[k % nd]!r} "
                "is judged more than once "
                f"for topic {tcat.categories[k // nd]!r} ({dup.size} duplicate pair(s)); "
                "each (topic, document) must have one grade"
            )
        return cls(
            pd.Index(tcat.categories),
            pd.Index(dcat.categories),
            keys,
            grades,
            judgments.source,
            pd.Index(keys),
        )

    def lookup_codes(
        self,
        key_codes: npt.ArrayLike,
        key_categories: pd.Index,
        doc_codes: npt.ArrayLike,
        doc_categories: pd.Index,
    ) -> FloatArray:
        """Grades for rows given as integer codes into their own category indexes.

        Categories are translated once (``get_indexer`` over the categories, not the
        rows); rows then cost two ``take``, one multiply-add and one hash probe.
        """
        kc = np.asarray(key_codes)
        dc = np.asarray(doc_codes)
        nd = max(len(self.docs), 1)
        # ids absent from the judgments map to values that make the combined key
        # negative (never a judgment key); code -1 (missing) indexes the appended slot.
        # An unknown key is -1: key * nd + doc then lies in [-nd, -1] (a huge negative
        # sentinel times nd would overflow int64 beyond ~8M judged documents)
        kmap = index_in(pd.Index(key_categories), self.topics)
        kmap = np.append(np.where(kmap < 0, -1, kmap), -1)
        dmap = index_in(pd.Index(doc_categories), self.docs)
        dmap = np.append(np.where(dmap < 0, -(2**60), dmap), -(2**60))
        q = kmap[kc]
        q *= nd
        q += dmap[dc]
        n = q.size
        if n > 1 and np.count_nonzero(kc[1:] != kc[:-1]) * 8 < n:
            # rows grouped by key (every ranked list is): binary search on the sorted
            # judgment keys stays in cache and beats hashing ~2x
            pos = np.searchsorted(self.keys, q)
            pos[pos == self.keys.size] = 0
            hit = self.keys[pos] == q if self.keys.size else np.zeros(n, dtype=bool)
            pos[~hit] = -1
        else:
            # hash join (pandas' int64 hash table, built once per index and cached);
            # on random probes ~4x faster than searchsorted
            pos = self.key_index.get_indexer(pd.Index(q, copy=False))
        del q
        out: FloatArray = self._grades_nan[pos]  # -1 -> the NaN slot
        return out

    def lookup_lists(
        self,
        key_positions: npt.ArrayLike,
        counts: npt.ArrayLike,
        doc_codes: npt.ArrayLike,
        doc_categories: pd.Index,
    ) -> FloatArray:
        """Grades for rows grouped in lists (NaN when unjudged).

        List ``i`` owns the next ``counts[i]`` rows; its judgment key is
        ``topics[key_positions[i]]`` (−1: a key without judgments);
        ``doc_codes`` index ``doc_categories`` (−1: missing).  The key part of each
        row's combined key is built per list, and the probe is a binary search on the
        sorted judgment keys (rows grouped by key stay in cache).
        """
        dc = np.asarray(doc_codes)
        nd = max(len(self.docs), 1)
        kmap = np.asarray(key_positions, dtype=np.int64)
        # an unknown key or doc makes the combined key negative (never a judgment key)
        base = np.where(kmap < 0, -(2**61), kmap * nd).astype(np.int64)
        dmap = index_in(pd.Index(doc_categories), self.docs)
        dmap = np.append(np.where(dmap < 0, -(2**60), dmap), -(2**60))
        cnt = np.asarray(counts, dtype=np.int64)
        off = np.zeros(cnt.size + 1, dtype=np.int64)
        np.cumsum(cnt, out=off[1:])
        n = int(off[-1])
        out = np.full(n, np.nan)
        if self.keys.size == 0:
            return out
        last = self.keys.size - 1
        # fixed-size blocks of rows (not a loop per list): the temporaries stay small
        # and in cache, which bounds peak memory on tens of millions of rows
        for a in range(0, n, _LOOKUP_BLOCK):
            b = min(a + _LOOKUP_BLOCK, n)
            i0 = int(np.searchsorted(off, a, side="right")) - 1
            i1 = int(np.searchsorted(off, b, side="left"))
            part = np.minimum(off[i0 + 1 : i1 + 1], b) - np.maximum(off[i0:i1], a)
            q = dmap[dc[a:b]]
            q += np.repeat(base[i0:i1], part)
            pos = np.searchsorted(self.keys, q)
            np.minimum(pos, last, out=pos)
            hit = np.flatnonzero(self.keys[pos] == q)
            out[a + hit] = self.grades[pos[hit]]
        return out


_LOOKUP_BLOCK: Final[int] = 1 << 20


def _as_categorical(values: object) -> tuple[IntArray, pd.Index]:
    if isinstance(values, pd.Series):
        if isinstance(values.dtype, pd.CategoricalDtype):
            return values.cat.codes.to_numpy().astype(np.int64), pd.Index(values.cat.categories)
        values = values.to_numpy()
    if isinstance(values, pd.Categorical):
        return np.asarray(values.codes, dtype=np.int64), pd.Index(values.categories)
    codes, uniques = pd.factorize(np.asarray(values, dtype=object))
    return codes.astype(np.int64), pd.Index(uniques.astype(str))


def lookup_grades(
    keys: pd.Series | pd.Categorical | npt.ArrayLike,
    docs: pd.Series | pd.Categorical | npt.ArrayLike,
    judgments: JudgmentFrame | JudgmentIndex,
) -> FloatArray:
    """Grade of each (judgment key, document) pair; NaN when unjudged.

    Parameters
    ----------
    keys
        Judgment key (topic, or session/turn id) per row: categorical Series,
        ``pd.Categorical`` or array of strings.
    docs
        Document id per row, same kinds.
    judgments
        The judgments, or a prebuilt :class:`JudgmentIndex`.

    Returns
    -------
    numpy.ndarray
        float64 grades, NaN where the pair has no judgment.

    Notes
    -----
    Ids are encoded to integer codes once per category; pairs are combined into one
    int64 key and joined against the judgment keys with a hash table
    (O(n log m), no Python loop per row).

    Examples
    --------
    >>> import pandas as pd
    >>> from sessionval.frame import JudgmentFrame
    >>> from sessionval.models.judgments import GradeScale
    >>> t = pd.DataFrame({"topic_id": ["1", "1", "2"], "doc_id": ["a", "b", "a"],
    ...                   "grade": [2, 0, 1], "assessor": [""] * 3}).astype(
    ...     {"topic_id": "category", "doc_id": "category", "grade": "int16",
    ...      "assessor": "category"})
    >>> j = JudgmentFrame(t, GradeScale.default())
    >>> lookup_grades(["1", "1", "2", "3"], ["a", "c", "a", "a"], j)
    array([ 2., nan,  1., nan])
    """
    index = judgments if isinstance(judgments, JudgmentIndex) else JudgmentIndex.build(judgments)
    kc, kcat = _as_categorical(keys)
    dc, dcat = _as_categorical(docs)
    if kc.shape != dc.shape:
        raise JudgmentError(f"keys and docs differ in length ({kc.size} vs {dc.size})")
    return index.lookup_codes(kc, kcat, dc, dcat)


def result_grades(
    frame: SessionFrame,
    judgments: JudgmentFrame | JudgmentIndex | None,
    *,
    source: Literal["reference", "searcher"] = "reference",
) -> FloatArray:
    """Grade of every row of ``frame.results`` (NaN = unjudged).

    Parameters
    ----------
    frame
        The study.
    judgments
        Reference judgments (required for ``source="reference"``).
    source
        ``"reference"``: look up (``queries.qrels_id`` of the row's query, ``doc_id``)
        in the judgments; ``"searcher"``: the searcher's own ``user_grade``.

    Returns
    -------
    numpy.ndarray
        float64 grades, one per result row.
    """
    if source == "searcher":
        return frame.results["user_grade"].to_numpy(dtype=np.float64, na_value=np.nan)
    if source != "reference":
        raise MeasureSpecError(f"judgment source {source!r} unknown; use 'reference' or 'searcher'")
    if judgments is None:
        raise JudgmentError("judgment source 'reference' needs judgments (qrels); none were given")
    index = judgments if isinstance(judgments, JudgmentIndex) else JudgmentIndex.build(judgments)
    qcat = frame.queries["qrels_id"].cat
    qidx = frame.results["query_idx"].to_numpy().astype(np.int64)
    kc = qcat.codes.to_numpy().astype(np.int64)[qidx]
    dcat = frame.results["doc_id"].cat
    return index.lookup_codes(
        kc, pd.Index(qcat.categories), dcat.codes.to_numpy(), pd.Index(dcat.categories)
    )

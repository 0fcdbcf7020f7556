"""The (judgment key, document) -> grade join on integer codes (the dictionary road).

Ids are encoded once per category (Arrow hashing for strings), pairs combined
into one int64 key and probed against the sorted judgment keys.
:class:`JudgmentIndex` holds the judgments sorted for the join; its
:class:`GradeLookup` is the join prepared for one set of key and document
categories, applied per chunk: one implementation of the grade join,
:class:`~sessionval.judgments.join.GradeJoin`.  Session evaluation and
``RankedLists.from_run`` join through it; ``evaluate_run`` on plain ASCII string
tables joins on 64-bit keys instead (:class:`~sessionval.measures.key_join.JudgedKeys`,
the other implementation), chosen by the data in
:func:`~sessionval.measures.run_lists.ranked_lists`, which falls back here whenever the
data does not suit the keys.  Neither join validates: judgments come from the one boundary,
:mod:`sessionval.validate.judgments`.
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
from ..kernels.segments import offsets_from_counts
from ..validate.ranking import string_ranks

__all__ = [
    "GradeLookup",
    "JudgmentIndex",
    "as_categorical",
    "dense_cells",
    "frame_lookup",
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
    if len(lookup) == 0:  # nothing to find (an empty lookup may have Arrow's null type)
        return np.full(len(values), -1, dtype=np.int64)
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


@dataclass(frozen=True, slots=True)
class JudgmentIndex:
    """Judgments prepared for joins: sorted int64 keys ``topic_code * n_docs + doc_code``.

    Build once with :meth:`build`; :meth:`prepare` turns it into the
    :class:`GradeLookup` for one set of key and document categories.
    """

    topics: pd.Index
    docs: pd.Index
    keys: IntArray
    grades: FloatArray
    source: str
    key_index: pd.Index

    @classmethod
    def build(cls, judgments: JudgmentFrame) -> JudgmentIndex:
        """Sort the judgments' combined keys (one grade per key: the boundary's invariant)."""
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
        # the boundary (sessionval.validate.judgments) gives one grade per (topic, doc);
        # a frame built by hand around it is refused here, not joined wrongly
        if ((tc < 0) | (dc < 0)).any() or (keys[1:] == keys[:-1]).any():
            raise JudgmentError(
                f"{judgments.source}: judgments with a missing id or a (topic, document) "
                "listed twice; build them with sessionval.judgments_from_table (or "
                "judgments_from_records), which applies the rule of one grade each"
            )
        return cls(
            pd.Index(tcat.categories),
            pd.Index(dcat.categories),
            keys,
            grades,
            judgments.source,
            pd.Index(keys),
        )

    def prepare(self, key_categories: pd.Index, doc_categories: pd.Index) -> GradeLookup:
        """The join prepared for rows coded against these key and document categories."""
        return GradeLookup.prepare(self, key_categories, doc_categories)


_UNKNOWN_KEY: Final[int] = -(2**61)
"""Key part of a row whose judgment key has no judgments: the combined key stays negative."""

_UNKNOWN_DOC: Final[int] = -(2**60)
"""Document part of a row whose document was never judged: the combined key stays negative."""

_BLOCK_ROWS: Final[int] = 1 << 20
"""Rows per probe block: the temporaries stay small and in cache on tens of millions of rows."""

_DENSE_PER_JUDGMENT: Final[int] = 16
"""A dense grade table may have this many cells per judgment (or :data:`_DENSE_MIN_CELLS`)."""

_DENSE_MIN_CELLS: Final[int] = 1 << 16
"""Cells a dense grade table may always have (512 kB): small judgment sets are dense."""

_DENSE_MAX_CELLS: Final[int] = 1 << 22
"""Cells a dense grade table never exceeds (32 MB), whatever the judgments' size."""


def dense_cells(n_topics: int, n_docs: int, n_judgments: int) -> int | None:
    """Cells of the dense (topic, document) grade table, or ``None`` when it would be too large.

    The table has a row per judged topic and a column per judged document, plus a
    last row and column of NaN for keys and documents without judgments; it is
    used when it stays within :data:`_DENSE_PER_JUDGMENT` cells per judgment (at
    least :data:`_DENSE_MIN_CELLS`, at most :data:`_DENSE_MAX_CELLS`).

    Examples
    --------
    >>> dense_cells(4, 400, 436)  # a study's few topics: (4 + 1) * (400 + 1)
    2005
    >>> dense_cells(1000, 150_000, 150_000) is None  # a TREC collection's: sorted keys
    True
    """
    cells = (n_topics + 1) * (n_docs + 1)
    limit = min(max(_DENSE_PER_JUDGMENT * n_judgments, _DENSE_MIN_CELLS), _DENSE_MAX_CELLS)
    return cells if cells <= limit else None


@dataclass(frozen=True)
class GradeLookup:
    """The (judgment key, document) -> grade join on dictionary codes, prepared once.

    One of the two implementations of :class:`~sessionval.judgments.join.GradeJoin`
    (the other, on 64-bit keys of string ids, is
    :class:`~sessionval.measures.key_join.JudgedKeys`; the data chooses, in
    :func:`~sessionval.measures.run_lists.ranked_lists`).  :meth:`prepare` translates
    the caller's key and document *categories* to the judgments' codes once
    (``key_positions``, ``doc_parts``; each with a last slot for code −1, missing).
    Applying it to rows then costs two ``take``, one multiply-add and one probe per
    row, whatever the chunk.  The probe is a ``take`` from a dense (topic, document)
    grade table when the judgments' topics times documents are few
    (:func:`dense_cells`: a study's handful of topics), else a search of the sorted
    judgment keys; both give the same grades.  The session evaluation
    (per chunk of sessions), :func:`result_grades`, :func:`lookup_grades` and
    :meth:`~sessionval.measures.lists.RankedLists.from_run` join through it.  The
    fields are arrays (and the judgments' hash index), so a prepared lookup pickles
    to a worker.

    Parameters
    ----------
    keys, grades
        Sorted combined judgment keys ``topic * n_docs + doc`` and their grades.
    n_docs
        Number of judged documents (the multiplier of the combined key); with a
        ``table``, its row length (judged documents + 1).
    key_positions
        Judgment topic position of each key category (−1: no judgments), plus −1;
        with a ``table``, its row (the last, all NaN, for no judgments).
    doc_parts
        Judged document code of each document category (a large negative sentinel
        when never judged), plus the sentinel; with a ``table``, its column (the
        last, all NaN, when never judged).
    key_index
        ``keys`` as a pandas Index: its hash table serves scattered probes.
    table
        The dense grade table (row-major, NaN where unjudged), or ``None``: the
        sorted keys are probed.
    """

    keys: IntArray
    grades: FloatArray
    n_docs: int
    key_positions: IntArray
    doc_parts: IntArray
    key_index: pd.Index
    table: FloatArray | None = None

    @classmethod
    def prepare(
        cls, index: JudgmentIndex, key_categories: pd.Index, doc_categories: pd.Index
    ) -> GradeLookup:
        """Translate key and document categories to the judgments' codes (once)."""
        kpos = index_in(pd.Index(key_categories), index.topics)
        dpos = index_in(pd.Index(doc_categories), index.docs)
        n_t, n_d = len(index.topics), len(index.docs)
        cells = dense_cells(n_t, n_d, index.keys.size)
        if cells is not None:
            # row per topic, column per judged document; the last row and column: NaN
            table = np.full(cells, np.nan)
            nd = max(n_d, 1)
            table[index.keys // nd * (n_d + 1) + index.keys % nd] = index.grades
            return cls(
                index.keys,
                index.grades,
                n_d + 1,
                np.append(np.where(kpos < 0, n_t, kpos), n_t),
                np.append(np.where(dpos < 0, n_d, dpos), n_d),
                index.key_index,
                table,
            )
        return cls(
            index.keys,
            index.grades,
            max(len(index.docs), 1),
            np.append(np.where(kpos < 0, -1, kpos), -1),
            np.append(np.where(dpos < 0, _UNKNOWN_DOC, dpos), _UNKNOWN_DOC),
            index.key_index,
        )

    def _key_parts(self, key_codes: npt.ArrayLike) -> IntArray:
        pos = self.key_positions[np.asarray(key_codes)]
        if self.table is not None:  # every key has a row (the last: none)
            rows: IntArray = (pos * self.n_docs).astype(np.int64, copy=False)
            return rows
        return np.where(pos < 0, _UNKNOWN_KEY, pos * self.n_docs).astype(np.int64)

    def _probe(self, q: IntArray, out: FloatArray, *, grouped: bool) -> None:
        """Write the grades of combined keys ``q`` into ``out``.

        With the dense table every cell of ``out`` is written; else ``out`` must be
        NaN-filled (absent keys stay NaN).
        """
        if self.table is not None:
            np.take(self.table, q, out=out)
            return
        if self.keys.size == 0 or q.size == 0:
            return
        if grouped:
            # rows grouped by key (every ranked list is): binary search on the sorted
            # judgment keys stays in cache and beats hashing ~2x
            pos = np.searchsorted(self.keys, q)
            np.minimum(pos, self.keys.size - 1, out=pos)
            hit = np.flatnonzero(self.keys[pos] == q)
            out[hit] = self.grades[pos[hit]]
        else:
            # hash join (pandas' int64 hash table, built once per index and cached);
            # on scattered probes ~4x faster than searchsorted
            pos = self.key_index.get_indexer(pd.Index(q, copy=False))
            hit = np.flatnonzero(pos >= 0)
            out[hit] = self.grades[pos[hit]]

    def rows(self, key_codes: npt.ArrayLike, doc_codes: npt.ArrayLike) -> FloatArray:
        """Grade of each row given its key code and document code (any row order).

        Codes index the categories given to :meth:`prepare` (−1: missing).
        """
        kc = np.asarray(key_codes)
        q = self._key_parts(kc)
        q += self.doc_parts[np.asarray(doc_codes)]
        grouped = bool(kc.size > 1 and np.count_nonzero(kc[1:] != kc[:-1]) * 8 < kc.size)
        out = self._empty(q.size)
        self._probe(q, out, grouped=grouped)
        return out

    def _empty(self, n: int) -> FloatArray:
        """The output of ``n`` rows: the dense probe writes every row, the search only hits."""
        return np.empty(n) if self.table is not None else np.full(n, np.nan)

    def lists(
        self, key_codes: npt.ArrayLike, counts: npt.ArrayLike, docs: npt.ArrayLike
    ) -> FloatArray:
        """Grades of rows grouped in lists: list ``i`` owns the next ``counts[i]`` rows.

        The dictionary-code implementation of :class:`~sessionval.judgments.join.GradeJoin`:
        ``key_codes`` holds one key code per list, ``docs`` each row's document code
        (both in the categories given to :meth:`prepare`).  The key part of each row
        is spread per block of rows (not per list, not per row in Python), so memory
        stays small.
        """
        dc = np.asarray(docs)
        base = self._key_parts(key_codes)
        off = offsets_from_counts(counts)
        n = int(off[-1])
        out = self._empty(n)
        for a in range(0, n, _BLOCK_ROWS):
            b = min(a + _BLOCK_ROWS, n)
            i0 = int(np.searchsorted(off, a, side="right")) - 1
            i1 = int(np.searchsorted(off, b, side="left"))
            part = np.minimum(off[i0 + 1 : i1 + 1], b) - np.maximum(off[i0:i1], a)
            q = self.doc_parts[dc[a:b]]
            q += np.repeat(base[i0:i1], part)
            self._probe(q, out[a:b], grouped=True)
        return out


def as_categorical(values: object) -> tuple[IntArray, pd.Index]:
    """Int64 codes of ``values`` (Series, Categorical or array) and their categories."""
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
    int64 key and joined against the judgment keys (:class:`GradeLookup`; no Python
    loop per row).

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
    kc, kcat = as_categorical(keys)
    dc, dcat = as_categorical(docs)
    if kc.shape != dc.shape:
        raise JudgmentError(f"keys and docs differ in length ({kc.size} vs {dc.size})")
    return index.prepare(kcat, dcat).rows(kc, dc)


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
    # results are grouped by query (a frame invariant): one key per query
    counts = np.bincount(frame.results["query_idx"].to_numpy(), minlength=len(frame.queries))
    return frame_lookup(frame, index).lists(
        frame.queries["qrels_id"].cat.codes.to_numpy(),
        counts,
        frame.results["doc_id"].cat.codes.to_numpy(),
    )


def frame_lookup(frame: SessionFrame, index: JudgmentIndex) -> GradeLookup:
    """The join prepared for a study's ``queries.qrels_id`` and ``results.doc_id`` categories."""
    return index.prepare(
        pd.Index(frame.queries["qrels_id"].cat.categories),
        pd.Index(frame.results["doc_id"].cat.categories),
    )

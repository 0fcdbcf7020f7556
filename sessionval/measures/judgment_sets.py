"""Judgments that repeat one set per topic: sorted once per distinct set.

Qrels expanded from topics to queries (each query carries its topic's judgments,
issue 26) hold a few distinct judgment sets many times over: 1,000 topics' sets of
150 documents repeated over 133k queries are 20 M rows, of which 150k differ.  The
grade join on 64-bit keys (:class:`~sessionval.measures.key_join.JudgedKeys`) wants
the judgments sorted by (topic, key); :func:`judgment_sets` finds the distinct sets and
:meth:`JudgmentSets.judged_keys` sorts one copy of each, laid out again for every topic
holding it, instead of sorting every row (the recall bases, :meth:`JudgmentSets.ideal`,
likewise count each set once):

* each topic's rows must be contiguous (as qrels files and ``qrels_iter()`` list
  them); a 64-bit fingerprint of each topic's (position, document key, grade)
  sequence groups the topics that are candidates for one set;
* a candidate counts as a copy of its group's first topic only once its rows are
  confirmed equal to that topic's, row by row (key, full id words, grade): exactness
  does not rest on the fingerprint.  A topic that differs (another order, a collision)
  is a set of its own;
* the distinct sets are sorted by the packed key of :func:`~.key_join.pack_keys`;
  the packed key's low bits depend on the document only, so a set's sorted order is
  every copy's sorted order, and the result is exactly the one sort of every row
  (:meth:`JudgedKeys.build <sessionval.measures.key_join.JudgedKeys.build>`).

No shortcut (``None``) when the rows are not grouped by topic or too few sets repeat
to pay for the fingerprints; a document judged twice within a set leaves the plain
build to find it (the caller then takes the dictionary road).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt
import pandas as pd

from .._types import BoolArray, FloatArray, IntArray
from ..judgments.gains import GAIN_SCHEMES
from ..judgments.ideal import IdealGains, ideal_from_codes
from ..kernels.segments import gather_ranges, offsets_from_counts
from .key_join import JudgedKeys, pack_keys, sorted_in_lists
from .string_ids import IdKeys, KeyCollision, U64Array, splitmix

__all__ = ["JudgmentSets", "SetKeys", "judgment_sets"]

_MIN_SHARE: Final = 2
"""Topics per distinct set (on average) below which the plain sort of every row is kept."""
_ODD: Final = (np.uint64(0xD6E8FEB86659FD93), np.uint64(0x9E3779B97F4A7C15))
"""Odd multipliers that spread a row's position in its topic, and its key, over the word."""


def _sequence_prints(
    keys: U64Array, grades: FloatArray, heads: IntArray, lens: IntArray
) -> U64Array:
    """A fingerprint of each topic's (position, key, grade) sequence, and of its length.

    Not an identity (copies are confirmed row by row): a sum over the rows of the key
    and grade mixed with the row's position in its topic, in a few passes.
    """
    pos = np.arange(keys.size, dtype=np.uint64)
    pos -= np.repeat(heads.astype(np.uint64), lens)
    pos *= _ODD[0]
    h = keys * _ODD[1]
    h ^= grades.view(np.uint64)
    h += pos
    h ^= h >> np.uint64(29)
    prints: U64Array = np.add.reduceat(h, heads)
    return splitmix(prints ^ splitmix(lens.astype(np.uint64)))


def _same_rows(
    docs: IdKeys, grades: FloatArray, rep_rows: IntArray, rows: IntArray | None
) -> BoolArray:
    """Whether each of ``rows`` (``None``: all) holds the id and grade of its ``rep_rows``.

    Column by column, so no ``(n, words)`` temporary is made.
    """
    bits = grades.view(np.uint64)  # the grades' bits: a copy is its set, bit for bit
    cols = [bits] + ([] if docs.words is None else list(docs.words.T))
    ok: BoolArray = (docs.keys if rows is None else docs.keys[rows]) == docs.keys[rep_rows]
    for col in cols:
        np.logical_and(ok, (col if rows is None else col[rows]) == col[rep_rows], out=ok)
    return ok


@dataclass(frozen=True)
class JudgmentSets:
    """The judgment rows as copies of a few distinct sets (:func:`judgment_sets`).

    Parameters
    ----------
    heads, lens
        First row and row count of each topic's run of rows, in row order.
    topic_at
        The run of rows of each topic code (``0..n_topics - 1``).
    set_of
        The distinct set of each run of rows; a set's rows are its first run's.
    set_runs
        The run of rows holding each set (its first copy).
    """

    heads: IntArray
    lens: IntArray
    topic_at: IntArray
    set_of: IntArray
    set_runs: IntArray

    @property
    def n_sets(self) -> int:
        """Distinct sets."""
        return int(self.set_runs.size)

    def set_rows(self) -> tuple[IntArray, IntArray]:
        """The rows of every set, set after set, and each set's row count."""
        lens = self.lens[self.set_runs]
        return gather_ranges(self.heads[self.set_runs], lens), lens

    def topic_sets(self) -> IntArray:
        """The set of each topic code."""
        return self.set_of[self.topic_at]

    def judged_keys(self, docs: IdKeys, grades: FloatArray) -> JudgedKeys | None:
        """``JudgedKeys.build`` of every row, sorting each distinct set once.

        Equal to the plain build array for array: the packed key's low bits depend on
        the document only, so a set's sorted order is its copies' order.  ``None`` when
        a document is judged twice within a set (the plain build finds it too).
        ``evaluate_run`` takes :meth:`join` (the same CPU, no per-topic copy of the
        sets: ``benchmarks/bench_shapes.py joins`` times both); this layout is the
        reference the tests hold :class:`SetKeys` to.
        """
        n_topics = self.topic_at.size
        set_rows, set_lens = self.set_rows()
        tbits = max(1, int(n_topics).bit_length())
        set_codes = np.repeat(np.arange(self.n_sets, dtype=np.int64), set_lens)
        packed = pack_keys(set_codes, docs.keys[set_rows], tbits)
        order = np.argsort(packed)
        packed = packed[order]
        if (packed[1:] == packed[:-1]).any():
            return None
        set_off = offsets_from_counts(set_lens)
        low = packed & np.uint64((1 << (64 - tbits)) - 1)
        sorted_rows = set_rows[order]
        at = sorted_rows - np.repeat(self.heads[self.set_runs], set_lens)
        sorted_grades = grades[sorted_rows]
        del packed, set_rows, set_codes, order, sorted_rows
        # every topic in topic order: its set's sorted copy, moved to its own rows
        t_lens = self.lens[self.topic_at]
        src = gather_ranges(set_off[self.topic_sets()], t_lens)
        high = np.arange(n_topics, dtype=np.uint64) << np.uint64(64 - tbits)
        out_packed = low[src]
        out_packed |= np.repeat(high, t_lens)
        out_rows = at[src]
        out_rows += np.repeat(self.heads[self.topic_at], t_lens)
        return JudgedKeys(out_packed, tbits, out_rows, sorted_grades[src], docs)

    def join(self, docs: IdKeys, grades: FloatArray) -> SetKeys | None:
        """The grade join on the distinct sets' keys (:class:`SetKeys`).

        ``None`` when a document is judged twice within a set.
        """
        set_rows, set_lens = self.set_rows()
        tbits = max(1, int(self.topic_at.size).bit_length())
        set_codes = np.repeat(np.arange(self.n_sets, dtype=np.int64), set_lens)
        values = pack_keys(set_codes, docs.keys[set_rows], tbits)
        if np.unique(values).size != values.size:
            return None
        return SetKeys(values, tbits, set_rows, grades[set_rows], self.topic_sets(), docs)

    def ideal(self, topics: pd.Index, grades: FloatArray) -> IdealGains:
        """``ideal_from_codes`` of every row (scheme ``grade``), from each set's rows once."""
        set_rows, set_lens = self.set_rows()
        codes = np.repeat(np.arange(self.n_sets, dtype=np.int64), set_lens)
        per_set = ideal_from_codes(
            pd.RangeIndex(self.n_sets), codes, grades[set_rows], GAIN_SCHEMES["grade"]
        )
        return per_set.take(self.topic_sets(), topics)

    def n_judged(self) -> IntArray:
        """Judgments of each topic code."""
        return self.lens[self.topic_at].astype(np.int64)


def judgment_sets(
    topic: IntArray,
    n_topics: int,
    docs: IdKeys,
    grades: FloatArray,
    *,
    min_share: float = _MIN_SHARE,
) -> JudgmentSets | None:
    """The topics' judgments as copies of distinct sets, confirmed row by row.

    ``topic`` codes each judgment row's topic (0..n_topics-1); each topic's rows must
    be contiguous.  ``None`` when the shortcut does not apply (see the module's
    notes), or when the topics are not on average ``min_share`` copies of each
    distinct set.

    Examples
    --------
    Topics 0 and 2 hold the same set (keys 7, 5 with grades 1, 0); topic 1 its own:

    >>> keys = IdKeys(np.array([7, 5, 9, 7, 5], dtype=np.uint64), None)
    >>> topic, grades = np.array([0, 0, 1, 2, 2]), np.array([1.0, 0.0, 2.0, 1.0, 0.0])
    >>> sets = judgment_sets(topic, 3, keys, grades, min_share=1)
    >>> sets.topic_sets().tolist()
    [0, 1, 0]
    >>> shared = sets.judged_keys(keys, grades)
    >>> plain = JudgedKeys.build(topic, 3, keys, grades)
    >>> bool((shared.packed == plain.packed).all()), shared.rows.tolist() == plain.rows.tolist()
    (True, True)
    """
    n = topic.size
    if n == 0:
        return None
    heads = np.flatnonzero(np.concatenate([[True], topic[1:] != topic[:-1]]))
    if heads.size != n_topics:
        return None  # a topic's rows are not contiguous
    lens = np.diff(np.append(heads, n))
    # copies of one set share their first key and length: too many distinct pairs
    # and the sets cannot repeat enough, found without reading every row
    firsts = docs.keys[heads] ^ splitmix(lens.astype(np.uint64))
    if np.unique(firsts).size * min_share > heads.size:
        return None
    prints = _sequence_prints(docs.keys, grades, heads, lens)
    _, first, cand = np.unique(prints, return_index=True, return_inverse=True)
    if first.size * min_share > heads.size:
        return None
    # confirm each candidate on its group's first topic, row by row
    rep = first[cand.ravel()]
    same_len = lens == lens[rep]
    rows = None if same_len.all() else np.flatnonzero(np.repeat(same_len, lens))
    # each row's counterpart in its candidate set: the same position in the set's first topic
    shift = np.repeat(heads[rep] - heads, lens)
    rep_rows = np.arange(n, dtype=np.int64)
    rep_rows += shift
    del shift
    if rows is not None:
        rep_rows = rep_rows[rows]
    differs = ~_same_rows(docs, grades, rep_rows, rows)
    del rep_rows
    bad = ~same_len
    if differs.any():
        at = np.flatnonzero(differs) if rows is None else rows[differs]
        bad[np.searchsorted(heads, at, side="right") - 1] = True
    rep[bad] = np.flatnonzero(bad)  # a topic that differs is its own set
    del rows, differs
    set_runs, set_of = np.unique(rep, return_inverse=True)
    topic_at = np.empty(n_topics, dtype=np.int64)
    topic_at[topic[heads]] = np.arange(heads.size)
    return JudgmentSets(heads, lens, topic_at, set_of.ravel().astype(np.int64), set_runs)


@dataclass(frozen=True)
class SetKeys:
    """The grade join (:class:`~sessionval.judgments.join.GradeJoin`) on judgment sets.

    Each row's packed (set of its list's topic, document key) is looked up among the
    distinct sets' packed keys with Arrow's hash lookup (``pyarrow.compute.index_in``):
    the judgments are neither laid out per topic nor searched row by row; a match is
    confirmed on the whole id.  The grades equal :class:`JudgedKeys`' on the same
    judgments (``tests/measures/test_judgment_sets.py``).

    Parameters
    ----------
    values
        Packed ``(set, key)`` of every set row (:func:`~.key_join.pack_keys`), unique.
    tbits
        Bits of the set part.
    rows
        The judgment row of each value (indexes ``docs``).
    grades
        The grade of each value.
    topic_set
        The set of each topic code.
    docs
        The judgments' :class:`IdKeys` (by judgment row).
    """

    values: U64Array
    tbits: int
    rows: IntArray
    grades: FloatArray
    topic_set: IntArray
    docs: IdKeys

    def lists(self, key_codes: npt.ArrayLike, counts: npt.ArrayLike, docs: IdKeys) -> FloatArray:
        """Grade of each row (NaN when unjudged): list ``i`` owns the next ``counts[i]`` rows.

        ``key_codes`` holds each list's topic code.  Each list's packed keys are sorted
        (list by list) to find a repeated document; then looked up.

        Raises
        ------
        KeyCollision
            Two rows of one list share a packed key (a repeated document, or a collision).
        """
        import pyarrow as pa
        import pyarrow.compute as pc

        topic = np.asarray(key_codes, dtype=np.int64)
        counts = np.asarray(counts, dtype=np.int64)
        n = docs.keys.size
        out = np.full(n, np.nan)
        if self.values.size == 0 or n == 0:
            return out
        sets = self.topic_set[topic]
        got = sorted_in_lists(docs.keys, sets, self.tbits, counts)
        if got is None:  # lists too uneven for a padded matrix: one sort by (list, key)
            probe = pack_keys(sets, docs.keys, self.tbits, counts)
            order = np.lexsort((probe, np.repeat(np.arange(counts.size), counts)))
            probe = probe[order]
        else:
            order, probe = got
        same = probe[1:] == probe[:-1]
        starts = offsets_from_counts(counts)[1:-1]
        same[starts[(starts > 0) & (starts < n)] - 1] = False  # neighbours in two lists
        clash = np.flatnonzero(same)
        if clash.size:
            raise KeyCollision((int(order[clash[0]]), int(order[clash[0] + 1])))
        at = pc.index_in(pa.array(probe), value_set=pa.array(self.values))
        at = at.fill_null(-1).to_numpy()
        hit = np.flatnonzero(at >= 0)
        found = at[hit]
        rows = order[hit]
        ok = docs.same(rows, self.docs, self.rows[found])
        out[rows[ok]] = self.grades[found[ok]]
        return out

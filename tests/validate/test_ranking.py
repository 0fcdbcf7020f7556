"""The sort within lists of ``validate.ranking`` against one lexsort of all rows."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from sessionval.kernels.segments import offsets_from_counts
from sessionval.validate import ranking
from sessionval.validate.ranking import order_within_lists, run_order


def _lexsorted(values: np.ndarray, lengths: np.ndarray, descending: bool) -> np.ndarray:
    """The reference: one stable lexsort by (list, value) of every row."""
    lists = np.repeat(np.arange(lengths.size), lengths)
    return np.lexsort((-values if descending else values, lists))


@settings(max_examples=80, deadline=None)
@given(
    lengths=st.lists(st.integers(0, 9), min_size=1, max_size=12),
    levels=st.integers(1, 6),
    descending=st.booleans(),
    inf=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_order_within_lists_equals_one_lexsort(
    lengths: list[int], levels: int, descending: bool, inf: bool, seed: int
) -> None:
    # few distinct values: many ties; an infinity equal to the padding needs the stable sort
    rng = np.random.default_rng(seed)
    counts = np.array(lengths, dtype=np.int64)
    values = rng.integers(0, levels, counts.sum()).astype(np.float64)
    if inf and values.size:
        values[rng.integers(0, values.size)] = -np.inf if descending else np.inf
    starts = offsets_from_counts(counts)[:-1]
    want = _lexsorted(values, counts, descending)
    got = order_within_lists(
        values, starts, counts, pad=np.inf, kind="stable", descending=descending
    )
    np.testing.assert_array_equal(got, want)
    if not inf:
        # unstable: the same values in the same lists (ties in any order)
        fast = order_within_lists(values, starts, counts, pad=np.inf, descending=descending)
        np.testing.assert_array_equal(values[fast], values[want])
        lists = np.repeat(np.arange(counts.size), counts)
        np.testing.assert_array_equal(lists[fast], lists)


def test_order_within_lists_of_keys_padded_with_the_largest() -> None:
    top = np.iinfo(np.uint64).max
    values = np.array([5, top, 3, 9, 1, 2], dtype=np.uint64)
    counts = np.array([3, 1, 2])
    got = order_within_lists(values, np.array([0, 3, 4]), counts, pad=top, kind="stable")
    assert got.tolist() == [2, 0, 1, 3, 4, 5]


@settings(max_examples=80, deadline=None)
@given(
    sizes=st.lists(st.integers(1, 30), min_size=1, max_size=8),
    levels=st.integers(1, 5),
    ties=st.sampled_from(["trec_eval", "doc_id", "input"]),
    grouped=st.booleans(),
    unsigned=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_run_order_equals_one_lexsort(
    sizes: list[int], levels: int, ties: str, grouped: bool, unsigned: bool, seed: int
) -> None:
    # random runs with many ties, rows grouped by query or shuffled; the tie-break keys
    # are ranks (int64) or big-endian words (uint64, the exact string keys' form)
    rng = np.random.default_rng(seed)
    q = np.repeat(np.arange(len(sizes)), sizes)
    doc = np.concatenate([rng.permutation(50)[:n] for n in sizes])  # distinct per list
    score = rng.integers(0, levels, q.size).astype(np.float64)
    if not grouped:
        perm = rng.permutation(q.size)
        q, doc, score = q[perm], doc[perm], score[perm]
    qrank = rng.permutation(len(sizes))
    keys = doc.astype(np.uint64) << np.uint64(40) if unsigned else doc.astype(np.int64)

    def doc_ranks(rows: np.ndarray) -> np.ndarray:
        return keys[rows]

    got = run_order(q, qrank, score, doc_ranks, ties=ties)  # type: ignore[arg-type]
    by_doc = {"trec_eval": -doc, "doc_id": doc, "input": np.arange(q.size)}[ties]
    np.testing.assert_array_equal(got, np.lexsort((by_doc, -score, qrank[q])))


def test_run_order_breaks_a_long_tie_through_one_lexsort() -> None:
    # one group of tied rows far longer than the others: too wide for a padded matrix
    score = np.concatenate([np.zeros(300), np.arange(600, dtype=np.float64) // 2])
    q = np.zeros(score.size, dtype=np.int64)
    doc = np.random.default_rng(1).permutation(score.size)
    got = run_order(q, np.array([0]), score, lambda rows: doc[rows], ties="trec_eval")
    np.testing.assert_array_equal(got, np.lexsort((-doc, -score)))


@settings(max_examples=80, deadline=None)
@given(
    sizes=st.lists(st.integers(1, 30), min_size=1, max_size=8),
    levels=st.integers(1, 4),
    layout=st.sampled_from(["best first", "grouped", "shuffled", "one long list"]),
    block=st.sampled_from([4, 1 << 20]),
    seed=st.integers(0, 2**16),
)
def test_score_order_marks_the_ranked_rows_that_tie_with_the_next(
    sizes: list[int], levels: int, layout: str, block: int, seed: int
) -> None:
    # every path of the score order (input already best first, lists moved and
    # sorted block by block, scattered rows, a list too long for the padded matrix)
    rng = np.random.default_rng(seed)
    if layout == "one long list":
        sizes = [*sizes, 10 * sum(sizes)]
    q = np.repeat(rng.permutation(len(sizes)), sizes)
    score = rng.integers(0, levels, q.size).astype(np.float64)
    if layout == "best first":
        best = np.lexsort((-score, q))
        q, score = q[best], score[best]
    elif layout == "shuffled":
        perm = rng.permutation(q.size)
        q, score = q[perm], score[perm]
    ties = np.ones(q.size - 1, dtype=bool) if q.size > 1 else np.zeros(0, dtype=bool)
    rows = ranking._score_order(q, score, stable=False, block=block, ties=ties)
    want = (q[rows][1:] == q[rows][:-1]) & (score[rows][1:] == score[rows][:-1])
    np.testing.assert_array_equal(ties, want)
    np.testing.assert_array_equal(np.lexsort((-score[rows], q[rows])), np.arange(q.size))

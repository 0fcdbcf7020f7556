"""The segment-kernel library against plain per-segment Python loops (Hypothesis)."""

from __future__ import annotations

import itertools

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from sessionval.kernels.segments import (
    cut_segments,
    first_true_rank,
    offsets_from_counts,
    segment_cumsum,
    segment_ids,
    segment_last,
    segment_lengths,
    segment_max,
    segment_ranks,
    segment_sum,
    take_prefix,
)

lengths = st.lists(st.integers(0, 6), min_size=0, max_size=12)
value = st.one_of(st.integers(-5, 9).map(float), st.just(float("nan")))


@st.composite
def segmented(draw: st.DrawFn, *, nan: bool = False) -> tuple[list[list[float]], np.ndarray]:
    lens = draw(lengths)
    elem = value if nan else st.integers(-5, 9).map(float)
    segs = [draw(st.lists(elem, min_size=n, max_size=n)) for n in lens]
    return segs, offsets_from_counts(lens)


def flat(segs: list[list[float]]) -> np.ndarray:
    return np.array([x for s in segs for x in s], dtype=np.float64)


@settings(max_examples=150, deadline=None)
@given(segmented())
def test_layout_ids_ranks_lengths(case) -> None:
    segs, off = case
    assert segment_lengths(off).tolist() == [len(s) for s in segs]
    assert segment_ids(off).tolist() == [i for i, s in enumerate(segs) for _ in s]
    assert segment_ranks(off).tolist() == [r + 1 for s in segs for r in range(len(s))]


@settings(max_examples=150, deadline=None)
@given(segmented())
def test_sum_and_cumsum_equal_loops(case) -> None:
    segs, off = case
    v = flat(segs)
    np.testing.assert_allclose(
        segment_sum(v, segment_ids(off), len(segs)), [sum(s) for s in segs], atol=1e-12
    )
    np.testing.assert_allclose(
        segment_cumsum(v, off), [x for s in segs for x in np.cumsum(s)], atol=1e-9
    )


@settings(max_examples=150, deadline=None)
@given(segmented(nan=True))
def test_last_and_max_equal_loops(case) -> None:
    segs, off = case
    v = flat(segs)
    last = [s[-1] if s else np.nan for s in segs]
    best = [max((x for x in s if x == x), default=np.nan) for s in segs]
    np.testing.assert_array_equal(segment_last(v, off), last)
    np.testing.assert_array_equal(segment_max(v, off), best)


@settings(max_examples=150, deadline=None)
@given(segmented(), st.one_of(st.none(), st.integers(1, 7)))
def test_cut_keeps_each_prefix(case, k) -> None:
    segs, off = case
    rows, new = cut_segments(off, k)
    v = flat(segs)
    kept = [s if k is None else s[:k] for s in segs]
    assert segment_lengths(new).tolist() == [len(s) for s in kept]
    np.testing.assert_array_equal(v[rows], flat(kept))


@settings(max_examples=150, deadline=None)
@given(segmented(), st.data())
def test_first_true_rank_and_take_prefix(case, data) -> None:
    segs, off = case
    v = flat(segs)
    mask = v > 3
    exp = [next((r + 1 for r, x in enumerate(s) if x > 3), 0) for s in segs]
    assert first_true_rank(mask, off, segment_ids(off)).tolist() == exp
    if not segs:
        return
    which = np.array(data.draw(st.lists(st.integers(0, len(segs) - 1), max_size=8)), dtype=int)
    at = np.array(data.draw(st.lists(st.integers(-1, 8), min_size=which.size, max_size=which.size)))
    cum = segment_cumsum(v, off)
    got = take_prefix(cum, off, which, at.astype(np.int64))
    ref = [
        0.0 if a <= 0 or not segs[w] else float(np.cumsum(segs[w])[min(a, len(segs[w])) - 1])
        for w, a in zip(which, at, strict=True)
    ]
    np.testing.assert_allclose(got, ref, atol=1e-9)


# issue 10, item 5: a segment's running sum is its own, whatever comes before it
@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.integers(0, 300), max_size=30),
    st.integers(0, 2**32 - 1),
    st.sampled_from([1e-3, 1.0, 1e6]),
)
def test_segment_cumsum_is_each_segments_own_sum(lengths, seed, scale):
    from sessionval.kernels.segments import segment_cumsum

    rng = np.random.default_rng(seed)
    off = offsets_from_counts(lengths)
    values = rng.random(int(off[-1])) * scale
    got = segment_cumsum(values, off)
    for a, b in itertools.pairwise(off):
        alone = segment_cumsum(values[a:b], np.array([0, b - a]))
        assert np.array_equal(got[a:b], np.cumsum(values[a:b]))  # bit for bit
        assert np.array_equal(got[a:b], alone)
    # the segments in another order: each keeps its bits
    perm = rng.permutation(len(lengths))
    moved = np.concatenate([values[off[i] : off[i + 1]] for i in perm] or [np.zeros(0)])
    moved_off = offsets_from_counts(np.asarray(lengths, dtype=np.int64)[perm])
    again = segment_cumsum(moved, moved_off)
    for k, i in enumerate(perm):
        assert np.array_equal(again[moved_off[k] : moved_off[k + 1]], got[off[i] : off[i + 1]])

"""kernels.segments.segment_cumsum_int against a per-segment loop."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from sessionval.kernels.segments import offsets_from_counts, segment_cumsum, segment_cumsum_int


def _naive(values, lengths):
    out, start = [], 0
    for n in lengths:
        out.append(np.cumsum(values[start : start + n], axis=0))
        start += n
    return np.concatenate(out) if out else values[:0]


@settings(deadline=None, max_examples=80)
@given(
    lengths=hnp.arrays(np.int64, st.integers(0, 20), elements=st.integers(0, 9)),
    width=st.integers(0, 3),
    seed=st.integers(0, 2**32 - 1),
)
def test_matches_a_loop_with_empty_segments_and_columns(lengths, width, seed):
    n = int(lengths.sum())
    rng = np.random.default_rng(seed)
    values = rng.integers(-1000, 1000, (n,) if width == 0 else (n, width))
    got = segment_cumsum_int(values, offsets_from_counts(lengths))
    assert got.dtype == np.int64 and got.shape == values.shape
    assert np.array_equal(got, _naive(values, lengths))
    if width == 0:  # the float kernel agrees on the 1-D case
        assert np.array_equal(segment_cumsum(values, offsets_from_counts(lengths)), got)


def test_exact_when_the_global_running_sum_wraps_around():
    big = np.iinfo(np.int64).max // 2 + 1
    values = np.array([big, big, 5, 7], dtype=np.int64)  # the global sum overflows at row 2
    got = segment_cumsum_int(values, np.array([0, 1, 2, 4]))
    assert got.tolist() == [big, big, 5, 12]

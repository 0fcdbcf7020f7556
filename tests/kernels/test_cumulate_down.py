"""The dense cumulation of the bands and the (cell, rank) adder with a given index."""

from __future__ import annotations

import numpy as np

from sessionval.kernels.cumulate import add_at_index, add_by_rank, cumulate_down


def test_cumulate_down_is_cumsum_along_ranks_bit_for_bit() -> None:
    rng = np.random.default_rng(3)
    m = rng.random((37, 50)) * 10.0 ** rng.integers(-8, 8, (37, 50))  # rounding depends on order
    m[5, 3] = np.nan
    expected = np.cumsum(m, axis=0)
    got = cumulate_down(m.copy())
    assert got.tobytes() == expected.tobytes()
    # a view with padded rows (the figures' matrices) is cumulated in place the same way
    padded = np.zeros((37, 58))
    padded[:, :50] = m
    assert cumulate_down(padded[:, :50]).tobytes() == expected.tobytes()


def test_add_at_index_is_add_by_rank() -> None:
    rng = np.random.default_rng(4)
    cells, rank = rng.integers(0, 3, 200), rng.integers(1, 6, 200)
    values = rng.random(200) * 10.0 ** rng.integers(-8, 8, 200)
    a = add_by_rank(np.zeros((3, 5)), cells, rank, values)
    b = add_at_index(np.zeros((3, 5)), cells * 5 + rank - 1, values)
    assert a.tobytes() == b.tobytes()

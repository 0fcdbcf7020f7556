"""Block passes on the thread pool give the result of one pass."""

from __future__ import annotations

import numpy as np
import pytest

from sessionval.kernels import blocks
from sessionval.kernels.blocks import for_blocks


@pytest.mark.parametrize("threads", [1, 2])
def test_blocks_write_their_rows(threads: int, monkeypatch) -> None:
    monkeypatch.setattr(blocks, "n_threads", lambda: threads)
    x = np.arange(1000.0)
    out = np.zeros(1000)

    def square(a: int, b: int) -> None:
        out[a:b] = x[a:b] ** 2

    for_blocks(square, [0, 100, 450, 451, 1000])
    np.testing.assert_array_equal(out, x**2)


def test_an_error_in_a_block_is_raised(monkeypatch) -> None:
    monkeypatch.setattr(blocks, "n_threads", lambda: 2)

    def fail(a: int, b: int) -> None:
        if a == 10:
            raise ValueError("block 10")

    with pytest.raises(ValueError, match="block 10"):
        for_blocks(fail, [0, 10, 20])

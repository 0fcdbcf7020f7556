"""``evaluate_lists`` computes its measures on the cores for large lists: the same table."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from sessionval.evaluation import lists as lists_module
from sessionval.evaluation.lists import evaluate_lists
from sessionval.kernels import blocks
from sessionval.measures.lists import RankedLists
from sessionval.progress import Progress

MEASURES = ["nDCG@10", "AP", "RR", "P@5", "Bpref"]


def _lists(seed: int) -> RankedLists:
    rng = np.random.default_rng(seed)
    counts = rng.integers(0, 30, 200)
    offsets = np.concatenate([[0], np.cumsum(counts)])
    grades = rng.choice([np.nan, 0.0, 1.0, 2.0], int(offsets[-1]))
    base = [list(rng.integers(1, 3, int(k))) for k in rng.integers(0, 5, 200)]
    return RankedLists.from_arrays([f"q{i}" for i in range(200)], offsets, grades, recall_base=base)


@pytest.mark.parametrize("threads", [1, 2])
def test_measures_on_the_cores_give_the_table_of_one_after_another(
    threads: int, monkeypatch
) -> None:
    lists = _lists(threads)
    want = evaluate_lists(lists, MEASURES)
    monkeypatch.setattr(lists_module, "_MEASURES_ON_CORES_ROWS", 0)
    monkeypatch.setattr(blocks, "n_threads", lambda: threads)
    calls: list[int] = []

    class Told:
        counting = True

        def start(self, phase: str, total: int | None = None, unit: str = "rows") -> None:
            pass

        def advance(self, n: int = 1) -> None:
            calls.append(n)

        def finish(self) -> None:
            pass

        def __call__(self, phase: str) -> None:
            pass

    assert isinstance(Told(), Progress)
    got = evaluate_lists(lists, MEASURES, progress=Told())
    pd.testing.assert_frame_equal(got.per_query(), want.per_query())
    assert got.means == want.means
    assert sum(calls) == len(MEASURES)

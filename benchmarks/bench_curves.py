"""Benchmark: the two cumulated-gain-by-rank kernels, and ``gain_vectors`` end to end.

Run from the repository root::

    .venv/bin/python benchmarks/bench_curves.py                      # 50k x 10, 5k x 100
    .venv/bin/python benchmarks/bench_curves.py --shapes 200000x10   # other shapes

Two ways computed the cumulated (discounted) gain vectors of Järvelin & Kekäläinen
(2002) by rank:

- **dense**: the kernel ``measures/cg.py``'s ``gain_vectors`` had: a zero ``(lists,
  ranks)`` matrix, each row's value assigned into its (list, rank) cell, then
  ``cumsum`` along ranks (one value per cell, so it cannot sum the lists of a group);
- **bincount**: ``cumulate_by_rank`` (the kernel behind the run's figures): a weighted
  ``bincount`` of each row into its (cell, rank) cell, then ``cumsum``; a cell may be one
  list or a group of lists.

Each shape is ``lists x depth`` result rows (a tenth of the lists shorter, seeded); the
best of ``--repeat`` runs is reported.  Then ``gain_vectors(kind="nDCG")`` as a whole on
:class:`~sessionval.measures.lists.RankedLists` of the same shape (its ideal vectors
included), which is what a notebook user calls.  The grouped columns sum the lists of
each group of 100 (a figure's curve: the queries of a system): bincount into the group's
cells at once, against the dense matrix summed per group afterwards.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np

from sessionval._types import FloatArray, IntArray
from sessionval.kernels.cumulate import cumulate_by_rank
from sessionval.measures.cg import gain_vectors
from sessionval.measures.lists import RankedLists

#: lists per group in the grouped timings (the queries of a system, of a figure's curve)
GROUP = 100


def _rows(n: int, depth: int, seed: int) -> tuple[IntArray, IntArray, FloatArray, IntArray]:
    """(list of each row, rank, value, offsets): ``n`` lists, most ``depth`` long."""
    rng = np.random.default_rng(seed)
    lengths = np.where(rng.random(n) < 0.1, rng.integers(1, depth + 1, n), depth)
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    cells = np.repeat(np.arange(n, dtype=np.int64), lengths)
    rank = np.arange(cells.size, dtype=np.int64) - offsets[cells] + 1
    values = rng.integers(0, 4, cells.size).astype(np.float64)
    return cells, rank, values, offsets


def _dense(cells: IntArray, rank: IntArray, values: FloatArray, n: int, depth: int) -> FloatArray:
    m = np.zeros((n, depth))
    m[cells, rank - 1] = values
    out: FloatArray = np.cumsum(m, axis=1)
    return out


def _relevant(grades: FloatArray) -> FloatArray:
    """A list's relevant grades, descending: its recall base here."""
    out: FloatArray = np.sort(grades[grades > 0])[::-1]
    return out


def _best(f: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        f()
        times.append(time.perf_counter() - t0)
    return min(times)


def _row(n: int, depth: int, repeat: int) -> str:
    """Time both kernels and gain_vectors on ``n`` lists of ``depth``; one table row."""
    cells, rank, values, offsets = _rows(n, depth, seed=2002)
    a = _dense(cells, rank, values, n, depth)
    b = cumulate_by_rank(cells, rank, values, n_cells=n, ranks=depth)
    if not np.array_equal(a, b):
        raise SystemExit(f"{n}x{depth}: the kernels disagree")
    t_dense = _best(lambda: _dense(cells, rank, values, n, depth), repeat)
    t_bin = _best(lambda: cumulate_by_rank(cells, rank, values, n_cells=n, ranks=depth), repeat)
    group = np.arange(n, dtype=np.int64) // GROUP
    n_groups = int(group[-1]) + 1

    def dense_groups() -> FloatArray:
        out = np.zeros((n_groups, depth))
        np.add.at(out, group, _dense(cells, rank, values, n, depth))
        return out

    grouped = cumulate_by_rank(group[cells], rank, values, n_cells=n_groups, ranks=depth)
    if not np.allclose(dense_groups(), grouped):
        raise SystemExit(f"{n}x{depth}: the kernels disagree on groups")
    t_dense_g = _best(dense_groups, repeat)
    t_bin_g = _best(
        lambda: cumulate_by_rank(group[cells], rank, values, n_cells=n_groups, ranks=depth),
        repeat,
    )
    ideal = [_relevant(values[offsets[i] : offsets[i + 1]]) for i in range(n)]
    lists = RankedLists.from_arrays([f"q{i}" for i in range(n)], offsets, values, recall_base=ideal)
    t_gv = _best(lambda: gain_vectors(lists, kind="nDCG", depth=depth), repeat)
    return (
        f"| {n:,} × {depth} | {cells.size:,} | {t_dense * 1e3:.1f} ms "
        f"| {t_bin * 1e3:.1f} ms | {t_dense_g * 1e3:.1f} ms | {t_bin_g * 1e3:.1f} ms "
        f"| {t_gv * 1e3:.1f} ms |"
    )


def main() -> None:
    """Print one Markdown table row per shape and kernel."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shapes", nargs="*", default=["50000x10", "5000x100"])
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    print(
        "| lists × depth | rows | dense | bincount | dense, groups | bincount, groups "
        "| gain_vectors(nDCG) |"
    )
    print("|---|---|---|---|---|---|---|")
    for shape in args.shapes:
        n, depth = (int(x) for x in shape.split("x"))
        print(_row(n, depth, args.repeat))


if __name__ == "__main__":
    main()

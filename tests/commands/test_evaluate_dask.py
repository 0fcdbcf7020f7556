"""`evaluate --engine dask` on a run read in byte ranges prints what the local evaluate prints."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from sessionval.cli import main

distributed = pytest.importorskip("distributed")

from sessionval.evaluation import distributed_runs  # noqa: E402


@pytest.fixture(scope="module")
def scheduler() -> Iterator[str]:
    """A running threaded cluster in this process: what --scheduler connects to."""
    with distributed.LocalCluster(
        n_workers=2, processes=False, threads_per_worker=1, dashboard_address=":0"
    ) as cluster:
        yield cluster.scheduler_address


@pytest.fixture
def in_ranges(monkeypatch) -> list[Path]:
    """Every run read in ranges of 2 kB (the thresholds of a TREC-scale run, made small).

    Returns the runs read so.
    """
    monkeypatch.setattr(distributed_runs, "RANGES_FROM_BYTES", 0)
    monkeypatch.setattr(distributed_runs, "BLOCK_BYTES", 2000)
    read: list[Path] = []
    ranges = distributed_runs.evaluate_run_ranges

    def spy(engine, run, *args, **kwargs):
        read.append(run)
        return ranges(engine, run, *args, **kwargs)

    monkeypatch.setattr(distributed_runs, "evaluate_run_ranges", spy)
    return read


def write_inputs(folder: Path, *, shuffled: bool) -> tuple[str, str]:
    rng = np.random.default_rng(12)
    lines = [
        f"q{q} Q0 d{d} {r + 1} {rng.integers(0, 6) / 2} run1\n"
        for q in range(30)
        for r, d in enumerate(rng.choice(50, size=15, replace=False))
    ]
    if shuffled:
        lines = [lines[i] for i in rng.permutation(len(lines))]
    (folder / "run.txt").write_text("".join(lines))
    # topics q0..q24 judged: q25..q29 are run queries without judgments (skipped)
    qrels = {(f"q{q}", f"d{d}"): int(rng.integers(0, 3)) for q, d in rng.integers(0, 25, (400, 2))}
    (folder / "qrels.txt").write_text("".join(f"{q} 0 {d} {g}\n" for (q, d), g in qrels.items()))
    return str(folder / "qrels.txt"), str(folder / "run.txt")


@pytest.mark.parametrize("shuffled", [False, True], ids=["sorted", "shuffled"])
@pytest.mark.parametrize("per_query", [True, False], ids=["q", "all"])
def test_the_same_lines_as_the_local_evaluate(
    tmp_path, scheduler, in_ranges, capsys, shuffled, per_query
) -> None:
    qrels, run = write_inputs(tmp_path, shuffled=shuffled)
    args = ["evaluate", qrels, run, "--format", "tsv", "--no-progress"]
    args += [f"-m{m}" for m in ("map", "gm_map", "ndcg_cut.10", "P.5", "num_ret", "num_q")]
    args += ["-q"] if per_query else []
    assert main(args) == 0
    local = capsys.readouterr()
    assert main([*args, "--engine", "dask", "--scheduler", scheduler]) == 0
    dask = capsys.readouterr()
    assert in_ranges == [Path(run)]
    assert dask.out == local.out
    assert dask.err == local.err  # the counts: queries evaluated, skipped, unjudged
    assert "5 run queries without judgments skipped" in local.err
    assert ("map                   \tq3\t" in local.out) == per_query


@pytest.mark.parametrize("shuffled", [False, True], ids=["sorted", "shuffled"])
def test_the_ranges_scored_are_a_phase(tmp_path, scheduler, in_ranges, capsys, shuffled) -> None:
    from tests.commands.test_progress import final_counts

    qrels, run = write_inputs(tmp_path, shuffled=shuffled)
    args = ["evaluate", qrels, run, "-m", "map", "--engine", "dask", "--scheduler", scheduler]
    assert main([*args, "--progress"]) == 0
    phases = final_counts(capsys.readouterr().err)
    n = -(-Path(run).stat().st_size // 2000)  # ranges of 2000 bytes
    assert "reading run.txt" not in phases  # the client does not read the run
    if shuffled:  # the ranges stop at the first whose queries are apart, then the shuffle
        assert phases[f"scoring run.txt in {n} ranges"][0] < n
        assert phases[f"scoring run.txt in {n} partitions"] == (n, n)
    else:  # grouped by query: scored where they are read
        assert phases[f"scoring run.txt in {n} ranges"] == (n, n)
        assert f"scoring run.txt in {n} partitions" not in phases


@pytest.mark.parametrize("road", ["ranges", "local", "small"])
def test_per_query_out_writes_the_per_query_table(tmp_path, scheduler, monkeypatch, road) -> None:
    import pandas as pd

    from sessionval.evaluation.lists import evaluate_run

    if road == "ranges":
        monkeypatch.setattr(distributed_runs, "RANGES_FROM_BYTES", 0)
        monkeypatch.setattr(distributed_runs, "BLOCK_BYTES", 2000)
    qrels, run = write_inputs(tmp_path, shuffled=road == "ranges")
    out = tmp_path / "per_query"
    args = ["evaluate", qrels, run, "-m", "map", "-m", "P.5", "--per-query-out", str(out)]
    engine = [] if road == "local" else ["--engine", "dask", "--scheduler", scheduler]
    assert main([*args, *engine]) == 0
    parts = sorted(p.name for p in out.glob("part-*.parquet"))
    assert (len(parts) > 1) == (road == "ranges")
    got = pd.read_parquet(out).sort_values("query_id", ignore_index=True)
    want = evaluate_run(run, qrels, ["map", "P@5"]).per_query()
    pd.testing.assert_frame_equal(got, want.sort_values("query_id", ignore_index=True))
    # a second evaluate replaces the parts of the first (its manifest), never an input
    assert main([*args, *engine]) == 0
    assert sorted(p.name for p in out.glob("part-*.parquet")) == parts
    assert main(["evaluate", qrels, run, "-m", "map", "--per-query-out", str(tmp_path)]) == 2

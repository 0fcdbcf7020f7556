"""``evaluate --engine dask`` on a TREC-scale run: local vs 1 and 2 workers, time and client memory.

Not a test. Generates a TREC run of ``--queries`` N x ``--depth`` D lines (queries in
order; with ``--unsorted`` in random order, each batch of about 2M lines shuffled) and
qrels of ``--judged`` documents per query (about a third of them relevant), then, each
in a fresh process (so ``ru_maxrss`` is that mode's client peak):

- ``local``: :func:`~sessionval.evaluation.lists.evaluate_run` in the process (what
  ``sessionval evaluate`` does without ``--engine``);
- ``measures``: the client reads the run, the measures are mapped over a
  ``LocalCluster`` (``evaluate --engine dask`` on a run under ``RANGES_FROM_BYTES``);
- ``ranges``: the run read in byte ranges on the workers, shuffled by query, scored
  per partition, sums and counts combined
  (:func:`~sessionval.evaluation.distributed_runs.evaluate_run_ranges`; ``evaluate
  --engine dask`` from ``RANGES_FROM_BYTES``).

The cluster modes run with 1 and 2 worker processes (``--workers``); the worker peak is
``ru_maxrss`` read on each worker.  Every mode prints the means (AP, nDCG@10, P@10,
num_ret), which must agree to the printed digits.  ``--parse`` times only the read of
the run on the workers: the project's reader of byte ranges
(:func:`~sessionval.evaluation.distributed_runs.read_range` + ``read_run_range``)
against ``dask.dataframe.read_csv(sep=r"\\s+", blocksize=...)``.

    python benchmarks/bench_evaluate_dask.py --queries 10000 --depth 1000
    python benchmarks/bench_evaluate_dask.py --queries 100000 --depth 100 --unsorted
    python benchmarks/bench_evaluate_dask.py --queries 10000 --depth 1000 --parse
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

MEASURES = ["AP", "nDCG@10", "P@10", "NumRet"]


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _doc(query: object, place: object, depth: int) -> object:
    """The document a query ranks at ``place``: distinct per query (a prime stride), as text."""
    import numpy as np

    pool = 50 * depth
    return ((np.asarray(place) * 7919 + np.asarray(query) * 31) % pool).astype(str)


def generate(folder: Path, queries: int, depth: int, judged: int, unsorted: bool) -> None:
    """Write ``run.txt`` and ``qrels.txt`` (vectorised; Arrow's CSV writer)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pcsv

    rng = np.random.default_rng(0)
    opts = pcsv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none")
    folder.mkdir(parents=True, exist_ok=True)
    order = np.arange(queries)
    if unsorted:  # queries in random order, each batch's lines shuffled (about 2M lines):
        order = rng.permutation(queries)  # a query's lines spread over more than one range
    schema = pa.schema(
        [(c, pa.string()) for c in ("q", "z", "d")]
        + [("r", pa.int64()), ("s", pa.float64()), ("t", pa.string())]
    )
    with pcsv.CSVWriter(folder / "run.txt", schema, write_options=opts) as w:
        step = max(1, 2_000_000 // depth)
        for q0 in range(0, queries, step):
            qs = order[q0 : q0 + step]
            n = len(qs) * depth
            q = pc.binary_join_element_wise("q", pa.array(np.repeat(qs, depth).astype(str)), "")
            r = np.tile(np.arange(1, depth + 1), len(qs))
            d = pc.binary_join_element_wise(
                "doc", pa.array(_doc(np.repeat(qs, depth), r - 1, depth)), ""
            )
            s = np.round(1000.0 - r + rng.random(n), 3)
            cols = [q, pa.array(np.full(n, "Q0")), d, pa.array(r), pa.array(s)]
            batch = pa.record_batch([*cols, pa.array(np.full(n, "bench"))], schema=schema)
            if unsorted:
                batch = batch.take(pa.array(rng.permutation(n)))
            w.write_batch(batch)
    qschema = pa.schema(
        [("q", pa.string()), ("z", pa.int64()), ("d", pa.string()), ("g", pa.int64())]
    )
    with pcsv.CSVWriter(folder / "qrels.txt", qschema, write_options=opts) as w:
        step = max(1, 2_000_000 // judged)
        for q0 in range(0, queries, step):
            qs = np.arange(q0, min(q0 + step, queries))
            n = len(qs) * judged
            q = pc.binary_join_element_wise("q", pa.array(np.repeat(qs, judged).astype(str)), "")
            # the documents a query's run ranks at 0, 2, ... 2 * depth: half of them retrieved
            at = np.tile(np.arange(judged) * max(1, 2 * depth // judged), len(qs))
            d = pc.binary_join_element_wise(
                "doc", pa.array(_doc(np.repeat(qs, judged), at, depth)), ""
            )
            g = (rng.random(n) < 1 / 3).astype(np.int64) * rng.integers(1, 3, n)
            zero = pa.array(np.zeros(n, np.int64))
            w.write_batch(pa.record_batch([q, zero, d, pa.array(g)], schema=qschema))


def one(mode: str, folder: Path, workers: int) -> dict[str, object]:
    """One mode, timed, in this (fresh) process."""
    from sessionval.evaluation.dask_engine import dask_engine
    from sessionval.evaluation.distributed_runs import evaluate_run_ranges
    from sessionval.evaluation.lists import evaluate_run

    run, qrels = folder / "run.txt", folder / "qrels.txt"
    start = t0 = time.perf_counter()
    worker_mb: list[float] = []
    if mode == "local":
        ev = evaluate_run(run, qrels, MEASURES)
    else:
        with dask_engine(workers=workers, memory_limit=None) as eng:
            t0 = time.perf_counter()  # the cluster started: the evaluation's time from here
            if mode == "measures":
                ev = evaluate_run(run, qrels, MEASURES, mapper=eng)
            else:
                ev = evaluate_run_ranges(eng, run, qrels, MEASURES, per_query=False)
            worker_mb = sorted(eng.client.run(_peak_mb).values())
            seconds = time.perf_counter() - t0
    if mode == "local":
        seconds = time.perf_counter() - t0
    means = {k: round(v, 4) for k, v in ev.means.items()}
    return {
        "mode": mode,
        "workers": workers if mode != "local" else 0,
        "seconds": round(seconds, 1),
        "with_cluster_start": round(time.perf_counter() - start, 1),
        "client_peak_mb": round(_peak_mb()),
        "worker_peak_mb": [round(x) for x in worker_mb],
        "queries": ev.n_queries,
        "means": means,
    }


def parse_only(folder: Path, workers: int, how: str) -> dict[str, object]:
    """Only the run read on the workers (rows counted): the project's reader or dd.read_csv."""
    import dask.dataframe as dd
    from dask.delayed import delayed

    from sessionval.evaluation.dask_engine import dask_engine
    from sessionval.evaluation.distributed_runs import BLOCK_BYTES, read_range
    from sessionval.io.trec import read_run_range

    run = folder / "run.txt"

    def rows(k: int) -> int:
        return len(read_run_range(read_range(str(run), k, BLOCK_BYTES), run, k * BLOCK_BYTES)[0])

    with dask_engine(workers=workers, memory_limit=None) as eng:
        t0 = time.perf_counter()
        if how == "project":
            n_ranges = -(-run.stat().st_size // BLOCK_BYTES)
            n = sum(eng.client.compute([delayed(rows)(k) for k in range(n_ranges)], sync=True))
        else:
            names = ["qid", "q0", "doc", "rank", "score", "tag"]
            df = dd.read_csv(
                str(run), sep=r"\s+", header=None, names=names, blocksize=BLOCK_BYTES, dtype=str
            )
            n = int(df.map_partitions(len).compute().sum())
        seconds = time.perf_counter() - t0
    return {"parse": how, "workers": workers, "rows": n, "seconds": round(seconds, 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--queries", type=int, default=10_000)
    ap.add_argument("--depth", type=int, default=1000)
    ap.add_argument("--judged", type=int, default=100)
    ap.add_argument("--unsorted", action="store_true")
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/bench_evaluate_dask"))
    ap.add_argument("--modes", default="local,measures,ranges")
    ap.add_argument("--workers", default="1,2")
    ap.add_argument("--parse", action="store_true", help="time only the read on the workers")
    ap.add_argument("--one", nargs=2, metavar=("MODE", "WORKERS"), help=argparse.SUPPRESS)
    ap.add_argument("--parse-one", nargs=2, metavar=("HOW", "WORKERS"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    folder = args.workdir / f"{args.queries}x{args.depth}{'-unsorted' if args.unsorted else ''}"
    if args.one:
        print(json.dumps(one(args.one[0], folder, int(args.one[1]))))
        return
    if args.parse_one:
        print(json.dumps(parse_only(folder, int(args.parse_one[1]), args.parse_one[0])))
        return
    if not (folder / "run.txt").exists():
        t0 = time.perf_counter()
        generate(folder, args.queries, args.depth, args.judged, args.unsorted)
        size = (folder / "run.txt").stat().st_size / 1e6
        print(f"generated {folder} ({size:.0f} MB) in {time.perf_counter() - t0:.0f} s")
    base = [sys.executable, __file__, "--queries", str(args.queries), "--depth", str(args.depth)]
    base += ["--workdir", str(args.workdir)] + (["--unsorted"] if args.unsorted else [])
    counts = [int(w) for w in args.workers.split(",")]
    if args.parse:
        jobs = [["--parse-one", how, str(w)] for how in ("project", "read_csv") for w in counts]
    else:
        jobs = [
            ["--one", m, str(w)]
            for m in args.modes.split(",")
            for w in ([0] if m == "local" else counts)
        ]
    for job in jobs:
        out = subprocess.run([*base, *job], capture_output=True, text=True, check=False)
        print(out.stdout.strip() or out.stderr.strip()[-2000:], flush=True)


if __name__ == "__main__":
    main()

"""The distributed run at 1M, 10M and 100M sessions: client and worker memory, wall time.

Not a test. For each size, a fresh process starts a ``LocalCluster`` of worker
processes and calls :func:`sessionval.workflow.job.run` (the body of ``sessionval run
--engine dask``) on partitions generated on the fly
(:class:`~sessionval.synth.partitions.GeneratedPartitions`: 32,768 sessions each,
results down to rank 10, the searchers of a 131k-session base study coming back):
every partition is generated, validated, scored and written as Parquet parts by
its worker, and the client builds the summary, report, statistics and figures from
the partials.  It reports the wall time, the client's peak resident memory
(``ru_maxrss`` of this process, which also runs the scheduler), each worker's peak
(``ru_maxrss`` read on the workers), the parts written and their size on disk.

    python benchmarks/bench_distributed.py --sessions 1e6,1e7 --workers 2 --out /tmp/dist
    python benchmarks/bench_distributed.py --sessions 1e8 --workers 2 --no-figures
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def one(
    sessions: int, workers: int, out: Path, per_position: bool, figures: bool
) -> dict[str, object]:
    """Run one size in this process (a fresh one: the peaks are this run's)."""
    from sessionval.evaluation.dask_engine import dask_engine
    from sessionval.io.partitioned import PARTITIONED
    from sessionval.synth.partitions import GeneratedPartitions
    from sessionval.workflow.job import run

    n_parts = max(1, round(sessions / 32_768))
    generated = GeneratedPartitions(n_parts, max_rank=10)
    shutil.rmtree(out, ignore_errors=True)
    t0 = time.perf_counter()
    with dask_engine(workers=workers, threads_per_worker=1, memory_limit="10GB") as engine:
        result = run(
            Path("generated"),
            qrels=None,
            out=out,
            progress=False,
            engine=engine,
            input_options={"fmt": PARTITIONED, "partitions": generated.setup()},
            per_position=per_position,
            figures=figures,
            table_formats=("parquet",),
        )
        worker_peaks = engine.client.run(_peak_mb)
    seconds = time.perf_counter() - t0
    parts = [p for p in out.rglob("part-*.parquet")]
    return {
        "sessions": generated.n_sessions,
        "partitions": n_parts,
        "workers": workers,
        "figures": figures,
        "seconds": round(seconds, 1),
        "sessions_per_s": round(generated.n_sessions / seconds),
        "client_peak_mb": round(_peak_mb()),
        "worker_peak_mb": sorted(round(v) for v in worker_peaks.values()),
        "parts": len(parts),
        "parts_gb": round(sum(p.stat().st_size for p in parts) / 2**30, 2),
        "files": len(result.files),
        "stages": {p.name: round(p.seconds, 1) for p in result.stages},
        "nsdcg": result.score_table.query("measure == 'nsdcg'")["mean"].round(6).tolist(),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sessions", default="1e6,1e7", help="comma-separated sizes")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--out", type=Path, default=Path("/tmp/sessionval-distributed"))
    ap.add_argument("--per-position", action=argparse.BooleanOptionalAction, default=False)
    ap.add_argument("--figures", action=argparse.BooleanOptionalAction, default=True)
    ap.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    sizes = [int(float(s)) for s in args.sessions.split(",")]
    if args.one:
        print(json.dumps(one(sizes[0], args.workers, args.out, args.per_position, args.figures)))
        return
    rows = []
    for n in sizes:  # each size in a fresh process: its peaks are its own
        cmd = [sys.executable, __file__, "--one", "--sessions", str(n)]
        cmd += ["--workers", str(args.workers), "--out", str(args.out)]
        cmd += ["--per-position" if args.per_position else "--no-per-position"]
        cmd += ["--figures" if args.figures else "--no-figures"]
        done = subprocess.run(cmd, check=True, capture_output=True, text=True)
        rows.append(json.loads(done.stdout.strip().splitlines()[-1]))
        print(json.dumps(rows[-1]), flush=True)
    shutil.rmtree(args.out, ignore_errors=True)


if __name__ == "__main__":
    main()

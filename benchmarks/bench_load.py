"""Load throughput: flat Parquet -> validated SessionFrame (issue: foundation).

Not a test. Reports, from one run, the time, rows/s and peak RSS of (a) pyarrow decoding
every column of the file once (the floor) and (b) ``load_sessions``: the file read column by
column, ids encoded once to integer codes, every rule checked, the three tables
of the SessionFrame built.  Each runs in its own process so peaks are separate.

    python benchmarks/bench_load.py --sessions 1000000          # generates into /tmp first
    python benchmarks/bench_load.py --parquet /tmp/synth1m/sessions.parquet
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _child(path: str, stage: str) -> None:
    import pyarrow.parquet as pq

    from sessionval.io.study import load_sessions

    t0 = time.perf_counter()
    if stage == "pyarrow":
        # decode every column once (one at a time: the whole table would not fit in memory)
        schema = pq.read_schema(path)
        for name in schema.names:
            pq.read_table(path, columns=[name])
        rows = pq.ParquetFile(path).metadata.num_rows
        out = {"rows": rows, "seconds": time.perf_counter() - t0}
    else:
        loaded = load_sessions(path)
        frame, report = loaded.frame, loaded.report
        t1 = time.perf_counter()
        out = {
            "rows": report.rows_read,
            "seconds": t1 - t0,
            "sessions": frame.n_sessions,
            "queries": frame.n_queries,
            "results": frame.n_results,
            "frame_mb": sum(
                t.memory_usage(deep=True).sum()
                for t in (frame.sessions, frame.queries, frame.results)
            )
            / 2**20,
            "accepted": report.sessions_accepted,
            "rejected": report.sessions_rejected,
        }
    out["peak_rss_mb"] = _peak_mb()
    print(json.dumps(out))


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--parquet", help="an existing flat sessions.parquet")
    ap.add_argument(
        "--sessions", type=int, default=1_000_000, help="generate this many when no --parquet"
    )
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        _child(*args.child)
        return
    path = args.parquet
    if path is None:
        out = Path(f"/tmp/sessionval-bench-{args.sessions}")
        if not (out / "sessions.parquet").exists():
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "sessionval",
                    "synth",
                    "--sessions",
                    str(args.sessions),
                    "--seed",
                    str(args.seed),
                    "--out",
                    str(out),
                    "--format",
                    "parquet",
                ],
                check=True,
            )
        path = str(out / "sessions.parquet")
    results = {}
    for stage in ("pyarrow", "sessionval"):
        proc = subprocess.run(
            [sys.executable, __file__, "--child", path, stage],
            check=True,
            capture_output=True,
            text=True,
        )
        results[stage] = json.loads(proc.stdout.strip().splitlines()[-1])
    pa_, sv = results["pyarrow"], results["sessionval"]
    rows = sv["rows"]
    print(
        f"file: {path} ({Path(path).stat().st_size / 2**20:.0f} MiB), {rows:,} result rows, "
        f"{sv['sessions']:,} sessions, {sv['queries']:,} queries"
    )
    print(
        f"pyarrow decode, all cols : {pa_['seconds']:7.2f} s  "
        f"{rows / pa_['seconds'] / 1e6:6.2f} M rows/s  "
        f"peak {pa_['peak_rss_mb']:,.0f} MB"
    )
    print(
        f"sessionval load total    : {sv['seconds']:7.2f} s  "
        f"{rows / sv['seconds'] / 1e6:6.2f} M rows/s  "
        f"peak {sv['peak_rss_mb']:,.0f} MB (frame {sv['frame_mb']:,.0f} MB)"
    )
    print(f"ratio to the pyarrow floor: {sv['seconds'] / pa_['seconds']:.1f}x time")


if __name__ == "__main__":
    main()

"""End to end with the product's own validated loader: load -> gains -> sDCG -> summaries.

Not a test. ``benchmarks/bench_session.py`` times the session kernels with a trusted
loader; this script times what a user runs: ``load_sessions`` (every rule checked, ids
encoded once, only ranks <= X and the required columns kept) then ``evaluate`` and the
per-session table, with peak memory (VmHWM) against the size of the loaded frame.

    python benchmarks/bench_end_to_end.py --parquet /tmp/synth1m/sessions.parquet \\
        --qrels /tmp/synth1m/qrels.txt --cutoff 10
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path


def _vmhwm_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--parquet", required=True)
    ap.add_argument("--qrels", required=True)
    ap.add_argument("--cutoff", type=int, default=10, help="X: results per query in sessions")
    args = ap.parse_args()

    import sessionval as sv

    t0 = time.perf_counter()
    # the session evaluation needs the ids, positions, ranks and documents: nothing else is read
    frame, report = sv.load_sessions(args.parquet, max_rank=args.cutoff, columns=())
    judgments = sv.load_judgments(args.qrels)
    t1 = time.perf_counter()
    frame_mb = (
        sum(t.memory_usage(deep=True).sum() for t in (frame.sessions, frame.queries, frame.results))
        / 2**20
    )
    ev = sv.evaluate(frame, judgments, sv.SessionConfig(cutoff=args.cutoff))
    per_session = ev.per_session()
    t2 = time.perf_counter()
    n = len(per_session)
    print(
        f"{n:,} sessions, {frame.n_queries:,} queries, {report.rows_read:,} rows read (rank <= "
        f"{args.cutoff})"
    )
    print(f"load + validate : {t1 - t0:7.2f} s")
    print(f"evaluate        : {t2 - t1:7.2f} s  (gains, session vectors, summaries)")
    print(f"end to end      : {t2 - t0:7.2f} s  {n / (t2 - t0):,.0f} sessions/s")
    print(
        f"peak memory     : {_vmhwm_mb():,.0f} MB; loaded frame {frame_mb:,.0f} MB "
        f"({_vmhwm_mb() / frame_mb:.2f}x)"
    )
    print(f"mean nsDCG      : {per_session['nsdcg'].mean():.4f}")


if __name__ == "__main__":
    main()

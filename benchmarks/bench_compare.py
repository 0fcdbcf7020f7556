"""``compare`` at scale: 100 runs x 1,000 topics, every pair, 10,000 resamples.

Not a test.  Generates a test collection of known quality (``sessionval.synth.runs``),
scores every run (as ``sessionval compare`` does) and times ``compare_systems`` under
each test, all 4,950 pairs of one measure, and the randomised Tukey HSD; then the whole
command line once.

    python benchmarks/bench_compare.py --systems 100 --topics 1000 --resamples 10000
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--systems", type=int, default=100)
    ap.add_argument("--topics", type=int, default=1000)
    ap.add_argument("--resamples", type=int, default=10_000)
    ap.add_argument("--cli", action="store_true", help="also time the command line end to end")
    args = ap.parse_args()

    from sessionval.analysis.compare import compare_systems
    from sessionval.synth.runs import generate_runs, write_runs
    from sessionval.workflow.runs import score_runs

    t0 = time.perf_counter()
    coll = generate_runs(n_systems=args.systems, n_topics=args.topics, seed=1)
    t1 = time.perf_counter()
    scores = score_runs(coll.runs, coll.judgments, ["nDCG@10"])
    t2 = time.perf_counter()
    n_pairs = args.systems * (args.systems - 1) // 2
    print(f"generate {args.systems} runs x {args.topics} topics: {t1 - t0:.1f} s")
    print(f"score them (nDCG@10, {len(scores):,} scores): {t2 - t1:.1f} s")
    cases = [
        ("paired-t", "holm"),
        ("wilcoxon", "holm"),
        ("sign", "holm"),
        ("randomisation", "holm"),
        ("bootstrap", "holm"),
        ("paired-t", "tukey-hsd"),
        ("randomisation", "tukey-hsd"),
    ]
    compare_systems(scores, test="paired-t")  # imports scipy/statsmodels before timing
    for test, correction in cases:
        s, c = time.perf_counter(), time.process_time()
        r = compare_systems(scores, test=test, correction=correction, resamples=args.resamples)
        took, cpu = time.perf_counter() - s, time.process_time() - c
        print(
            f"compare_systems {test:13s} {correction:9s}: {n_pairs:,} pairs, "
            f"{int(r['significant'].sum()):,} significant, {took:.1f} s ({cpu:.1f} s CPU)"
        )
    if args.cli:
        with tempfile.TemporaryDirectory() as tmp:
            write_runs(tmp, n_systems=args.systems, n_topics=args.topics, seed=1)
            runs = sorted(str(p) for p in (Path(tmp) / "runs").iterdir())
            cmd = [sys.executable, "-m", "sessionval", "compare", f"{tmp}/qrels.txt", *runs]
            cmd += ["-m", "nDCG@10", "--test", "randomisation", "--resamples", "10000"]
            s = time.perf_counter()
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            print(f"sessionval compare (read, score, randomisation test): "
                  f"{time.perf_counter() - s:.1f} s")  # fmt: skip


if __name__ == "__main__":
    main()

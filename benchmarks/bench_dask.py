"""Scale-out: a partitioned study validated and scored on a Dask LocalCluster of 1 and 2 workers.

Not a test. Splits a flat Parquet log into files of whole sessions, then for each
worker count starts a ``LocalCluster`` of worker processes and times:

- **load**: :func:`~sessionval.io.partitioned.read_partitioned_study` with the
  partitions validated on the workers (``max_rank=X``, required columns only), the
  frames gathered and combined;
- **evaluate**: :func:`sessionval.evaluate` on the :class:`DaskEngine` (judgments
  broadcast, one task per chunk of whole sessions) and the per-session table.

It reports rows/s (rows of the files / total time), the peak memory of the workers
(``MemorySampler``: their resident memory summed, sampled every 0.25 s; per worker = that
peak / workers) and of the client (``ru_maxrss``), the speed-up from 1 to 2 workers, and
checks that the per-session tables of the runs are equal.

The split (``--split``): ``convert`` runs ``sessionval convert --partition-rows N
--top-first X`` (validated, each file top ranks first, so the workers' ``rank <= X``
reads skip the deeper row groups; it holds the validated study in memory, about
1.7 GB per 100k sessions of lists 100 deep); ``stream`` (the default, for logs larger
than memory) copies the file's batches in order, cutting at session boundaries (the
plain layout, not validated).

    python benchmarks/bench_dask.py --parquet /tmp/s1m/sessions.parquet \\
        --qrels /tmp/s1m/qrels.txt --parts 8 --workers 1,2 [--split convert]
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


def split_by_session(src: Path, out: Path, parts: int) -> list[Path]:
    """Write ``src`` as about ``parts`` files, each holding whole sessions, in order."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    out.mkdir(parents=True, exist_ok=True)
    pf = pq.ParquetFile(src)
    target = -(-pf.metadata.num_rows // parts)
    files: list[Path] = []
    writer = None
    rows_in_part = 0
    last_session = None
    for batch in pf.iter_batches(batch_size=1 << 20):
        sid = batch.column(batch.schema.get_field_index("session_id"))
        start = 0
        while start < batch.num_rows:
            if writer is None:
                files.append(out / f"part-{len(files):05d}.parquet")
                writer = pq.ParquetWriter(files[-1], batch.schema)
                rows_in_part = 0
            room = target - rows_in_part
            if room >= batch.num_rows - start:
                writer.write_batch(batch.slice(start))
                rows_in_part += batch.num_rows - start
                last_session = sid[batch.num_rows - 1].as_py()
                break
            # cut at the first session start at or after the target row
            tail = sid.slice(start + room)
            prev = last_session if room == 0 else sid[start + room - 1].as_py()
            new = pc.not_equal(tail, pc.cast(prev, tail.type)) if prev is not None else None
            cut = int(pc.index(new, True).as_py()) if new is not None else 0
            if cut < 0:  # the session runs to the end of the batch: keep writing
                writer.write_batch(batch.slice(start))
                rows_in_part += batch.num_rows - start
                last_session = sid[batch.num_rows - 1].as_py()
                break
            writer.write_batch(batch.slice(start, room + cut))
            writer.close()
            writer = None
            start += room + cut
    if writer is not None:
        writer.close()
    return files


def convert_by_session(src: Path, out: Path, parts: int, x: int) -> list[Path]:
    """``sessionval convert --partition-rows N --top-first X``: about ``parts`` files."""
    import pyarrow.parquet as pq

    rows = -(-pq.ParquetFile(src).metadata.num_rows // parts)
    cmd = [sys.executable, "-m", "sessionval", "convert", str(src), "--to", "parquet",
           "--out", str(out), "--partition-rows", str(rows), "--top-first", str(x)]  # fmt: skip
    subprocess.run(cmd, check=True)
    return sorted(out.glob("part-*.parquet"))


def run(parts: Path, qrels: str, workers: int, x: int) -> dict[str, object]:
    from distributed.diagnostics import MemorySampler

    import sessionval as sv
    from sessionval.io.partitioned import read_partitioned_study

    sampler = MemorySampler()
    with (
        sv.dask_engine(workers=workers, threads_per_worker=1, memory_limit=None) as eng,
        sampler.sample("run", client=eng.client, measure="process", interval=0.25),
    ):
        t0 = time.perf_counter()
        loaded = read_partitioned_study(
            parts, qrels=qrels, max_rank=x, columns=(), mapper=eng.map_items
        )
        t1 = time.perf_counter()
        ev = sv.evaluate(loaded.frame, loaded.judgments, sv.SessionConfig(cutoff=x), engine=eng)
        per_session = ev.per_session()
        t2 = time.perf_counter()
    # the sampler sums the workers' resident memory; per worker: the peak over the workers
    cluster_peak_mb = float(sampler.to_pandas().max().iloc[0]) / 2**20
    import pyarrow.parquet as pq

    file_rows = sum(pq.ParquetFile(p).metadata.num_rows for p in sorted(parts.glob("*.parquet")))
    return {
        "workers": workers,
        "load": t1 - t0,
        "evaluate": t2 - t1,
        "total": t2 - t0,
        "file_rows": file_rows,
        "rows_kept": loaded.report.rows_read,
        "sessions": len(per_session),
        "rows_per_s": file_rows / (t2 - t0),
        "cluster_peak_mb": cluster_peak_mb,
        "worker_peak_mb_avg": cluster_peak_mb / workers,
        "client_peak_mb": _peak_mb(),
        "mean_nsdcg": float(per_session["nsdcg"].mean()),
        "per_session": per_session,
    }


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--parquet", required=True, help="a flat Parquet log to split")
    ap.add_argument("--qrels", required=True)
    ap.add_argument("--parts", type=int, default=8)
    ap.add_argument("--workers", default="1,2")
    ap.add_argument("--cutoff", type=int, default=10)
    ap.add_argument("--workdir", default=None, help="where the partitions go (default: beside)")
    ap.add_argument(
        "--split",
        choices=["stream", "convert"],
        default="stream",
        help="stream: copy batches, cut at sessions; convert: sessionval convert "
        "--partition-rows --top-first (holds the study in memory)",
    )
    args = ap.parse_args()
    src = Path(args.parquet)
    default = f"parts{args.parts}" + ("-top" if args.split == "convert" else "")
    parts = Path(args.workdir) if args.workdir else src.parent / default
    if not parts.exists():
        t = time.perf_counter()
        if args.split == "convert":
            files = convert_by_session(src, parts, args.parts, args.cutoff)
        else:
            files = split_by_session(src, parts, args.parts)
        print(f"split into {len(files)} partitions in {time.perf_counter() - t:.1f} s")
    sizes = [p.stat().st_size / 2**20 for p in sorted(parts.glob("*.parquet"))]
    print(f"{len(sizes)} partitions of {min(sizes):.0f}-{max(sizes):.0f} MB on disk")
    results = []
    for w in (int(v) for v in args.workers.split(",")):
        res = run(parts, args.qrels, w, args.cutoff)
        results.append(res)
        shown = {k: v for k, v in res.items() if k != "per_session"}
        print(json.dumps(shown, default=float))
    base = results[0]
    for res in results[1:]:
        same = res["per_session"].equals(base["per_session"])
        print(
            f"{base['workers']} -> {res['workers']} workers: speed-up "
            f"{base['total'] / res['total']:.2f}x (load {base['load'] / res['load']:.2f}x, "
            f"evaluate {base['evaluate'] / res['evaluate']:.2f}x); per-session table equal: {same}"
        )


if __name__ == "__main__":
    main()

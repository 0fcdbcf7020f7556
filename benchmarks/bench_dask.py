"""Scale-out: a partitioned study validated and scored on a Dask LocalCluster of 1 and 2 workers.

Not a test. Writes a flat Parquet log as files of whole sessions (streaming, one
batch at a time; what ``sessionval convert --partition-rows N`` writes), optionally
``--copies K`` times with the session ids prefixed (``c01-s0000001``: K times the
sessions, the same judgments; a 10M-session study from the 1M one), then for each
mode and worker count starts a fresh process with a ``LocalCluster`` of worker
processes and times:

- ``remote`` (the default; what ``run`` and ``validate --engine dask`` do): the
  partitions validated on the workers and kept there
  (:func:`~sessionval.evaluation.remote.load_remote`, ``max_rank=X``, required
  columns only), each scored on its worker
  (:func:`~sessionval.evaluation.remote.evaluate_remote`), the per-session table
  built on the client from the gathered per-session and per-query arrays;
- ``onepass`` (:func:`~sessionval.evaluation.remote.score_remote`): each partition
  validated and scored in one task chain on its worker, nothing kept there (the
  per-position arrays are not available); the per-session table built on the client;
- ``gather`` (the first version): the frames gathered and combined on the client,
  the chunks shipped to the workers (``DaskEngine.map_sessions``).

It reports rows/s (rows of the files / total time), the peak memory of each worker
process (``ru_maxrss`` read on the workers) and of the workers together
(``MemorySampler``, sampled every 0.25 s), the client's peak (``ru_maxrss``), the
speed-up from 1 to 2 workers, and whether the per-session tables of all runs are
equal (a hash of the table).

    python benchmarks/bench_dask.py --parquet /work/data/s1m/sessions.parquet \\
        --qrels /work/data/s1m/qrels.txt --parts 8 --workers 1,2 --modes remote,gather
    python benchmarks/bench_dask.py --parquet /work/data/s1m/sessions.parquet \\
        --qrels /work/data/s1m/qrels.txt --parts 8 --workers 1,2 --split convert
    python benchmarks/bench_dask.py --parquet /work/data/s1m/sessions.parquet \\
        --qrels /work/data/s1m/qrels.txt --parts 8 --copies 10 --workers 1,2 \\
        --modes onepass --workdir /tmp/parts10m
"""

from __future__ import annotations

import argparse
import hashlib
import json
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _prefixed(batch: Any, prefix: str) -> Any:
    """``batch`` with ``prefix`` before every session id (only the dictionary, when encoded)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if not prefix:
        return batch
    i = batch.schema.get_field_index("session_id")
    col = batch.column(i)
    if pa.types.is_dictionary(col.type):
        words = pc.binary_join_element_wise(prefix, col.dictionary, "")
        new = pa.DictionaryArray.from_arrays(col.indices, words)
    else:
        new = pc.binary_join_element_wise(prefix, col, "")
    columns = [new if j == i else batch.column(j) for j in range(batch.num_columns)]
    return pa.RecordBatch.from_arrays(columns, schema=batch.schema)


def split_by_session(src: Path, out: Path, parts: int, *, prefix: str = "") -> list[Path]:
    """Write ``src`` as about ``parts`` files, each holding whole sessions, in order.

    With ``prefix``, every session id is written with it, in files named
    ``part-<prefix>NNNNN.parquet``.
    """
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
                files.append(out / f"part-{prefix}{len(files):05d}.parquet")
                writer = pq.ParquetWriter(files[-1], batch.schema)
                rows_in_part = 0
            room = target - rows_in_part
            if room >= batch.num_rows - start:
                writer.write_batch(_prefixed(batch.slice(start), prefix))
                rows_in_part += batch.num_rows - start
                last_session = sid[batch.num_rows - 1].as_py()
                break
            # cut at the first session start at or after the target row
            tail = sid.slice(start + room)
            prev = last_session if room == 0 else sid[start + room - 1].as_py()
            new = pc.not_equal(tail, pc.cast(prev, tail.type)) if prev is not None else None
            cut = int(pc.index(new, True).as_py()) if new is not None else 0
            if cut < 0:  # the session runs to the end of the batch: keep writing
                writer.write_batch(_prefixed(batch.slice(start), prefix))
                rows_in_part += batch.num_rows - start
                last_session = sid[batch.num_rows - 1].as_py()
                break
            writer.write_batch(_prefixed(batch.slice(start, room + cut), prefix))
            writer.close()
            writer = None
            start += room + cut
    if writer is not None:
        writer.close()
    return files


def _worker_peak_mb() -> float:
    """On a worker: the peak resident memory of its process."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _table_hash(df: Any) -> str:
    import pandas as pd

    hashed = pd.util.hash_pandas_object(df, index=False).to_numpy()
    return hashlib.sha256(hashed.tobytes()).hexdigest()[:16]


def run(parts: Path, qrels: str, workers: int, x: int, mode: str) -> dict[str, object]:
    """One mode on a fresh LocalCluster of ``workers`` processes (run it in a fresh process)."""
    import pyarrow.parquet as pq
    from distributed.diagnostics import MemorySampler

    import sessionval as sv
    from sessionval.evaluation.remote import evaluate_remote, load_remote, score_remote
    from sessionval.io.partitioned import load_partitioned_study

    config = sv.SessionConfig(cutoff=x)
    sampler = MemorySampler()
    with (
        sv.dask_engine(workers=workers, threads_per_worker=1, memory_limit=None) as eng,
        sampler.sample("run", client=eng.client, measure="process", interval=0.25),
    ):
        t0 = time.perf_counter()
        loaded: Any
        if mode == "onepass":  # validated and scored in one pass: no load/evaluate split
            loaded, ev = score_remote(parts, eng, config, qrels=qrels, max_rank=x, columns=())
        elif mode == "remote":
            loaded = load_remote(parts, eng, qrels=qrels, max_rank=x, columns=())
        else:
            loaded = load_partitioned_study(
                parts, qrels=qrels, max_rank=x, columns=(), mapper=eng.map_items
            )
        t1 = time.perf_counter()
        if mode == "remote":
            ev = evaluate_remote(loaded, config)
        elif mode == "gather":
            ev = sv.evaluate(loaded.frame, loaded.judgments, config, engine=eng)
        per_session = ev.per_session()
        t2 = time.perf_counter()
        worker_peaks = sorted(eng.client.run(_worker_peak_mb).values())
    cluster_peak_mb = float(sampler.to_pandas().max().iloc[0]) / 2**20
    file_rows = sum(pq.ParquetFile(p).metadata.num_rows for p in sorted(parts.glob("*.parquet")))
    return {
        "mode": mode,
        "workers": workers,
        "load": round(t1 - t0, 2),
        "evaluate": round(t2 - t1, 2),
        "total": round(t2 - t0, 2),
        "file_rows": file_rows,
        "rows_kept": loaded.report.rows_read,
        "sessions": len(per_session),
        "rows_per_s": round(file_rows / (t2 - t0)),
        "cluster_peak_mb": round(cluster_peak_mb),
        "worker_peak_mb": [round(w) for w in worker_peaks],
        "client_peak_mb": round(_peak_mb()),
        "mean_nsdcg": float(per_session["nsdcg"].mean()),
        "per_session_hash": _table_hash(per_session),
    }


def convert_by_session(src: Path, out: Path, parts: int, x: int) -> list[Path]:
    """``sessionval convert --partition-rows N --top-first X``: about ``parts`` files."""
    import pyarrow.parquet as pq

    rows = -(-pq.ParquetFile(src).metadata.num_rows // parts)
    cmd = [sys.executable, "-m", "sessionval", "convert", str(src), "--to", "parquet",
           "--out", str(out), "--partition-rows", str(rows), "--top-first", str(x)]  # fmt: skip
    subprocess.run(cmd, check=True)
    return sorted(out.glob("part-*.parquet"))


def write_study(src: Path, qrels: str, out: Path, parts: int, copies: int) -> None:
    """``copies`` times the sessions of ``src`` (ids prefixed), each copy in ``parts`` files."""
    out.mkdir(parents=True, exist_ok=True)
    t = time.perf_counter()
    n = 0
    for c in range(copies):
        n += len(split_by_session(src, out, parts, prefix=f"c{c:02d}-" if copies > 1 else ""))
    if (src.parent / "study.json").exists():  # users, topics, systems: shared by the copies
        shutil.copy(src.parent / "study.json", out / "study.json")
    print(f"wrote {n} partitions in {time.perf_counter() - t:.1f} s", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--parquet", required=True, help="a flat Parquet log to split")
    ap.add_argument("--qrels", required=True)
    ap.add_argument("--parts", type=int, default=8, help="partitions per copy")
    ap.add_argument("--copies", type=int, default=1, help="copies of the sessions, ids prefixed")
    ap.add_argument("--workers", default="1,2")
    ap.add_argument("--modes", default="remote", help="remote, onepass and/or gather (comma list)")
    ap.add_argument("--cutoff", type=int, default=10)
    ap.add_argument("--workdir", default=None, help="where the partitions go (default: beside)")
    ap.add_argument(
        "--split",
        choices=["stream", "convert"],
        default="stream",
        help="stream: copy batches, cut at sessions; convert: sessionval convert "
        "--partition-rows --top-first (validated, holds the study in memory; --copies 1 only)",
    )
    ap.add_argument("--one", default=None, help=argparse.SUPPRESS)  # MODE:WORKERS, this process
    args = ap.parse_args()
    src = Path(args.parquet)
    if args.split == "convert" and args.copies > 1:
        ap.error("--split convert writes one copy (--copies 1)")
    name = f"parts{args.parts}" + (f"x{args.copies}" if args.copies > 1 else "")
    name += "-top" if args.split == "convert" else ""
    parts = Path(args.workdir) if args.workdir else src.parent / name
    if args.one is not None:
        mode, w = args.one.split(":")
        print(json.dumps(run(parts, args.qrels, int(w), args.cutoff, mode)), flush=True)
        return
    if not parts.exists() and args.split == "convert":
        t = time.perf_counter()
        files = convert_by_session(src, parts, args.parts, args.cutoff)
        print(f"converted into {len(files)} partitions in {time.perf_counter() - t:.1f} s")
    elif not parts.exists():
        write_study(src, args.qrels, parts, args.parts, args.copies)
    sizes = [p.stat().st_size / 2**20 for p in sorted(parts.glob("*.parquet"))]
    print(f"{len(sizes)} partitions of {min(sizes):.0f}-{max(sizes):.0f} MB on disk", flush=True)
    results: list[dict[str, Any]] = []
    for mode in args.modes.split(","):
        for w in (int(v) for v in args.workers.split(",")):
            # a fresh process per run, so the client's peak is this run's
            cmd = [sys.executable, __file__, *sys.argv[1:], "--one", f"{mode}:{w}"]
            out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
            res = json.loads(out.strip().splitlines()[-1])
            results.append(res)
            print(json.dumps(res), flush=True)
    for mode in args.modes.split(","):
        runs = [r for r in results if r["mode"] == mode]
        for res in runs[1:]:
            base = runs[0]
            print(
                f"{mode}: {base['workers']} -> {res['workers']} workers: speed-up "
                f"{base['total'] / res['total']:.2f}x (load {base['load'] / res['load']:.2f}x, "
                f"evaluate {base['evaluate'] / res['evaluate']:.2f}x)"
            )
    hashes = {r["per_session_hash"] for r in results}
    print(f"per-session tables equal across runs: {len(hashes) == 1}")


if __name__ == "__main__":
    main()

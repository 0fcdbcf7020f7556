"""Session scoring end to end: sessionval's validated path against a hand-written NumPy pass.

Not a test. Each tool runs in its own process, rounds interleaved (``sessionval``,
``numpy``, ``sessionval``, ...), and the report gives the median time of each step,
the peak resident memory (``ru_maxrss``) and the ratios.  Imports are not timed.

- **sessionval**: ``load_sessions(path, max_rank=X, columns=())`` (every rule checked
  on the rows read, ids encoded once), ``load_judgments``, ``evaluate`` (paper
  defaults: b = 2, bq = 4, gains 0-1-10-100) and the per-session table.
- **numpy**: what a researcher who writes NumPy would write (about 60 lines, below):
  a pyarrow read of the five needed columns with ``rank <= X``, ids factorised,
  grades joined on a combined integer key, DCG with the 2008 discounts, sDCG, the
  ideal session from the topic's top X, nsDCG, and the per-session DataFrame.  No
  validation.  Both give the same mean nsDCG (printed).
- **numpy_plain** (``--tools sessionval,numpy,numpy_plain``): the same pass with the
  document ids read as plain strings and encoded after the filter (faster on files whose
  document ids are distinct on most rows: ``benchmarks/bench_shapes.py``'s deep shape).

``--layout top-first`` first converts the file once (``sessionval convert --to parquet
--top-first X``, timed and reported, into a temporary folder or ``--layout-dir``), and
both tools then read THAT file with their ``rank <= X`` filter, so both skip the deep
row groups the same way; ``--layout plain,top-first`` runs both layouts, interleaved.

    python benchmarks/bench_end_to_end.py --parquet /tmp/s1m/sessions.parquet \\
        --qrels /tmp/s1m/qrels.txt --cutoff 10 --rounds 3 --layout plain,top-first
    # data: sessionval synth --sessions 1000000 --seed 2008 --format parquet --out /tmp/s1m

``--profile out.prof`` runs sessionval once under cProfile instead.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_sessionval(parquet: str, qrels: str, x: int) -> dict[str, float]:
    import sessionval as sv

    t0 = time.perf_counter()
    # the session evaluation needs the ids, positions, ranks and documents: nothing else is read
    loaded = sv.load_sessions(parquet, max_rank=x, columns=())
    frame, report = loaded.frame, loaded.report
    judgments = sv.load_judgments(qrels)
    t1 = time.perf_counter()
    ev = sv.evaluate(frame, judgments, sv.SessionConfig(cutoff=x))
    t2 = time.perf_counter()
    per_session = ev.per_session()
    t3 = time.perf_counter()
    return {
        "load": t1 - t0,
        "evaluate": t2 - t1,
        "table": t3 - t2,
        "total": t3 - t0,
        "sessions": len(per_session),
        "rows": report.rows_read,
        "mean_nsdcg": float(per_session["nsdcg"].mean()),
    }


def run_numpy(
    parquet: str, qrels: str, x: int, *, plain_docs: bool = False, batches: bool = False
) -> dict[str, float]:
    """The hand-written pass: no validation, one read, NumPy on integer codes.

    ``plain_docs`` (tool ``numpy_plain``): the document ids are read as plain strings and
    dictionary-encoded after the filter, as a researcher would on a file whose document
    ids are distinct on most rows (a dictionary read hashes every row of the file).
    ``batches`` (tool ``numpy_batches``, implies ``plain_docs``): instead of the
    dataset's ``filters=``, the file is read batch by batch (``iter_batches``) and each
    batch masked with one ``rank <= X`` kernel (the filtered dataset read evaluates its
    expression per row and is the slower one on a deep file).
    """
    import numpy as np
    import pandas as pd
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    t0 = time.perf_counter()
    cols = ["session_id", "topic_id", "query_pos", "rank", "doc_id"]
    ids = ["session_id", "topic_id"] if plain_docs else ["session_id", "topic_id", "doc_id"]
    # the top X of every list, and the row of each query without results (rank null); ids
    # dictionary-encoded, one dictionary per column (no Python string per row)
    where = (pc.field("rank") <= x) | pc.field("rank").is_null()
    if batches:
        plain_docs, ids = True, ["session_id", "topic_id"]
        kept = []
        for b in pq.ParquetFile(parquet, read_dictionary=ids).iter_batches(1 << 20, columns=cols):
            rk = b.column("rank")
            kept.append(b.filter(pc.or_kleene(pc.less_equal(rk, x), pc.is_null(rk))))
        t = pa.Table.from_batches(kept)
        del kept
    else:
        t = pq.read_table(parquet, columns=cols, filters=where, read_dictionary=ids)
    if plain_docs:
        i = t.schema.get_field_index("doc_id")
        t = t.set_column(i, "doc_id", pc.dictionary_encode(t.column(i)))
    t = t.unify_dictionaries()

    def codes(table: pa.Table, name: str) -> tuple[np.ndarray, pd.Index]:
        col = table.column(name)
        idx = pa.chunked_array([c.indices for c in col.chunks]).fill_null(-1)
        return idx.to_numpy().astype(np.int64), pd.Index(col.chunk(0).dictionary.to_pandas())

    sess, sess_names = codes(t, "session_id")
    topic, topics = codes(t, "topic_id")
    doc, docs = codes(t, "doc_id")  # -1: a query without results
    qpos = t.column("query_pos").to_numpy().astype(np.int64)
    rank = t.column("rank").fill_null(1).to_numpy().astype(np.int64)
    del t
    qr = pd.read_csv(qrels, sep=r"\s+", header=None, names=["topic", "it", "doc", "grade"])
    t1 = time.perf_counter()
    # grades: the qrels' ids as positions in the same dictionaries, joined on one int64 key
    nd = len(docs) + 1
    qt = topics.get_indexer(qr["topic"].astype(str))
    qd_ = docs.get_indexer(qr["doc"].astype(str))
    judged = (qt >= 0) & (qd_ >= 0)
    qkey = qt[judged] * nd + qd_[judged]
    order = np.argsort(qkey)
    qkey, qgrade = qkey[order], qr["grade"].to_numpy()[judged][order]
    key = topic * nd + doc
    pos = np.clip(np.searchsorted(qkey, key), 0, max(qkey.size - 1, 0))
    hit = (qkey[pos] == key) & (doc >= 0) if qkey.size else np.zeros(key.size, dtype=bool)
    grade = np.where(hit, qgrade[pos] if qkey.size else 0, 0)
    n = rank.size
    gains = np.array([0.0, 1.0, 10.0, 100.0])
    gain = gains[np.clip(grade, 0, 3)]
    # sDCG: DCG with d(i) = 1 + log2(i), query discount 1 / (1 + log4(q))
    qd = 1.0 / (1.0 + np.log(qpos) / np.log(4))
    s_sdcg = np.bincount(sess, weights=gain / (1.0 + np.log2(rank)) * qd, minlength=len(sess_names))
    # ideal session: the topic's top-X ideal DCG for every query of the session
    ideal_dcg = np.zeros(len(topics))
    all_t = topics.get_indexer(qr["topic"].astype(str))
    all_g = gains[np.clip(qr["grade"].to_numpy(), 0, 3)]
    for tc in np.unique(all_t[all_t >= 0]):
        top = np.sort(all_g[all_t == tc])[::-1][:x]
        ideal_dcg[tc] = np.sum(top / (1.0 + np.log2(np.arange(1, top.size + 1))))
    first = np.r_[True, (sess[1:] != sess[:-1]) | (qpos[1:] != qpos[:-1])]  # a query's first row
    s_ideal = np.bincount(
        sess[first], weights=ideal_dcg[topic[first]] * qd[first], minlength=len(sess_names)
    )
    t2 = time.perf_counter()
    with np.errstate(divide="ignore", invalid="ignore"):
        per_session = pd.DataFrame(
            {"session_id": sess_names, "sdcg": s_sdcg, "ideal": s_ideal, "nsdcg": s_sdcg / s_ideal}
        )
    t3 = time.perf_counter()
    return {
        "load": t1 - t0,
        "evaluate": t2 - t1,
        "table": t3 - t2,
        "total": t3 - t0,
        "sessions": len(per_session),
        "rows": n,
        "mean_nsdcg": float(per_session["nsdcg"].mean()),
    }


def run_numpy_plain(parquet: str, qrels: str, x: int) -> dict[str, float]:
    """The hand-written pass with the document ids read plain (:func:`run_numpy`)."""
    return run_numpy(parquet, qrels, x, plain_docs=True)


def run_numpy_batches(parquet: str, qrels: str, x: int) -> dict[str, float]:
    """The hand-written pass reading batch by batch, each masked (:func:`run_numpy`)."""
    return run_numpy(parquet, qrels, x, batches=True)


TOOLS = {
    "sessionval": run_sessionval,
    "numpy": run_numpy,
    "numpy_plain": run_numpy_plain,
    "numpy_batches": run_numpy_batches,
}
LAYOUTS = ("plain", "top-first")


def top_first_copy(parquet: str, x: int, folder: Path) -> tuple[str, float]:
    """``sessionval convert --top-first X`` of ``parquet`` into ``folder`` (reused if there)."""
    out = folder / f"top{x}.parquet"
    if out.exists():
        return str(out), 0.0
    t0 = time.perf_counter()
    cmd = [sys.executable, "-m", "sessionval", "convert", parquet, "--to", "parquet",
           "--out", str(out), "--top-first", str(x)]  # fmt: skip
    subprocess.run(cmd, check=True, capture_output=True)
    return str(out), time.perf_counter() - t0


def _child(tool: str, parquet: str, qrels: str, x: int) -> None:
    out = TOOLS[tool](parquet, qrels, x)
    out["peak_mb"] = _peak_mb()
    print(json.dumps(out))


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--parquet", required=True)
    ap.add_argument("--qrels", required=True)
    ap.add_argument("--cutoff", type=int, default=10, help="X: results per query in sessions")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--tools", default="sessionval,numpy")
    ap.add_argument(
        "--layout",
        default="plain",
        help="plain (the file as given), top-first (converted once), or both: plain,top-first",
    )
    ap.add_argument("--layout-dir", help="folder for the top-first copy (default: a temporary one)")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--profile", help="run sessionval once under cProfile, stats to this file")
    args = ap.parse_args()
    if args.child:
        _child(args.child, args.parquet, args.qrels, args.cutoff)
        return
    if args.profile:
        import cProfile

        import sessionval  # noqa: F401  (imports are not profiled)

        cProfile.runctx(
            "run_sessionval(a.parquet, a.qrels, a.cutoff)",
            globals(),
            {"a": args, "run_sessionval": run_sessionval},
            args.profile,
        )
        return
    tools = args.tools.split(",")
    layouts = args.layout.split(",")
    if not set(layouts) <= set(LAYOUTS):
        ap.error(f"--layout: {args.layout!r} (allowed: {', '.join(LAYOUTS)}, comma-separated)")
    if args.layout_dir:  # the copy is kept there and reused by the next run
        Path(args.layout_dir).mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="bench-layout-") as tmp:
        files = {"plain": args.parquet}
        if "top-first" in layouts:
            folder = Path(args.layout_dir) if args.layout_dir else Path(tmp)
            files["top-first"], took = top_first_copy(args.parquet, args.cutoff, folder)
            print(f"convert --top-first {args.cutoff}: {took:.1f} s -> {files['top-first']}",
                  file=sys.stderr)  # fmt: skip
        runs = _rounds(args, tools, {k: files[k] for k in layouts})
    first = runs[(layouts[0], tools[0])][0]
    print(f"{first['sessions']:,} sessions, {first['rows']:,} rows with rank <= {args.cutoff}; "
          f"median of {args.rounds} interleaved rounds")  # fmt: skip
    print(f"{'layout':10s} {'tool':12s} {'load':>7s} {'evaluate':>9s} {'table':>7s} "
          f"{'total':>7s} {'peak MB':>8s} {'mean nsDCG':>11s}")  # fmt: skip
    med: dict[tuple[str, str], dict[str, float]] = {}
    for (layout, tool), res in runs.items():
        m = {k: statistics.median(x[k] for x in res) for k in res[0]}
        med[layout, tool] = m
        print(f"{layout:10s} {tool:12s} {m['load']:7.2f} {m['evaluate']:9.2f} {m['table']:7.2f} "
              f"{m['total']:7.2f} {m['peak_mb']:8,.0f} {m['mean_nsdcg']:11.6f}")  # fmt: skip
    for layout in layouts:
        for peer in ("numpy", "numpy_plain", "numpy_batches"):
            if (layout, "sessionval") in med and (layout, peer) in med:
                s, n = med[layout, "sessionval"], med[layout, peer]
                print(f"{layout}: sessionval / {peer}: time {s['total'] / n['total']:.2f}x, "
                      f"peak memory {s['peak_mb'] / n['peak_mb']:.2f}x")  # fmt: skip
    if len(layouts) == 2:
        for tool in tools:
            a, b = med["top-first", tool], med["plain", tool]
            print(f"{tool}: top-first / plain: total {a['total'] / b['total']:.2f}x, "
                  f"load {a['load'] / b['load']:.2f}x")  # fmt: skip


def _rounds(
    args: argparse.Namespace, tools: list[str], files: dict[str, str]
) -> dict[tuple[str, str], list[dict[str, float]]]:
    """Every (layout, tool) once per round, each in its own process, interleaved."""
    runs: dict[tuple[str, str], list[dict[str, float]]] = {
        (layout, tool): [] for layout in files for tool in tools
    }
    for r in range(args.rounds):
        for layout, path in files.items():
            for tool in tools:
                cmd = [sys.executable, __file__, "--child", tool, "--parquet", path,
                       "--qrels", args.qrels, "--cutoff", str(args.cutoff)]  # fmt: skip
                res = json.loads(subprocess.run(cmd, check=True, capture_output=True).stdout)
                runs[layout, tool].append(res)
                print(f"round {r + 1} {layout:9s} {tool:10s} " + json.dumps(res), file=sys.stderr)
    return runs


if __name__ == "__main__":
    main()

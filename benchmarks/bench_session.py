"""Benchmark: sDCG of 10k / 100k / 1M generated sessions, vectorised vs a per-session loop.

Run from the repository root::

    .venv/bin/python benchmarks/bench_session.py                 # 10k, 100k, 1M
    .venv/bin/python benchmarks/bench_session.py --sizes 10000   # one size

For each size a study is generated with NumPy (seeded; lists 100 deep, about 2.9
queries per session as in Table 2 of Järvelin et al. 2008, a tenth of the lists
shorter, documents repeating across the queries of a session) and written once to
``<workdir>/sessions_<n>.parquet`` (not timed).  Each size then runs in a fresh
subprocess, timed end to end:

- **load**: ``pyarrow.parquet.read_table`` of only the needed columns and only
  the rows with ``rank <= X`` (a pyarrow filter), straight into a
  :class:`~sessionval.frame.SessionFrame` (ids dictionary-decoded once; the file
  is trusted to be sorted, no re-validation);
- **evaluate**: grades (hash join), gains, unjudged policy, session vectors;
- **summaries**: :meth:`SessionEvaluation.per_session`.

Memory: peak resident set size (``ru_maxrss``) of the subprocess, its RSS before
loading and after loading, and the in-memory size of the loaded frame;
``peak / frame`` is (peak − RSS before load) / frame bytes.

The baseline is a straightforward per-session Python implementation in the style
of existing session-metric scripts (dict qrels, a loop per session, query and
rank).  It runs on a subsample of ``--baseline-sessions`` sessions (default
10,000) and is extrapolated linearly to the full size; the report says so.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

X = 10
DEPTH = 100
N_TOPICS = 4
POOL = 25_000
CHUNK = 100_000


def _rss_mb() -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def _peak_mb() -> float:
    # VmHWM, not ru_maxrss: ru_maxrss survives exec and would report the parent's peak
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


# ---------------------------------------------------------------------------------------------
# generation (not timed)


def generate(n_sessions: int, path: Path, *, seed: int = 2008, layout: str = "session") -> None:
    """Write the study; ``layout="topx"`` puts each chunk's ranks <= X in their own row group.

    Both layouts keep rows in session order inside a row group; ``topx`` lets the
    ``rank <= X`` filter skip the deeper row groups by their statistics.
    """
    schema = pa.schema(
        [
            ("session_id", pa.int64()),
            ("user_id", pa.int32()),
            ("topic_id", pa.int8()),
            ("system_id", pa.int8()),
            ("query_pos", pa.int16()),
            ("rank", pa.int32()),
            ("doc_id", pa.int32()),
        ]
    )
    with pq.ParquetWriter(path, schema, compression="zstd") as w:
        for c0 in range(0, n_sessions, CHUNK):
            rng = np.random.default_rng([seed, c0])
            n = min(CHUNK, n_sessions - c0)
            sid = np.arange(c0, c0 + n, dtype=np.int64)
            nq = np.minimum(rng.geometric(0.35, n), 11).astype(np.int64)
            q_sess = np.repeat(sid, nq)
            q_start = np.repeat(np.cumsum(nq) - nq, nq)
            q_pos = (np.arange(q_sess.size) - q_start + 1).astype(np.int16)
            n_res = np.where(
                rng.random(q_sess.size) < 0.1, rng.integers(0, DEPTH, q_sess.size), DEPTH
            )
            topic = rng.integers(0, N_TOPICS, n)
            # documents: a per-session window of the pool, shifted per query -> repeats
            base = rng.integers(0, POOL, n)[np.repeat(np.arange(n), nq)]
            shift = rng.integers(0, 40, q_sess.size)
            r_q = np.repeat(np.arange(q_sess.size), n_res)
            r_start = np.repeat(np.cumsum(n_res) - n_res, n_res)
            rank = (np.arange(r_q.size) - r_start + 1).astype(np.int32)
            doc = ((base[r_q] + shift[r_q] + rank) % POOL).astype(np.int32)
            # empty queries keep one row with null rank/doc
            empty = np.flatnonzero(n_res == 0)
            s_of_q = q_sess - c0
            cols = {
                "session_id": np.concatenate([q_sess[r_q], q_sess[empty]]),
                "user_id": (np.concatenate([q_sess[r_q], q_sess[empty]]) // 4).astype(np.int32),
                "topic_id": np.concatenate([topic[s_of_q[r_q]], topic[s_of_q[empty]]]).astype(
                    np.int8
                ),
                "system_id": (np.concatenate([q_sess[r_q], q_sess[empty]]) % 2).astype(np.int8),
                "query_pos": np.concatenate([q_pos[r_q], q_pos[empty]]),
                "rank": np.concatenate([rank, np.zeros(empty.size, dtype=np.int32)]),
                "doc_id": np.concatenate([doc, np.full(empty.size, -1, dtype=np.int32)]),
            }
            mask_rank = np.r_[np.zeros(rank.size, bool), np.ones(empty.size, bool)]
            order = np.lexsort((cols["rank"], cols["query_pos"], cols["session_id"]))
            arrays = []
            for name, typ in zip(schema.names, schema.types, strict=True):
                v = cols[name][order]
                m = mask_rank[order] if name in ("rank", "doc_id") else None
                arrays.append(pa.array(v, type=typ, mask=m))
            table = pa.Table.from_arrays(arrays, schema=schema)
            if layout == "topx":
                r = cols["rank"][order]
                top = (r <= X) | mask_rank[order]
                w.write_table(table.filter(pa.array(top)), row_group_size=4_000_000)
                w.write_table(table.filter(pa.array(~top)), row_group_size=4_000_000)
            else:
                w.write_table(table, row_group_size=2_000_000)


def judgments_frame():  # type: ignore[no-untyped-def]
    from sessionval.frame import JudgmentFrame
    from sessionval.models.judgments import GradeScale

    rng = np.random.default_rng(7)
    rows_t, rows_d, rows_g = [], [], []
    for t in range(N_TOPICS):
        docs = rng.choice(POOL, 3000, replace=False)
        grades = rng.choice([0, 1, 2, 3], 3000, p=[0.7, 0.15, 0.1, 0.05])
        rows_t.append(np.full(3000, t))
        rows_d.append(docs)
        rows_g.append(grades)
    t = pd.DataFrame(
        {
            "topic_id": pd.Categorical(np.concatenate(rows_t).astype(str)),
            "doc_id": pd.Categorical(np.concatenate(rows_d).astype(str)),
            "grade": np.concatenate(rows_g).astype(np.int16),
            "assessor": pd.Categorical([""] * (N_TOPICS * 3000)),
        }
    )
    return JudgmentFrame(t, GradeScale.default(), source="bench")


# ---------------------------------------------------------------------------------------------
# fast trusted load


def load_frame(path: Path, x: int):  # type: ignore[no-untyped-def]
    """Read only the needed columns and rows (rank <= X or empty query) into a SessionFrame.

    Batches are scanned with a pyarrow filter (row groups pruned by their rank
    statistics) and converted to NumPy at once; every temporary is released as soon
    as the frame column it feeds exists, and no DataFrame copies its input.
    """
    import pyarrow.compute as pc
    import pyarrow.dataset as ds

    from sessionval.frame import SessionFrame

    cols = ["session_id", "user_id", "topic_id", "system_id", "query_pos", "rank", "doc_id"]
    filt = (pc.field("rank") <= x) | pc.field("rank").is_null()
    parts: dict[str, list[np.ndarray]] = {c: [] for c in [*cols, "has"]}
    for batch in ds.dataset(path, format="parquet").to_batches(columns=cols, filter=filt):
        r = batch.column("rank")
        parts["has"].append(r.is_valid().to_numpy(zero_copy_only=False))
        for c in cols:
            col = batch.column(c)
            if c in ("rank", "doc_id"):
                col = col.fill_null(0)
            parts[c].append(col.to_numpy())
        del batch
    pa.default_memory_pool().release_unused()

    def take(name: str) -> np.ndarray:
        out = np.concatenate(parts.pop(name))
        return out

    sess = take("session_id")
    qpos = take("query_pos")
    n = sess.size
    sstart = np.ones(n, dtype=bool)
    sstart[1:] = sess[1:] != sess[:-1]
    del sess
    qstart = sstart.copy()
    qstart[1:] |= qpos[1:] != qpos[:-1]
    s_rows = np.flatnonzero(sstart)
    q_rows = np.flatnonzero(qstart)
    n_s, n_q = s_rows.size, q_rows.size
    s_of_row = np.cumsum(sstart, dtype=np.int32) - 1
    del sstart
    q_of_row = np.cumsum(qstart, dtype=np.int32) - 1
    del qstart
    has = take("has")
    all_rows = bool(has.all())
    r = None if all_rows else np.flatnonzero(has)

    def rows_of(a: np.ndarray) -> np.ndarray:
        return a if r is None else a[r]

    topic = take("topic_id")
    system = take("system_id")
    user = take("user_id")
    t_cat = pd.CategoricalDtype(pd.Index([str(i) for i in range(N_TOPICS)], dtype="string"))
    sess_labels = pd.Index(np.char.add("s", np.arange(n_s).astype(str)), dtype="string")
    s_cat = pd.CategoricalDtype(sess_labels)
    u_codes, u_labels = pd.factorize(user[s_rows])
    q_s = s_of_row[q_rows].astype(np.int64)
    sessions = pd.DataFrame(
        {
            "session_id": pd.Categorical.from_codes(np.arange(n_s), dtype=s_cat),
            "user_id": pd.Categorical.from_codes(
                u_codes, categories=pd.Index(u_labels.astype(str), dtype="string")
            ),
            "topic_id": pd.Categorical.from_codes(topic[s_rows].astype(np.int64), dtype=t_cat),
            "system_id": pd.Categorical.from_codes(
                system[s_rows].astype(np.int64), categories=pd.Index(["S0", "S1"], dtype="string")
            ),
            "start_time": pd.Series(pd.NaT, index=range(n_s), dtype="datetime64[ns, UTC]"),
            "end_time": pd.Series(pd.NaT, index=range(n_s), dtype="datetime64[ns, UTC]"),
            "n_queries": np.bincount(q_s, minlength=n_s).astype(np.int16),
        },
        copy=False,
    )
    del user, system
    n_res = np.bincount(rows_of(q_of_row), minlength=n_q).astype(np.int32)
    queries = pd.DataFrame(
        {
            "session_id": pd.Categorical.from_codes(q_s, dtype=s_cat),
            "query_pos": qpos[q_rows].astype(np.int16),
            "query_id": pd.Series(pd.NA, index=range(n_q), dtype="string"),
            "text": pd.Series(pd.NA, index=range(n_q), dtype="string"),
            "time": pd.Series(pd.NaT, index=range(n_q), dtype="datetime64[ns, UTC]"),
            "n_results": n_res,
            "scan_depth": pd.arrays.IntegerArray(
                np.zeros(n_q, dtype=np.int32), np.ones(n_q, dtype=bool)
            ),
            "qrels_id": pd.Categorical.from_codes(topic[q_rows].astype(np.int64), dtype=t_cat),
        },
        copy=False,
    )
    del topic, q_s
    doc_cat = pd.CategoricalDtype(pd.Index(np.arange(POOL).astype(str), dtype="string"))
    n_r = n if r is None else r.size
    results = pd.DataFrame(
        {
            "query_idx": rows_of(q_of_row),
            "session_id": pd.Categorical.from_codes(rows_of(s_of_row), dtype=s_cat),
            "query_pos": rows_of(qpos),
            "rank": rows_of(take("rank")),
            "doc_id": pd.Categorical.from_codes(rows_of(take("doc_id")), dtype=doc_cat),
            "clicks": np.zeros(n_r, dtype=np.int16),
            "dwell": np.full(n_r, np.nan, dtype=np.float32),
            "user_grade": np.full(n_r, np.nan, dtype=np.float32),
        },
        copy=False,
    )
    del q_of_row, s_of_row, qpos
    frame = SessionFrame(sessions=sessions, queries=queries, results=results, source=str(path))
    _trim()
    return frame


def _trim() -> None:
    """Return freed heap pages to the OS (glibc keeps large freed blocks otherwise)."""
    import ctypes

    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except OSError:  # not glibc
        pass


def frame_bytes(frame) -> int:  # type: ignore[no-untyped-def]
    return int(
        sum(
            t.memory_usage(deep=False, index=False).sum()
            for t in (frame.sessions, frame.queries, frame.results)
        )
    )


# ---------------------------------------------------------------------------------------------
# the per-session loop baseline (style of existing scripts)


def baseline(frame, judgments, n_sessions: int):  # type: ignore[no-untyped-def]
    """Score the first ``n_sessions`` sessions one by one in pure Python: (seconds, nsDCG)."""
    t0 = time.perf_counter()
    qrels: dict[str, dict[str, int]] = {}
    jt = judgments.table
    for t, d, g in zip(
        jt["topic_id"].astype(str), jt["doc_id"].astype(str), jt["grade"], strict=True
    ):
        qrels.setdefault(t, {})[d] = int(g)
    gains = {0: 0.0, 1: 1.0, 2: 10.0, 3: 100.0}
    # per-session lists of doc ids, as existing scripts take them
    q = frame.queries
    n_q = int((q["session_id"].cat.codes < n_sessions).sum())
    res = frame.results
    n_r = int(q["n_results"].iloc[:n_q].sum())
    docs = res["doc_id"].iloc[:n_r].astype(str).tolist()
    q_sess = q["session_id"].cat.codes.iloc[:n_q].tolist()
    n_res = q["n_results"].iloc[:n_q].tolist()
    topics = q["qrels_id"].astype(str).iloc[:n_q].tolist()
    sessions: list[tuple[str, list[list[str]]]] = []
    k = 0
    for s, n, t in zip(q_sess, n_res, topics, strict=True):
        if s >= len(sessions):
            sessions.append((t, []))
        sessions[s][1].append(docs[k : k + n])
        k += n
    out = []
    for topic, lists in sessions:
        judged = qrels.get(topic, {})
        ideal = sorted((gains[g] for g in judged.values() if g > 0), reverse=True)[:X]
        total = itotal = 0.0
        for qi, results in enumerate(lists, start=1):
            qd = 1.0 / (1.0 + math.log(qi, 4))
            for i in range(1, X + 1):
                disc = 1.0 + math.log(i, 2)
                if i <= len(results):
                    total += qd * gains[max(judged.get(results[i - 1], 0), 0)] / disc
                if i <= len(ideal):
                    itotal += qd * ideal[i - 1] / disc
        out.append(total / itotal if itotal else float("nan"))
    return time.perf_counter() - t0, np.array(out)


# ---------------------------------------------------------------------------------------------
# one size, in a fresh process


def run_one(path: Path, n_sessions: int, baseline_sessions: int) -> dict[str, float]:
    from sessionval.evaluation.config import SessionConfig
    from sessionval.evaluation.session import evaluate

    judg = judgments_frame()
    rss0 = _rss_mb()
    c0 = time.process_time()
    t0 = time.perf_counter()
    frame = load_frame(path, X)
    t1 = time.perf_counter()
    c1 = time.process_time()
    rss_loaded = _rss_mb()
    ev = evaluate(frame, judg, SessionConfig(cutoff=X))
    t2 = time.perf_counter()
    summary = ev.per_session()
    t3 = time.perf_counter()
    c3 = time.process_time()
    load_avg = os.getloadavg()[0]
    peak = _peak_mb()
    fb = frame_bytes(frame) / 2**20
    nb = min(baseline_sessions, frame.n_sessions)
    tb, base_vals = baseline(frame, judg, nb)
    done = base_vals.size
    # check the baseline agrees with the vectorised nsDCG on the subsample
    ours = summary["nsdcg"].to_numpy()[:done]
    return {
        "n_sessions": frame.n_sessions,
        "n_queries": frame.n_queries,
        "n_rows_loaded": frame.n_results,
        "load_s": t1 - t0,
        "evaluate_s": t2 - t1,
        "summaries_s": t3 - t2,
        "total_s": t3 - t0,
        "cpu_load_s": c1 - c0,
        "cpu_eval_s": c3 - c1,
        "load_avg_1min": load_avg,
        "sessions_per_s": frame.n_sessions / (t3 - t0),
        "rss_before_mb": rss0,
        "rss_loaded_mb": rss_loaded,
        "peak_rss_mb": peak,
        "frame_mb": fb,
        "peak_over_frame": (peak - rss0) / fb,
        "peak_over_loaded_rss": (peak - rss0) / (rss_loaded - rss0),
        "baseline_sessions": done,
        "baseline_s": tb,
        "baseline_sessions_per_s": done / tb,
        "baseline_extrapolated_s": tb * frame.n_sessions / done,
        "speedup": (tb * frame.n_sessions / done) / (t2 - t1 + t3 - t2),
        "speedup_end_to_end": (tb * frame.n_sessions / done) / (t3 - t0),
        "mean_nsdcg": float(np.nanmean(summary["nsdcg"])),
        "baseline_matches": bool(np.allclose(ours, base_vals, equal_nan=True)),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    ap.add_argument("--workdir", default="/tmp/sessionval_bench")
    ap.add_argument("--baseline-sessions", type=int, default=10_000)
    ap.add_argument(
        "--layout",
        choices=["session", "topx"],
        default="topx",
        help="session: rows in session order only; topx: ranks <= X in their own "
        "row groups (prunable by the rank filter)",
    )
    ap.add_argument("--one", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        n = int(args.one)
        path = Path(args.workdir) / f"sessions_{n}_{args.layout}.parquet"
        print(json.dumps({"layout": args.layout, **run_one(path, n, args.baseline_sessions)}))
        return
    work = Path(args.workdir)
    work.mkdir(parents=True, exist_ok=True)
    rows = []
    for n in args.sizes:
        path = work / f"sessions_{n}_{args.layout}.parquet"
        if not path.exists():
            t = time.perf_counter()
            generate(n, path, layout=args.layout)
            print(f"generated {path} in {time.perf_counter() - t:.1f} s", file=sys.stderr)
        env = {**os.environ, "PYTHONHASHSEED": "0"}
        out = subprocess.run(
            [
                sys.executable,
                __file__,
                "--one",
                str(n),
                "--workdir",
                str(work),
                "--layout",
                args.layout,
                "--baseline-sessions",
                str(args.baseline_sessions),
            ],
            check=True,
            capture_output=True,
            text=True,
            env=env,
        )
        r = json.loads(out.stdout.strip().splitlines()[-1])
        rows.append(r)
        print(json.dumps(r), file=sys.stderr)
    df = pd.DataFrame(rows)
    cols = [
        "layout",
        "n_sessions",
        "n_rows_loaded",
        "load_s",
        "evaluate_s",
        "summaries_s",
        "total_s",
        "cpu_load_s",
        "cpu_eval_s",
        "load_avg_1min",
        "sessions_per_s",
        "peak_rss_mb",
        "frame_mb",
        "peak_over_frame",
        "baseline_sessions_per_s",
        "baseline_extrapolated_s",
        "speedup",
        "speedup_end_to_end",
        "baseline_matches",
    ]
    print(df[cols].to_string(index=False, float_format=lambda v: f"{v:,.2f}"))
    print(
        "cpu_*: process CPU time (all threads) of load and of evaluate+summaries; "
        "load_avg_1min: machine load when the size finished (2 cores, shared)"
    )
    print(
        f"baseline: pure-Python loop per session on the first {args.baseline_sessions:,} "
        "sessions, extrapolated linearly to each size; speedup = extrapolated baseline / "
        "(evaluate + summaries); end-to-end includes the vectorised load"
    )


if __name__ == "__main__":
    main()

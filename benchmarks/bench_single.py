"""Benchmark: nDCG@10, AP and RR for many queries x 100 results from string DataFrames.

sessionval vs pytrec_eval, ranx and ir_measures, measured in one run.  Not a test.
Every tool starts from the same pandas DataFrames in ir_measures' convention (run:
query_id, doc_id, score; qrels: query_id, doc_id, relevance; ids as pandas' default
strings) and the timing includes building the tool's own input from them
(sessionval: ``evaluate_run``, the one call; pytrec_eval: dicts of dicts; ranx:
Qrels/Run.from_df; ir_measures: ``calc_aggregate`` on the DataFrames).  Each tool runs
in its own subprocess so peak memory (resident set size sampled every 20 ms, peak minus
the size once the DataFrames exist) is not shared; with ``--rounds N`` the tools run
interleaved N times and the medians are reported (the machine is shared: ratios of
interleaved runs are what compare).  Each tool first runs once on a tiny input: its
imports (and ranx's numba compilation) are not timed; that warm-up time is reported apart.

Usage::

    .venv/bin/python benchmarks/bench_single.py --queries 100000 --rounds 3
    .venv/bin/python benchmarks/bench_single.py --queries 278000 --tools sessionval,pytrec_eval
    .venv/bin/python benchmarks/bench_single.py --ids categorical  # ids dictionary-encoded
    .venv/bin/python benchmarks/bench_single.py --shape expanded --queries 50000 --rounds 2
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import threading
import time

import numpy as np
import pandas as pd

N_TOPICS = 1_000
"""``--shape expanded``: queries share these topics, and carry their topic's judgments."""
JUDGED_PER_TOPIC = 150
POOL = 1_000
"""``--shape expanded``: documents a topic's lists draw from (its judged ones first)."""


def make_data(
    n_queries: int, depth: int, seed: int = 0, shape: str = "project"
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Synthetic run (n_queries x depth) and qrels.

    ``shape="project"``: ~30 judged documents per query, half of them retrieved.
    ``shape="expanded"``: per-query qrels expanded from topics (issue 26): each query
    belongs to one of 1,000 topics and carries that topic's 150 judgments (150 qrels
    rows per query: 7.5M at 50k queries); its list draws ``depth`` distinct documents
    from the topic's pool of 1,000 (the 150 judged among them).
    """
    if shape == "expanded":
        return _make_expanded(n_queries, depth, seed)
    rng = np.random.default_rng(seed)
    n_docs = 1_000_000
    q = np.repeat(np.arange(n_queries), depth)
    docs = rng.integers(0, n_docs, size=q.size)
    # make doc ids unique within a query: offset by position
    docs = (docs + np.tile(np.arange(depth), n_queries) * 7919) % n_docs
    docs = np.where(np.r_[True, (q[1:] != q[:-1]) | (docs[1:] != docs[:-1])], docs, docs + 1)
    score = rng.random(q.size).round(3)
    qid = np.char.add("q", q.astype(str))
    run = pd.DataFrame(
        {"query_id": qid, "doc_id": np.char.add("d", docs.astype(str)), "score": score}
    )
    run = run.drop_duplicates(["query_id", "doc_id"])
    n_j = 30
    jq = np.repeat(np.arange(n_queries), n_j)
    pick = rng.integers(0, depth, size=jq.size)  # retrieved docs
    jd = docs.reshape(n_queries, depth)[jq, pick]
    other = rng.random(jq.size) < 0.5  # half of the judgments: docs not retrieved
    jd = np.where(other, rng.integers(0, n_docs, size=jq.size), jd)
    grade = rng.choice([0, 0, 1, 2, 3], size=jq.size)
    qrels = pd.DataFrame(
        {
            "query_id": np.char.add("q", jq.astype(str)),
            "doc_id": np.char.add("d", jd.astype(str)),
            "relevance": grade,
        }
    )
    qrels = qrels.drop_duplicates(["query_id", "doc_id"]).reset_index(drop=True)
    return run.reset_index(drop=True), qrels


def _make_expanded(n_queries: int, depth: int, seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``make_data(shape="expanded")``."""
    rng = np.random.default_rng(seed)
    topic = rng.integers(0, N_TOPICS, size=n_queries)
    grade_of = rng.choice(4, size=(N_TOPICS, JUDGED_PER_TOPIC), p=(0.55, 0.25, 0.12, 0.08))
    q = np.repeat(np.arange(n_queries), depth)
    # distinct pool slots per list: an odd stride coprime to the pool from a random start
    start = rng.integers(0, POOL, size=n_queries)
    stride = rng.choice(np.array([1, 3, 7, 9, 11, 13, 17, 19]), size=n_queries)
    slot = (start[q] + stride[q] * np.tile(np.arange(depth), n_queries) * 7) % POOL
    docs = (topic[q].astype(np.int64) * POOL + slot) * 7919 % 10_000_019
    qid = np.char.add("q", q.astype(str))
    score = rng.random(q.size).round(3)
    run = pd.DataFrame({"query_id": qid, "doc_id": np.char.add("d", docs.astype(str)),
                        "score": score})  # fmt: skip
    jq = np.repeat(np.arange(n_queries), JUDGED_PER_TOPIC)
    js = np.tile(np.arange(JUDGED_PER_TOPIC), n_queries)
    jd = (topic[jq].astype(np.int64) * POOL + js) * 7919 % 10_000_019
    qrels = pd.DataFrame({"query_id": np.char.add("q", jq.astype(str)),
                          "doc_id": np.char.add("d", jd.astype(str)),
                          "relevance": grade_of[topic[jq], js]})  # fmt: skip
    return run, qrels


def run_sessionval(run: pd.DataFrame, qrels: pd.DataFrame) -> dict[str, float]:
    import sessionval as sv

    return sv.evaluate_run(run, qrels, ["nDCG@10", "AP", "RR"]).means


def run_pytrec_eval(run: pd.DataFrame, qrels: pd.DataFrame) -> dict[str, float]:
    import pytrec_eval

    qd: dict[str, dict[str, int]] = {}
    for q, d, g in zip(qrels["query_id"], qrels["doc_id"], qrels["relevance"], strict=True):
        qd.setdefault(q, {})[d] = int(g)
    rd: dict[str, dict[str, float]] = {}
    for q, d, s in zip(run["query_id"], run["doc_id"], run["score"], strict=True):
        rd.setdefault(q, {})[d] = float(s)
    res = pytrec_eval.RelevanceEvaluator(qd, {"ndcg_cut.10", "map", "recip_rank"}).evaluate(rd)
    n = len(res)
    return {
        "nDCG@10": sum(v["ndcg_cut_10"] for v in res.values()) / n,
        "AP": sum(v["map"] for v in res.values()) / n,
        "RR": sum(v["recip_rank"] for v in res.values()) / n,
    }


def run_ranx(run: pd.DataFrame, qrels: pd.DataFrame) -> dict[str, float]:
    from ranx import Qrels, Run, evaluate

    # ranx asserts object dtype for ids (pandas 3 defaults to str): convert, timed
    qdf = qrels.rename(columns={"query_id": "q_id", "relevance": "score"})
    qdf = qdf.astype({"q_id": object, "doc_id": object})
    rdf = run.rename(columns={"query_id": "q_id"}).astype({"q_id": object, "doc_id": object})
    qr = Qrels.from_df(qdf, q_id_col="q_id", doc_id_col="doc_id", score_col="score")
    rn = Run.from_df(rdf, q_id_col="q_id", doc_id_col="doc_id", score_col="score")
    res = evaluate(qr, rn, ["ndcg@10", "map", "mrr"])
    return {"nDCG@10": float(res["ndcg@10"]), "AP": float(res["map"]), "RR": float(res["mrr"])}


def run_ir_measures(run: pd.DataFrame, qrels: pd.DataFrame) -> dict[str, float]:
    import ir_measures
    from ir_measures import AP, RR, nDCG

    res = ir_measures.calc_aggregate([nDCG @ 10, AP, RR], qrels, run)
    return {"nDCG@10": float(res[nDCG @ 10]), "AP": float(res[AP]), "RR": float(res[RR])}


TOOLS = {
    "sessionval": run_sessionval,
    "pytrec_eval": run_pytrec_eval,
    "ranx": run_ranx,
    "ir_measures": run_ir_measures,
}


def _rss_mb() -> float:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


class PeakRSS:
    """Sample the resident set size in a thread; ``peak`` is the maximum seen."""

    def __init__(self) -> None:
        self.peak = _rss_mb()
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, _rss_mb())
            time.sleep(0.02)

    def __enter__(self) -> PeakRSS:
        self._t.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._t.join()
        self.peak = max(self.peak, _rss_mb())


def child(tool: str, n_queries: int, depth: int, ids: str, shape: str) -> None:
    run, qrels = make_data(n_queries, depth, shape=shape)
    if ids == "categorical":
        # ids as a Parquet file or sessionval's read_run deliver them (dictionary-encoded)
        run = run.astype({"query_id": "category", "doc_id": "category"})
        qrels = qrels.astype({"query_id": "category", "doc_id": "category"})
    # one tiny warm-up call: imports (and ranx's numba compilation) are not timed
    t = time.perf_counter()
    r2, q2 = make_data(20, 10, seed=1)
    TOOLS[tool](r2, q2)
    warm = time.perf_counter() - t
    gc.collect()
    base = _rss_mb()
    with PeakRSS() as mem:
        t = time.perf_counter()
        means = TOOLS[tool](run, qrels)
        secs = time.perf_counter() - t
    peak = mem.peak
    print(
        json.dumps(
            {
                "tool": tool,
                "seconds": secs,
                "peak_mb": peak - base,
                "warmup_s": warm,
                "rows": len(run),
                "means": means,
            }
        )
    )


def _child_result(tool: str, a: argparse.Namespace) -> dict[str, object]:
    out = subprocess.run(
        [
            sys.executable,
            __file__,
            "--child",
            tool,
            "--queries",
            str(a.queries),
            "--depth",
            str(a.depth),
            "--ids",
            a.ids,
            "--shape",
            a.shape,
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--queries", type=int, default=30_000)
    ap.add_argument("--depth", type=int, default=100)
    ap.add_argument("--tools", default="sessionval,pytrec_eval,ranx,ir_measures")
    ap.add_argument("--ids", choices=["str", "categorical"], default="str")
    ap.add_argument(
        "--shape",
        choices=["project", "expanded"],
        default="project",
        help="project: ~30 qrels per query; expanded: each query carries its topic's 150",
    )
    ap.add_argument("--rounds", type=int, default=1, help="interleaved rounds; medians reported")
    ap.add_argument("--child", default=None)
    a = ap.parse_args()
    if a.child:
        child(a.child, a.queries, a.depth, a.ids, a.shape)
        return
    tools = a.tools.split(",")
    runs: dict[str, list[dict]] = {t: [] for t in tools}
    for _ in range(a.rounds):
        for tool in tools:  # interleaved: each round runs every tool once
            runs[tool].append(_child_result(tool, a))
    results = []
    for tool in tools:
        rs = runs[tool]
        med = dict(rs[0])
        med["seconds"] = float(np.median([r["seconds"] for r in rs]))
        med["peak_mb"] = float(np.median([r["peak_mb"] for r in rs]))
        med["all_seconds"] = [round(r["seconds"], 2) for r in rs]
        results.append(med)
    ours = next(r for r in results if r["tool"] == "sessionval")
    print(
        f"{a.queries} queries x {a.depth} results ({ours['rows']} rows), ids: {a.ids}, "
        f"shape: {a.shape}, "
        f"medians of {a.rounds} interleaved round(s)"
    )
    print(
        f"{'tool':12s} {'seconds':>8s} {'rows/s':>12s} {'peak MB':>8s} {'time x':>7s} "
        f"{'mem x':>6s}  means (nDCG@10, AP, RR)  [seconds per round]"
    )
    for r in results:
        m = r["means"]
        print(
            f"{r['tool']:12s} {r['seconds']:8.2f} {r['rows'] / r['seconds']:12,.0f} "
            f"{r['peak_mb']:8.0f} {r['seconds'] / ours['seconds']:7.1f} "
            f"{r['peak_mb'] / max(ours['peak_mb'], 1):6.1f}  "
            f"{m['nDCG@10']:.6f} {m['AP']:.6f} {m['RR']:.6f}  {r['all_seconds']}"
            + f"  (warm-up {r['warmup_s']:.1f}s excluded)"
        )


if __name__ == "__main__":
    main()

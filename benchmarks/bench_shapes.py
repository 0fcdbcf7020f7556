"""Workload shapes unlike the synthetic study: their data, end to end, and the grade-join kernels.

Not a test.  Issue 26 names two shapes where sessionval was slower than its peers:

* **deep** (``make-deep``, then ``e2e``): sessions of 2.9 queries on average, **100
  results per query**, string document ids ``d123``, judgments of 150 documents per topic
  over 1,000 topics, stored as ONE Parquet file in session order (not top-first), read
  at top X.  ``e2e`` runs ``benchmarks/bench_end_to_end.py`` on it (sessionval's
  validated read + sDCG/nsDCG against the hand-written NumPy pass, each in its own
  process, rounds interleaved, medians);
* **expanded** (``benchmarks/bench_single.py --shape expanded``): per-query qrels
  expanded from topics (each query carries its topic's ~150 judgments).

``joins`` times the same grade join, on both shapes, through the kernels of Arrow and
pandas (``pyarrow.compute.dictionary_encode``, ``index_in``, ``pa.Table.join``,
``pandas.factorize``, ``pandas.merge``) and through sessionval's two implementations of
:class:`~sessionval.judgments.join.GradeJoin` (``string_ids``: 64-bit keys read from
Arrow's buffers, with every judgment row sorted or, on expanded qrels, each distinct
judgment set sorted once (:mod:`sessionval.measures.judgment_sets`; beside it the same
sets probed with Arrow's ``index_in`` instead); ``codes``:
:class:`~sessionval.judgments.lookup.GradeLookup` on dictionary codes), checks that
every one gives the same grades, and prints the medians.

    python benchmarks/bench_shapes.py make-deep --sessions 100000 --out /tmp/deep100k
    python benchmarks/bench_shapes.py e2e --data /tmp/deep100k --rounds 2
    python benchmarks/bench_shapes.py joins --shape deep --data /tmp/deep100k --rounds 3
    python benchmarks/bench_shapes.py joins --shape expanded --queries 50000 --rounds 3
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

N_TOPICS = 1_000
JUDGED_PER_TOPIC = 150
POOL = 1_000  # documents a topic's lists draw from: its 150 judged ones and 850 others
GRADE_P = (0.55, 0.25, 0.12, 0.08)  # grades 0-3 of the judged documents


def _doc_number(topic: np.ndarray, k: np.ndarray) -> np.ndarray:
    """Document number of pool slot ``k`` of ``topic`` (scattered over ~10M ids: ``d1234567``)."""
    return (topic.astype(np.int64) * POOL + k) * 7919 % 10_000_019


def _ids(prefix: str, numbers: np.ndarray) -> Any:
    """``prefix`` + number as an Arrow string array, without a Python string per row."""
    import pyarrow as pa
    import pyarrow.compute as pc

    return pc.binary_join_element_wise(prefix, pc.cast(pa.array(numbers), pa.string()), "")


def make_deep(sessions: int, out: Path, seed: int = 26, group_rows: int = 1 << 20) -> None:
    """Write ``out/sessions.parquet`` (session order, 100 deep) and ``out/qrels.txt``."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(seed)
    out.mkdir(parents=True, exist_ok=True)
    jt = np.repeat(np.arange(N_TOPICS), JUDGED_PER_TOPIC)
    jk = np.tile(np.arange(JUDGED_PER_TOPIC), N_TOPICS)  # slots 0..149 are the judged ones
    grade = rng.choice(4, size=jt.size, p=GRADE_P)
    qrels = pd.DataFrame(
        {"t": np.char.add("t", jt.astype(str)), "it": 0,
         "d": np.char.add("d", _doc_number(jt, jk).astype(str)), "g": grade}
    )  # fmt: skip
    qrels.to_csv(out / "qrels.txt", sep=" ", header=False, index=False)
    writer: pq.ParquetWriter | None = None
    per_chunk = max(1, group_rows // 290)  # sessions per row group (~2.9 x 100 rows each)
    for s0 in range(0, sessions, per_chunk):
        s = np.arange(s0, min(s0 + per_chunk, sessions))
        nq = 1 + rng.poisson(1.9, size=s.size)  # 2.9 queries per session on average
        topic = rng.integers(0, N_TOPICS, size=s.size)
        qs = np.repeat(np.arange(s.size), nq)  # session of each query
        qpos = np.arange(qs.size) - np.repeat(np.cumsum(nq) - nq, nq) + 1
        # 100 distinct pool slots per list: an odd stride coprime to POOL from a random start
        start = rng.integers(0, POOL, size=qs.size)
        stride = rng.choice(np.array([1, 3, 7, 9, 11, 13, 17, 19, 21, 23]), size=qs.size)
        depth = 100
        r = np.tile(np.arange(depth), qs.size)
        row_q = np.repeat(np.arange(qs.size), depth)
        k = (start[row_q] + stride[row_q] * r * 7) % POOL
        row_s = qs[row_q]
        table = pa.table(
            {
                "session_id": _ids("s", s0 + row_s),
                "user_id": _ids("u", (s0 + row_s) // 4),
                "topic_id": _ids("t", topic[row_s]),
                "system_id": _ids("sys", (s0 + row_s) % 2),
                "query_pos": pa.array(qpos[row_q].astype(np.int32)),
                "rank": pa.array((r + 1).astype(np.int32)),
                "doc_id": _ids("d", _doc_number(topic[row_s], k)),
            }
        )
        if writer is None:
            writer = pq.ParquetWriter(out / "sessions.parquet", table.schema)
        writer.write_table(table, row_group_size=table.num_rows)
    if writer is not None:
        writer.close()
    meta = pq.ParquetFile(out / "sessions.parquet").metadata
    print(f"{out / 'sessions.parquet'}: {meta.num_rows:,} rows in {meta.num_row_groups} row "
          f"groups; {out / 'qrels.txt'}: {len(qrels):,} judgments")  # fmt: skip


def e2e(data: Path, rounds: int, cutoff: int, extra: list[str]) -> None:
    """``bench_end_to_end.py`` on the deep shape (the peers, the rounds, the table)."""
    cmd = [sys.executable, str(Path(__file__).with_name("bench_end_to_end.py")),
           "--parquet", str(data / "sessions.parquet"), "--qrels", str(data / "qrels.txt"),
           "--cutoff", str(cutoff), "--rounds", str(rounds), *extra]  # fmt: skip
    subprocess.run(cmd, check=True)


# --------------------------------------------------------------------------- the grade join


def deep_join_input(data: Path, cutoff: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Rows of rank <= X of the deep file (topic, doc) and the qrels, ids as Arrow strings."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    t = pq.read_table(data / "sessions.parquet", columns=["topic_id", "doc_id", "rank"],
                      filters=pc.field("rank") <= cutoff)  # fmt: skip
    rows = pd.DataFrame({"topic": t.column("topic_id").to_pandas(),
                         "doc": t.column("doc_id").to_pandas()}).astype("str")  # fmt: skip
    rows["list"] = np.cumsum(t.column("rank").to_numpy() == 1) - 1  # a list starts at rank 1
    q = pd.read_csv(data / "qrels.txt", sep=" ", header=None, names=["topic", "it", "doc", "grade"],
                    dtype={"topic": "str", "doc": "str"})  # fmt: skip
    return rows, q[["topic", "doc", "grade"]]


def expanded_join_input(queries: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``bench_single.make_data(..., shape="expanded")``: (query, doc) rows and per-query qrels."""
    sys.path.insert(0, str(Path(__file__).parent))
    from bench_single import make_data

    run, qrels = make_data(queries, 100, shape="expanded")
    rows = pd.DataFrame({"topic": run["query_id"], "doc": run["doc_id"]})
    qid = run["query_id"].to_numpy()
    rows["list"] = np.cumsum(np.r_[True, qid[1:] != qid[:-1]]) - 1
    q = qrels.rename(columns={"query_id": "topic", "doc_id": "doc", "relevance": "grade"})
    return rows, q[["topic", "doc", "grade"]]


def _strings(s: pd.Series) -> Any:
    import pyarrow as pa

    a = pa.array(s.array)
    return a.combine_chunks() if isinstance(a, pa.ChunkedArray) else a


def join_arrow_table(rows: pd.DataFrame, q: pd.DataFrame) -> np.ndarray:
    """``pa.Table.join`` (hash join on two string keys), rows put back in order."""
    import pyarrow as pa

    left = pa.table({"topic": _strings(rows["topic"]), "doc": _strings(rows["doc"]),
                     "row": pa.array(np.arange(len(rows)))})  # fmt: skip
    right = pa.table({"topic": _strings(q["topic"]), "doc": _strings(q["doc"]),
                      "grade": pa.array(q["grade"].to_numpy(np.float64))})  # fmt: skip
    j = left.join(right, keys=["topic", "doc"], join_type="left outer", use_threads=True)
    out = np.full(len(rows), np.nan)
    out[j.column("row").to_numpy()] = j.column("grade").to_numpy(zero_copy_only=False)
    return out


def join_arrow_encode(rows: pd.DataFrame, q: pd.DataFrame) -> np.ndarray:
    """``dictionary_encode`` of the run's ids, ``index_in`` of the qrels' ids, one int64 key."""
    import pyarrow.compute as pc

    def encode(col: pd.Series) -> tuple[np.ndarray, Any]:
        d = pc.dictionary_encode(_strings(col))
        return d.indices.to_numpy().astype(np.int64), d.dictionary

    tc, tdict = encode(rows["topic"])
    dc, ddict = encode(rows["doc"])
    qt = pc.index_in(_strings(q["topic"]), value_set=tdict).fill_null(-1).to_numpy()
    qd = pc.index_in(_strings(q["doc"]), value_set=ddict).fill_null(-1).to_numpy()
    return _key_join(tc, dc, len(ddict), qt, qd, q["grade"].to_numpy(np.float64))


def join_pandas_factorize(rows: pd.DataFrame, q: pd.DataFrame) -> np.ndarray:
    """``pandas.factorize`` of run and qrels ids together, one int64 key, a sorted search."""
    n = len(rows)
    tc, _ = pd.factorize(pd.concat([rows["topic"], q["topic"]], ignore_index=True))
    dc, du = pd.factorize(pd.concat([rows["doc"], q["doc"]], ignore_index=True))
    return _key_join(tc[:n], dc[:n], len(du), tc[n:], dc[n:], q["grade"].to_numpy(np.float64))


def join_pandas_merge(rows: pd.DataFrame, q: pd.DataFrame) -> np.ndarray:
    """``pandas.merge`` on the two string columns (left join keeps the run's order)."""
    m = rows[["topic", "doc"]].merge(q, how="left", on=["topic", "doc"], sort=False)
    return m["grade"].to_numpy(np.float64)


def _key_join(tc: Any, dc: Any, nd: int, qt: Any, qd: Any, grade: np.ndarray) -> np.ndarray:
    """Grades by one int64 key ``topic * n_docs + doc``: sorted qrels keys, a binary search."""
    ok = (qt >= 0) & (qd >= 0)
    qkey = qt[ok].astype(np.int64) * nd + qd[ok]
    order = np.argsort(qkey)
    qkey, g = qkey[order], grade[ok][order]
    key = tc.astype(np.int64) * nd + dc
    out = np.full(key.size, np.nan)
    if qkey.size:
        pos = np.minimum(np.searchsorted(qkey, key), qkey.size - 1)
        hit = qkey[pos] == key
        out[hit] = g[pos[hit]]
    return out


def join_string_ids(rows: pd.DataFrame, q: pd.DataFrame) -> np.ndarray:
    """sessionval's 64-bit key join (:class:`~sessionval.measures.key_join.JudgedKeys`)."""
    from sessionval.measures.key_join import JudgedKeys
    from sessionval.measures.string_ids import id_codes, id_keys

    keys = id_keys([rows["doc"], q["doc"]])
    assert keys is not None
    run_docs, judged_docs = keys
    tc, tcat = id_codes(q["topic"]) or pd.factorize(q["topic"])
    judged = JudgedKeys.build(tc.astype(np.int64), len(tcat), judged_docs,
                              q["grade"].to_numpy(np.float64))  # fmt: skip
    assert judged is not None
    # rows in lists (as the ranked lists are): one topic per list
    lst = rows["list"].to_numpy()
    counts = np.bincount(lst)
    first = np.r_[0, np.cumsum(counts)[:-1]]
    t = pd.Index(tcat).get_indexer(rows["topic"].iloc[first])
    assert (t >= 0).all()
    return judged.lists(t, counts, run_docs)


def _list_topics(rows: pd.DataFrame, tcat: Any) -> tuple[np.ndarray, np.ndarray]:
    """Each list's judgment topic code and row count (rows come list after list)."""
    counts = np.bincount(rows["list"].to_numpy())
    first = np.r_[0, np.cumsum(counts)[:-1]]
    t = pd.Index(tcat).get_indexer(rows["topic"].iloc[first])
    assert (t >= 0).all()
    return t, counts


def _sets_input(rows: pd.DataFrame, q: pd.DataFrame) -> tuple[Any, ...]:
    from sessionval.measures.judgment_sets import judgment_sets
    from sessionval.measures.string_ids import id_codes, id_keys

    keys = id_keys([rows["doc"], q["doc"]])
    assert keys is not None
    run_docs, judged_docs = keys
    tc, tcat = id_codes(q["topic"]) or pd.factorize(q["topic"])
    grades = q["grade"].to_numpy(np.float64)
    # min_share=0: the warm-up's few queries share no set, and are still served
    sets = judgment_sets(tc.astype(np.int64), len(tcat), judged_docs, grades, min_share=0)
    assert sets is not None
    return run_docs, judged_docs, tcat, grades, sets


def join_string_ids_sets(rows: pd.DataFrame, q: pd.DataFrame) -> np.ndarray:
    """The 64-bit key join with the judgments sorted once per distinct set (``evaluate_run``)."""
    run_docs, judged_docs, tcat, grades, sets = _sets_input(rows, q)
    judged = sets.judged_keys(judged_docs, grades)
    assert judged is not None
    return judged.lists(*_list_topics(rows, tcat), run_docs)


def join_sets_index_in(rows: pd.DataFrame, q: pd.DataFrame) -> np.ndarray:
    """Arrow's ``index_in`` of each row's packed (set, key) in the distinct sets' keys.

    The alternative to laying each set's sorted copy out per topic: no sort of the
    rows, one hash probe per row (matches confirmed on the full ids, as the key join).
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    from sessionval.measures.key_join import pack_keys

    run_docs, judged_docs, tcat, grades, sets = _sets_input(rows, q)
    set_rows, set_lens = sets.set_rows()
    tbits = max(1, len(tcat).bit_length())
    values = pack_keys(
        np.repeat(np.arange(sets.n_sets), set_lens), judged_docs.keys[set_rows], tbits
    )
    t, counts = _list_topics(rows, tcat)
    probe = pack_keys(sets.topic_sets()[t], run_docs.keys, tbits, counts)
    at = pc.index_in(pa.array(probe), value_set=pa.array(values)).fill_null(-1).to_numpy()
    hit = np.flatnonzero(at >= 0)
    jrows = set_rows[at[hit]]
    hit_ok = run_docs.same(hit, judged_docs, jrows)
    out = np.full(len(rows), np.nan)
    out[hit[hit_ok]] = grades[jrows[hit_ok]]
    return out


def join_codes(rows: pd.DataFrame, q: pd.DataFrame) -> np.ndarray:
    """sessionval's dictionary-code join (:class:`~sessionval.judgments.lookup.GradeLookup`)."""
    from sessionval.judgments.lookup import lookup_grades
    from sessionval.validate.judgments import judgments_from_table

    j = judgments_from_table(q.rename(columns={"topic": "topic_id", "doc": "doc_id"}))
    return lookup_grades(rows["topic"], rows["doc"], j)


_CODED: dict[int, Any] = {}


def join_coded(rows: pd.DataFrame, q: pd.DataFrame) -> np.ndarray:
    """GradeLookup as the session evaluation uses it: ids already categoricals, judgments loaded.

    The study's ids are coded once by the validated load and the judgments validated once
    by their reader (neither timed here, as in ``evaluate``): the join is the index of the
    judgments, the categories translated, and the probe of each list's rows.
    """
    from sessionval.judgments.lookup import JudgmentIndex
    from sessionval.validate.judgments import judgments_from_table

    key = id(rows)
    if key not in _CODED:  # untimed in the rounds: done on the warm-up call for these rows
        j = judgments_from_table(q.rename(columns={"topic": "topic_id", "doc": "doc_id"}))
        _CODED[key] = (rows["topic"].astype("category"), rows["doc"].astype("category"), j)
    topic, doc, j = _CODED[key]
    lst = rows["list"].to_numpy()
    counts = np.bincount(lst)
    first = np.r_[0, np.cumsum(counts)[:-1]]
    lookup = JudgmentIndex.build(j).prepare(
        pd.Index(topic.cat.categories), pd.Index(doc.cat.categories)
    )
    return lookup.lists(topic.cat.codes.to_numpy()[first], counts, doc.cat.codes.to_numpy())


JOINS: dict[str, Callable[[pd.DataFrame, pd.DataFrame], np.ndarray]] = {
    "string_ids": join_string_ids,
    "string_ids, judgment sets": join_string_ids_sets,
    "sets + pa index_in": join_sets_index_in,
    "codes, ids coded (evaluate)": join_coded,
    "codes from strings (GradeLookup)": join_codes,
    "pa dictionary_encode+index_in": join_arrow_encode,
    "pa Table.join": join_arrow_table,
    "pd factorize": join_pandas_factorize,
    "pd merge": join_pandas_merge,
}


_KEYED = ("string_ids", "sets")
"""The 64-bit key joins (lists of distinct topics: the expanded shape only)."""


def joins(shape: str, data: Path | None, queries: int, cutoff: int, rounds: int) -> None:
    """Every kernel on the same rows, ``rounds`` times interleaved; medians; same grades checked."""
    if shape == "deep":
        assert data is not None, "--data: the folder written by make-deep"
        rows, q = deep_join_input(data, cutoff)
    else:
        rows, q = expanded_join_input(queries)
    print(f"shape {shape}: {len(rows):,} rows to grade, {len(q):,} judgments, "
          f"{rows['doc'].nunique():,} distinct documents; medians of {rounds} rounds")  # fmt: skip
    # JudgedKeys joins lists of distinct topics (a run's queries); the sessions' lists share
    # their topic, so the study's categoricals go through GradeLookup there
    joins = {k: f for k, f in JOINS.items() if shape == "expanded" or not k.startswith(_KEYED)}
    head, qhead = rows.iloc[:1000], q[q["topic"].isin(set(rows["topic"].iloc[:1000]))]
    for fn in joins.values():  # imports and first calls are not timed
        fn(head.reset_index(drop=True), qhead.reset_index(drop=True))
    join_coded(rows, q)  # the ids coded and the judgments read, as evaluate finds them
    times: dict[str, list[float]] = {k: [] for k in joins}
    ref: np.ndarray | None = None
    for _ in range(rounds):
        for name, fn in joins.items():
            t0 = time.perf_counter()
            g = fn(rows, q)
            times[name].append(time.perf_counter() - t0)
            if ref is None:
                ref = g
            elif not np.array_equal(ref, g, equal_nan=True):
                raise SystemExit(f"{name}: grades differ from {next(iter(joins))}")
    base = statistics.median(times[next(iter(joins))])
    for name, ts in times.items():
        m = statistics.median(ts)
        print(f"{name:32s} {m:7.2f} s  {m / base:5.2f}x  {[round(t, 2) for t in ts]}")


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = ap.add_subparsers(dest="cmd", required=True)
    mk = sub.add_parser("make-deep", help="write the deep shape's Parquet file and qrels")
    mk.add_argument("--sessions", type=int, default=100_000)
    mk.add_argument("--out", type=Path, required=True)
    ee = sub.add_parser("e2e", help="bench_end_to_end.py on the deep shape")
    ee.add_argument("--data", type=Path, required=True)
    ee.add_argument("--rounds", type=int, default=2)
    ee.add_argument("--cutoff", type=int, default=10)
    jn = sub.add_parser("joins", help="the grade join through Arrow's, pandas' and our kernels")
    jn.add_argument("--shape", choices=["deep", "expanded"], required=True)
    jn.add_argument("--data", type=Path)
    jn.add_argument("--queries", type=int, default=50_000)
    jn.add_argument("--cutoff", type=int, default=10)
    jn.add_argument("--rounds", type=int, default=3)
    a, extra = ap.parse_known_args()
    if a.cmd == "make-deep":
        make_deep(a.sessions, a.out)
    elif a.cmd == "e2e":
        e2e(a.data, a.rounds, a.cutoff, extra)
    else:
        joins(a.shape, a.data, a.queries, a.cutoff, a.rounds)


if __name__ == "__main__":
    main()

"""Reproduce the correlation table of Jiang & Allan (CHIIR 2016) from a ``sessionval run``.

Usage (the data stay outside the repository)::

    sessionval run DATA --config reproduce/chiir16.toml --out chiir16
    python reproduce/chiir16.py chiir16 --data DATA

``DATA`` is the folder of the authors' ``session``, ``results`` and ``qrels`` files
(github.com/jiepujiang/ir_metrics, ``data/``).  The script prints, per measure, Pearson's
r and Spearman's rho with the performance and the difficulty ratings as sessionval
computed them (``chiir16/tables/rating_correlations.csv``) and, with ``--data``, as the
authors' experiment script (``exp_chiir16.py``) computes them: its measures re-stated
here from their definitions, one loop per session, esNDCG/esNCG sampled as their code
samples them (1000 paths per session, for several seeds).  It also prints the largest
per-session difference between the two for every deterministic measure.
"""

from __future__ import annotations

import argparse
import math
import random
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

#: (row label of the authors' table, sessionval's per_session column)
ROWS = [
    ("#queries", "n_queries"),
    ("sDCG", "sdcg"),
    ("nsDCG", "nsdcg"),
    ("sDCG/q", "sdcg_per_query"),
    ("esNDCG (0.9, 0.7)", "esNDCG@9"),
    ("esNCG (0.8, 0.7)", "esNCG@9"),
    ("sDCG (no query discount)", "sDCG(query_discount=none)@9"),
    ("nsDCG (no query discount)", "nsDCG(query_discount=none)@9"),
    ("sDCG/q (no query discount)", "sDCG/q(query_discount=none)@9"),
    ("sum nDCG", "sum(nDCG_AE@9)"),
    ("mean nDCG", "mean(nDCG_AE@9)"),
    ("max nDCG", "max(nDCG_AE@9)"),
    ("min nDCG", "min(nDCG_AE@9)"),
    ("first nDCG", "first(nDCG_AE@9)"),
    ("last nDCG", "last(nDCG_AE@9)"),
]
K = 9  # exp_chiir16.py: "the dataset only provides 9 results per SERP"
RATINGS = ("performance", "difficulty")

Qrels = dict[str, int]
Lists = list[list[str]]


# ---------------------------------------------------------------------------------------------
# the data, read as the authors' dataset.py reads it


def read_data(folder: Path) -> tuple[dict[str, Lists], dict[str, Qrels], pd.DataFrame]:
    """Each session's result lists, its judged pool and the ratings (session order of the file)."""
    lists: dict[str, dict[int, list[str]]] = {}
    for line in (folder / "results").read_text(encoding="utf-8").splitlines()[1:]:
        parts = line.split("\t")
        queries = lists.setdefault(parts[0], {})
        docs = queries.setdefault(int(parts[1]), [])
        if len(parts) == 6:
            docs.append(parts[3])
    results = {s: [q[i] for i in sorted(q)] for s, q in lists.items()}
    pools: dict[str, Qrels] = {}
    for line in (folder / "qrels").read_text(encoding="utf-8").splitlines()[1:]:
        sid, url, grade = line.split("\t")
        pools.setdefault(sid, {})[url] = int(grade)
    ratings = pd.read_csv(folder / "session", sep="\t", dtype={"SessionID": str})
    ratings = ratings.rename(columns={"Performance": "performance", "Difficulty": "difficulty"})
    return results, pools, ratings.set_index("SessionID")


# ---------------------------------------------------------------------------------------------
# the script's measures, re-stated from session_metrics.py and query_metrics.py


def gain(grade: int) -> float:
    """``2 ** rel - 1`` (a grade -1 gives -0.5)."""
    return 2.0**grade - 1.0


def sdcg(pool: Qrels, lists: Lists, *, query_discount: bool = True) -> float:
    """SDCG(2, 4, ...): rank discount 1/log2(r + 1), query discount 1/log4(q + 3)."""
    total = 0.0
    for q, docs in enumerate(lists, start=1):
        value = sum(gain(pool.get(d, 0)) / math.log2(r + 1) for r, d in enumerate(docs[:K], 1))
        total += value / math.log(q + 3, 4) if query_discount else value
    return total


def ideal_list(pool: Qrels) -> list[str]:
    """The judged pool sorted by grade, highest first."""
    return sorted(pool, key=lambda d: pool[d], reverse=True)


def nsdcg(pool: Qrels, lists: Lists, *, query_discount: bool = True) -> float:
    """NSDCG: sDCG over the sDCG of the pool's ideal list repeated once per query."""
    ideal = [ideal_list(pool)] * len(lists)
    return sdcg(pool, lists, query_discount=query_discount) / sdcg(
        pool, ideal, query_discount=query_discount
    )


def dcg_static_effort(pool: Qrels, docs: list[str]) -> float:
    """DCG([1, 1, 1]) of query_metrics.py: discounted gain over the summed discounts read."""
    weights = [1 / math.log2(r + 1) for r in range(1, len(docs[:K]) + 1)]
    num = sum(gain(pool.get(d, 0)) * w for d, w in zip(docs[:K], weights, strict=False))
    return 0.0 if num == 0 else num / sum(weights)


def ndcg(pool: Qrels, docs: list[str]) -> float:
    """NDCG([1, 1, 1]): the list's DCG over the ideal list's, 0 when the list has no gain."""
    value = dcg_static_effort(pool, docs)
    return 0.0 if value == 0 else value / dcg_static_effort(pool, ideal_list(pool))


def es_ndcg(
    pool: Qrels, lists: Lists, *, pref: float, pdown: float, discounted: bool, rng: random.Random
) -> float:
    """ESNDCG: the mean over 1000 sampled browsing paths of DCG(path)/DCG(ideal, len(path))."""
    ideal = ideal_list(pool)

    def dcg(docs: list[str], depth: int) -> float:
        # the code reads at least one document, even for an empty path
        read = docs[: max(depth, 1)]
        return sum(
            gain(pool.get(d, 0)) * (1 / math.log2(r + 1) if discounted else 1.0)
            for r, d in enumerate(read, 1)
        )

    total = 0.0
    for _ in range(1000):
        path: list[str] = []
        for docs in lists:
            for rank, d in enumerate(docs[:K], start=1):
                path.append(d)
                if rng.random() >= pdown or rank == K:
                    break
            if rng.random() >= pref:
                break
        total += dcg(path, len(path)) / dcg(ideal, len(path)) if path else 0.0
    return total / 1000


def authors_scores(results: dict[str, Lists], pools: dict[str, Qrels], seed: int) -> pd.DataFrame:
    """Every measure of the script per session (esNDCG/esNCG sampled with ``seed``)."""
    rng = random.Random(seed)
    aggregates: dict[str, Callable[[list[float]], float]] = {
        "sum": sum,
        "mean": lambda v: sum(v) / len(v),
        "max": max,
        "min": min,
        "first": lambda v: v[0],
        "last": lambda v: v[-1],
    }
    rows = {}
    for sid, lists in results.items():
        pool = pools[sid]
        per_query = [ndcg(pool, docs) for docs in lists]
        row = {
            "n_queries": len(lists),
            "sdcg": sdcg(pool, lists),
            "nsdcg": nsdcg(pool, lists),
            "sdcg_per_query": sdcg(pool, lists) / len(lists),
            "esNDCG@9": es_ndcg(pool, lists, pref=0.9, pdown=0.7, discounted=True, rng=rng),
            "esNCG@9": es_ndcg(pool, lists, pref=0.8, pdown=0.7, discounted=False, rng=rng),
            "sDCG(query_discount=none)@9": sdcg(pool, lists, query_discount=False),
            "nsDCG(query_discount=none)@9": nsdcg(pool, lists, query_discount=False),
            "sDCG/q(query_discount=none)@9": sdcg(pool, lists, query_discount=False) / len(lists),
        }
        for name, fn in aggregates.items():
            row[f"{name}(nDCG_AE@9)"] = fn(per_query)
        rows[sid] = row
    return pd.DataFrame.from_dict(rows, orient="index")


# ---------------------------------------------------------------------------------------------
# the table


def correlations(scores: pd.DataFrame, ratings: pd.DataFrame) -> pd.DataFrame:
    """Pearson's r and Spearman's rho of each measure with each rating (utils.correlation)."""
    out = {}
    for label, col in ROWS:
        values = scores[col].to_numpy(dtype=float)
        row = {}
        for rating in RATINGS:
            y = ratings.loc[scores.index, rating].to_numpy(dtype=float)
            row[f"r {rating}"] = stats.pearsonr(y, values)[0]
            row[f"rho {rating}"] = stats.spearmanr(y, values)[0]
        out[label] = row
    return pd.DataFrame.from_dict(out, orient="index")


def sessionval_table(run_dir: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The run's correlations (its table) and per-session scores."""
    corr = pd.read_csv(run_dir / "tables" / "rating_correlations.csv")
    out = {}
    for label, col in ROWS:
        row = {}
        for rating in RATINGS:
            hit = corr[(corr["measure"] == col) & (corr["rating"] == f"rating_{rating}")]
            row[f"r {rating}"] = float(hit["pearson_r"].iloc[0])
            row[f"rho {rating}"] = float(hit["spearman_rho"].iloc[0])
        out[label] = row
    per_session = pd.read_csv(run_dir / "tables" / "per_session.csv", dtype={"session_id": str})
    return pd.DataFrame.from_dict(out, orient="index"), per_session.set_index("session_id")


def main() -> None:
    """Print sessionval's table and, with ``--data``, the authors' beside it."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run_dir", type=Path, help="output folder of sessionval run")
    parser.add_argument("--data", type=Path, help="folder of the authors' data files")
    parser.add_argument("--seeds", type=int, default=5, help="seeds of the sampled esNDCG")
    args = parser.parse_args()
    ours, per_session = sessionval_table(args.run_dir)
    pd.set_option("display.width", 200)
    print("sessionval (esNDCG/esNCG exact):")
    print(ours.round(3).to_string())
    if args.data is None:
        return
    results, pools, ratings = read_data(args.data)
    perf, diff = (ratings.loc[list(results), r].to_numpy(dtype=float) for r in RATINGS)
    print(
        f"\nperformance vs difficulty: r = {stats.pearsonr(perf, diff)[0]:.3f}, "
        f"rho = {stats.spearmanr(perf, diff)[0]:.3f}"
    )
    runs = [authors_scores(results, pools, seed) for seed in range(args.seeds)]
    tables = [correlations(r, ratings) for r in runs]
    theirs = tables[0]
    print("\nthe authors' definitions (seed 0 for esNDCG/esNCG):")
    print(theirs.round(3).to_string())
    spread = pd.concat(tables).groupby(level=0).agg(["min", "max"]).loc[[r for r, _ in ROWS[4:6]]]
    print(f"\nesNDCG/esNCG correlations over {args.seeds} seeds (min, max):")
    print(spread.round(3).to_string())
    print("\nlargest per-session difference, sessionval - authors' definitions:")
    for _, col in ROWS:
        diff = per_session.loc[runs[0].index, col].to_numpy(dtype=float) - runs[0][col].to_numpy()
        sampled = col in ("esNDCG@9", "esNCG@9")
        note = " (sampled: 1000 paths)" if sampled else ""
        print(f"  {col:32s} {np.abs(diff).max():.2e}{note}")


if __name__ == "__main__":
    main()

"""Adaptive-effort measures against a loop re-stating Jiang & Allan's query_metrics.py."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sessionval.measures.lists import RankedLists
from sessionval.measures.registry import parse_measure


def ae(grades, k, effort, kind, p=0.8):
    """DCG / RBP / Prec of query_metrics.py: weighted gain over weighted effort, 0 if no gain."""
    num = den = 0.0
    for r, g in enumerate(grades[:k], start=1):
        w = {"DCG": 1 / math.log2(r + 1), "RBP": p ** (r - 1), "P": 1.0}[kind]
        gain = 2.0**g - 1 if kind == "DCG" else float(g > 0)
        num += gain * w
        den += effort[max(g, 0)] * w
    return 0.0 if num == 0 else num / den


def n_ae(grades, pool, k, effort):
    run = ae(grades, k, effort, "DCG")
    return 0.0 if run == 0 else run / ae(sorted(pool, reverse=True), k, effort, "DCG")


def lists(seed: int, n: int = 40):
    rng = np.random.default_rng(seed)
    rows, pools = [], []
    for _ in range(n):
        pool = list(rng.integers(0, 3, int(rng.integers(10, 20))))
        if max(pool) == 0:
            pool[0] = 2
        rows.append([int(g) for g in rng.choice(pool, size=int(rng.integers(0, 10)))])
        pools.append(pool)
    off = np.r_[0, np.cumsum([len(r) for r in rows])]
    rl = RankedLists.from_arrays(
        [f"q{i}" for i in range(n)],
        off,
        [float(g) for r in rows for g in r],
        recall_base=[sorted((float(g) for g in p if g > 0), reverse=True) for p in pools],
        n_judged=[len(p) for p in pools],
    )
    return rows, pools, rl


@pytest.mark.parametrize(
    ("spec", "effort"),
    [
        ("static", [1.0, 1.0, 1.0]),
        ("0.25-1-1", [0.25, 1.0, 1.0]),
        ("0.2606-0.6117-1", [0.2606, 0.6117, 1.0]),
    ],
)
def test_adaptive_effort_measures_equal_the_authors_definitions(spec: str, effort) -> None:
    rows, pools, rl = lists(1)
    for k in (9, 3):
        got = {
            kind: parse_measure(f"{kind}_AE(effort={spec})@{k}").compute(rl)
            for kind in ("DCG", "RBP", "P", "nDCG")
        }
        for i, (grades, pool) in enumerate(zip(rows, pools, strict=True)):
            assert got["DCG"][i] == pytest.approx(ae(grades, k, effort, "DCG"), abs=1e-12)
            assert got["RBP"][i] == pytest.approx(ae(grades, k, effort, "RBP"), abs=1e-12)
            assert got["P"][i] == pytest.approx(ae(grades, k, effort, "P"), abs=1e-12)
            assert got["nDCG"][i] == pytest.approx(n_ae(grades, pool, k, effort), abs=1e-12)


def test_static_effort_ndcg_is_ndcg_on_full_lists_and_differs_on_short_ones() -> None:
    full = RankedLists.from_arrays(
        ["q"], [0, 3], [2.0, 0, 1], recall_base=[[2.0, 1.0]], n_judged=[3]
    )
    assert parse_measure("nDCG_AE@3").compute(full)[0] == pytest.approx(
        parse_measure("nDCG(gain=exp)@3").compute(full)[0]
    )
    short = RankedLists.from_arrays(["q"], [0, 2], [2.0, 0], recall_base=[[2.0, 1.0]], n_judged=[3])
    # the registry's worked example: (3/(1 + 1/log2 3)) / ((3 + 1/log2 3)/(1 + 1/log2 3 + 1/2))
    w2 = 1 / math.log2(3)
    expected = (3 / (1 + w2)) / ((3 + w2) / (1 + w2 + 0.5))
    assert parse_measure("nDCG_AE@3").compute(short)[0] == pytest.approx(expected)
    assert expected > 1 > parse_measure("nDCG(gain=exp)@3").compute(short)[0]


def test_reading_a_non_relevant_result_costs_effort() -> None:
    before = RankedLists.from_arrays(["q"], [0, 1], [1.0], recall_base=[[1.0]], n_judged=[3])
    after = RankedLists.from_arrays(["q"], [0, 2], [1.0, 0], recall_base=[[1.0]], n_judged=[3])
    for name in ("DCG_AE", "RBP_AE", "P_AE", "nDCG_AE"):
        m = parse_measure(f"{name}@5")
        assert m.compute(after)[0] < m.compute(before)[0], name

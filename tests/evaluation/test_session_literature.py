"""The session measures of the literature against independent per-session loops.

Each reference is written from the measure's definition (paper or published code), one
Python loop per session, query and rank, sharing no code with ``sessionval``; the
vectorised columns of ``evaluate`` must equal them on random studies with empty lists,
short lists, repeated documents and unjudged documents.
"""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest

from sessionval.errors import MeasureSpecError
from sessionval.evaluation.config import SessionConfig
from sessionval.evaluation.engine import LocalEngine
from sessionval.evaluation.session import evaluate
from sessionval.measures.registry import REGISTRY, parse_measure
from sessionval.measures.session import PositionCompute
from tests import builders

GAINS = {0: 0.0, 1: 1.0, 2: 3.0, 3: 7.0}  # exp: 2^g - 1
DOCS = [f"d{i}" for i in range(12)]


def study(seed: int, n: int = 30, depth: int = 6):
    """Random sessions (1-4 queries of 0..depth documents, repeats likely) on topic T."""
    rng = np.random.default_rng(seed)
    specs = []
    for s in range(n):
        lists = [
            [str(d) for d in rng.choice(DOCS, size=int(rng.integers(0, depth + 1)), replace=False)]
            for _ in range(int(rng.integers(1, 5)))
        ]
        specs.append((f"s{s:02d}", "u", "T", "S", lists))
    grades = {d: int(rng.integers(0, 4)) for d in DOCS if rng.random() < 0.8}
    if not any(grades.values()):
        grades["d0"] = 3
    return specs, grades, builders.judgments([("T", d, g) for d, g in grades.items()])


def run(specs, judg, measures, **config):
    cfg = SessionConfig(gains="exp", **config)
    ev = evaluate(builders.frame(specs), judg, cfg, measures=measures)
    # columns are canonical names (defaults left out): index them by the spec as written
    names = {repr(parse_measure(m)): m for m in measures}
    return ev.per_session().set_index("session_id").rename(columns=names)


# ---------------------------------------------------------------------------------------------
# references


def expected_path_value(lists, ideal, pref, pdown, discounted):
    """E over every browsing path (enumerated) of DCG(path)/DCG(ideal of the path's length)."""

    def depths(docs):
        if not docs:
            return [(0, 1.0)]
        return [
            (d, pdown ** (d - 1) * ((1 - pdown) if d < len(docs) else 1.0))
            for d in range(1, len(docs) + 1)
        ]

    def weight(j):
        return 1 / math.log2(j + 1) if discounted else 1.0

    total = 0.0

    def walk(q, path, prob):
        nonlocal total
        for d, p_d in depths(lists[q]):
            seen = path + lists[q][:d]
            p = prob * p_d
            stop = 1.0 if q == len(lists) - 1 else 1 - pref
            if seen:
                num = sum(g * weight(j) for j, g in enumerate(seen, 1))
                den = sum(g * weight(j) for j, g in enumerate(ideal[: len(seen)], 1))
                total += p * stop * num / den
            if q < len(lists) - 1:
                walk(q + 1, seen, p * pref)

    walk(0, [], 1.0)
    return total


def srbp(lists, p, b, top):
    value = 0.0
    for m, docs in enumerate(lists, start=1):
        for k, g in enumerate(docs, start=1):
            value += (1 - p) * ((p - b * p) / (1 - b * p)) ** (m - 1) * (b * p) ** (k - 1) * g / top
    return value


def cube(lists, gamma, height):
    """The jig's cubetest_per_topic with one subtopic: gain, ct, act."""
    h, count, accu, docs, time = 0.0, 0, 0.0, 0, 0
    for docs_q in lists:
        time += 1
        for r in docs_q:
            if r > 0 and h < height:
                add = min(gamma ** (count + 1) * r, height - h)
                h += add
                count += 1
            accu += h / height / time
            docs += 1
    return (h / height / time if time else 0.0), (accu / docs if docs else 0.0)


def cube_bound(ratings, iterations, width, gamma, height):
    gain = 0.0
    for i, r in enumerate(sorted(ratings, reverse=True)):
        gain = min(height, gain + r * gamma**i)
        if i >= iterations * width:
            break
    return gain / height / iterations


def eu(lists_docs, rating, gamma, p, a):
    """The jig's eu_per_topic with each relevant document one nugget and length 1."""
    appear, cost = {}, 0.0
    for docs in lists_docs:
        n = len(docs)
        for s in range(1, n + 1):
            prob = (1 - p) ** (s - 1) * p if s < n else (1 - p) ** (n - 1)
            for d in docs[:s]:
                if rating.get(d, 0) > 0:
                    appear[d] = appear.get(d, 0.0) + prob
            cost += prob * s
    gain = sum(rating[d] * (1 - gamma**t) / (1 - gamma) for d, t in appear.items())
    return gain - a * cost


# ---------------------------------------------------------------------------------------------
# tests


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_expected_session_measures_equal_the_path_enumeration(seed: int) -> None:
    specs, grades, judg = study(seed)
    ideal = sorted((GAINS[g] for g in grades.values() if g > 0), reverse=True)
    ms = ["esNDCG(pref=0.9,pdown=0.7)@5", "esNCG(pref=0.8,pdown=0.7)@5", "esNDCG(pref=0.3)@2"]
    s = run(specs, judg, ms)
    for sid, _, _, _, lists in specs:
        for m, pref, pdown, x, disc in (
            (ms[0], 0.9, 0.7, 5, True),
            (ms[1], 0.8, 0.7, 5, False),
            (ms[2], 0.3, 0.7, 2, True),
        ):
            gains = [[GAINS[grades.get(d, 0)] for d in docs[:x]] for docs in lists]
            ref = expected_path_value(gains, ideal, pref, pdown, disc)
            assert s.loc[sid, m] == pytest.approx(ref, abs=1e-12), (sid, m)


def test_expected_session_ndcg_reduces_to_ndcg_of_the_first_query() -> None:
    # pref = 0 (nobody reformulates) and pdown = 1 (every result read): the first query's
    # nDCG over its n results, the ideal cut at n (Kanoulas et al. 2011: esNDCG generalises nDCG)
    specs, _, judg = study(3, n=60)
    s = run(specs, judg, ["esNDCG(pref=0,pdown=1)@6", "first(nDCG(gain=exp)@6)"])
    full = [sid for sid, _, _, _, lists in specs if len(lists[0]) == 6]
    assert len(full) >= 3
    for sid in full:
        assert s.loc[sid, "esNDCG(pref=0,pdown=1)@6"] == pytest.approx(
            s.loc[sid, "first(nDCG(gain=exp)@6)"], abs=1e-12
        )


def test_repeats_earn_again_unless_the_configuration_says_first() -> None:
    specs = [("s", "u", "T", "S", [["a"], ["a"]])]
    judg = builders.judgments([("T", "a", 1)])
    every = run(specs, judg, ["esNCG(pref=1,pdown=1)@1"])
    first = run(specs, judg, ["esNCG(pref=1,pdown=1)@1"], duplicates="first")
    # the path (a, a) against the ideal (1, 0): 2/1 when repeats earn, 1/1 when they do not
    assert every.iloc[0, -1] == pytest.approx(2.0)
    assert first.iloc[0, -1] == pytest.approx(1.0)


@pytest.mark.parametrize("seed", [4, 5])
def test_srbp_equals_the_formula(seed: int) -> None:
    specs, grades, judg = study(seed)
    s = run(specs, judg, ["sRBP@4", "sRBP(p=0.6,b=0.9)@6", "sRBP(b=1)@6"])
    for sid, _, _, _, lists in specs:
        for m, p, b, x in (("sRBP@4", 0.8, 0.5, 4), ("sRBP(p=0.6,b=0.9)@6", 0.6, 0.9, 6)):
            gains = [[GAINS[grades.get(d, 0)] for d in docs[:x]] for docs in lists]
            assert s.loc[sid, m] == pytest.approx(srbp(gains, p, b, 7.0), abs=1e-12)
        # b = 1: nobody reformulates, sRBP is RBP(p) of the first query (Lipani et al. 2019)
        first = [GAINS[grades.get(d, 0)] / 7.0 for d in lists[0][:6]]
        rbp = sum(0.2 * 0.8 ** (k - 1) * g for k, g in enumerate(first, 1))
        assert s.loc[sid, "sRBP(b=1)@6"] == pytest.approx(rbp, abs=1e-12)


def test_srbp_worked_example() -> None:
    specs = [("s", "u", "T", "S", [["a", "z"], ["a"]])]
    judg = builders.judgments([("T", "a", 3), ("T", "z", 0)])
    # (1 - p)(1 + ((p - bp)/(1 - bp)) · 1) = 0.2 (1 + 2/3)
    assert run(specs, judg, ["sRBP@2"])["sRBP@2"].iloc[0] == pytest.approx(1 / 3)


@pytest.mark.parametrize("seed", [6, 7])
def test_cube_test_and_expected_utility_equal_the_jig(seed: int) -> None:
    specs, grades, judg = study(seed, depth=5)
    ms = ["CT", "ACT", "nCT", "CT(gamma=0.8,max_height=3,max_queries=2)", "EU", "EU(p=0.3,a=0.1)"]
    s = run(specs, judg, ms, cutoff=5, duplicates="every")
    ratings = [GAINS[g] for g in grades.values() if g > 0]
    for sid, _, _, _, lists in specs:
        gains = [[GAINS[grades.get(d, 0)] for d in docs] for docs in lists]
        ct, act = cube(gains, 0.5, 5.0)
        assert s.loc[sid, "CT"] == pytest.approx(ct, abs=1e-12)
        assert s.loc[sid, "ACT"] == pytest.approx(act, abs=1e-12)
        bound = cube_bound(ratings, len(lists), 5, 0.5, 5.0)
        assert s.loc[sid, "nCT"] == pytest.approx(ct / bound, abs=1e-12)
        assert s.loc[sid, "CT(gamma=0.8,max_height=3,max_queries=2)"] == pytest.approx(
            cube(gains[:2], 0.8, 3.0)[0], abs=1e-12
        )
        rating = {d: GAINS[g] for d, g in grades.items()}
        assert s.loc[sid, "EU"] == pytest.approx(eu(lists, rating, 0.5, 0.5, 0.001), abs=1e-12)
        assert s.loc[sid, "EU(p=0.3,a=0.1)"] == pytest.approx(
            eu(lists, rating, 0.5, 0.3, 0.1), abs=1e-12
        )


def test_sdcg_per_query_and_the_no_query_discount_forms() -> None:
    specs, _, judg = study(8)
    s = run(
        specs,
        judg,
        ["sDCG/q@10", "sDCG(query_discount=none)@10", "sum(DCG(gain=exp,discount=jk2008)@10)"],
    )
    nq = s["n_queries"].to_numpy()
    np.testing.assert_allclose(s["sDCG/q@10"], s["sdcg"] / nq, atol=1e-12)
    np.testing.assert_allclose(s["sdcg_per_query"], s["sDCG/q@10"], atol=1e-12)
    # without the query discount sDCG is the sum of the queries' DCG@X
    np.testing.assert_allclose(
        s["sDCG(query_discount=none)@10"], s["sum(DCG(gain=exp,discount=jk2008)@10)"], atol=1e-12
    )


@pytest.mark.parametrize("seed", [9, 10])
def test_aggregates_equal_a_loop_over_each_sessions_queries(seed: int) -> None:
    specs, grades, judg = study(seed)
    aggs = {
        "sum": sum,
        "mean": lambda v: sum(v) / len(v),
        "max": max,
        "min": min,
        "first": lambda v: v[0],
        "last": lambda v: v[-1],
        "best": max,
    }
    inner = "nDCG(gain=exp)@5"
    s = run(specs, judg, [f"{a}({inner})" for a in aggs])
    ideal = sorted((GAINS[g] for g in grades.values() if g > 0), reverse=True)[:5]
    idcg = sum(g / math.log2(r + 1) for r, g in enumerate(ideal, 1))
    for sid, _, _, _, lists in specs:
        per_query = [
            sum(GAINS[grades.get(d, 0)] / math.log2(r + 1) for r, d in enumerate(docs[:5], 1))
            / idcg
            for docs in lists
        ]
        for a, fn in aggs.items():
            assert s.loc[sid, f"{a}({inner})"] == pytest.approx(fn(per_query), abs=1e-12)


def test_aggregates_leave_nan_out() -> None:
    # topic C has no judgments: nDCG is NaN on its queries, so every aggregate is NaN
    specs = [("s", "u", "C", "S", [["a"], ["b"]]), ("t", "u", "T", "S", [["a"], []])]
    judg = builders.judgments([("T", "a", 2)])
    s = run(specs, judg, ["sum(nDCG@3)", "mean(nDCG@3)", "min(nDCG@3)", "first(nDCG@3)"])
    assert s.loc["s"].filter(like="(").isna().all()
    assert s.loc["t", "sum(nDCG@3)"] == pytest.approx(1.0)
    assert s.loc["t", "mean(nDCG@3)"] == pytest.approx(0.5)
    assert s.loc["t", "min(nDCG@3)"] == pytest.approx(0.0)


def test_positional_measures_do_not_depend_on_the_chunks() -> None:
    specs, _, judg = study(11, n=40)
    ms = ["esNDCG@5", "sRBP@5", "CT", "nCT", "ACT", "EU", "esNCG(gain=0-1-2-3)@3"]
    frame = builders.frame(specs)
    one = evaluate(frame, judg, SessionConfig(gains="exp"), measures=ms).per_session()
    many = evaluate(
        frame, judg, SessionConfig(gains="exp"), measures=ms, engine=LocalEngine(chunk_rows=7)
    ).per_session()
    for m in ms:
        np.testing.assert_array_equal(one[m].to_numpy(), many[m].to_numpy())


def test_positional_measures_are_declared_and_refuse_a_direct_call() -> None:
    positional = [n for n, d in REGISTRY.items() if isinstance(d.compute, PositionCompute)]
    assert set(positional) == {"esNDCG", "esNCG", "sRBP", "CT", "nCT", "ACT", "EU"}
    for name in positional:
        d = REGISTRY[name]
        assert d.formula and d.reference and d.example, name
    with pytest.raises(MeasureSpecError, match="per chunk"):
        REGISTRY["sRBP"].compute(None)
    # the chunk context with positional measures still pickles (the engine seam)
    assert (
        pickle.loads(pickle.dumps(REGISTRY["esNDCG"].compute)).fn is REGISTRY["esNDCG"].compute.fn
    )


@pytest.mark.parametrize(
    ("spec", "fragment"),
    [
        ("esNDCG(pref=1.5)", "must be a probability"),
        ("sRBP(p=1)", "must be in [0, 1)"),
        ("CT(gamma=0)", "must be in (0, 1)"),
        ("CT(max_queries=0)", "must be >= 1"),
        ("sRBP(bq=4)", "unknown parameter 'bq'"),
    ],
)
def test_bad_parameters_are_refused(spec: str, fragment: str) -> None:
    with pytest.raises(MeasureSpecError) as info:
        parse_measure(spec)
    assert fragment in str(info.value)

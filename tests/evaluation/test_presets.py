"""Presets against independent re-statements of the code they reproduce, one loop per session.

Each reference below is written from the published code's definitions (read, not copied):
``session_metrics.py``/``exp_chiir16.py`` of jiepujiang/ir_metrics (CHIIR 2016),
``scorer/sDCG.py``/``truth.py`` of trec-dd/trec-dd-jig and ``session_eval.pl`` of the TREC
2011 Session Track.  They share no code with ``sessionval``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from sessionval.errors import MeasureSpecError
from sessionval.evaluation.config import PRESETS, SessionConfig
from sessionval.evaluation.session import evaluate
from sessionval.models.judgments import GradeScale
from sessionval.validate.flat import frame_from_flat
from tests import builders

DOCS = [f"d{i}" for i in range(30)]


def keyed_by_session(specs):
    """The frame of ``specs`` with each query's judgment key = its session (per-session qrels)."""
    flat = builders.flat_table(specs)
    flat["qrels_id"] = flat["session_id"]
    return frame_from_flat(flat).frame


def random_sessions(seed: int, *, n: int = 25, depth: int = 9, max_q: int = 7, grades=(-1, 2)):
    rng = np.random.default_rng(seed)
    specs, pools = [], {}
    for s in range(n):
        sid = f"s{s:02d}"
        lists = []
        for _ in range(int(rng.integers(1, max_q + 1))):
            k = int(rng.choice([0, depth, depth, depth, int(rng.integers(1, depth + 1))]))
            lists.append([str(d) for d in rng.choice(DOCS, size=k, replace=False)])
        specs.append((sid, "u", "T", "S", lists))
        lo, hi = grades
        pools[sid] = {d: int(rng.integers(lo, hi + 1)) for d in DOCS if rng.random() < 0.7}
    rows = [(sid, d, g) for sid, pool in pools.items() for d, g in pool.items()]
    scale = GradeScale.from_grades(sorted({g for *_, g in rows}))
    return specs, pools, builders.judgments(rows, scale=scale)


# ---------------------------------------------------------------------------------------------
# Jiang & Allan 2016: SDCG(2, 4, True), NSDCG(2, 4, True), k = 9


def chiir_sdcg(pool: dict[str, int], lists: list[list[str]], k: int) -> float:
    total = 0.0
    for q, docs in enumerate(lists, start=1):
        dcg = sum(
            (2.0 ** pool.get(d, 0) - 1) / math.log(r + 1, 2)
            for r, d in enumerate(docs[:k], start=1)
        )
        total += dcg / math.log(q + 3, 4)
    return total


def chiir_nsdcg(pool: dict[str, int], lists: list[list[str]], k: int) -> float:
    ideal = sorted(pool, key=lambda d: pool[d], reverse=True)
    return chiir_sdcg(pool, lists, k) / chiir_sdcg(pool, [ideal] * len(lists), k)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_jiang_allan_preset_is_the_authors_nsdcg(seed: int) -> None:
    specs, pools, judg = random_sessions(seed)
    ev = evaluate(keyed_by_session(specs), judg, SessionConfig.preset("jiang-allan-2016"))
    s = ev.per_session()
    for sid, _, _, _, lists in specs:
        row = s[s["session_id"] == sid].iloc[0]
        assert row["sdcg"] == pytest.approx(chiir_sdcg(pools[sid], lists, 9), abs=1e-12)
        assert row["nsdcg"] == pytest.approx(chiir_nsdcg(pools[sid], lists, 9), abs=1e-12)


def test_jiang_allan_preset_parameters_and_sources() -> None:
    preset = PRESETS["jiang-allan-2016"]
    cfg = SessionConfig.preset("jiang-allan-2016")
    # exp_chiir16.py passes k = 9; X = 10 was the bug behind nsDCG differing by up to 0.064
    assert cfg.cutoff == 9
    assert (cfg.b, cfg.bq, str(cfg.gains), cfg.negative) == (2.0, 4.0, "exp", "keep")
    assert set(preset["params"]) <= set(preset["sources"])


def test_every_preset_documents_its_parameters() -> None:
    for name, preset in PRESETS.items():
        assert set(preset["params"]) <= set(preset.get("sources", {})), name


# ---------------------------------------------------------------------------------------------
# TREC Dynamic Domain jig: sDCG_per_topic and sDCG_bound_per_topic


def jig_sdcg(gain: dict[str, int], iterations: list[list[str]], cutoff: int = 10) -> float:
    total = 0.0
    for q, docs in enumerate(iterations):
        if q >= cutoff:
            break
        for i, d in enumerate(docs):
            total += gain.get(d, 0) / (1 + math.log(i + 1, 2)) / (1 + math.log(q + 1, 4))
    return total


def jig_bound(gain: dict[str, int], cutoff: int = 10) -> float:
    weights = sorted(
        (1 / ((1 + math.log(i, 2)) * (1 + math.log(q, 4))))
        for q in range(1, cutoff + 1)
        for i in range(1, 6)
    )[::-1]
    gains = sorted(gain.values(), reverse=True)
    return sum(g * w for g, w in zip(gains, weights, strict=False))


@pytest.mark.parametrize("seed", [4, 5])
def test_trec_dd_jig_preset_is_the_jig(seed: int) -> None:
    # iterations of up to 5 documents, sessions of 1..13 iterations; grades are passage sums
    specs, pools, judg = random_sessions(seed, depth=5, max_q=13, grades=(0, 7))
    ev = evaluate(keyed_by_session(specs), judg, SessionConfig.preset("trec-dd-jig"))
    s = ev.per_session()
    for sid, _, _, _, lists in specs:
        row = s[s["session_id"] == sid].iloc[0]
        assert row["sdcg"] == pytest.approx(jig_sdcg(pools[sid], lists), abs=1e-12)
        assert row["ideal"] == pytest.approx(jig_bound(pools[sid]), abs=1e-12)
        assert row["nsdcg"] == pytest.approx(
            jig_sdcg(pools[sid], lists) / jig_bound(pools[sid]), abs=1e-12
        )


def test_trec_dd_jig_scores_repeats_every_time() -> None:
    specs = [("s", "u", "T", "S", [["a", "b"], ["a"]])]
    judg = builders.judgments([("s", "a", 3), ("s", "b", 1)])
    ev = evaluate(keyed_by_session(specs), judg, SessionConfig.preset("trec-dd-jig"))
    # a at iteration 1 rank 1 (3), b at rank 2 (1/2), a again at iteration 2 (3 / (1 + log4 2))
    assert ev.per_session()["sdcg"].iloc[0] == pytest.approx(3 + 0.5 + 3 / 1.5)
    # the ideal uses a and b once, on the two best cells of the 10 x 5 grid
    assert ev.per_session()["ideal"].iloc[0] == pytest.approx(3 + 1 / 1.5)


def test_renamed_dd_preset_says_where_it_went() -> None:
    with pytest.raises(MeasureSpecError, match="trec-dd-jig"):
        SessionConfig.preset("trec-dd-no-repeat")


def test_max_queries_truncates_the_run() -> None:
    specs = [("s", "u", "T", "S", [["a"], ["b"], ["a"]])]
    judg = builders.judgments([("s", "a", 3), ("s", "b", 1)])
    frame = keyed_by_session(specs)
    ev = evaluate(frame, judg, SessionConfig(max_queries=2, cutoff=1, gains="0-1-2-3"))
    assert ev.per_session()["sdcg"].iloc[0] == pytest.approx(3 + 1 / 1.5)
    assert ev.per_query()["n_scored"].tolist() == [1, 1, 0]


# ---------------------------------------------------------------------------------------------
# TREC 2011 Session Track: session_eval.pl's nDCG@10 of the current (last) query


def session_track_ndcg(pool: dict[str, int], docs: list[str], k: int = 10) -> float:
    def dcg(grades: list[int]) -> float:
        return sum((2 ** max(g, 0) - 1) / math.log2(r + 1) for r, g in enumerate(grades, 1))

    ideal = sorted((g for g in pool.values() if g > 0), reverse=True)[:k]
    return dcg([pool.get(d, 0) for d in docs[:k]]) / dcg(ideal)


def test_trec_session_preset_measure_is_the_track_ndcg() -> None:
    specs, pools, judg = random_sessions(6, depth=12, grades=(-2, 3))
    preset = PRESETS["trec-session-2011"]
    (measure,) = preset["measures"]
    ev = evaluate(
        keyed_by_session(specs),
        judg,
        SessionConfig.preset("trec-session-2011"),
        measures=[measure],
    )
    s = ev.per_session()
    for sid, _, _, _, lists in specs:
        value = s.loc[s["session_id"] == sid, measure].iloc[0]
        assert value == pytest.approx(session_track_ndcg(pools[sid], lists[-1]), abs=1e-12)

"""Cross-checks on random runs and qrels against pytrec_eval and pyNTCIREVAL (to 1e-9)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from sessionval.evaluation.lists import evaluate_lists
from sessionval.frame import JudgmentFrame
from sessionval.measures.lists import RankedLists
from sessionval.models.judgments import GradeScale

pytrec_eval = pytest.importorskip("pytrec_eval")
ntcir = pytest.importorskip("pyNTCIREVAL.metrics")

TOL = 1e-9


def _random(seed: int, n_topics: int = 30):
    rng = np.random.default_rng(seed)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(n_topics):
        qid = f"q{q:02d}"
        pool = [f"d{i}" for i in rng.choice(80, int(rng.integers(1, 40)), replace=False)]
        qrels[qid] = {d: int(rng.choice([0, 0, 0, 1, 2, 3])) for d in pool}
        k = int(rng.integers(1, 50))
        docs = [f"d{i}" for i in rng.choice(80, k, replace=False)]
        # few distinct scores: many ties exercise the tie-break
        run[qid] = {d: float(rng.integers(0, 6)) for d in docs}
    run["unjudged-topic"] = {"d1": 1.0}
    jt = pd.DataFrame(
        [(q, d, g) for q, m in qrels.items() for d, g in m.items()],
        columns=["topic_id", "doc_id", "grade"],
    )
    jt["assessor"] = ""
    jt = jt.astype(
        {"topic_id": "category", "doc_id": "category", "grade": "int16", "assessor": "category"}
    )
    jf = JudgmentFrame(jt, GradeScale.default())
    rt = pd.DataFrame(
        [(q, d, s) for q, m in run.items() for d, s in m.items()],
        columns=["query_id", "doc_id", "score"],
    )
    return qrels, run, jf, rt


TREC = {
    "nDCG": "ndcg",
    "nDCG@5": "ndcg_cut_5",
    "nDCG@10": "ndcg_cut_10",
    "AP": "map",
    "AP@10": "map_cut_10",
    "RR": "recip_rank",
    "Bpref": "bpref",
    "infAP": "infAP",
    "P@5": "P_5",
    "P@20": "P_20",
    "R@10": "recall_10",
}


@pytest.mark.parametrize(("seed", "presorted"), [(0, False), (1, False), (2, True)])
def test_against_pytrec_eval(seed: int, presorted: bool) -> None:
    qrels, run, jf, rt = _random(seed)
    if presorted:
        # as TREC files are: each query's block best first, queries in a non-string order
        rt = rt.sort_values(["query_id", "score"], ascending=[False, False], kind="stable")
    lists = RankedLists.from_run(rt, jf, ties="trec_eval")
    assert lists.n_skipped == 1  # the run topic without judgments, as trec_eval
    ours = evaluate_lists(lists, list(TREC), empty="zero").per_query().set_index("query_id")
    ev = pytrec_eval.RelevanceEvaluator(
        qrels,
        {
            "ndcg",
            "ndcg_cut.5,10",
            "map",
            "map_cut.10",
            "recip_rank",
            "bpref",
            "infAP",
            "P.5,20",
            "recall.10",
        },
    )
    ref = ev.evaluate(run)
    assert sorted(ref) == sorted(ours.index)
    for ours_name, trec_name in TREC.items():
        expected = np.array([ref[q][trec_name] for q in ours.index])
        np.testing.assert_allclose(
            ours[ours_name].to_numpy(), expected, rtol=0, atol=TOL, err_msg=ours_name
        )


def _ntcir_order(run_q: dict[str, float]) -> list[str]:
    docs = sorted(run_q, reverse=True)  # trec_eval: doc id descending among ties
    return sorted(docs, key=lambda d: -run_q[d])


@pytest.mark.parametrize("seed", [3, 4])
def test_against_pyntcireval(seed: int) -> None:
    qrels, run, jf, rt = _random(seed)
    lists = RankedLists.from_run(rt, jf, ties="trec_eval")
    names = [
        "Q",
        "Q@10",
        "O",
        "Pmeasure",
        "Pplus",
        "AP",
        "RR",
        "nDCG(discount=jk2002)",
        "nDCG(discount=jk2002)@10",
        "nDCG(discount=jk2002,b=3)@5",
    ]
    ours = evaluate_lists(lists, names).per_query().set_index("query_id")
    grades = [1, 2, 3]
    checked = 0
    for q in ours.index:
        xrel = [0, 0, 0, 0]
        for g in qrels[q].values():
            xrel[g] += 1
        if sum(xrel[1:]) == 0:
            assert ours.loc[q, "Q"] != ours.loc[q, "Q"]  # NaN: empty recall base
            continue
        rl = [(d, qrels[q].get(d)) for d in _ntcir_order(run[q])]
        ref = {
            "Q": ntcir.QMeasure(xrel, grades, 1.0).compute(rl),
            "Q@10": ntcir.QMeasure(xrel, grades, 1.0, 10).compute(rl),
            "O": ntcir.OMeasure(xrel, grades, 1.0).compute(rl),
            "Pmeasure": ntcir.PMeasure(xrel, grades, 1.0).compute(rl),
            "Pplus": ntcir.PPlusMeasure(xrel, grades, 1.0).compute(rl),
            "AP": ntcir.AP(xrel, grades).compute(rl),
            "RR": ntcir.RR().compute(rl),
            "nDCG(discount=jk2002)": ntcir.nDCG(xrel, grades, 2, None).compute(rl),
            "nDCG(discount=jk2002)@10": ntcir.nDCG(xrel, grades, 2, 10).compute(rl),
            "nDCG(discount=jk2002,b=3)@5": ntcir.nDCG(xrel, grades, 3, 5).compute(rl),
        }
        for name, value in ref.items():
            assert abs(ours.loc[q, name] - value) <= TOL, (q, name, ours.loc[q, name], value)
        checked += 1
    assert checked >= 10


def test_q_beta_against_pyntcireval() -> None:
    qrels, run, jf, rt = _random(5)
    lists = RankedLists.from_run(rt, jf, ties="trec_eval")
    ours = (
        evaluate_lists(lists, ["Q(beta=0.5)", "O(beta=2)", "Pplus(beta=3)"])
        .per_query()
        .set_index("query_id")
    )
    for q in ours.index:
        xrel = [0, 0, 0, 0]
        for g in qrels[q].values():
            xrel[g] += 1
        if sum(xrel[1:]) == 0:
            continue
        rl = [(d, qrels[q].get(d)) for d in _ntcir_order(run[q])]
        assert (
            abs(ours.loc[q, "Q(beta=0.5)"] - ntcir.QMeasure(xrel, [1, 2, 3], 0.5).compute(rl))
            <= TOL
        )
        assert (
            abs(ours.loc[q, "O(beta=2)"] - ntcir.OMeasure(xrel, [1, 2, 3], 2.0).compute(rl)) <= TOL
        )
        assert (
            abs(ours.loc[q, "Pplus(beta=3)"] - ntcir.PPlusMeasure(xrel, [1, 2, 3], 3.0).compute(rl))
            <= TOL
        )


def test_complete_flag_matches_trec_eval_c() -> None:
    qrels, run, jf, rt = _random(6)
    dropped = sorted(run)[:3]
    rt2 = rt[~rt["query_id"].isin(dropped)]
    run2 = {q: v for q, v in run.items() if q not in dropped}
    lists = RankedLists.from_run(rt2, jf, ties="trec_eval", missing="empty")
    ours = evaluate_lists(lists, ["AP", "nDCG@10"], empty="zero").summary()
    # trec_eval -c: missing judged topics score 0 and count in the mean
    ref = pytrec_eval.RelevanceEvaluator(qrels, {"map", "ndcg_cut.10"}).evaluate(run2)
    n = len(qrels)
    exp_ap = sum(v["map"] for v in ref.values()) / n
    exp_nd = sum(v["ndcg_cut_10"] for v in ref.values()) / n
    assert ours["n"].tolist() == [n, n]
    np.testing.assert_allclose(ours["value"].to_numpy(), [exp_ap, exp_nd], atol=TOL)

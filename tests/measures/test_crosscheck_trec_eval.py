"""Every numeric measure of trec_eval's ``all_trec``, by trec_eval's names, against pytrec_eval."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sessionval.evaluation.lists import evaluate_run
from sessionval.measures.names import ALL_TREC
from sessionval.measures.registry import named_measures

pytrec_eval = pytest.importorskip("pytrec_eval")

TOL = 1e-9


def _collection(seed: int) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    """Real-shaped qrels and run: graded 0-3, ties, unjudged documents, 100-deep lists."""
    rng = np.random.default_rng(seed)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(12):
        qid = f"{300 + q}"
        pool = rng.choice(400, int(rng.integers(20, 150)), replace=False)
        qrels[qid] = {f"D{d:04d}": int(rng.choice([0, 0, 0, 0, 1, 1, 2, 3])) for d in pool}
        depth = 100 if q % 3 else int(rng.integers(1, 100))
        docs = rng.choice(400, depth, replace=False)
        # coarse scores: many ties, broken by document id as trec_eval does
        run[qid] = {f"D{d:04d}": float(rng.integers(0, 30)) / 2 for d in docs}
    qrels["350"] = {"D0001": 0, "D0002": 0}  # judged, nothing relevant
    run["350"] = {"D0001": 2.0, "D0003": 1.0}
    qrels["351"] = {"D0001": 2}  # judged, not in the run
    run["999"] = {"D0001": 1.0}  # in the run, not judged
    run["301"] = {"D0004": 1.0}  # one document, relevant or not
    qrels["301"]["D0004"] = 3
    return qrels, run


def _ours(qrels, run) -> tuple[dict[tuple[str, str], float], dict[str, float]]:
    named = [n for n in named_measures(["all_trec"]) if n.measure is not None]
    ev = evaluate_run(run, qrels, [n.measure for n in named])
    label = {}
    for n in named:
        label.setdefault(repr(n.measure), []).append(n.label)
    per_query = {
        (q, lab): float(v)
        for q, m, v in ev.long()[["query_id", "measure", "value"]].itertuples(index=False)
        for lab in label[m]
    }
    means = {lab: float(v) for m, v in ev.means.items() for lab in label[m]}
    return per_query, means


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_all_trec_matches_pytrec_eval(seed: int) -> None:
    qrels, run = _collection(seed)
    per_query, means = _ours(qrels, run)
    theirs = pytrec_eval.RelevanceEvaluator(qrels, set(ALL_TREC) - {"runid"}).evaluate(run)
    assert sorted(theirs) == sorted({q for q, _ in per_query})  # the same queries evaluated
    labels = {lab for _, lab in per_query}
    expected = set(next(iter(theirs.values()))) - {"runid", "relstring"}
    assert labels == expected
    bad = [
        (q, lab, per_query[(q, lab)], v)
        for q, values in theirs.items()
        for lab, v in values.items()
        if lab in labels and not math.isclose(per_query[(q, lab)], v, rel_tol=0, abs_tol=TOL)
    ]
    assert not bad, bad[:10]
    for lab in labels:
        agg = pytrec_eval.compute_aggregated_measure(lab, [v[lab] for v in theirs.values()])
        assert means[lab] == pytest.approx(agg, abs=TOL), lab


@pytest.mark.parametrize(
    ("spec", "labels"),
    [
        ("P", ["P_5", "P_10", "P_15", "P_20", "P_30", "P_100", "P_200", "P_500", "P_1000"]),
        ("P.5,10", ["P_5", "P_10"]),
        ("ndcg_cut.10", ["ndcg_cut_10"]),
        ("success.1,5,10", ["success_1", "success_5", "success_10"]),
        ("Rprec_mult.0.2,2", ["Rprec_mult_0.20", "Rprec_mult_2.00"]),
        ("iprec_at_recall.0.5", ["iprec_at_recall_0.50"]),
        ("set_F", ["set_F"]),
        ("gm_map", ["gm_map"]),
    ],
)
def test_each_trec_eval_name_expands_as_trec_eval_prints_it(spec: str, labels: list[str]) -> None:
    assert [n.label for n in named_measures([spec])] == labels
    qrels, run = _collection(3)
    per_query, _ = _ours(qrels, run)
    theirs = pytrec_eval.RelevanceEvaluator(qrels, {spec}).evaluate(run)
    for q, values in theirs.items():
        assert set(values) == set(labels)
        for lab, v in values.items():
            assert per_query[(q, lab)] == pytest.approx(v, abs=TOL)


@pytest.mark.parametrize("level", [None, 2])
def test_evaluate_all_trec_prints_pytrec_eval_values(tmp_path, capsys, level) -> None:
    """``sessionval evaluate -m all_trec -q [-l 2]``: trec_eval's names and printed values."""
    from sessionval.cli import main

    qrels, run = _collection(5)
    q, r = tmp_path / "qrels", tmp_path / "run"
    q.write_text("".join(f"{t} 0 {d} {g}\n" for t, m in qrels.items() for d, g in m.items()))
    r.write_text("".join(f"{t} Q0 {d} 0 {s} tag1\n" for t, m in run.items() for d, s in m.items()))
    argv = ["evaluate", str(q), str(r), "-m", "all_trec", "-q"]
    assert main(argv + (["-l", str(level)] if level else [])) == 0
    printed = {}
    for line in capsys.readouterr().out.splitlines():
        name, qid, value = line.split("\t")
        printed[(name.rstrip(), qid)] = value
    assert printed[("runid", "all")] == "tag1"
    kw = {"relevance_level": level} if level else {}
    theirs = pytrec_eval.RelevanceEvaluator(qrels, set(ALL_TREC) - {"runid"}, **kw).evaluate(run)
    counts = {"num_q", "num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret"}
    for lab in set(next(iter(theirs.values()))) - {"runid", "relstring"}:
        values = [v[lab] for v in theirs.values()]
        agg = pytrec_eval.compute_aggregated_measure(lab, values)
        want = str(int(agg)) if lab in counts else f"{agg:6.4f}"
        assert printed[(lab, "all")] == want, lab
        for qid, v in theirs.items():
            if lab != "num_q":  # trec_eval prints num_q for all only
                want = str(int(v[lab])) if lab in counts else f"{v[lab]:6.4f}"
                assert printed[(lab, qid)] == want, (lab, qid)

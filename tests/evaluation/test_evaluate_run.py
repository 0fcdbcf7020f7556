"""``evaluate_run``: one call from ir_measures-style tables, TREC files or dicts (issue 11)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from sessionval import evaluate_run
from sessionval.errors import InputFormatError, JudgmentError, ParseError
from sessionval.validate.judgments import judgments_from_records

pytrec_eval = pytest.importorskip("pytrec_eval")

TREC = {
    "nDCG@10": "ndcg_cut_10",
    "nDCG": "ndcg",
    "AP": "map",
    "RR": "recip_rank",
    "P@5": "P_5",
    "Bpref": "bpref",
    "R@20": "recall_20",
}


def _tied(seed: int) -> tuple[dict, dict, pd.DataFrame, pd.DataFrame]:
    """Runs with few distinct scores (many ties), topics without relevant documents."""
    rng = np.random.default_rng(seed)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(30):
        qid = f"t{q}"
        pool = rng.choice(50, int(rng.integers(1, 25)), replace=False)
        top = 0 if q % 7 == 0 else 3  # every 7th topic: judged, nothing relevant
        qrels[qid] = {f"doc-{d}": int(rng.integers(0, top + 1)) for d in pool}
        docs = rng.choice(50, int(rng.integers(1, 40)), replace=False)
        run[qid] = {f"doc-{d}": float(rng.integers(0, 3)) for d in docs}
    run["no-judgments"] = {"doc-1": 1.0}
    run_df = pd.DataFrame(
        [(q, d, s) for q, m in run.items() for d, s in m.items()],
        columns=["query_id", "doc_id", "score"],
    )
    qrels_df = pd.DataFrame(
        [(q, d, g) for q, m in qrels.items() for d, g in m.items()],
        columns=["query_id", "doc_id", "relevance"],
    )
    return qrels, run, qrels_df, run_df


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_defaults_reproduce_pytrec_eval_per_query_on_tied_scores(seed: int) -> None:
    qrels, run, qrels_df, run_df = _tied(seed)
    ref = pytrec_eval.RelevanceEvaluator(
        qrels, {"ndcg_cut.10", "ndcg", "map", "recip_rank", "P.5", "bpref", "recall.20"}
    ).evaluate(run)
    ev = evaluate_run(run_df, qrels_df, list(TREC))
    wide = ev.per_query().set_index("query_id")
    assert sorted(wide.index) == sorted(ref)  # the unjudged run topic is skipped
    for ours, theirs in TREC.items():
        expected = np.array([ref[q][theirs] for q in wide.index])
        np.testing.assert_allclose(wide[ours].to_numpy(), expected, rtol=0, atol=1e-12)
    # the means are trec_eval's (topics without relevant documents count as 0)
    for ours, theirs in TREC.items():
        assert ev.means[ours] == pytest.approx(np.mean([v[theirs] for v in ref.values()]))
    # the doc_id order differs on these ties: the default is not doc id ascending
    other = evaluate_run(run_df, qrels_df, ["RR"], ties="doc_id").long()["value"].to_numpy()
    assert not np.allclose(other, wide["RR"].to_numpy())


def test_trec_eval_names_give_the_same_numbers_as_ours() -> None:
    _, _, qrels_df, run_df = _tied(3)
    a = evaluate_run(run_df, qrels_df, ["ndcg_cut.10", "map", "P_5", "recip_rank", "ndcg@10"])
    b = evaluate_run(run_df, qrels_df, ["nDCG@10", "AP", "P@5", "RR"])
    assert list(a.means) == ["nDCG@10", "AP", "P@5", "RR"]  # duplicates dropped
    assert a.means == b.means


def test_every_input_kind_gives_the_same_table(tmp_path: Path) -> None:
    qrels, run, qrels_df, run_df = _tied(4)
    ref = evaluate_run(run_df, qrels_df, ["nDCG@10", "AP"]).long()
    run_path, qrels_path = tmp_path / "run.txt", tmp_path / "qrels.txt"
    run_path.write_text(
        "".join(f"{q} Q0 {d} 0 {s} tag\n" for q, d, s in run_df.itertuples(index=False))
    )
    qrels_path.write_text(
        "".join(f"{q} 0 {d} {g}\n" for q, d, g in qrels_df.itertuples(index=False))
    )
    variants = [
        (run_df.astype({"query_id": object, "doc_id": object}), qrels_df),
        (run_df.astype({"query_id": "category", "doc_id": "category"}), qrels_df),
        (pa.Table.from_pandas(run_df), pa.Table.from_pandas(qrels_df)),
        (
            pa.Table.from_pandas(run_df.astype({"doc_id": "category"})),
            qrels_df.rename(columns={"relevance": "grade"}).astype({"query_id": "category"}),
        ),
        (run, qrels),
        (str(run_path), qrels_path),
    ]
    for r, q in variants:
        got = evaluate_run(r, q, ["nDCG@10", "AP"]).long()
        assert list(got.columns) == ["query_id", "measure", "value"]
        pd.testing.assert_frame_equal(got, ref)


def test_judgment_frame_and_single_measure_are_accepted() -> None:
    jf = judgments_from_records([("1", "a", 1), ("1", "b", 0)])
    run = pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["b", "a"], "score": [1.0, 1.0]})
    ev = evaluate_run(run, jf, "RR")
    assert ev.means == {"RR": 0.5}  # tie: b > a, so b (not relevant) first, as trec_eval


def test_bad_inputs_say_what_is_wrong(tmp_path: Path) -> None:
    run = pd.DataFrame({"query_id": ["1"], "doc_id": ["a"], "score": [1.0]})
    qrels = pd.DataFrame({"query_id": ["1"], "doc_id": ["a"], "relevance": [1]})
    with pytest.raises(InputFormatError, match=r"missing column 'score'.*query_id, doc_id, score"):
        evaluate_run(run.drop(columns="score"), qrels)
    with pytest.raises(InputFormatError, match="missing column 'relevance'"):
        evaluate_run(run, qrels.rename(columns={"relevance": "rel"}))
    with pytest.raises(
        ParseError, match=r"<qrels table> \(row 0\): relevance: must be an integer \(got '1.5'\)"
    ):
        evaluate_run(run, qrels.assign(relevance=[1.5]))
    with pytest.raises(ParseError, match=r"\(row 0\): doc_id: is missing"):
        evaluate_run(run, qrels.assign(doc_id=[None]))
    with pytest.raises(InputFormatError, match="does not exist"):
        evaluate_run(tmp_path / "nope.run", qrels)
    with pytest.raises(InputFormatError, match="an iterable of int: give named tuples"):
        evaluate_run([1, 2], qrels)  # type: ignore[arg-type]
    with pytest.raises(InputFormatError, match="got set"):
        evaluate_run(set(), qrels)  # type: ignore[arg-type]
    with pytest.raises(JudgmentError, match="judged more than once"):
        evaluate_run(run, pd.concat([qrels, qrels.assign(relevance=[0])]))

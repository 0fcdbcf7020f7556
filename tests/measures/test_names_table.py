"""The table of other tools' names (docs/measures.md) and ir_measures' names against ir_measures."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from sessionval.evaluation.lists import evaluate_run
from sessionval.measures.registry import parse_measure, spellings_markdown

DOCS = Path(__file__).resolve().parents[2] / "docs" / "measures.md"


def _rows() -> list[tuple[str, list[str]]]:
    """(sessionval name, every other tool's name) of each row of the table."""
    out = []
    for line in spellings_markdown().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.startswith("| `"):
            continue
        ours = cells[0].strip("`")
        names = [n for c in cells[1:] for n in re.findall(r"`([^`]+)`", c)]
        out.append((ours, names))
    return out


def _put(name: str) -> str:
    """A table entry with its placeholders filled: k = 10, x = 0.5."""
    return (
        name.replace("@k", "@10")
        .replace(".k", ".10")
        .replace("_k", "_10")
        .replace("@x", "@0.5")
        .replace(".x", ".0.5")
        .replace("_x", "_0.5")
        .replace("=x", "=0.5")
    )


def test_the_table_is_in_the_docs() -> None:
    assert spellings_markdown() in DOCS.read_text(encoding="utf-8")


@pytest.mark.parametrize(("ours", "names"), _rows(), ids=[r[0] for r in _rows()])
def test_every_name_in_the_table_parses_to_its_row(ours: str, names: list[str]) -> None:
    assert names
    expected = parse_measure(_put(ours))
    for name in names:
        assert parse_measure(_put(name)) == expected, name


def test_the_table_covers_the_names_users_bring() -> None:
    listed = {n for _, names in _rows() for n in names}
    users = ["hit_rate@k", "hits@k", "f1@k", "r-precision", "ndcg_burges@k", "dcg_burges@k",
             "SetP", "SetR", "SetF", "NumRel", "NumRet", "NumRelRet", "Judged@k", "IPrec@x",
             "success.k", "set_F", "num_rel_ret", "Rprec_mult.x", "11pt_avg", "Rndcg"]  # fmt: skip
    for name in users:
        assert name in listed, name


# ---------------------------------------------------------------------------
# ir_measures' names give ir_measures' numbers
# ---------------------------------------------------------------------------

ir_measures = pytest.importorskip("ir_measures")


def _collection(seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Graded 0-3 qrels, tied scores, unjudged documents, an empty topic, 100-deep lists."""
    rng = np.random.default_rng(seed)
    run_rows, qrel_rows = [], []
    for q in range(1, 16):
        pool = rng.choice(300, int(rng.integers(5, 120)), replace=False)
        qrel_rows += [(str(q), f"d{d}", int(rng.choice([0, 0, 0, 1, 1, 2, 3]))) for d in pool]
        docs = rng.choice(300, 100 if q % 4 else int(rng.integers(1, 100)), replace=False)
        run_rows += [(str(q), f"d{d}", float(rng.integers(0, 25))) for d in docs]
    qrel_rows += [("99", "d1", 0)]  # judged, nothing relevant
    run_rows += [("99", "d1", 1.0), ("98", "d1", 1.0)]  # and a run topic without judgments
    run = pd.DataFrame(run_rows, columns=["query_id", "doc_id", "score"])
    qrels = pd.DataFrame(qrel_rows, columns=["query_id", "doc_id", "relevance"])
    return run, qrels


IR_MEASURES = [
    "nDCG@10", "nDCG", "nDCG(dcg='exp-log2')@10", "AP", "AP(rel=2)", "AP@100", "RR", "P@5",
    "P(rel=2)@5", "R@100", "Success@5", "Success(rel=2)@5", "SetP", "SetR", "SetF", "SetAP",
    "NumRel", "NumRet", "NumRelRet", "NumQ", "Rprec", "IPrec@0.5", "IPrec@0.1", "infAP", "Bpref",
]  # fmt: skip
# Judged@k: ir_measures' own provider orders tied scores its own way; without ties it is
# cross-checked in test_crosscheck_ir_measures.py
# ir_measures computes nDCG(dcg=exp-log2) with gdeval, which prints 5 decimals
TOLERANCE = {"nDCG(dcg='exp-log2')@10": 5.1e-6}


@pytest.mark.parametrize("name", IR_MEASURES)
def test_ir_measures_names_give_ir_measures_numbers(name: str) -> None:
    run, qrels = _collection(4)
    measure = ir_measures.parse_measure(name)
    theirs = {m.query_id: float(m.value) for m in ir_measures.iter_calc([measure], qrels, run)}
    ev = evaluate_run(run, qrels, [name])
    ours = dict(zip(ev.long()["query_id"], ev.long()["value"], strict=True))
    assert set(theirs) == set(ours)
    for q, v in theirs.items():
        assert ours[q] == pytest.approx(v, abs=TOLERANCE.get(name, 1e-9)), (name, q)
    agg = ir_measures.calc_aggregate([measure], qrels, run)[measure]
    assert ev.summary()["value"].iloc[0] == pytest.approx(agg, abs=TOLERANCE.get(name, 1e-9))


def test_ranx_rbp_weighs_the_grade() -> None:
    """ranx's rbp.80 sums grade x p^(i-1) (checked by hand against ranx 0.3.21)."""
    run = pd.DataFrame({"query_id": ["1"] * 3, "doc_id": ["a", "b", "c"], "score": [3.0, 2, 1]})
    qrels = pd.DataFrame({"query_id": ["1"] * 3, "doc_id": ["a", "b", "c"], "relevance": [2, 0, 3]})
    got = evaluate_run(run, qrels, ["rbp.80", "RBP"]).long()["value"].tolist()
    assert got == pytest.approx([0.2 * (2 + 3 * 0.8**2), 0.2 * (1 + 0.8**2)])

"""ERR, RBP and Judged@k cross-checked against ir_measures on random runs with ties.

ir_measures computes ERR@k with gdeval (perl; 5 printed decimals), RBP(rel=r) with
cwl_eval and Judged@k with its own provider.  Each test skips when its provider is
not installed (``pip install ir-measures cwl-eval``; gdeval needs perl).
"""

from __future__ import annotations

import shutil

import numpy as np
import pandas as pd
import pytest

from sessionval.errors import JudgmentError
from sessionval.evaluation.lists import evaluate_run
from sessionval.measures.lists import RankedLists
from sessionval.measures.registry import parse_measure

ir_measures = pytest.importorskip("ir_measures")


def _random(seed: int, *, ties: bool, n_topics: int = 25) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Numeric topic ids (gdeval needs them), grades -1..4, scores with or without ties."""
    rng = np.random.default_rng(seed)
    run_rows, qrel_rows = [], []
    for q in range(1, n_topics + 1):
        pool = rng.choice(60, int(rng.integers(1, 30)), replace=False)
        for d in pool:
            qrel_rows.append((str(q), f"d{d}", int(rng.choice([-1, 0, 0, 0, 1, 2, 3, 4]))))
        docs = rng.choice(60, int(rng.integers(1, 40)), replace=False)
        scores = rng.integers(0, 5, docs.size) if ties else rng.permutation(docs.size)
        run_rows += [(str(q), f"d{d}", float(s)) for d, s in zip(docs, scores, strict=True)]
    run = pd.DataFrame(run_rows, columns=["query_id", "doc_id", "score"])
    qrels = pd.DataFrame(qrel_rows, columns=["query_id", "doc_id", "relevance"])
    return run, qrels


def _theirs(measure: object, qrels: pd.DataFrame, run: pd.DataFrame) -> dict[str, float]:
    return {m.query_id: float(m.value) for m in ir_measures.iter_calc([measure], qrels, run)}


def _ours(spec: str, qrels: pd.DataFrame, run: pd.DataFrame, **kw: object) -> dict[str, float]:
    pq = evaluate_run(run, qrels, [spec], **kw).long()  # type: ignore[arg-type]
    return dict(zip(pq["query_id"], pq["value"], strict=True))


@pytest.mark.skipif(shutil.which("perl") is None, reason="gdeval (ERR) needs perl")
@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("k", [5, 20])
def test_err_against_gdeval(seed: int, k: int) -> None:
    run, qrels = _random(seed, ties=True)
    theirs = _theirs(ir_measures.parse_measure(f"ERR@{k}"), qrels, run)
    ours = _ours(f"ERR@{k}", qrels, run)
    assert len(theirs) >= 20 and set(theirs) <= set(ours)
    for q, v in theirs.items():
        assert ours[q] == pytest.approx(v, abs=5.1e-6), q  # gdeval prints 5 decimals


@pytest.mark.parametrize(("p", "rel"), [(0.8, 1), (0.5, 2), (0.95, 1)])
def test_rbp_against_cwl_eval(p: float, rel: int) -> None:
    pytest.importorskip("cwl")
    run, qrels = _random(2, ties=False)
    theirs = _theirs(ir_measures.parse_measure(f"RBP(p={p},rel={rel})"), qrels, run)
    ours = _ours(f"RBP(p={p},rel={rel})", qrels, run)
    assert len(theirs) >= 20
    for q, v in theirs.items():
        assert ours[q] == pytest.approx(v, abs=1e-12), q


@pytest.mark.parametrize("k", [None, 3, 10])
def test_judged_against_ir_measures(k: int | None) -> None:
    run, qrels = _random(3, ties=True)
    spec = "Judged" + (f"@{k}" if k else "")
    theirs = _theirs(ir_measures.parse_measure(spec), qrels, run)
    # ir_measures' Judged provider breaks score ties by doc id ascending
    ours = _ours(spec, qrels, run, ties="doc_id")
    assert len(theirs) >= 20
    for q, v in theirs.items():
        assert ours[q] == pytest.approx(v, abs=1e-12), q


def test_err_worked_example_by_hand() -> None:
    # Chapelle et al. (2009) eq. 4 with g_max = 4: grades 2, 0, 1 -> R = 3/16, 0, 1/16
    m = parse_measure("ERR")
    lists = RankedLists.from_arrays(["q"], [0, 3], [2, 0, 1])
    expected = 3 / 16 + (1 / 3) * (1 / 16) * (13 / 16)
    assert m.compute(lists)[0] == pytest.approx(expected, abs=1e-15)
    # a grade above max_grade is refused: its stopping probability would exceed 1
    with pytest.raises(JudgmentError, match="above max_grade=2"):
        parse_measure("ERR(max_grade=2)").compute(RankedLists.from_arrays(["q"], [0, 1], [3]))

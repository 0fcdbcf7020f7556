"""Every worked example of spec sections 2-3, from tests/reference/single_*.json.

Each JSON case carries its citation, section, inputs, expected value(s) and
tolerance; cases with ``erratum`` record the paper's printed (inconsistent) values
next to the formula's, and the test checks the printed list really is off.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from sessionval.measures.cg import cumulated_gain, discounted_cumulated_gain, gain_vectors
from sessionval.measures.lists import RankedLists
from sessionval.measures.registry import parse_measure

REF = Path(__file__).resolve().parent
CASES = sorted(REF.glob("single_*.json"))


def _load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def _vector(inputs: dict) -> np.ndarray:
    gains = inputs["gains"]
    measure = inputs["measure"]
    n = len(gains)
    if measure == "CG":
        direct = cumulated_gain(gains)
    elif measure == "DCG":
        direct = discounted_cumulated_gain(gains, discount=inputs["discount"], b=inputs["b"])
    else:
        direct = None
    ideal = inputs.get("ideal", [g for g in gains if g > 0])
    lists = RankedLists.from_arrays(["q"], [0, n], gains, recall_base=[[g for g in ideal if g > 0]])
    columnar = gain_vectors(
        lists,
        kind=measure,
        depth=n,
        discount=inputs.get("discount", "none"),
        b=inputs.get("b", 2.0),
        gain="grade",
    )["value"].to_numpy()
    if direct is not None:
        # the per-list helper and the columnar kernel must agree exactly
        np.testing.assert_allclose(columnar, direct, rtol=0, atol=1e-12)
    return columnar


def test_reference_cases_exist() -> None:
    assert len(CASES) >= 16
    for path in CASES:
        case = _load(path)
        assert {"id", "citation", "section", "kind", "inputs", "expected", "tolerance"} <= set(case)


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_reference_case(path: Path) -> None:
    case = _load(path)
    tol = case["tolerance"]
    inputs = case["inputs"]
    if case["kind"] == "vector":
        got = _vector(inputs)
        np.testing.assert_allclose(got, case["expected"], rtol=0, atol=tol)
        if "erratum" in case:
            printed = np.asarray(case["erratum"]["printed"], dtype=float)
            # the printed list is inconsistent with the formula: it must differ
            assert np.max(np.abs(printed - got)) > 0.1
    elif case["kind"] == "measure":
        grades = inputs["grades"]
        lists = RankedLists.from_arrays(
            ["q"], [0, len(grades)], grades, recall_base=[inputs["recall_base"]]
        )
        got = parse_measure(inputs["measure"]).compute(lists)
        assert got.shape == (1,)
        assert abs(float(got[0]) - case["expected"]) <= tol
    else:
        pytest.fail(f"unknown case kind {case['kind']!r}")


def test_jk2008_erratum_ranks() -> None:
    # the slips of Järvelin et al. (2008)'s appendix are at ranks 2 and 8
    case = _load(REF / "single_jk2008-appendix-dcg-b4.json")
    got = _vector(case["inputs"])
    printed = np.asarray(case["erratum"]["printed"])
    step_got = np.diff(np.concatenate([[0], got]))
    step_printed = np.diff(np.concatenate([[0], printed]))
    wrong = np.flatnonzero(np.abs(step_got - step_printed) > 0.02) + 1
    assert wrong.tolist() == [2, 8]

"""One grade join (issue 22 §1.1): every grade a measure sees comes through a GradeJoin."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import sessionval as sv
from sessionval.judgments.join import GradeJoin
from sessionval.judgments.lookup import GradeLookup
from sessionval.measures.key_join import JudgedKeys
from tests.builders import frame, judgments

PACKAGE = Path(sv.__file__).parent

RUN = pd.DataFrame(
    {
        "query_id": ["1", "1", "1", "2", "2"],
        "doc_id": ["a", "b", "c", "a", "d"],
        "score": [3.0, 2.0, 1.0, 2.0, 1.0],
    }
)
QRELS = pd.DataFrame(
    {"query_id": ["1", "1", "2", "2"], "doc_id": ["a", "c", "d", "x"], "relevance": [2, 1, 3, 1]}
)


def _run_means(run: pd.DataFrame, qrels: pd.DataFrame) -> dict[str, float]:
    return sv.evaluate_run(run, qrels, ["nDCG@10", "AP", "RR", "P@2"]).means


def _session_means() -> pd.Series:
    study = frame([("s1", "u", "1", "S", [["a", "b"], ["c", "x"]]), ("s2", "u", "2", "S", [["d"]])])
    j = judgments([("1", "a", 2), ("1", "c", 1), ("2", "d", 3), ("2", "x", 1)])
    table: pd.DataFrame = sv.evaluate(study, j, sv.SessionConfig(cutoff=2)).per_session()
    return table[["sdcg", "nsdcg"]].sum()


ROADS = {
    "string keys (JudgedKeys)": lambda: _run_means(RUN, QRELS),
    "dictionary codes (GradeLookup)": lambda: _run_means(
        RUN.astype({"doc_id": "category"}), QRELS.astype({"doc_id": "category"})
    ),
    "sessions (GradeLookup)": _session_means,
}


@pytest.mark.parametrize("road", ROADS)
def test_every_grade_a_measure_sees_comes_through_the_protocol(road: str, monkeypatch) -> None:
    before = ROADS[road]()
    assert all(float(v) > 0 for v in dict(before).values())
    calls: list[str] = []

    def unjudged(name: str, original: Any) -> Any:
        def join(self: Any, *args: Any, **kwargs: Any) -> np.ndarray:
            calls.append(name)
            return np.full_like(original(self, *args, **kwargs), np.nan)

        return join

    # both implementations answer "unjudged" to every row: no measure may still score
    for cls, name in ((GradeLookup, "lists"), (GradeLookup, "rows"), (JudgedKeys, "lists")):
        monkeypatch.setattr(cls, name, unjudged(f"{cls.__name__}.{name}", getattr(cls, name)))
    after = ROADS[road]()
    assert calls and all(float(v) == 0 for v in dict(after).values()), (road, calls, after)


def test_both_implementations_are_grade_joins() -> None:
    # the protocol's one method, with the protocol's parameters, on both implementations
    for cls in (GradeLookup, JudgedKeys):
        assert list(cls.lists.__annotations__)[:3] == list(GradeJoin.lists.__annotations__)[:3]


def test_no_other_module_joins_grades_by_hand() -> None:
    # a grade join searches sorted judgment keys or hashes them: only the two
    # implementations (and the key preparation of string_ids) may do it
    allowed = {"judgments/lookup.py", "measures/key_join.py", "measures/string_ids.py"}
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel in allowed:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                attr = node.func.attr
                text = ast.unparse(node)
                if attr in {"searchsorted", "get_indexer", "merge"} and "grade" in text.lower():
                    offenders.append(f"{rel}:{node.lineno}: {text}")
    assert not offenders, offenders

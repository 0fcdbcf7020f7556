"""The judgments boundary: the same judgments accepted or refused the same way on every road."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest

from sessionval import evaluate_run, judgments_from_records, judgments_from_table
from sessionval.errors import JudgmentError, ParseError, SessionvalError
from sessionval.frame import JudgmentFrame
from sessionval.io.trec import read_judgments_csv, read_qrels
from sessionval.models.judgments import GradeScale

Rows = list[tuple[str, str, object]]
Road = Callable[[Rows, Path], JudgmentFrame]


def _qrels_file(rows: Rows, tmp: Path) -> JudgmentFrame:
    p = tmp / "q.txt"
    p.write_text("".join(f"{t} 0 {d} {g}\n" for t, d, g in rows))
    return read_qrels(p)


def _csv_file(rows: Rows, tmp: Path) -> JudgmentFrame:
    p = tmp / "j.csv"
    p.write_text("topic_id,doc_id,grade\n" + "".join(f"{t},{d},{g}\n" for t, d, g in rows))
    return read_judgments_csv(p)


def _table(rows: Rows, tmp: Path) -> JudgmentFrame:
    return judgments_from_table(pd.DataFrame(rows, columns=["query_id", "doc_id", "grade"]))


def _records(rows: Rows, tmp: Path) -> JudgmentFrame:
    return judgments_from_records(rows)


ROADS: dict[str, Road] = {
    "qrels file": _qrels_file,
    "csv file": _csv_file,
    "DataFrame": _table,
    "records": _records,
}


def _said(exc: SessionvalError) -> str:
    """The message without its source and location (``q.txt:3:``, ``<t> (row 2):``)."""
    text = re.sub(r"^.*?(:\d+| \((row|record) \d+\)): ", "", str(exc))
    return re.sub(r"on (lines|rows|records) [\d, ]+", "on PLACES", text)


@pytest.mark.parametrize("road", ROADS)
def test_the_same_judgment_twice_with_one_grade_is_kept_once(road: str, tmp_path: Path) -> None:
    jf = ROADS[road]([("T", "a", 1), ("T", "b", 0), ("T", "a", 1)], tmp_path)
    assert jf.table[["doc_id", "grade"]].astype(str).to_numpy().tolist() == [["a", "1"], ["b", "0"]]


REFUSED = {
    "different grades": (
        [("T", "a", 1), ("T", "b", 0), ("T", "a", 2)],
        JudgmentError,
        "grade: document 'a' is judged more than once for topic 'T' with different grades "
        "(1, 2 on PLACES)",
    ),
    "not an integer": ([("T", "a", "2.5")], ParseError, "grade: must be an integer (got '2.5')"),
    "beyond 16 bits": (
        [("T", "a", 40000)],
        JudgmentError,
        "grade: must be an integer from -32768 to 32767 (grades are stored as 16-bit "
        "integers) (got '40000')",
    ),
}


@pytest.mark.parametrize("case", REFUSED)
@pytest.mark.parametrize("road", ROADS)
def test_refused_the_same_way_on_every_road(road: str, case: str, tmp_path: Path) -> None:
    rows, kind, message = REFUSED[case]
    with pytest.raises(kind) as exc:
        ROADS[road](rows, tmp_path)
    assert _said(exc.value) == message


@pytest.mark.parametrize("road", ["DataFrame", "records"])
def test_off_the_scale_in_code_as_in_files(road: str, tmp_path: Path) -> None:
    p = tmp_path / "q.txt"
    p.write_text("T 0 a 7\n")
    with pytest.raises(JudgmentError) as from_file:
        read_qrels(p, scale=GradeScale.default())
    rows: Rows = [("T", "a", 7)]
    with pytest.raises(JudgmentError) as in_code:
        if road == "records":
            judgments_from_records(rows, scale=GradeScale.default())
        else:
            judgments_from_table(pd.DataFrame(rows, columns=["query_id", "doc_id", "grade"]),
                                 scale=GradeScale.default())  # fmt: skip
    assert _said(in_code.value) == _said(from_file.value)


def test_evaluate_run_tables_and_dicts_pass_the_boundary(tmp_path: Path) -> None:
    run = pd.DataFrame({"query_id": ["T", "T"], "doc_id": ["a", "b"], "score": [2.0, 1.0]})
    qrels = pd.DataFrame({"query_id": ["T", "T"], "doc_id": ["a", "b"], "relevance": [1, 0]})
    once = evaluate_run(run, qrels, ["AP", "nDCG"]).per_query()
    # the same judgment twice (the string-id join falls back to the boundary): kept once
    twice = evaluate_run(run, pd.concat([qrels, qrels.iloc[[0]]]), ["AP", "nDCG"]).per_query()
    pd.testing.assert_frame_equal(once, twice)
    conflict = pd.concat([qrels, qrels.iloc[[0]].assign(relevance=2)], ignore_index=True)
    with pytest.raises(JudgmentError) as exc:
        evaluate_run(run, conflict, ["AP"])
    with pytest.raises(JudgmentError) as direct:
        judgments_from_table(conflict)
    assert str(exc.value) == str(direct.value)
    with pytest.raises(ParseError, match=r"<dict> \(row 0\): relevance: must be an integer"):
        evaluate_run(run, {"T": {"a": 1.5}}, ["AP"])


def test_a_dict_of_dicts_is_records(tmp_path: Path) -> None:
    assert judgments_from_records({"T": {"a": 1, "b": 0}}).table["grade"].tolist() == [1, 0]


def test_numeric_ids_become_their_text() -> None:
    jf = judgments_from_table(
        pd.DataFrame({"query_id": [10, 9], "doc_id": [1, 2], "grade": [1, 0]})
    )
    assert sorted(jf.table["topic_id"].astype(str)) == ["10", "9"]


def test_only_the_boundary_defines_the_one_grade_rule() -> None:
    """A second duplicate-judgment rule anywhere in the package fails here."""
    root = Path(__file__).resolve().parents[2] / "sessionval"
    marks = ("is judged more than once", 'duplicated(["topic_id", "doc_id"]')
    found = sorted(
        str(p.relative_to(root))
        for p in root.rglob("*.py")
        if any(m in p.read_text() for m in marks)
    )
    assert found == ["validate/judgments.py"], found

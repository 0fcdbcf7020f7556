from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from sessionval.errors import JudgmentError, ParseError
from sessionval.problems import Problem
from sessionval.validate.collect import ProblemCollector, row_locator


def test_row_locator_names_rows_and_lines():
    assert row_locator("row")(0) == "row 1"
    assert row_locator("line")(0) == "line 2"  # a header line comes first
    assert row_locator("line", np.array([10, 12, 17]))(2) == "line 17"


def test_collector_ties_problems_to_sessions():
    coll = ProblemCollector(
        "t.csv",
        np.array([0, 0, -1, 1], dtype=np.int32),
        pd.Index(["s1", "s2"]),
        row_locator("line"),
    )
    coll.add([1, 3], "rank", "must be >= 1", [0, -2])
    coll.add([2], "session_id", ["is required"])
    assert coll.bad_sessions == {0, 1}  # the row without a session rejects none
    assert [str(p) for p in coll.problems] == [
        "t.csv:3: rank: must be >= 1 (got 0)",
        "t.csv:5: rank: must be >= 1 (got -2)",
        "t.csv:4: session_id: is required",
    ]
    assert [p.record for p in coll.problems] == ["s1", "s2", ""]


def test_located_problems_are_raised_in_input_order_up_to_the_limit():
    p = ProblemCollector("q.txt", limit=2)
    for line in (9, 3, 5):
        p.add_at(line, "grade", "must be an integer", "'x'")
    p.uncounted += 4  # found beyond a check's limit
    with pytest.raises(ParseError) as err:
        p.raise_if_any("qrels")
    lines = str(err.value).splitlines()
    assert lines[0] == "q.txt: 7 problems in the qrels file (the first 2 are listed):"
    assert lines[1:] == [
        "  q.txt:3: grade: must be an integer (got 'x')",
        "  q.txt:5: grade: must be an integer (got 'x')",
    ]


def test_only_grade_problems_raise_a_judgment_error():
    p = ProblemCollector("q.txt")
    p.add_at(2, "grade", "not on the scale", judgment=True)
    with pytest.raises(JudgmentError):
        p.raise_if_any("qrels")
    p.add_at(1, "", "qrels line has 3 fields")
    with pytest.raises(ParseError):
        p.raise_if_any("qrels")


def test_columns_whole_input_problems_and_a_reports_list():
    report: list[Problem] = [Problem("other", "", "", "kept first")]
    p = ProblemCollector("log.xml", into=report)
    p.add_at(12, "session", "malformed XML", column=4, record="7")
    p.add_at(None, "", "no session found")
    assert [x.location for x in report] == ["", "line 12:4", ""]
    assert str(report[1]) == "log.xml:12:4: session: malformed XML"
    # its own problems in input order (a whole-input problem first); the list's others kept
    assert [x.message for x in p.in_order()] == ["no session found", "malformed XML"]

from __future__ import annotations

import numpy as np
import pandas as pd

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

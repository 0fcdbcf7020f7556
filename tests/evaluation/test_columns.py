"""One column dictionary: the evaluation's tables are built from ``evaluation/columns.py``.

Issue 22 (review §1.9): the names were written in ``result.py``, in a docstring and as
the data dictionary's keys.  Now the tables hold exactly the listed columns, in order,
and a column built but not listed (so not described) is refused at once.
"""

from __future__ import annotations

import pytest

from sessionval.evaluation.columns import TABLE_COLUMNS, ordered_table
from sessionval.evaluation.config import SessionConfig
from sessionval.evaluation.session import evaluate
from tests import builders


def test_the_tables_hold_the_listed_columns_in_order() -> None:
    frame = builders.frame(
        [
            ("s1", "u1", "A", "S1", [["d1", "d2"], ["d3"]]),
            ("s2", "u2", "A", "S2", [["d2", "d1", "d4"]]),
        ]
    )
    judgments = builders.judgments([("A", "d1", 3), ("A", "d2", 1), ("A", "d3", 2)])
    ev = evaluate(frame, judgments, SessionConfig(), measures=["nDCG@5", "sDCG@5"])
    tables = {"session": ev.per_session(), "query": ev.per_query(), "position": ev.per_position()}
    extra = {"session": ["sDCG@5"], "query": ["nDCG@5"], "position": []}
    for level, table in tables.items():
        assert list(table.columns) == [*TABLE_COLUMNS[level], *extra[level]], level


def test_a_column_built_but_not_listed_is_refused() -> None:
    values = {name: [1] for name in TABLE_COLUMNS["query"]}
    with pytest.raises(KeyError, match=r"\['new_score'\] are not in"):
        ordered_table("query", {**values, "new_score": [2]})
    del values["qd"]
    with pytest.raises(KeyError, match=r"\['qd'\] are listed but not built"):
        ordered_table("query", values)


def test_per_query_ids_keep_the_frames_types_and_values() -> None:
    # taken from the frame's own arrays (codes), not rebuilt from their text
    frame = builders.frame(
        [
            ("s2", "u9", "B", "S2", [["d2"]]),
            ("s1", "u1", "A", "S1", [["d1", "d2"], ["d3"]]),
        ]
    )
    judgments = builders.judgments([("A", "d1", 3), ("B", "d2", 1)])
    ev = evaluate(frame, judgments, SessionConfig())
    pq, frame = ev.per_query(), ev.frame  # the evaluation's frame: sessions in id order
    s = frame.sessions.set_index("session_id")
    for col in ("user_id", "topic_id", "system_id"):
        assert pq[col].dtype == frame.sessions[col].dtype, col
        assert pq[col].tolist() == s.loc[pq["session_id"].tolist(), col].tolist(), col
    for col in ("session_id", "qrels_id"):
        assert pq[col].dtype == frame.queries[col].dtype, col
        assert pq[col].tolist() == frame.queries[col].tolist(), col

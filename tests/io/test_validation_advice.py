"""Issue 25 item 5: a validation error says how to fix it (a query without results,
a session without queries), in every reader alike."""

from __future__ import annotations

import json

import pytest

from sessionval.errors import ValidationFailed
from sessionval.io.formats import load_input
from tests import builders

FIX = "a query without results scanned nothing: leave scan_depth empty or 0, or log its results"


def test_a_query_without_results_but_a_scan_depth_says_what_to_set(tmp_path):
    flat = tmp_path / "log.csv"
    flat.write_text(
        "session_id,user_id,topic_id,system_id,query_pos,rank,doc_id,scan_depth\n"
        "s1,u1,T1,S1,1,1,d1,1\n"
        "s1,u1,T1,S1,2,,,3\n"
    )
    session = builders.make_session("s1", queries=[["d1"], []])
    session["queries"][1]["scan_depth"] = 3
    lines = builders.write_jsonl(tmp_path / "s.jsonl", [session])
    for path in (flat, lines):
        with pytest.raises(ValidationFailed) as err:
            load_input(path)
        [problem] = err.value.problems
        assert FIX in problem.message and "--lenient" in problem.message, path.name
    # lenient: the session is rejected, as the message says
    assert load_input(flat, mode="lenient").report.sessions_rejected == 1


def test_a_session_without_queries_says_so_once(tmp_path):
    session = builders.make_session("s1")
    session["queries"] = []
    bad_query = builders.make_session("s2")
    bad_query["queries"][0]["results"][0]["rank"] = 0
    path = tmp_path / "s.jsonl"
    path.write_text(json.dumps(session) + "\n" + json.dumps(bad_query) + "\n")
    with pytest.raises(ValidationFailed) as err:
        load_input(path)
    problems = [(p.location, p.field, p.message) for p in err.value.problems]
    assert problems[0] == (
        "line 1",
        "queries",
        "a session needs at least one query: list its queries, or leave it out",
    )
    # the query that failed is not reported a second time as "queries: too short"
    assert [(loc, field) for loc, field, _ in problems[1:]] == [
        ("line 2", "queries[0].results[0].rank")
    ]

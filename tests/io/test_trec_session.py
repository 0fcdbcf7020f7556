from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from sessionval.errors import JudgmentError, ParseError, ValidationFailed
from sessionval.io.trec_session import (
    TREC_SESSION_YEARS,
    UNKNOWN_USER,
    load_trec_session,
    map_grades,
    read_session_topic_map,
)


def test_2013_layout_sessions_queries_results(fx):
    r = load_trec_session(
        fx / "ts2013.xml", qrels=fx / "qrels2013.txt", topic_map=fx / "topicmap2013.txt"
    )
    f = r.frame
    assert r.details["year"] is not None and r.details["year"].year == 2013
    assert f.sessions["session_id"].astype(str).tolist() == ["1", "2"]
    assert f.sessions["user_id"].astype(str).tolist() == [UNKNOWN_USER] * 2
    assert f.sessions["system_id"].astype(str).tolist() == ["trec-session-2013"] * 2
    # currentquery without results is dropped by default; the empty page is kept
    assert f.sessions["n_queries"].tolist() == [3, 1]
    assert f.queries["text"].tolist() == [
        "hedgehog food",
        "hedgehog diet",
        "hedgehog diet insects",
        "otter",
    ]
    assert f.queries["n_results"].tolist() == [3, 0, 2, 1]
    assert r.details["empty_serps"] == 1
    assert f.results["doc_id"].astype(str).tolist() == [
        "cw-a1",
        "cw-a2",
        "cw-a3",
        "cw-a3",
        "cw-b4",
        "cw-c1",
    ]
    assert f.results["url"].iloc[0] == "http://a.example/1?x=1&y=2"
    assert f.queries["time"].iloc[0] == pd.Timestamp("1970-01-01T00:00:10.5Z")
    assert f.queries["qrels_id"].astype(str).tolist() == ["1", "1", "1", "2"]


def test_clicks_and_dwell(fx):
    f = load_trec_session(fx / "ts2013.xml").frame
    first = f.results.iloc[:3]
    assert first["clicks"].tolist() == [0, 2, 1]
    # rank 2: (50-20) + (75-70); rank 3: endtime NA -> unknown
    assert first["dwell"].iloc[1] == pytest.approx(35.0)
    assert np.isnan(first["dwell"].iloc[2]) and np.isnan(first["dwell"].iloc[0])


def test_current_query_options(fx):
    keep = load_trec_session(fx / "ts2013.xml", current_query="keep").frame
    assert keep.sessions["n_queries"].tolist() == [4, 1]
    assert keep.queries["text"].iloc[3] == "hedgehog hibernation"
    assert keep.queries["n_results"].iloc[3] == 0


def test_empty_serps_drop(fx):
    r = load_trec_session(fx / "ts2013.xml", empty_serps="drop")
    assert r.frame.sessions["n_queries"].tolist() == [2, 1]
    assert r.frame.queries["query_pos"].tolist() == [1, 2, 1]
    assert any("empty result page" in p.message for p in r.notes)


def test_2013_judgments_keep_negative_grades_and_mark_unjudged_topics(fx):
    r = load_trec_session(fx / "ts2013.xml", qrels=fx / "qrels2013.txt")
    j = r.judgments
    assert j is not None
    grades = dict(zip(j.table["doc_id"].astype(str), j.table["grade"].tolist(), strict=True))
    assert grades["cw-a3"] == -2 and grades["cw-b4"] == 4
    assert j.scale.grades == (-2, 0, 1, 2, 3, 4)
    assert r.unjudged == ("2",)
    judged = dict(
        zip(r.frame.topics["topic_id"].astype(str), r.frame.topics["judged"], strict=True)
    )
    assert judged == {"1": True, "2": False}
    assert r.frame.topics.set_index("topic_id").loc["1", "description"] == (
        "Find documents about hedgehogs."
    )


def test_2012_clock_times_pages_current_query_and_grade_mapping(fx):
    r = load_trec_session(
        fx / "ts2012.xml", qrels=fx / "qrels2012.txt", topic_map=fx / "topicmap2012.txt"
    )
    f = r.frame
    assert r.details["year"] is not None and r.details["year"].year == 2012
    # page interaction merged into query 1; current query has results so it is kept
    assert f.sessions["n_queries"].tolist() == [2, 1]
    assert f.queries["n_results"].tolist() == [3, 1, 1]
    q1 = f.results[f.results["query_idx"] == 0]
    assert q1["rank"].tolist() == [1, 2, 3]
    assert q1["doc_id"].astype(str).tolist() == ["cw09-1", "cw09-2", "cw09-3"]
    assert q1["clicks"].tolist() == [0, 0, 1] and q1["dwell"].iloc[2] == pytest.approx(30.0)
    assert f.queries["time"].iloc[0] == pd.Timestamp("1970-01-01T09:54:27.5Z")
    # session 6's topic comes from the map (no num in the XML)
    assert f.sessions["topic_id"].astype(str).tolist() == ["7", "8"]
    j = r.judgments
    assert j is not None
    mapped = dict(zip(j.table["doc_id"].astype(str), j.table["grade"].tolist(), strict=True))
    assert mapped == {"cw09-1": 2, "cw09-2": 3, "cw09-3": 4, "cw09-4": 0, "cw09-5": 1}
    assert j.scale.name == "TREC Session 2012 mapped"


def test_2012_pages_separate_and_raw_grades(fx):
    r = load_trec_session(
        fx / "ts2012.xml",
        qrels=fx / "qrels2012.txt",
        topic_map=fx / "topicmap2012.txt",
        pages="separate",
        grade_map="raw",
    )
    assert r.frame.sessions["n_queries"].tolist() == [3, 1]
    assert r.judgments is not None
    assert sorted(r.judgments.table["grade"].tolist()) == [-2, 1, 2, 3, 4]


def test_year_mappings_are_named():
    assert dict(TREC_SESSION_YEARS[2012].grade_map) == {-2: 0, 0: 0, 1: 1, 4: 2, 2: 3, 3: 4}
    assert TREC_SESSION_YEARS[2013].raw_scale.grades == (-2, 0, 1, 2, 3, 4)
    with pytest.raises(JudgmentError, match=r"raw grade.* 7 not covered"):
        map_grades(np.array([1, 7]), TREC_SESSION_YEARS[2012].grade_map)


def test_quirks_strict_lists_every_problem(fx):
    with pytest.raises(ValidationFailed) as err:
        load_trec_session(fx / "ts2013_quirks.xml")
    msg = str(err.value)
    assert "document cw-a1 occurs twice in one result list (ranks 1 and 2)" in msg
    assert "click on rank 5 but the result list has ranks 1..2" in msg
    assert "session 12 has no topic" in msg
    records = {p.record for p in err.value.problems}
    assert records == {"10", "11", "12"}
    assert all(p.location.startswith("line ") for p in err.value.problems)


def test_quirks_lenient_rejects_and_repairs(fx):
    r = load_trec_session(fx / "ts2013_quirks.xml", mode="lenient")
    # session 10 lists cw-a1 twice: repaired (the copy at rank 2 removed), not rejected
    assert r.frame.sessions["session_id"].astype(str).tolist() == ["10", "11", "13"]
    assert r.report.records_read == 4
    assert r.report.sessions_rejected == 1 and r.report.sessions_accepted == 3
    rej = r.report.rejects
    assert set(rej["record"]) == {"12"}
    assert any("click skipped" in p.message for p in r.notes)
    rep = r.report.repairs_table
    dup = rep[rep["message"].str.contains("listed twice")]
    assert dup["record"].tolist() == ["10"]
    assert "kept at rank 1, removed at rank 2" in dup["message"].iloc[0]
    assert dup["value"].tolist() == ["'cw-a1'"] and dup["location"].tolist() == ["line 8"]
    # the skipped click leaves no click on the list
    assert r.frame.results["clicks"].sum() == 0


def test_missing_topic_resolved_by_map(fx, tmp_path):
    m = tmp_path / "map.txt"
    m.write_text("12\t1\n")
    r = load_trec_session(fx / "ts2013_quirks.xml", topic_map=m, mode="lenient")
    assert "12" in r.frame.sessions["session_id"].astype(str).tolist()


def test_topic_map_disagreeing_with_xml_is_a_problem(fx, tmp_path):
    m = tmp_path / "map.txt"
    m.write_text("1\t9\n")
    with pytest.raises(ValidationFailed, match="topic 1 in the XML but 9 in the session-topic map"):
        load_trec_session(fx / "ts2013.xml", topic_map=m)


def test_bare_ampersand_strict_reports_line_and_column(fx):
    with pytest.raises(ParseError) as err:
        load_trec_session(fx / "ts2013_bare_amp.xml")
    msg = str(err.value)
    assert "ts2013_bare_amp.xml:5:22:" in msg
    assert "bare '&'" in msg and "fish & chips" in msg


def test_bare_ampersand_lenient_escapes_and_reports(fx):
    r = load_trec_session(fx / "ts2013_bare_amp.xml", mode="lenient")
    assert r.frame.queries["text"].tolist() == ["fish & chips"]
    assert r.frame.results["url"].tolist() == ["http://d.example/?a=1&b=2"]
    assert r.frame.results["title"].tolist() == ["Fish & chips"]
    fixes = [p for p in r.notes if "bare '&'" in p.message]
    # one note per kind of repair: the count and where (item 4 of issue 10)
    assert [p.location for p in fixes] == ["line 5:22"]
    assert "2 time(s), at line:column 5:22, 7:56" in fixes[0].message


def test_unclosed_tag_strict_and_lenient(fx):
    with pytest.raises(
        ParseError, match=r"ts2013_unclosed\.xml:\d+:\d+: malformed XML: mismatched"
    ):
        load_trec_session(fx / "ts2013_unclosed.xml")
    r = load_trec_session(fx / "ts2013_unclosed.xml", mode="lenient")
    assert r.frame.sessions["session_id"].astype(str).tolist() == ["1", "3"]
    assert r.report.records_read == 3 and r.report.sessions_rejected == 1
    (p,) = r.report.problems
    assert p.record == "2" and "malformed XML" in p.message
    assert int(p.location.split()[1].split(":")[0]) >= 14


def test_not_a_file(tmp_path):
    with pytest.raises(ParseError, match="no such file"):
        load_trec_session(tmp_path / "missing.xml")


def test_read_session_topic_map_conflict(tmp_path):
    p = tmp_path / "m.txt"
    p.write_text("1 1\n1 2\n")
    with pytest.raises(ParseError, match=r"m\.txt:2: session 1 mapped to topic 2 but earlier to 1"):
        read_session_topic_map(p)


def test_url_as_document_id(fx):
    f = load_trec_session(fx / "ts2013.xml", doc_id="url").frame
    assert f.results["doc_id"].astype(str).iloc[1] == "http://a.example/2"


def test_invalid_utf8(fx, tmp_path):
    p = tmp_path / "latin1.xml"
    p.write_bytes((fx / "ts2013.xml").read_bytes().replace(b"hedgehog food", b"h\xe9dgehog food"))
    with pytest.raises(ParseError, match=r"latin1\.xml:7: byte offset \d+: b'\\xe9' is not valid"):
        load_trec_session(p)
    r = load_trec_session(p, mode="lenient")
    assert r.frame.queries["text"].iloc[0] == "h\ufffddgehog food"
    assert "U+FFFD" in r.notes[0].message
    # the file's encoding, given: read as written
    r = load_trec_session(p, encoding="latin-1")
    assert r.frame.queries["text"].iloc[0] == "h\u00e9dgehog food"


def test_click_on_an_empty_result_page(fx, tmp_path):
    p = tmp_path / "c.xml"
    p.write_text(
        '<sessiontrack2013><session num="1" starttime="0"><topic num="1"/>'
        '<interaction num="1" starttime="1"><query>q</query><results></results>'
        '<clicked><click num="1" starttime="2" endtime="3"><rank>1</rank></click></clicked>'
        "</interaction></session></sessiontrack2013>"
    )
    with pytest.raises(
        ValidationFailed, match="click on rank 1 but the result list has no results"
    ):
        load_trec_session(p)
    r = load_trec_session(p, mode="lenient")
    assert r.frame.queries["n_results"].tolist() == [0]
    assert r.details["empty_serps"] == 1 and "click skipped" in r.notes[0].message


def test_unjudged_are_the_topics_without_qrels(fx):
    """Agreement: ``unjudged`` (one helper for every format) = topics of sessions not in qrels."""
    r = load_trec_session(fx / "ts2013.xml", qrels=fx / "qrels2013.txt")
    judged = set(r.judgments.table["topic_id"].astype(str))
    topics = r.frame.sessions["topic_id"].cat.categories.astype(str)
    assert r.unjudged == tuple(t for t in topics if t not in judged)
    assert r.study.name == "ts2013" and [t.judged for t in r.study.topics] == [True, False]


def test_decimal_seconds_are_read_to_the_nanosecond(tmp_path):
    """RT-3: 494.521612 s became 494.521611999 s (the float's nanoseconds truncated, 1 ns
    low), which JSON-lines then wrote and read back 1 µs low."""
    p = tmp_path / "t.xml"
    p.write_text(
        '<sessiontrack2013><session num="1" starttime="0"><topic num="1"/>'
        '<interaction num="1" starttime="494.521612"><query>q</query><results></results>'
        '</interaction><interaction num="2" starttime="3601.000000001"><query>r</query>'
        "<results></results></interaction></session></sessiontrack2013>"
    )
    times = load_trec_session(p).frame.queries["time"].tolist()
    origin = pd.Timestamp("1970-01-01T00:00:00Z")
    assert times == [
        origin + pd.Timedelta(494_521_612_000),
        origin + pd.Timedelta(3_601_000_000_001),
    ]

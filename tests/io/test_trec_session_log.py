from __future__ import annotations

import math

import pytest

from sessionval.io._xml import XmlError, parse_tree
from sessionval.io.trec_session_log import FLAT_FIELDS, SessionLogWalk, seconds


def walk(xml: str, **kw) -> SessionLogWalk:
    log = SessionLogWalk(
        source="t.xml", mode=kw.pop("mode", "strict"), topic_map={}, system_id="S",
        unknown_user="unknown", **kw,
    )  # fmt: skip
    for node in parse_tree(xml).findall("session"):
        log.session(node)
    return log


SESSION = (
    '<s><session num="7" starttime="1"><topic num="3"><title>t</title><desc>d</desc></topic>'
    '<interaction num="2" starttime="9"><query>second</query><results>'
    '<result rank="1"><clueweb12id>b</clueweb12id></result></results></interaction>'
    '<interaction num="1" starttime="5"><query>first</query><results>'
    '<result rank="2"><clueweb12id>a2</clueweb12id></result>'
    '<result rank="1"><url>u</url><clueweb12id>a1</clueweb12id></result></results>'
    '<clicked><click starttime="6" endtime="8"><rank>2</rank></click></clicked></interaction>'
    "</session></s>"
)


def test_seconds_reads_numbers_and_clock_times():
    assert seconds("99.5") == 99.5
    assert seconds("09:54:27.5") == 9 * 3600 + 54 * 60 + 27.5
    assert all(math.isnan(seconds(v)) for v in (None, "", "NA", "soon"))


def test_walk_emits_rows_in_interaction_and_rank_order():
    log = walk(SESSION)
    assert set(log.rows) == set(FLAT_FIELDS)
    assert log.rows["query_text"] == ["first", "first", "second"]
    assert log.rows["doc_id"] == ["a1", "a2", "b"]
    assert log.rows["rank"] == [1, 2, 1]
    assert log.rows["clicks"] == [0, 1, 0] and log.rows["dwell"][1] == 2.0
    assert log.rows["url"] == ["u", None, None]
    assert log.rows["user_id"] == ["unknown"] * 3
    assert log.topics == {"3": ("t", "d")}
    assert not log.rejected and len(log.row_lines) == 3


def test_walk_rejects_a_session_with_its_problems():
    log = walk(SESSION.replace("a2", "a1"), mode="strict")
    assert [p.record for p in log.rejected] == ["7"] and log.n_rejected == 1
    assert "occurs twice in one result list (ranks 1 and 2) in interaction 1" in (
        log.rejected[0].message
    )


def test_walk_lenient_removes_a_repeated_document_and_moves_the_list_up():
    # a1 at ranks 1 and 3 (c between them): the copy at rank 3 goes, d moves from 4 to 3
    xml = SESSION.replace(
        '<result rank="2"><clueweb12id>a2</clueweb12id></result>',
        '<result rank="2"><clueweb12id>c</clueweb12id></result>'
        '<result rank="3"><clueweb12id>a1</clueweb12id></result>'
        '<result rank="4"><clueweb12id>d</clueweb12id></result>',
    ).replace("<rank>2</rank>", "<rank>3</rank>")
    log = walk(xml, mode="lenient")
    assert not log.rejected
    assert log.rows["doc_id"] == ["a1", "c", "d", "b"]
    assert log.rows["rank"] == [1, 2, 3, 1]
    # the click on the removed copy counts for the kept one
    assert log.rows["clicks"] == [1, 0, 0, 0] and log.rows["dwell"][0] == 2.0
    (rep,) = [p for p in log.notes if "listed twice" in p.message]
    assert rep.record == "7" and rep.value == "'a1'"
    assert "interaction 1" in rep.message and "kept at rank 1, removed at rank 3" in rep.message


def test_walk_lenient_repairs_a_document_repeated_on_the_next_page():
    xml = (
        '<s><session num="1" starttime="0"><topic num="1"/>'
        '<interaction num="1" starttime="1"><query>q</query><results>'
        '<result rank="1"><clueweb12id>a</clueweb12id></result>'
        '<result rank="2"><clueweb12id>b</clueweb12id></result></results></interaction>'
        '<interaction num="2" starttime="2" type="page"><query>q</query><results>'
        '<result rank="1"><clueweb12id>b</clueweb12id></result>'
        '<result rank="2"><clueweb12id>c</clueweb12id></result></results>'
        '<clicked><click starttime="3" endtime="4"><rank>2</rank></click></clicked>'
        "</interaction></session></s>"
    )
    log = walk(xml, mode="lenient")
    assert log.rows["doc_id"] == ["a", "b", "c"] and log.rows["rank"] == [1, 2, 3]
    assert log.rows["clicks"] == [0, 0, 1]
    assert any("kept at rank 2, removed at rank 3" in p.message for p in log.notes)


def test_walk_rejects_times_that_are_not_times():
    for bad in ("inf", "1e30", "-5", "nan", "soon"):
        log = walk(SESSION.replace('starttime="9"', f'starttime="{bad}"'), mode="lenient")
        assert not log.row_lines and log.n_rejected == 1, bad
        (p,) = log.rejected
        assert p.field == "interaction@starttime" and p.value == repr(bad)
        assert p.location == "line 1"
    log = walk(SESSION.replace('starttime="1"', 'starttime="inf"'), mode="lenient")
    assert [p.field for p in log.rejected] == ["session@starttime"]
    log = walk(SESSION.replace('endtime="8"', 'endtime="1e300"'), mode="lenient")
    assert [p.field for p in log.rejected] == ["click@endtime"]
    assert not walk(SESSION.replace('endtime="8"', 'endtime="NA"')).rejected


def test_session_without_num_is_named_by_its_line():
    log = walk('<s>\n<session starttime="0"><topic num="1"/></session></s>', mode="lenient")
    assert {p.record for p in log.rejected} == {"line2"}
    assert "session has no num attribute" in log.rejected[0].message


_QUERY = (
    '<sessiontrack2013><session num="1"><interaction num="1"><query>{}</query>'
    "</interaction></session></sessiontrack2013>"
)


@pytest.mark.parametrize(
    ("prolog", "query", "what"),
    [
        ('<!DOCTYPE s [<!ENTITY x SYSTEM "file:///etc/passwd">]>', "&x;", "external entity &x;"),
        ('<!DOCTYPE s SYSTEM "http://127.0.0.1:1/x.dtd">', "&y;", "entity &y;"),
        ("", '<xi:include xmlns:xi="http://www.w3.org/2001/XInclude" href="/etc/passwd"/>',
         "XInclude <xi:include"),
    ],
)  # fmt: skip
def test_unresolved_external_text_is_a_located_error_not_an_empty_query(
    prolog: str, query: str, what: str
) -> None:
    with pytest.raises(XmlError) as exc:
        parse_tree('<?xml version="1.0"?>' + prolog + _QUERY.format(query))
    assert what in exc.value.what
    assert "in <query> is not resolved" in exc.value.what
    assert exc.value.line == 1

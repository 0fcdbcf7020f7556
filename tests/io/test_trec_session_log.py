from __future__ import annotations

import math

from sessionval.io._xml import _parse_tree
from sessionval.io.trec_session_log import FLAT_FIELDS, SessionLogWalk, seconds


def walk(xml: str, **kw) -> SessionLogWalk:
    log = SessionLogWalk(
        source="t.xml", mode=kw.pop("mode", "strict"), topic_map={}, system_id="S",
        unknown_user="unknown", **kw,
    )  # fmt: skip
    for node in _parse_tree(xml).findall("session"):
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
    log = walk(SESSION.replace("a2", "a1"), mode="lenient")
    assert not log.row_lines
    assert [p.record for p in log.rejected] == ["7"]
    assert "occurs twice" in log.rejected[0].message


def test_session_without_num_is_named_by_its_line():
    log = walk('<s>\n<session starttime="0"><topic num="1"/></session></s>', mode="lenient")
    assert {p.record for p in log.rejected} == {"line2"}
    assert "session has no num attribute" in log.rejected[0].message

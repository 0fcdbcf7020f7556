"""A study survives every conversion (reliability round 3, item 3; CV-1, RT-1, RT-2, RT-3).

Each study is written in one output format, read back, written in another and read back
again, for every pair of formats (JSON-lines, CSV, Parquet, Parquet partitions); each
reading must be the whole :class:`~sessionval.frame.LoadedStudy` read first: the header
(name, description, grade scales, users with attributes, topics with ``judged: false``,
systems, qrels key), the sessions, queries and results (times to the nanosecond), the
judgments and the books.  The studies: the bundled ``sample_logs`` and small fixtures
built here in the shape of the three real data sets (a TREC Session 2013 XML log, TREC
CAsT 2021 runs, the Jiang & Allan CHIIR'16 lab tables), plus a JSON-lines study with
nanosecond times.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest

from sessionval.frame import LoadedStudy
from sessionval.io.study import load_study
from sessionval.io.writers import write_flat, write_jsonl, write_partitions
from tests import builders

REPO = Path(__file__).resolve().parents[2]
FORMATS = ("jsonl", "csv", "parquet", "partitions")


def _trec_session_2013(root: Path) -> LoadedStudy:
    """Two sessions of a 2013-style log: decimal-second times, clicks, url/title/snippet, a
    topic without judgments (declared unjudged by the reader), an empty result list."""

    def result(rank: int, doc: str) -> str:
        return (
            f'<result rank="{rank}"><url>http://x.example/{doc}?a=1&amp;b=2</url>'
            f"<clueweb12id>{doc}</clueweb12id><title>T {doc}</title>"
            f"<snippet>about {doc}</snippet></result>"
        )

    xml = (
        "<sessiontrack2013>"
        '<session num="1" starttime="0"><topic num="1"><desc>hedgehogs</desc></topic>'
        '<interaction num="1" starttime="494.521612"><query>hedgehog food</query>'
        f"<results>{result(1, 'cw-a1')}{result(2, 'cw-a2')}</results>"
        '<clicked><click num="1" starttime="500.25" endtime="530.000001"><rank>2</rank>'
        "</click></clicked></interaction>"
        '<interaction num="2" starttime="601.123457"><query>hedgehog diet</query>'
        "<results></results></interaction>"
        '<currentquery starttime="700.7"><query>hedgehog care</query></currentquery>'
        "</session>"
        '<session num="2" starttime="0"><topic num="2"><desc>otters</desc></topic>'
        '<interaction num="1" starttime="3.000000001"><query>otters</query>'
        f"<results>{result(1, 'cw-b1')}</results></interaction>"
        '<currentquery starttime="9.5"><query>otter size</query></currentquery>'
        "</session></sessiontrack2013>"
    )
    root.mkdir()
    (root / "log.xml").write_text(xml, encoding="utf-8")
    (root / "qrels.txt").write_text("1 0 cw-a1 1\n1 0 cw-a2 4\n1 0 cw-x -2\n")
    return load_study(root / "log.xml", qrels=root / "qrels.txt")


def _cast_2021(root: Path) -> LoadedStudy:
    """CAsT-style: one conversation per topic, turns out of order in the topics file,
    per-turn qrels (``qrels_key="query_id"``), two runs."""
    root.mkdir()
    topics = [
        {"number": 106, "turn": [
            {"number": 2, "raw_utterance": "And their size?", "manual_rewritten_utterance": "x"},
            {"number": 1, "raw_utterance": "Tell me about otters.",
             "manual_rewritten_utterance": "x"}]},
        {"number": 107, "turn": [{"number": 1, "raw_utterance": "Best pizza dough?",
                                  "manual_rewritten_utterance": "x"}]},
    ]  # fmt: skip
    (root / "topics.json").write_text(json.dumps(topics), encoding="utf-8")
    runs = []
    for name, docs in (("runA", ["MARCO_1", "KILT_2", "WAPO_3"]), ("runB", ["KILT_2", "MARCO_1"])):
        lines = [
            f"{turn} Q0 {d} {r} {10 - r}.5 {name}"
            for turn in ("106_1", "106_2", "107_1")
            for r, d in enumerate(docs, start=1)
        ]
        (root / f"{name}.run").write_text("\n".join(lines) + "\n")
        runs.append(root / f"{name}.run")
    (root / "qrels.txt").write_text(
        "106_1 0 MARCO_1 4\n106_1 0 KILT_2 0\n106_2 0 KILT_2 2\n107_1 0 WAPO_3 1\n"
    )
    return load_study(root, fmt="cast", qrels=root / "qrels.txt", topics=root / "topics.json")


def _lab_chiir16(root: Path) -> LoadedStudy:
    """Jiang & Allan-style lab tables: per-session qrels by URL (``qrels_key="session"``),
    two post-task ratings (one session without any: CV-1), an empty SERP row."""
    root.mkdir()
    (root / "session").write_text(
        "SessionID\tUser\tTopic\tPerformance\tDifficulty\n"
        "22\tS05\t11\t3\t3\n23\tS05\t02\t4\t2\n24\tS06\t11\t\t\n"
    )
    (root / "results").write_text(
        "SessionID\tQno\trank\tURL\ttitle\tsnippet\n"
        "22\t1\tno results\n"
        "22\t2\t1\thttp://w/a\tA\tsnippet a\n"
        '22\t2\t2\thttp://w/b\tB "q"\tsnippet b\n'
        '23\t1\t1\thttp://w/b\tB "q"\tsnippet b\n'
        "24\t1\t1\thttp://w/c\tC\tsnippet c\n"
    )
    (root / "qrels").write_text(
        "SessionID\tURL\tRelevance\n22\thttp://w/a\t2\n22\thttp://w/b\t-1\n"
        "23\thttp://w/b\t1\n24\thttp://w/c\t0\n"
    )
    return load_study(root, fmt="lab-tables")


def _nanoseconds(root: Path) -> LoadedStudy:
    """JSON-lines with times to the nanosecond (RT-3) and a study header with every field."""
    root.mkdir()
    header = {
        "name": "ns", "description": "times to the nanosecond",
        "users": [{"user_id": "u1", "attributes": {"age": 30, "group": "a"}}],
        "topics": [{"topic_id": "A", "title": "t"}, {"topic_id": "B", "judged": False}],
        "systems": [{"system_id": "S1", "name": "one"}],
    }  # fmt: skip
    (root / "study.json").write_text(json.dumps(header), encoding="utf-8")
    builders.write_jsonl(
        root / "sessions.jsonl",
        [
            builders.make_session(
                "s1", start_time="2020-01-01T00:00:00.000000001Z",
                end_time="2020-01-01T03:00:00.999999999+02:00",
            ),
            builders.make_session("s2", topic="B", queries=[["d1"]]),
        ],
    )  # fmt: skip
    lines = (root / "sessions.jsonl").read_text().splitlines()
    s1 = json.loads(lines[0])
    s1["queries"][0]["time"] = "2020-01-01T00:00:00.123456789Z"
    s1["queries"][1]["time"] = "2020-01-01T00:00:01.5Z"
    builders.write_jsonl(root / "sessions.jsonl", [s1, lines[1]])
    (root / "qrels.txt").write_text("A 0 d1 3\nA 0 d3 1\n")
    return load_study(root, qrels=root / "qrels.txt")


def _sample_logs(_root: Path) -> LoadedStudy:
    return load_study(REPO / "sample_logs", qrels=REPO / "sample_logs" / "qrels.txt")


STUDIES: dict[str, Callable[[Path], LoadedStudy]] = {
    "sample_logs": _sample_logs,
    "trec-session-2013": _trec_session_2013,
    "cast-2021": _cast_2021,
    "lab-chiir16": _lab_chiir16,
    "nanoseconds": _nanoseconds,
}


def _write_and_read(loaded: LoadedStudy, fmt: str, out: Path) -> LoadedStudy:
    """``loaded`` written by the writer of ``fmt`` (its header kept), then read back."""
    kw = {"judgments": loaded.judgments, "header": loaded.study}
    if fmt == "jsonl":
        written = write_jsonl(loaded.frame, out, **kw)
    elif fmt == "partitions":
        written = write_partitions(loaded.frame, out, partition_rows=5_000, **kw)
    else:
        out = out.with_suffix(f".{fmt}")
        written = write_flat(loaded.frame, out, **kw)
    return load_study(out, qrels=written.qrels)


def _entities(table: pd.DataFrame, key: str) -> pd.DataFrame:
    """An entity table's values (the string dtype flavour of a column is the reader's)."""
    out = builders.plain(table.sort_values(key).reset_index(drop=True))
    out = out[sorted(out.columns)].astype(object)
    return out.where(out.notna(), None)


def assert_same_study(want: LoadedStudy, got: LoadedStudy) -> None:
    """The whole study read back: header, frame (times exactly), judgments, books."""
    assert got.study == want.study
    assert got.qrels_key == want.qrels_key
    builders.assert_same_frame(want.frame.in_id_order(), got.frame.in_id_order())
    for name, key in (("users", "user_id"), ("topics", "topic_id"), ("systems", "system_id")):
        pd.testing.assert_frame_equal(
            _entities(getattr(want.frame, name), key), _entities(getattr(got.frame, name), key)
        )
    assert (want.judgments is None) == (got.judgments is None)
    if want.judgments is not None and got.judgments is not None:
        cols = ["topic_id", "doc_id", "grade"]
        w, g = (
            builders.plain(j.table[cols]).sort_values(cols[:2]).reset_index(drop=True)
            for j in (want.judgments, got.judgments)
        )
        pd.testing.assert_frame_equal(w, g)
        assert got.judgments.scale == want.judgments.scale
    assert got.unjudged == want.unjudged
    for n in ("records_read", "sessions_accepted", "sessions_rejected"):
        assert getattr(got.report, n) == getattr(want.report, n), n


@pytest.mark.parametrize("second", FORMATS)
@pytest.mark.parametrize("first", FORMATS)
@pytest.mark.parametrize("study", list(STUDIES))
def test_a_study_survives_every_pair_of_formats(tmp_path, study, first, second):
    original = STUDIES[study](tmp_path / "in")
    once = _write_and_read(original, first, tmp_path / "a")
    assert_same_study(original, once)
    twice = _write_and_read(once, second, tmp_path / "b")
    assert_same_study(original, twice)


def test_the_fixtures_have_the_shapes_they_stand_for(tmp_path):
    """What the round trips must carry is there to carry (a test that cannot pass vacuously)."""
    ts = _trec_session_2013(tmp_path / "ts")
    assert ts.unjudged == ("2",) and not ts.study.topics[1].judged
    assert ts.frame.queries["time"].dt.nanosecond.tolist() != [0] * ts.frame.n_queries
    assert _cast_2021(tmp_path / "c").qrels_key == "query_id"
    lab = _lab_chiir16(tmp_path / "l")
    assert lab.qrels_key == "session" and lab.frame.sessions["rating_performance"].isna().any()
    ns = _nanoseconds(tmp_path / "n")
    assert ns.frame.queries["time"].iloc[0] == pd.Timestamp("2020-01-01T00:00:00.123456789Z")
    assert ns.frame.sessions["end_time"].iloc[0].nanosecond == 999
    sample = _sample_logs(tmp_path)
    assert sample.study.description and sample.study.users[0].attributes

from __future__ import annotations

import pytest

from sessionval.errors import ParseError
from sessionval.io.header import read_study_header, study_header
from sessionval.io.study import load_study
from tests import builders


def test_read_study_header_errors_name_the_field(tmp_path):
    p = tmp_path / "study.json"
    p.write_text("")
    with pytest.raises(ParseError, match="file is empty"):
        read_study_header(p)
    p.write_text('{"users": [{"user_id": "u1"}, {"user_id": "u1"}]}')
    with pytest.raises(ParseError, match="invalid study header"):
        read_study_header(p)


def test_study_header_describes_the_frame(fx):
    loaded = load_study(fx / "study", qrels=fx / "study" / "qrels.txt")
    header = study_header(loaded.frame, judgments=loaded.judgments, name="again")
    assert header.name == "again"
    assert header.grade_scale == loaded.judgments.scale
    assert [u.user_id for u in header.users] == ["u1", "u2"]
    assert header.users[0].attributes == {"experience": 3}
    assert [(t.topic_id, t.title) for t in header.topics] == [("A", "topic A"), ("B", "topic B")]
    bare = study_header(builders.frame([("s1", "u", "T", "S", [["d"]])]))
    assert [t.topic_id for t in bare.topics] == ["T"] and bare.users[0].attributes == {}


def test_read_study_header_encodings(tmp_path):
    p = tmp_path / "study.json"
    p.write_bytes('{"name": "caf\u00e9"}'.encode("latin-1"))
    with pytest.raises(ParseError, match=r"study\.json:1: byte offset 13: b'\\xe9'"):
        read_study_header(p)
    assert read_study_header(p, encoding="latin-1").name == "caf\u00e9"
    p.write_bytes(b"\xef\xbb\xbf" + '{"name": "caf\u00e9"}'.encode())
    assert read_study_header(p).name == "caf\u00e9"


def _rich_study(tmp_path):
    """A study whose header has everything a header can hold (RT-1, RT-2)."""
    import json

    header = {
        "name": "rich study",
        "description": "every header field set",
        "grade_scale": {"name": "graded -1..2", "levels": {"-1": "spam", "0": "no", "1": "yes",
                                                            "2": "key"}},
        "user_grade_scale": {"name": "binary", "levels": {"0": "no", "1": "yes"}},
        "users": [{"user_id": "u1", "attributes": {"age": 31, "skill": "high"}},
                  {"user_id": "u2", "attributes": {"age": 40.5, "novice": True}}],
        "topics": [{"topic_id": "A", "title": "topic A", "description": "about A"},
                   {"topic_id": "B", "title": "topic B", "judged": False}],
        "systems": [{"system_id": "S1", "name": "baseline", "description": "BM25"},
                    {"system_id": "S2"}],
    }  # fmt: skip
    tmp_path.mkdir(exist_ok=True)
    (tmp_path / "study.json").write_text(json.dumps(header), encoding="utf-8")
    builders.write_jsonl(
        tmp_path / "sessions.jsonl",
        [
            builders.make_session("s1", user="u1", topic="A", system="S1"),
            builders.make_session("s2", user="u2", topic="B", system="S2", queries=[["d9"]]),
        ],
    )
    (tmp_path / "qrels.txt").write_text("A 0 d1 2\nA 0 d2 -1\nA 0 d3 1\n")
    return load_study(tmp_path, qrels=tmp_path / "qrels.txt")


@pytest.mark.parametrize("to", ["jsonl", "parquet", "csv", "partitions"])
def test_every_output_keeps_the_study_header(tmp_path, to):
    """RT-1: the single-file CSV and Parquet outputs dropped the header (grade-scale names,
    users and their attributes, topics with judged: false, systems), so the written table
    failed strict validation with its own qrels; RT-2: name and description were replaced."""
    from sessionval.io.header import HEADER_KEY
    from sessionval.io.writers import write_flat, write_jsonl, write_partitions

    loaded = _rich_study(tmp_path / "in")
    out = tmp_path / ("o" if to in ("jsonl", "partitions") else f"o.{to}")
    kw = {"judgments": loaded.judgments, "header": loaded.study}
    if to == "jsonl":
        written = write_jsonl(loaded.frame, out, **kw)
    elif to == "partitions":
        written = write_partitions(loaded.frame, out, partition_rows=2, **kw)
    else:
        written = write_flat(loaded.frame, out, **kw)
    if to == "csv":
        assert written.study == tmp_path / "o.study.json"
    if to == "parquet":
        import pyarrow.parquet as pq

        assert written.study is None and HEADER_KEY in pq.read_schema(out).metadata
    back = load_study(out, qrels=written.qrels)  # strict: topic B is declared unjudged
    assert back.study == loaded.study
    assert back.study.name == "rich study" and back.study.description == "every header field set"
    assert back.unjudged == loaded.unjudged == ("B",)


def test_a_table_header_wins_over_the_folder_study_json(tmp_path):
    """The header a table carries is its own; a study.json beside it is another study's."""
    from sessionval.io.header import find_header
    from sessionval.io.writers import write_flat

    loaded = _rich_study(tmp_path)  # tmp_path/study.json is this study's header too
    other = loaded.study.model_copy(update={"name": "other"})
    for to in ("parquet", "csv"):
        write_flat(loaded.frame, tmp_path / f"t.{to}", header=other)
        assert find_header(tmp_path / f"t.{to}") == other
    assert find_header(tmp_path / "sessions.jsonl") == loaded.study
    (tmp_path / "t.study.json").write_text('{"users": 3}')
    with pytest.raises(ParseError, match=r"t\.study\.json: users: "):
        find_header(tmp_path / "t.csv")

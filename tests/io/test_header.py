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

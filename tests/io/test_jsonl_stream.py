"""The JSON-lines loader streams: the file is decoded ``chunk_bytes`` at a time and the
sessions are kept as columns a batch at a time (issue 10, item 7).  Whatever the chunk and
batch sizes, and wherever a boundary falls (inside a line, a CR-LF, a multi-byte
character, a U+2028 inside a string), the frame, the problems and the repairs are those
of one whole read."""

from __future__ import annotations

import codecs
import gzip
import json
from pathlib import Path

import pytest

from sessionval.errors import ParseError
from sessionval.io.jsonl import load_jsonl
from sessionval.io.text import iter_input_text, read_input_text
from tests import builders

CHUNKS = (1, 2, 3, 5, 7, 16, 61, 1 << 20)


def _lines() -> list[str]:
    s1 = builders.make_session("s1", queries=[["d1", "d2"], []])
    s1["queries"][0]["text"] = "caf\u00e9\u2028cr\u00e8me \u2029 \u0085 \U0001f600"
    s2 = builders.make_session("s2", topic="B", queries=[["d1", "d2", "d3"]])
    s2["queries"][0]["results"][2]["doc_id"] = "d1"  # repaired in lenient mode
    s2["ratings"] = {"sat": 2.0}
    s3 = builders.make_session("s3", queries=[["d9"]])
    s3["queries"][0]["results"][0]["rank"] = 2  # a gap
    s4 = builders.make_session("s4", queries=[["d1"]])
    s5 = builders.make_session("s1", queries=[["d7"]])  # repeats s1's id
    return [
        json.dumps(s1, ensure_ascii=False),
        json.dumps(s2),
        '{"session_id": "bad", "queries": [',  # invalid JSON
        "",
        json.dumps(s3),
        json.dumps(s4),
        json.dumps(s5),
        json.dumps(builders.make_session("s6")),
    ]


def _write(path: Path, eol: str = "\n") -> Path:
    path.write_bytes((eol.join(_lines()) + eol).encode("utf-8"))
    return path


def _outcome(path: Path, mode: str, **kw: int) -> tuple[object, ...]:
    loaded = load_jsonl(path, mode=mode, raise_problems=False, **kw)
    frame, report = loaded.frame, loaded.report  # type: ignore[arg-type]
    return frame, (
        report.summary_line(),
        report.rows_read,
        [(p.location, p.field, p.message, p.value, p.record) for p in report.problems],
        [(p.location, p.field, p.message, p.value, p.record) for p in report.repairs],
    )


@pytest.mark.parametrize("eol", ["\n", "\r\n"])
@pytest.mark.parametrize("mode", ["strict", "lenient"])
def test_every_chunk_and_batch_size_gives_the_same_load(tmp_path, mode, eol):
    path = _write(tmp_path / "s.jsonl", eol)
    whole, expected = _outcome(path, mode)
    for chunk, batch in [(1, 1), (2, 3), (3, 2), (5, 500), (7, 1), (61, 2), (1 << 20, 1)]:
        frame, got = _outcome(path, mode, chunk_bytes=chunk, batch_size=batch)
        assert got == expected, (chunk, batch)
        builders.assert_same_frame(whole, frame)


def test_the_whole_load_is_located(tmp_path):
    path = _write(tmp_path / "s.jsonl", "\r\n")
    frame, (summary, _, problems, repairs) = _outcome(path, "lenient", chunk_bytes=3, batch_size=2)
    assert summary == "7 records read = 3 sessions accepted + 4 rejected"
    assert [(loc, field) for loc, field, *_ in problems] == [
        ("line 1", "session_id"),
        ("line 3", ""),
        ("line 5", "queries[0].results[0].rank"),  # not again as "queries: too short"
        ("line 7", "session_id"),
    ]
    assert "session id repeated on line(s) 7" in problems[0][2]
    assert "duplicate session id (first on line 1)" in problems[3][2]
    assert [(loc, value) for loc, _, _, value, _ in repairs] == [("line 2", "'d1'")]
    assert frame.sessions["session_id"].astype(str).tolist() == ["s2", "s4", "s6"]
    assert frame.queries["text"].tolist()[0] == "q1"  # s1 is rejected with its U+2028


def test_u2028_inside_a_string_is_kept_across_chunks(tmp_path):
    line = json.dumps(builders.make_session("s1"), ensure_ascii=False)
    line = line.replace('"q1"', '"a\u2028b\u2029c\u0085d\u00e9"')
    path = tmp_path / "s.jsonl"
    path.write_bytes((line + "\r\n" + json.dumps(builders.make_session("s2")) + "\r\n").encode())
    for chunk in CHUNKS:
        loaded = load_jsonl(path, chunk_bytes=chunk, batch_size=1)
        frame, report = loaded.frame, loaded.report
        assert report.records_read == 2, chunk
        assert frame.queries["text"].tolist()[0] == "a\u2028b\u2029c\u0085d\u00e9", chunk


def test_repeated_id_at_and_across_a_batch_boundary(tmp_path):
    lines = [json.dumps(builders.make_session(f"s{i}")) for i in range(6)]
    lines[3] = json.dumps(builders.make_session("s1"))  # line 4 repeats line 2
    path = builders.write_jsonl(tmp_path / "s.jsonl", lines)
    for batch in (1, 2, 3, 4):
        loaded = load_jsonl(path, mode="lenient", batch_size=batch, chunk_bytes=5)
        frame, report = loaded.frame, loaded.report
        assert [(p.location, p.record) for p in report.problems] == [
            ("line 2", "s1"),
            ("line 4", "s1"),
        ], batch
        assert frame.sessions["session_id"].astype(str).tolist() == ["s0", "s2", "s4", "s5"]


@pytest.mark.parametrize("chunk", CHUNKS)
def test_a_bad_byte_is_located_whatever_the_chunk(tmp_path, chunk):
    good = json.dumps(builders.make_session("s1"), ensure_ascii=False).replace(
        "q1", "\u00e9t\u00e9"
    )
    path = tmp_path / "s.jsonl"
    path.write_bytes((good + "\n" + good + "\n").encode() + b'{"x": "caf\xe9"}\n')
    offset = len((good + "\n" + good + "\n").encode()) + len(b'{"x": "caf')
    with pytest.raises(ParseError, match=rf"s\.jsonl:3: byte offset {offset}: b'\\xe9' is not"):
        load_jsonl(path, chunk_bytes=chunk)


@pytest.mark.parametrize("chunk", CHUNKS)
def test_a_character_cut_at_the_end_is_located(tmp_path, chunk):
    path = tmp_path / "s.txt"
    path.write_bytes(b"ab\ncd\xc3")
    with pytest.raises(ParseError, match=r"s\.txt:2: byte offset 5: b'\\xc3' is not valid utf-8"):
        list(iter_input_text(path, chunk_bytes=chunk))


@pytest.mark.parametrize(
    ("name", "data", "encoding"),
    [
        ("utf8-bom", codecs.BOM_UTF8 + "é\u2028x\r\ny".encode(), None),
        ("utf16", codecs.BOM_UTF16_LE + "é\nx\U0001f600\r\n".encode("utf-16-le"), None),
        ("utf32", codecs.BOM_UTF32_BE + "é\nx".encode("utf-32-be"), "latin-1"),
        ("latin1", "é\nçà\n".encode("latin-1"), "latin-1"),
        ("gzip", gzip.compress("a\nb\u00e9\n".encode() * 50, mtime=0), None),
    ],
)
def test_streamed_text_is_the_whole_text(tmp_path, name, data, encoding):
    path = tmp_path / name
    path.write_bytes(data)
    whole = read_input_text(path, encoding)
    for chunk in CHUNKS:
        assert "".join(iter_input_text(path, encoding, chunk_bytes=chunk)) == whole, chunk


def test_streamed_text_keeps_the_file_errors(tmp_path):
    bad = tmp_path / "s.jsonl.gz"
    bad.write_bytes(b"not gzip")
    with pytest.raises(ParseError, match=r"named \.gz but not gzip-compressed"):
        list(iter_input_text(bad))
    cut = tmp_path / "cut.jsonl"
    cut.write_bytes(gzip.compress(b'{"a": 1}\n' * 100)[:-12])
    with pytest.raises(ParseError, match="not a valid gzip file"):
        list(iter_input_text(cut, chunk_bytes=16))
    with pytest.raises(ParseError, match="no such file"):
        list(iter_input_text(tmp_path / "absent"))
    with pytest.raises(ParseError, match="is not known to Python"):
        list(iter_input_text(cut, "klingon"))


def test_batches_of_different_widths_join(tmp_path, same_frame):
    # codes and integers are stored as narrow as each batch allows: 300 documents need
    # 16 bits, 2 need 8, a batch of empty queries has none; clicks differ in width too
    wide = builders.make_session("s1", queries=[[f"d{i}" for i in range(300)]])
    wide["queries"][0]["results"][5]["clicks"] = 30_000
    narrow = builders.make_session("s2", queries=[["d1", "d2"]])
    empty = builders.make_session("s3", queries=[[]])
    path = builders.write_jsonl(
        tmp_path / "s.jsonl", [wide, narrow, empty, narrow | {"session_id": "s4"}]
    )
    loaded = load_jsonl(path)
    whole, report = loaded.frame, loaded.report
    for batch in (1, 2, 3):
        loaded = load_jsonl(path, batch_size=batch)
        parts, report2 = loaded.frame, loaded.report
        same_frame(whole, parts)
        assert report2.summary_line() == report.summary_line()
    assert whole.results["clicks"].max() == 30_000
    assert whole.results["doc_id"].astype(str).tolist()[298:301] == ["d298", "d299", "d1"]


def test_documents_of_rejected_repeats_leave_no_category(tmp_path):
    lines = [
        builders.make_session("s1", queries=[["x", "a"]]),
        builders.make_session("s2", queries=[["b", "a", "x"]]),
        builders.make_session("s1", queries=[["z"]]),
    ]
    path = builders.write_jsonl(tmp_path / "s.jsonl", lines)
    for batch in (1, 500):
        frame = load_jsonl(path, mode="lenient", batch_size=batch).frame
        assert frame.results["doc_id"].cat.categories.tolist() == ["b", "a", "x"], batch

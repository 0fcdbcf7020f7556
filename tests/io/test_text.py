"""Shared text decoding: gzip by magic number, BOMs, encodings, located decoding errors."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from sessionval.errors import ParseError
from sessionval.io.text import open_input_binary, read_input_text


def test_gzip_is_read_by_magic_number_whatever_the_name(tmp_path: Path) -> None:
    for name in ("t.csv.gz", "t.csv"):
        p = tmp_path / name
        p.write_bytes(gzip.compress("a,b\n1,é\n".encode()))
        assert read_input_text(p) == "a,b\n1,é\n"


def test_a_gz_name_that_is_not_gzip_is_a_located_error(tmp_path: Path) -> None:
    p = tmp_path / "t.csv.gz"
    p.write_text("a,b\n")
    with pytest.raises(ParseError, match=r"t\.csv\.gz: named \.gz but not gzip"):
        read_input_text(p)


def test_truncated_gzip_is_a_located_error(tmp_path: Path) -> None:
    p = tmp_path / "t.csv.gz"
    p.write_bytes(gzip.compress(b"a,b\n1,2\n" * 100)[:30])
    with pytest.raises(ParseError, match="not a valid gzip file"):
        read_input_text(p)


@pytest.mark.parametrize("encoding", ["utf-8-sig", "utf-16", "utf-32"])
def test_byte_order_marks_select_the_encoding(tmp_path: Path, encoding: str) -> None:
    p = tmp_path / "q.txt"
    p.write_bytes("q1 0 dé 1\n".encode(encoding))
    assert read_input_text(p) == "q1 0 dé 1\n"
    assert open_input_binary(p).read() == "q1 0 dé 1\n".encode()


def test_non_utf8_byte_names_line_offset_and_the_option(tmp_path: Path) -> None:
    p = tmp_path / "q.txt"
    p.write_bytes(b"q1 0 d1 1\nq1 0 d\xe92 1\n")
    with pytest.raises(ParseError, match=r"q\.txt:2: byte offset 16: b'\\xe9'.*--encoding"):
        read_input_text(p)
    assert read_input_text(p, "latin-1").splitlines()[1] == "q1 0 dé2 1"
    assert open_input_binary(p, "cp1252").read().decode() == "q1 0 d1 1\nq1 0 dé2 1\n"


def test_unknown_encoding_and_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ParseError, match="not known to Python"):
        read_input_text(tmp_path / "x", "klingon")
    with pytest.raises(ParseError, match="no such file"):
        read_input_text(tmp_path / "absent.txt")
    with pytest.raises(ParseError, match="is a folder"):
        read_input_text(tmp_path)

"""TREC qrels and runs read in pieces of whole lines: same tables, same lines, bounded memory."""

from __future__ import annotations

import gzip
import tracemalloc
from pathlib import Path

import pandas as pd
import pytest

from sessionval.errors import JudgmentError, ParseError
from sessionval.io.trec import read_qrels, read_run, run_line_numbers

# pieces far smaller than a line, about a line, and larger than the file (one piece)
SIZES = (4, 5, 7, 11, 16, 23, 64, 1 << 20)

QRELS = (
    "T1 0 d1 1\r\n"  # CR-LF, cut between \r and \n by some sizes
    "\n"
    "  \t \n"  # spaces and tabs only: blank
    "T1\t0\tcaf\u00e9 2\r"  # a lone CR; a two-byte character cut by some sizes
    "T2 0 \u6587\u66f8 3\n"  # three-byte characters
    "T2  0   d9   0\n\n\n"
    "T3 0 d1 1"  # no line end at the end
)
RUN = (
    "T1 Q0 d1 1 2.5 tag\r\n\r\n"
    "T1 Q0 caf\u00e9 2 1.5 tag\r"
    "T2 Q0 \u6587\u66f8 1 -0.5 tag\n"
    "   \n"
    "T2 Q0 d9 2 -1e3 tag"
)


def _write(path: Path, text: str, *, encoding: str = "utf-8", gz: bool = False) -> Path:
    data = text.encode(encoding)
    path.write_bytes(gzip.compress(data) if gz else data)
    return path


@pytest.mark.parametrize("gz", [False, True])
@pytest.mark.parametrize("encoding", ["utf-8", "utf-8-sig", "latin-1", "utf-16"])
def test_every_piece_size_gives_the_same_tables(tmp_path: Path, gz: bool, encoding: str) -> None:
    qrels, run = QRELS, RUN
    if encoding == "latin-1":  # the CJK ids are not in latin-1
        qrels, run = (t.replace("\u6587\u66f8", "\u00c5ngstr\u00f6m") for t in (qrels, run))
    q = _write(tmp_path / "q.txt", qrels, encoding=encoding, gz=gz)
    r = _write(tmp_path / "r.run", run, encoding=encoding, gz=gz)
    given = None if encoding.startswith("utf-8") else encoding
    whole_q = read_qrels(q, encoding=given, chunk_bytes=1 << 30).table
    whole_r = read_run(r, encoding=given, chunk_bytes=1 << 30)
    assert whole_q["doc_id"].astype(str).tolist()[:2] == ["d1", "caf\u00e9"]
    assert len(whole_q) == 5 and len(whole_r) == 4
    for size in SIZES:
        pd.testing.assert_frame_equal(
            read_qrels(q, encoding=given, chunk_bytes=size).table, whole_q
        )
        pd.testing.assert_frame_equal(read_run(r, encoding=given, chunk_bytes=size), whole_r)


BAD = (
    "T1 0 d1 1\r\n"  # 1
    "T1 0 d2\n"  # 2: three fields
    "\r\n"  # 3
    "T1 0 d3 x\r"  # 4: not an integer
    "T1 0 d4 1 extra\n"  # 5: five fields
    "   \n"  # 6
    "T2 0 d1 2\n"  # 7
    "T2 0 d1 3\n"  # 8: a conflicting grade (lines 7, 8)
    "T2 0 d5 99999\n"  # 9: outside 16 bits
)


@pytest.mark.parametrize("size", SIZES)
def test_problems_are_on_the_same_lines_across_piece_boundaries(tmp_path: Path, size: int) -> None:
    q = _write(tmp_path / "q.txt", BAD)
    with pytest.raises(ParseError) as exc:
        read_qrels(q, chunk_bytes=size)
    msg = str(exc.value)
    with pytest.raises(ParseError) as whole:
        read_qrels(q)
    assert msg == str(whole.value)
    assert "q.txt:2: qrels line has 3 fields" in msg
    assert "q.txt:4: grade: must be an integer (got 'x')" in msg
    assert "q.txt:5: qrels line has 5 fields" in msg
    assert "q.txt:9: grade: must be an integer from -32768 to 32767" in msg
    assert "different grades (2, 3 on lines 7, 8)" in msg


@pytest.mark.parametrize("size", SIZES)
def test_lines_found_again_on_the_fast_path_cross_pieces(tmp_path: Path, size: int) -> None:
    """Well-formed lines (no piece split line by line): a later problem finds its line."""
    q = _write(tmp_path / "q.txt", "T 0 a 1\r\n\r\nT 0 b 1\rT 0 c 2\n\nT 0 a 2\n")
    with pytest.raises(JudgmentError, match=r"\(1, 2 on lines 1, 6\)"):
        read_qrels(q, chunk_bytes=size)
    r = _write(tmp_path / "r.run", RUN)
    assert run_line_numbers(r).tolist() == [1, 3, 4, 6]


def test_a_gzip_of_blank_lines_is_read_in_bounded_memory(tmp_path: Path) -> None:
    """RES-4: 64 MB of blank lines in a small gzip; only a piece is held at a time."""
    q = tmp_path / "q.txt.gz"
    with gzip.open(q, "wb", compresslevel=1) as f:
        block = b"\n" * (1 << 20)
        for _ in range(64):
            f.write(block)
        f.write(b"T1 0 d1 1\n")
    tracemalloc.start()
    try:
        table = read_qrels(q, chunk_bytes=1 << 20).table
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert table["doc_id"].astype(str).tolist() == ["d1"]
    assert peak < 8 << 20  # the whole file is 64 MB decompressed


@pytest.mark.parametrize("size", SIZES)
def test_a_bad_byte_is_located_whatever_the_piece_size(tmp_path: Path, size: int) -> None:
    q = _write(tmp_path / "q.txt", "T 0 a 1\nT 0 b 1\n")
    q.write_bytes(q.read_bytes() + b"T 0 caf\xe9 1\n")
    with pytest.raises(ParseError, match=r"q\.txt:3: byte offset 23: b'\\xe9' is not valid utf-8"):
        read_qrels(q, chunk_bytes=size)

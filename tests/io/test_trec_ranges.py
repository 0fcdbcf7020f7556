"""A TREC run read in byte ranges (``read_run_range``) reads as the whole file does."""

from __future__ import annotations

import pandas as pd
import pytest

from sessionval.errors import ParseError
from sessionval.io.text import check_utf8_range, count_line_ends, range_start
from sessionval.io.trec import read_run, read_run_range

RUN = (
    "\ufeffq1 Q0 d1 1 3.5 t\r\n"
    "\r\n"
    "q1 Q0 d2 2 2.5 t\n"
    "  \t \n"
    "q2\tQ0\td1\t1\t9 t\r"
    "q2 Q0 d\u00e9 2 1 t\n"
    "q10 Q0 d3 1 0.5 t"
)


def read_in_ranges(path, block: int) -> tuple[pd.DataFrame, list[int]]:
    """Every range of ``block`` bytes read as Dask reads it, the rows and lines joined."""
    import fsspec.utils

    data = path.read_bytes()
    tables, lines = [], []
    for offset in range(0, len(data), block):
        with path.open("rb") as f:
            part = fsspec.utils.read_block(f, offset, block, delimiter=b"\n")
        if part:
            table, line_at = read_run_range(part, path, offset)
            tables.append(table)
            lines += line_at().tolist()
    return pd.concat(tables, ignore_index=True), lines


@pytest.mark.parametrize("block", [1, 7, 16, 40, 1000])
def test_ranges_read_the_rows_and_lines_of_the_whole_file(tmp_path, block) -> None:
    path = tmp_path / "run.txt"
    path.write_bytes(RUN.encode("utf-8"))
    whole = read_run(path)
    got, lines = read_in_ranges(path, block)
    for col in ("query_id", "doc_id", "tag"):
        assert got[col].astype(str).tolist() == whole[col].astype(str).tolist()
    assert got["score"].tolist() == whole["score"].tolist()
    assert got["rank"].tolist() == whole["rank"].tolist()
    assert lines == [1, 3, 5, 6, 7]  # \r\n, \r and \n each end a line; blank lines count


def test_a_bad_field_in_a_later_range_names_its_line(tmp_path) -> None:
    path = tmp_path / "run.txt"
    path.write_bytes(RUN.replace("q2 Q0 d\u00e9 2 1 t", "q2 Q0 d4 x 1 t").encode("utf-8"))
    with pytest.raises(ParseError) as whole:
        read_run(path)
    with pytest.raises(ParseError) as ranged:
        read_in_ranges(path, 40)
    assert f"{path}:6: rank" in str(ranged.value)
    assert str(ranged.value) == str(whole.value)


def test_a_byte_that_is_not_utf8_is_located_in_the_file(tmp_path) -> None:
    path = tmp_path / "run.txt"
    data = RUN.encode("utf-8").replace("\u00e9".encode(), b"\xe9")
    path.write_bytes(data)
    start = data.index(b"q2 Q0 d\xe9")  # line 6 starts a range
    with pytest.raises(ParseError, match=r"run.txt:6: byte offset \d+: b'\\xe9'"):
        check_utf8_range(data[start:], path, start, lambda: count_line_ends(path, start))


def test_range_start_is_after_the_next_line_end(tmp_path) -> None:
    path = tmp_path / "run.txt"
    path.write_bytes(b"ab\ncd\r\nef")
    # as fsspec's read_block: after the first \n at or after the offset (a line starting at
    # the offset belongs to the range before), the end of the file when there is none
    assert [range_start(path, k) for k in range(10)] == [0, 3, 3, 7, 7, 7, 7, 9, 9, 9]
    assert [count_line_ends(path, k) for k in (0, 3, 7, 9)] == [0, 1, 2, 2]

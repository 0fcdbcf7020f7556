from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from sessionval.errors import InputFormatError, ParseError
from sessionval.io.flat import read_flat_table
from sessionval.validate.flat import frame_from_flat
from tests.builders import small_flat


def test_csv_and_parquet_give_the_same_frame(tmp_path: Path):
    df = small_flat(clicks=[1, 0, None, 2], dwell=[3.5, None, None, 1.0])
    df.to_csv(tmp_path / "f.csv", index=False)
    df.to_parquet(tmp_path / "f.parquet", index=False)
    a = frame_from_flat(read_flat_table(tmp_path / "f.csv")).frame
    b = frame_from_flat(read_flat_table(tmp_path / "f.parquet")).frame
    for name in ("sessions", "queries", "results"):
        pd.testing.assert_frame_equal(getattr(a, name), getattr(b, name), check_categorical=False)


def test_csv_errors(tmp_path: Path):
    p = tmp_path / "e.csv"
    p.write_text("")
    with pytest.raises(ParseError, match=r"e\.csv: file is empty"):
        read_flat_table(p)
    p.write_bytes(b"session_id,doc_id\ns1,caf\xe9\n")
    with pytest.raises(ParseError, match=r"e.csv:2: byte offset 24: .* is not valid utf-8"):
        read_flat_table(p)
    with pytest.raises(InputFormatError, match="unknown table format"):
        (tmp_path / "x.xlsx").write_text("a")
        read_flat_table(tmp_path / "x.xlsx")

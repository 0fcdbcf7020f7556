from __future__ import annotations

from pathlib import Path

import pandas as pd

from sessionval.validate.flat import frame_from_flat
from sessionval.validate.sources import ParquetColumns
from tests.builders import small_flat


def test_parquet_bulk_path_matches_dataframe_path(tmp_path: Path):
    df = small_flat(
        query_text=["a b", "a b", "c", "d"],
        rating_sat=[4.0, 4.0, 4.0, 2.0],
        session_start=["2020-01-01T10:00:00Z"] * 3 + [None],
        qrels_id=["k1", "k1", None, "k2"],
    )
    df.to_parquet(tmp_path / "f.parquet", index=False)
    a, _ = frame_from_flat(df)
    b, _ = frame_from_flat(ParquetColumns(tmp_path / "f.parquet"))
    for name in ("sessions", "queries", "results"):
        pd.testing.assert_frame_equal(getattr(a, name), getattr(b, name), check_categorical=False)
    assert b.queries["qrels_id"].astype(str).tolist() == ["k1", "T", "k2"]

"""A read at top X of a Parquet file: row groups chosen by the rank statistics (issue 26, 5)."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from sessionval.validate.flat import frame_from_flat
from sessionval.validate.sources import ParquetColumns, rank_row_groups
from tests.builders import small_flat


def _groups(ranks: list[list[int | None]], **kw: object) -> tuple[list[int], bool] | None:
    buf = io.BytesIO()
    writer = pq.ParquetWriter(buf, pa.schema([("rank", pa.int32())]), **kw)  # type: ignore[arg-type]
    for g in ranks:
        writer.write_table(pa.table({"rank": pa.array(g, pa.int32())}))
    writer.close()
    return rank_row_groups(pq.ParquetFile(buf).metadata, 2)


def test_row_groups_are_skipped_kept_whole_or_filtered_by_their_statistics():
    # top-first: the deep group is skipped, the top one needs no filter
    assert _groups([[1, 2, 1], [3, 4, 3]]) == ([0], True)
    # session order: every group holds ranks on both sides of X
    assert _groups([[1, 2, 3], [1, 2, 3]]) == ([0, 1], False)
    # a deep group with a query without results (a null rank) must be read and filtered
    assert _groups([[1, 2], [3, None]]) == ([0, 1], False)
    # a group of queries without results only is kept whole
    assert _groups([[1, 2], [None, None]]) == ([0, 1], True)


def test_without_statistics_or_integer_ranks_every_row_is_filtered():
    assert _groups([[1, 2], [3, 4]], write_statistics=False) is None
    buf = io.BytesIO()
    pq.write_table(pa.table({"rank": pa.array(["1", "2"])}), buf)
    assert rank_row_groups(pq.ParquetFile(buf).metadata, 2) is None


def _deep_flat() -> pd.DataFrame:
    """Six sessions, lists of 1-5 results and one query without results."""
    rows = []
    for s in range(6):
        for q, depth in enumerate([5, 0, 3] if s % 2 else [4, 2]):
            for r in range(1, depth + 1) if depth else [None]:
                rows.append((f"s{s}", q + 1, r, None if r is None else f"d{(s * 7 + r) % 9}x"))
    df = pd.DataFrame(rows, columns=["session_id", "query_pos", "rank", "doc_id"])
    return small_flat(**{c: df[c] for c in df}, user_id="u", topic_id="T", system_id="S")


@pytest.mark.parametrize("layout", ["session-order", "top-first", "no-statistics"])
@pytest.mark.parametrize("x", [1, 2, 4])
def test_a_top_read_gives_the_frame_of_the_rows_kept(tmp_path: Path, layout: str, x: int):
    flat = _deep_flat()
    rank = flat["rank"].to_numpy(dtype=float)
    top = np.isnan(rank) | (rank <= x)
    table = pa.Table.from_pandas(flat.astype({"rank": "Int32"}), preserve_index=False)
    path = tmp_path / "f.parquet"
    if layout == "top-first":  # the top rows in their own row groups, then the deep ones
        table = pa.concat_tables([table.filter(pa.array(top)), table.filter(pa.array(~top))])
        pq.write_table(table, path, row_group_size=int(top.sum()))
    else:
        pq.write_table(table, path, row_group_size=7, write_statistics=layout != "no-statistics")
    got = frame_from_flat(ParquetColumns(path, max_rank=x)).frame
    want = frame_from_flat(flat[top].reset_index(drop=True)).frame
    for name in ("sessions", "queries", "results"):
        pd.testing.assert_frame_equal(
            getattr(got, name), getattr(want, name), check_categorical=False, check_dtype=False
        )
    assert got.results["doc_id"].astype(str).tolist() == want.results["doc_id"].astype(str).tolist()

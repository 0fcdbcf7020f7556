"""The per-position table written block by block: the same file, one block's memory."""

from __future__ import annotations

import errno
import threading

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

from sessionval.errors import WriteError, writing
from sessionval.evaluation.config import SessionConfig
from sessionval.evaluation.session import evaluate
from sessionval.workflow import steps
from sessionval.workflow.outputs import PARQUET_ROW_GROUP, RunOutputs
from tests import builders


def test_parquet_blocks_are_the_bytes_of_to_parquet(tmp_path):
    # a block of a row group's rows, then the rest: pandas' own file, byte for byte
    n = PARQUET_ROW_GROUP + 5
    rng = np.random.default_rng(3)
    table = pd.DataFrame(
        {
            "session_id": pd.Categorical.from_codes(
                rng.integers(0, 50, n), [f"s{i}" for i in range(50)]
            ),
            "doc_rank": pd.array(
                np.where(rng.random(n) < 0.1, None, rng.integers(1, 9, n)), dtype="Int32"
            ),
            "gain": rng.random(n),
        }
    )
    table.attrs = {"config": {"b": 2.0}}
    table.to_parquet(tmp_path / "whole.parquet", index=False)
    outputs = RunOutputs(tmp_path / "out", manifest=None)
    cut = PARQUET_ROW_GROUP
    blocks = []
    for part in (table.iloc[:cut], table.iloc[cut:].reset_index(drop=True)):
        part.attrs = dict(table.attrs)
        blocks.append(part)
    path = outputs.write_parquet_blocks("t.parquet", iter(blocks))
    assert path.read_bytes() == (tmp_path / "whole.parquet").read_bytes()
    assert outputs.written == ["t.parquet"]
    empty = outputs.write_parquet_blocks("e.parquet", [table.iloc[:0]])
    assert pd.read_parquet(empty).columns.tolist() == table.columns.tolist()
    outputs.discard()


def _evaluation():
    frame = builders.frame(
        [
            ("s1", "u1", "A", "S1", [["d1", "d2"], ["d3"]]),
            ("s2", "u2", "A", "S2", [["d2", "d1", "d4"]]),
            ("s3", "u1", "B", "S2", [["d5"], ["d6", "d1"], ["d2"]]),
        ]
    )
    judgments = builders.judgments([("A", "d1", 3), ("A", "d2", 1), ("B", "d6", 2)])
    return evaluate(frame, judgments, SessionConfig())


def test_per_position_rows_are_slices_of_the_whole_table():
    ev = _evaluation()
    whole = ev.per_position()
    parts = [ev.per_position(rows=(lo, min(lo + 4, len(whole)))) for lo in range(0, len(whole), 4)]
    pd.testing.assert_frame_equal(pd.concat(parts, ignore_index=True), whole, check_exact=True)
    assert all(p.attrs == whole.attrs for p in parts)
    assert ev.per_position() is whole  # the whole table stays cached, the blocks are not


def test_per_position_rows_are_clipped_to_the_table_as_a_slice_is():
    ev = _evaluation()
    whole = ev.per_position()
    n = len(whole)
    tail = ev.per_position(rows=(n - 2, n + 1_000_000))
    pd.testing.assert_frame_equal(tail, whole.iloc[n - 2 :].reset_index(drop=True))
    assert len(ev.per_position(rows=(n + 5, n + 9))) == 0
    assert len(ev.per_position(rows=(3, 1))) == 0


def test_a_large_per_position_table_is_written_block_by_block(tmp_path, monkeypatch):
    # Parquet alone (more rows than large_rows): block by block, the table read back the same
    ev = _evaluation()
    whole = ev.per_position().copy()
    ev.forget_per_position()
    monkeypatch.setattr(steps, "PARQUET_ROW_GROUP", 4)
    outputs = RunOutputs(tmp_path)
    tables = steps.write_tables(outputs, ev, formats=("csv", "parquet"), large_rows=5)
    path = tables.files["per_position"]["parquet"]
    assert tables.files["per_position"] == {"parquet": path}
    assert pq.ParquetFile(path).metadata.num_row_groups == -(-len(whole) // 4)
    whole.to_parquet(tmp_path / "whole.parquet", index=False)
    expected = pd.read_parquet(tmp_path / "whole.parquet")
    pd.testing.assert_frame_equal(pd.read_parquet(path), expected, check_exact=True)
    assert "tables/per_position.parquet" in outputs.written


def test_a_frame_handed_to_the_writer_is_written_as_it_was(tmp_path):
    """``write_frame(background=)``: a change made to the table after it is handed over is
    not written (the writer has its own shallow copy), and ``finish`` waits for the file."""
    outputs = RunOutputs(tmp_path / "out")
    table = pd.DataFrame({"a": [1.0, 2.0], "b": ["x", "y"]})
    table.attrs = {"config": {"cutoff": 10}}
    expected = tmp_path / "expected.parquet"
    table.to_parquet(expected, index=False)
    release = threading.Event()
    outputs.writes.submit(release.wait)  # the file waits behind an earlier one
    outputs.write_frame("tables/t.parquet", table, background=outputs.writes)
    table["a"] = [9.0, 9.0]
    table.loc[0, "b"] = "changed"
    release.set()
    outputs.finish()
    assert (tmp_path / "out" / "tables" / "t.parquet").read_bytes() == expected.read_bytes()


def test_a_failed_write_on_the_run_writer_fails_finish_and_moves_nothing(tmp_path):
    out = tmp_path / "out"
    outputs = RunOutputs(out)
    outputs.write_text("report.html", "new")

    def refused() -> None:
        with writing(outputs.root / "tables" / "t.parquet"):
            raise OSError(errno.EFBIG, "File too large")

    outputs.writes.submit(refused)
    with outputs, pytest.raises(WriteError, match=r"t\.parquet: cannot write"):
        outputs.finish()
    assert not (out / "report.html").exists()

"""Parquet layouts: files of whole sessions (``--partition-rows``) and top ranks first."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

import sessionval as sv
from sessionval.cli import main
from sessionval.errors import InputFormatError, WriteError
from sessionval.frame import LoadedStudy
from sessionval.io import parquet_layout
from sessionval.io.parquet_layout import (
    TOP_FIRST_KEY,
    partition_chunks,
    top_first_of,
    write_parquet_file,
)
from sessionval.io.study import load_study
from sessionval.io.writers import write_flat, write_partitions
from tests import builders

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "sample_logs"


@pytest.fixture(scope="module")
def sample() -> LoadedStudy:
    return load_study(SAMPLE / "sessions.parquet", qrels=SAMPLE / "qrels.txt")


def plain_values(table: pd.DataFrame) -> pd.DataFrame:
    """Categoricals as strings: a layout keeps the values, not the categories' order."""
    return table.astype({c: str for c in table.columns if table[c].dtype == "category"})


def assert_same_tables(a: sv.SessionFrame, b: sv.SessionFrame) -> None:
    for name in ("sessions", "queries", "results"):
        pd.testing.assert_frame_equal(
            plain_values(getattr(a, name)), plain_values(getattr(b, name)), check_exact=True
        )


def test_partition_chunks_hold_whole_sessions_of_about_n_rows(sample):
    frame = sample.frame
    parts = partition_chunks(frame, 5000, chunk_rows=1000)
    rows = [sum(c.results.stop - c.results.start for c in p) for p in parts]
    assert sum(rows) == frame.n_results
    assert max(rows) <= 5000 and min(rows[:-1]) > 5000 - 1000  # each full but the last
    sessions = [c.sessions for p in parts for c in p]
    # the chunks tile the sessions in order: each starts where the last one stopped
    assert [s.start for s in sessions] == [0, *(s.stop for s in sessions[:-1])]
    assert sessions[-1].stop == frame.n_sessions
    # a session longer than N is a partition of its own, never split
    longest = int(frame.queries.groupby("session_id", observed=True)["n_results"].sum().max())
    one_each = partition_chunks(frame, 1)
    assert len(one_each) == frame.n_sessions and longest > 1
    with pytest.raises(InputFormatError, match="at least 1"):
        partition_chunks(frame, 0)


def test_partitions_read_back_as_the_single_file(sample, tmp_path):
    single = tmp_path / "one.parquet"
    write_flat(sample.frame, single, judgments=sample.judgments)
    out = tmp_path / "parts"
    written = write_partitions(
        sample.frame, out, partition_rows=4000, judgments=sample.judgments, name="sample"
    )
    files = sorted(out.glob("part-*.parquet"))
    assert written.sessions == out and written.study == out / "study.json"
    assert [p.name for p in files] == [f"part-{i:05d}.parquet" for i in range(len(files))]
    assert len(files) == -(-sample.frame.n_results // 4000) or len(files) > 1
    one = load_study(single, qrels=single.with_suffix(".qrels"))
    parts = load_study(out, qrels=written.qrels)
    assert_same_tables(one.frame, parts.frame)
    assert parts.study.name == "sample"
    # the books add up over the files: every session read and accepted once
    assert parts.report.records_read == one.report.records_read == sample.frame.n_sessions
    assert parts.report.sessions_accepted == one.report.sessions_accepted
    assert parts.report.sessions_rejected == 0 and parts.report.rows_read == one.report.rows_read
    # every session sits in exactly one file, its rows together
    owners: dict[str, int] = {}
    for i, f in enumerate(files):
        sids = pq.read_table(f, columns=["session_id"]).column(0).to_pandas().astype(str)
        assert len(sids) <= 4000 or len(sids.unique()) == 1
        for s in sids.unique():
            assert owners.setdefault(s, i) == i
    assert len(owners) == sample.frame.n_sessions


def test_partitions_refuse_a_folder_with_other_parquet_files(sample, tmp_path):
    out = tmp_path / "parts"
    out.mkdir()
    (out / "old.parquet").write_bytes(b"x")
    with pytest.raises(InputFormatError, match=r"old\.parquet, which would be read as partitions"):
        write_partitions(sample.frame, out, partition_rows=10_000)
    assert sorted(p.name for p in out.iterdir()) == ["old.parquet"]


def test_an_interrupted_partition_write_leaves_no_file(sample, tmp_path, monkeypatch):
    out = tmp_path / "parts"
    calls = {"n": 0}
    real = parquet_layout.flat_chunk

    def failing(frame, c):
        calls["n"] += 1
        if calls["n"] == 4:
            raise OSError(28, "No space left on device")
        return real(frame, c)

    monkeypatch.setattr(parquet_layout, "flat_chunk", failing)
    # named by the file it was writing (exit code 2 on the command line), not its temporary name
    with pytest.raises(WriteError, match=r"parts/part-00001\.parquet: cannot write: No space"):
        write_partitions(sample.frame, out, partition_rows=3000, chunk_rows=1000)
    assert calls["n"] == 4 and list(out.iterdir()) == []


def test_top_first_row_groups_are_skipped_by_a_top_x_read(sample, tmp_path):
    x = 3
    path = write_parquet_file(
        sample.frame, tmp_path / "top.parquet", top_first=x, row_group_rows=500
    )
    assert top_first_of(path) == x
    assert pq.read_schema(path).metadata[TOP_FIRST_KEY] == b"3"
    meta = pq.ParquetFile(path).metadata
    rank_col = meta.schema.to_arrow_schema().get_field_index("rank")
    stats = [meta.row_group(i).column(rank_col).statistics for i in range(meta.num_row_groups)]
    top = [s.max <= x for s in stats]
    # the top band first (the queries without results have no rank), then the deep band
    assert top == sorted(top, reverse=True) and 0 < sum(top) < len(top)
    assert all(s.min > x and s.null_count == 0 for s, t in zip(stats, top, strict=True) if not t)
    # the filter the loader uses keeps only the top row groups: the deep ones are never decoded
    where = (pc.field("rank") <= x) | pc.field("rank").is_null()
    kept = next(iter(ds.dataset(path).get_fragments())).subset(where).row_groups
    assert [g.id for g in kept] == [i for i, t in enumerate(top) if t]
    ranks = sample.frame.results["rank"].to_numpy()
    empty = int((sample.frame.queries["n_results"] == 0).sum())
    assert sum(meta.row_group(g.id).num_rows for g in kept) == int((ranks <= x).sum()) + empty


@pytest.mark.parametrize("max_rank", [None, 2, 3, 5])
def test_top_first_reads_give_the_plain_files_frame_and_scores(sample, tmp_path, max_rank):
    plain = write_parquet_file(sample.frame, tmp_path / "plain.parquet")
    top = write_parquet_file(sample.frame, tmp_path / "top.parquet", top_first=3)
    loaded = sv.load_sessions(plain, max_rank=max_rank)
    a, ra = loaded.frame, loaded.report
    loaded = sv.load_sessions(top, max_rank=max_rank)
    b, rb = loaded.frame, loaded.report
    assert_same_tables(a, b)
    assert (ra.records_read, ra.sessions_accepted, ra.rows_read) == (
        rb.records_read,
        rb.sessions_accepted,
        rb.rows_read,
    )
    config = sv.SessionConfig(cutoff=max_rank or 10)
    pd.testing.assert_frame_equal(
        plain_values(sv.evaluate(a, sample.judgments, config).per_session()),
        plain_values(sv.evaluate(b, sample.judgments, config).per_session()),
        check_exact=True,
    )


def test_top_first_with_partitions(sample, tmp_path):
    out = tmp_path / "parts"
    write_partitions(sample.frame, out, partition_rows=6000, top_first=10)
    files = sorted(out.glob("part-*.parquet"))
    assert len(files) > 1 and all(top_first_of(f) == 10 for f in files)
    for max_rank in (None, 10):
        back = load_study(out, max_rank=max_rank)
        ref = sv.load_sessions(SAMPLE / "sessions.parquet", max_rank=max_rank).frame
        assert_same_tables(ref, back.frame)


def test_top_first_needs_parquet_and_a_positive_rank(sample, tmp_path):
    with pytest.raises(InputFormatError, match="for Parquet, not csv"):
        write_flat(sample.frame, tmp_path / "t.csv", top_first=10)
    with pytest.raises(InputFormatError, match="at least 1"):
        write_parquet_file(sample.frame, tmp_path / "t.parquet", top_first=0)
    assert top_first_of(write_parquet_file(sample.frame, tmp_path / "p.parquet")) is None


def test_an_empty_frame_writes_one_empty_partition(tmp_path):
    frame = builders.frame([("s1", "u", "T", "S", [["d1"]])])
    empty = frame.__class__(
        **{
            **frame.__dict__,
            "sessions": frame.sessions.iloc[:0],
            "queries": frame.queries.iloc[:0],
            "results": frame.results.iloc[:0],
        }
    )
    write_partitions(empty, tmp_path / "e", partition_rows=10, top_first=2)
    (only,) = sorted((tmp_path / "e").glob("*.parquet"))
    assert pq.read_metadata(only).num_rows == 0 and top_first_of(only) == 2


def test_convert_partition_rows_and_top_first(tmp_path, capsys):
    src = SAMPLE / "sessions.parquet"
    out = tmp_path / "parts"
    args = ["convert", str(src), "--qrels", str(SAMPLE / "qrels.txt"), "--to", "parquet"]
    assert main([*args, "--out", str(out), "--partition-rows", "8000", "--top-first", "10"]) == 0
    said = capsys.readouterr().out
    assert f"wrote {out}, {out / 'study.json'}, {out / 'qrels.txt'}" in said
    files = sorted(out.glob("part-*.parquet"))
    assert len(files) > 1 and all(top_first_of(f) == 10 for f in files)
    back = load_study(out, qrels=out / "qrels.txt")
    one = load_study(src, qrels=SAMPLE / "qrels.txt")
    assert_same_tables(one.frame, back.frame)
    # again with larger partitions: the files of the first run that are not written again go
    assert main([*args, "--out", str(out), "--partition-rows", "100000"]) == 0
    assert sorted(p.name for p in out.glob("*.parquet")) == ["part-00000.parquet"]
    assert top_first_of(out / "part-00000.parquet") is None
    single = tmp_path / "top.parquet"
    assert main([*args, "--out", str(single), "--top-first", "5"]) == 0
    assert top_first_of(single) == 5
    assert np.array_equal(
        np.sort(pq.read_table(single, columns=["rank"]).column(0).to_numpy(zero_copy_only=False)),
        np.sort(pq.read_table(src, columns=["rank"]).column(0).to_numpy(zero_copy_only=False)),
        equal_nan=True,
    )


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--to", "csv", "--partition-rows", "10"], "--partition-rows writes Parquet"),
        (["--to", "jsonl", "--top-first", "10"], "--top-first writes Parquet"),
        (["--to", "parquet", "--partition-rows", "0"], "0 is not in the range x>=1"),
        (["--to", "parquet", "--top-first", "-1"], "-1 is not in the range x>=1"),
        (["--to", "parquet"], "--to parquet writes one file; name it with the .parquet suffix"),
        (["--to", "csv"], "(for example o.csv) so that it reads back"),
    ],
)
def test_convert_layout_usage_errors(tmp_path, capsys, extra, message):
    out = tmp_path / "o"
    assert main(["convert", str(SAMPLE / "sessions.parquet"), "--out", str(out), *extra]) == 2
    assert message in capsys.readouterr().err
    assert not out.exists()

"""A study partitioned by session over Parquet files: validated file by file, then combined."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from sessionval.errors import InputFormatError, ParseError, ValidationFailed
from sessionval.io.formats import detect_format, load_input
from sessionval.io.partitioned import (
    PARTITIONED,
    combine_frames,
    load_partitioned_study,
    partition_files,
)
from sessionval.validate.flat import frame_to_flat
from tests import builders

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "sample_logs"


@pytest.fixture(scope="module")
def sample_flat() -> pd.DataFrame:
    return pd.read_parquet(SAMPLE / "sessions.parquet")


def plain_values(table: pd.DataFrame) -> pd.DataFrame:
    """Categoricals as strings: partitions keep the values, not the categories' order."""
    return table.astype({c: str for c in table.columns if table[c].dtype == "category"})


def test_partitions_give_the_studys_frame_and_books(sample_flat, tmp_path):
    files = builders.write_partitions(sample_flat, tmp_path / "parts", 3)
    shutil.copy(SAMPLE / "study.json", tmp_path / "parts" / "study.json")
    one = load_input(SAMPLE / "sessions.parquet", qrels=SAMPLE / "qrels.txt")
    parts = load_input(tmp_path / "parts", qrels=SAMPLE / "qrels.txt")
    assert detect_format(tmp_path / "parts") == PARTITIONED
    assert partition_files(tmp_path / "parts") == files
    for name in ("sessions", "queries", "results"):
        pd.testing.assert_frame_equal(
            plain_values(getattr(parts.frame, name)),
            plain_values(getattr(one.frame, name)),
            check_exact=True,
        )
    r = parts.report
    assert (r.records_read, r.sessions_accepted, r.sessions_rejected) == (120, 120, 0)
    assert r.rows_read == one.report.rows_read
    assert r.source == str(tmp_path / "parts")
    assert parts.study.name == one.study.name  # study.json beside the partitions
    # the three tables share one session dtype, in file order
    dtype = parts.frame.sessions["session_id"].dtype
    assert (
        parts.frame.queries["session_id"].dtype == dtype == parts.frame.results["session_id"].dtype
    )
    assert parts.unjudged == one.unjudged


def test_a_glob_and_a_sessions_subfolder_are_partitioned_inputs(sample_flat, tmp_path):
    builders.write_partitions(sample_flat, tmp_path / "study" / "sessions", 2)
    shutil.copy(SAMPLE / "study.json", tmp_path / "study" / "study.json")
    whole = load_input(tmp_path / "study", qrels=SAMPLE / "qrels.txt")
    assert whole.frame.n_sessions == 120 and whole.study.name.startswith("synthetic portal")
    pattern = str(tmp_path / "study" / "sessions" / "part-*.parquet")
    assert detect_format(pattern) == PARTITIONED
    globbed = load_input(pattern, qrels=SAMPLE / "qrels.txt")
    builders.assert_same_frame(globbed.frame, whole.frame)
    # only the first file
    first = load_input(str(tmp_path / "study" / "sessions" / "part-0000[0].parquet"))
    assert first.frame.n_sessions == 60
    with pytest.raises(ParseError, match="no file matches this pattern"):
        detect_format(str(tmp_path / "nothing-*.parquet"))


def test_lenient_books_add_up_and_problems_name_their_file(sample_flat, tmp_path):
    flat = sample_flat.copy()
    sid = flat["session_id"].astype(str)
    # one bad rank in the first session of the last part, one in the first part
    last_part_session = sid.unique()[100]
    flat.loc[flat.index[(sid == last_part_session).to_numpy()][0], "rank"] = 0
    flat.loc[flat.index[0], "rank"] = -3
    files = builders.write_partitions(flat, tmp_path / "p", 3)
    loaded = load_partitioned_study(tmp_path / "p", mode="lenient")
    r = loaded.report
    assert (r.records_read, r.sessions_accepted, r.sessions_rejected) == (120, 118, 2)
    assert r.records_read == r.sessions_accepted + r.sessions_rejected
    assert loaded.frame.n_sessions == 118
    assert {p.source for p in r.problems} == {str(files[0]), str(files[2])}
    assert set(r.rejects["record"]) == {sid.iloc[0], last_part_session}
    # strict: the problems of every failing partition, together
    with pytest.raises(ValidationFailed) as err:
        load_partitioned_study(tmp_path / "p")
    assert {p.source for p in err.value.problems} == {str(files[0]), str(files[2])}


def test_a_session_in_two_files_is_an_error_naming_both(sample_flat, tmp_path):
    files = builders.write_partitions(sample_flat, tmp_path / "p", 2)
    head = pd.read_parquet(files[0])
    first = str(head["session_id"].iloc[0])
    again = head[head["session_id"].astype(str) == first]
    pd.concat([pd.read_parquet(files[1]), again], ignore_index=True).to_parquet(files[1])
    with pytest.raises(InputFormatError) as err:
        load_partitioned_study(tmp_path / "p")
    msg = str(err.value)
    assert f"session {first!r} is in {files[0]} and {files[1]}" in msg
    assert "1 session(s) are split" in msg


def test_no_partition_is_a_located_error(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(ParseError, match=r"empty: no Parquet partition"):
        partition_files(tmp_path / "empty")
    with pytest.raises(InputFormatError, match="no partition to combine"):
        combine_frames([], source="x")


def test_one_partition_is_the_file_itself(tmp_path):
    flat = frame_to_flat(builders.frame([("s1", "u", "T", "S", [["a", "b"], []])]))
    builders.write_partitions(flat, tmp_path / "p", 1)
    loaded = load_partitioned_study(tmp_path / "p")
    assert loaded.frame.source == str(tmp_path / "p")
    assert loaded.frame.queries["n_results"].tolist() == [2, 0]
    assert np.array_equal(loaded.frame.results["query_idx"].to_numpy(), [0, 0])


def test_the_mapper_loads_the_partitions(sample_flat, tmp_path):
    builders.write_partitions(sample_flat, tmp_path / "p", 4)
    seen: list[Path] = []

    def mapper(fn, files):
        seen.extend(files)
        return [fn(f) for f in reversed(files)][::-1]

    a = load_partitioned_study(tmp_path / "p", mapper=mapper)
    b = load_partitioned_study(tmp_path / "p")
    assert len(seen) == 4
    builders.assert_same_frame(a.frame, b.frame)


def test_progress_names_each_partition(sample_flat, tmp_path):
    builders.write_partitions(sample_flat, tmp_path / "p", 3)
    seen: list[str] = []
    load_partitioned_study(tmp_path / "p", progress=seen.append)
    assert seen == [
        "loading 3 partitions",
        "partition 1/3: part-00000.parquet",
        "partition 2/3: part-00001.parquet",
        "partition 3/3: part-00002.parquet",
        "combining partitions",
    ]


def test_partitions_may_differ_in_optional_columns(sample_flat, tmp_path):
    """Campaign 3: a partition without ``title`` (or with another rating) was a KeyError."""
    files = builders.write_partitions(sample_flat, tmp_path / "parts", 2)
    first, second = pd.read_parquet(files[0]), pd.read_parquet(files[1])
    first["title"] = "a title"
    second["rating_effort"] = 3.0
    first.to_parquet(files[0])
    second.to_parquet(files[1])
    parts = load_input(tmp_path / "parts", qrels=SAMPLE / "qrels.txt")
    first_sessions = first["session_id"].nunique()
    res = parts.frame.results
    n_first = int(res["session_id"].isin(first["session_id"]).sum())
    assert (res["title"].iloc[:n_first] == "a title").all()
    assert res["title"].iloc[n_first:].isna().all()
    ratings = [c for c in parts.frame.sessions.columns if c.startswith("rating_")]
    assert ratings == sorted(ratings) and "rating_effort" in ratings
    effort = parts.frame.sessions["rating_effort"]
    assert effort.iloc[:first_sessions].isna().all() and (effort.iloc[first_sessions:] == 3).all()

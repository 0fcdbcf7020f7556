from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from sessionval.errors import InputFormatError, ParseError, SessionvalError, ValidationFailed
from sessionval.io.study import load_study
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
    a = frame_from_flat(df).frame
    b = frame_from_flat(ParquetColumns(tmp_path / "f.parquet")).frame
    for name in ("sessions", "queries", "results"):
        pd.testing.assert_frame_equal(getattr(a, name), getattr(b, name), check_categorical=False)
    assert b.queries["qrels_id"].astype(str).tolist() == ["k1", "T", "k2"]


# --- malformed Parquet (issue 10: F3, T10, T11): located errors, never an Arrow traceback


def _table(**columns):
    import pyarrow as pa

    base = {
        "session_id": pa.array(["s1", "s1"]),
        "user_id": pa.array(["u", "u"]),
        "topic_id": pa.array(["T", "T"]),
        "system_id": pa.array(["S", "S"]),
        "query_pos": pa.array([1, 1]),
        "rank": pa.array([1, 2]),
        "doc_id": pa.array(["d1", "d2"]),
    }
    base.update(columns)
    return pa.table(base)


def test_parquet_duplicate_column_names_are_a_located_error(tmp_path: Path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    t = _table()
    t = t.append_column("rank", pa.array([3, 4]))
    pq.write_table(t, tmp_path / "dup.parquet")
    with pytest.raises(ParseError, match=r"dup\.parquet: column\(s\) 'rank' appear more than once"):
        ParquetColumns(tmp_path / "dup.parquet")


@pytest.mark.parametrize(
    ("column", "values", "kind"),
    [
        ("doc_id", [[1, 2], [3]], "list<"),
        ("user_id", [{"a": 1}, {"a": 2}], "struct<"),
        ("rank", [True, False], "bool"),
        ("query_pos", [b"1", b"\xff"], "binary"),
    ],
)
def test_parquet_nested_or_wrong_typed_column_names_column_and_allowed_types(
    tmp_path: Path, column, values, kind
):
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(_table(**{column: pa.array(values)}), tmp_path / "t.parquet")
    with pytest.raises(InputFormatError) as err:
        load_study(tmp_path / "t.parquet")
    msg = str(err.value)
    assert f"column {column!r} has Parquet type {kind}" in msg and "allowed:" in msg


def test_parquet_binary_ids_are_decoded_not_rendered_as_bytes(tmp_path: Path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    t = _table(session_id=pa.array([b"s1", b"s1"]), doc_id=pa.array([b"d1", b"caf\xc3\xa9"]))
    pq.write_table(t, tmp_path / "b.parquet")
    frame = load_study(tmp_path / "b.parquet").frame
    assert frame.sessions["session_id"].astype(str).tolist() == ["s1"]
    assert frame.results["doc_id"].astype(str).tolist() == ["d1", "café"]


def test_parquet_binary_that_is_not_utf8_names_column_and_row(tmp_path: Path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(_table(doc_id=pa.array([b"d1", b"\xff\xfe"])), tmp_path / "b.parquet")
    with pytest.raises(ParseError, match=r"column 'doc_id' holds bytes that are not valid UTF-8 "):
        load_study(tmp_path / "b.parquet")
    with pytest.raises(ParseError, match=r"row 2: b'\\xff\\xfe'"):
        load_study(tmp_path / "b.parquet", mode="lenient")


@pytest.mark.parametrize("compression", ["none", "snappy"])
def test_parquet_corrupt_pages_give_only_the_toolkits_errors(tmp_path: Path, compression):
    import pyarrow as pa
    import pyarrow.parquet as pq

    n = 2000
    t = pa.table(
        {
            "session_id": [f"s{i // 10}" for i in range(n)],
            "user_id": ["u"] * n,
            "topic_id": ["T"] * n,
            "system_id": ["S"] * n,
            "query_pos": [1] * n,
            "rank": [i % 10 + 1 for i in range(n)],
            "doc_id": [f"d{i}" for i in range(n)],
        }
    )
    good = tmp_path / "good.parquet"
    pq.write_table(t, good, compression=compression)
    data = good.read_bytes()
    rng = np.random.default_rng(10)
    failures = 0
    for _ in range(25):
        bad = bytearray(data)
        start = int(rng.integers(4, len(bad) - 300))
        bad[start : start + 200] = rng.integers(0, 256, 200, dtype=np.uint8).tobytes()
        path = tmp_path / "bad.parquet"
        path.write_bytes(bytes(bad))
        try:
            load_study(path, mode="lenient")
        except SessionvalError as exc:
            failures += 1
            assert "bad.parquet" in str(exc)
    assert failures > 0  # the damage was noticed at least once


def test_parquet_times_beyond_nanoseconds_are_problems_per_row(tmp_path: Path):
    import datetime as dt

    import pyarrow as pa
    import pyarrow.parquet as pq

    times = pa.array(
        [dt.datetime(9999, 1, 1), dt.datetime(2008, 1, 1)], pa.timestamp("ms", tz="UTC")
    )
    t = _table(session_id=pa.array(["s1", "s2"]), rank=pa.array([1, 1]), session_start=times)
    pq.write_table(t, tmp_path / "t.parquet")
    r = load_study(tmp_path / "t.parquet", mode="lenient")
    assert r.report.summary_line() == "2 records read = 1 sessions accepted + 1 rejected"
    (p,) = r.report.problems
    assert (p.location, p.field, p.record) == ("row 1", "session_start", "s1")
    assert "must be between 1677-09-21 and 2262-04-11" in p.message
    with pytest.raises(ValidationFailed, match=r"row 1\): session_start: must be between"):
        load_study(tmp_path / "t.parquet")

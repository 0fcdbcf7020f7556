"""The streaming writers of io.writers: Parquet and JSON-lines a chunk at a time."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from sessionval.io.trec import read_judgments_csv
from sessionval.io.writers import (
    JsonlStream,
    ParquetStream,
    session_json_line,
    write_judgments_csv,
    write_study_json,
)
from sessionval.models import Session, Study, Topic
from tests import builders

SCHEMA = pa.schema([("key", pa.dictionary(pa.int32(), pa.string())), ("value", pa.int32())])


def _table(keys, values):
    return pa.table({"key": pa.array(keys).dictionary_encode(), "value": pa.array(values)}).cast(
        SCHEMA
    )


def test_parquet_stream_writes_one_row_group_per_table_in_order(tmp_path):
    parts = [_table(["a", "b"], [1, 2]), _table(["b"], [3]), _table(["c", "a", "c"], [4, 5, 6])]
    with ParquetStream(
        tmp_path / "t.parquet", SCHEMA, dictionary_columns=["key"], statistics_columns=["value"]
    ) as stream:
        for part in parts:
            stream.write(part)
    meta = pq.ParquetFile(tmp_path / "t.parquet").metadata
    assert [meta.row_group(i).num_rows for i in range(meta.num_row_groups)] == [2, 1, 3]
    assert meta.row_group(0).column(1).statistics.has_min_max
    assert meta.row_group(0).column(0).statistics is None
    assert meta.row_group(0).column(0).has_dictionary_page
    back = pq.read_table(tmp_path / "t.parquet")
    assert back.schema.remove_metadata().equals(SCHEMA)  # dictionaries read back as such
    assert back.column("value").to_pylist() == [1, 2, 3, 4, 5, 6]
    assert back.column("key").to_pylist() == ["a", "b", "b", "c", "a", "c"]


def test_parquet_stream_reports_a_failed_write_and_still_closes(tmp_path):
    stream = ParquetStream(
        tmp_path / "t.parquet", SCHEMA, dictionary_columns=[], statistics_columns=[]
    )
    stream.write(pa.table({"other": [1]}))  # encoded in the background thread
    with pytest.raises(ValueError, match="schema"):
        stream.close()  # the background error surfaces here, and the file is closed
    assert pq.ParquetFile(tmp_path / "t.parquet").metadata.num_rows == 0


def test_jsonl_stream_writes_the_models_own_lines(tmp_path):
    sessions = [
        builders.make_session("s1", start_time="2024-01-01T10:00:00Z"),
        builders.make_session("s2", topic="B", queries=[["d9"]], ratings={"satisfaction": 4.0}),
    ]
    # the model's fields in its order, defaults left out
    records = [
        Session.model_validate(s).model_dump(mode="json", exclude_defaults=True) for s in sessions
    ]
    with JsonlStream(tmp_path / "sessions.jsonl") as stream:
        stream.write(records[:1])
        stream.write(iter(records[1:]))
    raw = (tmp_path / "sessions.jsonl").read_bytes()
    assert b"\r" not in raw and raw.endswith(b"\n")
    lines = raw.decode("utf-8").splitlines()
    for line, record in zip(lines, records, strict=True):
        assert line == session_json_line(record)
        assert Session.model_validate_json(line).model_dump_json(exclude_defaults=True) == line


def test_study_json_and_judgments_csv_read_back(tmp_path):
    header = Study(name="tiny", topics=(Topic(topic_id="A"),))
    path = write_study_json(header, tmp_path / "study.json")
    assert Study.model_validate_json(path.read_text(encoding="utf-8")) == header
    assert path.read_text(encoding="utf-8").endswith("}\n")
    jf = builders.judgments([("A", "d1", 3), ("A", "d2", 0, "x"), ("B", "d1", 1)])
    csv = write_judgments_csv(jf, tmp_path / "judgments.csv")
    assert csv.read_text(encoding="utf-8").splitlines()[0] == "topic_id,doc_id,grade,assessor"
    back = read_judgments_csv(csv).table
    assert builders.plain(back).equals(builders.plain(jf.table))

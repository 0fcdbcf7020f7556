"""Every output file is in the toolkit's formats (docs/formats.md) and they agree."""

from __future__ import annotations

import csv
import json
import math

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from sessionval.frame import FLAT_COLUMNS
from sessionval.io.trec import read_judgments_csv, read_qrels
from sessionval.models import Judgment, Session, Study
from sessionval.synth import flat_schema


def _sessions(sample_dir):
    lines = (sample_dir / "sessions.jsonl").read_text(encoding="utf-8").splitlines()
    return lines, [Session.model_validate_json(line) for line in lines]


def test_every_jsonl_line_is_a_canonical_session(sample_dir):
    lines, sessions = _sessions(sample_dir)
    assert len(lines) == 120
    for line, s in zip(lines, sessions, strict=True):
        # the line is exactly the model's own compact serialisation
        assert s.model_dump_json(exclude_defaults=True) == line
        assert s.start_time is not None and s.start_time.utcoffset().total_seconds() == 0
        assert set(s.ratings) == {"satisfaction", "difficulty"}
        assert all(1 <= v <= 5 for v in s.ratings.values())
        for q in s.queries:
            assert q.time is not None and s.start_time <= q.time <= s.end_time
            assert q.scan_depth is not None and q.scan_depth <= len(q.results)
            assert len(q.results) <= 100
            for r in q.results:
                assert (r.clicks > 0) == (r.dwell is not None)
                assert r.user_grade is None or r.clicks > 0  # judged only when viewed
        times = [q.time for q in s.queries]
        assert times == sorted(times)


def test_study_json_is_a_study_header(sample_dir, sample_study):
    text = (sample_dir / "study.json").read_text(encoding="utf-8")
    study = Study.model_validate_json(text)
    assert study == sample_study.header
    assert study.sessions == () and study.judgments == ()
    assert [t.topic_id for t in study.topics] == ["A", "B", "C", "D"]
    assert [s.system_id for s in study.systems] == ["S1", "S2"]
    assert study.grade_scale.grades == (0, 1, 2, 3)
    assert len(study.users) == 30


def test_whole_study_validates_with_sessions_and_judgments(sample_dir):
    header = Study.model_validate_json((sample_dir / "study.json").read_text(encoding="utf-8"))
    _, sessions = _sessions(sample_dir)
    with (sample_dir / "judgments.csv").open(encoding="utf-8", newline="") as fh:
        judgments = [Judgment(**{**row, "grade": int(row["grade"])}) for row in csv.DictReader(fh)]
    study = header.model_copy(update={"sessions": tuple(sessions), "judgments": tuple(judgments)})
    Study.model_validate(study.model_dump())  # cross-checks users, topics, systems, grades


def test_qrels_and_csv_hold_the_same_judgments(sample_dir, sample_study):
    qrels = [
        line.split() for line in (sample_dir / "qrels.txt").read_text(encoding="utf-8").splitlines()
    ]
    assert all(len(f) == 4 and f[1] == "0" for f in qrels)
    table = pd.read_csv(sample_dir / "judgments.csv", dtype={"topic_id": str, "doc_id": str})
    assert list(table.columns) == ["topic_id", "doc_id", "grade", "assessor"]
    assert [(t, d, int(g)) for t, _, d, g in qrels] == list(
        zip(table.topic_id, table.doc_id, table.grade.astype(int), strict=True)
    )
    assert set(table.grade) == {0, 1, 2, 3}
    assert not table.duplicated(["topic_id", "doc_id"]).any()
    assert table.equals(
        sample_study.judgments.astype(
            {"topic_id": object, "doc_id": object, "assessor": object}
        ).astype(table.dtypes)
    )


def test_parquet_schema_and_empty_queries(sample_dir):
    table = pq.read_table(sample_dir / "sessions.parquet")
    assert table.schema.remove_metadata().equals(flat_schema())
    for name in ("session_id", "user_id", "topic_id", "system_id", "query_text", "doc_id"):
        assert pa.types.is_dictionary(table.schema.field(name).type)
    assert str(table.schema.field("query_time").type) == "timestamp[ms, tz=UTC]"
    df = table.to_pandas()
    empty = df[df["rank"].isna()]
    assert len(empty) > 0  # some queries return nothing ...
    assert empty["doc_id"].isna().all()
    assert (empty["scan_depth"] == 0).all()
    # ... and those are the only rows without a document
    assert df["doc_id"].isna().sum() == len(empty)
    assert not df.duplicated(["session_id", "query_pos"]).loc[empty.index].any()


def test_flat_parquet_and_jsonl_describe_the_same_sessions(sample_dir):
    _, sessions = _sessions(sample_dir)
    from_jsonl = []
    for s in sessions:
        for q in s.queries:
            head = (
                s.session_id,
                s.user_id,
                s.topic_id,
                s.system_id,
                s.start_time,
                s.end_time,
                s.ratings["satisfaction"],
                s.ratings["difficulty"],
                q.position,
                q.text,
                q.time,
                q.scan_depth,
            )
            if not q.results:
                from_jsonl.append((*head, None, None, 0, None, None))
            for r in q.results:
                from_jsonl.append((*head, r.rank, r.doc_id, r.clicks, r.dwell, r.user_grade))
    df = pq.read_table(sample_dir / "sessions.parquet").to_pandas()

    def value(v):
        if v is None or (isinstance(v, float) and math.isnan(v)) or v is pd.NA or v is pd.NaT:
            return None
        if isinstance(v, pd.Timestamp):
            return v.to_pydatetime()
        return v.item() if hasattr(v, "item") else v

    from_flat = [
        tuple(value(v) for v in row)
        for row in df[
            [
                "session_id",
                "user_id",
                "topic_id",
                "system_id",
                "session_start",
                "session_end",
                "rating_satisfaction",
                "rating_difficulty",
                "query_pos",
                "query_text",
                "query_time",
                "scan_depth",
                "rank",
                "doc_id",
                "clicks",
                "dwell",
                "user_grade",
            ]
        ]
        .astype(object)
        .itertuples(index=False)
    ]
    assert len(from_flat) == len(from_jsonl)
    for a, b in zip(from_flat, from_jsonl, strict=True):
        a = list(a)
        if a[15] is not None:  # dwell is float32 in Parquet
            a[15] = round(float(a[15]), 1)
        if a[12] is not None:
            a[12], a[16] = int(a[12]), None if a[16] is None else int(a[16])
        assert tuple(a) == b


def test_jsonl_is_utf8_with_unix_newlines(sample_dir):
    raw = (sample_dir / "sessions.jsonl").read_bytes()
    assert b"\r" not in raw and raw.endswith(b"\n")
    json.loads(raw.splitlines()[0].decode("utf-8"))


def test_flat_schema_is_derived_from_the_flat_layout():
    schema = flat_schema()
    layout = {c.name: c for c in FLAT_COLUMNS}
    ratings = ["rating_satisfaction", "rating_difficulty"]
    drawn = [n for n in schema.names if n not in ratings]
    # every other column is declared in frame.FLAT_COLUMNS, in its order within a level
    assert set(drawn) <= set(layout)
    assert set(layout) - set(drawn) == {"query_id", "url", "title", "snippet", "qrels_id"}
    levels = [layout[n].level for n in drawn]
    assert levels == sorted(levels, key=["session", "query", "result"].index)
    order = list(layout)
    for level in ("session", "query", "result"):
        names = [n for n in drawn if layout[n].level == level]
        assert names == sorted(names, key=order.index)
    # ratings are the generator's own session-level columns, right after the layout's
    assert schema.names.index("rating_satisfaction") == levels.count("session")
    assert [str(schema.field(n).type) for n in ratings] == ["double", "double"]
    # logical kinds -> Arrow types
    check = {
        "id": pa.types.is_dictionary,
        "text": pa.types.is_dictionary,
        "int": pa.types.is_integer,
        "float": pa.types.is_floating,
        "time": pa.types.is_timestamp,
    }
    for name in drawn:
        assert check[layout[name].kind](schema.field(name).type), name


def test_judgment_files_read_back_through_the_toolkit(sample_dir, sample_study):
    want = sample_study.judgments
    for jf in (
        read_qrels(sample_dir / "qrels.txt"),
        read_judgments_csv(sample_dir / "judgments.csv"),
    ):
        got = jf.table
        assert got["topic_id"].astype(str).tolist() == want["topic_id"].tolist()
        assert got["doc_id"].astype(str).tolist() == want["doc_id"].tolist()
        assert got["grade"].tolist() == want["grade"].tolist()

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from sessionval.errors import InputFormatError, ParseError, ValidationFailed
from sessionval.io.flat import read_flat_table
from sessionval.io.jsonl import load_jsonl
from sessionval.models import GradeScale
from sessionval.validate.flat import frame_from_flat, frame_to_flat


def test_jsonl_builds_the_frame(tmp_path: Path, make_session, write_jsonl):
    p = write_jsonl(
        tmp_path / "s.jsonl", [make_session("s1"), make_session("s2", queries=[[], ["x"]])]
    )
    frame, report = load_jsonl(p)
    assert report.records_read == 2 == report.sessions_accepted
    assert frame.queries["n_results"].tolist() == [2, 1, 0, 1]
    assert frame.results["query_idx"].tolist() == [0, 0, 1, 3]
    assert frame.results["rank"].tolist() == [1, 2, 1, 1]
    assert list(frame.sessions["session_id"].astype(str)) == ["s1", "s2"]
    assert frame.sessions["n_queries"].tolist() == [2, 2]
    assert frame.queries["query_id"].tolist() == ["s1:1", "s1:2", "s2:1", "s2:2"]
    assert frame.query_offsets().tolist() == [0, 2, 3, 3, 4]


def test_empty_file(tmp_path: Path):
    p = tmp_path / "s.jsonl"
    p.write_text("\n \n")
    with pytest.raises(
        ParseError, match=r"s\.jsonl: file is empty \(expected one JSON session per line\)"
    ):
        load_jsonl(p)


def test_wrong_encoding(tmp_path: Path, make_session):
    p = tmp_path / "s.jsonl"
    p.write_bytes(
        json.dumps(make_session()).encode() + b"\n" + '{"x": "caf\xe9"}'.encode("latin-1") + b"\n"
    )
    with pytest.raises(ParseError, match=r"s\.jsonl:2: not valid UTF-8 \(byte \d+: b'\\xe9'\)"):
        load_jsonl(p)


def test_truncated_json_names_line_and_column(tmp_path: Path, make_session, write_jsonl):
    good = json.dumps(make_session("s1"))
    p = write_jsonl(tmp_path / "s.jsonl", [good, json.dumps(make_session("s2"))[:40]])
    with pytest.raises(ValidationFailed) as err:
        load_jsonl(p)
    msg = str(err.value)
    assert (
        "s.jsonl:2: invalid JSON: Unterminated string" in msg and "the line looks truncated" in msg
    )


def test_duplicate_session_ids(tmp_path: Path, make_session, write_jsonl):
    p = write_jsonl(
        tmp_path / "s.jsonl", [make_session("s1"), make_session("s2"), make_session("s1")]
    )
    with pytest.raises(
        ValidationFailed, match=r"s.jsonl:3: session_id: duplicate session id \(first on line 1\)"
    ):
        load_jsonl(p)


def test_model_errors_carry_field_path_and_value(tmp_path: Path, make_session, write_jsonl):
    bad = make_session("s1")
    bad["queries"][0]["results"][1]["rank"] = 0
    p = write_jsonl(tmp_path / "s.jsonl", [bad])
    with pytest.raises(ValidationFailed) as err:
        load_jsonl(p)
    assert (
        "s.jsonl:1: queries[0].results[1].rank: Input should be greater than or equal to 1 (got 0)"
        in str(err.value)
    )


def test_lenient_counts_in_equal_counts_out(tmp_path: Path, make_session, write_jsonl):
    bad = make_session("s3")
    bad["queries"][0]["results"][1]["doc_id"] = "d1"  # twice in one list
    p = write_jsonl(
        tmp_path / "s.jsonl", [make_session("s1"), "{not json", bad, make_session("s4")]
    )
    frame, report = load_jsonl(p, mode="lenient")
    assert report.records_read == 4
    assert report.sessions_accepted == 2 and report.sessions_rejected == 2
    assert report.records_read == report.sessions_accepted + report.sessions_rejected
    assert set(frame.sessions["session_id"].astype(str)) == {"s1", "s4"}
    rej = report.rejects
    assert set(rej["location"]) == {"line 2", "line 3"}
    assert rej.loc[rej["location"] == "line 3", "record"].item() == "s3"


def test_strict_collects_several_problems(tmp_path: Path, make_session, write_jsonl):
    a, b = make_session("s1"), make_session("s2")
    a["queries"][0]["results"][0]["rank"] = -1
    b["queries"][1]["position"] = 5
    p = write_jsonl(tmp_path / "s.jsonl", [a, b])
    with pytest.raises(ValidationFailed) as err:
        load_jsonl(p)
    assert len(err.value.problems) == 2
    assert "2 problems found" in str(err.value)


def _flat(**overrides):
    base = {
        "session_id": ["s1", "s1", "s1", "s2"],
        "user_id": "u",
        "topic_id": "T",
        "system_id": "S",
        "query_pos": [1, 1, 2, 1],
        "rank": [1, 2, None, 1],
        "doc_id": ["a", "b", None, "a"],
    }
    base.update(overrides)
    return pd.DataFrame(base)


def test_flat_rules_match_model_messages():
    with pytest.raises(ValidationFailed, match=r"\(row 2\): rank: rank 3 leaves a gap: expected 2"):
        frame_from_flat(_flat(rank=[1, 3, None, 1]))
    with pytest.raises(
        ValidationFailed, match=r"\(row 2\): doc_id: document occurs more than once"
    ):
        frame_from_flat(_flat(doc_id=["a", "a", None, "a"]))
    with pytest.raises(
        ValidationFailed, match=r"query_pos: query position 3 leaves a gap: expected 2"
    ):
        frame_from_flat(_flat(query_pos=[1, 1, 3, 1]))


def test_flat_non_numeric_and_scale(tmp_path: Path):
    df = _flat(user_grade=["2", "x", None, "9"])
    with pytest.raises(ValidationFailed) as err:
        frame_from_flat(df.astype({"user_grade": "string"}), user_grade_scale=GradeScale.default())
    msg = str(err.value)
    assert "(row 2): user_grade: must be an integer (got 'x')" in msg
    assert "user_grade 9 is not on the grade scale (allowed: 0, 1, 2, 3)" in msg


def test_flat_session_constants():
    with pytest.raises(
        ValidationFailed, match="topic_id: differs from an earlier row of the same session"
    ):
        frame_from_flat(_flat(topic_id=["T", "T", "U", "T"]))


def test_flat_unsorted_rows_are_ordered():
    df = _flat().iloc[[3, 2, 1, 0]]
    frame, _ = frame_from_flat(df)
    assert list(frame.sessions["session_id"].astype(str)) == ["s2", "s1"]
    assert frame.results["doc_id"].astype(str).tolist() == ["a", "a", "b"]


def test_flat_missing_columns():
    with pytest.raises(InputFormatError, match="missing column\\(s\\) rank, doc_id"):
        frame_from_flat(
            pd.DataFrame(
                {
                    "session_id": ["s"],
                    "user_id": "u",
                    "topic_id": "t",
                    "system_id": "S",
                    "query_pos": [1],
                }
            )
        )


def test_csv_and_parquet_give_the_same_frame(tmp_path: Path):
    df = _flat(clicks=[1, 0, None, 2], dwell=[3.5, None, None, 1.0])
    df.to_csv(tmp_path / "f.csv", index=False)
    df.to_parquet(tmp_path / "f.parquet", index=False)
    a, _ = frame_from_flat(read_flat_table(tmp_path / "f.csv"))
    b, _ = frame_from_flat(read_flat_table(tmp_path / "f.parquet"))
    for name in ("sessions", "queries", "results"):
        pd.testing.assert_frame_equal(getattr(a, name), getattr(b, name), check_categorical=False)


def test_csv_errors(tmp_path: Path):
    p = tmp_path / "e.csv"
    p.write_text("")
    with pytest.raises(ParseError, match=r"e\.csv: file is empty"):
        read_flat_table(p)
    p.write_bytes(b"session_id,doc_id\ns1,caf\xe9\n")
    with pytest.raises(ParseError, match=r"e.csv:2: not valid UTF-8"):
        read_flat_table(p)
    with pytest.raises(InputFormatError, match="unknown table format"):
        (tmp_path / "x.xlsx").write_text("a")
        read_flat_table(tmp_path / "x.xlsx")


def test_frame_flat_round_trip(tmp_path: Path, make_session, write_jsonl):
    p = write_jsonl(
        tmp_path / "s.jsonl",
        [make_session("s1", ratings={"sat": 4}), make_session("s2", queries=[[]])],
    )
    frame, _ = load_jsonl(p)
    again, _ = frame_from_flat(frame_to_flat(frame))
    for name in ("sessions", "queries", "results"):
        pd.testing.assert_frame_equal(
            getattr(frame, name), getattr(again, name), check_categorical=False
        )
    assert frame.sessions["rating_sat"].tolist()[0] == 4.0
    assert np.isnan(frame.sessions["rating_sat"].tolist()[1])


def test_progress_reports_every_phase_in_order(study_dir: Path):
    from sessionval.io.study import load_study
    from sessionval.validate.flat import LOAD_PHASES

    seen: list[str] = []
    load_study(study_dir, qrels=study_dir / "qrels.txt", progress=seen.append)
    assert seen == list(LOAD_PHASES)


def test_parquet_bulk_path_matches_dataframe_path(tmp_path: Path):
    from sessionval.validate.sources import ParquetColumns

    df = _flat(
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


def test_bulk_lenient_drops_whole_sessions(tmp_path: Path):
    df = pd.concat([_flat(), _flat(session_id=["s3"] * 3 + ["s4"], rank=[1, 1, None, 1])])
    frame, report = frame_from_flat(df, mode="lenient")
    assert report.records_read == 4 == report.sessions_accepted + report.sessions_rejected
    assert set(frame.sessions["session_id"].astype(str)) == {"s1", "s2", "s4"}
    assert frame.results["query_idx"].tolist() == [0, 0, 2, 3]
    assert frame.queries["n_results"].tolist() == [2, 0, 1, 1]


@pytest.mark.parametrize("suffix", ["parquet", "csv"])
def test_max_rank_reads_only_the_top(tmp_path: Path, suffix: str):
    from sessionval.io.study import load_sessions

    df = _flat(rank=[1, 2, None, 1], doc_id=["a", "b", None, "a"])
    path = tmp_path / f"f.{suffix}"
    df.to_parquet(path, index=False) if suffix == "parquet" else df.to_csv(path, index=False)
    frame, report = load_sessions(path, max_rank=1)
    assert frame.results["rank"].tolist() == [1, 1]
    assert frame.queries["n_results"].tolist() == [1, 0, 1]  # the empty query is kept
    assert report.sessions_accepted == 2


def test_parquet_columns_subset_reads_only_required(tmp_path: Path):
    from sessionval.io.study import load_sessions

    df = _flat(clicks=[1, 0, None, 2], query_text=["x", "x", "y", "z"])
    df.to_parquet(tmp_path / "f.parquet", index=False)
    frame, _ = load_sessions(tmp_path / "f.parquet", columns=())
    assert frame.results["clicks"].tolist() == [0, 0, 0]  # not read: the documented default
    assert frame.queries["text"].tolist() == ["", "", ""]
    full, _ = load_sessions(tmp_path / "f.parquet")
    assert full.results["clicks"].tolist() == [1, 0, 2]

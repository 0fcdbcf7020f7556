from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from sessionval.errors import InputFormatError, ValidationFailed
from sessionval.io.jsonl import load_jsonl
from sessionval.models import GradeScale
from sessionval.validate.flat import frame_from_flat, frame_to_flat
from tests.builders import small_flat


def test_flat_rules_match_model_messages():
    with pytest.raises(ValidationFailed, match=r"\(row 2\): rank: rank 3 leaves a gap: expected 2"):
        frame_from_flat(small_flat(rank=[1, 3, None, 1]))
    with pytest.raises(
        ValidationFailed, match=r"\(row 2\): doc_id: document occurs more than once"
    ):
        frame_from_flat(small_flat(doc_id=["a", "a", None, "a"]))
    with pytest.raises(
        ValidationFailed, match=r"query_pos: query position 3 leaves a gap: expected 2"
    ):
        frame_from_flat(small_flat(query_pos=[1, 1, 3, 1]))


def test_flat_non_numeric_and_scale(tmp_path: Path):
    df = small_flat(user_grade=["2", "x", None, "9"])
    with pytest.raises(ValidationFailed) as err:
        frame_from_flat(df.astype({"user_grade": "string"}), user_grade_scale=GradeScale.default())
    msg = str(err.value)
    assert "(row 2): user_grade: must be an integer (got 'x')" in msg
    assert "user_grade 9 is not on the grade scale (allowed: 0, 1, 2, 3)" in msg


def test_flat_session_constants():
    with pytest.raises(
        ValidationFailed, match="topic_id: differs from an earlier row of the same session"
    ):
        frame_from_flat(small_flat(topic_id=["T", "T", "U", "T"]))


def test_flat_unsorted_rows_are_ordered():
    df = small_flat().iloc[[3, 2, 1, 0]]
    frame = frame_from_flat(df).frame
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


def test_frame_flat_round_trip(tmp_path: Path, make_session, write_jsonl):
    p = write_jsonl(
        tmp_path / "s.jsonl",
        [make_session("s1", ratings={"sat": 4}), make_session("s2", queries=[[]])],
    )
    frame = load_jsonl(p).frame
    again = frame_from_flat(frame_to_flat(frame)).frame
    for name in ("sessions", "queries", "results"):
        pd.testing.assert_frame_equal(
            getattr(frame, name), getattr(again, name), check_categorical=False
        )
    assert frame.sessions["rating_sat"].tolist()[0] == 4.0
    assert np.isnan(frame.sessions["rating_sat"].tolist()[1])


def test_bulk_lenient_drops_whole_sessions(tmp_path: Path):
    df = pd.concat([small_flat(), small_flat(session_id=["s3"] * 3 + ["s4"], rank=[1, 1, None, 1])])
    loaded = frame_from_flat(df, mode="lenient")
    frame, report = loaded.frame, loaded.report
    assert report.records_read == 4 == report.sessions_accepted + report.sessions_rejected
    assert set(frame.sessions["session_id"].astype(str)) == {"s1", "s2", "s4"}
    assert frame.results["query_idx"].tolist() == [0, 0, 2, 3]
    assert frame.queries["n_results"].tolist() == [2, 0, 1, 1]


def test_frame_to_flat_columns_follow_the_flat_layout(fx):
    from sessionval.frame import FLAT_COLUMNS
    from sessionval.io.trec_session import load_trec_session

    flat = frame_to_flat(load_trec_session(fx / "ts2013.xml").frame)
    assert list(flat.columns) == [c.name for c in FLAT_COLUMNS]
    frame = frame_from_flat(small_flat(rating_sat=[1.0, 1.0, 1.0, 2.0])).frame
    names = [c.name for c in FLAT_COLUMNS if c.name not in ("url", "title", "snippet")]
    assert list(frame_to_flat(frame).columns) == [*names, "rating_sat"]


def test_frame_from_flat_returns_a_loaded_study_with_a_bare_header():
    """Issue 22: one loader result type; the header names the study, the frame its entities."""
    from sessionval.frame import LoadedStudy

    loaded = frame_from_flat(small_flat(), source="logs/lab.csv")
    assert isinstance(loaded, LoadedStudy) and loaded.judgments is None
    assert loaded.study.name == "lab" and loaded.study.users == () and loaded.unjudged == ()
    assert loaded.report.sessions_accepted == loaded.frame.n_sessions

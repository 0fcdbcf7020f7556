"""The JSON-lines loader validates and flattens a batch of sessions at a time (item 7 of
issue 10: the models of the whole log are never held at once)."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pandas as pd
import pytest

from sessionval.io import jsonl, jsonl_columns
from sessionval.models.session import Session
from tests import builders


def _log(tmp_path, n):
    sessions = []
    for i in range(n):
        extra = {}
        if i % 3 == 0:
            extra["ratings"] = {"sat": float(i % 5)}
        if i == 4:
            extra["ratings"] = {"effort": 2.0}
        s = builders.make_session(f"s{i}", topic="AB"[i % 2], queries=[["d1", "d2"], []])
        if i % 4 == 1:
            s["queries"][0]["scan_depth"] = 2
            s["queries"][0]["results"][0].update(clicks=1, dwell=3.5, user_grade=2)
        if i == 6:
            s["start_time"] = "2020-01-01T10:00:00Z"
        s.update(extra)
        sessions.append(s)
    return builders.write_jsonl(tmp_path / "sessions.jsonl", sessions)


@pytest.mark.parametrize("batch", [1, 2, 3])
def test_batches_give_the_same_frame(tmp_path, monkeypatch, same_frame, batch):
    path = _log(tmp_path, 9)
    loaded = jsonl.load_jsonl(path)
    whole, report = loaded.frame, loaded.report
    monkeypatch.setattr(jsonl, "_BATCH", batch)
    loaded = jsonl.load_jsonl(path)
    parts, report2 = loaded.frame, loaded.report
    same_frame(whole, parts)
    assert report2.summary_line() == report.summary_line()
    for c in whole.sessions.columns:
        assert whole.sessions[c].dtype == parts.sessions[c].dtype, c
    assert list(parts.sessions.columns) == list(whole.sessions.columns)


def test_problems_keep_their_line_numbers_across_batches(tmp_path, monkeypatch):
    path = _log(tmp_path, 7)
    lines = path.read_text().splitlines()
    lines[5] = lines[5].replace('"rank": 2', '"rank": 3')  # a gap in the ranks of s5
    path.write_text("\n".join(lines) + "\n")
    monkeypatch.setattr(jsonl, "_BATCH", 2)
    loaded = jsonl.load_jsonl(path, mode="lenient")
    frame, report = loaded.frame, loaded.report
    assert frame.n_sessions == 6 and report.sessions_rejected == 1
    assert report.problems[0].location == "line 6"


def test_models_of_one_batch_at_a_time(tmp_path):
    path = _log(tmp_path, 1500)
    peaks = []
    for batch in (1500, 100):
        parsed: list[int] = []  # peak of Python memory when every line is parsed

        def first_phase(name, parsed=parsed):
            if not parsed:
                parsed.append(tracemalloc.get_traced_memory()[1])

        tracemalloc.start()
        jsonl.load_jsonl(path, batch_size=batch, chunk_bytes=1 << 16, progress=first_phase)
        tracemalloc.stop()
        peaks.append(parsed[0])
    assert peaks[1] < 0.3 * peaks[0], peaks


def _columns(tmp_path, sessions):
    """The column source :func:`jsonl.load_jsonl` hands to the flat-table checks."""
    batches = jsonl_columns.JsonlBatches()
    models = [Session.model_validate(s) for s in sessions]
    batches.add(models, [2 * i + 1 for i in range(len(models))])  # lines 1, 3, 5, ...
    return batches.columns(str(tmp_path / "sessions.jsonl"))


def test_release_frees_the_other_columns_and_keeps_those_asked_for(tmp_path):
    cols = _columns(tmp_path, [builders.make_session("s1"), builders.make_session("s2")])
    before = cols.take("query_text", np.array([0, 3], dtype=np.int64)).astype(str).tolist()
    cols.release(("query_text", "url"))
    assert cols.take("query_text", np.array([0, 3], dtype=np.int64)).astype(str).tolist() == before
    assert cols.take("url", np.array([1, 2], dtype=np.int64)).isna().all()
    with pytest.raises(KeyError):
        cols.column("rank")


def test_text_without_any_value_is_taken_at_the_rows_asked_for(tmp_path):
    cols = _columns(tmp_path, [builders.make_session("s1", queries=[["d1", "d2", "d3"]])])
    taken = cols.take("title", np.array([2, 0], dtype=np.int64))
    assert len(taken) == 2 and taken.isna().all()
    assert isinstance(taken.dtype, pd.CategoricalDtype) and not len(taken.cat.categories)


def test_row_lines_are_the_line_of_each_row_in_32_bits(tmp_path):
    sessions = [builders.make_session("s1"), builders.make_session("s2", queries=[[]])]
    lines = _columns(tmp_path, sessions).row_lines()
    assert lines.dtype == np.int32
    assert lines.tolist() == [1, 1, 1, 3]  # s1: three results; s2: one query without results


def test_result_text_with_values_survives_the_release(tmp_path):
    s = builders.make_session("s1", queries=[["d1", "d2"]])
    s["queries"][0]["results"][1].update(url="https://x.org/2", title="Two", snippet="two")
    frame = jsonl.load_jsonl(builders.write_jsonl(tmp_path / "sessions.jsonl", [s])).frame
    results = frame.results
    assert results["url"].tolist()[1] == "https://x.org/2" and results["url"].isna().tolist()[0]
    assert results["title"].tolist()[1] == "Two" and results["snippet"].tolist()[1] == "two"
    assert results["url"].dtype == pd.StringDtype()


def test_integers_in_any_width_keep_their_values_and_messages(tmp_path):
    # ranks beyond int8, clicks beyond int16, grades beyond int32: each batch stores its
    # integers as narrow as they allow and the loader reads them in that width
    wide = builders.make_session("s1", queries=[[f"d{i}" for i in range(300)]])
    clicks = builders.make_session("s2")
    clicks["queries"][0]["results"][0].update(clicks=40000, user_grade=-40000)
    grade = builders.make_session("s3")
    grade["queries"][0]["results"][1].update(clicks=3, user_grade=2**35)
    path = builders.write_jsonl(tmp_path / "sessions.jsonl", [wide, clicks, grade])
    loaded = jsonl.load_jsonl(path, mode="lenient")
    frame, report = loaded.frame, loaded.report
    assert frame.results["rank"].tolist() == list(range(1, 301))
    assert [(p.location, p.field, p.value) for p in report.problems] == [
        ("line 2", "user_grade", "-40000"),
        ("line 3", "user_grade", "34359738368"),
        ("line 2", "clicks", "40000"),
    ]

"""Lenient repair of a document listed twice in one result list (issue 10, item 3)."""

from __future__ import annotations

import pandas as pd
import pytest

from sessionval.errors import ValidationFailed
from sessionval.io.formats import load_input
from sessionval.validate.flat import frame_from_flat


def table(**over: object) -> pd.DataFrame:
    base: dict[str, object] = {
        "session_id": ["s1"] * 5 + ["s2"] * 3 + ["s3"] * 2,
        "user_id": "u",
        "topic_id": "T",
        "system_id": "S",
        "query_pos": [1, 1, 1, 1, 2, 1, 1, 1, 1, 1],
        "rank": [1, 2, 3, 4, None, 3, 2, 1, 1, 3],
        "doc_id": ["a", "b", "a", "c", None, "x", "y", "x", "p", "p"],
        "clicks": [0, 1, 2, 2, None, 1, 0, 0, 0, 0],
        "dwell": [None, 1.0, 3.5, None, None, 0, 0, 0, 0, 0],
    }
    base.update(over)
    return pd.DataFrame(base)


def test_strict_mode_still_reports_the_repeat():
    with pytest.raises(ValidationFailed, match="document occurs more than once"):
        frame_from_flat(table())


def test_lenient_keeps_the_first_copy_and_moves_the_list_up():
    loaded = frame_from_flat(table(), mode="lenient")
    frame, report = loaded.frame, loaded.report
    # s3 also has a rank gap: rejected as before, its repeat listed among its problems
    assert frame.sessions["session_id"].astype(str).tolist() == ["s1", "s2"]
    assert (report.records_read, report.sessions_accepted, report.sessions_rejected) == (3, 2, 1)
    assert report.rows_read == 10
    res = frame.results
    assert res["doc_id"].astype(str).tolist() == ["a", "b", "c", "x", "y"]
    assert res["rank"].tolist() == [1, 2, 3, 1, 2]
    # the removed copy's clicks and dwell count for the kept one (the same document)
    assert res["clicks"].tolist() == [2, 1, 2, 1, 0]
    assert res["dwell"].tolist()[:2] == [3.5, 1.0]
    rep = report.repairs_table
    assert rep[["record", "location", "value"]].to_numpy().tolist() == [
        ["s1", "row 3", "'a'"],
        ["s2", "row 6", "'x'"],
    ]
    assert "query 1: kept at rank 1, removed at rank 3" in rep["message"].iloc[0]
    assert "its 2 click(s) counted for the kept copy" in rep["message"].iloc[0]
    assert set(report.rejects["record"]) == {"s3"}


def test_lines_named_by_the_callers_row_locations():
    flat = table().iloc[:5]
    report = frame_from_flat(
        flat, mode="lenient", location_kind="line", row_locations=pd.Series([7, 8, 9, 10, 11])
    ).report
    assert [p.location for p in report.repairs] == ["line 9"]


def test_a_clean_load_has_no_repairs():
    flat = table(doc_id=["a", "b", "d", "c", None, "x", "y", "z", "p", "q"])
    flat["rank"] = [1, 2, 3, 4, None, 3, 2, 1, 1, 2]
    report = frame_from_flat(flat, mode="lenient").report
    assert report.repairs == [] and report.sessions_rejected == 0


def test_text_ranks_as_in_a_csv():
    flat = table().astype({"rank": "string", "clicks": "string"})
    loaded = frame_from_flat(flat, mode="lenient")
    frame, report = loaded.frame, loaded.report
    assert frame.results["rank"].tolist() == [1, 2, 3, 1, 2] and len(report.repairs) == 2


def test_a_csv_load_lists_the_repair_as_a_note(tmp_path):
    csv = tmp_path / "flat.csv"
    table().iloc[:5].to_csv(csv, index=False)
    loaded = load_input(csv, mode="lenient")
    assert loaded.report.sessions_accepted == 1
    assert [p.location for p in loaded.report.repairs] == ["line 4"]
    assert loaded.report.repairs[0] in loaded.notes  # shown by validate and convert


@pytest.mark.parametrize("with_session", [False, True])
def test_rows_without_a_session_id_repeating_a_document_are_rejected_not_repaired(
    with_session,
):
    """FL-1: two id-less rows listing one document crashed the repair (IndexError)."""
    flat = table().iloc[:5] if with_session else table().iloc[:0]
    blank = pd.DataFrame(
        {"session_id": [None, None], "user_id": "u", "topic_id": "T", "system_id": "S",
         "query_pos": [1, 1], "rank": [1, 1], "doc_id": ["d1", "d1"]}
    )  # fmt: skip
    flat = pd.concat([flat, blank], ignore_index=True)
    loaded = frame_from_flat(flat, mode="lenient")
    frame, report = loaded.frame, loaded.report
    assert frame.n_sessions == int(with_session)
    assert [p.record for p in report.repairs] == (["s1"] if with_session else [])
    missing = [p for p in report.problems if p.field == "session_id"]
    assert [p.message for p in missing] == ["is required", "is required"]


def _repeats(tmp_path):
    """One session repeating document d1 (at ranks 1 and 3), in three input formats."""
    from tests import builders

    s = builders.make_session("s1", queries=[["d1", "d2", "d1", "d3"]])
    jsonl = builders.write_jsonl(tmp_path / "s.jsonl", [s])
    run = tmp_path / "r.run"
    run.write_text(
        "".join(f"1_1 Q0 {d} {i} {9 - i}.0 x\n" for i, d in enumerate(["d1", "d2", "d1", "d3"], 1))
    )
    csv = tmp_path / "t.csv"
    table().to_csv(csv, index=False)
    return {"jsonl": jsonl, "cast": run, "flat": csv}


@pytest.mark.parametrize("fmt", ["jsonl", "cast", "flat"])
def test_every_format_repairs_with_the_one_repair(tmp_path, monkeypatch, fmt):
    """Issue 22: JSON lines, CAsT runs and tables are repaired by validate/repair.py only."""
    from sessionval.validate import flat

    calls = []
    one = flat.remove_repeated_documents

    def spy(*args, **kwargs):
        calls.append(fmt)
        return one(*args, **kwargs)

    monkeypatch.setattr(flat, "remove_repeated_documents", spy)
    loaded = load_input(_repeats(tmp_path)[fmt], fmt, mode="lenient")
    assert calls == [fmt] and loaded.report.repairs
    assert all(p.field == "doc_id" and "listed twice" in p.message for p in loaded.report.repairs)

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sessionval.errors import ParseError, ValidationFailed
from sessionval.io.jsonl import load_jsonl


def test_jsonl_builds_the_frame(tmp_path: Path, make_session, write_jsonl):
    p = write_jsonl(
        tmp_path / "s.jsonl", [make_session("s1"), make_session("s2", queries=[[], ["x"]])]
    )
    loaded = load_jsonl(p)
    frame, report = loaded.frame, loaded.report
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
    with pytest.raises(
        ParseError, match=r"s\.jsonl:2: byte offset \d+: b'\\xe9' is not valid utf-8"
    ):
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
    bad["queries"][0]["results"][1]["rank"] = 0  # ranks start at 1 (a repeat is repaired)
    p = write_jsonl(
        tmp_path / "s.jsonl", [make_session("s1"), "{not json", bad, make_session("s4")]
    )
    loaded = load_jsonl(p, mode="lenient")
    frame, report = loaded.frame, loaded.report
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


# issue 10: encodings, line splitting, nesting depth, integers beyond int64


def test_non_utf8_is_located_and_reads_with_an_encoding(tmp_path: Path, make_session):
    s = make_session("s1")
    s["queries"][0]["text"] = "caf\u00e9"
    p = tmp_path / "s.jsonl"
    p.write_bytes(b"\n" + json.dumps(s, ensure_ascii=False).encode("latin-1") + b"\n")
    with pytest.raises(ParseError, match=r"s\.jsonl:2: byte offset \d+: b'\\xe9'"):
        load_jsonl(p)
    frame = load_jsonl(p, encoding="latin-1").frame
    assert frame.queries["text"].tolist()[0] == "caf\u00e9"


@pytest.mark.parametrize("sep", ["\u2028", "\u2029", "\u0085"])
def test_unicode_line_separators_inside_strings_do_not_split_lines(
    tmp_path: Path, make_session, sep: str
):
    s = make_session("s2")
    s["queries"][0]["text"] = f"first{sep}second"
    lines = [json.dumps(make_session("s1")), json.dumps(s, ensure_ascii=False), "{bad"]
    p = tmp_path / "s.jsonl"
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    loaded = load_jsonl(p, mode="lenient")
    frame, report = loaded.frame, loaded.report
    assert report.records_read == 3
    assert report.sessions_accepted == 2 and report.sessions_rejected == 1
    assert [pr.location for pr in report.problems] == ["line 3"]
    assert frame.queries["text"].tolist()[2] == f"first{sep}second"


def test_vertical_tab_and_form_feed_do_not_split_lines(tmp_path: Path, make_session):
    p = tmp_path / "s.jsonl"
    body = json.dumps(make_session("s1"))
    p.write_bytes(b'{"x": 1}\x0b\x0c\n' + body.encode() + b"\r\n")
    report = load_jsonl(p, mode="lenient").report
    assert report.records_read == 2 == report.sessions_accepted + report.sessions_rejected
    assert [pr.location for pr in report.problems] == ["line 1"]


def test_deep_nesting_is_a_located_error_and_a_lenient_rejection(tmp_path: Path, make_session):
    deep = '{"session_id": "deep", "x": ' + "[" * 3000 + "]" * 3000 + "}"
    ok = make_session("s1")
    ok["queries"][0]["text"] = "[[{{" * 100  # brackets inside a string do not nest
    p = tmp_path / "s.jsonl"
    p.write_text(json.dumps(ok) + "\n" + deep + "\n", encoding="utf-8")
    with pytest.raises(ValidationFailed, match=r"s\.jsonl:2: JSON nested 3001 levels deep"):
        load_jsonl(p)
    loaded = load_jsonl(p, mode="lenient")
    frame, report = loaded.frame, loaded.report
    assert report.records_read == 2
    assert report.sessions_accepted == 1 and report.sessions_rejected == 1
    assert "at most 64 levels" in report.problems[0].message
    assert list(frame.sessions["session_id"].astype(str)) == ["s1"]


def test_nesting_within_the_limit_is_parsed(tmp_path: Path, make_session):
    s = make_session("s1")
    s["x"] = json.loads("[" * 60 + "]" * 60)  # deep but allowed: the model then rejects "x"
    p = tmp_path / "s.jsonl"
    p.write_text(json.dumps(s) + "\n", encoding="utf-8")
    with pytest.raises(ValidationFailed) as exc:
        load_jsonl(p)
    assert "nested" not in str(exc.value)
    assert "x:" in str(exc.value)


@pytest.mark.parametrize(
    ("where", "value"),
    [("clicks", "100000000000000000000"), ("rank", "9223372036854775808"), ("rank", "-9" * 1)],
)
def test_integers_beyond_int64_are_located(tmp_path: Path, make_session, where, value):
    s = make_session("s1")
    line = json.dumps(s).replace('"rank": 2', f'"rank": 2, "{where}": {value}', 1)
    if where == "rank":
        line = json.dumps(s).replace('"rank": 2', f'"rank": {value}', 1)
    p = tmp_path / "s.jsonl"
    p.write_text(line + "\n" + json.dumps(make_session("s2")) + "\n", encoding="utf-8")
    if value == "-9":  # in range: the model's own rule applies, no range message
        with pytest.raises(ValidationFailed) as exc:
            load_jsonl(p)
        assert "integer out of range" not in str(exc.value)
        return
    with pytest.raises(ValidationFailed) as exc:
        load_jsonl(p)
    msg = str(exc.value)
    assert f"s.jsonl:1: queries[0].results[1].{where}: integer out of range" in msg
    assert f"(got {value})" in msg
    report = load_jsonl(p, mode="lenient").report
    assert report.sessions_accepted == 1 and report.sessions_rejected == 1


def test_cr_only_line_endings_are_a_located_error(tmp_path: Path, make_session):
    p = tmp_path / "s.jsonl"
    p.write_bytes(
        (json.dumps(make_session("s1")) + "\r" + json.dumps(make_session("s2")) + "\r").encode()
    )
    with pytest.raises(ValidationFailed) as exc:
        load_jsonl(p)
    assert "s.jsonl:1: invalid JSON" in str(exc.value)
    assert r"not with \r alone" in str(exc.value)


def test_lenient_repairs_a_document_listed_twice_like_every_format(tmp_path):
    """Issue 10 item 3: JSON-lines keeps the session, the first copy, and lists the repair."""
    results = [
        {"rank": 1, "doc_id": "d1"},
        {"rank": 2, "doc_id": "d2"},
        {"rank": 3, "doc_id": "d1", "clicks": 2},
        {"rank": 4, "doc_id": "d3"},
    ]
    session = {"session_id": "s1", "user_id": "u", "topic_id": "A", "system_id": "S"}
    line = json.dumps({**session, "queries": [{"position": 1, "results": results}]})
    path = tmp_path / "s.jsonl"
    path.write_text(line + "\n", encoding="utf-8")
    with pytest.raises(ValidationFailed, match="more than once"):
        load_jsonl(path)  # strict: the error stays
    loaded = load_jsonl(path, mode="lenient")
    frame, report = loaded.frame, loaded.report
    assert report.summary_line().startswith("1 records read = 1 sessions accepted + 0 rejected")
    assert frame.results["doc_id"].astype(str).tolist() == ["d1", "d2", "d3"]
    assert frame.results["rank"].tolist() == [1, 2, 3]
    assert frame.results["clicks"].tolist()[0] == 2
    (repair,) = report.repairs
    assert (repair.location, repair.record) == ("line 1", "s1")
    assert "kept at rank 1, removed at rank 3" in repair.message
    assert report.rows_read == 4  # the removed copy was read


def test_times_keep_their_nanoseconds(tmp_path, make_session, write_jsonl):
    """RT-3: a time written to the nanosecond was cut to microseconds, with no note (the
    model's times are Python datetimes); a batch mixing such times with plain ones, and a
    batch with none, combine into one nanosecond column."""
    import pandas as pd

    plain = make_session("s0")
    plain["queries"][0]["time"] = "2020-01-01T00:00:00.25Z"
    ns = make_session("s1", start_time="2020-01-01T00:00:00.000000001+01:00")
    ns["queries"][0]["time"] = "2020-01-01T00:00:00.123456789Z"
    ns["queries"][1]["time"] = "2020-01-01T00:00:00.1234567Z"
    frame = load_jsonl(write_jsonl(tmp_path / "s.jsonl", [plain, ns]), batch_size=1).frame
    assert frame.queries["time"].tolist() == [
        pd.Timestamp("2020-01-01T00:00:00.25Z"),
        pd.NaT,
        pd.Timestamp("2020-01-01T00:00:00.123456789Z"),
        pd.Timestamp("2020-01-01T00:00:00.1234567Z"),
    ]
    assert frame.sessions["start_time"].iloc[1] == pd.Timestamp("2019-12-31T23:00:00.000000001Z")
    # a time outside the nanosecond range is still the located problem it was
    ns["queries"][1]["time"] = "3000-01-01T00:00:00Z"
    with pytest.raises(ValidationFailed, match=r"s\.jsonl:2: query_time: must be between"):
        load_jsonl(write_jsonl(tmp_path / "s.jsonl", [plain, ns]))

"""Issue 10, tables (CSV, TSV, Parquet, lab tables): every bad input a located error or a
listed rejection, no value changed silently.  Each test names the reproduction it covers."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from sessionval.cli import main
from sessionval.errors import JudgmentError, ParseError, ValidationFailed
from sessionval.io.formats import load_input
from sessionval.io.lab_tables import load_lab_tables
from sessionval.io.study import load_study
from sessionval.io.trec import read_judgments

HEADER = "session_id,user_id,topic_id,system_id,query_pos,rank,doc_id"


def csv_file(path: Path, *rows: str, header: str = HEADER) -> Path:
    path.write_text("\n".join([header, *rows]) + "\n", encoding="utf-8")
    return path


# --- bytes: encodings and gzip (F1 csv part, T8, T12)


def test_f1_csv_qrels_with_a_latin1_byte_is_located_and_readable_with_encoding(tmp_path):
    q = tmp_path / "r9.csv"
    q.write_bytes(b"topic_id,doc_id,grade\nA,d\xe9,1\n")
    with pytest.raises(ParseError, match=r"r9\.csv:2: byte offset 25: b'\\xe9' is not valid utf-8"):
        read_judgments(q)
    j = read_judgments_csv_latin1(q)
    assert j.table["doc_id"].astype(str).tolist() == ["dé"]


def read_judgments_csv_latin1(path: Path):
    from sessionval.io.trec import read_judgments_csv

    return read_judgments_csv(path, encoding="latin-1")


def test_flat_csv_in_another_encoding_or_with_a_bom(tmp_path):
    p = tmp_path / "s.csv"
    p.write_bytes(f"{HEADER},query_text\ns1,u,T,S,1,1,d1,caf\xe9\n".encode("latin-1"))
    with pytest.raises(ParseError, match=r"s\.csv:2: .*--encoding"):
        load_input(p)
    r = load_input(p, fmt="flat", encoding="latin-1")
    assert r.frame.queries["text"].tolist() == ["café"]
    p.write_bytes(f"{HEADER}\ns1,u,T,S,1,1,d1\n".encode("utf-16"))  # BOM: wins
    assert load_input(p).frame.results["doc_id"].astype(str).tolist() == ["d1"]


def test_t12_a_real_gzip_csv_is_read(tmp_path):
    p = tmp_path / "sessions.csv.gz"
    p.write_bytes(gzip.compress(f"{HEADER}\ns1,u1,T,S,1,1,d1\n".encode()))
    r = load_study(p)
    assert r.report.summary_line() == "1 records read = 1 sessions accepted + 0 rejected"


def test_t8_a_csv_gz_that_is_not_gzip_is_a_located_error(tmp_path):
    p = tmp_path / "sessions.csv.gz"
    p.write_text(f"{HEADER}\ns1,u1,T,S,1,1,d1\n")
    with pytest.raises(ParseError, match=r"sessions\.csv\.gz: named \.gz but not gzip"):
        load_study(p)
    assert main(["validate", str(p)]) == 2


def test_csv_header_naming_a_column_twice_is_an_error(tmp_path):
    p = csv_file(tmp_path / "s.csv", "s1,u,T,S,1,1,d1,2", header=HEADER + ",rank")
    with pytest.raises(ParseError, match=r"s\.csv:1: column\(s\) 'rank' appear more than once"):
        load_study(p)


# --- times outside the representable range (F4, T7)


@pytest.mark.parametrize("written", ["9999-12-31T23:59:59Z", "1500-01-01T00:00:00Z"])
def test_f4_csv_time_out_of_range_is_a_problem_per_row(tmp_path, written):
    p = csv_file(
        tmp_path / "s.csv",
        f"s1,u,T,S,1,1,d1,{written}",
        "s2,u,T,S,1,1,d1,2008-01-01T00:00:00Z",
        header=HEADER + ",session_start",
    )
    with pytest.raises(ValidationFailed, match=r"s\.csv:2: session_start: must be between 1677"):
        load_study(p)
    r = load_study(p, mode="lenient")
    assert r.report.summary_line() == "2 records read = 1 sessions accepted + 1 rejected"
    (problem,) = r.report.problems
    assert problem.value == repr(written) and problem.record == "s1"


def test_t7_jsonl_time_out_of_range_is_a_problem_not_a_traceback(tmp_path, make_session):
    s = make_session("s1")
    s["queries"][0]["time"] = "0001-01-01T00:00:00Z"
    p = tmp_path / "s.jsonl"
    p.write_text(json.dumps(s) + "\n" + json.dumps(make_session("s2")) + "\n")
    r = load_study(p, mode="lenient")
    assert r.report.summary_line() == "2 records read = 1 sessions accepted + 1 rejected"
    assert r.report.problems[0].location == "line 1"
    assert "must be between 1677-09-21 and 2262-04-11" in r.report.problems[0].message


# --- integers checked against their storage type before any cast (F9, F21, D7)


def test_f9_rank_beyond_32_bits_shows_the_value_as_written(tmp_path):
    p = csv_file(tmp_path / "s.csv", "s1,u,T,S,1,2147483648,d1")
    with pytest.raises(ValidationFailed) as err:
        load_study(p)
    (problem,) = err.value.problems
    assert problem.value == "'2147483648'" and problem.field == "rank"
    assert "-2147483648 and 2147483647" in problem.message  # the range, not a wrapped value


def test_f21_d7_query_positions_beyond_int16_are_rejected_not_wrapped(tmp_path):
    rows = [f"s1,u,T,S,{q},1,d1" for q in range(1, 32_771)]
    p = csv_file(tmp_path / "s.csv", "s2,u,T,S,1,1,d1", *rows)
    r = load_study(p, mode="lenient")
    assert r.report.summary_line() == "2 records read = 1 sessions accepted + 1 rejected"
    (problem,) = r.report.problems  # one per session, at its first query beyond the limit
    assert (problem.field, problem.value, problem.location) == ("query_pos", "32768", "line 32770")
    assert r.frame.sessions["n_queries"].tolist() == [1]


def test_d7_jsonl_session_with_more_than_32767_queries_fails_validation(tmp_path):
    queries = [{"position": i, "results": []} for i in range(1, 32_770)]
    session = {"session_id": "s", "user_id": "u", "topic_id": "T", "system_id": "S"}
    p = tmp_path / "s.jsonl"
    p.write_text(json.dumps({**session, "queries": queries}) + "\n")
    with pytest.raises(ValidationFailed, match=r"s\.jsonl:1: query_pos: must be at most 32767"):
        load_study(p)


def test_searcher_grade_and_clicks_beyond_their_storage_are_problems(tmp_path):
    p = csv_file(
        tmp_path / "s.csv",
        "s1,u,T,S,1,1,d1,40000,1",
        "s2,u,T,S,1,1,d1,1,99999999999",
        header=HEADER + ",user_grade,clicks",
    )
    r = load_study(p, mode="lenient")
    assert [(x.record, x.field, x.value) for x in r.report.problems] == [
        ("s2", "clicks", "'99999999999'"),
        ("s1", "user_grade", "'40000'"),
    ]


# --- one whitespace rule for ids in every format (F18)


def test_f18_ids_are_stripped_and_text_kept_as_written_in_csv_and_jsonl(tmp_path):
    p = csv_file(
        tmp_path / "s.csv",
        "s1 ,u,T,S,1,1, d1,  hello ",
        " s1,u,T,S,1,2,d2 ,  hello ",
        header=HEADER + ",query_text",
    )
    f = load_study(p).frame
    assert f.sessions["session_id"].astype(str).tolist() == ["s1"]
    assert f.results["doc_id"].astype(str).tolist() == ["d1", "d2"]
    assert f.queries["text"].tolist() == ["  hello "]
    session = {
        "session_id": " s1",
        "user_id": "u",
        "topic_id": "T",
        "system_id": "S",
        "queries": [{"position": 1, "text": "  hello ", "results": [{"rank": 1, "doc_id": " d1"}]}],
    }
    j = tmp_path / "s.jsonl"
    j.write_text(json.dumps(session) + "\n")
    g = load_study(j).frame
    assert g.sessions["session_id"].astype(str).tolist() == ["s1"]
    assert g.queries["text"].tolist() == ["  hello "]  # JSON-lines no longer strips text


def test_f18_the_same_three_sessions_give_the_same_accepted_count(tmp_path):
    """ws.csv / ws.jsonl of the repro: a session id repeated (after stripping) and a list
    repeating a document (after stripping) reject the same sessions in both formats."""
    base = {"user_id": "u", "topic_id": "A", "system_id": "S"}

    def line(sid, text, docs):
        results = [{"rank": r, "doc_id": d} for r, d in enumerate(docs, 1)]
        q = {"position": 1, "text": text, "results": results}
        return json.dumps({"session_id": sid, **base, "queries": [q]})

    j = tmp_path / "ws.jsonl"
    j.write_text(
        "\n".join(
            [
                line("s1", " hello ", ["d1"]),
                line(" s1", "x", ["d1"]),
                line("s2", "y", [" d1", "d1"]),
            ]
        )
        + "\n"
    )
    c = csv_file(
        tmp_path / "ws.csv",
        "s1,u,A,S,1,1,d1, hello ",
        " s1,u,A,S,1,1,d1,x",
        "s2,u,A,S,1,1, d1,y",
        "s2,u,A,S,1,2,d1,y",
        header=HEADER + ",query_text",
    )
    # s1 (repeated after stripping) is rejected; s2's repeated document is repaired
    from_csv, from_jsonl = load_study(c, mode="lenient"), load_study(j, mode="lenient")
    for loaded in (from_csv, from_jsonl):
        assert loaded.report.sessions_accepted == 1
        assert loaded.frame.sessions["session_id"].astype(str).tolist() == ["s2"]
        assert [r.record for r in loaded.report.repairs] == ["s2"]
    assert sorted(p.location for p in from_jsonl.report.problems) == ["line 1", "line 2"]


def test_blank_ids_are_problems_in_every_column(tmp_path):
    p = csv_file(
        tmp_path / "s.csv",
        "s1,u,T,S,1,1,   ",
        "s2,  ,T,S,1,1,d1",
        "s3,u,T,S,1,1,d1",
    )
    r = load_study(p, mode="lenient")
    assert r.report.summary_line() == "3 records read = 1 sessions accepted + 2 rejected"
    assert [(x.record, x.field) for x in r.report.problems] == [
        ("s1", "doc_id"),
        ("s2", "user_id"),
    ]
    assert all("only whitespace" in x.message for x in r.report.problems)


# --- rating columns in one order whatever the input (item 5)


def test_rating_columns_are_sorted_in_every_format(tmp_path, make_session):
    p = csv_file(tmp_path / "s.csv", "s1,u,T,S,1,1,d1,4,2", header=HEADER + ",rating_z,rating_a")
    cols = [c for c in load_study(p).frame.sessions.columns if c.startswith("rating_")]
    assert cols == ["rating_a", "rating_z"]
    s = make_session("s1")
    s["ratings"] = {"z": 4, "a": 2}
    j = tmp_path / "s.jsonl"
    j.write_text(json.dumps(s) + "\n")
    cols = [c for c in load_study(j).frame.sessions.columns if c.startswith("rating_")]
    assert cols == ["rating_a", "rating_z"]


# --- all problems in one pass in strict mode (F20)


def test_f20_strict_reports_record_and_study_level_problems_together(tmp_path):
    (tmp_path / "study.json").write_text(
        json.dumps({"name": "x", "users": [{"user_id": "u1"}], "systems": [{"system_id": "S"}]})
    )
    csv_file(
        tmp_path / "sessions.csv",
        "s1,u1,T,S,1,0,d1",  # record level: rank 0
        "s2,nobody,T,S,1,1,d1",  # study level: unknown user
    )
    with pytest.raises(ValidationFailed) as err:
        load_study(tmp_path)
    fields = [(p.record, p.field) for p in err.value.problems]
    assert fields == [("s1", "rank"), ("s2", "user_id")]


# --- lab tables (D1, D2, T4, books by record)


def lab(tmp_path: Path, session: str, results: str) -> tuple[Path, Path]:
    s, r = tmp_path / "session", tmp_path / "results"
    s.write_text(session)
    r.write_text(results)
    return s, r


def test_d1_every_result_row_of_an_unknown_session_is_listed_and_counted(tmp_path, capsys):
    rows = "".join(f"x{i}\t1\t1\thttp://w/a\n" for i in range(60))
    s, r = lab(
        tmp_path,
        "SessionID\tUser\tTopic\n1\tU1\tT\n",
        f"SessionID\tQno\trank\tURL\n1\t1\t1\thttp://w/a\n{rows}",
    )
    rep = load_lab_tables(s, r, mode="lenient").report
    assert rep.summary_line() == "61 records read = 1 sessions accepted + 60 rejected"
    assert len(rep.problems) == 60 and rep.problems[-1].location == "line 62"
    with pytest.raises(ValidationFailed) as err:
        load_lab_tables(s, r)
    assert len(err.value.problems) == 50 and err.value.truncated
    main(["validate", str(tmp_path), "--from", "lab-tables", "--lenient"])
    assert "... and 10 more" in capsys.readouterr().err


def test_d2_a_session_without_result_rows_is_a_counted_rejection(tmp_path):
    s, r = lab(
        tmp_path,
        "SessionID\tUser\tTopic\n1\tU1\tT\n2\tU2\tT\n",
        "SessionID\tQno\trank\tURL\n1\t1\t1\thttp://w/a\n",
    )
    rep = load_lab_tables(s, r, mode="lenient").report
    assert rep.summary_line() == "2 records read = 1 sessions accepted + 1 rejected"
    (problem,) = rep.problems
    assert (problem.location, problem.record) == ("line 3", "2")
    assert "has no result rows" in problem.message
    with pytest.raises(ValidationFailed, match=r"session:3: SessionID: session has no result"):
        load_lab_tables(s, r)


@pytest.mark.parametrize("mode", ["strict", "lenient"])
def test_t4_a_session_table_with_only_a_header_is_a_located_error(tmp_path, mode):
    s, r = lab(
        tmp_path, "SessionID\tUser\tTopic\n", "SessionID\tQno\trank\tURL\n1\t1\t1\thttp://w/a\n"
    )
    with pytest.raises(ValidationFailed) as err:
        load_lab_tables(s, r, mode=mode)
    text = str(err.value)
    assert "session:1: the session table has a header but no rows" in text
    assert "results:2: SessionID: session id not in the session table" in text
    out = tmp_path.parent / f"{tmp_path.name}-o"  # not inside the input folder
    assert main(["convert", str(tmp_path), "--from", "lab-tables", "--out", str(out)]) == 1


def test_lab_duplicate_session_rows_are_two_rejections(tmp_path):
    s, r = lab(
        tmp_path,
        "SessionID\tUser\tTopic\n1\tU1\tT\n2\tU1\tT\n2\tU2\tT\n",
        "SessionID\tQno\trank\tURL\n1\t1\t1\thttp://w/a\n2\t1\t1\thttp://w/a\n",
    )
    rep = load_lab_tables(s, r, mode="lenient").report
    assert rep.summary_line() == "3 records read = 1 sessions accepted + 2 rejected"
    assert [p.location for p in rep.problems] == ["line 3", "line 4"]
    assert "listed more than once (lines 3, 4)" in rep.problems[0].message


def test_lab_rating_that_is_not_a_number_rejects_its_session(tmp_path):
    s, r = lab(
        tmp_path,
        "SessionID\tUser\tTopic\tDifficulty\n1\tU1\tT\t3\n2\tU1\tT\thard\n",
        "SessionID\tQno\trank\tURL\n1\t1\t1\thttp://w/a\n2\t1\t1\thttp://w/a\n",
    )
    rep = load_lab_tables(s, r, mode="lenient").report
    (problem,) = rep.problems
    assert (problem.location, problem.field, problem.value) == ("line 3", "Difficulty", "'hard'")


def test_lab_tables_in_another_encoding_and_grades_beyond_int16(tmp_path):
    s, r = lab(
        tmp_path,
        "SessionID\tUser\tTopic\n1\tU1\tT\n",
        "SessionID\tQno\trank\tURL\n1\t1\t1\thttp://w/\xe9\n",
    )
    r.write_bytes("SessionID\tQno\trank\tURL\n1\t1\t1\thttp://w/\xe9\n".encode("latin-1"))
    with pytest.raises(ParseError, match=r"results:2: byte offset"):
        load_lab_tables(s, r)
    f = load_lab_tables(s, r, encoding="latin-1").frame
    assert f.results["doc_id"].astype(str).tolist() == ["http://w/é"]
    q = tmp_path / "qrels"
    q.write_text("SessionID\tURL\tRelevance\n1\thttp://w/a\t40000\n")
    with pytest.raises(
        JudgmentError, match=r"qrels:2: Relevance: must be an integer from -32768 to 32767"
    ):
        load_lab_tables(s, r, q, encoding="latin-1")


def test_a_csv_without_line_ends_is_refused_at_once(tmp_path):
    """Fuzz finding FZ18: form feeds for newlines make one header of ~17,000 names; pandas
    took seconds renaming the repeats. The repeated names are found before pandas reads."""
    import time

    rows = [HEADER] + [f"s{i // 10},u1,T1,S1,1,{i % 10 + 1},d{i}" for i in range(2400)]
    path = tmp_path / "ff.csv"
    path.write_text("\f".join(rows), encoding="utf-8")
    t0 = time.perf_counter()
    with pytest.raises(ParseError, match=r"ff\.csv:1: column\(s\) .* appear more than once"):
        load_study(path)
    assert time.perf_counter() - t0 < 2.0

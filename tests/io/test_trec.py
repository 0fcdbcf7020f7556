"""TREC qrels and run readers: line rule, field counts, encodings, ranges, all problems at once."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from sessionval.errors import JudgmentError, ParseError
from sessionval.io.trec import read_judgments, read_judgments_csv, read_qrels, read_run
from sessionval.models.judgments import GradeScale


def _write(path: Path, data: str | bytes) -> Path:
    path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    return path


# D3: a double quote is data in whitespace-separated files


def test_quote_in_qrels_is_data(tmp_path: Path) -> None:
    q = _write(tmp_path / "q.txt", 'T 0 "d1 1\nT 0 d2 1\nT 0 d3 1\nT 0 d4" 1\nT 0 d5 2\n')
    j = read_qrels(q)
    assert j.table["doc_id"].astype(str).tolist() == ['"d1', "d2", "d3", 'd4"', "d5"]
    assert j.table["grade"].tolist() == [1, 1, 1, 1, 2]


def test_quote_in_run_is_data(tmp_path: Path) -> None:
    r = _write(
        tmp_path / "r.run",
        'T Q0 "d1 1 3.0 r\nT Q0 d2 2 2.0 r\nT Q0 d3" 3 1.0 r\nT Q0 d4 4 0.5 r\n',
    )
    run = read_run(r)
    assert run["doc_id"].astype(str).tolist() == ['"d1', "d2", 'd3"', "d4"]
    assert run["rank"].tolist() == [1, 2, 3, 4]


# F17: more or fewer fields than the format has


def test_extra_field_in_run_is_an_error_not_a_shift(tmp_path: Path) -> None:
    r = _write(tmp_path / "r.run", "A Q0 d1 1 1.0 runA extra\nA Q0 d2 2 0.5 runA extra\n")
    with pytest.raises(ParseError) as exc:
        read_run(r)
    msg = str(exc.value)
    assert "2 problems in the run file" in msg
    assert "r.run:1: run line has 7 fields, expected 6" in msg
    assert "r.run:2: run line has 7 fields, expected 6" in msg
    assert "'A Q0 d1 1 1.0 runA extra'" in msg


def test_extra_field_on_a_later_line_and_short_lines(tmp_path: Path) -> None:
    q = _write(tmp_path / "q.txt", "A 0 d1 1\nA 0 d2 1 9\n\nA 0 d3\nA 0 d4 x\n")
    with pytest.raises(ParseError) as exc:
        read_qrels(q)
    msg = str(exc.value)
    # every problem in one pass, with the right line numbers (the blank line counts)
    assert "3 problems in the qrels file" in msg
    assert "q.txt:2: qrels line has 5 fields, expected 4" in msg
    assert "q.txt:4: qrels line has 3 fields, expected 4" in msg
    assert "q.txt:5: grade: must be an integer (got 'x')" in msg


def test_extra_field_on_the_first_line_only(tmp_path: Path) -> None:
    q = _write(tmp_path / "q.txt", "A 0 d1 1 x\nA 0 d2 1\n")
    with pytest.raises(ParseError, match=r"q\.txt:1: qrels line has 5 fields, expected 4"):
        read_qrels(q)


# F6 / D4 / F9: integers checked against the storage type and the scale before any cast


@pytest.mark.parametrize("grade", ["32768", "65537", "40000", "-32769", "99999999999999999999"])
def test_grade_beyond_int16_is_an_error_with_the_value_as_written(
    tmp_path: Path, grade: str
) -> None:
    q = _write(tmp_path / "q.txt", f"A 0 d1 {grade}\nA 0 d2 1\n")
    with pytest.raises(JudgmentError) as exc:
        read_qrels(q)
    msg = str(exc.value)
    assert "q.txt:1: grade: must be an integer from -32768 to 32767" in msg
    assert f"(got '{grade}')" in msg


def test_int16_limits_are_accepted(tmp_path: Path) -> None:
    q = _write(tmp_path / "q.txt", "A 0 d1 32767\nA 0 d2 -32768\n")
    assert read_qrels(q).table["grade"].tolist() == [32767, -32768]


def test_grade_off_the_scale_lists_every_line(tmp_path: Path) -> None:
    q = _write(tmp_path / "q.txt", "A 0 d1 1\nA 0 d2 7\nA 0 d3 9\n")
    with pytest.raises(JudgmentError) as exc:
        read_qrels(q, scale=GradeScale.default())
    msg = str(exc.value)
    assert "q.txt:2: grade: not on the scale" in msg and "(got '7')" in msg
    assert "q.txt:3: grade: not on the scale" in msg and "(got '9')" in msg


def test_non_finite_grade_is_an_error(tmp_path: Path) -> None:
    q = _write(tmp_path / "q.txt", "A 0 d1 inf\nA 0 d2 nan\n")
    with pytest.raises(ParseError) as exc:
        read_qrels(q)
    assert "q.txt:1: grade: must be an integer (got 'inf')" in str(exc.value)
    assert "q.txt:2: grade: must be an integer (got 'nan')" in str(exc.value)


def test_rank_out_of_range_and_bad_score_together(tmp_path: Path) -> None:
    r = _write(
        tmp_path / "r.run",
        "A Q0 d1 1 1.0 t\nA Q0 d2 99999999999999999999 0.5 t\nA Q0 d3 3 high t\n",
    )
    with pytest.raises(ParseError) as exc:
        read_run(r)
    msg = str(exc.value)
    assert "r.run:2: rank: must be an integer from" in msg
    assert "(got '99999999999999999999')" in msg
    assert "r.run:3: score: must be a number (got 'high')" in msg


def test_conflicting_duplicates_list_every_pair(tmp_path: Path) -> None:
    q = _write(tmp_path / "q.txt", "A 0 d1 1\nA 0 d1 2\nB 0 d9 0\nB 0 d9 1\nA 0 d2 1\nA 0 d2 1\n")
    with pytest.raises(JudgmentError) as exc:
        read_qrels(q)
    msg = str(exc.value)
    assert "judged more than once for topic 'A' with different grades (1, 2 on lines 1, 2)" in msg
    assert "judged more than once for topic 'B' with different grades (0, 1 on lines 3, 4)" in msg


def test_a_document_judged_on_many_lines_lists_a_few(tmp_path: Path) -> None:
    q = _write(tmp_path / "q.txt", "".join(f"A 0 d1 {i % 2}\n" for i in range(3000)))
    with pytest.raises(JudgmentError) as exc:
        read_qrels(q)
    msg = str(exc.value)
    assert "(0, 1, 0, 1, 0, 1, 0, 1, 0, 1 and 2,990 more on lines 1, 2, 3" in msg
    assert "10 and 2,990 more)" in msg
    assert len(msg) < 400


def test_problems_are_capped_at_the_limit(tmp_path: Path) -> None:
    q = _write(tmp_path / "q.txt", "".join(f"A 0 d{i} x\n" for i in range(10)))
    with pytest.raises(ParseError) as exc:
        read_qrels(q, max_problems=3)
    msg = str(exc.value)
    assert "10 problems in the qrels file (the first 3 are listed)" in msg
    assert msg.count("must be an integer") == 3


# T2 / F7: line endings and the characters that are not separators


def test_cr_only_line_endings(tmp_path: Path) -> None:
    q = _write(tmp_path / "q.txt", "T 0 d1 1\rT 0 d2 2\r")
    assert read_qrels(q).table["grade"].tolist() == [1, 2]
    q2 = _write(tmp_path / "q2.txt", "T 0 d1 1\rT 0 d2 x\r")
    with pytest.raises(ParseError, match=r"q2\.txt:2: grade: must be an integer \(got 'x'\)"):
        read_qrels(q2)


def test_crlf_line_endings(tmp_path: Path) -> None:
    r = _write(tmp_path / "r.run", "T Q0 d1 1 1.0 t\r\nT Q0 d2 2 0.5 t\r\n")
    assert read_run(r)["tag"].astype(str).tolist() == ["t", "t"]


def test_lone_vertical_tab_line_is_a_located_error(tmp_path: Path) -> None:
    r = _write(tmp_path / "vt.run", "201_1 Q0 d1 1 1.0 r\n\x0b")
    with pytest.raises(ParseError, match=r"vt\.run:2: run line has 1 field, expected 6"):
        read_run(r)


def test_blank_lines_of_spaces_and_tabs_are_skipped(tmp_path: Path) -> None:
    q = _write(tmp_path / "q.txt", "A 0 d1 1\n \t \n\tA 0 d2 0 \n")
    assert read_qrels(q).table["doc_id"].astype(str).tolist() == ["d1", "d2"]


def test_empty_qrels(tmp_path: Path) -> None:
    q = _write(tmp_path / "q.txt", "\n  \n")
    with pytest.raises(ParseError, match=r"q\.txt: file is empty"):
        read_qrels(q)


# F1 / T1: encodings, BOMs, gzip


def test_non_utf8_qrels_is_a_located_error_and_reads_with_an_encoding(tmp_path: Path) -> None:
    q = _write(tmp_path / "q.txt", "A 0 d1 1\nA 0 caf\xe9 2\n".encode("latin-1"))
    with pytest.raises(ParseError, match=r"q\.txt:2: byte offset 16: b'\\xe9' is not valid utf-8"):
        read_qrels(q)
    j = read_qrels(q, encoding="latin-1")
    assert j.table["doc_id"].astype(str).tolist() == ["d1", "café"]


def test_non_utf8_run_and_csv_judgments(tmp_path: Path) -> None:
    r = _write(tmp_path / "r.run", "A Q0 \xff 1 1.0 t\n".encode("latin-1"))
    with pytest.raises(ParseError, match=r"r\.run:1: byte offset 5"):
        read_run(r)
    assert read_run(r, encoding="latin-1")["doc_id"].astype(str).tolist() == ["\xff"]
    c = _write(tmp_path / "j.csv", "topic_id,doc_id,grade\nA,caf\xe9,1\n".encode("latin-1"))
    with pytest.raises(ParseError, match=r"j\.csv:2"):
        read_judgments(c)
    assert read_judgments_csv(c, encoding="cp1252").table["doc_id"].astype(str).tolist() == ["café"]


def test_bom_and_utf16_and_gzip(tmp_path: Path) -> None:
    text = "A 0 d\u00e9 1\nA 0 d2 0\n"
    q8 = _write(tmp_path / "q8.txt", b"\xef\xbb\xbf" + text.encode("utf-8"))
    q16 = _write(tmp_path / "q16.txt", text.encode("utf-16"))
    qgz = _write(tmp_path / "q.txt.gz", gzip.compress(text.encode("utf-8")))
    for q in (q8, q16, qgz):
        assert read_qrels(q).table["doc_id"].astype(str).tolist() == ["d\u00e9", "d2"]
    fake = _write(tmp_path / "bad.txt.gz", text)
    with pytest.raises(ParseError, match=r"bad\.txt\.gz: named \.gz but not gzip"):
        read_qrels(fake)


def test_unknown_encoding(tmp_path: Path) -> None:
    q = _write(tmp_path / "q.txt", "A 0 d1 1\n")
    with pytest.raises(ParseError, match="encoding 'klingon' is not known"):
        read_qrels(q, encoding="klingon")


def test_csv_judgments_blank_lines_and_short_rows(tmp_path: Path) -> None:
    c = _write(tmp_path / "j.csv", "topic_id,doc_id,grade\nA,d1,1\n\nA,d2\nA,d3,x\nA,d4,2\n\n")
    with pytest.raises(ParseError) as exc:
        read_judgments_csv(c)
    msg = str(exc.value)
    assert "2 problems in the judgments file" in msg
    assert "j.csv:4: grade: is empty" in msg
    assert "j.csv:5: grade: must be an integer (got 'x')" in msg
    ok = _write(tmp_path / "ok.csv", "topic_id,doc_id,grade\nA,d1,1\n\nA,d2,40000\n")
    with pytest.raises(JudgmentError, match=r"ok\.csv:4: grade: must be an integer from -32768"):
        read_judgments_csv(ok)
    fine = _write(tmp_path / "fine.csv", "topic_id,doc_id,grade\nA,d1,1\n\n")
    assert read_judgments_csv(fine).table["grade"].tolist() == [1]


# UNI-3: grades and ranks are decided on their text, not on the float they round to


@pytest.mark.parametrize("written", ["0.99999999999999999", "2.9999999999999999", "1e-400"])
def test_grade_that_only_rounds_to_an_integer_is_a_located_error(
    tmp_path: Path, written: str
) -> None:
    q = _write(tmp_path / "q.txt", f"A 0 d1 1\nA 0 d2 {written}\n")
    with pytest.raises(ParseError, match=r"q\.txt:2: grade: must be an integer as written"):
        read_qrels(q)


def test_grades_written_as_integers_are_accepted(tmp_path: Path) -> None:
    q = _write(tmp_path / "q.txt", "A 0 d1 3.0\nA 0 d2 +2\nA 0 d3 -1\nA 0 d4 0\n")
    assert read_qrels(q).table["grade"].tolist() == [3, 2, -1, 0]


def test_csv_grade_and_run_rank_are_decided_on_their_text(tmp_path: Path) -> None:
    j = _write(tmp_path / "j.csv", "topic_id,doc_id,grade\nA,d1,2.9999999999999999\n")
    with pytest.raises(ParseError, match=r"j\.csv:2: grade: must be an integer as written"):
        read_judgments_csv(j)
    r = _write(tmp_path / "r.run", "A Q0 d1 1 1.0 r\nA Q0 d2 1.9999999999999999 0.5 r\n")
    with pytest.raises(ParseError, match=r"r\.run:2: rank: must be an integer as written"):
        read_run(r)

"""Issue 25 item 5: a CSV judgments table with the user's own column names, read through
``--qrels-map`` / ``qrels_map=`` (the grammar of the sessions' ``--map``)."""

from __future__ import annotations

import pytest

import sessionval as sv
from sessionval.cli import main
from sessionval.errors import InputFormatError, ParseError
from sessionval.io.column_map import parse_judgment_map
from sessionval.io.trec import read_judgments

OWN = "Doc;Query;Rel\nd1;A;3\nd2;A;0\nd9;B;2\n".replace(";", ",")


def _own(tmp_path, name="mine.csv", text=OWN):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_a_mapped_table_reads_as_the_same_judgments(tmp_path):
    standard = _own(tmp_path, "std.csv", "topic_id,doc_id,grade\nA,d1,3\nA,d2,0\nB,d9,2\n")
    mapped = read_judgments(_own(tmp_path), columns="topic=Query,doc=Doc,grade=Rel")
    expected = read_judgments(standard)
    assert (
        mapped.table[["topic_id", "doc_id", "grade"]]
        .astype(str)
        .equals(expected.table[["topic_id", "doc_id", "grade"]].astype(str))
    )
    # ir_measures' names as targets, a constant assessor
    spec = "query_id=Query, doc_id=Doc, relevance=Rel, assessor='lab'"
    with_assessor = read_judgments(_own(tmp_path), columns=spec)
    assert set(with_assessor.table["assessor"].astype(str)) == {"lab"}


def test_map_errors_name_what_is_wrong_and_what_is_allowed(tmp_path):
    with pytest.raises(InputFormatError, match=r"unknown target column 'score'.*allowed: topic_id"):
        parse_judgment_map("score=Rel")
    with pytest.raises(InputFormatError, match=r"'Nope' that the table does not have.*Doc, Query"):
        read_judgments(_own(tmp_path), columns="topic=Nope,doc=Doc,grade=Rel")
    with pytest.raises(ParseError, match="map them with --qrels-map topic=YourTopic"):
        read_judgments(_own(tmp_path))
    trec = _own(tmp_path, "qrels.txt", "A 0 d1 3\n")
    with pytest.raises(InputFormatError, match="TREC qrels have fixed columns"):
        read_judgments(trec, columns="topic=Query")


def test_validate_and_load_study_take_the_map(study_dir, tmp_path, capsys):
    qrels = _own(tmp_path)
    spec = "topic=Query,doc=Doc,grade=Rel"
    args = ["validate", str(study_dir), "--qrels", str(qrels)]
    assert main(args) == 2
    assert "--qrels-map" in capsys.readouterr().err
    assert main([*args, "--qrels-map", spec]) == 0
    out = capsys.readouterr().out
    assert "2 records read = 2 sessions accepted" in out
    loaded = sv.load_study(study_dir, qrels=qrels, qrels_map=spec)
    assert loaded.judgments is not None and len(loaded.judgments.table) == 3
    # a format with its own judgments reader refuses the option by name
    with pytest.raises(InputFormatError, match="qrels_map do not apply to the cast format"):
        sv.load_study(study_dir, fmt="cast", qrels=qrels, qrels_map=spec)


def test_evaluate_compare_and_meta_read_a_mapped_qrels_argument(tmp_path, capsys):
    from tests.builders import trec_runs

    qrels, runs = trec_runs(tmp_path, n_topics=6)
    own = tmp_path / "own.csv"
    lines = qrels.read_text().split()
    rows = [lines[i : i + 4] for i in range(0, len(lines), 4)]
    own.write_text("Doc,Query,Rel\n" + "".join(f"{d},{t},{g}\n" for t, _, d, g in rows))
    spec = ["--qrels-map", "query_id=Query,doc=Doc,relevance=Rel"]
    expected = []
    for source, extra in ((qrels, []), (own, spec)):
        assert main(["evaluate", str(source), str(runs[0]), "-m", "AP", *extra]) == 0
        expected.append(capsys.readouterr().out)
    assert expected[0] == expected[1] and expected[0].startswith("AP\tall\t")
    for source, extra in ((qrels, []), (own, spec)):
        assert main(["compare", str(source), *map(str, runs), "-m", "AP", *extra]) == 0
        expected.append(capsys.readouterr().out)
    assert expected[2] == expected[3]
    args = ["meta", "rank-correlation", str(own), *map(str, runs), "-m", "AP", "-m", "P@3"]
    assert main([*args, *spec]) == 0
    assert main(args) == 2
    assert "map them with --qrels-map" in capsys.readouterr().err

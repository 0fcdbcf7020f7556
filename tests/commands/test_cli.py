from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from sessionval.cli import main

REPO = Path(__file__).resolve().parents[2]


def test_validate_prints_summary(study_dir: Path, capsys):
    assert main(["validate", str(study_dir), "--qrels", str(study_dir / "qrels.txt")]) == 0
    out = capsys.readouterr().out
    assert "2 records read = 2 sessions accepted + 0 rejected" in out
    assert "Sessions issuing exactly n queries" in out
    assert "reference judged (all ranks)" in out
    # s1 has d1 (judged), d2 (judged), d3 (judged); s2 has d9, d1, d9 -> all judged
    assert "1.000" in out


def test_validate_unknown_topic(study_dir: Path, capsys, make_session, write_jsonl):
    write_jsonl(study_dir / "sessions.jsonl", [make_session("s1", topic="Z")])
    assert main(["validate", str(study_dir)]) == 1
    err = capsys.readouterr().err
    assert (
        "session s1" in err and "topic_id: unknown topic (known in the study header: A, B)" in err
    )
    assert "(got 'Z')" in err


def test_validate_topic_without_judgments(study_dir: Path, capsys):
    (study_dir / "qrels.txt").write_text("A 0 d1 3\n")
    assert main(["validate", str(study_dir), "--qrels", str(study_dir / "qrels.txt")]) == 1
    err = capsys.readouterr().err
    assert "topic 'B' has no reference judgments" in err and 'judged": false' in err


def test_topic_declared_unjudged_is_accepted(study_dir: Path):
    header = json.loads((study_dir / "study.json").read_text())
    header["topics"][1]["judged"] = False
    (study_dir / "study.json").write_text(json.dumps(header))
    (study_dir / "qrels.txt").write_text("A 0 d1 3\n")
    assert main(["validate", str(study_dir), "--qrels", str(study_dir / "qrels.txt")]) == 0


def test_validate_non_numeric_grade(study_dir: Path, capsys):
    (study_dir / "qrels.txt").write_text("A 0 d1 3\nB 0 d9 high\n")
    assert main(["validate", str(study_dir), "--qrels", str(study_dir / "qrels.txt")]) == 2
    assert "qrels.txt:2: grade: must be an integer (got 'high')" in capsys.readouterr().err


def test_validate_lenient_writes_rejects(
    study_dir: Path, tmp_path: Path, capsys, make_session, write_jsonl
):
    bad = make_session("s3")
    bad["queries"][0]["results"][0]["rank"] = 2
    write_jsonl(study_dir / "sessions.jsonl", [make_session("s1"), bad, "{"])
    rejects = tmp_path / "rejects.csv"
    code = main(["validate", str(study_dir), "--lenient", "--rejects", str(rejects)])
    assert code == 0
    captured = capsys.readouterr()
    assert "3 records read = 1 sessions accepted + 2 rejected" in captured.out
    table = pd.read_csv(rejects)
    assert set(table["location"]) == {"line 2", "line 3"}
    row = table[table["location"] == "line 2"].iloc[0]
    assert row["field"] == "queries[0].results[0].rank"
    assert row["message"] == "rank 2 leaves a gap: expected 1 (ranks must be 1..n without gaps)"


def test_validate_lenient_with_every_session_rejected_fails_in_every_format(
    study_dir: Path, tmp_path: Path, capsys, make_session, write_jsonl
):
    """Nothing valid left fails validation (exit 1): a flat table as JSON-lines already did."""
    table = tmp_path / "allbad.csv"
    table.write_text(
        "session_id,user_id,topic_id,system_id,query_pos,rank,doc_id\n"
        "s1,u,A,S,1,1,d1\ns1,u,A,S,1,1,d2\n"
    )
    rejects = tmp_path / "rejects.csv"
    assert main(["validate", str(table), "--lenient", "--rejects", str(rejects)]) == 1
    err = capsys.readouterr().err
    assert "1 problem found" in err and "rank 1 appears twice" in err
    assert len(pd.read_csv(rejects)) == 1  # the rejects are still written
    bad = make_session("s3")
    bad["queries"][0]["results"][0]["rank"] = 2
    write_jsonl(study_dir / "sessions.jsonl", [bad, "{"])
    assert main(["validate", str(study_dir), "--lenient"]) == 1
    assert "2 problems found" in capsys.readouterr().err


def test_validate_lenient_with_only_rows_without_session_ids_fails(tmp_path: Path, capsys):
    """FL-2: id-less rows are rejected records, so nothing left fails (it exited 0, 0 read)."""
    table = tmp_path / "blank.csv"
    table.write_text(
        "session_id,user_id,topic_id,system_id,query_pos,rank,doc_id\n,u,A,S,1,1,d1\n,u,A,S,1,2,d2\n"
    )
    assert main(["validate", str(table), "--lenient"]) == 1
    err = capsys.readouterr().err
    assert "2 problems found" in err and "blank.csv:3: session_id: is required" in err


def test_validate_strict_exit_code_and_all_problems(
    study_dir: Path, capsys, make_session, write_jsonl
):
    a, b = make_session("s1"), make_session("s2")
    a["queries"][0]["results"][1]["doc_id"] = "d1"
    b["queries"][0]["position"] = 2
    write_jsonl(study_dir / "sessions.jsonl", [a, b])
    assert main(["validate", str(study_dir)]) == 1
    err = capsys.readouterr().err
    assert "2 problems found" in err


def test_missing_session_file(tmp_path: Path, capsys):
    assert main(["validate", str(tmp_path)]) == 2
    assert "no session log found (looked for sessions.jsonl" in capsys.readouterr().err


def test_schema_check_on_repository():
    assert main(["schema", "--check", "--dir", str(REPO / "schemas")]) == 0


def test_schema_check_detects_staleness(tmp_path: Path, capsys):
    assert main(["schema", "--dir", str(tmp_path)]) == 0
    assert main(["schema", "--check", "--dir", str(tmp_path)]) == 0
    p = tmp_path / "session.schema.json"
    p.write_text(p.read_text().replace('"rank"', '"rnk"'))
    assert main(["schema", "--check", "--dir", str(tmp_path)]) == 1
    assert "stale schema file(s)" in capsys.readouterr().err


def test_help_lists_commands(capsys):
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    for name in ("validate", "schema", "synth"):
        assert name in out


def test_validate_reads_trec_session_xml_directly(fx: Path, capsys):
    args = ["validate", str(fx / "ts2013_quirks.xml"), "--lenient"]
    assert main(args) == 0
    captured = capsys.readouterr()
    # session 10 lists a document twice: repaired and listed (issue 10, item 3)
    assert "4 records read = 3 sessions accepted + 1 rejected" in captured.out
    assert "2 repair(s) or note(s):" in captured.err and "click skipped" in captured.err
    assert "document cw-a1 listed twice" in captured.err
    assert main(["validate", str(fx / "ts2013_quirks.xml")]) == 1  # strict


def test_validate_refuses_an_option_of_another_format(fx: Path, capsys):
    args = ["validate", str(fx / "ts2013.xml"), "--depth", "3"]
    assert main(args) == 2
    assert "option(s) depth do not apply to the trec-session format" in capsys.readouterr().err


def test_input_options_come_from_the_registry():
    import click
    from click.testing import CliRunner

    from sessionval.commands._options import input_format_options, load_input_kwargs
    from sessionval.io.formats import format_options

    @click.command()
    @input_format_options
    def probe(**values: object) -> None:
        click.echo(repr(sorted(load_input_kwargs(values).items())))

    flags = {o for p in probe.params for o in p.opts}
    assert "--from" in flags
    assert {opt.flag for opt, _ in format_options().values() if opt.cli} <= flags
    assert "--max-rank" not in flags  # Python only
    result = CliRunner().invoke(probe, ["--from", "cast", "--depth", "4"])
    assert result.output.strip() == "[('depth', 4), ('fmt', 'cast')]"


def test_validate_reads_latin1_logs_and_qrels_with_encoding(study_dir: Path, capsys):
    """issue 10 F1: non-UTF-8 qrels is a located error (exit 2); --encoding reads it."""
    q = study_dir / "qrels.txt"
    text = q.read_text(encoding="utf-8") + "A 0 caf\u00e9 0\n"
    q.write_bytes(text.encode("latin-1"))
    assert main(["validate", str(study_dir), "--qrels", str(q)]) == 2
    err = capsys.readouterr().err
    assert "qrels.txt:" in err and "b'\\xe9' is not valid utf-8" in err
    assert main(["validate", str(study_dir), "--qrels", str(q), "--encoding", "latin-1"]) == 0


def test_validate_grade_beyond_16_bits_is_an_error(study_dir: Path, capsys):
    """issue 10 F6: grade 32768 is not stored as -32768."""
    q = study_dir / "qrels.txt"
    q.write_text(q.read_text(encoding="utf-8") + "A 0 dz 32768\n", encoding="utf-8")
    assert main(["validate", str(study_dir), "--qrels", str(q)]) == 2
    assert "(got '32768')" in capsys.readouterr().err

"""The format registry: every format loads its fixture the same way from Python and the CLI."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from sessionval.analysis.summary import summarize
from sessionval.cli import main
from sessionval.errors import InputFormatError, ParseError
from sessionval.frame import LoadedStudy
from sessionval.io.formats import (
    FORMATS,
    detect_format,
    format_options,
    formats_markdown,
    load_input,
)

REPO = Path(__file__).resolve().parents[2]
MAPPED = "session=SID,user=Who,topic=Task,query_pos=Qno,rank=Pos,doc=Doc,system='lab'"

#: format -> (input, its options, qrels) under tests/io/fixtures; paths are relative to it
FIXTURES: dict[str, tuple[str, dict[str, Any], str | None]] = {
    "jsonl": ("study", {}, "study/qrels.txt"),
    "flat": ("mapped.csv", {"mapping": MAPPED}, None),
    "parquet-parts": ("parts", {}, "parts/qrels.txt"),
    "trec-session": ("ts2013.xml", {"topic_map": "topicmap2013.txt"}, "qrels2013.txt"),
    "lab-tables": ("lab", {}, None),  # the folder's qrels are found
    "cast": ("cast", {"topics": "cast/topics.json", "depth": 2}, "cast/qrels.txt"),
}


def fixture(fx: Path, name: str) -> tuple[Path, dict[str, Any], Path | None]:
    path, options, qrels = FIXTURES[name]
    files = {n for n, (opt, _) in format_options().items() if opt.kind == "file"}
    resolved = {k: fx / v if k in files else v for k, v in options.items()}
    return fx / path, resolved, fx / qrels if qrels else None


def test_every_format_has_a_fixture():
    assert set(FIXTURES) == set(FORMATS), "add a fixture for each new format"


@pytest.mark.parametrize("name", list(FIXTURES))
def test_format_reads_its_fixture_from_python_and_the_cli(fx, name, capsys, same_frame):
    path, options, qrels = fixture(fx, name)
    loaded = load_input(path, name, qrels=qrels, **options)
    assert isinstance(loaded, LoadedStudy)
    assert loaded.qrels_key == FORMATS[name].qrels_key
    assert loaded.frame.n_sessions == loaded.report.sessions_accepted > 0
    assert loaded.report.records_read == loaded.report.sessions_accepted
    assert loaded.judgments is not None or name == "flat"
    # the study header names every entity of the frame
    assert {u.user_id for u in loaded.study.users} >= set(
        loaded.frame.sessions["user_id"].astype(str)
    )
    # auto recognises it and reads the same study
    assert detect_format(path) == name
    same_frame(loaded.frame, load_input(path, qrels=qrels, **options).frame)
    # `sessionval validate --from NAME` prints the summary of the same study
    flags = {n: opt.flag for n, (opt, _) in format_options().items()}
    args = ["validate", str(path), "--from", name]
    for key, value in options.items():
        args += [flags[key], str(value)]
    if qrels is not None:
        args += ["--qrels", str(qrels)]
    assert main(args) == 0
    assert capsys.readouterr().out == summarize(loaded).to_text() + "\n"


def test_an_option_of_another_format_is_refused(fx):
    with pytest.raises(
        InputFormatError,
        match=r"option\(s\) topics do not apply to the trec-session format "
        r"\(its options: encoding, topic_map, year\)",
    ):
        load_input(fx / "ts2013.xml", topics=fx / "cast" / "topics.json")
    # None means "not given"
    assert load_input(fx / "ts2013.xml", topics=None).frame.n_sessions == 2


def test_unknown_format_and_unrecognised_input(fx, tmp_path):
    with pytest.raises(
        InputFormatError, match=r"unknown input format 'xlsx' \(allowed: auto, jsonl"
    ):
        load_input(fx / "mapped.csv", "xlsx")
    (tmp_path / "notes.md").write_text("hello")
    with pytest.raises(InputFormatError, match=r"notes\.md: cannot tell the format of this file"):
        detect_format(tmp_path / "notes.md")
    with pytest.raises(InputFormatError, match="no session log found"):
        detect_format(tmp_path)
    with pytest.raises(ParseError, match="no such file or folder"):
        detect_format(tmp_path / "missing")


@pytest.mark.parametrize(
    ("relative", "name"),
    [
        ("study/sessions.jsonl", "jsonl"),
        ("cast/runA.run", "cast"),
        ("lab/session", "lab-tables"),
        ("ts2012.xml", "trec-session"),
    ],
)
def test_detect_single_files(fx, relative, name):
    assert detect_format(fx / relative) == name


def test_options_are_declared_once_with_the_formats_that_take_them():
    options = format_options()
    assert options["header"][1] == ("jsonl", "flat")
    assert options["depth"][0].low == 1
    flags = [opt.flag for opt, _ in options.values()]
    assert len(flags) == len(set(flags))


def test_docs_list_the_formats_of_the_registry():
    text = (REPO / "docs" / "formats.md").read_text()
    section = re.search(r"<!-- formats:begin[^\n]*-->\n(.*?)\n<!-- formats:end -->", text, re.S)
    assert section is not None, "docs/formats.md lost its formats markers"
    assert section.group(1) == formats_markdown(), "regenerate the table (see its marker)"

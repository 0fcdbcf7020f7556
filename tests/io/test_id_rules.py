"""One whitespace rule for ids in every reader (``sessionval.validate.ids``).

Each reader gets the same document id written with a no-break space (U+00A0) or an
ideographic space (U+3000) around it; every reader must give the id ``d1`` so the
log's result and the judgment meet (before the rule, TREC qrels and runs kept the
space while the other readers removed it: the judged document became unjudged).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest

from sessionval.errors import ParseError
from sessionval.io.cast import load_cast
from sessionval.io.lab_tables import load_lab_tables
from sessionval.io.study import load_study
from sessionval.io.trec import read_judgments_csv, read_qrels, read_run
from tests.builders import flat_table, make_session, write_jsonl

FIXTURES = Path(__file__).parent / "fixtures"
SPACES = pytest.mark.parametrize("space", ["\u00a0", "\u3000"], ids=["nbsp", "ideographic"])


def _docs(col: pd.Series) -> set[str]:
    return set(col.astype(str))


@SPACES
def test_qrels_strip_unicode_whitespace_around_ids(tmp_path: Path, space: str) -> None:
    p = tmp_path / "q.txt"
    p.write_text(f"A{space} 0 d1{space} 3\nA 0 {space}d2 1\n", encoding="utf-8")
    j = read_qrels(p)
    assert _docs(j.table["topic_id"]) == {"A"}
    assert _docs(j.table["doc_id"]) == {"d1", "d2"}


@SPACES
def test_run_strips_unicode_whitespace_around_ids(tmp_path: Path, space: str) -> None:
    p = tmp_path / "r.run"
    p.write_text(f"A{space} Q0 d1{space} 1 2.0 r\nA Q0 d2 2 1.0 r\n", encoding="utf-8")
    run = read_run(p)
    assert _docs(run["query_id"]) == {"A"}
    assert run["doc_id"].astype(str).tolist() == ["d1", "d2"]


@SPACES
def test_csv_judgments_strip_unicode_whitespace(tmp_path: Path, space: str) -> None:
    p = tmp_path / "j.csv"
    p.write_text(f"topic_id,doc_id,grade\nA,d1{space},3\n", encoding="utf-8")
    assert _docs(read_judgments_csv(p).table["doc_id"]) == {"d1"}


def test_an_id_of_only_unicode_whitespace_is_a_located_error(tmp_path: Path) -> None:
    p = tmp_path / "q.txt"
    p.write_text("A 0 d1 3\nA 0 \u3000 1\n", encoding="utf-8")
    with pytest.raises(ParseError, match=r"q.txt:2: doc: is only whitespace"):
        read_qrels(p)


def _qrels(tmp_path: Path, space: str) -> Path:
    p = tmp_path / "qrels.txt"
    p.write_text(f"A 0 d1{space} 3\n", encoding="utf-8")
    return p


def _judged_results(study: object) -> set[str]:
    frame, judgments = study.frame, study.judgments  # type: ignore[attr-defined]
    logged = _docs(frame.results["doc_id"])
    return logged & _docs(judgments.table["doc_id"])


@SPACES
def test_session_log_and_qrels_agree(tmp_path: Path, space: str) -> None:
    log = write_jsonl(tmp_path / "sessions.jsonl", [make_session(queries=[[f"d1{space}"]])])
    study = load_study(log, qrels=_qrels(tmp_path, space))
    assert _judged_results(study) == {"d1"}


@SPACES
@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_flat_table_and_qrels_agree(tmp_path: Path, space: str, suffix: str) -> None:
    table = flat_table([("s1", "u1", "A", "S1", [[f"{space}d1"]])])
    path = tmp_path / f"sessions{suffix}"
    table.to_csv(path, index=False) if suffix == ".csv" else table.to_parquet(path)
    study = load_study(path, qrels=_qrels(tmp_path, space))
    assert _judged_results(study) == {"d1"}


@SPACES
def test_lab_tables_strip_ids(tmp_path: Path, space: str) -> None:
    d = tmp_path / "lab"
    shutil.copytree(FIXTURES / "lab", d)
    results = d / "results"
    results.write_text(
        results.read_text(encoding="utf-8").replace("http://w/a", f"http://w/a{space}"),
        encoding="utf-8",
    )
    r = load_lab_tables(d / "session", d / "results", d / "qrels")
    assert "http://w/a" in _docs(r.frame.results["doc_id"])
    assert not any(space in d for d in _docs(r.frame.results["doc_id"]))


@SPACES
def test_cast_run_and_qrels_agree(tmp_path: Path, space: str) -> None:
    d = tmp_path / "cast"
    shutil.copytree(FIXTURES / "cast", d)
    run = d / "runA.run"
    run.write_text(
        run.read_text(encoding="utf-8").replace(" d1 ", f" d1{space} "), encoding="utf-8"
    )
    study = load_cast(d, qrels=d / "qrels.txt", topics=d / "topics.json")
    assert "d1" in _judged_results(study)
    assert not any(space in x for x in _docs(study.frame.results["doc_id"]))


@SPACES
def test_trec_session_xml_and_qrels_agree(tmp_path: Path, space: str) -> None:
    xml = tmp_path / "ts2013.xml"
    xml.write_text(
        (FIXTURES / "ts2013.xml")
        .read_text(encoding="utf-8")
        .replace("<clueweb12id>cw-a1<", f"<clueweb12id>cw-a1{space}<"),
        encoding="utf-8",
    )
    qrels = tmp_path / "qrels.txt"
    qrels.write_text(f"1 0 cw-a1{space} 1\n", encoding="utf-8")
    study = load_study(xml, qrels=qrels)
    assert _judged_results(study) == {"cw-a1"}

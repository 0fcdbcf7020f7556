"""The Unicode policy of ids: kept as written, spellings of one id noted (UNI-2)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from sessionval.cli import main
from sessionval.evaluation.lists import evaluate_run
from sessionval.io.study import load_study
from sessionval.validate.ids import spelling_conflicts, spelling_notes, spelling_variants

NFC, NFD = "caf\u00e9", "cafe\u0301"


def test_variants_group_normalisation_and_invisible_characters() -> None:
    groups = spelling_variants(
        pd.Index([NFC, "d1", "x"]), pd.Series(pd.Categorical([NFD, "d1\u200b", "\ufeffx", "y"]))
    )
    assert groups == sorted([tuple(sorted((NFC, NFD))), ("d1", "d1\u200b"), ("x", "\ufeffx")])


def test_ascii_ids_and_identical_spellings_give_no_note() -> None:
    assert spelling_variants(pd.Index(["a", "b"]), pd.Index(["a", NFC])) == []
    assert spelling_notes(None, pd.Series([NFC, NFC])) == []


def test_conflict_only_when_grades_differ_within_a_topic() -> None:
    groups = [tuple(sorted((NFC, NFD)))]
    same = spelling_conflicts(
        pd.Series(["1", "1"]), pd.Series([NFC, NFD]), pd.Series([2, 2]), groups
    )
    assert same is None
    other_topics = spelling_conflicts(
        pd.Series(["1", "2"]), pd.Series([NFC, NFD]), pd.Series([2, 0]), groups
    )
    assert other_topics is None
    clash = spelling_conflicts(
        pd.Series(["1", "1"]), pd.Series([NFC, NFD]), pd.Series([2, 0]), groups
    )
    assert clash is not None and "with different grades: topic '1'" in clash


@pytest.fixture
def uni(tmp_path: Path) -> Path:
    (tmp_path / "q_nfc.txt").write_text(f"1 0 {NFC} 2\n1 0 x 0\n", encoding="utf-8")
    (tmp_path / "q_both.txt").write_text(f"1 0 {NFC} 2\n1 0 {NFD} 0\n", encoding="utf-8")
    (tmp_path / "r_nfd.run").write_text(f"1 Q0 {NFD} 1 2.0 r\n1 Q0 x 2 1.0 r\n", encoding="utf-8")
    return tmp_path


def test_evaluate_run_notes_spellings_of_run_and_qrels(uni: Path) -> None:
    ev = evaluate_run(uni / "r_nfd.run", uni / "q_nfc.txt", ["P@1"])
    assert ev.means["P@1"] == 0.0  # different ids, as written
    assert len(ev.notes) == 1 and "1 group" in ev.notes[0] and "'caf\\xe9'" in ev.notes[0]


def test_evaluate_command_prints_the_notes(uni: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["evaluate", str(uni / "q_both.txt"), str(uni / "r_nfd.run"), "-m", "P@1"]) == 0
    err = capsys.readouterr().err
    assert "note: document ids that differ only by Unicode normalisation" in err
    assert "with different grades: topic '1'" in err


def test_validation_notes_spellings_of_log_and_judgments(uni: Path) -> None:
    session = {
        "session_id": "s1", "user_id": "u1", "topic_id": "1", "system_id": "S",
        "queries": [{"position": 1, "text": "q", "results": [{"rank": 1, "doc_id": NFD}]}],
    }  # fmt: skip
    log = uni / "sessions.jsonl"
    log.write_text(json.dumps(session) + "\n", encoding="utf-8")
    notes = [str(p) for p in load_study(log, qrels=uni / "q_both.txt").notes]
    assert any("1 group" in n and "q_both.txt: doc_id:" in n for n in notes)
    assert any("with different grades" in n for n in notes)
    plain = load_study(log, qrels=uni / "q_nfc.txt").notes
    assert any("1 group" in str(p) for p in plain)

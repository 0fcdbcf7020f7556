"""``sessionval synth`` on the command line."""

from __future__ import annotations

import json

from sessionval.cli import main


def test_synth_writes_the_requested_files(tmp_path, capsys):
    out = tmp_path / "study"
    assert (
        main(["synth", "--sessions", "12", "--seed", "4", "--out", str(out), "--format", "jsonl"])
        == 0
    )
    text = capsys.readouterr().out
    assert "wrote 12 sessions" in text and "sessions.jsonl" in text
    assert sorted(p.name for p in out.iterdir()) == [
        ".sessionval-synth.json",  # the manifest: a later synth may replace these files
        "judgments.csv",
        "qrels.txt",
        "sessions.jsonl",
        "study.json",
    ]
    lines = (out / "sessions.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["session_id"] for line in lines] == [f"s{i:03d}" for i in range(1, 13)]


def test_synth_parquet_only(tmp_path):
    assert main(["synth", "--sessions", "5", "--out", str(tmp_path), "--format", "parquet"]) == 0
    assert (tmp_path / "sessions.parquet").exists() and not (tmp_path / "sessions.jsonl").exists()


def test_synth_rejects_bad_options(tmp_path, capsys):
    assert main(["synth", "--sessions", "0", "--out", str(tmp_path)]) == 2
    assert "0 is not in the range x>=1" in capsys.readouterr().err
    assert main(["synth", "--seed", "-3", "--out", str(tmp_path)]) == 2
    assert "-3 is not in the range x>=0" in capsys.readouterr().err
    assert main(["synth", "--out", str(tmp_path), "--format", "xml"]) == 2
    assert "'xml' is not one of 'jsonl', 'parquet', 'both'" in capsys.readouterr().err
    assert main(["synth", "--sessions", "3"]) == 2
    assert "Missing option '--out'" in capsys.readouterr().err


def test_synth_refuses_a_foreign_folder_without_force(tmp_path, capsys):
    """Issue 10 item 6: synth writes staged, and only over files an earlier synth wrote."""
    (tmp_path / "qrels.txt").write_text("mine")
    args = ["synth", "--sessions", "5", "--out", str(tmp_path), "--format", "jsonl"]
    assert main(args) == 2
    assert "no earlier sessionval run wrote it" in capsys.readouterr().err
    assert (tmp_path / "qrels.txt").read_text() == "mine"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["qrels.txt"]  # nothing half-written
    assert main([*args, "--force"]) == 0
    assert (tmp_path / "qrels.txt").read_text() != "mine"
    assert main([*args, "--seed", "5"]) == 0  # its own files: replaced without --force

"""Issue 10 item 6 for ``convert --out``: staged, renamed when complete, never an input.

(The writers themselves are ``sessionval.io.writers``; these tests only check where and
when their files appear.)
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import sessionval.io.writers as writers
from sessionval.cli import main
from sessionval.io.study import load_study
from tests import builders


def _source(tmp_path: Path) -> Path:
    (tmp_path / "in").mkdir()
    return builders.write_jsonl(
        tmp_path / "in" / "sessions.jsonl",
        [builders.make_session("s1"), builders.make_session("s2", system="S2")],
    )


def _files(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()
    }


def test_convert_into_a_foreign_folder_needs_force(tmp_path, capsys):
    src = _source(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    (out / "study.json").write_text("mine")
    assert main(["convert", str(src), "--from", "jsonl", "--out", str(out)]) == 2
    assert "no earlier sessionval run wrote it" in capsys.readouterr().err
    assert _files(out) == {"study.json": b"mine"}
    assert main(["convert", str(src), "--from", "jsonl", "--out", str(out), "--force"]) == 0
    # the header of the study read (no study.json: named after its folder, RT-2)
    assert json.loads((out / "study.json").read_text())["name"] == "in"
    assert f"wrote {out / 'sessions.jsonl'}" in capsys.readouterr().out
    # its own files are replaced without --force
    assert main(["convert", str(src), "--from", "jsonl", "--out", str(out)]) == 0


def test_an_interrupted_convert_leaves_the_previous_files(tmp_path, monkeypatch):
    src = _source(tmp_path)
    out = tmp_path / "out"
    assert main(["convert", str(src), "--from", "jsonl", "--out", str(out)]) == 0
    before = _files(out)
    real = writers.write_jsonl

    def half(frame, out_dir, **kwargs):  # the sessions written, then the disk is full
        real(frame, out_dir, **kwargs)
        Path(out_dir, "sessions.jsonl").write_text('{"session_id": "s1", "que')
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(writers, "write_jsonl", half)
    assert main(["convert", str(src), "--from", "jsonl", "--out", str(out)]) == 2
    assert _files(out) == before
    assert not [p for p in out.iterdir() if p.name.startswith(".sessionval-staging")]


@pytest.mark.parametrize("to", ["jsonl", "csv"])
def test_convert_never_overwrites_its_input(tmp_path, capsys, to):
    src = _source(tmp_path)
    if to == "csv":  # the input is the very file named by --out
        flat = src.with_name("sessions.csv")
        assert (
            main(["convert", str(src), "--from", "jsonl", "--out", str(flat), "--to", "csv"]) == 0
        )
        src.unlink()
        src, target, fmt = flat, flat, "flat"
    else:  # the input sits in the folder, under the name convert writes
        target, fmt = src.parent, "jsonl"
    before = _files(src.parent)
    capsys.readouterr()
    args = ["convert", str(src), "--from", fmt, "--out", str(target), "--to", to, "--force"]
    assert main(args) == 2
    assert "(--force never overwrites an input)" in capsys.readouterr().err
    assert _files(src.parent) == before


def test_convert_to_a_file_is_renamed_into_place(tmp_path):
    src = _source(tmp_path)
    out = tmp_path / "flat" / "study.parquet"
    out.parent.mkdir()
    out.write_bytes(b"an older table")  # a file the user named is replaced ...
    assert main(["convert", str(src), "--from", "jsonl", "--out", str(out), "--to", "parquet"]) == 0
    assert out.read_bytes()[:4] == b"PAR1"
    # ... without a manifest or a staging folder left beside it
    assert sorted(p.name for p in out.parent.iterdir()) == ["study.parquet"]


@pytest.mark.parametrize("to", ["jsonl", "csv", "parquet"])
def test_converted_study_validates_with_its_own_qrels(tmp_path, study_dir, to):
    """RT-1: `convert --to csv` then `validate out.csv --qrels out.qrels` failed (exit 1: the
    topic declared unjudged lost its judged: false); RT-2: study.json took the folder's name
    and dropped the description."""
    header = json.loads((study_dir / "study.json").read_text())
    header["description"] = "two sessions"
    header["topics"].append({"topic_id": "C", "judged": False})
    (study_dir / "study.json").write_text(json.dumps(header))
    (study_dir / "qrels.txt").write_text("A 0 d1 3\nB 0 d9 2\n")
    builders.write_jsonl(
        study_dir / "sessions.jsonl",
        [builders.make_session("s1", topic="A"), builders.make_session("s2", topic="C")],
    )
    # (study_dir is tmp_path: the output goes elsewhere, away from its study.json)
    out = tmp_path / "out" / ("o" if to == "jsonl" else f"o.{to}")
    args = ["convert", str(study_dir), "--qrels", str(study_dir / "qrels.txt")]
    assert main([*args, "--to", to, "--out", str(out)]) == 0
    qrels = out / "qrels.txt" if to == "jsonl" else out.with_suffix(".qrels")
    assert main(["validate", str(out), "--qrels", str(qrels)]) == 0
    back = load_study(out, qrels=qrels)
    assert back.study.name == "tiny" and back.study.description == "two sessions"
    assert back.study == load_study(study_dir, qrels=study_dir / "qrels.txt").study

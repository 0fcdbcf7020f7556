"""Round 3, item 2 (OS-1): no command writes over what it reads, whatever the form of --out.

Every command that writes resolves its outputs and its inputs and refuses, before any
work and even with ``--force``, an output that is, contains or lies inside an input.
Each test builds its files in ``tmp_path``.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from sessionval.cli import main
from tests import builders

Case = Callable[[Path], tuple[list[str], Path, Path, str]]


def _study(tmp_path: Path) -> Path:
    """A JSON-lines study folder with its qrels and a searchers' judgments.csv beside them."""
    study = tmp_path / "study"
    study.mkdir(parents=True)
    builders.write_jsonl(
        study / "sessions.jsonl",
        [builders.make_session("s1"), builders.make_session("s2", system="S2")],
    )
    (study / "qrels.txt").write_text("A 0 d1 3\nA 0 d2 0\nA 0 d3 1\n")
    (study / "judgments.csv").write_text("topic_id,doc_id,grade,assessor\nA,d1,2,u1\n")
    return study


def _files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*")}


def _run(tmp: Path) -> tuple[list[str], Path, Path, str]:
    study = _study(tmp)
    args = ["run", str(study), "--qrels", str(study / "qrels.txt"), "--no-figures"]
    return [*args, "--out", str(study / "results")], study, study, "lies inside the input folder"


def _convert_folder(tmp: Path) -> tuple[list[str], Path, Path, str]:
    study = _study(tmp)
    args = ["convert", str(study / "sessions.jsonl"), "--qrels", str(study / "qrels.txt")]
    return [*args, "--out", str(study)], study, study / "sessions.jsonl", "contains the input"


def _convert_csv(tmp: Path) -> tuple[list[str], Path, Path, str]:
    """OS-1: the study's own judgments.csv named as the flat output."""
    study = _study(tmp)
    args = ["convert", str(study), "--qrels", str(study / "qrels.txt"), "--to", "csv"]
    out = study / "judgments.csv"
    return [*args, "--out", str(out)], study, study, "lies inside the input folder"


def _convert_parquet(tmp: Path) -> tuple[list[str], Path, Path, str]:
    """OS-1: the study's sessions.parquet named as the flat output."""
    jsonl = _study(tmp / "src")
    study = tmp / "study"
    study.mkdir()
    (study / "qrels.txt").write_bytes((jsonl / "qrels.txt").read_bytes())
    to_parquet = ["convert", str(jsonl / "sessions.jsonl"), "--to", "parquet"]
    assert main([*to_parquet, "--out", str(study / "sessions.parquet")]) == 0
    args = ["convert", str(study), "--qrels", str(study / "qrels.txt"), "--to", "parquet"]
    out = study / "sessions.parquet"
    return [*args, "--out", str(out)], study, study, "lies inside the input folder"


def _convert_hard_link(tmp: Path) -> tuple[list[str], Path, Path, str]:
    """--out FILE a hard link of the qrels, elsewhere: the same file, another name."""
    study = _study(tmp)
    out = tmp / "flat" / "table.csv"
    out.parent.mkdir()
    os.link(study / "qrels.txt", out.with_suffix(".qrels"))  # the qrels written beside it
    args = ["convert", str(study / "sessions.jsonl"), "--qrels", str(study / "qrels.txt")]
    return [*args, "--to", "csv", "--out", str(out)], study, study / "qrels.txt", "is the input"


def _meta_out(tmp: Path) -> tuple[list[str], Path, Path, str]:
    qrels, runs = builders.trec_runs(tmp, n_topics=3, quality=(0.2, 0.9))
    args = ["meta", "rank-correlation", str(qrels), *map(str, runs), "-m", "AP", "-m", "P@3"]
    return [*args, "--out", str(tmp)], tmp, qrels, "contains the input"


def _meta_write_qrels(tmp: Path) -> tuple[list[str], Path, Path, str]:
    qrels, runs = builders.trec_runs(tmp, n_topics=3, quality=(0.2, 0.9))
    args = ["meta", "incomplete-judgments", str(qrels), *map(str, runs), "-m", "AP"]
    args += ["--fractions", "0.5,1.0", "--write-qrels", str(tmp)]
    return args, tmp, qrels, "contains the input"


def _meta_sensitivity(tmp: Path) -> tuple[list[str], Path, Path, str]:
    study = _study(tmp)
    args = ["meta", "sensitivity", str(study), "--qrels", str(study / "qrels.txt")]
    args += ["--grid", "b=2,4", "--out", str(study / "meta")]
    return args, study, study, "lies inside the input folder"


def _validate_rejects(tmp: Path) -> tuple[list[str], Path, Path, str]:
    study = _study(tmp)
    bad = study / "bad.jsonl"
    bad.write_text((study / "sessions.jsonl").read_text() + '{"session_id": "s3"}\n')
    args = ["validate", str(bad), "--lenient", "--rejects", str(bad)]
    return args, study, bad, "is the input"


CASES: dict[str, Case] = {
    "run": _run,
    "convert-folder": _convert_folder,
    "convert-csv": _convert_csv,
    "convert-parquet": _convert_parquet,
    "convert-hard-link": _convert_hard_link,
    "meta-out": _meta_out,
    "meta-write-qrels": _meta_write_qrels,
    "meta-sensitivity": _meta_sensitivity,
    "validate-rejects": _validate_rejects,
}


@pytest.mark.parametrize("case", list(CASES))
def test_an_input_is_never_an_output_even_with_force(tmp_path, capsys, case):
    args, folder, read, how = CASES[case](tmp_path)
    before = _files(folder)
    force = ["--force"] if args[0] in ("run", "convert", "meta") else []
    assert main([*args, *force]) == 2
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert f" {how} {read}:" in lines[0]  # both paths named ...
    assert "(--force never overwrites an input)" in lines[0]  # ... and what to do
    assert _files(folder) == before  # nothing written, nothing staged


def test_a_linked_out_is_resolved(tmp_path, capsys):
    """--out through a symbolic link to the study folder is the study folder."""
    study = _study(tmp_path)
    (tmp_path / "link").symlink_to(study, target_is_directory=True)
    before = _files(study)
    args = ["convert", str(study / "sessions.jsonl"), "--out", str(tmp_path / "link")]
    assert main(args) == 2
    assert "contains the input" in capsys.readouterr().err
    assert _files(study) == before


def test_an_output_beside_the_inputs_is_fine(tmp_path):
    """Writing next to an input file (not over it, not into its folder's inputs) still works."""
    study = _study(tmp_path)
    args = ["convert", str(study / "sessions.jsonl"), "--qrels", str(study / "qrels.txt")]
    assert main([*args, "--to", "csv", "--out", str(tmp_path / "flat.csv")]) == 0
    assert (tmp_path / "flat.csv").is_file() and (tmp_path / "flat.qrels").is_file()

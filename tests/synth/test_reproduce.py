"""Same seed, same study; the committed sample_logs/ are reproduced by the documented command."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest

from sessionval.cli import main
from sessionval.synth import write_study

REPO = Path(__file__).resolve().parents[2]

TEXT_FILES = ("sessions.jsonl", "study.json", "qrels.txt", "judgments.csv")


def _assert_same(a, b):
    for name in TEXT_FILES:
        assert (a / name).read_bytes() == (b / name).read_bytes(), name
    ta, tb = pq.read_table(a / "sessions.parquet"), pq.read_table(b / "sessions.parquet")
    assert ta.schema.equals(tb.schema, check_metadata=True)
    assert ta.equals(tb)


def test_same_seed_same_files(tmp_path, sample_dir):
    write_study(tmp_path)
    _assert_same(tmp_path, sample_dir)
    # with the same pyarrow the Parquet bytes are identical too
    assert (tmp_path / "sessions.parquet").read_bytes() == (
        sample_dir / "sessions.parquet"
    ).read_bytes()


def test_other_seed_other_study(tmp_path, sample_dir):
    write_study(tmp_path, seed=2009)
    for name in ("sessions.jsonl", "qrels.txt"):
        assert (tmp_path / name).read_bytes() != (sample_dir / name).read_bytes()
    assert not pq.read_table(tmp_path / "sessions.parquet").equals(
        pq.read_table(sample_dir / "sessions.parquet")
    )


def test_formats_do_not_change_the_study(tmp_path, sample_dir):
    write_study(tmp_path / "p", formats="parquet")
    write_study(tmp_path / "j", formats="jsonl")
    assert not (tmp_path / "p" / "sessions.jsonl").exists()
    assert not (tmp_path / "j" / "sessions.parquet").exists()
    assert (tmp_path / "j" / "sessions.jsonl").read_bytes() == (
        sample_dir / "sessions.jsonl"
    ).read_bytes()
    assert pq.read_table(tmp_path / "p" / "sessions.parquet").equals(
        pq.read_table(sample_dir / "sessions.parquet")
    )


def test_in_memory_study_equals_written_files(sample_study, sample_dir):
    lines = (sample_dir / "sessions.jsonl").read_text(encoding="utf-8").splitlines()
    assert list(sample_study.jsonl) == lines
    assert sample_study.flat.equals(pq.read_table(sample_dir / "sessions.parquet"))


def test_committed_sample_logs_are_reproduced(tmp_path):
    committed = REPO / "sample_logs"
    if not (committed / "sessions.jsonl").exists():
        pytest.fail(f"{committed} is missing the generated files")
    # the documented command, through the CLI entry point
    assert main(["synth", "--sessions", "120", "--seed", "2008", "--out", str(tmp_path)]) == 0
    _assert_same(tmp_path, committed)
    assert sorted(p.name for p in committed.iterdir()) == sorted(
        [*TEXT_FILES, "sessions.parquet", "README.md"]
    )
    total = sum(p.stat().st_size for p in committed.iterdir())
    assert total < 1_500_000

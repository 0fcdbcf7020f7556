"""The structure-aware families of reliability round 3 do what they say, and the harness
reports what they find (a known finding while its row is being fixed elsewhere)."""

from __future__ import annotations

import random
import shutil
import unicodedata
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from .corpus import TARGETS, build_seeds
from .families import (
    ODD_NAMES,
    blank_session_id,
    id_nfd,
    id_unicode_blank,
    nfd_across_files,
    odd_run_name,
    parquet_rows_without_ids,
    ratings_some_sessions,
    toml_deep,
)
from .harness import check_cli, check_reader, tsv_problem

TARGET = {t.name: t for t in TARGETS}


@pytest.fixture(scope="module")
def seeds(tmp_path_factory) -> Path:
    return build_seeds(tmp_path_factory.mktemp("seeds"))


def test_ids_get_unicode_blanks_and_nfd_spellings():
    data = b"s001,d1,d2\ns001,d1,d2\n"  # every id twice
    for i in range(20):
        out = id_unicode_blank(data, random.Random(i)).decode()
        assert ("\u00a0" in out) != ("\u3000" in out)
        text = id_nfd(data, random.Random(i)).decode()
        # one place in NFD, the other in NFC: the same id once normalised
        assert text.count("\u00e9") == text.count("e\u0301") == 1
        assert len(set(unicodedata.normalize("NFC", text).split("\n")[:2])) == 1


def test_rows_lose_their_session_id_and_sessions_their_ratings(seeds):
    csv = (seeds / "flat" / "sessions.csv").read_bytes()
    out = blank_session_id(csv, random.Random(1)).decode().splitlines()
    assert any(line.split(",")[0] in ("", " ", "\u00a0", "\u3000") for line in out[1:])
    jsonl = (seeds / "study" / "sessions.jsonl").read_bytes()
    lines = ratings_some_sessions(jsonl, random.Random(1)).decode().splitlines()
    rated = [('"ratings"' in line) for line in lines if line]
    assert any(rated) and not all(rated)
    lab = (seeds / "lab" / "session").read_bytes()
    cut = ratings_some_sessions(lab, random.Random(3)).decode().splitlines()
    assert any(len(row.split("\t")) < 5 or row.endswith("\t") for row in cut[1:])
    pq_bytes = (seeds / "flat" / "sessions.parquet").read_bytes()
    import io

    table = pq.read_table(io.BytesIO(parquet_rows_without_ids(pq_bytes, random.Random(0))))
    nulls = sum(table.column(c).null_count for c in table.column_names if c != "url")
    assert nulls > pq.read_table(io.BytesIO(pq_bytes)).column("session_id").null_count


def test_deep_toml_is_a_located_error_not_a_finding(seeds):
    rng = random.Random(0)
    deep = toml_deep(b"cutoff = 10\n", rng)
    assert deep.count(b"[") + deep.count(b"{") >= 100
    folder = seeds.parent / "cfg1"
    shutil.copytree(seeds / "config", folder)
    (folder / "config.toml").write_bytes(b"x = " + b"[" * 500 + b"1" + b"]" * 500 + b"\n")
    out = check_reader(TARGET["config"], folder, 0, ["toml_deep"], evaluate_it=False)
    # CFG-1 (fixed): a located error in both modes, no finding
    assert not out.findings
    assert out.steps["strict"] == "error"


def test_odd_run_names_are_refused_where_the_file_is_named(seeds):
    folder = seeds.parent / "st2"
    shutil.copytree(seeds / "runs", folder)
    seen = set()
    for i in range(40):
        name = odd_run_name(folder, "", random.Random(i))
        assert name is not None
        seen.add(name)
    assert len(seen) > len(ODD_NAMES) // 2
    shutil.rmtree(folder)
    shutil.copytree(seeds / "runs", folder)
    (folder / "runs" / "sys01.run").rename(folder / "runs" / "tab\tname.run")
    out = check_cli(TARGET["compare"], folder, 0, ["odd_run_name"])
    # ST-2 (fixed): the name is refused with exit 2 before any run is read, no finding
    assert out.steps["cli"] == "2"
    assert not out.findings


def test_nfd_across_files_spells_one_id_two_ways(seeds):
    folder = seeds.parent / "nfd"
    shutil.copytree(seeds / "study", folder)
    done = nfd_across_files(folder, "sessions.jsonl", random.Random(0))
    assert done is not None
    other = folder / done.split("(", 1)[1].rstrip(")")
    assert "\u00e9" in (folder / "sessions.jsonl").read_text(encoding="utf-8")
    assert "e\u0301" in other.read_text(encoding="utf-8")


def test_a_broken_tsv_table_is_told():
    assert tsv_problem("a\tb\n1\t2\n") is None
    assert "line 2 has 3 fields" in str(tsv_problem("a\tb\n1\tx\ty\n"))


def test_rows_dropped_without_being_counted_break_the_books(seeds):
    """FL-2 as the harness sees it: problems listed, yet no record rejected."""
    from sessionval.io.formats import load_input

    def load(folder: Path, mode: str):
        loaded = load_input(folder / "sessions.csv", "flat", mode=mode)
        loaded.report.sessions_rejected = 0  # what the books said before FL-2 was fixed
        loaded.report.records_read = loaded.report.sessions_accepted
        return loaded

    folder = seeds.parent / "fl2"
    shutil.copytree(seeds / "flat", folder)
    text = (folder / "sessions.csv").read_text().splitlines()
    text[1] = "," + text[1].split(",", 1)[1]  # a row without its session id
    (folder / "sessions.csv").write_text("\n".join(text) + "\n")
    fake = TARGET["csv"].__class__("fake", "flat", {}, load, ())
    out = check_reader(fake, folder, 0, [], evaluate_it=False)
    assert [f.kind for f in out.findings] == ["books"]
    assert "no record rejected" in out.findings[0].detail
    assert check_reader(TARGET["csv"], folder, 0, [], evaluate_it=False).findings == []

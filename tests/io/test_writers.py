"""The toolkit's writers: chunked (bounded-memory) JSON-lines and flat tables, atomic files,
judgments whose ids contain whitespace."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from sessionval.errors import InputFormatError, OutputError, WriteError
from sessionval.io import parquet_layout, writers
from sessionval.io.jsonl import load_jsonl
from sessionval.io.mapping import load_mapped_table
from sessionval.io.trec import read_judgments
from sessionval.io.writers import (
    session_json_line,
    write_flat,
    write_jsonl,
    write_judgments,
    write_qrels,
)
from sessionval.models.session import Session
from sessionval.validate.flat import frame_from_flat
from tests import builders


def _awkward_frame() -> pd.DataFrame:
    """Sessions with every optional field, some missing, text JSON must escape, and a
    session without any result (a query with no results)."""
    rows = []
    # (U+2028 inside text is the JSON-lines reader's case: F8, tests/io/test_jsonl.py)
    texts = ['say "hi"', "back\\slash", "tab\there", "ctl\x01x\x1f", "café ü"]
    for s in range(7):
        sid = f"s {s}" if s == 3 else f"s{s}"  # an id with a space
        n_q = 0 if s == 5 else 1 + s % 3
        if n_q == 0:
            rows.append((sid, f"u{s % 2}", "T1", "S", 1, None, None, "", None, None, None))
            continue
        for q in range(1, n_q + 1):
            for r in range(1, 1 + (s + q) % 4):
                rows.append(
                    (
                        sid,
                        f"u{s % 2}",
                        "T1" if s % 2 else "T2",
                        "S",
                        q,
                        r,
                        f"d{r}" if r != 2 else 'd"2',
                        texts[(s + q) % len(texts)],
                        (s + r) % 3 or None,
                        12.3 if r == 1 else None,
                        1 if r == 1 else None,
                    )
                )
            if (s + q) % 4 == 0:  # that query logged no results
                rows.append((sid, f"u{s % 2}", "T1", "S", q, None, None, "empty", None, None, None))
    flat = pd.DataFrame(
        rows,
        columns=[
            *builders.FLAT_IDS,
            "query_text",
            "clicks",
            "dwell",
            "user_grade",
        ],
    )
    flat["topic_id"] = flat.groupby("session_id", sort=False)["topic_id"].transform("first")
    flat["clicks"] = pd.array(flat["clicks"], dtype="Int64")
    flat["user_grade"] = pd.array(flat["user_grade"], dtype="Int64")
    flat["dwell"] = pd.array(flat["dwell"], dtype="Float64")
    flat["query_time"] = pd.Timestamp("2020-01-01T10:00:00.5Z") + pd.to_timedelta(
        flat["query_pos"], unit="s"
    )
    flat["session_start"] = "2020-01-01T09:59:00Z"
    flat["rating_sat"] = np.where(flat["session_id"].isin(["s1", "s2"]), 3.0, np.nan)
    return flat


def test_chunked_jsonl_is_the_same_whatever_the_chunk(tmp_path, same_frame):
    frame = frame_from_flat(_awkward_frame()).frame
    texts = []
    for rows in (1, 3, 10_000):
        out = tmp_path / f"c{rows}"
        write_jsonl(frame, out, chunk_rows=rows)
        texts.append((out / "sessions.jsonl").read_bytes())
    assert texts[0] == texts[1] == texts[2]
    lines = texts[0].decode().split("\n")
    assert lines[-1] == "" and len(lines) - 1 == frame.n_sessions
    for line in lines[:-1]:
        Session.model_validate_json(line)
        # compact, the model's field order, exactly what the streaming writers emit
        assert line == session_json_line(json.loads(line))
    loaded = load_jsonl(tmp_path / "c1" / "sessions.jsonl")
    back, report = loaded.frame, loaded.report
    assert report.summary_line().endswith(f"{frame.n_sessions} sessions accepted + 0 rejected")
    same_frame(frame, back)


def test_jsonl_text_of_one_session():
    flat = pd.DataFrame(
        {
            "session_id": ["s1", "s1", "s1"],
            "user_id": "u",
            "topic_id": "T",
            "system_id": "S",
            "query_pos": [1, 1, 2],
            "rank": [1, 2, None],
            "doc_id": ["d1", "d2", None],
            "query_text": ["a", "a", None],
            "dwell": pd.array([7.5, None, None], dtype="Float64"),
            "query_time": ["2020-01-01T10:00:00.000001Z", "2020-01-01T10:00:00.000001Z", None],
        }
    )
    frame = frame_from_flat(flat).frame
    text = writers.JsonlText(frame).chunk(next(writers.frame_chunks(frame, 100)))[0].as_py()
    assert text == (
        '{"session_id":"s1","user_id":"u","topic_id":"T","system_id":"S","queries":['
        '{"position":1,"text":"a","query_id":"s1:1","time":"2020-01-01T10:00:00.000001Z",'
        '"results":[{"rank":1,"doc_id":"d1","dwell":7.5},{"rank":2,"doc_id":"d2"}]},'
        '{"position":2,"text":"","query_id":"s1:2","results":[]}]}\n'
    )


def _big_frame(n_sessions: int) -> pd.DataFrame:
    n_q, n_r = 3, 20
    s = np.repeat(np.arange(n_sessions), n_q * n_r)
    return pd.DataFrame(
        {
            "session_id": pd.Series(s).map("s{}".format),
            "user_id": "u",
            "topic_id": "T",
            "system_id": "S",
            "query_pos": np.tile(np.repeat(np.arange(1, n_q + 1), n_r), n_sessions),
            "rank": np.tile(np.arange(1, n_r + 1), n_sessions * n_q),
            "doc_id": pd.Series(np.tile(np.arange(n_r), n_sessions * n_q)).map("d{}".format),
        }
    )


@pytest.mark.parametrize("to", ["jsonl", "parquet", "csv"])
def test_writers_hold_one_chunk_at_a_time(tmp_path, to):
    """Item 7: memory bounded by a chunk, not by the study (one dict per row took 400 kB
    per session before)."""
    frame = frame_from_flat(_big_frame(1500)).frame  # 90,000 result rows
    seen: list[int] = []
    chunks = writers.frame_chunks

    def spy(f, rows):
        for c in chunks(f, rows):
            seen.append(c.results.stop - c.results.start)
            yield c

    writers.frame_chunks = spy  # type: ignore[assignment]
    parquet_layout.frame_chunks = spy  # type: ignore[assignment]
    tracemalloc.start()
    try:
        if to == "jsonl":
            write_jsonl(frame, tmp_path / "o", chunk_rows=3000)
        else:
            write_flat(frame, tmp_path / f"o.{to}", to=to, chunk_rows=3000)  # type: ignore[arg-type]
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
        writers.frame_chunks = chunks  # type: ignore[assignment]
        parquet_layout.frame_chunks = chunks  # type: ignore[assignment]
    assert len(seen) == 30 and max(seen) <= 3000 and sum(seen) == frame.n_results
    # Python and NumPy allocations stay at a chunk's (about 2 MB; the writers that built
    # the whole table took 82 MB for JSON-lines, 16 MB for CSV, 12 MB for Parquet)
    assert peak < 6_000_000, peak


@pytest.mark.parametrize("to", ["parquet", "csv"])
def test_chunked_flat_round_trip(tmp_path, to, same_frame):
    frame = frame_from_flat(_awkward_frame()).frame
    out = tmp_path / f"t.{to}"
    write_flat(frame, out, to=to, chunk_rows=2)  # type: ignore[arg-type]
    same_frame(frame, load_mapped_table(out, "").frame)
    one = tmp_path / f"one.{to}"
    write_flat(frame, one, to=to)  # type: ignore[arg-type]
    if to == "csv":
        assert out.read_bytes() == one.read_bytes()


def test_sessions_without_results_are_written(tmp_path, same_frame):
    """T3: a study whose sessions have no results at all converts (as validate accepts it)."""
    flat = builders.flat_table([("s1", "u", "T", "S", [[]]), ("s2", "u", "T", "S", [[], []])])
    frame = frame_from_flat(flat).frame
    write_jsonl(frame, tmp_path / "j")
    back = load_jsonl(tmp_path / "j" / "sessions.jsonl").frame
    same_frame(frame, back)
    for to in ("parquet", "csv"):
        write_flat(frame, tmp_path / f"f.{to}", to=to)  # type: ignore[arg-type]
        same_frame(frame, load_mapped_table(tmp_path / f"f.{to}", "").frame)


def test_qrels_with_whitespace_in_an_id_go_to_csv(tmp_path):
    """F16: TREC qrels cannot carry an id with whitespace: refuse them, write CSV instead."""
    j = builders.judgments([("T 1", "d1", 1), ("T2", "http://w/a b", 2), ("T2", "d3", 0)])
    with pytest.raises(InputFormatError, match="'T 1'"):
        write_qrels(j, tmp_path / "q.txt")
    assert not (tmp_path / "q.txt").exists()
    frame = builders.frame([("s1", "u", "T2", "S", [["http://w/a b", "d3"]])])
    written = write_jsonl(frame, tmp_path / "o", judgments=j)
    assert written.qrels == tmp_path / "o" / "qrels.csv"
    assert not (tmp_path / "o" / "qrels.txt").exists()
    back = read_judgments(written.qrels).table
    assert sorted(zip(back["topic_id"].astype(str), back["doc_id"].astype(str), strict=True)) == [
        ("T 1", "d1"),
        ("T2", "d3"),
        ("T2", "http://w/a b"),
    ]
    flat = write_flat(frame, tmp_path / "t.parquet", judgments=j)
    assert flat.qrels == tmp_path / "t.qrels.csv"
    assert len(read_judgments(flat.qrels).table) == 3
    # ids without whitespace keep the TREC form
    plain = builders.judgments([("T2", "d3", 0)])
    assert write_judgments(plain, tmp_path / "p.txt").read_text() == "T2 0 d3 0\n"


def test_interrupted_write_keeps_the_older_files(tmp_path, monkeypatch):
    """Item 6: an interrupted write leaves the older complete outputs, no partial file."""
    frame = frame_from_flat(_big_frame(50)).frame
    out = tmp_path / "o"
    write_jsonl(frame, out, chunk_rows=100)
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    calls = {"n": 0}
    real = writers.JsonlText.chunk

    def interrupted(self, c):
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt
        return real(self, c)

    monkeypatch.setattr(writers.JsonlText, "chunk", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_jsonl(frame.__class__(**{**frame.__dict__}), out, chunk_rows=100)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    monkeypatch.undo()
    table = tmp_path / "t.csv"
    write_flat(frame, table, chunk_rows=100)
    older = table.read_bytes()
    monkeypatch.setattr(writers, "_flat_chunk", lambda *_: (_ for _ in ()).throw(OSError("full")))
    with pytest.raises(WriteError, match=r"t\.csv: cannot write: full; "):
        write_flat(frame, table, chunk_rows=100)
    assert table.read_bytes() == older
    # the first write's header sidecar stays too, no partial file
    assert sorted(p.name for p in tmp_path.iterdir()) == ["o", "t.csv", "t.study.json"]


def test_writers_never_write_through_a_link(tmp_path):
    frame = builders.frame([("s1", "u", "T", "S", [["d1"]])])
    outside = tmp_path / "outside.txt"
    outside.write_text("keep")
    out = tmp_path / "o"
    out.mkdir()
    (out / "sessions.jsonl").symlink_to(outside)
    with pytest.raises(OutputError, match="symbolic link"):
        write_jsonl(frame, out)
    assert outside.read_text() == "keep"
    link = tmp_path / "t.csv"
    link.symlink_to(outside)
    with pytest.raises(OutputError, match="symbolic link"):
        write_flat(frame, link)
    assert outside.read_text() == "keep"


def test_empty_frame_writes_header_only(tmp_path):
    bad = builders.flat_table([("s1", "u", "T", "S", [["d1", "d1"]])])
    bad["rank"] = 1  # rank 1 twice: the only session is rejected
    loaded = frame_from_flat(bad, mode="lenient")
    frame, report = loaded.frame, loaded.report
    assert frame.n_sessions == 0 and report.sessions_rejected == 1
    write_flat(frame, tmp_path / "e.csv")
    assert (tmp_path / "e.csv").read_text().startswith("session_id,user_id,topic_id,system_id")
    write_jsonl(frame, tmp_path / "j")
    assert (tmp_path / "j" / "sessions.jsonl").read_text() == ""


def test_written_file_permissions_follow_the_umask(tmp_path):
    frame = builders.frame([("s1", "u", "T", "S", [["d1"]])])
    write_jsonl(frame, tmp_path / "o")
    fresh = tmp_path / "fresh"
    fresh.write_text("")
    assert (tmp_path / "o" / "sessions.jsonl").stat().st_mode == fresh.stat().st_mode


def test_chunks_cover_whole_sessions():
    frame = frame_from_flat(_big_frame(7)).frame  # 60 rows per session
    got = list(writers.frame_chunks(frame, 100))
    assert [c.sessions for c in got] == [slice(i, i + 1) for i in range(7)] or all(
        (c.results.stop - c.results.start) % 60 == 0 for c in got
    )
    assert sum(c.results.stop - c.results.start for c in got) == frame.n_results
    assert got[0].results == slice(0, 60)
    big = list(writers.frame_chunks(frame, 130))
    assert [c.sessions for c in big] == [slice(0, 2), slice(2, 4), slice(4, 6), slice(6, 7)]


def test_path_of_ids_with_whitespace(tmp_path: Path):
    j = builders.judgments([("T", "a b", 1)])
    assert writers.jsonl_outputs(tmp_path, j)[2] == tmp_path / "qrels.csv"
    assert writers.flat_outputs(tmp_path / "x.parquet", j)[1] == tmp_path / "x.qrels.csv"
    assert writers.ids_with_whitespace(j) == "a b"


@pytest.mark.parametrize("ratings", [["rating_sat"], ["rating_sat", "rating_diff"]])
def test_sessions_without_any_rating_are_written(tmp_path, same_frame, ratings):
    """CV-1: a session with none of the rating names (here between two rated ones) made
    the JSON-lines writer fail (Arrow's null-skipping join dropped its row: exit 70)."""
    flat = builders.flat_table([(f"s{i}", "u", "T", "S", [["d1"]]) for i in range(3)])
    for k, col in enumerate(ratings):
        flat[col] = [4.0 - k, np.nan, 2.0 + k if k else np.nan]
    frame = frame_from_flat(flat).frame
    write_jsonl(frame, tmp_path / "j")
    lines = (tmp_path / "j" / "sessions.jsonl").read_text().splitlines()
    assert [json.loads(line).get("ratings") for line in lines] == [
        {c[len("rating_") :]: 4.0 - k for k, c in enumerate(ratings)},
        None,
        {"diff": 3.0} if len(ratings) == 2 else None,
    ]
    back = load_jsonl(tmp_path / "j" / "sessions.jsonl").frame
    same_frame(frame, back)

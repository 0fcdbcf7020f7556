"""A run read in byte ranges on a cluster gives the local ``evaluate_run``'s values and errors."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from sessionval.errors import InputFormatError, ParseError
from sessionval.evaluation.lists import RUN_SCORING, evaluate_run

distributed = pytest.importorskip("distributed")

from sessionval.evaluation import distributed_runs  # noqa: E402
from sessionval.evaluation.dask_engine import DaskEngine, dask_engine  # noqa: E402
from sessionval.evaluation.distributed_runs import (  # noqa: E402
    evaluate_run_on,
    evaluate_run_ranges,
    reads_in_ranges,
)

MEASURES = ["AP", "nDCG@10", "P@5", "RR", "Bpref", "GMAP", "NumRet", "NumRelRet", "Rprec"]
BLOCK = 1500  # bytes per range: a run of a few hundred lines is cut into many ranges


@pytest.fixture(scope="module")
def engine() -> Iterator[DaskEngine]:
    """Two threaded workers in this process."""
    with dask_engine(workers=2, processes=False) as eng:
        yield eng


def write_run(path: Path, *, n_queries: int, depth: int, seed: int, shuffled: bool) -> Path:
    """A TREC run: queries q0.. with ``depth`` documents each, sorted by query or shuffled."""
    rng = np.random.default_rng(seed)
    q = np.repeat([f"q{i}" for i in range(n_queries)], depth)
    docs = np.concatenate([rng.choice(60, size=depth, replace=False) for _ in range(n_queries)])
    rows = pd.DataFrame(
        {
            "q": q,
            "z": "Q0",
            "d": [f"d{j}" for j in docs],
            "r": np.tile(np.arange(1, depth + 1), n_queries),
            "s": rng.integers(0, 9, len(q)) / 4,  # ties broken by document id
            "t": "tag",
        }
    )
    if shuffled:
        rows = rows.sample(frac=1.0, random_state=seed)
    rows.to_csv(path, sep=" ", header=False, index=False)
    return path


def write_qrels(path: Path, *, n_topics: int, seed: int) -> Path:
    """Qrels of topics q0.. (fewer than the run's: its other queries are skipped)."""
    rng = np.random.default_rng(seed)
    rows = pd.DataFrame(
        {
            "q": [f"q{i}" for i in rng.integers(0, n_topics, 600)],
            "z": 0,
            "d": [f"d{j}" for j in rng.integers(0, 60, 600)],
            "g": rng.integers(0, 3, 600),
        }
    ).drop_duplicates(["q", "d"])
    rows.to_csv(path, sep=" ", header=False, index=False)
    return path


@pytest.fixture
def roads(monkeypatch) -> list[str]:
    """The road each evaluation took: "grouped" (no shuffle) or "shuffled"."""
    taken: list[str] = []
    grouped = distributed_runs._grouped_ranges

    def spy(*args, **kwargs):
        out = grouped(*args, **kwargs)
        taken.append("shuffled" if out is None else "grouped")
        return out

    monkeypatch.setattr(distributed_runs, "_grouped_ranges", spy)
    return taken


@pytest.mark.parametrize("shuffled", [False, True], ids=["sorted", "shuffled"])
@pytest.mark.parametrize("block", [BLOCK, 517, 1 << 20], ids=["ranges", "small", "one"])
def test_ranges_give_the_local_values(tmp_path, engine, roads, shuffled, block) -> None:
    run = write_run(tmp_path / "run.txt", n_queries=40, depth=12, seed=3, shuffled=shuffled)
    qrels = write_qrels(tmp_path / "qrels.txt", n_topics=34, seed=4)
    local = evaluate_run(run, qrels, MEASURES)
    assert local.n_skipped > 0  # queries missing from the qrels are in the test
    ev = evaluate_run_ranges(engine, run, qrels, MEASURES, block_bytes=block)
    # one range is scored whole whatever the order; several need no shuffle when sorted
    assert roads == ["shuffled" if shuffled and block < 1 << 20 else "grouped"]
    pd.testing.assert_frame_equal(ev.long(), local.long(), check_exact=True)
    pd.testing.assert_frame_equal(ev.summary(), local.summary(), check_exact=True)
    assert ev.counts() == local.counts()


def test_without_per_query_values_only_sums_come_back(tmp_path, engine) -> None:
    run = write_run(tmp_path / "run.txt", n_queries=40, depth=12, seed=5, shuffled=True)
    qrels = write_qrels(tmp_path / "qrels.txt", n_topics=34, seed=6)
    local = evaluate_run(run, qrels, MEASURES)
    ev = evaluate_run_ranges(engine, run, qrels, MEASURES, per_query=False, block_bytes=BLOCK)
    assert ev.long().empty
    got, want = ev.summary(), local.summary()
    pd.testing.assert_frame_equal(got[["measure", "n"]], want[["measure", "n"]])
    # the partitions' sums are added in another order than the local sum: last bits only
    np.testing.assert_allclose(got["value"], want["value"], rtol=1e-12)
    assert got.set_index("measure").loc["NumRet", "value"] == local.means["NumRet"]  # a count
    assert ev.counts() == local.counts()


def test_the_choice_of_road(tmp_path, engine) -> None:
    run = write_run(tmp_path / "run.txt", n_queries=4, depth=3, seed=1, shuffled=False)
    size = run.stat().st_size
    assert reads_in_ranges(run, engine, from_bytes=size)
    assert not reads_in_ranges(run, engine, from_bytes=size + 1)  # small: read here
    assert not reads_in_ranges(run, None, from_bytes=0)  # no cluster
    assert not reads_in_ranges(run, engine, replace(RUN_SCORING, complete=True), from_bytes=0)
    gz = tmp_path / "run.txt.gz"
    import gzip

    gz.write_bytes(gzip.compress(run.read_bytes()))
    assert not reads_in_ranges(gz, engine, from_bytes=0)  # gzip cannot be cut
    assert not reads_in_ranges(run, engine, encoding="utf-16", from_bytes=0)
    assert not reads_in_ranges(pd.DataFrame(), engine, from_bytes=0)


def test_the_small_road_is_evaluate_run(tmp_path, engine) -> None:
    run = write_run(tmp_path / "run.txt", n_queries=6, depth=4, seed=2, shuffled=True)
    qrels = write_qrels(tmp_path / "qrels.txt", n_topics=6, seed=2)
    complete = replace(RUN_SCORING, complete=True)
    local = evaluate_run(run, qrels, MEASURES, complete=True)
    ev = evaluate_run_on(engine, run, qrels, MEASURES, complete, from_bytes=0)
    pd.testing.assert_frame_equal(ev.long(), local.long(), check_exact=True)


def bad_line_run(tmp_path: Path, line: str, at: int) -> Path:
    run = write_run(tmp_path / "run.txt", n_queries=30, depth=10, seed=7, shuffled=False)
    lines = run.read_bytes().splitlines(keepends=True)
    lines.insert(at - 1, line.encode("utf-8") if isinstance(line, str) else line)
    run.write_bytes(b"".join(lines))
    return run


@pytest.mark.parametrize(
    ("line", "found"),
    [
        ("q3 Q0 d1 4 high tag\n", "score"),
        ("q3 Q0 d1 4\n", "has 4 fields"),
        (b"q3 Q0 d\xe9 4 1.0 tag\n", "not valid utf-8"),
    ],
    ids=["score", "fields", "encoding"],
)
def test_a_bad_line_in_a_later_range_names_its_line(tmp_path, engine, line, found) -> None:
    run = bad_line_run(tmp_path, line, at=211)  # far past the first range
    qrels = write_qrels(tmp_path / "qrels.txt", n_topics=30, seed=8)
    with pytest.raises(ParseError) as local:
        evaluate_run(run, qrels, ["AP"])
    with pytest.raises(ParseError) as ranged:
        evaluate_run_ranges(engine, run, qrels, ["AP"], block_bytes=BLOCK)
    assert f"{run}:211" in str(ranged.value)
    assert found in str(ranged.value)
    assert str(ranged.value) == str(local.value)


def test_a_document_listed_twice_across_ranges_names_both_lines(tmp_path, engine) -> None:
    run = write_run(tmp_path / "run.txt", n_queries=30, depth=10, seed=9, shuffled=False)
    lines = run.read_bytes().splitlines(keepends=True)
    lines.append(lines[4])  # line 5 again, as the last line (another range)
    run.write_bytes(b"".join(lines))
    qrels = write_qrels(tmp_path / "qrels.txt", n_topics=30, seed=8)
    with pytest.raises(InputFormatError) as local:
        evaluate_run(run, qrels, ["AP"])
    with pytest.raises(InputFormatError) as ranged:
        evaluate_run_ranges(engine, run, qrels, ["AP"], block_bytes=BLOCK)
    assert f"lines 5, {len(lines)}" in str(ranged.value)
    assert str(ranged.value) == str(local.value)


def test_crlf_lines_and_blank_lines(tmp_path, engine) -> None:
    run = write_run(tmp_path / "run.txt", n_queries=20, depth=8, seed=10, shuffled=True)
    text = run.read_bytes().replace(b"\n", b"\r\n\r\n")
    run.write_bytes(b"\xef\xbb\xbf" + text)  # a byte-order mark too
    qrels = write_qrels(tmp_path / "qrels.txt", n_topics=20, seed=11)
    local = evaluate_run(run, qrels, MEASURES)
    ev = evaluate_run_ranges(engine, run, qrels, MEASURES, block_bytes=BLOCK)
    pd.testing.assert_frame_equal(ev.long(), local.long(), check_exact=True)


def test_a_file_of_blank_lines_is_empty(tmp_path, engine) -> None:
    run = tmp_path / "run.txt"
    run.write_bytes(b"\n \n" * 1000)
    qrels = write_qrels(tmp_path / "qrels.txt", n_topics=3, seed=1)
    with pytest.raises(ParseError, match="file is empty"):
        evaluate_run_ranges(engine, run, qrels, ["AP"], block_bytes=BLOCK)


def test_ranges_cover_every_line_once_where_range_start_says(tmp_path) -> None:
    from sessionval.evaluation.distributed_runs import read_range
    from sessionval.io.text import count_line_ends, range_start

    path = tmp_path / "run.txt"
    data = b"".join(f"q{i} Q0 d{i} 1 {i}.5 t\n".encode() for i in range(200)) + b"last"
    path.write_bytes(data)
    block = 97
    parts = [read_range(str(path), k, block) for k in range(len(data) // block + 1)]
    assert b"".join(parts) == data
    for k, part in enumerate(parts):
        start = range_start(path, k * block)
        assert data[start : start + len(part)] == part
        assert count_line_ends(path, start) == data[:start].count(b"\n")


def query_lines_inside_a_range(
    lines: list[bytes], q: bytes, block: int, folder: Path
) -> list[bytes]:
    """``lines`` with ``q``'s last line moved between two queries inside a later range.

    The range it lands in starts and ends with other queries (it is an inner query there).
    """
    from sessionval.evaluation.distributed_runs import read_range

    moved = next(line for line in reversed(lines) if line.split()[0] == q)
    rest = [line for line in lines if line is not moved]
    for at in range(len(rest) // 2, len(rest)):
        if rest[at - 1].split()[0] == rest[at].split()[0]:
            continue  # not between two queries
        text = b"".join([*rest[:at], moved, *rest[at:]])
        path = folder / "probe.txt"
        path.write_bytes(text)
        for k in range(len(text) // block + 1):
            ids = [line.split()[0] for line in read_range(str(path), k, block).splitlines()]
            if moved.split()[0] in ids[1:-1] and q not in (ids[0], ids[-1]):
                return [*rest[:at], moved, *rest[at:]]
    raise AssertionError("no place inside a range")


@pytest.mark.parametrize("layout", ["numeric", "edges", "inside"])
def test_grouped_but_not_byte_sorted_and_a_query_in_two_places(
    tmp_path, engine, roads, layout
) -> None:
    """Queries in numeric order are grouped (no shuffle), as is a query split between the
    first and last ranges' edges; one line of a query inside another range is not."""
    run = write_run(tmp_path / "run.txt", n_queries=40, depth=12, seed=13, shuffled=False)
    lines = run.read_bytes().splitlines(keepends=True)
    blocks = [lines[i : i + 12] for i in range(0, len(lines), 12)]  # one per query
    if layout == "numeric":  # q0, q1, ..., q9, q10, ...: not byte order
        blocks.sort(key=lambda b: int(b[0].split()[0][1:]))
    elif layout == "edges":  # q5's first half at the start of the file, its second at the end
        q5 = blocks.pop(5)
        blocks = [q5[:6], *blocks, q5[6:]]
    else:
        blocks = [query_lines_inside_a_range(lines, blocks[0][0].split()[0], BLOCK, tmp_path)]
    run.write_bytes(b"".join(line for b in blocks for line in b))
    qrels = write_qrels(tmp_path / "qrels.txt", n_topics=40, seed=14)
    local = evaluate_run(run, qrels, MEASURES)
    out = tmp_path / "per_query"
    out.mkdir()
    ev = evaluate_run_ranges(engine, run, qrels, MEASURES, block_bytes=BLOCK, per_query_dir=out)
    assert roads == ["shuffled" if layout == "inside" else "grouped"]
    pd.testing.assert_frame_equal(ev.long(), local.long(), check_exact=True)
    assert ev.counts() == local.counts()
    # the per-query parts: every query once, even when the grouped pass wrote some first
    written = pd.read_parquet(out).sort_values("query_id", ignore_index=True)
    want = local.per_query().sort_values("query_id", ignore_index=True)
    pd.testing.assert_frame_equal(written, want, check_exact=True)
    shuffled = any(p.name.startswith("part-s") for p in out.iterdir())
    assert shuffled == (layout == "inside")

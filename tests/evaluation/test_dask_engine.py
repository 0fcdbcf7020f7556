"""The Dask engine gives the local engine's tables, bit for bit (a LocalCluster, small data)."""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import pandas as pd
import pytest

from sessionval.evaluation.chunks import ChunkContext
from sessionval.evaluation.config import SessionConfig
from sessionval.evaluation.engine import Engine, ItemMapper, LocalEngine, session_ranges
from sessionval.evaluation.session import evaluate
from sessionval.io.formats import load_input
from tests import builders

distributed = pytest.importorskip("distributed")

from sessionval.evaluation.dask_engine import DaskEngine, dask_engine  # noqa: E402

T = TypeVar("T")
REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "sample_logs"


def tables(ev) -> list[pd.DataFrame]:
    return [ev.per_session(), ev.per_query(), ev.per_position()]


def assert_same_tables(a, b) -> None:
    for x, y in zip(tables(a), tables(b), strict=True):
        pd.testing.assert_frame_equal(x, y, check_exact=True)


@dataclass
class RestrictingEngine:
    """Runs each chunk on its own restricted context, as a worker sees it."""

    chunk_rows: int = 7

    def map_sessions(self, fn: Callable[[ChunkContext, int, int], T], ctx: ChunkContext) -> list[T]:
        ranges = session_ranges(ctx.session_row_offsets, self.chunk_rows)
        return [fn(ctx.restrict(s0, s1), 0, s1 - s0) for s0, s1 in ranges]


#: session measures computed on each chunk's positions (issue 13) ride along the engines too
POSITIONAL = ["esNDCG@5", "sRBP@5", "nCT@5", "EU@5"]


def test_a_restricted_context_gives_the_same_tables(random_study) -> None:
    frame, judg = random_study(3)
    measures = ["nsDCG(b=4)@5", *POSITIONAL]
    ref = evaluate(frame, judg, measures=measures, engine=LocalEngine(chunk_rows=7))
    assert_same_tables(evaluate(frame, judg, measures=measures, engine=RestrictingEngine()), ref)


@pytest.fixture(scope="module")
def engine() -> Iterator[DaskEngine]:
    """Two threaded workers in this process: no process start-up, short time-outs."""
    with dask_engine(workers=2, processes=False, chunk_rows=50) as eng:
        yield eng


CONFIGS = [
    SessionConfig(),
    SessionConfig(duplicates="drop", ideal="no-repeat", unjudged="condense", cutoff=4),
    SessionConfig(judgments="searcher"),
]


@pytest.mark.parametrize("config", CONFIGS[:2])
def test_dask_engine_gives_the_local_tables(engine, random_study, config) -> None:
    frame, judg = random_study(5, n_sessions=60)
    measures = ["nsDCG(b=4)@5", "last(AP)", *POSITIONAL]
    assert isinstance(engine, Engine) and isinstance(engine, ItemMapper)
    ref = evaluate(frame, judg, config, measures=measures, engine=LocalEngine(chunk_rows=50))
    ev = evaluate(frame, judg, config, measures=measures, engine=engine)
    assert_same_tables(ev, ref)


def test_dask_engine_on_the_sample_study(engine) -> None:
    loaded = load_input(SAMPLE, qrels=SAMPLE / "qrels.txt")
    for config in (CONFIGS[0], CONFIGS[2]):
        ref = evaluate(loaded.frame, loaded.judgments, config, engine=LocalEngine(chunk_rows=50))
        ev = evaluate(loaded.frame, loaded.judgments, config, engine=engine)
        assert_same_tables(ev, ref)


def test_partitions_load_on_the_workers(engine, tmp_path) -> None:
    """A multi-file synthetic study: loaded and scored on the cluster = loaded and scored here."""
    flat = pd.read_parquet(SAMPLE / "sessions.parquet")
    builders.write_partitions(flat, tmp_path / "parts", 5)
    shutil.copy(SAMPLE / "study.json", tmp_path / "parts" / "study.json")
    here = load_input(tmp_path / "parts", qrels=SAMPLE / "qrels.txt")
    there = load_input(tmp_path / "parts", qrels=SAMPLE / "qrels.txt", mapper=engine.map_items)
    builders.assert_same_frame(there.frame, here.frame)
    assert there.report.summary_line() == here.report.summary_line()
    assert_same_tables(
        evaluate(there.frame, there.judgments, engine=engine),
        evaluate(here.frame, here.judgments, engine=LocalEngine(chunk_rows=50)),
    )


def test_a_workers_error_reaches_the_caller(engine, tmp_path) -> None:
    flat = pd.read_parquet(SAMPLE / "sessions.parquet")
    files = builders.write_partitions(flat, tmp_path / "p", 2)
    files[1].write_bytes(b"not parquet")
    with pytest.raises(Exception, match=r"part-00001\.parquet: not a readable Parquet file"):
        load_input(tmp_path / "p", mapper=engine.map_items)


def test_progress_counts_the_chunks(random_study) -> None:
    frame, judg = random_study(2, n_sessions=30)
    seen: list[tuple[int, int]] = []
    with dask_engine(
        workers=1, processes=False, chunk_rows=40, progress=lambda d, t: seen.append((d, t))
    ) as eng:
        evaluate(frame, judg, engine=eng)
    assert seen and seen[-1][0] == seen[-1][1] > 1


def _slow_square(x: int) -> int:
    time.sleep(0.02 * (5 - x))  # the first submitted finishes last
    return x * x


def _fail(x: int) -> int:
    raise ValueError(f"bad item {x}")


def test_collect_keeps_the_order_and_releases_each_value(engine) -> None:
    futures = engine.submit_items(_slow_square, list(range(5)), priority=1)
    seen: list[tuple[int, int]] = []
    assert engine.collect(futures, progress=lambda d, t: seen.append((d, t))) == [0, 1, 4, 9, 16]
    assert futures == [] and seen == [(d, 5) for d in range(1, 6)]
    failing = engine.submit_items(_fail, [7])
    with pytest.raises(ValueError, match="bad item 7"):
        engine.collect(failing)


def test_scheduler_and_workers_exclude_each_other() -> None:
    from sessionval.errors import SessionvalError

    with (
        pytest.raises(SessionvalError, match="not both"),
        dask_engine(scheduler="tcp://x:1", workers=2),
    ):
        pass


def test_an_existing_cluster_by_its_address(random_study) -> None:
    frame, judg = random_study(4, n_sessions=20)
    with distributed.LocalCluster(
        n_workers=1, processes=False, threads_per_worker=1, dashboard_address=":0"
    ) as cluster:
        with dask_engine(scheduler=cluster.scheduler_address, chunk_rows=30) as eng:
            assert eng.n_workers == 1
            ref = evaluate(frame, judg, engine=LocalEngine(chunk_rows=30))
            assert_same_tables(evaluate(frame, judg, engine=eng), ref)

"""The engine seam: chunks of whole sessions, any engine gives the same tables."""

from __future__ import annotations

import pickle
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sessionval.errors import MeasureSpecError, SessionvalError
from sessionval.evaluation.chunks import ChunkContext
from sessionval.evaluation.config import SessionConfig
from sessionval.evaluation.engine import Engine, LocalEngine, StreamingEngine, session_ranges
from sessionval.evaluation.result import PositionFill
from sessionval.evaluation.session import evaluate

T = TypeVar("T")


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 30), max_size=40), st.integers(1, 50))
def test_ranges_cover_whole_sessions_in_order(rows: list[int], target: int) -> None:
    off = np.r_[0, np.cumsum(rows)].astype(np.int64)
    ranges = session_ranges(off, target)
    flat = [s for s0, s1 in ranges for s in range(s0, s1)]
    assert flat == list(range(len(rows)))  # every session once, in order, never split
    for s0, s1 in ranges:
        assert s1 > s0
        # a chunk holds about ``target`` rows: it only exceeds it by its last session
        assert off[s1] - off[s0] <= target or off[s1 - 1] - off[s0] < target


@dataclass
class PicklingEngine:
    """A stand-in for a distributed engine: ships each chunk through pickle, runs them
    in reverse order, returns them in session order."""

    chunk_rows: int = 5
    calls: list[int] = field(default_factory=list)

    def map_sessions(self, fn: Callable[[ChunkContext, int, int], T], ctx: ChunkContext) -> list[T]:
        ranges = session_ranges(ctx.session_row_offsets, self.chunk_rows)
        self.calls.append(len(ranges))
        out: dict[int, T] = {}
        for i in reversed(range(len(ranges))):
            f, c = pickle.loads(pickle.dumps((fn, ctx)))
            out[i] = pickle.loads(pickle.dumps(f(c, *ranges[i])))
        return [out[i] for i in range(len(ranges))]


def tables(ev) -> list[pd.DataFrame]:
    return [ev.per_session(), ev.per_query(), ev.per_position()]


@pytest.mark.parametrize(
    "config",
    [
        SessionConfig(),
        SessionConfig(duplicates="drop", ideal="no-repeat", unjudged="condense", cutoff=4),
    ],
)
def test_every_engine_and_chunk_size_gives_the_same_tables(
    config: SessionConfig, random_study
) -> None:
    frame, judg = random_study(5)
    measures = ["nsDCG(b=4)@5", "last(AP)"]
    ref = evaluate(frame, judg, config, measures=measures)
    for engine in (LocalEngine(chunk_rows=1), LocalEngine(chunk_rows=17), PicklingEngine()):
        assert isinstance(engine, Engine)
        ev = evaluate(frame, judg, config, measures=measures, engine=engine)
        for a, b in zip(tables(ev), tables(ref), strict=True):
            pd.testing.assert_frame_equal(a, b)


def test_positions_are_recomputed_through_the_evaluations_engine(random_study) -> None:
    frame, judg = random_study(9, n_sessions=12)
    engine = PicklingEngine(chunk_rows=10)
    ev = evaluate(frame, judg, engine=engine, measures=["sDCG(b=3)@10"])
    assert len(engine.calls) == 2  # the evaluation and the measure's own run
    ev.per_position()
    assert len(engine.calls) == 3 and engine.calls[-1] > 1
    ev.positions()  # cached
    assert len(engine.calls) == 3


@pytest.mark.parametrize(
    "config",
    [SessionConfig(), SessionConfig(duplicates="drop", unjudged="condense", cutoff=4)],
)
def test_positions_kept_from_the_scoring_pass_are_those_recomputed(
    config: SessionConfig, random_study
) -> None:
    """``keep_positions``: the same arrays (dtypes, values, NaN) without a second pass."""
    frame, judg = random_study(11, n_sessions=14)
    engine = PicklingEngine(chunk_rows=9)
    kept = evaluate(frame, judg, config, engine=engine, keep_positions=True)
    assert len(engine.calls) == 1 and engine.calls[0] > 1  # several chunks, filled in order
    ref = evaluate(frame, judg, config, engine=LocalEngine(chunk_rows=9)).positions()
    pos = kept.positions()
    assert len(engine.calls) == 1  # not recomputed
    for name in ("session", "query", "slot", "frame_row", "grade", "gain", "sdcg", "ideal"):
        a, b = getattr(pos, name), getattr(ref, name)
        assert a.dtype == b.dtype, name
        np.testing.assert_array_equal(a, b, err_msg=name)
    np.testing.assert_array_equal(pos.offsets, ref.offsets)


@dataclass
class StreamingSpy:
    """A streaming engine that records, as it yields each chunk, whether the chunk before
    it still held its per-position arrays (``evaluate`` takes them as each chunk comes)."""

    chunk_rows: int = 9
    held: list[bool] = field(default_factory=list)

    def map_sessions(self, fn: Callable[[ChunkContext, int, int], T], ctx: ChunkContext) -> list[T]:
        return list(self.iter_sessions(fn, ctx))

    def iter_sessions(self, fn: Callable[[ChunkContext, int, int], T], ctx: ChunkContext) -> Any:
        previous = None
        for s0, s1 in session_ranges(ctx.session_row_offsets, self.chunk_rows):
            if previous is not None:
                self.held.append(previous.p is not None)
            previous = fn(ctx, s0, s1)
            yield previous


def test_positions_are_taken_from_each_chunk_as_it_comes(random_study) -> None:
    """A streaming engine's chunks give their positions up at once: the same arrays."""
    frame, judg = random_study(11, n_sessions=14)
    spy = StreamingSpy()
    assert isinstance(spy, StreamingEngine)
    pos = evaluate(frame, judg, engine=spy, keep_positions=True).positions()
    assert len(spy.held) > 1 and not any(spy.held)
    ref = evaluate(frame, judg, engine=PicklingEngine(chunk_rows=9)).positions()
    for name in ("session", "query", "slot", "frame_row", "grade", "gain", "sdcg", "ideal"):
        a, b = getattr(pos, name), getattr(ref, name)
        assert a.dtype == b.dtype, name
        np.testing.assert_array_equal(a, b, err_msg=name)


def test_position_fill_refuses_more_positions_than_its_bound() -> None:
    fill = PositionFill(3)
    part = {"session": np.zeros(2, dtype=np.int64), "gain": np.ones(2)}
    fill.add(part)
    with pytest.raises(SessionvalError, match="more than the 3 positions"):
        fill.add(part)
    with pytest.raises(SessionvalError, match="hold 2 positions, the sessions count 3"):
        fill.arrays(3)
    np.testing.assert_array_equal(fill.arrays(2)["gain"], [1.0, 1.0])


def test_kept_positions_of_an_unjudged_topic_are_missing() -> None:
    """A session whose topic has no judgments has no gain or score at any position."""
    from tests.evaluation.test_unjudged_topics import _study

    frame, qrels = _study()
    pos = evaluate(frame, qrels, keep_positions=True).positions()
    s2 = pos.session == list(frame.sessions["session_id"]).index("s2")
    assert s2.any() and np.isnan(pos.sdcg[s2]).all() and np.isnan(pos.gain[s2]).all()
    assert not np.isnan(pos.sdcg[~s2]).any()


def test_chunk_size_must_be_positive() -> None:
    with pytest.raises(MeasureSpecError, match="chunk_rows must be >= 1"):
        LocalEngine(chunk_rows=0)

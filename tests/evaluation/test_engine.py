"""The engine seam: chunks of whole sessions, any engine gives the same tables."""

from __future__ import annotations

import pickle
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sessionval.errors import MeasureSpecError
from sessionval.evaluation.chunks import ChunkContext
from sessionval.evaluation.config import SessionConfig
from sessionval.evaluation.engine import Engine, LocalEngine, session_ranges
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


def test_chunk_size_must_be_positive() -> None:
    with pytest.raises(MeasureSpecError, match="chunk_rows must be >= 1"):
        LocalEngine(chunk_rows=0)

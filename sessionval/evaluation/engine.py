"""The engine seam: how the chunks of whole sessions of an evaluation are run.

The session evaluation cuts a study into *chunks*, each a range ``s0:s1`` of whole
sessions, and hands a pure chunk function (context in, arrays out; see
:mod:`sessionval.evaluation.chunks`) to an :class:`Engine`.  The engine decides
where and in what pieces the chunks run and returns their results in session
order.  :class:`LocalEngine` is the loop in this process;
:class:`~sessionval.evaluation.dask_engine.DaskEngine` implements the same protocol
with the same chunk function on a Dask cluster (each chunk's context cut out with
:meth:`~sessionval.evaluation.chunks.ChunkContext.restrict`; its inputs are plain
arrays and frozen values, so they pickle).  Nothing above
:mod:`sessionval.evaluation` knows how chunks run: callers pass an engine or
take the default.

Engines also map a function over independent items (:class:`ItemMapper`): the
partitions of a partitioned input are loaded that way
(:mod:`sessionval.io.partitioned`), and the measures of a single-query evaluation.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Final, Protocol, TypeVar, runtime_checkable

from .._types import IntArray
from ..errors import MeasureSpecError
from ..kernels.segments import segment_blocks
from .chunks import ChunkContext

__all__ = [
    "DEFAULT_CHUNK_ROWS",
    "Engine",
    "ItemMapper",
    "LocalEngine",
    "Progress",
    "StreamingEngine",
    "chunk_results",
    "session_ranges",
]

T = TypeVar("T")
U = TypeVar("U")

Progress = Callable[[int, int], None]
"""``progress(done, total)``: called as the pieces of a long step finish (a progress bar)."""

DEFAULT_CHUNK_ROWS: Final[int] = 1 << 20
"""Result rows per chunk of the local engine: bounds the kernels' temporaries (~40 arrays)."""


def session_ranges(session_row_offsets: IntArray, target_rows: int) -> list[tuple[int, int]]:
    """Session ranges ``(s0, s1)`` of about ``target_rows`` result rows, never splitting a session.

    The segment library's :func:`~sessionval.kernels.segments.segment_blocks` of the
    sessions' row offsets (``n_sessions + 1``); a session longer than ``target_rows`` is
    a chunk of its own.
    """
    return segment_blocks(session_row_offsets, target_rows)


@runtime_checkable
class Engine(Protocol):
    """Runs a chunk function over ranges of whole sessions covering a context, in order."""

    def map_sessions(self, fn: Callable[[ChunkContext, int, int], T], ctx: ChunkContext) -> list[T]:
        """Return ``[fn(ctx, s0, s1), ...]`` for consecutive ranges covering every session.

        The ranges are whole sessions, in session order, without gaps or overlaps; the
        results come back in that order.  ``fn`` is pure (no side effect), so an
        engine may run the ranges anywhere and in any order.
        """
        ...


@runtime_checkable
class StreamingEngine(Engine, Protocol):
    """An engine that hands each chunk's result over as soon as it is made, in order."""

    def iter_sessions(
        self, fn: Callable[[ChunkContext, int, int], T], ctx: ChunkContext
    ) -> Iterator[T]:
        """Yield ``fn(ctx, s0, s1)`` for the ranges :meth:`Engine.map_sessions` would run."""
        ...


def chunk_results(
    engine: Engine, fn: Callable[[ChunkContext, int, int], T], ctx: ChunkContext
) -> Iterator[T]:
    """The chunks' results in session order: one at a time from a :class:`StreamingEngine`.

    A caller that keeps part of each result (the per-position arrays copied into
    whole arrays) then holds one chunk's temporaries at a time, not every chunk's;
    any other engine's list is walked.
    """
    if isinstance(engine, StreamingEngine):
        return engine.iter_sessions(fn, ctx)
    return iter(engine.map_sessions(fn, ctx))


@runtime_checkable
class ItemMapper(Protocol):
    """Maps a pure function over independent items (partitions, measures), in order."""

    def map_items(self, fn: Callable[[U], T], items: Sequence[U]) -> list[T]:
        """Return ``[fn(item) for item in items]``, computed wherever the engine runs."""
        ...


@dataclass(frozen=True)
class LocalEngine:
    """The chunk loop in this process: chunks of about ``chunk_rows`` result rows.

    Each chunk is fully vectorised; the loop over chunks bounds memory (a million
    sessions have tens of millions of positions).

    Examples
    --------
    >>> LocalEngine(chunk_rows=10_000).chunk_rows
    10000
    """

    chunk_rows: int = DEFAULT_CHUNK_ROWS
    progress: Progress | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.chunk_rows < 1:
            raise MeasureSpecError(f"chunk_rows must be >= 1, got {self.chunk_rows}")

    def map_sessions(self, fn: Callable[[ChunkContext, int, int], T], ctx: ChunkContext) -> list[T]:
        """Run ``fn`` on each range of whole sessions, one after another."""
        return list(self.iter_sessions(fn, ctx))

    def iter_sessions(
        self, fn: Callable[[ChunkContext, int, int], T], ctx: ChunkContext
    ) -> Iterator[T]:
        """Run ``fn`` on each range of whole sessions, yielding each result as it is made."""
        ranges = session_ranges(ctx.session_row_offsets, self.chunk_rows)
        for i, (s0, s1) in enumerate(ranges):
            yield fn(ctx, s0, s1)
            if self.progress is not None:
                self.progress(i + 1, len(ranges))

    def map_items(self, fn: Callable[[U], T], items: Sequence[U]) -> list[T]:
        """``[fn(item) for item in items]``, one after another."""
        out = []
        for i, item in enumerate(items):
            out.append(fn(item))
            if self.progress is not None:
                self.progress(i + 1, len(items))
        return out

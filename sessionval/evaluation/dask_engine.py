"""The Dask engine: the same pure chunk function on the workers of a Dask cluster.

:class:`DaskEngine` implements the :class:`~sessionval.evaluation.engine.Engine`
protocol over a ``distributed.Client``.  The parts every chunk shares (the
prepared grade lookup, i.e. the judgments, and the ideal gain vectors) are
broadcast to the workers once per evaluation; each chunk of whole sessions then
travels as its own slice of the study
(:meth:`~sessionval.evaluation.chunks.ChunkContext.restrict`) and runs the same
:func:`~sessionval.evaluation.chunks.run_chunk` as the local engine.  The results
come back in session order, so the tables are identical to the local engine's
(bit for bit with the same ``chunk_rows``).

It also maps a function over independent items (:meth:`DaskEngine.map_items`):
the partitions of a partitioned input are loaded and validated on the workers
that way (:mod:`sessionval.io.partitioned`).  :meth:`DaskEngine.submit_items`
and :meth:`DaskEngine.map_futures` keep results on the workers and run functions
where they lie: :mod:`sessionval.evaluation.remote` keeps each validated
partition on its worker and scores it there.

Dask is an optional extra (``pip install "sessionval[dask]"``);
:func:`dask_engine` opens a client on an existing scheduler or on a
``LocalCluster`` and closes it afterwards.  ``docs/scale-out.md`` says when to
use it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any, Final, TypeVar

from ..errors import MeasureSpecError, SessionvalError
from .chunks import ChunkContext
from .engine import DEFAULT_CHUNK_ROWS, Progress, session_ranges

__all__ = [
    "DaskEngine",
    "apply_on_worker",
    "dask_engine",
]

T = TypeVar("T")
U = TypeVar("U")

_INSTALL: Final = 'the Dask engine needs the dask extra: pip install "sessionval[dask]"'


def _distributed() -> Any:
    """The ``distributed`` package (untyped: used through ``Any``), or why it is missing."""
    import importlib

    try:
        return importlib.import_module("distributed")
    except ImportError as exc:  # pragma: no cover - the extra is installed with [all]
        raise SessionvalError(_INSTALL) from exc


@dataclass(frozen=True)
class _Shared:
    """What every chunk of an evaluation shares, broadcast to the workers once."""

    lookup: Any
    ideal_offsets: Any
    ideal_values: Any


def apply_on_worker(item: Any, fn: Callable[[Any], Any]) -> Any:
    """On a worker: ``fn(item)`` (``fn`` broadcast once)."""
    return fn(item)


def _run_range(fn: Callable[[ChunkContext, int, int], T], shared: _Shared, sub: ChunkContext) -> T:
    """On a worker: put the shared parts back into the chunk's context and run ``fn`` on it."""
    ctx = replace(
        sub,
        lookup=shared.lookup,
        ideal_offsets=shared.ideal_offsets,
        ideal_values=shared.ideal_values,
    )
    return fn(ctx, 0, ctx.n_sessions)


@dataclass
class DaskEngine:
    """Runs the chunks of whole sessions (and independent items) on a Dask cluster.

    Parameters
    ----------
    client
        A connected ``distributed.Client``.
    chunk_rows
        Result rows per chunk (whole sessions; a longer session is a chunk of its own).
        The default is the local engine's, so the chunks are the same ranges and the
        tables the same bits: running sums restart at each chunk, so another chunk
        size changes the last bits of a few sums (about 1e-16 relative).
    progress
        Called with ``(done, total)`` as chunks or items finish.
    """

    client: Any
    chunk_rows: int = DEFAULT_CHUNK_ROWS
    progress: Progress | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.chunk_rows < 1:
            raise MeasureSpecError(f"chunk_rows must be >= 1, got {self.chunk_rows}")

    @property
    def n_workers(self) -> int:
        """Number of workers the scheduler knows now."""
        return len(self.client.scheduler_info().get("workers", {}))

    def map_sessions(self, fn: Callable[[ChunkContext, int, int], T], ctx: ChunkContext) -> list[T]:
        """Run ``fn`` on each range of whole sessions on the workers; results in session order."""
        ranges = session_ranges(ctx.session_row_offsets, self.chunk_rows)
        if not ranges:
            return []
        shared = self.client.scatter(
            _Shared(ctx.lookup, ctx.ideal_offsets, ctx.ideal_values), broadcast=True, hash=False
        )
        # the slices travel without the shared parts (they are put back on the worker)
        bare = replace(
            ctx, lookup=None, ideal_offsets=ctx.ideal_offsets[:0], ideal_values=ctx.ideal_values[:0]
        )
        # each chunk's slice is scattered (sent once, to the worker that will run it), not
        # embedded in the task graph
        slices = self.client.scatter([bare.restrict(s0, s1) for s0, s1 in ranges], hash=False)
        futures = [self.client.submit(_run_range, fn, shared, sub, pure=False) for sub in slices]
        try:
            return self.collect(futures)
        finally:
            del futures, slices, shared

    def map_items(self, fn: Callable[[U], T], items: Sequence[U]) -> list[T]:
        """``[fn(item) for item in items]`` computed on the workers, in order.

        ``fn`` is sent to each worker once (it may carry the header and judgments of a
        study, or a run's arrays), not pickled into every task.
        """
        if not items:
            return []
        shared = self.broadcast(fn)
        futures = [self.client.submit(apply_on_worker, item, shared, pure=False) for item in items]
        return self.collect(futures)

    # ---- data kept on the workers (a partitioned study: sessionval.evaluation.remote)
    def submit_items(
        self, fn: Callable[..., Any], items: Sequence[Any], *args: Any, priority: int = 0
    ) -> list[Any]:
        """Futures of ``fn(item, *args)`` for each item: the results stay on the workers.

        An item (or argument) that is a future runs where its data is; the results
        are released when the returned futures are dropped.  Among the tasks ready on
        a worker, those of higher ``priority`` run first (Dask runs equal priorities in
        the order they were submitted).
        """
        return [
            self.client.submit(fn, item, *args, pure=False, priority=priority) for item in items
        ]

    def map_futures(self, fn: Callable[..., T], futures: Sequence[Any], *args: Any) -> list[T]:
        """``[fn(value, *args) for value in futures]`` computed where each value is, gathered."""
        return self.collect(self.submit_items(fn, futures, *args))

    def collect(self, futures: list[Any], progress: Progress | None = None) -> list[Any]:
        """The values of ``futures`` on the client, in order (every ``map_*`` gathers so).

        Each value is fetched as soon as its task finishes and released on its worker
        then: ``futures`` is emptied (drop any other reference to them), so the
        workers do not hold every result until the last one is done.  A task's
        error is raised as it was raised.  ``progress`` (and the engine's) is called
        with ``(done, total)`` as values arrive.
        """
        out: list[Any] = [None] * len(futures)
        for i, value in self.arriving(futures, progress):
            out[i] = value
        return out

    def arriving(
        self, futures: list[Any], progress: Progress | None = None
    ) -> Iterator[tuple[int, Any]]:
        """``(place in futures, value)`` of each future as its task finishes (:meth:`collect`).

        ``futures`` is emptied, so a value is released on its worker once fetched: a
        caller that folds the values as they come holds one at a time.
        """
        where = {f.key: i for i, f in enumerate(futures)}
        total = len(where)
        arriving = _distributed().as_completed(futures, with_results=True)
        futures.clear()
        for done, (future, value) in enumerate(arriving, start=1):
            yield where[future.key], value
            for report in (self.progress, progress):
                if report is not None:
                    report(done, total)

    def broadcast(self, value: Any) -> Any:
        """A future of ``value`` copied to every worker once (judgments, parameters)."""
        return self.client.scatter(value, broadcast=True, hash=False)


@contextmanager
def dask_engine(
    *,
    scheduler: str | None = None,
    workers: int | None = None,
    threads_per_worker: int = 1,
    processes: bool = True,
    memory_limit: str | float | None = "auto",
    chunk_rows: int = DEFAULT_CHUNK_ROWS,
    progress: Progress | None = None,
) -> Iterator[DaskEngine]:
    """A :class:`DaskEngine` on an existing cluster (``scheduler``) or a local one (``workers``).

    Parameters
    ----------
    scheduler
        Address of a running scheduler (``tcp://host:8786``); the cluster is left running.
    workers
        Workers of a ``LocalCluster`` started here and closed afterwards (default: 2).
    threads_per_worker, processes, memory_limit
        Passed to ``LocalCluster`` (``processes=False``: threads in this process, no
        copies; what the tests use).
    chunk_rows, progress
        See :class:`DaskEngine`.

    Raises
    ------
    SessionvalError
        Dask is not installed, both ``scheduler`` and ``workers`` are given, or the
        scheduler cannot be reached.
    """
    dd = _distributed()
    if scheduler is not None and workers is not None:
        raise SessionvalError("give either a scheduler address or a number of workers, not both")
    cluster = None
    try:
        if scheduler is not None:
            client = dd.Client(scheduler, timeout="10s")
        else:
            cluster = dd.LocalCluster(
                n_workers=workers or 2,
                threads_per_worker=threads_per_worker,
                processes=processes,
                memory_limit=memory_limit,
                dashboard_address=":0",  # a free port: several clusters may run at once
            )
            client = dd.Client(cluster)
    except OSError as exc:
        if cluster is not None:
            cluster.close()
        raise SessionvalError(f"cannot reach the Dask scheduler {scheduler}: {exc}") from exc
    try:
        yield DaskEngine(client, chunk_rows=chunk_rows, progress=progress)
    finally:
        client.close()
        if cluster is not None:
            cluster.close()

"""Writing files on a second thread while this one builds the next table.

Arrow's CSV and Parquet encoders release the GIL, so a file handed to
:class:`BackgroundWrites` is encoded on its thread while the caller goes on in
Python (the next table, or pyreadstat's per-cell loop of a Stata/SPSS file, which
holds the GIL): the run's tables and exports stages use the machine's second core.
One worker, so the files are written one at a time in the order given; each file's
bytes are the same as a write in the caller's thread (the caller must not change a
table it handed over until the block ends).  A run's writer outlives its stages
(:attr:`sessionval.workflow.outputs.RunOutputs.writes`, closed before the files are
moved into place), so a stage hands its files over and the next stage's work runs
while they are encoded.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from types import TracebackType
from typing import Any, Self

__all__ = ["BackgroundWrites"]


class BackgroundWrites:
    """A context that runs writes on one background thread and waits for all of them.

    On leaving the block every write has finished; the first write that raised raises
    again there (a :class:`~sessionval.errors.WriteError` naming its file, as in the
    caller's thread).  When the block itself raises, the writes not started are
    cancelled and the running one is waited for before the exception goes on.

    Examples
    --------
    >>> done = []
    >>> with BackgroundWrites() as bg:
    ...     bg.submit(done.append, "a.parquet")
    ...     bg.submit(done.append, "a.csv")
    >>> done
    ['a.parquet', 'a.csv']
    """

    def __init__(self) -> None:
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sessionval-write")
        self._futures: list[Future[Any]] = []
        self._failed = False

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> None:
        """Run ``fn(*args, **kwargs)`` on the writer thread, after the writes given before.

        Once a write has raised, the writes after it are skipped (the command fails).
        """
        self._futures.append(self._pool.submit(self._run, fn, args, kwargs))

    def _run(self, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        if self._failed:
            return
        try:
            fn(*args, **kwargs)
        except BaseException:
            self._failed = True
            raise

    def wait(self) -> None:
        """Wait for every write given so far; raise the first one's exception."""
        futures, self._futures = self._futures, []
        try:
            for f in futures:
                f.result()
        finally:
            for f in futures:  # a write after a failed one is not left running unseen
                f.cancel()

    def close(self) -> None:
        """Wait for every write given so far (raising the first one's exception), then stop."""
        try:
            self.wait()
        finally:
            self._pool.shutdown(wait=True, cancel_futures=True)

    def cancel(self) -> None:
        """Drop the writes not started, wait for the running one, stop (a failed command)."""
        self._pool.shutdown(wait=True, cancel_futures=True)
        self._futures = []

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc is None:
            self.close()
        else:
            self.cancel()

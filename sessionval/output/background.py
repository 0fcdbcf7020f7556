"""A second Python process for work the run hands off: :class:`BackgroundProcess`.

Drawing a figure to PNG, SVG and PDF, or pyreadstat's per-cell loop writing a Stata or
SPSS file, holds the interpreter's lock for seconds, so a thread cannot overlap it with
the rest of the run; another process can.  The helper is
started as ``python -m sessionval.output.background`` (never by re-running the
caller's script, which :mod:`multiprocessing`'s spawn does: a user's script without an
``if __name__ == "__main__"`` guard would run again), and calls are pickled to it over
its standard input and answered over its standard output, in order.

A call whose arguments cannot be pickled, or that is waiting when the helper dies, runs
in this process when its result is asked for: the helper only ever makes things
faster, never makes them fail.  An exception raised by the call itself in the helper is
raised again by :meth:`Pending.result`, as if the call had run here.
"""

from __future__ import annotations

import gc
import os
import pickle
import queue
import struct
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any, Generic, TypeVar

__all__ = ["BackgroundProcess", "BackgroundWork", "Pending"]

_T = TypeVar("_T")
_HEADER = struct.Struct("<Q")  # each message: its length, then its pickle


class Pending(Generic[_T]):
    """The result of a call, computed here or in a :class:`BackgroundProcess`."""

    def __init__(self, fn: Callable[..., _T], args: tuple[Any, ...]) -> None:
        self._fn, self._args = fn, args
        self._done = threading.Event()
        self._outcome: tuple[bool, Any] | None = None  # (raised, value)

    @classmethod
    def now(cls, fn: Callable[..., _T], *args: Any) -> Pending[_T]:
        """The call made here, at once."""
        pending = cls(fn, args)
        pending._run_here()
        return pending

    def _settle(self, raised: bool, value: Any) -> None:
        self._outcome = (raised, value)
        self._args = ()  # kept only to make the call here: a figure or table not held longer
        self._done.set()

    def _run_here(self) -> None:
        try:
            self._settle(False, self._fn(*self._args))
        except BaseException as exc:  # raised again by result(), as the call would
            self._settle(True, exc)

    def result(self) -> _T:
        """Wait for the call; its value, or its exception raised again."""
        self._done.wait()
        if self._outcome is None:  # the helper died first: the call runs here
            self._run_here()
        raised, value = self._outcome  # type: ignore[misc]
        if raised:
            raise value
        return value  # type: ignore[no-any-return]


class BackgroundProcess:
    """One helper process that runs picklable calls in order; a context manager.

    Parameters
    ----------
    preload
        Modules the helper imports as soon as it starts, while this process works
        (the first call then does not wait for matplotlib's import).

    Examples
    --------
    >>> import math
    >>> with BackgroundProcess() as helper:
    ...     root = helper.submit(math.sqrt, 16.0)
    ...     root.result()
    4.0
    """

    def __init__(self, preload: tuple[str, ...] = ()) -> None:
        self._waiting: queue.Queue[Pending[Any]] = queue.Queue()  # answered in order
        self._outbox: queue.Queue[bytes | None] = queue.Queue()
        self._lock = threading.Lock()  # the helper's death against a call being queued
        self.ran_here = 0  # calls made in this process (that did not pickle, or after a death)
        self._proc: subprocess.Popen[bytes] | None = None
        try:
            self._proc = subprocess.Popen(
                # -P: not the working folder first on the import path, which could hold
                # another sessionval; PYTHONPATH names this one (_import_path)
                [sys.executable, "-P", "-m", __name__, *preload],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                env={**os.environ, "PYTHONPATH": _import_path()},
            )
        except OSError:  # no interpreter to start: every call runs here
            self._alive = False
            self._threads: list[threading.Thread] = []
            return
        self._alive = True
        self._threads = [
            threading.Thread(target=self._send, name="sessionval-send", daemon=True),
            threading.Thread(target=self._receive, name="sessionval-receive", daemon=True),
        ]
        for thread in self._threads:
            thread.start()

    def submit(self, fn: Callable[..., _T], *args: Any) -> Pending[_T]:
        """Run ``fn(*args)`` in the helper (here, when ``fn`` or its arguments do not pickle).

        ``fn`` must be importable by name (a module-level function).
        """
        pending: Pending[_T] = Pending(fn, args)
        try:
            message = pickle.dumps((fn, args), protocol=pickle.HIGHEST_PROTOCOL)
        except Exception:  # pickle raises PicklingError, TypeError or AttributeError
            message = None
        with self._lock:
            if message is not None and self._alive:
                self._waiting.put(pending)
                self._outbox.put(message)
                return pending
        self.ran_here += 1
        pending._run_here()
        return pending

    def close(self) -> None:
        """Let the helper finish what was submitted, then stop it."""
        self._stop(kill=False)

    def kill(self) -> None:
        """Stop the helper now; what it had not answered runs here when asked for."""
        self._stop(kill=True)

    def _stop(self, *, kill: bool) -> None:
        if self._proc is None:
            return
        if kill:
            self._proc.kill()
        self._outbox.put(None)  # the sender closes the helper's input: it ends there
        for thread in self._threads:
            thread.join()
        self._proc.wait()
        self._proc = None

    def __enter__(self) -> BackgroundProcess:
        return self

    def __exit__(self, kind: object, *_: object) -> None:
        if kind is None:
            self.close()
        else:
            self.kill()

    # the two threads: one writes the calls, one reads the answers

    def _send(self) -> None:
        proc = self._proc
        if proc is None or proc.stdin is None:
            return
        try:
            while (message := self._outbox.get()) is not None:
                proc.stdin.write(_HEADER.pack(len(message)) + message)
                proc.stdin.flush()
        except OSError:
            pass  # the helper died: the receiver hands its calls back
        finally:
            try:
                proc.stdin.close()
            except OSError:
                pass

    def _receive(self) -> None:
        proc = self._proc
        if proc is None or proc.stdout is None:
            return
        while (answer := _read(proc.stdout)) is not None:
            try:
                raised, value = pickle.loads(answer)
            except Exception as exc:  # a value that does not unpickle here
                raised, value = True, RuntimeError(f"the background process's answer: {exc}")
            if isinstance(value, _Rebuilt):
                value = value.build()
            self._waiting.get()._settle(raised, value)
        # the helper's output ended: whatever is still waiting runs here when asked for
        with self._lock:
            self._alive = False
            while not self._waiting.empty():
                self.ran_here += 1
                self._waiting.get()._done.set()


class BackgroundWork:
    """Calls made here, or in a :class:`BackgroundProcess` once :meth:`start` ran.

    Every call goes through :meth:`submit`; :meth:`close` waits for them all (raising
    the first error) and stops the process.  Before :meth:`start` (and in a run that
    does not start one) a call is made at once, and raises at once.
    """

    def __init__(self) -> None:
        self._process: BackgroundProcess | None = None
        self._pending: list[Pending[Any]] = []
        self._ran_here = 0  # of a process stopped

    @property
    def started(self) -> bool:
        """Whether calls go to the background process."""
        return self._process is not None

    @property
    def ran_here(self) -> int:
        """Calls given to the background process but made here (0: none)."""
        now = self._process.ran_here if self._process is not None else 0
        return self._ran_here + now

    def start(self, preload: tuple[str, ...] = ()) -> None:
        """Send the calls submitted from now on to a background process (started now)."""
        if self._process is None:
            self._process = BackgroundProcess(preload)

    def submit(self, fn: Callable[..., _T], *args: Any) -> Pending[_T]:
        """``fn(*args)``, in the background process when started, else here and now."""
        if self._process is None:
            pending = Pending.now(fn, *args)
            pending.result()  # made here: raises here, as the call itself would
            return pending
        pending = self._process.submit(fn, *args)
        self._pending.append(pending)
        return pending

    def close(self) -> None:
        """Wait for every call (raising the first error) and stop the process."""
        try:
            for pending in self._pending:
                pending.result()
        except BaseException:
            self.kill()
            raise
        self._stop(kill=False)

    def kill(self) -> None:
        """Stop the background process now (a run that failed writes nothing more)."""
        self._stop(kill=True)

    def _stop(self, *, kill: bool) -> None:
        if self._process is not None:
            self._process.kill() if kill else self._process.close()
            self._ran_here += self._process.ran_here
            self._process = None
        self._pending = []


def _import_path() -> str:
    """``PYTHONPATH`` with this ``sessionval``'s folder first: the helper imports the same one."""
    here = str(Path(__file__).resolve().parents[2])
    return os.pathsep.join([here, *filter(None, [os.environ.get("PYTHONPATH")])])


def _read(stream: IO[bytes]) -> bytes | None:
    """One message, or ``None`` at the end of the stream."""
    header = stream.read(_HEADER.size)
    if len(header) < _HEADER.size:
        return None
    (size,) = _HEADER.unpack(header)
    body = stream.read(size)
    return body if len(body) == size else None


class _Rebuilt:
    """An exception whose class does not unpickle by its ``args`` (a custom ``__init__``).

    Sent as its class, ``args`` and attributes, and built again without calling
    ``__init__``: the same class, message and notes on the caller's side.
    """

    def __init__(self, exc: BaseException) -> None:
        self.kind, self.args, self.state = type(exc), exc.args, dict(vars(exc))

    def build(self) -> BaseException:
        exc = self.kind.__new__(self.kind)
        BaseException.__init__(exc, *self.args)
        vars(exc).update(self.state)
        return exc


def _raised(exc: BaseException) -> bytes:
    """The answer of a call that raised ``exc``: the exception, as close to itself as pickles."""
    for attempt in (lambda: exc, lambda: _Rebuilt(exc)):
        try:
            answer = pickle.dumps((True, attempt()), protocol=pickle.HIGHEST_PROTOCOL)
            pickle.loads(answer)  # unpickles here, so it unpickles there
            return answer
        except Exception:
            continue
    return pickle.dumps((True, RuntimeError(f"{type(exc).__name__}: {exc}")))


def _serve(inbox: IO[bytes], outbox: IO[bytes]) -> None:
    """The helper's loop: each call read, made, and answered with its value or exception."""
    while (message := _read(inbox)) is not None:
        try:
            fn, args = pickle.loads(message)
            answer = pickle.dumps((False, fn(*args)), protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as exc:  # the caller raises it again
            answer = _raised(exc)
        outbox.write(_HEADER.pack(len(answer)) + answer)
        outbox.flush()


if __name__ == "__main__":  # the helper process
    import importlib

    # the calls' own prints go to stderr; stdout carries the answers only
    answers = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    for name in sys.argv[1:]:
        importlib.import_module(name)
    gc.freeze()  # the modules imported are never garbage: no collection traverses them again
    # served by the module imported by its name: what it pickles names that module, not __main__
    importlib.import_module("sessionval.output.background")._serve(sys.stdin.buffer, answers)

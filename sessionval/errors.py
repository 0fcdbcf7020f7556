"""The :class:`SessionvalError` family: every error sessionval raises for bad input or options.

Every user-facing failure is a :class:`SessionvalError` (a ``ValueError``) whose
message says *where* (file, line or row, field), *what* was found and *what is
allowed*, e.g. ``logs.jsonl:17: results[3].rank: must be >= 1, got 0``.

Loaders never raise on the first problem: they collect
:class:`~sessionval.problems.Problem` records (up to a limit) and raise one
:class:`ValidationFailed` carrying all of them (:func:`raise_if_any`), so a user
fixes a file in one pass.  Lenient mode keeps the same records in the
:class:`~sessionval.problems.LoadReport` instead of raising.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from .problems import Problem

__all__ = [
    "InputFormatError",
    "JudgmentError",
    "MeasureSpecError",
    "OutOfMemory",
    "OutputError",
    "ParseError",
    "SessionvalError",
    "StatisticsError",
    "ValidationFailed",
    "WriteError",
    "memory_advice",
    "phase",
    "raise_if_any",
    "write_error",
    "writing",
]


class SessionvalError(ValueError):
    """Base class of every error sessionval raises for bad input or bad options."""


class ParseError(SessionvalError):
    """A file cannot be read: wrong encoding, truncated JSON, malformed line or XML."""


class InputFormatError(SessionvalError):
    """A file or table is readable but not in a format sessionval knows (e.g. columns missing)."""


class JudgmentError(SessionvalError):
    """Judgments are inconsistent: grade outside the scale, unjudged document under ``error``."""


class MeasureSpecError(SessionvalError):
    """A measure name, parameter or configuration value is not valid."""


class StatisticsError(SessionvalError):
    """A statistical procedure cannot run on the data or with the options given."""


class OutputError(SessionvalError):
    """An output cannot go where it was asked to: over an input, or into a busy folder."""


class WriteError(OutputError):
    """The system or a library refused to write a file: disk full, file-size limit, permissions.

    Parameters
    ----------
    path
        The file being written.
    reason
        What the system or the library said.
    code
        The ``errno`` of the failure, if known (it chooses the advice).

    Examples
    --------
    >>> print(WriteError(Path("out/a.csv"), "No space left on device", errno.ENOSPC))
    out/a.csv: cannot write: No space left on device; free space on that disk or choose ...
    """

    def __init__(self, path: Path, reason: str, code: int | None = None) -> None:
        self.path = Path(path)
        self.reason = reason
        self.code = code
        advice = _WRITE_ADVICE.get(code, _WRITE_ADVICE[None])
        super().__init__(f"{self.path}: cannot write: {reason}; {advice}")

    def moved(self, staging: Path, final: Path) -> WriteError:
        """The same error naming the file where it was going (``final``) instead of ``staging``.

        A file written in a staging folder is named by where it would have been moved.
        """
        if not self.path.is_relative_to(staging):
            return self
        return WriteError(final / self.path.relative_to(staging), self.reason, self.code)


#: What to do about a write the system refused, by ``errno``.
_WRITE_ADVICE: dict[int | None, str] = {
    errno.ENOSPC: "free space on that disk or choose another --out",
    errno.EDQUOT: "your disk quota is used up: free space or choose another --out",
    errno.EFBIG: "the file is larger than the file-size limit (ulimit -f) or the file "
    "system allows: raise the limit or choose another --out",
    errno.EACCES: "you may not write there: change its permissions or choose another --out",
    errno.EPERM: "you may not write there: change its permissions or choose another --out",
    errno.EROFS: "the file system is read-only: choose another --out",
    None: "check the free space, the file-size limit (ulimit -f) and the permissions of "
    "that folder, or choose another --out",
}


def _library_write_failure(exc: BaseException) -> bool:
    """Whether ``exc`` is a writing library's own I/O error (pyreadstat's C writer).

    Recognised by the exception's module, so this module imports no writing library;
    pyarrow's I/O errors are ``OSError`` already.
    """
    module = type(exc).__module__.partition(".")[0]
    return module == "pyreadstat" and type(exc).__name__ == "ReadstatError"


def write_error(exc: BaseException, path: str | os.PathLike[str]) -> WriteError | None:
    """``exc`` as a :class:`WriteError` naming ``path`` when it is a refused write, else None.

    Refused writes are ``OSError`` (disk full, file-size limit, permissions; pyarrow's
    ``ArrowIOError`` is one) and pyreadstat's ``ReadstatError`` ("Unable to write
    data").  A :class:`WriteError` already raised keeps the file it names.
    """
    if isinstance(exc, WriteError):
        return exc
    if isinstance(exc, OSError):
        reason = exc.strerror or str(exc) or type(exc).__name__
        return WriteError(Path(path), " ".join(reason.split()), exc.errno)
    if _library_write_failure(exc):
        return WriteError(Path(path), " ".join(str(exc).split()) or type(exc).__name__)
    return None


@contextmanager
def writing(path: str | os.PathLike[str]) -> Iterator[None]:
    """Name the file written inside the block when the system or a library refuses the write.

    The one translation of write failures (:func:`write_error`): every writer and
    export writes its files inside it, so a full disk or a file-size limit ends the
    command with exit code 2 and ``error: FILE: cannot write: ...`` instead of an
    internal error or a message without the file.

    Examples
    --------
    >>> with writing("out/scores.sav"):
    ...     raise OSError(errno.EFBIG, "File too large")
    Traceback (most recent call last):
    ...
    sessionval.errors.WriteError: out/scores.sav: cannot write: File too large; the file is ...
    """
    try:
        yield
    except Exception as exc:
        err = write_error(exc, path)
        if err is None or err is exc:
            raise
        raise err from exc


class ValidationFailed(SessionvalError):
    """Strict-mode failure carrying every :class:`~sessionval.problems.Problem` collected.

    Parameters
    ----------
    problems
        The problems found, in input order.
    truncated
        True when collection stopped at the limit and more problems may exist.

    Examples
    --------
    >>> print(ValidationFailed([Problem("s.csv", "row 2", "rank", "must be >= 1", "0")]))
    1 problem found:
      s.csv (row 2): rank: must be >= 1 (got 0)
    """

    def __init__(self, problems: Sequence[Problem], *, truncated: bool = False) -> None:
        self.problems: tuple[Problem, ...] = tuple(problems)
        self.truncated = truncated
        super().__init__(self._render())

    def _render(self) -> str:
        n = len(self.problems)
        more = " (stopped at the limit; there may be more)" if self.truncated else ""
        head = f"{n} problem{'s' if n != 1 else ''} found{more}:"
        return "\n".join([head, *(f"  {p}" for p in self.problems)])


def raise_if_any(problems: Iterable[Problem], *, limit: int | None = None) -> None:
    """Raise :class:`ValidationFailed` if ``problems`` is not empty (the strict-mode exit).

    Parameters
    ----------
    problems
        Problems collected so far.
    limit
        Keep at most this many in the error (``None``: all); the error says when
        more were found.

    Raises
    ------
    ValidationFailed
        With the first ``limit`` problems.

    Examples
    --------
    >>> raise_if_any([])  # nothing found: returns
    >>> raise_if_any([Problem("a", "", "", "x"), Problem("a", "", "", "y")], limit=1)
    Traceback (most recent call last):
    ...
    sessionval.errors.ValidationFailed: 1 problem found (stopped at the limit; there may be more):
      a: x
    """
    collected = list(problems)
    if not collected:
        return
    truncated = limit is not None and len(collected) > limit
    raise ValidationFailed(
        collected[:limit] if limit is not None else collected, truncated=truncated
    )


class OutOfMemory(MemoryError):
    """A :class:`MemoryError` raised inside a :func:`phase`: what was running, on how many rows.

    The command line turns it into one line and exit code 3 (``docs/reliability.md``),
    with the phase's ``advice`` (else a general one).

    Parameters
    ----------
    what
        The phase, as a gerund clause (``"evaluating"``).
    rows
        Rows the phase was working on, with their unit (``"result rows"``), if known.
    advice
        What would help this phase, naming only options not already given
        (``"free memory or skip them: run --no-exports"``); ``""``: none specific.

    Examples
    --------
    >>> str(OutOfMemory("evaluating", 26_000_000, "result rows"))
    'out of memory while evaluating 26,000,000 result rows'
    """

    def __init__(
        self, what: str, rows: int | None = None, unit: str = "rows", advice: str = ""
    ) -> None:
        self.what = what
        self.rows = rows
        self.unit = unit
        self.advice = advice
        on = f" {rows:,} {unit}" if rows is not None else ""
        super().__init__(f"out of memory while {what}{on}")


def memory_advice(*hints: str) -> str:
    """Advice for running out of memory: free memory, or each of ``hints`` (options to try).

    Give only hints that would help the phase and are not already in force, so the
    advice never repeats an option the user gave.

    Examples
    --------
    >>> memory_advice("run --no-exports")
    'free memory or give less work at once: run --no-exports (docs/performance.md gives the memory per million rows)'
    >>> memory_advice()
    'free memory or give less work at once (docs/performance.md gives the memory per million rows)'
    """  # noqa: E501
    listed = f": {', '.join(hints)}" if hints else ""
    return (
        f"free memory or give less work at once{listed} "
        "(docs/performance.md gives the memory per million rows)"
    )


@contextmanager
def phase(
    what: str, rows: int | None = None, unit: str = "rows", *, advice: str = ""
) -> Iterator[None]:
    """Name the work inside the block, so running out of memory there says what and on how much.

    A :class:`MemoryError` raised in the block becomes :class:`OutOfMemory`;
    phases nest, the innermost one names the error and gives its advice.

    Parameters
    ----------
    what
        What the block does, as a gerund clause (``"loading logs.jsonl"``).
    rows
        Rows it works on (``None``: not known yet).
    unit
        What a row is (``"result rows"``, ``"sessions"``).
    advice
        What would help if this block runs out of memory (see :class:`OutOfMemory`).

    Examples
    --------
    >>> with phase("evaluating", 3, "result rows"):
    ...     raise MemoryError
    Traceback (most recent call last):
    ...
    sessionval.errors.OutOfMemory: out of memory while evaluating 3 result rows
    """
    try:
        yield
    except OutOfMemory:
        raise
    except MemoryError as exc:
        raise OutOfMemory(what, rows, unit, advice) from exc

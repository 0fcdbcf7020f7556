"""Progress of long work: one small protocol, and the bars on stderr that draw it (tqdm).

The loaders, the evaluation and the statistics report what they have done to a
:class:`Progress` (``start(phase, total, unit)``, ``advance(n)``, ``finish()``) and
never learn how it is shown, so a low layer reports counts without importing the
command line.  :data:`NO_PROGRESS` does nothing; :class:`BarProgress` draws one tqdm
bar per phase (rows or sessions done, rate and an estimate of the time left when the
total is known); :func:`as_progress` adapts the phase-name callback
(``progress=callable(str)``) that the readers took before, so it keeps working.
A ``Progress`` is itself such a callback (``progress(phase)``: a phase without a
count), so it passes through every reader that takes one.

:func:`stages` is the run's bar over its named stages.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import IO, Any, Protocol, runtime_checkable

__all__ = [
    "NO_PROGRESS",
    "BarProgress",
    "NoProgress",
    "PhaseNames",
    "Progress",
    "ProgressLike",
    "Stages",
    "as_progress",
    "counted",
    "engine_ticks",
    "progress_bar",
    "stages",
]


@runtime_checkable
class Progress(Protocol):
    """What a long piece of work reports: phases, each with the units done of its total."""

    def start(self, phase: str, total: int | None = None, unit: str = "rows") -> None:
        """Begin ``phase`` (ending the one before): ``total`` units to do, ``None``: unknown."""
        ...

    def advance(self, n: int = 1) -> None:
        """``n`` more units of the current phase done."""
        ...

    def finish(self) -> None:
        """The current phase is done (its count drawn at its end)."""
        ...

    def __call__(self, phase: str) -> None:
        """Begin ``phase`` without a count (the readers' phase-name callback)."""
        ...

    @property
    def counting(self) -> bool:
        """Whether counts are shown: work done only to count (a pass over a file) is skipped."""
        ...


#: what a reader's ``progress=`` accepts: a :class:`Progress`, a phase-name callback, nothing
ProgressLike = Progress | Callable[[str], None] | None


class NoProgress:
    """A :class:`Progress` that shows nothing (the default of every reader)."""

    def start(self, phase: str, total: int | None = None, unit: str = "rows") -> None:
        """Nothing."""

    def advance(self, n: int = 1) -> None:
        """Nothing."""

    def finish(self) -> None:
        """Nothing."""

    def __call__(self, phase: str) -> None:
        """Nothing."""

    @property
    def counting(self) -> bool:
        """No counts are shown."""
        return False


#: the progress that shows nothing
NO_PROGRESS: Progress = NoProgress()


@dataclass(frozen=True)
class PhaseNames:
    """A phase-name callback as a :class:`Progress`: it hears each phase's name, no counts."""

    callback: Callable[[str], None]

    def start(self, phase: str, total: int | None = None, unit: str = "rows") -> None:
        """Pass the phase's name on."""
        self.callback(phase)

    def advance(self, n: int = 1) -> None:
        """Counts are not passed on."""

    def finish(self) -> None:
        """Nothing to end."""

    def __call__(self, phase: str) -> None:
        """Pass the phase's name on."""
        self.callback(phase)

    @property
    def counting(self) -> bool:
        """The callback hears names only (those of the phases it heard before counts came)."""
        return False


def as_progress(progress: ProgressLike) -> Progress:
    """``progress`` as a :class:`Progress`: itself, a callback adapted, or :data:`NO_PROGRESS`.

    Examples
    --------
    >>> seen = []
    >>> p = as_progress(seen.append)
    >>> p.start("reading sessions", 10, "lines"); p.advance(10); p.finish()
    >>> seen
    ['reading sessions']
    >>> as_progress(None) is NO_PROGRESS
    True
    """
    if progress is None:
        return NO_PROGRESS
    if isinstance(progress, Progress):
        return progress
    return PhaseNames(progress)


@contextmanager
def counted(
    progress: ProgressLike, phase: str, total: int | None, unit: str = "rows"
) -> Iterator[Progress]:
    """``progress`` started on ``phase`` for the block, finished after it (also on error)."""
    p = as_progress(progress)
    p.start(phase, total, unit)
    try:
        yield p
    finally:
        p.finish()


def engine_ticks(progress: ProgressLike, phase: str, unit: str) -> Callable[[int, int], None]:
    """An engine's ``progress(done, total)`` callback reporting to ``progress`` as ``phase``.

    The phase starts at the first call (the engine knows its total only then) and
    finishes when ``done`` reaches ``total``.

    Examples
    --------
    >>> seen = []
    >>> tick = engine_ticks(seen.append, "evaluating", "chunks")
    >>> tick(1, 2); tick(2, 2)
    >>> seen
    ['evaluating']
    """
    p = as_progress(progress)
    state = {"done": 0, "total": -1}

    def tick(done: int, total: int) -> None:
        if total != state["total"] or done < state["done"]:
            p.start(phase, total, unit)
            state["done"], state["total"] = 0, total
        p.advance(done - state["done"])
        state["done"] = done
        if done >= total:
            p.finish()

    return tick


@dataclass
class BarProgress:
    """A :class:`Progress` drawn as one tqdm bar per phase on ``file`` (default stderr).

    ``disable=None`` draws only on a terminal, ``True`` never, ``False`` always.  A
    phase's bar is drawn once more at its end, so its last count is the one shown
    (tqdm would otherwise skip updates closer than its refresh interval).
    """

    disable: bool | None = None
    file: IO[str] | None = None
    _bar: Any = field(default=None, init=False, repr=False)

    def start(self, phase: str, total: int | None = None, unit: str = "rows") -> None:
        """Close the current phase's bar and open one for ``phase``."""
        from tqdm.auto import tqdm

        self.finish()
        self._bar = tqdm(
            total=total,
            desc=phase,
            unit=f" {unit}",
            # 1.2M/3.4M on large phases; exact counts on small ones (tqdm would print 6.00/6.00)
            unit_scale=total is not None and total >= 100_000,
            disable=self.disable,
            leave=False,
            file=self.file,
            dynamic_ncols=True,
        )

    def advance(self, n: int = 1) -> None:
        """Count ``n`` more units on the current bar."""
        if self._bar is not None and n:
            self._bar.update(n)

    def finish(self) -> None:
        """Draw the current bar at its final count and close it."""
        if self._bar is not None:
            bar, self._bar = self._bar, None
            if not bar.disable:
                bar.refresh()
            bar.close()

    def __call__(self, phase: str) -> None:
        """A phase without a count: its name, elapsed time and nothing else."""
        self.start(phase)

    @property
    def counting(self) -> bool:
        """Whether the bars are drawn (``disable=None``: when ``file`` is a terminal)."""
        if self.disable is not None:
            return not self.disable
        stream = self.file if self.file is not None else sys.stderr
        isatty = getattr(stream, "isatty", None)
        return bool(callable(isatty) and isatty())


@contextmanager
def progress_bar(enabled: bool | None = None, *, file: IO[str] | None = None) -> Iterator[Progress]:
    """The progress a command reports to: bars on stderr, or nothing.

    ``enabled`` is ``--progress/--no-progress``: ``None`` (not given) draws only when
    stderr is a terminal, so logs and CI output stay clean.
    """
    bar = BarProgress(disable=None if enabled is None else not enabled, file=file)
    try:
        yield bar
    finally:
        bar.finish()


@dataclass
class Stages:
    """A bar over named stages: :meth:`phase` jumps to a stage by name, :meth:`update` steps."""

    names: tuple[str, ...]
    bar: Any

    def phase(self, name: str) -> None:
        """Show ``name`` as running; the bar stands at the stages completed before it."""
        if name in self.names:
            self.bar.n = self.names.index(name)
        self.bar.set_description(name)
        self.bar.refresh()

    def update(self, n: int = 1) -> None:
        """Mark ``n`` more stages done and show the next one."""
        self.bar.update(n)
        if self.bar.n < len(self.names):
            self.bar.set_description(self.names[self.bar.n])


@contextmanager
def stages(names: Sequence[str], *, disable: bool | None = None) -> Iterator[Stages]:
    """A progress bar over named stages, on stderr.

    ``disable=None`` (default) shows it only on a terminal, so logs and CI output stay clean.
    """
    from tqdm.auto import tqdm

    bar = tqdm(
        total=len(names), desc=names[0] if names else "", disable=disable, leave=False, unit="step"
    )
    try:
        yield Stages(tuple(names), bar)
    finally:
        bar.close()

"""Progress bars on stderr for long work (tqdm; silent when stderr is not a terminal)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

__all__ = [
    "Stages",
    "stages",
]


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

"""Progress bars on stderr for long work (tqdm; silent when stderr is not a terminal)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

__all__ = ["stages"]


@contextmanager
def stages(names: Sequence[str], *, disable: bool | None = None) -> Iterator[Any]:
    """A bar that advances once per named stage and shows the stage running.

    ``disable=None`` (default) shows it only on a terminal, so logs and CI output stay clean.
    """
    from tqdm.auto import tqdm

    bar = tqdm(
        total=len(names), desc=names[0] if names else "", disable=disable, leave=False, unit="step"
    )
    original = bar.update

    def update(n: int = 1) -> bool | None:
        result: bool | None = original(n)
        if bar.n < len(names):
            bar.set_description(names[bar.n])
        return result

    bar.update = update
    try:
        yield bar
    finally:
        bar.close()

"""Row blocks of one array pass run on a small pool of threads.

NumPy releases the GIL in sorts, gathers and arithmetic on numeric arrays, so the
blocks of a pass over millions of rows run on several cores at once.  Each block
writes only its own part of the output: the result does not depend on the number of
threads or on their timing.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from itertools import pairwise

__all__ = ["for_blocks", "n_threads"]

_POOL: ThreadPoolExecutor | None = None
_LOCK = threading.Lock()


def n_threads() -> int:
    """Threads for block passes: the cores this process may use (at most 8)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not on Linux
        cores = os.cpu_count() or 1
    return max(1, min(cores, 8))


def _pool() -> ThreadPoolExecutor:
    global _POOL
    with _LOCK:
        if _POOL is None:
            _POOL = ThreadPoolExecutor(n_threads(), thread_name_prefix="sessionval-blocks")
        return _POOL


def for_blocks(fn: Callable[[int, int], None], bounds: list[int]) -> None:
    """Call ``fn(bounds[i], bounds[i + 1])`` for every block, on the pool when it pays.

    ``bounds`` rise from the first to the end of the range.  Blocks run one by one
    when there is one block or one core, or when called from a pool thread (no
    nesting); an exception of a block is raised here.
    """
    blocks = list(pairwise(bounds))
    if (
        len(blocks) < 2
        or n_threads() < 2
        or threading.current_thread().name.startswith("sessionval-blocks")
    ):
        for a, b in blocks:
            fn(a, b)
        return
    for future in [_pool().submit(fn, a, b) for a, b in blocks]:
        future.result()

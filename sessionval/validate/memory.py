"""Give memory freed by a loading phase back to the operating system.

Both allocators under the loader keep freed memory for reuse: glibc's ``malloc``
keeps the holes a phase leaves in its heap (NumPy arrays below its mmap threshold,
the lines and objects of a parsed JSON-lines batch), and Arrow's memory pool keeps the
pages of freed Arrow arrays.  The next phase's arrays rarely fit those holes, so the
process grows while the live data does not.  Releasing them between phases keeps the
peak near what is live (issue 10, item 7).  Where neither call exists (another C
library, another Arrow pool) nothing happens.
"""

from __future__ import annotations

import ctypes
import functools
from collections.abc import Callable
from typing import Any

__all__ = ["release_free_memory"]


@functools.cache
def _malloc_trim() -> Callable[[int], Any] | None:
    """The C library's ``malloc_trim`` (glibc), or ``None`` on another C library."""
    try:
        libc = ctypes.CDLL(None)
    except OSError:  # pragma: no cover - no C library to load
        return None
    trim: Callable[[int], Any] | None = getattr(libc, "malloc_trim", None)
    return trim


def release_free_memory() -> bool:
    """Return freed heap and Arrow pool memory to the operating system.

    Returns
    -------
    bool
        Whether the C library's heap could be trimmed (glibc); Arrow's pool is
        released either way when pyarrow is installed.
    """
    try:
        import pyarrow as pa
    except ImportError:  # pragma: no cover - pyarrow is a dependency
        pass
    else:
        pa.default_memory_pool().release_unused()
    trim = _malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True

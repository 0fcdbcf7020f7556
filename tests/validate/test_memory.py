"""Memory freed by a loading phase is given back before the next (issue 10, item 7)."""

from __future__ import annotations

import platform

import pandas as pd
import pyarrow as pa
import pytest

from sessionval.validate import assemble, flat, memory
from tests.builders import small_flat


class _Pool:
    def __init__(self) -> None:
        self.released = 0

    def release_unused(self) -> None:
        self.released += 1


def test_release_gives_back_the_arrow_pool(monkeypatch):
    pool = _Pool()
    monkeypatch.setattr(pa, "default_memory_pool", lambda: pool)
    memory.release_free_memory()
    assert pool.released == 1


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="malloc_trim is glibc's")
def test_release_trims_the_glibc_heap():
    assert memory.release_free_memory() is True


def test_every_phase_starts_after_a_release(monkeypatch):
    calls: list[str] = []
    monkeypatch.setattr(flat, "release_free_memory", lambda: calls.append("release"))
    flat.frame_from_flat(small_flat(), progress=calls.append)
    phases = [c for c in calls if c != "release"]
    assert phases == list(flat.LOAD_PHASES)
    for phase in phases:  # each phase name is preceded by a release
        assert calls[calls.index(phase) - 1] == "release"


def test_text_without_values_is_the_string_column_astype_gives():
    empty = pd.Series(pd.Categorical([None, None, None], categories=pd.Index([], dtype=object)))
    built = assemble._as_string(empty)
    expected = empty.astype("string")
    pd.testing.assert_series_equal(built, expected, check_exact=True)
    assert built.dtype == expected.dtype and built.dtype.storage == expected.dtype.storage
    if built.dtype.storage == "pyarrow":
        assert built.array._pa_array.type == expected.array._pa_array.type


def test_text_with_values_is_converted_as_before():
    col = pd.Series(pd.Categorical(["a", None, "b"]))
    pd.testing.assert_series_equal(assemble._as_string(col), col.astype("string"))

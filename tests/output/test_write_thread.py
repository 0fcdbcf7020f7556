"""Writes on the background thread: in order, finished on leaving, failures raised there."""

from __future__ import annotations

import errno
import threading

import pandas as pd
import pytest

from sessionval.errors import WriteError, writing
from sessionval.output import export
from sessionval.output.export import write_exports
from sessionval.output.write_thread import BackgroundWrites
from tests.analysis.scores import PARAMS, per_query_table, per_session_table


def test_writes_run_on_one_other_thread_in_order_and_end_with_the_block():
    seen: list[tuple[str, int | None]] = []

    def note(name: str) -> None:
        seen.append((name, threading.get_ident()))

    with BackgroundWrites() as bg:
        for name in ("a", "b", "c"):
            bg.submit(note, name)
    assert [name for name, _ in seen] == ["a", "b", "c"]
    threads = {ident for _, ident in seen}
    assert len(threads) == 1 and threading.get_ident() not in threads


def test_a_failed_write_raises_when_the_block_ends_and_later_writes_do_not_run(tmp_path):
    ran: list[str] = []

    def refused() -> None:
        with writing(tmp_path / "t.parquet"):
            raise OSError(errno.EFBIG, "File too large")

    release = threading.Event()
    with pytest.raises(WriteError, match=r"t\.parquet: cannot write: "):
        with BackgroundWrites() as bg:
            bg.submit(release.wait)  # holds the thread until every write is queued
            bg.submit(refused)
            bg.submit(ran.append, "after")
            release.set()
    assert ran == []


def test_an_error_in_the_block_cancels_the_writes_not_started():
    ran: list[str] = []
    release = threading.Event()
    with pytest.raises(KeyError):
        with BackgroundWrites() as bg:
            bg.submit(release.wait)
            bg.submit(ran.append, "queued")
            release.set()
            raise KeyError("the caller's own error")
    # the running write was waited for; the queued one may have started before the cancel
    assert ran in ([], ["queued"])


def test_exports_written_with_the_writer_thread_are_the_same_bytes(tmp_path, monkeypatch):
    """The CSV and Parquet files of the exports are those a write in this thread makes."""
    ps = per_session_table()
    kwargs = {"per_session": ps, "per_query": per_query_table(ps), "parameters": PARAMS}
    write_exports(tmp_path / "threaded", formats=("csv", "parquet"), **kwargs)

    class InThisThread(BackgroundWrites):
        def submit(self, fn, /, *args, **kw):  # type: ignore[no-untyped-def]
            fn(*args, **kw)

    monkeypatch.setattr(export, "BackgroundWrites", InThisThread)
    write_exports(tmp_path / "serial", formats=("csv", "parquet"), **kwargs)
    names = sorted(p.name for p in (tmp_path / "serial").iterdir())
    assert names == sorted(p.name for p in (tmp_path / "threaded").iterdir())
    assert any(n.endswith(".parquet") for n in names)
    for name in names:
        assert (tmp_path / "threaded" / name).read_bytes() == (
            tmp_path / "serial" / name
        ).read_bytes(), name
    pd.testing.assert_frame_equal(
        pd.read_parquet(tmp_path / "threaded/per_session_wide.parquet"), ps
    )


def test_close_waits_for_every_write_and_cancel_drops_those_not_started():
    ran: list[str] = []
    writes = BackgroundWrites()
    writes.submit(ran.append, "a")
    writes.close()
    assert ran == ["a"]

    release = threading.Event()
    writes = BackgroundWrites()
    writes.submit(release.wait)
    writes.submit(ran.append, "queued")
    # the queued write is dropped before the running one is released
    threading.Timer(0.2, release.set).start()
    writes.cancel()
    assert ran in (["a"], ["a", "queued"])
    writes.close()  # nothing left: a no-op


def test_exports_on_a_writer_of_the_caller_are_complete_once_it_closes(tmp_path):
    """``writes=``: the run's writer outlives the call; its files end when it closes."""
    ps = per_session_table()
    kwargs = {"per_session": ps, "per_query": per_query_table(ps), "parameters": PARAMS}
    write_exports(tmp_path / "own", formats=("csv", "parquet"), **kwargs)
    release = threading.Event()
    writes = BackgroundWrites()
    writes.submit(release.wait)  # the run's writer is busy with an earlier stage's files
    res = write_exports(tmp_path / "run", formats=("csv", "parquet"), writes=writes, **kwargs)
    assert not (tmp_path / "run" / "per_session_wide.parquet").exists()  # not waited for
    release.set()
    writes.close()
    names = sorted(p.name for p in (tmp_path / "own").iterdir())
    assert names == sorted(p.name for p in (tmp_path / "run").iterdir())
    assert all(p.is_file() for p in res.files)
    for name in names:
        assert (tmp_path / "run" / name).read_bytes() == (tmp_path / "own" / name).read_bytes()

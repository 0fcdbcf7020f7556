"""The run's second process: calls answered in order, errors raised again, nothing lost."""

from __future__ import annotations

import math
import os
import sys

import pytest

from sessionval.errors import InputFormatError
from sessionval.output.background import BackgroundProcess, Pending


def _fail(message: str) -> None:
    raise InputFormatError(message)


def _pid() -> int:
    return os.getpid()


def test_calls_run_in_another_process_and_answer_in_order():
    with BackgroundProcess() as helper:
        roots = [helper.submit(math.sqrt, float(i * i)) for i in range(50)]
        pid = helper.submit(_pid)
        assert [r.result() for r in roots] == [float(i) for i in range(50)]
        assert pid.result() != os.getpid()
        assert helper.ran_here == 0


def test_what_the_helper_imported_is_left_out_of_its_collections():
    import gc

    with BackgroundProcess(("json",)) as helper:
        assert helper.submit(gc.get_freeze_count).result() > 1000  # the modules, frozen
        assert helper.ran_here == 0


def test_an_exception_is_raised_again_with_its_type_and_message():
    with BackgroundProcess() as helper:
        failed = helper.submit(_fail, "bad.csv:3: grade 'x' is not a number")
        after = helper.submit(math.sqrt, 4.0)  # the helper goes on after a failed call
        with pytest.raises(InputFormatError, match=r"bad\.csv:3"):
            failed.result()
        assert after.result() == 2.0


def test_a_call_that_does_not_pickle_runs_here():
    with BackgroundProcess() as helper:
        local = helper.submit(lambda: os.getpid())
        assert local.result() == os.getpid()
        assert helper.ran_here == 1


def test_calls_waiting_when_the_helper_dies_run_here():
    helper = BackgroundProcess()
    helper.kill()
    late = helper.submit(_pid)  # the helper is gone: made here, not lost
    assert late.result() == os.getpid()
    assert helper.ran_here == 1


def test_no_interpreter_to_start_means_every_call_runs_here(monkeypatch):
    monkeypatch.setattr(sys, "executable", "/nonexistent/python")
    with BackgroundProcess() as helper:
        assert helper.submit(math.sqrt, 9.0).result() == 3.0
        assert helper.ran_here == 1


def test_pending_now_keeps_the_exception_for_result():
    pending = Pending.now(math.sqrt, -1.0)
    with pytest.raises(ValueError, match="math domain error"):
        pending.result()


def _write_failed(path: str) -> None:
    from pathlib import Path

    from sessionval.errors import WriteError

    raise WriteError(Path(path), "disk full")  # a custom __init__: not rebuilt from args


def test_an_exception_with_its_own_init_comes_back_as_itself():
    from sessionval.errors import WriteError

    with BackgroundProcess() as helper:
        failed = helper.submit(_write_failed, "/out/figures/fig1.png")
        with pytest.raises(WriteError) as raised:
            failed.result()
    with pytest.raises(WriteError) as here:
        _write_failed("/out/figures/fig1.png")
    assert str(raised.value) == str(here.value) and "fig1.png" in str(raised.value)


def _sessionval_file() -> str:
    import sessionval

    return str(sessionval.__file__)


def test_the_helper_imports_the_callers_sessionval_whatever_the_working_folder(
    tmp_path, monkeypatch
):
    import sessionval

    decoy = tmp_path / "sessionval"  # another package of that name in the working folder
    decoy.mkdir()
    (decoy / "__init__.py").write_text("raise ImportError('the decoy was imported')\n")
    monkeypatch.chdir(tmp_path)
    with BackgroundProcess() as helper:
        assert helper.submit(_sessionval_file).result() == sessionval.__file__
        assert helper.ran_here == 0

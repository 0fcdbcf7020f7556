"""The exit-code contract of the command line (issue 10 item 1, "running out of memory").

0 ok, 1 validation failed, 2 bad input or usage, 3 out of memory (one line naming the
phase and its rows), 70 internal error (one line; the traceback only with ``--debug``
or ``SESSIONVAL_DEBUG=1``), 130 interrupted.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import sessionval.commands.validate as validate_command
import sessionval.evaluation.chunks as chunks
from sessionval import cli
from sessionval.cli import main
from sessionval.errors import OutOfMemory, phase

FAST = '[figures]\nformats = ["png"]\n[run]\nformats = ["csv"]\n'


def _run(study: Path, tmp_path: Path, *extra: str) -> int:
    config = tmp_path / "fast.toml"
    config.write_text(FAST, encoding="utf-8")
    args = ["run", str(study), "--qrels", str(study / "qrels.txt"), "--out", str(tmp_path / "o")]
    return main([*args, "--config", str(config), "--no-progress", *extra])


def _no_memory(*args: object, **kwargs: object) -> None:
    raise MemoryError("Unable to allocate 194. GiB for an array with shape (26000000000,)")


def test_out_of_memory_in_a_kernel_is_one_line_and_exit_3(study_dir, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(chunks, "session_vectors", _no_memory)
    assert _run(study_dir, tmp_path) == cli.EXIT_MEMORY == 3
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    # the study has 6 result rows (3 + 0 + 2 + 1)
    assert lines[0].startswith("error: out of memory while evaluating 6 result rows; ")
    assert "--no-per-position" in lines[0] and "--engine dask" in lines[0]
    assert "Traceback" not in err and "numpy" not in err
    # the previous outputs are not replaced by a half run: nothing was swapped in
    assert not (tmp_path / "o" / "report.html").exists()


def test_out_of_memory_while_loading_names_the_file(study_dir, monkeypatch, capsys):
    monkeypatch.setattr(validate_command, "load_input", _no_memory)
    assert main(["validate", str(study_dir)]) == 3
    err = capsys.readouterr().err
    assert err.startswith(f"error: out of memory while loading and validating {study_dir}; ")
    assert len(err.strip().splitlines()) == 1


def test_a_memory_error_outside_any_phase_still_exits_3(study_dir, monkeypatch, capsys):
    monkeypatch.setattr(validate_command, "summarize", _no_memory)
    monkeypatch.setattr(validate_command, "phase", _null_phase)
    assert main(["validate", str(study_dir)]) == 3
    assert capsys.readouterr().err.startswith("error: out of memory; ")


def _null_phase(*args: object, **kwargs: object) -> object:
    import contextlib

    return contextlib.nullcontext()


def test_the_innermost_phase_names_the_error():
    with pytest.raises(OutOfMemory) as info, phase("running"), phase("sorting", 12, "sessions"):
        raise MemoryError
    assert str(info.value) == "out of memory while sorting 12 sessions"
    assert isinstance(info.value, MemoryError)


def _boom(*args: object, **kwargs: object) -> None:
    raise KeyError("a bug\nover two lines")


def test_an_unexpected_exception_is_an_internal_error(study_dir, monkeypatch, capsys):
    monkeypatch.setattr(validate_command, "summarize", _boom)
    monkeypatch.delenv(cli.DEBUG_ENV, raising=False)
    assert main(["validate", str(study_dir)]) == cli.EXIT_INTERNAL == 70
    err = capsys.readouterr().err
    assert "Traceback" not in err
    first, second = err.strip().splitlines()
    assert first == "internal error: KeyError: 'a bug\\nover two lines'"
    assert "report it" in second and "--debug" in second


@pytest.mark.parametrize("how", ["flag-first", "flag-last", "env"])
def test_debug_shows_the_traceback(study_dir, monkeypatch, capsys, how):
    monkeypatch.setattr(validate_command, "summarize", _boom)
    monkeypatch.delenv(cli.DEBUG_ENV, raising=False)
    args = ["validate", str(study_dir)]
    if how == "flag-first":
        args = ["--debug", *args]
    elif how == "flag-last":
        args = [*args, "--debug"]
    else:
        monkeypatch.setenv(cli.DEBUG_ENV, "1")
    assert main(args) == 70
    err = capsys.readouterr().err
    assert "Traceback (most recent call last)" in err and "_boom" in err
    assert "internal error: KeyError" in err


def test_ctrl_c_exits_130(study_dir, monkeypatch, capsys):
    def interrupt(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(validate_command, "summarize", interrupt)
    assert main(["validate", str(study_dir)]) == 130
    err = capsys.readouterr().err
    assert "aborted" in err and "Traceback" not in err


def test_the_other_codes(study_dir, tmp_path, capsys):
    assert main(["validate", str(study_dir), "--qrels", str(study_dir / "qrels.txt")]) == 0
    assert main(["validate", str(tmp_path / "missing")]) == 2
    assert main(["validate", str(study_dir), "--no-such-option"]) == 2
    (study_dir / "qrels.txt").write_text("A 0 d1 3\n")  # topic B unjudged: validation fails
    assert main(["validate", str(study_dir), "--qrels", str(study_dir / "qrels.txt")]) == 1
    assert "--debug" in (capsys.readouterr().out + _help(capsys))


def _help(capsys: pytest.CaptureFixture[str]) -> str:
    assert main(["--help"]) == 0
    return capsys.readouterr().out


def test_a_file_the_system_refuses_is_exit_2_not_a_bug(study_dir, monkeypatch, capsys):
    def refuse(*args: object, **kwargs: object) -> None:
        raise PermissionError(13, "Permission denied", "/data/out/report.html")

    monkeypatch.setattr(validate_command, "summarize", refuse)
    assert main(["validate", str(study_dir)]) == 2
    assert capsys.readouterr().err == "error: /data/out/report.html: Permission denied\n"


def test_a_closed_pipe_ends_quietly(study_dir, monkeypatch, capsys):
    def closed(*args: object, **kwargs: object) -> None:
        raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(validate_command, "summarize", closed)
    monkeypatch.setattr(sys, "stdout", sys.stdout)  # click wraps it on a closed pipe
    monkeypatch.setattr(sys, "stderr", sys.stderr)
    assert main(["validate", str(study_dir)]) == cli.EXIT_PIPE == 141
    assert capsys.readouterr().err == ""

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
import sessionval.evaluation.lists as run_lists
import sessionval.workflow.job as job
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
    assert lines[0].startswith(
        "error: sessionval run: out of memory while evaluating 6 result rows; "
    )
    assert "--engine dask" in lines[0]
    assert "--no-per-position" not in lines[0]  # the per-position table is not built here
    assert "Traceback" not in err and "numpy" not in err
    # the previous outputs are not replaced by a half run: nothing was swapped in
    assert not (tmp_path / "o" / "report.html").exists()


def test_out_of_memory_while_loading_names_the_file(study_dir, monkeypatch, capsys):
    monkeypatch.setattr(validate_command, "load_input", _no_memory)
    assert main(["validate", str(study_dir)]) == 3
    err = capsys.readouterr().err
    assert err.startswith(
        f"error: sessionval validate: out of memory while loading and validating {study_dir}; "
    )
    assert len(err.strip().splitlines()) == 1


def test_a_memory_error_outside_any_phase_still_exits_3(study_dir, monkeypatch, capsys):
    monkeypatch.setattr(validate_command, "summarize", _no_memory)
    monkeypatch.setattr(validate_command, "phase", _null_phase)
    assert main(["validate", str(study_dir)]) == 3
    err = capsys.readouterr().err
    assert err.startswith("error: sessionval validate: out of memory; free memory")
    assert "--no-per-position" not in err and "--engine" not in err  # run's flags: not here


def test_out_of_memory_in_the_exports_suggests_only_what_was_not_given(
    study_dir, tmp_path, monkeypatch, capsys
):
    """RES-2: the exports fail under --no-figures --tables parquet --no-per-position."""
    monkeypatch.setattr(job, "write_exports_step", _no_memory)
    lean = ("--no-figures", "--tables", "parquet", "--no-per-position")
    assert _run(study_dir, tmp_path, *lean) == 3
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert err.startswith(
        "error: sessionval run: out of memory while writing the exports of 2 sessions; "
    )
    assert "--no-exports" in err
    for given in ("--no-figures", "--tables parquet", "--no-per-position"):
        assert given not in err
    assert "all_formats" not in err  # large tables are already written in fewer formats


def test_out_of_memory_in_the_exports_of_all_formats_suggests_fewer(
    study_dir, tmp_path, monkeypatch, capsys
):
    """Issue 26: a run that asked for every format of every export is told to stop asking."""
    monkeypatch.setattr(job, "write_exports_step", _no_memory)
    config = tmp_path / "all.toml"
    config.write_text(FAST + "all_formats = true\n", encoding="utf-8")
    args = ["run", str(study_dir), "--qrels", str(study_dir / "qrels.txt"), "--no-figures"]
    assert main([*args, "--out", str(tmp_path / "o"), "--config", str(config)]) == 3
    err = capsys.readouterr().err
    assert "--no-exports" in err and "[run] all_formats = false" in err


def test_out_of_memory_in_the_tables_leaves_out_the_flags_given(
    study_dir, tmp_path, monkeypatch, capsys
):
    monkeypatch.setattr(job, "write_tables", _no_memory)
    assert _run(study_dir, tmp_path, "--no-figures", "--tables", "parquet") == 3
    err = capsys.readouterr().err
    assert "out of memory while writing the tables of 6 result rows; " in err
    assert "--no-per-position" in err and "--tables parquet" not in err
    assert "--no-exports" not in err and "--no-figures" not in err


@pytest.mark.parametrize(("reader", "which"), [("read_judgments", "qrels"), ("read_run", "run")])
def test_out_of_memory_reading_evaluates_inputs_names_the_file_read(
    tmp_path, monkeypatch, capsys, reader, which
):
    """RES-3: the read that failed is named, with advice for ``evaluate``, not ``run``'s flags."""
    q, r = tmp_path / "q.txt", tmp_path / "r.run"
    q.write_text("1 0 a 1\n")
    r.write_text("1 Q0 a 1 1.0 t\n")
    monkeypatch.setattr(run_lists, reader, _no_memory)
    assert main(["evaluate", str(q), str(r), "-m", "AP"]) == 3
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    read = q if which == "qrels" else r
    assert err.startswith(
        f"error: sessionval evaluate: out of memory while reading the {which} file {read}; "
    )
    assert "evaluating" not in err
    assert "--no-per-position" not in err and "--no-figures" not in err and "--tables" not in err


def test_out_of_memory_evaluating_a_run_names_both_files(tmp_path, monkeypatch, capsys):
    q, r = tmp_path / "q.txt", tmp_path / "r.run"
    q.write_text("1 0 a 1\n")
    r.write_text("1 Q0 a 1 1.0 t\n")
    monkeypatch.setattr(run_lists, "evaluate_lists", _no_memory)
    assert main(["evaluate", str(q), str(r), "-m", "AP", "-m", "P@1"]) == 3
    err = capsys.readouterr().err
    assert f"out of memory while evaluating {r} against {q}; " in err
    assert "fewer measures at once (-m)" in err and "--no-per-position" not in err


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


def test_out_of_memory_in_the_statistics_names_the_phase_and_the_block(
    study_dir, tmp_path, monkeypatch, capsys
):
    """Issue 26: the blocked comparison of 50k searchers ran out of memory unnamed."""
    monkeypatch.setattr(job, "statistics_step", _no_memory)
    assert _run(study_dir, tmp_path, "--no-figures") == 3
    err = capsys.readouterr().err
    assert "out of memory while comparing the systems over 2 sessions; " in err
    assert '[statistics] block = "searcher"' in err and "--no-exports" not in err
    config = tmp_path / "searcher.toml"
    config.write_text(FAST + '[statistics]\nblock = "searcher"\n', encoding="utf-8")
    args = ["run", str(study_dir), "--qrels", str(study_dir / "qrels.txt"), "--no-figures"]
    assert main([*args, "--out", str(tmp_path / "o2"), "--config", str(config)]) == 3
    assert "block" not in capsys.readouterr().err  # already given: not advised

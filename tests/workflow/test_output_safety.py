"""Round 3, items 4 and 6 (OS-2, OS-3): refused writes name the file; killed runs leave nothing.

Each test builds its study in ``tmp_path``; a full disk or a file-size limit is simulated
by making the writer raise what the system or the library raises.
"""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pyreadstat
import pytest

import sessionval.io.parquet_layout as parquet_layout
from sessionval.cli import main
from sessionval.errors import OutputError, WriteError, writing
from sessionval.io.staging import LOCK, OWNER, STAGING_PREFIX, remove_stale_staging
from sessionval.workflow.outputs import RunOutputs
from tests import builders


def _study(folder: Path) -> Path:
    folder.mkdir(parents=True)
    sessions = [
        builders.make_session(f"s{k}", user=f"u{k % 2}", system=f"S{k % 2}", topic="A")
        for k in range(4)
    ]
    builders.write_jsonl(folder / "sessions.jsonl", sessions)
    (folder / "qrels.txt").write_text("A 0 d1 3\nA 0 d2 0\nA 0 d3 1\n")
    return folder


def _run(study: Path, out: Path) -> int:
    args = ["run", str(study), "--qrels", str(study / "qrels.txt"), "--out", str(out)]
    return main([*args, "--no-figures", "--no-progress"])


def _dead_pid() -> int:
    """The pid of a process that has ended."""
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def _staging(out: Path, pid: int | None) -> Path:
    """A staging folder as a run leaves it when killed (with its owner record, or none)."""
    d = out / f"{STAGING_PREFIX}killed{pid}"
    (d / "tables").mkdir(parents=True)
    (d / "tables" / "per_session.csv").write_text("half a tab")
    if pid is not None:
        record = {"pid": pid, "host": os.uname().nodename, "started": 0.0, "command": "run"}
        (d / OWNER).write_text(json.dumps(record))
    return d


def _error_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    return err[0]


# ---- OS-2: a write the system or a library refuses names the file, exit 2


def test_readstat_error_in_the_spss_export_names_the_file(tmp_path, monkeypatch, capsys):
    """OS-2 as reported: ``ulimit -f`` made pyreadstat raise ReadstatError (exit 70)."""
    study = _study(tmp_path / "study")
    out = tmp_path / "out"

    def refused(*args: object, **kwargs: object) -> None:
        raise pyreadstat.ReadstatError("Unable to write data")

    monkeypatch.setattr(pyreadstat, "write_sav", refused)
    assert _run(study, out) == 2
    line = _error_line(capsys)
    # named where it was going, not in the staging folder
    assert line.startswith(f"error: {out}/exports/") and ".sav: cannot write: " in line
    assert "Unable to write data" in line and STAGING_PREFIX not in line
    assert not out.exists() or not [p for p in out.iterdir() if p.name != ".sessionval-run.json"]


@pytest.mark.parametrize(
    ("code", "advice"), [(errno.EFBIG, "ulimit -f"), (errno.ENOSPC, "free space")]
)
def test_a_full_disk_in_a_table_names_the_file(tmp_path, monkeypatch, capsys, code, advice):
    study = _study(tmp_path / "study")
    out = tmp_path / "out"

    def refused(self: pd.DataFrame, *args: object, **kwargs: object) -> None:
        raise OSError(code, os.strerror(code))  # as pyarrow raises it: no file name

    monkeypatch.setattr(pd.DataFrame, "to_parquet", refused)
    assert _run(study, out) == 2
    line = _error_line(capsys)
    assert line.startswith(f"error: {out}/") and ".parquet: cannot write: " in line
    assert os.strerror(code) in line and advice in line and STAGING_PREFIX not in line


def test_convert_names_its_file_not_the_temporary_one(tmp_path, monkeypatch, capsys):
    study = _study(tmp_path / "study")
    out = tmp_path / "flat" / "table.parquet"

    def refused(*args: object, **kwargs: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(parquet_layout.pq, "ParquetWriter", refused)
    assert main(["convert", str(study), "--to", "parquet", "--out", str(out)]) == 2
    assert _error_line(capsys).startswith(f"error: {out}: cannot write: No space left on device")
    assert list(out.parent.iterdir()) == []


def test_writing_leaves_other_errors_alone():
    with pytest.raises(ValueError, match="a bug"), writing("x.csv"):
        raise ValueError("a bug")
    with pytest.raises(WriteError) as info, writing("x.csv"):
        raise PermissionError(errno.EACCES, "Permission denied")
    assert str(info.value).startswith("x.csv: cannot write: Permission denied; ")


# ---- OS-3: the staging folders of killed runs, two runs at once


def test_a_killed_runs_staging_folder_is_removed_by_the_next_run(tmp_path):
    study = _study(tmp_path / "study")
    out = tmp_path / "out"
    assert _run(study, out) == 0
    killed = _staging(out, _dead_pid())
    foreign = _staging(out, None)  # no owner record: not known to be ours, kept
    alive = _staging(out, os.getpid())  # its owner still runs, kept
    assert _run(study, out) == 0
    assert not killed.exists()
    assert foreign.is_dir() and alive.is_dir()
    assert not (out / LOCK).exists()


def test_stale_staging_of_another_machine_is_kept(tmp_path):
    d = _staging(tmp_path, _dead_pid())
    record = json.loads((d / OWNER).read_text())
    (d / OWNER).write_text(json.dumps({**record, "host": "elsewhere.example"}))
    assert remove_stale_staging(tmp_path) == []
    assert d.is_dir()


def test_the_owner_record_is_not_an_output(tmp_path):
    outputs = RunOutputs(tmp_path / "out")
    assert json.loads((outputs.root / OWNER).read_text())["pid"] == os.getpid()
    outputs.write_text("report.html", "r")
    outputs.finish()
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        ".sessionval-run.json",
        "report.html",
    ]


def test_a_second_writer_of_one_out_gets_a_clear_error(tmp_path, capsys):
    out = tmp_path / "out"
    first = RunOutputs(out)
    with pytest.raises(
        OutputError, match=f"--out {out}: another sessionval run .pid {os.getpid()}"
    ):
        RunOutputs(out)
    study = _study(tmp_path / "study")
    assert _run(study, out) == 2
    assert "is writing there now; wait for it to finish or choose another --out" in (
        _error_line(capsys)
    )
    first.discard()  # the lock is released and its file removed
    assert not (out / LOCK).exists()
    assert _run(study, out) == 0


def test_the_lock_of_a_killed_run_is_taken_over(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    stale = {"pid": _dead_pid(), "host": os.uname().nodename, "started": 0.0, "command": "run"}
    (out / LOCK).write_text(json.dumps(stale))  # left by a kill -9: nobody holds it
    outputs = RunOutputs(out)
    assert json.loads((out / LOCK).read_text())["pid"] == os.getpid()
    outputs.discard()
    assert not (out / LOCK).exists()

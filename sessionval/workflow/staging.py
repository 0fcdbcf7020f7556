"""The staging folder's owner and the output folder's lock.

A command writes into ``.sessionval-staging-*`` inside its output folder
(:class:`~sessionval.workflow.outputs.RunOutputs`).  Two things keep that safe
when commands are killed or run at once:

* **An owner record** (:data:`OWNER`, JSON: pid, host, start time, command) is written
  into each staging folder as it is made.  A folder killed mid-run (``kill -9``, a lost
  session) is removed by the next command writing into the same folder
  (:func:`remove_stale_staging`), but only when it carries such a record (it is one of
  ours) and its owner is no longer running on this machine.
* **A lock** (:class:`OutputLock`, the file :data:`LOCK` in the output folder, held with
  ``flock`` for the whole command and removed at its end): a second command writing
  into the same folder at the same time stops at once with
  :class:`~sessionval.errors.OutputError` naming the process that holds it.  The
  system releases the lock of a process that dies, so the lock of a killed command is
  simply taken over by the next one.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import socket
import tempfile
import time
from pathlib import Path
from typing import Any, Final

from ..errors import OutputError

__all__ = [
    "LOCK",
    "OWNER",
    "STAGING_PREFIX",
    "OutputLock",
    "make_staging",
    "owner_alive",
    "remove_stale_staging",
]

#: Prefix of the staging folder a command writes into before its files are moved into place.
STAGING_PREFIX: Final = ".sessionval-staging-"
#: The owner record inside each staging folder (never moved into the output folder).
OWNER: Final = ".sessionval-owner.json"
#: The lock file of an output folder while a command writes into it.
LOCK: Final = ".sessionval-lock"


def _record(command: str) -> dict[str, Any]:
    return {
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "started": time.time(),
        "command": command,
    }


def _describe(record: dict[str, Any] | None) -> str:
    if not record:
        return "another sessionval"
    started = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(float(record.get("started", 0))))
    return (
        f"another sessionval {record.get('command', '')} (pid {record.get('pid')} on "
        f"{record.get('host')}, started {started})"
    ).replace("  ", " ")


def _read_record(path: Path) -> dict[str, Any] | None:
    """The JSON record in ``path``, or ``None`` when it is missing, a link or not a record."""
    try:
        if path.is_symlink():
            return None
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    ok = isinstance(record, dict) and isinstance(record.get("pid"), int)
    return record if ok else None


def owner_alive(record: dict[str, Any]) -> bool:
    """Whether the process of an owner record may still be running.

    A record from another machine is taken as alive: its process cannot be checked here.
    """
    if record.get("host") != socket.gethostname():
        return True
    try:
        os.kill(int(record["pid"]), 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process with that pid
        return True
    return True


def make_staging(folder: Path, *, command: str) -> Path:
    """A new staging folder in ``folder``, its owner record written first thing."""
    root = Path(tempfile.mkdtemp(prefix=STAGING_PREFIX, dir=folder))
    (root / OWNER).write_text(json.dumps(_record(command)) + "\n", encoding="utf-8")
    return root


def remove_stale_staging(folder: Path) -> list[Path]:
    """Remove the staging folders in ``folder`` left by commands that are no longer running.

    Only a real folder (not a link) named ``.sessionval-staging-*`` holding an owner
    record whose process is gone is removed; anything else is left alone.

    Returns
    -------
    list of pathlib.Path
        The folders removed.
    """
    removed = []
    for d in sorted(folder.glob(STAGING_PREFIX + "*")):
        if d.is_symlink() or not d.is_dir():
            continue
        record = _read_record(d / OWNER)
        if record is None or owner_alive(record):
            continue
        shutil.rmtree(d, ignore_errors=True)
        removed.append(d)
    return removed


class OutputLock:
    """An exclusive lock on an output folder while one command writes into it.

    Parameters
    ----------
    folder
        The output folder (it exists).
    name
        The lock file's name in it (:data:`LOCK`; one per file for commands that
        write named files side by side).
    """

    def __init__(self, folder: Path, name: str = LOCK) -> None:
        self.path = folder / name
        self._fd: int | None = None

    def acquire(self, *, command: str, label: str = "--out") -> None:
        """Take the lock, or stop with :class:`OutputError` when another command holds it.

        A lock file left by a process that died is not held by anyone (the system
        released it): it is taken over.
        """
        for _ in range(5):
            try:
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
            except OSError as exc:
                raise OutputError(
                    f"{label} {self.path.parent}: cannot create the lock {self.path} "
                    f"({exc.strerror or exc}); remove it if it is a link, or choose another "
                    f"{label}"
                ) from exc
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = _read_record(self.path)
                os.close(fd)
                raise OutputError(
                    f"{label} {self.path.parent}: {_describe(holder)} is writing there now; "
                    f"wait for it to finish or choose another {label}"
                ) from None
            # its last holder may have removed the file between our open and our lock
            with contextlib.suppress(FileNotFoundError):
                if os.fstat(fd).st_ino == os.stat(self.path, follow_symlinks=False).st_ino:
                    os.ftruncate(fd, 0)
                    os.write(fd, (json.dumps(_record(command)) + "\n").encode())
                    self._fd = fd
                    return
            os.close(fd)
        raise OutputError(
            f"{label} {self.path.parent}: other sessionval commands keep taking its lock; "
            f"wait for them to finish or choose another {label}"
        )

    def release(self) -> None:
        """Remove the lock file and let go of the lock (no-op when not held)."""
        fd, self._fd = self._fd, None
        if fd is None:
            return
        try:
            self.path.unlink(missing_ok=True)
        finally:
            os.close(fd)

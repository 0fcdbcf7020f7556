"""The one output-staging layer: files written elsewhere first, moved into place complete.

Every writer of sessionval writes plain files into the paths it is given; atomicity
is this module's.  A :class:`StagingFolder` is a hidden ``.sessionval-staging-*``
folder inside the output folder (same file system, so the final moves are atomic
renames): the files are written there, then :meth:`StagingFolder.move` renames each
into place once all are complete, after :meth:`StagingFolder.conflicts` has found
none of the targets to be a folder, a symbolic link or behind one; on failure
:meth:`StagingFolder.discard` removes the staging folder and the older files stay as
they were.  Two users:

* the Python-API writers (``write_jsonl``, ``write_flat``, ``write_partitions``,
  ``synth.write_study``) wrap themselves in :func:`staged`;
* the commands' output folders, :class:`~sessionval.workflow.outputs.RunOutputs`,
  which add a manifest, the previous run's files and the inputs on top.

Staging nests: a writer called with a path inside a staging folder already open in
this process (a command staging its ``--out``) writes there plainly, so a file is
never staged twice.

Two more things keep the staging folders safe when commands are killed or run at
once:

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
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from ..errors import OutputError, WriteError, write_error

__all__ = [
    "LOCK",
    "OWNER",
    "STAGING_PREFIX",
    "OutputLock",
    "Stage",
    "StagingFolder",
    "inside",
    "make_staging",
    "owner_alive",
    "remove_stale_staging",
    "staged",
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


#: The staging folders open in this process (resolved): a path inside one is staged already.
_OPEN: set[Path] = set()


def inside(root: Path, rel: str) -> Path | None:
    """``root / rel`` when it stays inside ``root`` without passing through a link, else None."""
    parts = Path(rel).parts
    if not parts or Path(rel).is_absolute() or ".." in parts:
        return None
    p = root
    for part in parts:
        p = p / part
        if p.is_symlink():
            return None
    return p


def _staged_already(path: Path) -> bool:
    """Whether ``path`` lies in a staging folder open in this process."""
    resolved = path.resolve()
    return any(resolved.is_relative_to(root) for root in _OPEN)


class StagingFolder:
    """A staging folder inside ``out``: write into :attr:`root`, then :meth:`move` into ``out``.

    Parameters
    ----------
    out
        The output folder (created).
    command
        Who writes, for the owner record (and the lock).
    lock
        The name of the lock file taken in ``out`` for the folder's lifetime
        (:class:`OutputLock`); ``None``: none.
    label
        The option that names ``out``, for the messages.

    Attributes
    ----------
    root
        The staging folder.
    """

    def __init__(
        self, out: Path, *, command: str, lock: str | None = LOCK, label: str = "--out"
    ) -> None:
        self.out = out
        out.mkdir(parents=True, exist_ok=True)  # --out itself may be a link the user made
        self._lock = OutputLock(out, lock) if lock is not None else None
        if self._lock is not None:
            self._lock.acquire(command=command, label=label)
        try:
            remove_stale_staging(out)
            self.root = make_staging(out, command=command)
        except BaseException:
            self.release()
            raise
        self._resolved = self.root.resolve()
        _OPEN.add(self._resolved)

    def files(self) -> list[str]:
        """Every file under :attr:`root` (relative, sorted), the owner record left out."""
        owner = self.root / OWNER
        return sorted(
            p.relative_to(self.root).as_posix()
            for p in self.root.rglob("*")
            if p.is_file() and not p.is_symlink() and p != owner
        )

    def conflicts(
        self, files: Iterable[str], judge: Callable[[str, Path], str | None] | None = None
    ) -> list[str]:
        """Why files cannot be moved into ``out`` (nothing may be moved if any).

        A target behind a symbolic link, a folder or a link is never replaced; ``judge``
        adds the caller's own reasons for an existing target (an input, a file another
        program wrote), given its relative and absolute path.
        """
        problems = []
        for rel in files:
            target = self.out / rel
            folder = Path(rel).parent
            if Path(rel).is_absolute() or ".." in Path(rel).parts:
                problems.append(f"{target}: lies outside {self.out}")
            elif folder.parts and inside(self.out, folder.as_posix()) is None:
                problems.append(f"{target}: a folder on the way is a symbolic link")
            elif target.is_symlink():
                problems.append(f"{target}: is a symbolic link")
            elif target.is_dir():
                problems.append(f"{target}: is a folder")
            elif judge is not None and target.exists():
                why = judge(rel, target)
                if why is not None:
                    problems.append(f"{target}: {why}")
        return problems

    def move(self, files: Iterable[str]) -> None:
        """Rename each staged file to its place in ``out`` (folders made as needed)."""
        for rel in files:
            target = self.out / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(self.root / rel, target)

    def moved(self, exc: BaseException) -> BaseException:
        """``exc`` naming the file where it was going when it names a staged one."""
        return exc.moved(self.root, self.out) if isinstance(exc, WriteError) else exc

    def release(self) -> None:
        """Let go of the lock (no-op when none is held)."""
        if self._lock is not None:
            self._lock.release()

    def discard(self) -> None:
        """Remove the staging folder (what is left in it) and release the lock."""
        try:
            _OPEN.discard(getattr(self, "_resolved", Path()))
            root = getattr(self, "root", None)
            if root is not None and root.is_dir():
                shutil.rmtree(root, ignore_errors=True)
        finally:
            self.release()


@dataclass(frozen=True)
class Stage:
    """Where a staged writer writes (:attr:`root`) and where its files go (:attr:`out`)."""

    root: Path
    out: Path

    def final(self, path: Path) -> Path:
        """The place of a file written at ``path`` under :attr:`root` once moved."""
        return self.out / path.relative_to(self.root)


@contextlib.contextmanager
def staged(out: Path, *, command: str, targets: Sequence[Path] = ()) -> Iterator[Stage]:
    """Stage a Python-API writer's files in ``out``: write under ``.root``, moved in on success.

    The block writes its files under the stage's ``root`` with the relative names they
    get in ``out``; when it ends without error every file there is renamed into place
    (none when a target is a folder, a symbolic link or behind one:
    :class:`~sessionval.errors.OutputError`, checked for ``targets`` before the block
    too).  An error or Ctrl-C leaves ``out`` as it was; a refused write
    (:class:`~sessionval.errors.WriteError`) names the file where it was going.
    Inside a staging folder already open in this process the block writes into
    ``out`` itself: the caller's staging moves the files.

    Parameters
    ----------
    out
        The output folder (created).
    command
        Who writes (the staging folder's owner record).
    targets
        The files the writer will write (checked before it starts).

    Yields
    ------
    Stage
    """
    if _staged_already(out):
        yield Stage(out, out)
        return
    folder = StagingFolder(out, command=command, lock=None)

    def refuse(files: Iterable[str]) -> None:
        problems = folder.conflicts(files)
        if problems:
            raise OutputError(
                f"not writing into {out}: sessionval does not write through links nor "
                f"replace folders; remove them or choose another output: {'; '.join(problems)}"
            )

    try:
        refuse(t.relative_to(out).as_posix() for t in targets)
        stage = Stage(folder.root, out)
        try:
            yield stage
        except Exception as exc:
            err = folder.moved(exc)
            if err is not exc:
                raise err from exc.__cause__
            raise
        files = folder.files()
        refuse(files)
        try:
            folder.move(files)
        except OSError as exc:
            raise (write_error(exc, out) or exc) from exc
    finally:
        folder.discard()

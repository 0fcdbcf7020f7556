"""The run's output folder: written elsewhere first, swapped in complete, confined to ``--out``.

A run writes every file into a hidden staging folder inside ``--out``
(``.sessionval-staging-*``, on the same file system) and, only when the whole run
succeeded, :meth:`RunOutputs.finish` moves each file into place with an atomic
rename, removes the files of the previous run that this run did not write again,
and writes the manifest (``.sessionval-run.json``) last.  So:

* an interrupted or failed run (bad configuration, a figure cell unknown to the
  study, Ctrl-C) leaves the previous run's outputs as they were, never a truncated
  file beside an older complete report (:meth:`RunOutputs.discard` removes the
  staging folder);
* nothing outside ``--out`` is touched: manifest entries that are absolute, climb
  out with ``..``, pass through a symbolic link or name a symbolic link are
  ignored, and no file is written through a linked folder;
* a file this run would overwrite must be the previous run's (listed in its
  manifest) unless ``force`` is given;
* an output never is, contains or lies inside an input of the command (the study,
  the ``--config`` file, the qrels, …), even with ``force``: refused before any work
  (:func:`~sessionval.workflow.overlap.refuse_overlap`), and a file that is an input
  under another name (a hard link) is never replaced nor removed;
* a file the system or a library refuses to write (disk full, file-size limit)
  ends the command with :class:`~sessionval.errors.WriteError` naming the file where
  it was going (:func:`~sessionval.errors.writing`);
* one command at a time writes into a folder (:class:`~sessionval.io.staging.OutputLock`),
  and the staging folders of killed commands are removed by the next one
  (:func:`~sessionval.io.staging.remove_stale_staging`).

The staging folder itself, the moves and the link and folder checks are the one
staging layer, :class:`~sessionval.io.staging.StagingFolder`, which the Python-API
writers use too; this module adds the manifest, the previous run and the inputs.

The other commands that write a folder or a file (``convert``, ``synth``, ``meta
--out``) use the same staging and checks through :func:`staged_outputs`, each with
its own manifest (:data:`MANIFESTS`), so one command never removes another's files.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import Final, Self

import pandas as pd

from ..errors import OutputError, WriteError, writing
from ..io.staging import LOCK, STAGING_PREFIX, StagingFolder, inside
from ..output.background import BackgroundWork
from ..output.csv_writer import write_csv
from ..output.export import neutralise_formulas
from ..output.figure_writer import FigureWriter
from ..output.write_thread import BackgroundWrites
from .overlap import input_file_ids, refuse_overlap

__all__ = [
    "MANIFEST",
    "MANIFESTS",
    "PARQUET_ROW_GROUP",
    "STAGING_PREFIX",
    "RunOutputs",
    "staged_file",
    "staged_outputs",
]

#: The manifest of the files a run wrote, relative to the output folder.
MANIFEST: Final = ".sessionval-run.json"
#: The manifest of each command that writes a folder (``run``'s is :data:`MANIFEST`).
MANIFESTS: Final = {
    "run": MANIFEST,
    "convert": ".sessionval-convert.json",
    "synth": ".sessionval-synth.json",
    "meta": ".sessionval-meta.json",
    "evaluate": ".sessionval-evaluate.json",
}
_SHOW: Final = 10
#: Rows of a Parquet row group as pandas' ``to_parquet`` writes them (Arrow's default).
PARQUET_ROW_GROUP: Final = 1 << 20


class RunOutputs:
    """The files of one run: staged in ``root``, moved into ``out`` by :meth:`finish`.

    Parameters
    ----------
    out
        The output folder (created).
    force
        Overwrite files that no previous run of sessionval wrote.
    inputs
        Every file and folder the command reads: no output may be, contain or lie
        inside one (:func:`~sessionval.workflow.overlap.refuse_overlap`), even with
        ``force``; their files are never overwritten nor removed.
    csv_safe
        Neutralise spreadsheet formulas in the CSV cells written with :meth:`write_frame`.
    manifest
        Name of the manifest listing the files written (``None``: none is read or
        written, and every file may be replaced but inputs and links: a file the user
        named).
    remove_stale
        Remove the files of the previous manifest that this run did not write again
        (False: keep them and list them with the new ones).
    targets
        The files the command names, when it writes named files into ``out`` rather
        than the folder itself (``convert --out FILE``): the inputs are checked
        against these.
    command
        The command writing, for the owner record and the lock.
    label
        The option that names the outputs, for the messages.

    Attributes
    ----------
    root
        Where the steps write (the staging folder).
    written
        Files written so far, relative to ``root`` (and to ``out``).
    previous
        Files of the previous run (its manifest), relative to ``out``.
    background
        Where figures and the Stata and SPSS exports are written
        (:class:`~sessionval.output.background.BackgroundWork`): here, or in the run's
        background process once the run starts it; :meth:`finish` waits for them all.
    figures
        The figures' writer on ``background``
        (:class:`~sessionval.output.figure_writer.FigureWriter`).
    writes
        The run's writer thread (:class:`~sessionval.output.write_thread.BackgroundWrites`):
        CSV and Parquet files handed to it are encoded while the stages after the one
        that wrote them run; :meth:`finish` waits for them all (a failed write fails
        the command there, naming its file).
    """

    def __init__(
        self,
        out: Path,
        *,
        force: bool = False,
        inputs: Iterable[Path | None] = (),
        csv_safe: bool = False,
        manifest: str | None = MANIFEST,
        remove_stale: bool = True,
        targets: Sequence[Path] | None = None,
        command: str = "run",
        label: str = "--out",
    ) -> None:
        self.out = out
        self.manifest = manifest
        self.remove_stale = remove_stale
        self.force = force or manifest is None
        self.csv_safe = csv_safe
        self.inputs = tuple(p for p in inputs if p is not None)
        refuse_overlap(targets if targets is not None else [out], self.inputs, label=label)
        # an input is recognised by its file, whatever the path or link that names it
        self._input_ids = input_file_ids(self.inputs)
        if out.exists() and not out.is_dir():
            raise OutputError(f"{label} {out}: exists and is not a folder")
        # one lock file per named output, so commands writing other files beside it may run
        lock_name = LOCK + (f"-{targets[0].name}" if targets else "")
        self._staging = StagingFolder(out, command=command, lock=lock_name, label=label)
        self.root = self._staging.root
        self.previous = self._read_manifest()
        self.written: list[str] = []
        # every figure and background step goes through it: made here, or in the run's
        # background process once the run starts one
        self.background = BackgroundWork()
        self.figures = FigureWriter(self.background)
        # one writer thread for the whole run: files written in the order handed over
        # (the exports copy tables/' files after they are written), waited for by finish
        self.writes = BackgroundWrites()

    # ---- before the run
    def _is_input(self, path: Path) -> bool:
        """Whether ``path`` is one of the run's input files (the same file, any name)."""
        try:
            st = path.stat()
        except OSError:
            return False
        return (st.st_dev, st.st_ino) in self._input_ids

    def _read_manifest(self) -> list[str]:
        if self.manifest is None:
            return []
        path = self.out / self.manifest
        if path.is_symlink() or not path.is_file():
            return []
        try:
            files = json.loads(path.read_text(encoding="utf-8"))["files"]
        except (ValueError, KeyError, TypeError, OSError):
            return []
        return [f for f in files if isinstance(f, str)] if isinstance(files, list) else []

    @property
    def has_previous_run(self) -> bool:
        """Whether the folder holds the outputs of an earlier run (a manifest)."""
        return bool(self.previous)

    # ---- writing (into the staging folder)
    def path(self, rel: str) -> Path:
        """``root / rel``, its folder created."""
        p = self.root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        return p

    def add(self, *paths: Path) -> None:
        """Record files written (absolute paths under ``root``)."""
        for p in paths:
            self.written.append(p.relative_to(self.root).as_posix())

    def write_text(self, rel: str, text: str) -> Path:
        """Write UTF-8 text to ``root / rel`` and record it."""
        p = self.path(rel)
        with writing(p):
            p.write_text(text, encoding="utf-8")
        self.add(p)
        return p

    def collect(self) -> list[str]:
        """Record every file under ``root`` not recorded yet (what a writer made there)."""
        known = set(self.written)
        self.written += [f for f in self._staging.files() if f not in known]
        return self.written

    def write_parquet_blocks(self, rel: str, blocks: Iterable[pd.DataFrame]) -> Path:
        """Write the blocks of rows of one table as one Parquet file, one block at a time.

        The file is ``pd.concat(blocks).to_parquet(index=False)``'s, byte for byte, when
        every block but the last holds a multiple of :data:`PARQUET_ROW_GROUP` rows (the
        row groups pandas writes) and the blocks share their dtypes and ``attrs``; the
        memory is one block's, not the table's.  At least one block (it may be empty).
        """
        import pyarrow as pa
        import pyarrow.parquet as pq

        p = self.path(rel)
        with writing(p):
            writer: pq.ParquetWriter | None = None
            try:
                # one block at a time: encoding a block on the writer thread while the next
                # is built held two (200k sessions: tables peak 2,507-2,565 MB against
                # 2,445-2,469, and no faster: the run's writer thread has other files)
                for block in blocks:
                    table = pa.Table.from_pandas(block, preserve_index=False)
                    if block.attrs:  # as pandas' to_parquet keeps them
                        meta = {
                            **(table.schema.metadata or {}),
                            b"PANDAS_ATTRS": json.dumps(block.attrs),
                        }
                        table = table.replace_schema_metadata(meta)
                    del block  # the DataFrame, as large as its Arrow table
                    if writer is None:
                        writer = pq.ParquetWriter(p, table.schema, compression="snappy")
                    writer.write_table(table)
                    del table
            finally:
                if writer is not None:
                    writer.close()
        self.add(p)
        return p

    def write_frame(
        self,
        rel: str,
        table: pd.DataFrame,
        *,
        background: BackgroundWrites | None = None,
        record: bool = True,
    ) -> Path:
        """Write a table as CSV or Parquet (by the suffix of ``rel``) and record it.

        With ``background`` the file is written on its thread (the same bytes) from the
        table as it is now (a later change of it is not written): it is complete once
        the caller leaves the :class:`BackgroundWrites` block (or, the run's
        :attr:`writes`, when :meth:`finish` closes it).
        ``record=False``: the caller records it (:meth:`add`), where it belongs in
        :attr:`written`'s order.
        """
        p = self.path(rel)
        if background is None:
            self._write_frame(p, table)
        else:
            # a shallow copy (no data copied): the writer's own frame, so neither thread's
            # pandas bookkeeping (a block consolidated, a column set later) reaches the other
            background.submit(self._write_frame, p, table.copy(deep=False))
        if record:
            self.add(p)
        return p

    def _write_frame(self, p: Path, table: pd.DataFrame) -> None:
        with writing(p):
            if p.suffix == ".parquet":
                table.to_parquet(p, index=False)
            else:
                write_csv(neutralise_formulas(table) if self.csv_safe else table, p)

    # ---- the swap
    def _conflicts(self, files: Sequence[str]) -> list[str]:
        """Why a staged file cannot be moved into place (nothing is moved if any)."""
        previous = set(self.previous)

        def judge(rel: str, target: Path) -> str | None:
            if self._is_input(target):
                return "is an input of this run"
            if rel not in previous and not self.force:
                return "exists and no earlier sessionval run wrote it"
            return None

        return self._staging.conflicts(files, judge)

    def finish(self) -> list[str]:
        """Move the staged files into ``out``, remove the stale ones, write the manifest last.

        Returns
        -------
        list of str
            The files of the previous run removed (not written again).

        Raises
        ------
        OutputError
            A file would overwrite one that no earlier run wrote (without ``force``),
            an input of the run, a folder or a link: nothing is moved, the previous
            outputs stay.
        """
        self.writes.close()  # every file written before one is moved
        self.background.close()
        try:
            problems = self._conflicts(self.written)
            if problems:
                more = f" (and {len(problems) - _SHOW} more)" if len(problems) > _SHOW else ""
                raise OutputError(
                    f"not writing into {self.out}: the previous outputs are unchanged; "
                    "use --force to overwrite files sessionval did not write (inputs and "
                    "links are never overwritten), or choose another --out:\n"
                    + "\n".join(f"  {p}" for p in problems[:_SHOW])
                    + more
                )
            self._staging.move(self.written)
            if self.remove_stale:
                removed, listed = self._remove_stale(set(self.written)), set(self.written)
            else:  # the previous files stay: list those still there with the new ones
                removed, listed = [], set(self.written) | set(self._kept())
            if self.manifest is not None:
                self._write_manifest(self.manifest, listed)
        finally:
            self.discard()
        return removed

    def _kept(self) -> list[str]:
        """The previous manifest's entries that are files inside ``out``."""
        return [rel for rel in self.previous if (p := inside(self.out, rel)) and p.is_file()]

    def _remove_stale(self, keep: set[str]) -> list[str]:
        removed = []
        for rel in self.previous:
            if rel in keep:
                continue
            p = inside(self.out, rel)
            if p is None or not p.is_file() or self._is_input(p):
                continue  # outside --out, through or at a link, gone, or an input
            p.unlink()
            removed.append(rel)
        out = self.out.resolve()
        for d in sorted({(self.out / r).parent for r in removed}, reverse=True):
            if d.resolve() != out and not d.is_symlink() and d.is_dir() and not any(d.iterdir()):
                d.rmdir()
        return removed

    def finish_failed(self, text: str) -> Path:
        """Record a run that failed validation, keeping the previous run's outputs.

        In a folder without an earlier run the problems go to ``validation.txt`` (the
        manifest lists it); otherwise to ``validation-failed.txt``, added to the earlier
        manifest so the next successful run removes it, and every other file stays.

        Returns
        -------
        pathlib.Path
            The file the problems were written to.
        """
        name = "validation-failed.txt" if self.has_previous_run else "validation.txt"
        self.written = []
        self.write_text(name, text)
        keep = list(self.previous)
        self.previous = [*keep, name] if keep else []
        try:
            if not self._conflicts([name]):
                self._staging.move([name])
                self._write_manifest(MANIFEST, {*keep, name})
        finally:
            self.discard()
        return self.out / name

    def _write_manifest(self, name: str, files: Iterable[str]) -> None:
        """The manifest, staged then renamed into ``out`` (the last file a command moves)."""
        manifest = self.root / name
        with writing(self.out / name):
            manifest.write_text(json.dumps({"files": sorted(files)}, indent=1) + "\n", "utf-8")
        self._staging.move([name])

    def discard(self) -> None:
        """Remove the staging folder (what a failed or interrupted run wrote); release the lock."""
        self._staging.discard()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Discard the staging folder; a refused write names the file where it was going."""
        # nothing may still be writing into a folder discarded
        self.writes.cancel()
        self.background.kill()
        self.discard()
        if isinstance(exc, WriteError):
            moved = self._staging.moved(exc)
            if moved is not exc:
                raise moved from exc.__cause__

    def __del__(self) -> None:
        # a RunOutputs dropped without discard (a library caller) must not keep the folder locked
        staging = getattr(self, "_staging", None)
        if staging is not None:
            staging.release()


@contextmanager
def staged_outputs(
    out: Path,
    *,
    command: str | None,
    force: bool = False,
    inputs: Iterable[Path | None] = (),
    remove_stale: bool = True,
    targets: Sequence[Path] | None = None,
    label: str = "--out",
) -> Iterator[RunOutputs]:
    """Stage a command's output folder: write into ``.root``, swapped in when the block succeeds.

    Every file the block leaves under ``outputs.root`` is moved into ``out`` as
    :meth:`RunOutputs.finish` moves a run's (atomic renames, the manifest last, nothing
    outside ``out``, no input overwritten, no foreign file without ``force``); an
    exception in the block (or Ctrl-C) leaves ``out`` as it was.

    Parameters
    ----------
    out
        The output folder.
    command
        The command writing (its manifest: :data:`MANIFESTS`); ``None``: files the user
        named, no manifest (they may be replaced, but never an input or a link).
    force, inputs, remove_stale, targets, label
        As :class:`RunOutputs`.

    Yields
    ------
    RunOutputs
        Write into its ``root``.
    """
    with RunOutputs(
        out,
        force=force,
        inputs=inputs,
        manifest=None if command is None else MANIFESTS[command],
        remove_stale=remove_stale and command is not None,
        targets=targets,
        command=command or "",
        label=label,
    ) as outputs:
        yield outputs
        outputs.collect()
        outputs.finish()


@contextmanager
def staged_file(
    path: Path,
    *,
    inputs: Iterable[Path | None] = (),
    beside: Iterable[Path | None] = (),
    label: str = "--out",
) -> Iterator[Path]:
    """Write one named file (and files beside it) under a temporary name; rename on success.

    The block writes to the path yielded (in a staging folder beside ``path``); the
    files it writes there go beside ``path``.  Neither ``path`` nor the files
    ``beside`` it may be, or lie inside, an input (refused before any work, even when
    they do not exist yet); a link is never replaced; an exception leaves ``path`` as
    it was.
    """
    targets = [path, *(p for p in beside if p is not None)]
    with staged_outputs(
        path.parent, command=None, inputs=inputs, targets=targets, label=label
    ) as outputs:
        yield outputs.root / path.name

"""Inputs are never outputs: the one check every command that writes runs before any work.

A command names what it reads (the study folder or file, the qrels, the runs, the
``--config`` file, the files of format options) and what it writes (an output folder,
or the files it names).  :func:`refuse_overlap` compares their real paths (links and
``..`` resolved, hard links recognised by their file) and refuses an output that *is*
an input, *contains* one (an output folder holding an input) or *lies inside* an input
folder, with :class:`~sessionval.errors.OutputError` (exit code 2) naming both paths.
``--force`` does not change this: it lets a command replace an earlier output, never
what it reads.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Final, Literal

from ..errors import OutputError

__all__ = [
    "input_file_ids",
    "overlap",
    "refuse_overlap",
]

Overlap = Literal["is", "contains", "lies inside"]

_FIX: Final = {
    "is": "choose another {label}",
    "contains": "choose an {label} that holds no input",
    "lies inside": "choose an {label} outside {input}",
}


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist (yet)
        return False


def overlap(output: Path, read: Path) -> Overlap | None:
    """How the output path ``output`` overlaps the input ``read``, or ``None``.

    Examples
    --------
    >>> overlap(Path("/data/study"), Path("/data/study/qrels.txt"))
    'contains'
    >>> overlap(Path("/data/a.csv"), Path("/data/b.csv")) is None
    True
    """
    out, inp = output.resolve(), read.resolve()
    if out == inp or _same_file(out, inp):
        return "is"
    if inp.is_relative_to(out):
        return "contains"
    if out.is_relative_to(inp) and inp.is_dir():
        return "lies inside"
    return None


def refuse_overlap(
    outputs: Iterable[Path], inputs: Iterable[Path | None], *, label: str = "--out"
) -> None:
    """Refuse any output that is, contains or lies inside an input (checked before any work).

    Parameters
    ----------
    outputs
        What the command writes: its output folder, or each file it names.
    inputs
        Every file or folder it reads (``None`` entries, options not given, are skipped).
    label
        The option naming the outputs, for the message (``--out``, ``--rejects``).

    Raises
    ------
    OutputError
        Naming the output, the input and what to do; ``--force`` never allows it.
    """
    reads = [p for p in inputs if p is not None]
    for out in outputs:
        for read in reads:
            how = overlap(out, read)
            if how is None:
                continue
            kind = "input folder" if how == "lies inside" else "input"
            fix = _FIX[how].format(label=label, input=read)
            raise OutputError(
                f"{label} {out} {how} the {kind} {read}: this command would write over what "
                f"it reads; {fix} (--force never overwrites an input)"
            )


def input_file_ids(inputs: Iterable[Path | None]) -> set[tuple[int, int]]:
    """``(device, inode)`` of every input file, and of every file in an input folder.

    A file is recognised by these whatever path or hard link names it, so an output
    about to replace one is refused (:class:`~sessionval.workflow.outputs.RunOutputs`).
    """
    ids = set()
    for p in inputs:
        if p is None:
            continue
        files = [f for f in p.rglob("*") if f.is_file()] if p.is_dir() else [p]
        for f in files:
            try:
                st = f.stat()
            except OSError:
                continue
            ids.add((st.st_dev, st.st_ino))
    return ids

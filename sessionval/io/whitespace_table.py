r"""Whitespace-separated text tables (TREC qrels and runs), streamed in pieces of whole lines.

The rule of these files: a line ends at ``\n``, ``\r\n`` or ``\r``; fields are separated
by runs of spaces and tabs; a line of only spaces and tabs is blank and skipped; every
other character is data.  :func:`read_fields` reads a file's fields in pieces of about
``chunk_bytes`` decompressed bytes (:func:`sessionval.io.text.iter_input_utf8`), each
parsed in one pass of pandas' C parser, so memory beyond the table read stays bounded;
a line's number is found again only when a message needs it (:class:`RowLines`).
Problems are collected in file order by
:class:`~sessionval.validate.collect.ProblemCollector` and raised together.
:mod:`sessionval.io.trec` gives the fields their meaning (ids, grades, ranks).
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Callable, Iterator, Sequence
from functools import cache
from pathlib import Path
from typing import Final

import numpy as np
import numpy.typing as npt
import pandas as pd

from ..errors import ParseError
from ..progress import Progress, ProgressLike, as_progress, counted
from ..validate.collect import ProblemCollector
from .text import count_lines, iter_input_utf8

__all__ = ["PIECE_BYTES", "RowLines", "read_fields", "read_piece"]

_LINE_END = re.compile(r"\r\n|\r|\n")
_FIELD_SEP = re.compile(r"[ \t]+")
_SHOWN = 80  # characters of a line quoted in a message
#: decompressed bytes parsed at a time: few enough C-parser calls and column chunks that a
#: large file reads as fast as in one pass, small enough that memory beyond the table stays
#: bounded (a few pieces) whatever the file's size
PIECE_BYTES: Final = 64 << 20


def _pieces(
    path: Path, encoding: str | None, chunk_bytes: int
) -> Iterator[tuple[int, bytes, bool]]:
    r"""The file as UTF-8 bytes in pieces of whole lines, each with the lines before it.

    Only a piece (about ``chunk_bytes``) and what it is cut from are held at a time, so
    a file larger than memory, or a small gzip of gigabytes of blank lines, reads in
    bounded memory.  A piece ends after a line end (never inside a ``\r\n``), so a
    line's number is the lines before its piece plus its place in the piece.  The
    third value says the piece is only line ends (blank lines: nothing to parse).
    """
    carry = b""
    before = 0
    for part in iter_input_utf8(path, encoding, chunk_bytes=chunk_bytes):
        buf = carry + part if carry else part
        cut = _after_last_line_end(buf)
        piece, carry = buf[:cut], buf[cut:]
        if piece:
            # lines by the module's rule: \r\n is one line end, a lone \r or \n one each
            lines = piece.count(b"\n")
            if b"\r" in piece:
                lines += piece.count(b"\r") - piece.count(b"\r\n")
            yield before, piece, lines == len(piece)  # every byte a line end: blank lines
            before += lines
    if carry:
        yield before, carry, False


def _after_last_line_end(buf: bytes) -> int:
    """Where to cut ``buf`` after its last complete line end (0: no line ends in it yet)."""
    cr = buf.rfind(b"\r", 0, len(buf) - 1)  # a \r last in buf may be the start of a \r\n
    return max(buf.rfind(b"\n"), cr) + 1


def _shown(line: str) -> str:
    return repr(line if len(line) <= _SHOWN else line[:_SHOWN] + "...")


def _numbered_lines(data: bytes) -> list[tuple[int, str]]:
    """``(line number, text)`` of every non-blank line, by the module's line rule (error path)."""
    text = data.decode("utf-8")
    return [(i, ln) for i, ln in enumerate(_LINE_END.split(text), start=1) if ln.strip(" \t")]


def read_fields(
    path: Path,
    names: Sequence[str],
    what: str,
    encoding: str | None,
    problems: ProblemCollector,
    chunk_bytes: int,
    progress: ProgressLike = None,
) -> tuple[pd.DataFrame, RowLines]:
    """The fields of a whitespace-separated file, and where each row's line can be found.

    The file is read in pieces of whole lines (:func:`_pieces`), each parsed in one
    pass of the C parser; only a piece with lines of the wrong length is split line by
    line, to report every such line and keep the well-formed ones (their problems are
    reported too, in the same pass).  ``progress`` is told the lines read, a piece at
    a time, out of the file's (:func:`~sessionval.io.text.count_lines`, counted only
    when a bar is drawn).
    """
    total = count_lines(path, encoding) if as_progress(progress).counting else None
    with counted(progress, f"reading {path.name}", total, "lines") as shown:
        return _read_fields(path, names, what, encoding, problems, chunk_bytes, shown)


def _read_fields(
    path: Path,
    names: Sequence[str],
    what: str,
    encoding: str | None,
    problems: ProblemCollector,
    chunk_bytes: int,
    shown: Progress,
) -> tuple[pd.DataFrame, RowLines]:
    """:func:`read_fields`, each piece's lines counted on ``shown`` (as ``count_lines`` counts)."""
    frames: list[pd.DataFrame] = []
    rows = RowLines(path, encoding, chunk_bytes)
    last = b""
    for k, (before, piece, blank) in enumerate(_pieces(path, encoding, chunk_bytes)):
        rows.pieces += 1
        last = piece
        if not blank:  # blank lines are not parsed: a gzip of gigabytes of them reads in seconds
            kept = _parsed(piece, before, k, names, what, problems, rows)
            if kept is not None:
                frames.append(kept)
        shown.advance(piece.count(b"\n"))  # lines as count_lines counts them: each \n
    if last and not last.endswith(b"\n"):
        shown.advance()  # the last line, without a line end
    if not frames:
        if not problems.problems:
            raise ParseError(f"{path}: file is empty (expected {what} lines)")
        return pd.DataFrame({c: pd.Series([], dtype=str) for c in names}), rows
    out = frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True)
    out.columns = list(names)
    return out, rows


def read_piece(
    piece: bytes,
    names: Sequence[str],
    what: str,
    problems: ProblemCollector,
    lines_before: Callable[[], int],
) -> tuple[pd.DataFrame, Callable[[], npt.NDArray[np.int64]]]:
    """The fields of one piece of whole lines cut from a file, and its rows' lines.

    The parse of each piece of :func:`read_fields` (one pass of the C parser, a piece
    with lines of the wrong length split line by line and every such line reported),
    for a piece read elsewhere: a byte range of a file read on a Dask worker.
    ``lines_before`` (the file's lines before the piece) is called only when a line
    number is needed; the returned callable gives each row's line (error path).
    """
    frame = _whole(piece, len(names))
    if frame is None:
        kept, at = _diagnose(piece, lines_before(), names, what, problems)
        kept.columns = list(names)
        return kept, lambda: at
    if len(frame) == 0:
        return pd.DataFrame({c: pd.Series([], dtype=str) for c in names}), _no_lines
    frame.columns = list(names)

    @cache
    def lines() -> npt.NDArray[np.int64]:
        return _nonblank_lines(piece, lines_before(), blank=False)

    return frame, lines


def _no_lines() -> npt.NDArray[np.int64]:
    return np.zeros(0, np.int64)


def _whole(piece: bytes, n: int) -> pd.DataFrame | None:
    """The piece in one pass of the C parser (empty: blank lines only).

    ``None``: a line of another length than ``n`` fields (the piece is split by line).
    """
    df = _c_parse(piece)
    if df is not None and (len(df) == 0 or (df.shape[1] == n and not (df[n - 1] == "").any())):
        return df
    return None


def _parsed(
    piece: bytes,
    before: int,
    k: int,
    names: Sequence[str],
    what: str,
    problems: ProblemCollector,
    rows: RowLines,
) -> pd.DataFrame | None:
    """The rows of piece ``k`` (``None``: none), every line of the wrong length reported."""
    df = _whole(piece, len(names))
    if df is not None:
        return df if len(df) else None  # None: blank lines only, some with spaces or tabs
    kept, rows.slow[k] = _diagnose(piece, before, names, what, problems)
    return kept if len(kept) else None


def _diagnose(
    piece: bytes, before: int, names: Sequence[str], what: str, problems: ProblemCollector
) -> tuple[pd.DataFrame, npt.NDArray[np.int64]]:
    """The well-formed lines of a piece and their line numbers; the others reported."""
    n = len(names)
    good: list[str] = []
    line_of: list[int] = []
    for i, line in _numbered_lines(piece):
        lineno = before + i
        k = len(_FIELD_SEP.split(line.strip(" \t")))
        if k == n:
            good.append(line)
            line_of.append(lineno)
        elif len(problems.problems) < problems.limit:  # the first problems a file can have
            problems.add_at(
                lineno,
                "",
                f"{what} line has {k} field{'s' if k != 1 else ''}, "
                f"expected {n} separated by spaces or tabs ({' '.join(names)})",
                _shown(line),
            )
        else:
            problems.uncounted += 1
    if not good:
        return pd.DataFrame(columns=range(n), dtype=str), np.zeros(0, np.int64)
    kept = _c_parse("\n".join(good).encode("utf-8"))
    if kept is None or kept.shape != (len(good), n):  # same rule: not expected, kept simple
        kept = pd.DataFrame([_FIELD_SEP.split(ln.strip(" \t")) for ln in good], dtype=str)
    return kept, np.asarray(line_of, dtype=np.int64)


def _c_parse(data: bytes) -> pd.DataFrame | None:
    """Each non-blank line's fields by pandas' C parser (``None``: a line longer than the first)."""
    try:
        return pd.read_csv(
            io.BytesIO(data),
            sep=r"\s+",  # the C parser's whitespace: space and tab only
            header=None,
            dtype=str,
            engine="c",
            skip_blank_lines=True,
            keep_default_na=False,
            quoting=csv.QUOTE_NONE,  # a " is data, not a quote swallowing the next lines
        )
    except pd.errors.EmptyDataError:
        return pd.DataFrame(columns=range(1), dtype=str).iloc[:0]
    except pd.errors.ParserError:
        return None


class RowLines:
    """Each row's line number, found again only when a message needs it (error path).

    A piece parsed whole kept no line numbers (the fast path); a piece split line by
    line (:func:`_diagnose`) kept those of its rows.  Asked for the lines, the file is
    streamed again in the same pieces, and the non-blank lines of each whole piece are
    counted (by the module's line rule).
    """

    def __init__(self, path: Path, encoding: str | None, chunk_bytes: int) -> None:
        self.path, self.encoding, self.chunk_bytes = path, encoding, chunk_bytes
        self.pieces = 0
        self.slow: dict[int, npt.NDArray[np.int64]] = {}
        self._found: npt.NDArray[np.int64] | None = None

    def __call__(self) -> npt.NDArray[np.int64]:
        """Every row's line number, in row order (found once, then kept)."""
        if self._found is None:
            if self.pieces and len(self.slow) == self.pieces:  # every piece kept its lines
                parts = [self.slow[k] for k in range(self.pieces)]
            else:
                parts = [
                    self.slow[k] if k in self.slow else _nonblank_lines(piece, before, blank)
                    for k, (before, piece, blank) in enumerate(
                        _pieces(self.path, self.encoding, self.chunk_bytes)
                    )
                ]
            self._found = np.concatenate(parts) if parts else np.zeros(0, np.int64)
        return self._found


def _nonblank_lines(piece: bytes, before: int, blank: bool) -> npt.NDArray[np.int64]:
    """The numbers of the non-blank lines of a piece that starts after line ``before``."""
    if blank:
        return np.zeros(0, np.int64)
    return np.asarray([before + i for i, _ in _numbered_lines(piece)], dtype=np.int64)

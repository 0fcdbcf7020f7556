"""Reading flat tables (CSV, TSV, Parquet) as they are, without interpreting them."""

from __future__ import annotations

import csv
import io
import os
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

import pandas as pd

from ..errors import InputFormatError, ParseError
from ..validate.sources import ParquetColumns
from .text import open_input_binary

__all__ = [
    "read_csv_table",
    "read_flat_table",
]


def read_flat_table(
    path: str | os.PathLike[str],
    *,
    columns: Sequence[str] | None = None,
    encoding: str | None = None,
) -> pd.DataFrame:
    """Read a flat CSV or Parquet table without interpreting it.

    Parquet string columns are read dictionary-encoded straight into pandas
    categoricals, so ids are encoded once to integer codes and never become
    millions of Python strings.  CSV ids are read as strings.  A CSV/TSV file goes
    through :func:`~sessionval.io.text.open_input_binary`: gzip is recognised by its
    magic number, a byte-order mark selects its encoding, and a byte that is not
    valid in ``encoding`` is a located error.

    Parameters
    ----------
    path
        ``.csv``/``.tsv`` (optionally ``.gz``) or ``.parquet`` file.
    columns
        Read only these columns (those absent from the file are ignored).
    encoding
        Text encoding of a CSV/TSV file (default UTF-8; a BOM overrides it).

    Raises
    ------
    ParseError
        Empty file, wrong encoding, or unreadable content; the message names the file.
    """
    p = Path(path)
    if not p.exists():
        raise ParseError(f"{p}: no such file")
    if p.stat().st_size == 0:
        raise ParseError(f"{p}: file is empty (expected a header row and one row per result)")
    suffixes = "".join(p.suffixes).lower()
    if ".parquet" in suffixes or suffixes.endswith(".pq"):
        return _read_parquet(p, columns)
    if any(s in suffixes for s in (".csv", ".tsv", ".txt")):
        return read_csv_table(
            p, sep="\t" if ".tsv" in suffixes else ",", columns=columns, encoding=encoding
        )
    raise InputFormatError(
        f"{p}: unknown table format {suffixes!r} (allowed: .csv, .tsv, .parquet)"
    )


def _read_parquet(p: Path, columns: Sequence[str] | None) -> pd.DataFrame:
    src = ParquetColumns(p)
    names = src.names if columns is None else [c for c in columns if c in src]
    return pd.DataFrame({name: src.column(name) for name in names})


def read_csv_table(
    path: str | os.PathLike[str],
    *,
    sep: str = ",",
    columns: Sequence[str] | None = None,
    encoding: str | None = None,
    what: str = "table",
    quoting: Literal[0, 1, 2, 3] = csv.QUOTE_MINIMAL,
    skip_blank_lines: bool = True,
) -> pd.DataFrame:
    r"""Read a CSV/TSV file with a header row as strings (empty cells missing), uninterpreted.

    The bytes go through :func:`~sessionval.io.text.open_input_binary` (gzip by
    magic number, BOMs, ``encoding``, located decoding errors); every cell is kept as
    written (no whitespace removed, no type guessed).

    Parameters
    ----------
    path
        The file.
    sep
        ``","`` or ``"\t"``.
    columns
        Read only these columns (those absent from the file are ignored).
    encoding
        Text encoding (default UTF-8; a BOM overrides it).
    what
        What the table holds, for messages (``"judgments table"``).
    quoting
        A :mod:`csv` quoting constant (``csv.QUOTE_NONE`` for tables whose cells may hold ``"``).
    skip_blank_lines
        ``False``: a blank line is a row of missing cells, so row ``i`` is line ``i + 2``.

    Raises
    ------
    ParseError
        Not gzip although named ``.gz``, an undecodable byte, no header, or a malformed
        line (with pandas' description, which names the line).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "t.csv"
    >>> _ = f.write_bytes("a,b\n x ,caf\xe9\n".encode("latin-1"))
    >>> read_csv_table(f, encoding="latin-1").to_dict("list")
    {'a': [' x '], 'b': ['café']}
    """
    p = Path(path)
    kind = "TSV" if sep == "\t" else "CSV"
    stream = open_input_binary(p, encoding)
    # before pandas, which renames a repeated name "a" to "a.1" (in time quadratic in the
    # number of repeats: a file without line ends is one header of thousands of names)
    twice = _repeated_names(stream, sep, quoting)
    if twice:
        raise ParseError(
            f"{p}:1: column(s) {', '.join(map(repr, twice[:10]))}"
            + (f" and {len(twice) - 10} more" if len(twice) > 10 else "")
            + " appear more than once in the header (each column name must be unique)"
        )
    try:
        df = pd.read_csv(
            stream,
            sep=sep,
            dtype=str,
            keep_default_na=False,
            na_values=[""],
            usecols=(lambda c: c in columns) if columns is not None else None,
            encoding="utf-8",
            quoting=quoting,
            skip_blank_lines=skip_blank_lines,
        )
    except pd.errors.EmptyDataError as exc:
        raise ParseError(f"{p}: file is empty (expected a header row)") from exc
    except (pd.errors.ParserError, ValueError) as exc:
        raise ParseError(f"{p}: malformed {kind} {what} ({exc})") from exc
    return df


def _repeated_names(stream: io.BytesIO, sep: str, quoting: Literal[0, 1, 2, 3]) -> list[str]:
    """The names the header line (the stream's first line) holds more than once, sorted."""
    line = stream.readline()
    stream.seek(0)
    cr = line.find(b"\r")  # pandas ends a line at a lone CR too
    text = (line if cr < 0 else line[:cr]).decode("utf-8", errors="replace").rstrip("\n")
    try:
        names = next(csv.reader([text], delimiter=sep, quoting=quoting), [])
    except csv.Error:
        return []  # pandas reports the malformed header
    return sorted(name for name, n in Counter(names).items() if n > 1)

"""Reading flat tables (CSV, TSV, Parquet) as they are, without interpreting them."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from ..errors import InputFormatError, ParseError
from ..validate.sources import ParquetColumns

__all__ = [
    "read_flat_table",
]


def read_flat_table(
    path: str | os.PathLike[str], *, columns: Sequence[str] | None = None
) -> pd.DataFrame:
    """Read a flat CSV or Parquet table without interpreting it.

    Parquet string columns are read dictionary-encoded straight into pandas
    categoricals, so ids are encoded once to integer codes and never become
    millions of Python strings.  CSV ids are read as strings.

    Parameters
    ----------
    path
        ``.csv``/``.tsv`` (optionally ``.gz``) or ``.parquet`` file.
    columns
        Read only these columns (those absent from the file are ignored).

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
        return _read_csv(p, columns, sep="\t" if ".tsv" in suffixes else ",")
    raise InputFormatError(
        f"{p}: unknown table format {suffixes!r} (allowed: .csv, .tsv, .parquet)"
    )


def _read_parquet(p: Path, columns: Sequence[str] | None) -> pd.DataFrame:
    src = ParquetColumns(p)
    names = src.names if columns is None else [c for c in columns if c in src]
    return pd.DataFrame({name: src.column(name) for name in names})


def _read_csv(p: Path, columns: Sequence[str] | None, *, sep: str) -> pd.DataFrame:
    try:
        with p.open("rb") as fh:
            head = fh.read(1 << 20)
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = head[: exc.start].count(b"\n") + 1
        raise ParseError(
            f"{p}:{line}: not valid UTF-8 (byte {exc.start}: {head[exc.start : exc.start + 1]!r}); "
            "save the file as UTF-8"
        ) from exc
    try:
        df = pd.read_csv(
            p,
            sep=sep,
            dtype=str,
            keep_default_na=False,
            na_values=[""],
            usecols=(lambda c: c in columns) if columns is not None else None,
            encoding="utf-8",
        )
    except UnicodeDecodeError as exc:
        raise ParseError(f"{p}: not valid UTF-8 ({exc}); save the file as UTF-8") from exc
    except pd.errors.ParserError as exc:
        raise ParseError(f"{p}: malformed {('TSV' if sep == chr(9) else 'CSV')} ({exc})") from exc
    except pd.errors.EmptyDataError as exc:
        raise ParseError(f"{p}: file is empty (expected a header row)") from exc
    return df

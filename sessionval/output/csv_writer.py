"""Tables to CSV through Arrow, a piece of rows at a time: the one CSV writer of the outputs.

pandas' ``to_csv`` formats every cell in Python and runs at about 5 MB/s; Arrow's
writer formats whole columns in C++.  On a long score table of 5 million rows
(ids, a categorical measure, a float value; ``benchmarks/bench_run_outputs.py
--csv``) :func:`write_csv` writes in 8.5 s what pandas writes in 41.5 s (4.9×).  The rows go
through Arrow :data:`CHUNK_ROWS` at a time, so the extra memory is one piece's text
and Arrow table, not a copy of the whole table.

The text is pandas' for the header, ids, text, integers, missing values and times
(times are formatted by pandas once per column, as ``to_csv`` does), and differs
where Arrow formats values its own way; every value reads back the same:

* a float is written in its shortest round-trip form as Arrow spells it: ``1``
  for ``1.0``, ``0.00001`` for ``1e-05``, ``1.5e-7`` for ``1.5e-07`` (the same
  double when read back by pandas, R, Stata or SPSS);
* a boolean is ``true``/``false`` (pandas: ``True``/``False``);
* in a piece of rows where some text value holds a comma, a quote or a line break,
  every text value of that piece is quoted (pandas quotes only those values);
* a row of a one-column table whose value is missing is an empty line (pandas: ``""``).

A table whose columns Arrow cannot convert (an object column of mixed values) is
written by pandas, as before.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Final

import pandas as pd
import pyarrow as pa
import pyarrow.csv as pa_csv

__all__ = ["CHUNK_ROWS", "write_csv"]

#: Rows converted and written at a time.
CHUNK_ROWS: Final = 500_000
_PLAIN: Final = pa_csv.WriteOptions(include_header=False, quoting_style="none")
_QUOTED: Final = pa_csv.WriteOptions(include_header=False, quoting_style="needed")


def _header(columns: pd.Index) -> str:
    """The header line as pandas writes it (the csv module, quotes only where needed)."""
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerow([str(c) for c in columns])
    return buf.getvalue()


def _time_text(s: pd.Series) -> pd.Series:
    """A column of times or durations as pandas' ``astype(str)`` writes it.

    pandas formats a time with a time zone through a Python object per value; a UTC
    column (the covariates' times) is formatted as the same times without the zone, in
    pandas' vectorised path (13x faster on the 200k study's session times), and given the
    ``+00:00`` that pandas writes.  Without a zone pandas writes a column of midnights as
    dates only: that column, and any other zone, takes pandas' own path.
    """
    tz = getattr(s.dt, "tz", None) if pd.api.types.is_datetime64_any_dtype(s) else None
    if tz is not None and str(tz) == "UTC":
        text = s.dt.tz_localize(None).astype(str)
        known = text.dropna()
        if known.empty or len(known.iloc[0]) > len("2000-01-01"):  # times, not dates only
            zoned: pd.Series = text + "+00:00"
            return zoned.where(s.notna(), None)
    return s.astype(str).where(s.notna(), None)


def _as_text(table: pd.DataFrame) -> pd.DataFrame:
    """Times and durations as pandas' own text (once per column: its format is the column's)."""
    out = table
    for col in table.columns:
        s = table[col]
        if pd.api.types.is_datetime64_any_dtype(s) or pd.api.types.is_timedelta64_dtype(s):
            if out is table:
                out = table.copy(deep=False)
            out[col] = _time_text(s)
    return out


def _piece(table: pd.DataFrame) -> pa.Buffer:
    """One piece of rows as CSV lines (no header): unquoted, or quoted if a value needs it."""
    # a frame without ``attrs`` (the run's tables carry objects Arrow's metadata cannot hold)
    arrow = pa.Table.from_pandas(pd.DataFrame(table, copy=False), preserve_index=False)
    sink = pa.BufferOutputStream()
    try:
        pa_csv.write_csv(arrow, sink, write_options=_PLAIN)
    except pa.ArrowInvalid:  # a text value holds a comma, quote or line break
        sink = pa.BufferOutputStream()
        pa_csv.write_csv(arrow, sink, write_options=_QUOTED)
    return sink.getvalue()  # written from Arrow's buffer: no copy of the piece's text


def write_csv(table: pd.DataFrame, path: str | Path, *, chunk_rows: int = CHUNK_ROWS) -> None:
    """Write ``table`` (no index) as CSV to ``path`` through Arrow, ``chunk_rows`` at a time.

    Parameters
    ----------
    table
        The table; not modified.
    path
        The file written (replaced).
    chunk_rows
        Rows converted at a time (bounds the extra memory).

    Examples
    --------
    >>> import tempfile, os
    >>> t = pd.DataFrame({"id": ["a", "b"], "n": [1, 2], "x": [0.5, None], "ok": [True, False]})
    >>> with tempfile.TemporaryDirectory() as d:
    ...     write_csv(t, os.path.join(d, "t.csv"))
    ...     print(open(os.path.join(d, "t.csv")).read(), end="")
    id,n,x,ok
    a,1,0.5,true
    b,2,,false
    """
    path = Path(path)
    text = _as_text(table)
    try:
        with path.open("wb") as fh:
            fh.write(_header(table.columns).encode("utf-8"))
            for start in range(0, len(text), chunk_rows):
                fh.write(_piece(text.iloc[start : start + chunk_rows]))
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
        # a column Arrow cannot convert (mixed Python objects): pandas writes it all
        table.to_csv(path, index=False)

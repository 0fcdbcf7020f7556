"""Parquet layouts of the flat table: row groups of whole sessions, top ranks first, partitions.

:func:`write_parquet_file` writes the flat one-row-per-result table
(:mod:`sessionval.io.flat_chunks`) a chunk of whole sessions at a time, so memory
stays bounded by a chunk and a row group.  Two layouts:

* **plain**: rows in session order (session, query position, rank), one row group
  per chunk of about ``row_group_rows`` rows;
* **top ranks first** (``top_first=X``): first the rows of rank ≤ X (and the row of
  each query without results) in session order, then the deeper rows in session
  order, never in the same row group.  Every row group stores min/max statistics,
  so a reader asking for ``rank <= X`` (``load_sessions(..., max_rank=X)``, which
  :mod:`sessionval.validate.sources` reads with exactly that filter) skips the
  deep row groups without decoding them: lists 100 deep and X = 10 decode about a
  tenth of the rows.  A read of every row gets the same rows in another order; the
  loader puts them back in session order, so the validated frame is the same.

:func:`partition_chunks` groups the chunks into partitions of about ``N`` result
rows, never splitting a session: the files of ``sessionval convert --partition-rows
N`` (:func:`sessionval.io.writers.write_partitions`), read back by
:mod:`sessionval.io.partitioned`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Final

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ..errors import InputFormatError
from ..frame import SessionFrame
from ..progress import ProgressLike, as_progress
from .flat_chunks import arrow_chunk, flat_chunk, flat_columns
from .jsonl_text import CHUNK_ROWS, Chunk, frame_chunks

__all__ = [
    "PART_NAME",
    "TOP_FIRST_KEY",
    "partition_chunks",
    "top_first_of",
    "write_parquet_file",
]

#: Key of the Parquet file metadata that records the top-first cutoff X of a file.
TOP_FIRST_KEY: Final = b"sessionval.top_first"
#: Name of partition ``i`` of a partitioned study (``PART_NAME.format(i)``).
PART_NAME: Final = "part-{:05d}.parquet"


def partition_chunks(
    frame: SessionFrame, partition_rows: int, chunk_rows: int = CHUNK_ROWS
) -> list[list[Chunk]]:
    """Chunks of whole sessions grouped into partitions of about ``partition_rows`` rows.

    A partition takes chunks (of at most ``min(chunk_rows, partition_rows)`` result
    rows, or one session when a session is longer) while it stays within
    ``partition_rows``; a session is never split.  A frame without sessions is one
    empty partition.

    Raises
    ------
    InputFormatError
        ``partition_rows`` or ``chunk_rows`` is not positive.
    """
    if partition_rows < 1 or chunk_rows < 1:
        raise InputFormatError(
            f"rows per partition and per chunk must be at least 1, "
            f"got {partition_rows} and {chunk_rows}"
        )
    parts: list[list[Chunk]] = [[]]
    rows = 0
    for c in frame_chunks(frame, min(chunk_rows, partition_rows)):
        n = c.results.stop - c.results.start
        if parts[-1] and rows + n > partition_rows:
            parts.append([])
            rows = 0
        parts[-1].append(c)
        rows += n
    return parts


def _top_rows(table: pa.Table, top_first: int) -> pa.ChunkedArray:
    """Rows of rank ≤ X and rows without a rank (a query without results): the top band."""
    rank = table.column("rank")
    return pc.or_kleene(pc.less_equal(rank, top_first), pc.is_null(rank))


class _RowGroups:
    """Tables gathered into row groups of about ``rows`` rows, written in order."""

    def __init__(self, path: Path, rows: int, metadata: dict[bytes, bytes]) -> None:
        self.path = path
        self.rows = rows
        self.metadata = metadata
        self.writer: pq.ParquetWriter | None = None
        self.pending: list[pa.Table] = []
        self.n = 0

    def add(self, table: pa.Table) -> None:
        if table.num_rows == 0:
            return
        if self.writer is None:
            schema = table.schema.with_metadata(self.metadata or None)
            self.writer = pq.ParquetWriter(self.path, schema)
        if self.pending and self.n + table.num_rows > self.rows:
            self.flush()
        self.pending.append(table.cast(self.writer.schema))
        self.n += table.num_rows

    def flush(self) -> None:
        """Write the gathered tables as one row group."""
        if self.writer is not None and self.pending:
            table = pa.concat_tables(self.pending)
            self.writer.write_table(table, row_group_size=table.num_rows)
        self.pending, self.n = [], 0

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


def write_parquet_file(
    frame: SessionFrame,
    path: str | os.PathLike[str],
    chunks: Sequence[Chunk] | None = None,
    *,
    top_first: int | None = None,
    row_group_rows: int = CHUNK_ROWS,
    metadata: Mapping[bytes, bytes] | None = None,
    progress: ProgressLike = None,
) -> Path:
    """Write the flat table of ``chunks`` (default: the whole frame) to one Parquet file.

    Parameters
    ----------
    frame
        The sessions (not modified).
    path
        Output file (replaced; the callers write under a temporary name).
    chunks
        Chunks of whole sessions of ``frame`` to write, in order
        (:func:`~sessionval.io.jsonl_text.frame_chunks`; default: chunks of
        ``row_group_rows`` rows over the whole frame).
    top_first
        ``None``: the plain layout.  ``X``: the rows of rank ≤ X (and those of queries
        without results) first, then the deeper rows, in separate row groups; the
        file's metadata records ``X`` under :data:`TOP_FIRST_KEY`.  Each chunk's flat
        table is then built twice (once per band) rather than held.
    row_group_rows
        About this many rows per row group (a row group holds at least one chunk's
        band).
    metadata
        More schema metadata to store (the study header:
        :func:`~sessionval.io.header.header_carrier`).
    progress
        Advanced by the rows of each chunk written (the caller starts and ends the phase:
        :class:`~sessionval.progress.Progress`).

    Returns
    -------
    Path
        ``path``.

    Raises
    ------
    InputFormatError
        ``top_first`` is not positive.
    """
    p = Path(path)
    if top_first is not None and top_first < 1:
        raise InputFormatError(f"top_first must be at least 1 (a rank), got {top_first}")
    todo = list(frame_chunks(frame, row_group_rows)) if chunks is None else list(chunks)
    metadata = dict(metadata or {})
    if top_first is not None:
        metadata[TOP_FIRST_KEY] = str(top_first).encode()
    groups = _RowGroups(p, row_group_rows, metadata)
    shown = as_progress(progress)
    try:
        # the plain layout is one band; top-first is two, each chunk rebuilt per band, so only
        # one chunk and one row group are ever held
        for band in (None,) if top_first is None else (True, False):
            for c in todo:
                table = arrow_chunk(flat_chunk(frame, c))
                if top_first is not None:
                    top = _top_rows(table, top_first)
                    table = table.filter(top if band else pc.invert(top))
                groups.add(table)
                shown.advance(table.num_rows)
            groups.flush()  # a row group never holds rows of both bands
        if groups.writer is None:  # no sessions: an empty table with the layout's columns
            columns = flat_columns(frame)
            schema = pa.schema([(c, pa.string()) for c in columns], metadata=metadata or None)
            pq.write_table(schema.empty_table(), p)
    finally:
        groups.close()
    return p


def top_first_of(path: str | os.PathLike[str]) -> int | None:
    """The cutoff X of a Parquet file written top ranks first (``None``: another layout)."""
    meta = pq.read_schema(path).metadata or {}
    value = meta.get(TOP_FIRST_KEY)
    return int(value) if value is not None else None

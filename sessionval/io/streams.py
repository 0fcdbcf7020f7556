"""Streaming writers: a study written a batch of sessions at a time.

For producers that hold one chunk of a study at a time (the synthetic generator
streams a million sessions this way); memory stays bounded by a chunk.  A write the
system refuses (a full disk) names the file (:func:`~sessionval.errors.writing`).
:mod:`sessionval.io.writers` re-exports them.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import pyarrow as pa
import pyarrow.parquet as pq

from ..errors import writing
from ..models.study import Study
from .header import header_carrier

__all__ = [
    "JsonlStream",
    "ParquetStream",
    "session_json_line",
    "write_study_json",
]


def write_study_json(
    header: Study, path: str | os.PathLike[str], *, with_records: bool = False
) -> Path:
    """Write a :class:`Study` as ``study.json`` (indented JSON, UTF-8, final newline).

    The one writer of ``study.json``: every folder output (JSON-lines, partitions, the
    generator) writes the header's text (:func:`~sessionval.io.header.header_carrier`),
    without ``sessions`` and ``judgments``, which the readers take from the session
    and judgment files beside it.

    Parameters
    ----------
    header
        The study.
    path
        Output file.
    with_records
        Keep the study's ``sessions`` and ``judgments`` too (one self-contained file
        that :class:`Study` reads back).
    """
    p = Path(path)
    text = (
        header.model_dump_json(indent=2) + "\n"
        if with_records
        else header_carrier(header, p.parent, "folder").text
    )
    with writing(p):
        p.write_text(text, encoding="utf-8")
    return p


def session_json_line(session: Mapping[str, Any]) -> str:
    """Return one session as its JSON line (compact, UTF-8 text, no newline).

    For a mapping shaped as the :class:`~sessionval.models.Session` model (its fields in
    the model's order, those at their default left out) this is exactly
    ``Session.model_dump_json(exclude_defaults=True)``.

    Examples
    --------
    >>> session_json_line({"session_id": "s1", "queries": [{"position": 1, "text": "café"}]})
    '{"session_id":"s1","queries":[{"position":1,"text":"café"}]}'
    """
    return json.dumps(session, separators=(",", ":"), ensure_ascii=False)


class _Stream:
    """A file written piece by piece: a context manager that closes it."""

    def close(self) -> None:
        """Finish and close the file."""
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


class JsonlStream(_Stream):
    """Write ``sessions.jsonl`` a batch of sessions at a time (UTF-8, Unix line ends).

    Use as a context manager; each session becomes :func:`session_json_line`.

    Parameters
    ----------
    path
        Output file (replaced if it exists).
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        with writing(self.path):
            self._fh = self.path.open("w", encoding="utf-8", newline="\n")

    def write(self, sessions: Iterable[Mapping[str, Any]]) -> None:
        """Append one line per session."""
        fh = self._fh
        with writing(self.path):
            for session in sessions:
                fh.write(session_json_line(session))
                fh.write("\n")

    def close(self) -> None:
        """Close the file."""
        with writing(self.path):
            self._fh.close()


class ParquetStream(_Stream):
    """Write Arrow tables to one Parquet file as they come, one row group per table.

    Encoding (which releases the GIL) runs in one background thread, so the caller
    prepares the next table meanwhile; tables are written in order, so the file is the
    same as when written one after another.  At most two tables are held at once.
    The file is zstd (level 3) compressed, format 2.6 with version-1 data pages, and
    stores the Arrow schema, so dictionary columns read back as dictionaries.

    Parameters
    ----------
    path
        Output file (replaced if it exists).
    schema
        Schema of every table written.
    dictionary_columns
        Columns to dictionary-encode (identifiers, values repeated per session or query).
    statistics_columns
        Columns to write min/max statistics for.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        schema: pa.Schema,
        *,
        dictionary_columns: Sequence[str],
        statistics_columns: Sequence[str],
    ) -> None:
        self.path = Path(path)
        with writing(self.path):
            self._writer = pq.ParquetWriter(
                self.path,
                schema,
                compression="zstd",
                compression_level=3,
                use_dictionary=list(dictionary_columns),
                write_statistics=list(statistics_columns),
                dictionary_pagesize_limit=1 << 24,
                version="2.6",
                data_page_version="1.0",
                store_schema=True,
            )
        self._pool = ThreadPoolExecutor(max_workers=1)
        self._pending: Future[None] | None = None

    def write(self, table: pa.Table) -> None:
        """Queue ``table`` as the next row group (waits for the previous one first)."""
        self._wait()
        self._pending = self._pool.submit(
            self._writer.write_table, table, row_group_size=max(table.num_rows, 1)
        )

    def _wait(self) -> None:
        if self._pending is not None:
            pending, self._pending = self._pending, None
            with writing(self.path):
                pending.result()

    def close(self) -> None:
        """Finish the queued row group and close the file."""
        try:
            self._wait()
        finally:
            self._pool.shutdown()
            with writing(self.path):
                self._writer.close()

"""Write a :class:`~sessionval.frame.SessionFrame` in the toolkit's own formats.

* **JSON-lines** (``sessions.jsonl`` + ``study.json``): one nested session per
  line, exactly the :class:`~sessionval.models.Session` model, and the
  :class:`~sessionval.models.Study` header (grade scale, users, topics, systems).
  This is what :func:`sessionval.io.jsonl.load_jsonl` reads back.
* **Flat tables** (Parquet or CSV): one row per result, the layout of
  ``docs/formats.md`` (:func:`sessionval.validate.flat.frame_to_flat`), whose
  ``qrels_id`` column holds the judgment key of each query; the header goes into a
  Parquet file's schema metadata, or beside a CSV table as ``<stem>.study.json``.
* **Judgments** as TREC qrels (``topic 0 doc grade``), keyed by the judgment key.

Each writer writes plain files and wraps itself in the one staging layer
(:func:`sessionval.io.staging.staged`): the files are written in a staging folder
beside their place and renamed into it when all are complete, so an interrupted or
failed write leaves the older files as they were; called inside a command's staged
output folder, they write there directly.

Every output keeps the whole study header (:func:`sessionval.io.header.header_carrier`):
the one given (``header=``, e.g. the :class:`~sessionval.frame.LoadedStudy`'s), or one
built from the frame.  The streaming writers are in :mod:`sessionval.io.streams`.

Per-session and per-turn judgment keys travel as each query's ``qrels_id`` (in
JSON-lines only where it differs from the session's topic), so a written study
loads and validates with no further step.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pa_csv

from ..errors import InputFormatError, writing
from ..frame import JudgmentFrame, SessionFrame
from ..models.study import Study
from ..progress import ProgressLike, as_progress, counted
from .flat_chunks import arrow_chunk as _arrow_chunk
from .flat_chunks import flat_chunk as _flat_chunk
from .flat_chunks import flat_columns as _flat_columns
from .flat_chunks import flat_rows
from .header import header_carrier, study_header
from .jsonl_text import CHUNK_ROWS, JsonlText, frame_chunks, json_times
from .parquet_layout import PART_NAME, partition_chunks, write_parquet_file
from .staging import staged
from .streams import JsonlStream, ParquetStream, session_json_line, write_study_json

__all__ = [
    "CHUNK_ROWS",
    "FlatFormat",
    "JsonlStream",
    "ParquetStream",
    "WrittenFiles",
    "flat_outputs",
    "ids_with_whitespace",
    "jsonl_outputs",
    "session_json_line",
    "write_flat",
    "write_jsonl",
    "write_judgments",
    "write_judgments_csv",
    "write_partitions",
    "write_qrels",
    "write_study_json",
]

FlatFormat = Literal["parquet", "csv"]


@dataclass(frozen=True)
class WrittenFiles:
    """Paths a writer created (``study`` and ``qrels`` are ``None`` when not written)."""

    sessions: Path
    study: Path | None = None
    qrels: Path | None = None


def jsonl_outputs(
    out_dir: str | os.PathLike[str], judgments: JudgmentFrame | None = None
) -> tuple[Path, Path, Path | None]:
    """The files :func:`write_jsonl` writes: sessions, study header, judgments (or None)."""
    out = Path(out_dir)
    qrels = _judgments_path(judgments, out / "qrels.txt") if judgments is not None else None
    return out / "sessions.jsonl", out / "study.json", qrels


def flat_outputs(
    path: str | os.PathLike[str], judgments: JudgmentFrame | None = None
) -> tuple[Path, Path | None]:
    """The files :func:`write_flat` writes: the table and the judgments (or None).

    A CSV table also gets its header sidecar (:func:`~sessionval.io.header.header_sidecar`).
    """
    p = Path(path)
    qrels = _judgments_path(judgments, p.with_suffix(".qrels")) if judgments is not None else None
    return p, qrels


def _header(
    frame: SessionFrame, judgments: JudgmentFrame | None, name: str, header: Study | None
) -> Study:
    """The header to write: the one given (without sessions), or one built from the frame."""
    if header is not None:
        return header.header()
    return study_header(frame, judgments=judgments, name=name)


def _write_study_files(
    header: Study, judgments: JudgmentFrame | None, folder: Path, qrels: Path | None
) -> None:
    """The study header (``study.json``) and the judgments (named as ``qrels``), into ``folder``."""
    write_study_json(header, folder / "study.json")
    if judgments is not None and qrels is not None:
        write_judgments(judgments, folder / qrels.name, as_csv=qrels.suffix == ".csv")


def _write_sessions_jsonl(
    frame: SessionFrame, path: Path, chunk_rows: int, progress: ProgressLike = None
) -> None:
    """``sessions.jsonl``, a chunk of whole sessions at a time."""
    text = JsonlText(frame)
    with (
        writing(path),
        path.open("wb") as fh,
        counted(progress, f"writing {path.name}", frame.n_sessions, "sessions") as shown,
    ):
        for c in frame_chunks(frame, chunk_rows):
            fh.write(text.chunk(c)[0].as_buffer())
            shown.advance(c.sessions.stop - c.sessions.start)


def write_jsonl(
    frame: SessionFrame,
    out_dir: str | os.PathLike[str],
    *,
    judgments: JudgmentFrame | None = None,
    name: str = "",
    header: Study | None = None,
    chunk_rows: int = CHUNK_ROWS,
    progress: ProgressLike = None,
) -> WrittenFiles:
    """Write ``sessions.jsonl`` + ``study.json`` (+ judgments when given).

    The sessions are written in chunks of whole sessions (about ``chunk_rows``
    result rows each), each chunk's text built column-wise, so memory stays bounded
    by a chunk whatever the size of the study.  Every file is written under a
    temporary name and renamed into place when all are complete.  Judgments go to
    ``qrels.txt`` (TREC qrels), or to ``qrels.csv`` when an id contains whitespace,
    which whitespace-separated qrels cannot carry (:func:`write_judgments`).

    Parameters
    ----------
    frame
        The sessions to write (not modified).
    out_dir
        Directory to write into (created if missing).
    judgments
        Reference judgments, keyed by the judgment key.
    name
        Study name for ``study.json`` when no ``header`` is given.
    header
        The study header to keep (name, description, grade scales, users, topics,
        systems, qrels key), e.g. ``LoadedStudy.study``; default: one built from the
        frame (:func:`~sessionval.io.header.study_header`).
    chunk_rows
        Result rows per chunk.
    progress
        Told the sessions written, a chunk at a time (:class:`~sessionval.progress.Progress`).

    Returns
    -------
    WrittenFiles
        The paths written.
    """
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise InputFormatError(f"{out}: JSON-lines output must be a directory, got a file")
    sessions_path, study_path, qrels_path = jsonl_outputs(out, judgments)
    targets = [p for p in (sessions_path, study_path, qrels_path) if p is not None]
    with staged(out, command="write_jsonl", targets=targets) as stage:
        _write_sessions_jsonl(frame, stage.root / sessions_path.name, chunk_rows, progress)
        head = _header(frame, judgments, name, header)
        _write_study_files(head, judgments, stage.root, qrels_path)
    return WrittenFiles(sessions=sessions_path, study=study_path, qrels=qrels_path)


def _write_csv_chunks(
    frame: SessionFrame, path: Path, chunk_rows: int, progress: ProgressLike = None
) -> None:
    """The flat table as CSV (times in ISO 8601 UTC), a chunk of whole sessions at a time."""
    shown = as_progress(progress)
    writer: pa_csv.CSVWriter | None = None
    schema: pa.Schema | None = None
    try:
        for c in frame_chunks(frame, chunk_rows):
            flat = _flat_chunk(frame, c)
            times = {col: flat.pop(col) for col in ("query_time", "session_start", "session_end")}
            table = _arrow_chunk(flat)
            for col, values in times.items():  # ISO 8601 text, in the layout's place
                at = _flat_columns(frame).index(col)
                table = table.add_column(at, col, pc.utf8_trim(json_times(values), '"'))
            if writer is None:
                schema = table.schema
                options = pa_csv.WriteOptions(quoting_style="needed")
                writer = pa_csv.CSVWriter(path, schema, write_options=options)
            writer.write_table(table.cast(schema))
            shown.advance(table.num_rows)
        if writer is None:  # no sessions: the header alone
            path.write_text(",".join(_flat_columns(frame)) + "\n", encoding="utf-8")
    finally:
        if writer is not None:
            writer.close()


def write_flat(
    frame: SessionFrame,
    path: str | os.PathLike[str],
    *,
    to: FlatFormat | None = None,
    judgments: JudgmentFrame | None = None,
    name: str = "",
    header: Study | None = None,
    chunk_rows: int = CHUNK_ROWS,
    top_first: int | None = None,
    progress: ProgressLike = None,
) -> WrittenFiles:
    """Write the flat one-row-per-result table (with ``qrels_id``) as Parquet or CSV.

    The table is built and written in chunks of whole sessions (one Parquet row
    group, or one run of CSV lines, per chunk), so memory stays bounded by a chunk.
    Files are written under temporary names and renamed into place when complete.
    The study header goes into the Parquet file's schema metadata, or into the CSV
    table's sidecar ``<stem>.study.json`` (:func:`~sessionval.io.header.header_carrier`).

    Parameters
    ----------
    frame
        The sessions to write (not modified).
    path
        Output file; the format follows ``to`` or else the suffix (``.parquet``, ``.csv``).
    to
        ``"parquet"`` or ``"csv"``.
    judgments
        Also write them next to the table: ``<stem>.qrels`` (TREC qrels), or
        ``<stem>.qrels.csv`` when an id contains whitespace.
    name, header
        As :func:`write_jsonl`.
    chunk_rows
        Result rows per chunk.
    top_first
        Parquet only: write the rows of rank ≤ ``top_first`` first, in row groups of
        their own, so a top-X read skips the rest
        (:func:`~sessionval.io.parquet_layout.write_parquet_file`).
    progress
        Told the rows written, a chunk at a time (:class:`~sessionval.progress.Progress`).
    """
    p = Path(path)
    fmt = to or ("csv" if p.suffix.lower() in (".csv", ".tsv") else "parquet")
    if fmt not in ("parquet", "csv"):
        raise InputFormatError(f"unknown flat format {fmt!r} (allowed: parquet, csv)")
    if top_first is not None and fmt != "parquet":
        raise InputFormatError(f"{p}: the top-ranks-first layout is for Parquet, not {fmt}")
    if p.is_dir():
        raise InputFormatError(f"{p}: a {fmt} output must be a file, got a directory")
    _, qrels_path = flat_outputs(p, judgments)
    head = _header(frame, judgments, name, header)
    sidecar = header_carrier(head, p, fmt).path
    targets = [q for q in (p, qrels_path, sidecar) if q is not None]
    with staged(p.parent, command="write_flat", targets=targets) as stage:
        tmp = stage.root / p.name
        carrier = header_carrier(head, tmp, fmt)
        with writing(tmp), counted(progress, f"writing {p.name}", flat_rows(frame)) as shown:
            if fmt == "parquet":
                write_parquet_file(
                    frame,
                    tmp,
                    top_first=top_first,
                    row_group_rows=chunk_rows,
                    metadata=carrier.metadata,
                    progress=shown,
                )
            else:
                _write_csv_chunks(frame, tmp, chunk_rows, shown)
        if carrier.path is not None:
            with writing(carrier.path):
                carrier.path.write_text(carrier.text, encoding="utf-8")
        if judgments is not None and qrels_path is not None:
            as_csv = qrels_path.suffix == ".csv"
            write_judgments(judgments, stage.root / qrels_path.name, as_csv=as_csv)
    return WrittenFiles(sessions=p, study=sidecar, qrels=qrels_path)


def write_partitions(
    frame: SessionFrame,
    out_dir: str | os.PathLike[str],
    *,
    partition_rows: int,
    top_first: int | None = None,
    judgments: JudgmentFrame | None = None,
    name: str = "",
    header: Study | None = None,
    chunk_rows: int = CHUNK_ROWS,
    progress: ProgressLike = None,
) -> WrittenFiles:
    """Write a folder of Parquet files of whole sessions, about ``partition_rows`` rows each.

    The folder :mod:`sessionval.io.partitioned` reads (``load_study(folder)``):
    ``part-00000.parquet``, ... in the flat layout, each holding whole sessions in
    the frame's order (:func:`~sessionval.io.parquet_layout.partition_chunks`), the
    ``study.json`` header, and the judgments as ``qrels.txt`` (``qrels.csv`` when an
    id contains whitespace).  Built a chunk at a time; every file is written under a
    temporary name and renamed into place when all are complete.

    Parameters
    ----------
    frame
        The sessions to write (not modified).
    out_dir
        The folder (created if missing).  A Parquet file already in it that this
        write would not replace is refused: it would be read as a partition.
    partition_rows
        About this many result rows per file (at least 1; a session longer than that
        is one file).
    top_first
        Write each file top ranks first (see :func:`write_flat`).
    judgments, name, header, chunk_rows
        As :func:`write_jsonl`.
    progress
        Told the rows written over all the files (:class:`~sessionval.progress.Progress`).

    Returns
    -------
    WrittenFiles
        ``sessions`` is the folder.
    """
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise InputFormatError(f"{out}: partitioned output must be a directory, got a file")
    parts = partition_chunks(frame, partition_rows, chunk_rows)
    names = [out / PART_NAME.format(i) for i in range(len(parts))]
    _, study_path, qrels_path = jsonl_outputs(out, judgments)
    if out.is_dir():
        other = sorted(
            p.name
            for p in out.iterdir()
            if p.suffix.lower() in (".parquet", ".pq") and p not in names
        )
        if other:
            raise InputFormatError(
                f"{out}: already holds {other[0]}"
                + (f" and {len(other) - 1} other Parquet file(s)" if len(other) > 1 else "")
                + ", which would be read as partitions of this study: remove them or write "
                "to another folder"
            )
    targets = [p for p in (*names, study_path, qrels_path) if p is not None]
    with (
        staged(out, command="write_partitions", targets=targets) as stage,
        counted(progress, f"writing {len(names)} partitions", flat_rows(frame)) as shown,
    ):
        for path, chunks in zip(names, parts, strict=True):
            tmp = stage.root / path.name
            with writing(tmp):
                write_parquet_file(
                    frame,
                    tmp,
                    chunks,
                    top_first=top_first,
                    row_group_rows=chunk_rows,
                    progress=shown,
                )
        head = _header(frame, judgments, name, header)
        _write_study_files(head, judgments, stage.root, qrels_path)
    return WrittenFiles(sessions=out, study=study_path, qrels=qrels_path)


def ids_with_whitespace(judgments: JudgmentFrame) -> str | None:
    """The first topic or document id of ``judgments`` that contains whitespace, if any."""
    for col in ("topic_id", "doc_id"):
        cats = judgments.table[col].astype("category").cat.categories.astype(str)
        bad = cats[cats.str.contains(r"\s", regex=True)]
        if len(bad):
            return str(bad[0])
    return None


def _judgments_path(judgments: JudgmentFrame | None, qrels: Path) -> Path:
    """``qrels``, or ``qrels.csv`` for ``qrels.txt`` when an id contains whitespace."""
    if judgments is None or ids_with_whitespace(judgments) is None:
        return qrels
    return (
        qrels.with_suffix(".csv")
        if qrels.suffix == ".txt"
        else qrels.with_name(qrels.name + ".csv")
    )


def write_judgments(
    judgments: JudgmentFrame, path: str | os.PathLike[str], *, as_csv: bool = False
) -> Path:
    """Write judgments as TREC qrels, or as CSV (``topic_id,doc_id,grade,assessor``).

    Parameters
    ----------
    judgments
        The judgments.
    path
        Output file.
    as_csv
        Write :func:`write_judgments_csv` instead of :func:`write_qrels`.
    """
    return write_judgments_csv(judgments, path) if as_csv else write_qrels(judgments, path)


def write_qrels(judgments: JudgmentFrame, path: str | os.PathLike[str]) -> Path:
    """Write judgments as TREC qrels: ``topic_id 0 doc_id grade`` per line.

    An id that contains whitespace cannot be carried by this whitespace-separated
    format: such judgments are refused with an :class:`InputFormatError` naming the
    first such id (:func:`write_judgments` writes them as CSV instead).

    Parameters
    ----------
    judgments
        The judgments (keys as in ``topic_id``).
    path
        Output file.
    """
    p = Path(path)
    bad = ids_with_whitespace(judgments)
    if bad is not None:
        raise InputFormatError(
            f"{p}: cannot write id {bad!r} into TREC qrels: its whitespace would split the "
            "line into other fields; write the judgments as CSV (write_judgments_csv), "
            "which carries any id"
        )
    t = judgments.table
    lines = (
        t["topic_id"].astype(str) + " 0 " + t["doc_id"].astype(str) + " " + t["grade"].astype(str)
    )
    with writing(p):
        p.write_text("".join(s + "\n" for s in lines.tolist()), encoding="utf-8")
    return p


def write_judgments_csv(judgments: JudgmentFrame, path: str | os.PathLike[str]) -> Path:
    """Write judgments as CSV: ``topic_id,doc_id,grade,assessor``, Unix line ends.

    :func:`sessionval.io.trec.read_judgments_csv` reads it back.

    Parameters
    ----------
    judgments
        The judgments.
    path
        Output file.
    """
    p = Path(path)
    with writing(p):
        judgments.table[["topic_id", "doc_id", "grade", "assessor"]].to_csv(
            p, index=False, lineterminator="\n"
        )
    return p

"""Write a :class:`~sessionval.frame.SessionFrame` in the toolkit's own formats.

* **JSON-lines** (``sessions.jsonl`` + ``study.json``): one nested session per
  line, exactly the :class:`~sessionval.models.Session` model, and the
  :class:`~sessionval.models.Study` header (grade scale, users, topics, systems).
  This is what :func:`sessionval.io.jsonl.load_jsonl` reads back.
* **Flat tables** (Parquet or CSV): one row per result, the layout of
  ``docs/formats.md`` (:func:`sessionval.validate.flat.frame_to_flat`), whose
  ``qrels_id`` column holds the judgment key of each query.
* **Judgments** as TREC qrels (``topic 0 doc grade``), keyed by the judgment key.

Per-session and per-turn judgment keys travel as each query's ``qrels_id`` (in
JSON-lines only where it differs from the session's topic), so a written study
loads and validates with no further step.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Literal, Self

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from ..errors import InputFormatError
from ..frame import JudgmentFrame, SessionFrame
from ..models.study import Study
from ..validate.flat import frame_to_flat
from .header import study_header

__all__ = [
    "FlatFormat",
    "JsonlStream",
    "ParquetStream",
    "WrittenFiles",
    "session_json_line",
    "write_flat",
    "write_jsonl",
    "write_judgments_csv",
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


def _iso(value: Any) -> str | None:
    if value is None or pd.isna(value):
        return None
    ts = pd.Timestamp(value)
    return str(ts.tz_convert("UTC").isoformat().replace("+00:00", "Z"))


def _num(value: Any) -> float | None:
    if value is None or value is pd.NA:
        return None
    f = float(value)
    return None if math.isnan(f) else f


def _int(value: Any) -> int | None:
    f = _num(value)
    return None if f is None else int(f)


def _text(value: Any) -> str | None:
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return None
    return str(value)


def _session_dicts(frame: SessionFrame) -> list[dict[str, Any]]:
    """Nested dicts shaped exactly as the :class:`Session` model (``None`` fields left out)."""
    flat = frame_to_flat(frame)
    ratings = [c for c in frame.sessions.columns if str(c).startswith("rating_")]
    sess_rows = frame.sessions.to_dict("records")
    sessions: dict[str, dict[str, Any]] = {}
    for s in sess_rows:
        d: dict[str, Any] = {
            "session_id": str(s["session_id"]),
            "user_id": str(s["user_id"]),
            "topic_id": str(s["topic_id"]),
            "system_id": str(s["system_id"]),
        }
        for col in ("start_time", "end_time"):
            t = _iso(s[col])
            if t is not None:
                d[col] = t
        rt = {str(c)[len("rating_") :]: _num(s[c]) for c in ratings}
        rt = {k: v for k, v in rt.items() if v is not None}
        if rt:
            d["ratings"] = rt
        d["queries"] = []
        sessions[d["session_id"]] = d
    cur_results: list[dict[str, Any]] = []
    current_key: tuple[str, int] | None = None
    for row in flat.to_dict("records"):
        sid = str(row["session_id"])
        key: tuple[str, int] = (sid, int(row["query_pos"]))
        if key != current_key:
            current: dict[str, Any] = {"position": key[1], "text": _text(row["query_text"]) or ""}
            qrels_key = _text(row["qrels_id"])
            for name, val in (
                ("query_id", _text(row["query_id"])),
                ("time", _iso(row["query_time"])),
                ("scan_depth", _int(row["scan_depth"])),
                # judgment key only where it is not the session's topic (per session / turn)
                ("qrels_id", qrels_key if qrels_key != sessions[sid]["topic_id"] else None),
            ):
                if val is not None:
                    current[name] = val
            cur_results = []
            current["results"] = cur_results
            sessions[sid]["queries"].append(current)
            current_key = key
        rank = _int(row["rank"])
        if rank is None:
            continue
        res: dict[str, Any] = {"rank": rank, "doc_id": str(row["doc_id"])}
        for name in ("url", "title", "snippet"):
            if name in row and _text(row[name]) is not None:
                res[name] = _text(row[name])
        clicks = _int(row.get("clicks"))
        if clicks:
            res["clicks"] = clicks
        dwell = _num(row.get("dwell"))
        if dwell is not None:
            res["dwell"] = dwell
        ug = _int(row.get("user_grade"))
        if ug is not None:
            res["user_grade"] = ug
        cur_results.append(res)
    return list(sessions.values())


def write_jsonl(
    frame: SessionFrame,
    out_dir: str | os.PathLike[str],
    *,
    judgments: JudgmentFrame | None = None,
    name: str = "",
) -> WrittenFiles:
    """Write ``sessions.jsonl`` + ``study.json`` (+ ``qrels.txt`` when judgments are given).

    Parameters
    ----------
    frame
        The sessions to write (not modified).
    out_dir
        Directory to write into (created if missing).
    judgments
        Reference judgments; written as TREC qrels keyed by the judgment key.
    name
        Study name for ``study.json``.

    Returns
    -------
    WrittenFiles
        The paths written.
    """
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise InputFormatError(f"{out}: JSON-lines output must be a directory, got a file")
    out.mkdir(parents=True, exist_ok=True)
    sessions_path = out / "sessions.jsonl"
    with sessions_path.open("w", encoding="utf-8") as fh:
        for d in _session_dicts(frame):
            fh.write(json.dumps(d, ensure_ascii=False))
            fh.write("\n")
    study_path = out / "study.json"
    header = study_header(frame, judgments=judgments, name=name)
    study_path.write_text(
        header.model_dump_json(indent=2, exclude={"sessions", "judgments"}) + "\n", encoding="utf-8"
    )
    qrels_path = None
    if judgments is not None:
        qrels_path = write_qrels(judgments, out / "qrels.txt")
    return WrittenFiles(sessions=sessions_path, study=study_path, qrels=qrels_path)


def write_flat(
    frame: SessionFrame,
    path: str | os.PathLike[str],
    *,
    to: FlatFormat | None = None,
    judgments: JudgmentFrame | None = None,
) -> WrittenFiles:
    """Write the flat one-row-per-result table (with ``qrels_id``) as Parquet or CSV.

    Parameters
    ----------
    frame
        The sessions to write (not modified).
    path
        Output file; the format follows ``to`` or else the suffix (``.parquet``, ``.csv``).
    to
        ``"parquet"`` or ``"csv"``.
    judgments
        Also write them as TREC qrels next to the table (``<stem>.qrels``).
    """
    p = Path(path)
    fmt = to or ("csv" if p.suffix.lower() in (".csv", ".tsv") else "parquet")
    if fmt not in ("parquet", "csv"):
        raise InputFormatError(f"unknown flat format {fmt!r} (allowed: parquet, csv)")
    p.parent.mkdir(parents=True, exist_ok=True)
    flat = frame_to_flat(frame)  # carries each row's qrels_id
    if fmt == "parquet":
        flat.to_parquet(p, index=False)
    else:
        out = flat.copy()
        for c in ("query_time", "session_start", "session_end"):
            out[c] = out[c].map(_iso)
        out.to_csv(p, index=False)
    qrels_path = None
    if judgments is not None:
        qrels_path = write_qrels(judgments, p.with_suffix(".qrels"))
    return WrittenFiles(sessions=p, qrels=qrels_path)


def write_qrels(judgments: JudgmentFrame, path: str | os.PathLike[str]) -> Path:
    """Write judgments as TREC qrels: ``topic_id 0 doc_id grade`` per line.

    Parameters
    ----------
    judgments
        The judgments (keys as in ``topic_id``).
    path
        Output file.
    """
    p = Path(path)
    t = judgments.table
    lines = (
        t["topic_id"].astype(str) + " 0 " + t["doc_id"].astype(str) + " " + t["grade"].astype(str)
    )
    p.write_text("".join(s + "\n" for s in lines.tolist()), encoding="utf-8")
    return p


# --------------------------------------------------------------------------- streaming
# Writers for producers that hold one chunk of a study at a time (the synthetic
# generator streams a million sessions this way); memory stays bounded by a chunk.


def write_study_json(header: Study, path: str | os.PathLike[str]) -> Path:
    """Write a :class:`Study` header as ``study.json`` (indented JSON, UTF-8, final newline).

    The header is written as given: empty ``sessions`` and ``judgments`` appear as ``[]``.

    Parameters
    ----------
    header
        The study header.
    path
        Output file.
    """
    p = Path(path)
    p.write_text(header.model_dump_json(indent=2) + "\n", encoding="utf-8")
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
    judgments.table[["topic_id", "doc_id", "grade", "assessor"]].to_csv(
        p, index=False, lineterminator="\n"
    )
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
        self._fh = self.path.open("w", encoding="utf-8", newline="\n")

    def write(self, sessions: Iterable[Mapping[str, Any]]) -> None:
        """Append one line per session."""
        fh = self._fh
        for session in sessions:
            fh.write(session_json_line(session))
            fh.write("\n")

    def close(self) -> None:
        """Close the file."""
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
            pending.result()

    def close(self) -> None:
        """Finish the queued row group and close the file."""
        try:
            self._wait()
        finally:
            self._pool.shutdown()
            self._writer.close()

"""Whole-session chunks of a frame and their JSON-lines text, built with Arrow string kernels.

:func:`sessionval.io.writers.write_jsonl` and :func:`~sessionval.io.writers.write_flat`
write a frame a chunk of whole sessions at a time (:func:`frame_chunks`); the
JSON-lines text of a chunk (:class:`JsonlText`) is assembled column by column, never
one Python object per row, so converting a large study takes memory of one chunk.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import InputFormatError
from ..frame import SessionFrame
from ..kernels.segments import offsets_from_counts

__all__ = [
    "CHUNK_ROWS",
    "FLAT_INTEGERS",
    "Chunk",
    "JsonlText",
    "arrow_strings",
    "frame_chunks",
    "json_times",
]

#: Result rows per chunk of whole sessions that :func:`write_jsonl` and :func:`write_flat`
#: build at a time (a chunk's text or table is the only copy of the data they make).
CHUNK_ROWS: Final = 100_000
#: Integer columns of the flat layout (nullable: an empty query's row has none).
FLAT_INTEGERS: Final = ("query_pos", "rank", "scan_depth", "clicks", "user_grade")
#: At most this many sessions per chunk (sessions without results weigh little but count).
_CHUNK_SESSIONS: Final = 20_000


def _iso(value: Any) -> str | None:
    if value is None or pd.isna(value):
        return None
    ts = pd.Timestamp(value)
    return str(ts.tz_convert("UTC").isoformat().replace("+00:00", "Z"))


@dataclass(frozen=True)
class Chunk:
    """Row ranges of one chunk of whole sessions in the three frame tables."""

    sessions: slice
    queries: slice
    results: slice


def frame_chunks(frame: SessionFrame, rows: int) -> Iterator[Chunk]:
    """Chunks of whole sessions holding about ``rows`` result rows each, in frame order.

    The frame keeps queries in session order and results in query order (its
    documented layout), so each chunk is three contiguous row ranges.
    """
    n_s = frame.n_sessions
    q_sess = frame.queries["session_id"].cat.codes.to_numpy(np.int64)
    r_query = frame.results["query_idx"].to_numpy(np.int64)
    if np.any(np.diff(q_sess) < 0) or np.any(np.diff(r_query) < 0) or np.any(q_sess < 0):
        raise InputFormatError(
            f"{frame.source}: the frame is not in session order (queries by session, "
            "results by query); build it with the toolkit's loaders"
        )
    q_off = offsets_from_counts(np.bincount(q_sess, minlength=n_s))
    r_off = offsets_from_counts(np.bincount(r_query, minlength=frame.n_queries))
    rows_before = r_off[q_off]  # result rows before each session (and the total)
    start = 0
    while start < n_s:
        stop = int(np.searchsorted(rows_before, rows_before[start] + rows, side="right")) - 1
        stop = min(max(stop, start + 1), start + _CHUNK_SESSIONS, n_s)
        qa, qb = int(q_off[start]), int(q_off[stop])
        yield Chunk(slice(start, stop), slice(qa, qb), slice(int(r_off[qa]), int(r_off[qb])))
        start = stop


# ---- vectorised JSON text (one Arrow string per session, query or result of a chunk)


def _escaped(values: pa.Array) -> pa.Array:
    """JSON string literals of ``values`` (no nulls): ``json.dumps(v, ensure_ascii=False)``."""
    values = values.cast(pa.string())
    text = pc.replace_substring(values, "\\", "\\\\")
    text = pc.replace_substring(text, '"', '\\"')
    control = pc.match_substring_regex(values, r"[\x00-\x1f]")
    if pc.any(control).as_py():  # rare: let json escape control characters its way
        rows = np.flatnonzero(control.to_numpy(zero_copy_only=False))
        out = text.to_pylist()
        for i, v in zip(rows.tolist(), values.take(pa.array(rows)).to_pylist(), strict=True):
            out[i] = json.dumps(v, ensure_ascii=False)[1:-1]
        text = pa.array(out, pa.string())
    return pc.binary_join_element_wise('"', text, '"', "")


def arrow_strings(series: pd.Series) -> pa.Array:
    """A text column as an Arrow string array (nulls kept)."""
    if isinstance(series.dtype, pd.CategoricalDtype):
        codes = series.cat.codes.to_numpy()
        cats = pa.array(series.cat.categories.astype(str).to_numpy(object), pa.string())
        return cats.take(pa.array(codes, mask=codes < 0))
    return pa.array(series.astype(object).to_numpy(), pa.string(), from_pandas=True)


class _CategoryText:
    """A categorical id column's JSON literals, escaped once per category for every chunk."""

    def __init__(self, series: pd.Series) -> None:
        self.codes = series.cat.codes.to_numpy()
        self.raw = pa.array(series.cat.categories.astype(str).to_numpy(object), pa.string())
        self.json = _escaped(self.raw)

    def take(self, rows: slice | np.ndarray, *, raw: bool = False) -> pa.Array:
        """The literals (or with ``raw`` the ids as written) of ``rows``."""
        codes = self.codes[rows]
        return (self.raw if raw else self.json).take(pa.array(codes, mask=codes < 0))


def _json_text(series: pd.Series) -> pa.Array:
    """JSON string literals of a text column (nulls stay null)."""
    s = arrow_strings(series)
    valid = pc.is_valid(s)
    return pc.if_else(valid, _escaped(s.fill_null("")), pa.nulls(len(s), pa.string()))


def _json_ints(values: np.ndarray, valid: np.ndarray | None = None) -> pa.Array:
    return pa.array(values.astype(np.int64), mask=None if valid is None else ~valid).cast(
        pa.string()
    )


def _json_floats(values: np.ndarray) -> pa.Array:
    """Shortest text that reads back as the same value (float32 stays float32), ``.0`` kept."""
    text = pa.array(values, mask=~np.isfinite(values)).cast(pa.string())
    plain = pc.invert(pc.match_substring_regex(text, "[.eE]"))
    return pc.if_else(plain, pc.binary_join_element_wise(text, ".0", ""), text)


def json_times(series: pd.Series) -> pa.Array:
    """ISO 8601 UTC with ``Z`` (fraction only when non-zero, as ``Timestamp.isoformat``)."""
    ns = series.to_numpy(dtype="datetime64[ns]", na_value=np.datetime64("NaT"))
    valid = ~np.isnat(ns)
    secs = np.datetime_as_string(ns.astype("datetime64[s]"), unit="s").astype(object)
    frac = ns.view(np.int64) % 1_000_000_000
    micro = pc.utf8_lpad(pa.array(frac // 1000).cast(pa.string()), 6, "0")
    nano = pc.utf8_lpad(pa.array(frac).cast(pa.string()), 9, "0")
    fraction = pc.if_else(
        pa.array(frac == 0),
        "",
        pc.binary_join_element_wise(".", pc.if_else(pa.array(frac % 1000 == 0), micro, nano), ""),
    )
    text = pc.binary_join_element_wise('"', pa.array(secs, pa.string()), fraction, 'Z"', "")
    return pc.if_else(pa.array(valid), text, pa.nulls(len(ns), pa.string()))


def _field(name: str, value: pa.Array, present: pa.Array | np.ndarray | None = None) -> pa.Array:
    """``,"name":value`` where the value is present (not null, and ``present``), else ``""``."""
    ok = pc.is_valid(value)
    if present is not None:
        ok = pc.and_(ok, pa.array(present))
    joined = pc.binary_join_element_wise(f",{json.dumps(name)}:", value.fill_null(""), "")
    return pc.if_else(ok, joined, "")


def _join(*parts: pa.Array | str) -> pa.Array:
    return pc.binary_join_element_wise(*parts, "")


def _group(items: pa.Array, offsets: np.ndarray, sep: str = ",") -> pa.Array:
    """Join ``items[offsets[i]:offsets[i + 1]]`` with ``sep`` for each ``i`` (a JSON array body)."""
    lists = pa.ListArray.from_arrays(pa.array(offsets, pa.int32()), items)
    return pc.binary_join(lists, sep)


class JsonlText:
    """Builds the JSON-lines text of chunks of a frame, one vectorised pass per chunk.

    Each line is the :class:`~sessionval.models.Session` model, compact, fields in the
    model's order and those unknown left out (as :func:`session_json_line`).
    """

    def __init__(self, frame: SessionFrame) -> None:
        self.frame = frame
        s, q, r = frame.sessions, frame.queries, frame.results
        self.ids = {
            c: _CategoryText(s[c]) for c in ("session_id", "user_id", "topic_id", "system_id")
        }
        self.doc = _CategoryText(r["doc_id"])
        self.qrels = _CategoryText(q["qrels_id"])
        self.q_sess = q["session_id"].cat.codes.to_numpy(np.int64)
        self.r_query = r["query_idx"].to_numpy(np.int64)
        self.ratings = [c for c in s.columns if str(c).startswith("rating_")]

    def chunk(self, c: Chunk) -> pa.Array:
        """The lines of one chunk's sessions, joined into one string (with final newlines)."""
        s, q, r = (
            self.frame.sessions.iloc[c.sessions],
            self.frame.queries.iloc[c.queries],
            self.frame.results.iloc[c.results],
        )
        # results
        rv = r["user_grade"].to_numpy(np.float64)
        clicks = r["clicks"].to_numpy(np.int64)
        dwell = r["dwell"].to_numpy()
        parts: list[pa.Array | str] = [
            '{"rank":',
            _json_ints(r["rank"].to_numpy()),
            ',"doc_id":',
            self.doc.take(c.results),
        ]
        for name in ("url", "title", "snippet"):
            if name in r.columns:
                parts.append(_field(name, _json_text(r[name])))
        parts.append(_field("clicks", _json_ints(clicks), clicks != 0))
        parts.append(_field("dwell", _json_floats(dwell)))
        parts.append(
            _field("user_grade", _json_ints(np.nan_to_num(rv), ~np.isnan(rv)), ~np.isnan(rv))
        )
        parts.append("}")
        results = _join(*parts)
        # queries: their results, grouped by query
        q_rows = self.r_query[c.results] - c.queries.start
        r_off = offsets_from_counts(np.bincount(q_rows, minlength=len(q)))
        q_sess = self.q_sess[c.queries]
        topic = (
            self.ids["topic_id"].take(q_sess, raw=True)
            if len(q_sess)
            else pa.array([], pa.string())
        )
        qrels_raw = self.qrels.take(c.queries, raw=True)
        own_key = pc.fill_null(pc.not_equal(qrels_raw, topic), True)
        scan = q["scan_depth"]
        scan_valid = scan.notna().to_numpy()
        queries = _join(
            '{"position":',
            _json_ints(q["query_pos"].to_numpy()),
            ',"text":',
            _json_text(q["text"]).fill_null('""'),
            _field("query_id", _json_text(q["query_id"])),
            _field("time", json_times(q["time"])),
            _field(
                "scan_depth",
                _json_ints(scan.fillna(0).to_numpy(np.int64), scan_valid),
            ),
            _field("qrels_id", self.qrels.take(c.queries), own_key),
            ',"results":[',
            _group(results, r_off),
            "]}",
        )
        # sessions: their queries, grouped by session
        s_rows = q_sess - c.sessions.start
        q_off = offsets_from_counts(np.bincount(s_rows, minlength=len(s)))
        head: list[pa.Array | str] = []
        for i, name in enumerate(("session_id", "user_id", "topic_id", "system_id")):
            head += [("{" if i == 0 else ",") + f'"{name}":', self.ids[name].take(c.sessions)]
        head.append(_field("start_time", json_times(s["start_time"])))
        head.append(_field("end_time", json_times(s["end_time"])))
        if self.ratings:
            # each rating as ',"name":value' or "" when the session has none; never a join
            # that skips nulls: Arrow drops the rows where every argument is null
            inner = _join(
                *(
                    _field(str(col)[len("rating_") :], _json_floats(s[col].to_numpy(np.float64)))
                    for col in self.ratings
                )
            )
            some = pc.greater(pc.utf8_length(inner), 0)
            body = pc.utf8_slice_codeunits(inner, 1)  # without the first comma
            head.append(pc.if_else(some, _join(',"ratings":{', body, "}"), ""))
        lines = _join(*head, ',"queries":[', _group(queries, q_off), "]}\n")
        return _group(lines, np.array([0, len(lines)]), "")  # one string: the chunk's lines

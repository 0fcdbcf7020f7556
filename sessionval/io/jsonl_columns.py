"""Accepted JSON-lines sessions as compact columns, read by the flat-table loader.

:func:`~sessionval.io.jsonl.load_jsonl` validates a batch of lines through the
:class:`~sessionval.models.session.Session` model, then hands the batch to
:class:`JsonlBatches`, which keeps each value once at its level: session ids, times
and ratings once per session, query text, time and scan depth once per query,
and only rank, document, clicks, dwell, grade (and url, title, snippet) per result
row, with text dictionary-encoded.  The batch's Python objects are then dropped.
:class:`JsonlColumns` presents the whole as a flat table
(:class:`~sessionval.validate.sources.Columns`) and expands a column to one value
per row only when the loader asks for it, so no wide flat table of every row is
ever held (issue 10, item 7).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any, Final, cast

import numpy as np
import numpy.typing as npt
import pandas as pd

from ..frame import FLAT_COLUMNS
from ..models.session import Session
from ..validate.sources import dictionary_to_categorical

__all__ = ["JsonlBatches", "JsonlColumns"]

#: flat column -> field of the Session / Query / Result model, where the names differ
MODEL_FIELD: Final = {
    "session_start": "start_time",
    "session_end": "end_time",
    "query_pos": "position",
    "query_text": "text",
    "query_time": "time",
}
_LEVEL: Final = {c.name: c.level for c in FLAT_COLUMNS}
_NAMES: Final = {
    level: tuple(c.name for c in FLAT_COLUMNS if c.level == level)
    for level in ("session", "query", "result")
}
#: flat columns holding text (ids, query text, url, title, snippet)
_TEXT: Final = frozenset(c.name for c in FLAT_COLUMNS if c.kind in ("id", "text"))
#: pandas dtypes of the other flat columns (integers come in the width they are stored in)
_DTYPES: Final = {
    **dict.fromkeys(("query_pos", "rank", "clicks", "scan_depth", "user_grade"), "Int64"),
    "dwell": "Float64",
    **dict.fromkeys(("session_start", "session_end", "query_time"), "datetime64[ns, UTC]"),
}
_INTS: Final = frozenset(n for n, d in _DTYPES.items() if d == "Int64")


def _arrow_type(name: str) -> Any:
    import pyarrow as pa

    if name in _TEXT:
        return pa.string()
    if name in _INTS:
        return pa.int64()
    if name in ("session_start", "session_end", "query_time"):
        return pa.timestamp("us", tz="UTC")
    return pa.float64()  # dwell, ratings


def _to_arrow(name: str, values: list[Any]) -> Any:
    """One batch of a column: text dictionary-encoded, a column without a value costs nothing.

    Times are microseconds (Python's ``datetime``), or nanoseconds when the batch holds a
    time with digits beyond them (a ``pandas.Timestamp``: :func:`with_nanoseconds`) and
    every time of the batch fits the nanosecond range (one outside it is a problem the
    loader reports with its value, which a nanosecond column could not hold).
    """
    import pyarrow as pa

    if all(v is None for v in values):
        return pa.nulls(len(values))
    kind = _arrow_type(name)
    if pa.types.is_timestamp(kind) and any(isinstance(v, pd.Timestamp) for v in values):
        try:
            return pa.array(values, type=pa.timestamp("ns", tz="UTC"))
        except (pa.ArrowInvalid, OverflowError):
            pass  # a time outside 1677..2262: microseconds, and the loader rejects that one
    arr = pa.array(values, type=kind)
    if name in _TEXT:
        enc = arr.dictionary_encode()
        return pa.DictionaryArray.from_arrays(_narrow(enc.indices), enc.dictionary)
    return _narrow(arr) if name in _INTS else arr


def _narrow(arr: Any) -> Any:
    """Integers in the narrowest type that holds them (a rank or a click count in 1-2 bytes)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    bounds = pc.min_max(arr)
    low, high = bounds["min"].as_py(), bounds["max"].as_py()
    if low is None:
        return arr
    for bits in (8, 16, 32):
        if -(2 ** (bits - 1)) <= low and high < 2 ** (bits - 1):
            return arr.cast(pa.type_for_alias(f"int{bits}"))
    return arr


class JsonlBatches:
    """The accepted sessions of a JSON-lines log, a batch at a time, as Arrow columns.

    Each level keeps its own columns: per session (ids, times, ratings, the source
    line, the number of flat rows and of queries), per query (position, text, time,
    scan depth, ids, the number of flat rows) and per flat row (the result columns;
    a query without results is one row of nulls, as in the flat layout).
    """

    def __init__(self) -> None:
        self.chunks: dict[str, list[Any]] = {
            name: [] for level in ("session", "query", "result") for name in _NAMES[level]
        }
        self.ratings: list[dict[str, Any]] = []  # per batch: rating name -> its column
        self.batch_sessions: list[int] = []
        self.lines: list[npt.NDArray[np.int64]] = []
        self.s_rows: list[npt.NDArray[np.int64]] = []
        self.s_queries: list[npt.NDArray[np.int64]] = []
        self.q_rows: list[npt.NDArray[np.int64]] = []

    def add(self, sessions: Sequence[Session], lines: Sequence[int]) -> None:
        """Append a batch of accepted sessions (read from ``lines``)."""
        cols: dict[str, list[Any]] = {name: [] for name in self.chunks}
        s_cols = [(cols[n], MODEL_FIELD.get(n, n)) for n in _NAMES["session"]]
        q_cols = [(cols[n], MODEL_FIELD.get(n, n)) for n in _NAMES["query"]]
        r_cols = [(cols[n], n) for n in _NAMES["result"]]
        s_rows: list[int] = []
        q_rows: list[int] = []
        for s in sessions:
            for out, name in s_cols:
                out.append(getattr(s, name))
            rows = 0
            for q in s.queries:
                for out, name in q_cols:
                    out.append(getattr(q, name))
                res = q.results
                if res:
                    for out, name in r_cols:
                        out.extend([getattr(r, name) for r in res])
                else:  # a query without results: one row without a result
                    for out, _ in r_cols:
                        out.append(None)
                n = len(res) or 1
                q_rows.append(n)
                rows += n
            s_rows.append(rows)
        for name, values in cols.items():
            self.chunks[name].append(_to_arrow(name, values))
        names = sorted({k for s in sessions for k in s.ratings})
        self.ratings.append(
            {k: _to_arrow(f"rating_{k}", [s.ratings.get(k) for s in sessions]) for k in names}
        )
        self.batch_sessions.append(len(sessions))
        self.lines.append(np.asarray(lines, dtype=np.int64))
        self.s_rows.append(np.asarray(s_rows, dtype=np.int64))
        self.s_queries.append(np.asarray([len(s.queries) for s in sessions], dtype=np.int64))
        self.q_rows.append(np.asarray(q_rows, dtype=np.int64))

    def session_ids(self) -> pd.Series:
        """The id of every accepted session, in file order."""
        return pd.Series(_combine("session_id", self.chunks["session_id"]).to_pandas())

    def session_lines(self) -> npt.NDArray[np.int64]:
        """The line of every accepted session, in file order."""
        return _concat(self.lines)

    def columns(self, source: str, keep: npt.NDArray[np.bool_] | None = None) -> JsonlColumns:
        """The sessions as a flat-table column source (only the sessions in ``keep``, if given).

        The batches are handed over: this object is empty afterwards.
        """
        s_rows, s_queries, q_rows = map(_concat, (self.s_rows, self.s_queries, self.q_rows))
        lines = _concat(self.lines)
        levels: dict[str, Any] = {}
        for name, chunks in self.chunks.items():
            levels[name] = _combine(name, chunks)
            chunks.clear()
        names = sorted({k for batch in self.ratings for k in batch})
        for k in names:
            parts = [
                batch.get(k) if k in batch else _nulls(n)
                for batch, n in zip(self.ratings, self.batch_sessions, strict=True)
            ]
            levels[f"rating_{k}"] = _combine(f"rating_{k}", parts)
        self.ratings.clear()
        if keep is not None:
            import pyarrow as pa

            q_keep = np.repeat(keep, s_queries)
            r_keep = np.repeat(q_keep, q_rows)
            masks = {"session": keep, "query": q_keep, "result": r_keep}
            for name in list(levels):
                mask = masks[_LEVEL.get(name, "session")]
                levels[name] = levels[name].filter(pa.array(mask))
                if isinstance(levels[name], pa.ChunkedArray) and name in _TEXT:
                    # encoded again: categories in order of first appearance among the rows kept
                    text = pa.string()
                    levels[name] = pa.chunked_array(
                        [c.cast(text).dictionary_encode() for c in levels[name].chunks],
                        type=pa.dictionary(pa.int32(), text),
                    )
            s_rows, q_rows, lines = s_rows[keep], q_rows[q_keep], lines[keep]
        return JsonlColumns(source, levels, [f"rating_{k}" for k in names], s_rows, q_rows, lines)


def _concat(parts: list[npt.NDArray[np.int64]]) -> npt.NDArray[np.int64]:
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)


def _nulls(n: int) -> Any:
    import pyarrow as pa

    return pa.nulls(n)


def _combine(name: str, chunks: list[Any]) -> Any:
    """The batches of a column as one Arrow array (null only when no batch had a value)."""
    import pyarrow as pa

    typed = [c for c in chunks if not pa.types.is_null(c.type)]
    if not typed:
        return pa.nulls(sum(len(c) for c in chunks))
    if name in _TEXT:
        # each batch has its own dictionary: decode them to one string column; text kept per
        # row (documents, url, title, snippet) stays chunked, to be unified when read
        if _LEVEL.get(name) == "result":
            # one index type for all (each batch's codes are as narrow as it allows)
            index = max((c.type.index_type for c in typed), key=lambda t: t.bit_width)
            return pa.chunked_array(
                [
                    pa.DictionaryArray.from_arrays(c.indices.cast(index), c.dictionary)
                    if not pa.types.is_null(c.type)
                    else _null_dictionary(len(c), index)
                    for c in chunks
                ]
            )
        text = pa.string()
        parts = [
            c.cast(text) if not pa.types.is_null(c.type) else pa.nulls(len(c), text) for c in chunks
        ]
        return pa.concat_arrays(parts)
    # the widest type of the batches (integers are stored as narrow as each batch allows)
    target = max((c.type for c in typed), key=lambda t: getattr(t, "bit_width", 0))
    if pa.types.is_timestamp(target) and len({c.type for c in typed}) > 1:
        # microsecond and nanosecond batches: nanoseconds, unless a time outside their range
        # (rejected by the loader) needs microseconds
        target = pa.timestamp("ns", tz="UTC")
        try:
            return pa.concat_arrays(
                [c.cast(target) if not pa.types.is_null(c.type) else pa.nulls(len(c), target)
                 for c in chunks]
            )  # fmt: skip
        except pa.ArrowInvalid:
            target = pa.timestamp("us", tz="UTC")
    return pa.concat_arrays(
        [
            c.cast(target) if not pa.types.is_null(c.type) else pa.nulls(len(c), target)
            for c in chunks
        ]
    )


def _null_dictionary(n: int, index: Any = None) -> Any:
    import pyarrow as pa

    codes = pa.nulls(n, index if index is not None else pa.int8())
    return pa.DictionaryArray.from_arrays(codes, pa.array([], pa.string()))


class JsonlColumns:
    """A :class:`~sessionval.validate.sources.Columns` view of the accepted sessions.

    A column of the session or query level is expanded to one value per flat row
    (or taken at the rows asked for) when read; text comes as categoricals,
    integers as masked arrays, times as UTC timestamps.
    """

    def __init__(
        self,
        source: str,
        levels: dict[str, Any],
        ratings: list[str],
        s_rows: npt.NDArray[np.int64],
        q_rows: npt.NDArray[np.int64],
        lines: npt.NDArray[np.int64],
    ) -> None:
        self.source = source
        self._levels = levels
        self._names = [c.name for c in FLAT_COLUMNS] + ratings
        self._s_rows = s_rows
        self._q_rows = q_rows
        self._lines = lines
        self._rows = int(s_rows.sum())

    @property
    def names(self) -> list[str]:
        """Column names."""
        return list(self._names)

    def __len__(self) -> int:
        return self._rows

    def __contains__(self, name: object) -> bool:
        return name in self._names

    def row_lines(self) -> npt.NDArray[np.integer[Any]]:
        """The source line of each flat row (int32 when every line number fits: half the memory)."""
        lines = self._lines
        if not len(lines) or int(lines.max()) <= np.iinfo(np.int32).max:
            lines = lines.astype(np.int32)
        return np.repeat(lines, self._s_rows)

    def _owner(self, level: str, rows: npt.NDArray[np.int64] | None) -> Any:
        """The session or query of each of ``rows`` (``None``: every row)."""
        counts = self._s_rows if level == "session" else self._q_rows
        if rows is None:
            return np.repeat(np.arange(len(counts), dtype=np.int32), counts)
        starts = np.cumsum(counts) - counts
        return np.searchsorted(starts, np.asarray(rows, dtype=np.int64), side="right") - 1

    def _values(self, name: str, rows: npt.NDArray[np.int64] | None) -> Any:
        import pyarrow as pa

        values = self._levels[name]
        level = _LEVEL.get(name, "session")  # ratings are per session
        if level == "result":
            if rows is None:
                return values
            if name in _TEXT:
                return values  # taken after decoding (see take)
            return values.take(pa.array(rows, type=pa.int64()))
        at = self._owner(level, rows)
        if name in _TEXT and not pa.types.is_null(values.type):
            enc = values.dictionary_encode()
            return pa.DictionaryArray.from_arrays(enc.indices.take(pa.array(at)), enc.dictionary)
        return values.take(pa.array(at))

    def column(self, name: str) -> pd.Series:
        """The whole column, one value per flat row."""
        return _series(name, self._values(name, None))

    def release(self, keep: Collection[str]) -> None:
        """Free the columns not in ``keep``: the loader reads no other from now on."""
        for name in [n for n in self._levels if n not in keep]:
            del self._levels[name]

    def take(self, name: str, rows: npt.NDArray[np.int64]) -> pd.Series:
        """The column at ``rows`` only."""
        if _LEVEL.get(name) == "result" and name in _TEXT:
            import pyarrow as pa

            if pa.types.is_null(self._levels[name].type):  # no row has a value: nothing to take
                return _series(name, pa.nulls(len(rows)))
            whole = _series(name, self._levels[name])
            out: pd.Series = whole.iloc[np.asarray(rows, dtype=np.int64)].reset_index(drop=True)
            return out
        return _series(name, self._values(name, rows))


def _series(name: str, col: Any) -> pd.Series:
    """An Arrow column as the pandas series the flat loader expects."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if not isinstance(col, pa.ChunkedArray):
        col = pa.chunked_array([col])
    dtype = _DTYPES.get(name, "float64" if name.startswith("rating_") else "object")
    if name in _TEXT:
        if pa.types.is_null(col.type):
            col = pa.chunked_array([_null_dictionary(len(col))])
        return pd.Series(dictionary_to_categorical(col))
    if pa.types.is_null(col.type):  # no session had a value
        return pd.Series([None] * len(col), dtype=cast(Any, dtype))
    if dtype == "Int64":
        # masked and exact, in the width the values were stored in (a rank or a click count in
        # 1-2 bytes, as a Parquet column gives them): no int64 or float64 copy per row
        values = pc.fill_null(col, 0).to_numpy()
        mask = pc.is_null(col).to_numpy()
        return pd.Series(pd.arrays.IntegerArray(values, mask), copy=False)
    if dtype == "Float64":
        values = pc.fill_null(col, 0.0).to_numpy()  # a view of Arrow's buffer: read, not copied
        mask = pc.is_null(col).to_numpy()
        return pd.Series(pd.arrays.FloatingArray(values.astype(np.float64, copy=False), mask))
    out: pd.Series = col.to_pandas()
    return out

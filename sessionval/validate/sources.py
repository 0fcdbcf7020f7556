"""Column access for the flat-table loader, over a DataFrame or a Parquet file.

The loader needs every row of a few columns (session, query position, rank,
document) but only one value per query or session of the others (query text,
times, ratings).  Reading a million-session Parquet file into one DataFrame
would hold every column for every row at once (tens of GB); a
:class:`ParquetColumns` source reads one column at a time, on demand, and takes
only the rows asked for, so peak memory stays near the size of the result.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any, Final, Protocol

import numpy as np
import numpy.typing as npt
import pandas as pd

from ..errors import InputFormatError, ParseError
from ..frame import FLAT_COLUMNS, FLAT_REQUIRED

__all__ = [
    "Columns",
    "FrameColumns",
    "ParquetColumns",
    "dictionary_to_categorical",
]

#: the flat-table columns every loader needs, read whatever ``columns`` asks for
_REQUIRED: Final = frozenset(FLAT_REQUIRED)
#: the columns the loader reads on every row (the others only at a query's or session's first)
_ROW_COLUMNS: Final = _REQUIRED | {
    c.name for c in FLAT_COLUMNS if c.level == "result" and c.kind != "text"
}
#: ids that differ on almost every row (documents): a dictionary read of them hashes every row
#: of the file, so a top-X read decodes them as plain strings and encodes only the rows kept
_PER_ROW_IDS: Final = frozenset(
    c.name for c in FLAT_COLUMNS if c.level == "result" and c.kind == "id"
)


class Columns(Protocol):
    """What the loader reads from a flat table."""

    source: str

    @property
    def names(self) -> list[str]:
        """Column names."""
        ...

    def __len__(self) -> int: ...

    def __contains__(self, name: object) -> bool: ...

    def column(self, name: str) -> pd.Series:
        """The whole column (text columns as categoricals)."""
        ...

    def take(self, name: str, rows: npt.NDArray[np.int64]) -> pd.Series:
        """The column at ``rows`` only, index reset."""
        ...

    def release(self, keep: Collection[str]) -> None:
        """The loader reads no column but ``keep`` from now on: a source may free the others."""
        ...


class FrameColumns:
    """A :class:`Columns` view of an in-memory DataFrame."""

    def __init__(self, frame: pd.DataFrame, *, source: str = "<frame>") -> None:
        self._df = frame.reset_index(drop=True)
        self.source = source

    @property
    def names(self) -> list[str]:
        """Column names."""
        return [str(c) for c in self._df.columns]

    def __len__(self) -> int:
        return len(self._df)

    def __contains__(self, name: object) -> bool:
        return name in self._df.columns

    def column(self, name: str) -> pd.Series:
        """The whole column."""
        col: pd.Series = self._df[name]
        return col

    def take(self, name: str, rows: npt.NDArray[np.int64]) -> pd.Series:
        """The column at ``rows``."""
        col: pd.Series = self._df[name].iloc[rows].reset_index(drop=True)
        return col

    def release(self, keep: Collection[str]) -> None:
        """Nothing to free: the DataFrame is the caller's."""


class ParquetColumns:
    """A :class:`Columns` source that reads a Parquet file one column at a time.

    Text columns are read dictionary-encoded and become categoricals whose
    categories hold only the values used (see :func:`dictionary_to_categorical`).

    Parameters
    ----------
    path
        The flat Parquet file.
    max_rank
        Read only result rows with ``rank <= max_rank`` (and the empty-result rows):
        a session evaluation over the top X needs nothing deeper.  The study's rules
        are then checked on the rows read.
    columns
        Read only these columns besides the required ones (``None``: all); a column
        never read costs no decoding.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        max_rank: int | None = None,
        columns: Sequence[str] | None = None,
    ) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        self.path = Path(path)
        self.source = str(path)
        try:
            schema = pq.read_schema(self.path)
        except (pa.ArrowException, OSError, ValueError) as exc:  # damaged metadata: also ValueError
            raise ParseError(f"{self.path}: not a readable Parquet file ({exc})") from exc
        self._names = [n for n in schema.names if columns is None or n in columns or n in _REQUIRED]
        _check_schema(self.path, schema, self._names)
        self._text = {n for n in self._names if _is_text(schema.field(n).type)}
        # binary ids and texts are decoded as UTF-8 when read (an invalid byte is located)
        self._binary = {n for n in self._names if _is_binary(schema.field(n).type)}
        try:
            # every text column is read dictionary-encoded: values repeated on each row of a
            # query or session (ids, query text) never become one Python string per row
            self._file = pq.ParquetFile(self.path, read_dictionary=sorted(self._text))
        except (pa.ArrowException, OSError, ValueError) as exc:
            raise ParseError(f"{self.path}: not a readable Parquet file ({exc})") from exc
        self._schema = schema
        self._keep: Any = None
        self._unique: set[str] = set()  # columns encoded here: one dictionary, distinct values
        self._max_rank = max_rank
        self._cache: dict[str, Any] = {}
        if max_rank is not None:
            if "rank" not in schema.names:
                raise ParseError(f"{self.path}: max_rank needs a 'rank' column")
            # the columns read on every row, in one read of the row groups that may hold
            # rows of rank <= X, filtered batch by batch: only the rows kept are ever held
            whole = [n for n in self._names if n in _ROW_COLUMNS]
            table = self._read_top(whole)
            self._cache = {n: table.column(n) for n in whole}
            self._rows = int(table.num_rows)
        else:
            self._rows = int(self._file.metadata.num_rows)

    @property
    def names(self) -> list[str]:
        """Column names."""
        return list(self._names)

    def __len__(self) -> int:
        return self._rows

    def __contains__(self, name: object) -> bool:
        return name in self._names

    def _is_text(self, name: str) -> bool:
        return name in self._text or name in self._binary

    def _read_table(self, names: Sequence[str], *, rank_filter: bool) -> Any:
        """Columns ``names`` of the file (rows with ``rank <= max_rank`` or no rank, if asked)."""
        import pyarrow as pa
        import pyarrow.compute as pc
        import pyarrow.parquet as pq

        text = [n for n in names if n in self._text]
        where = None
        if rank_filter:
            where = (pc.field("rank") <= self._max_rank) | pc.field("rank").is_null()
        try:
            # read_table (the dataset reader: row groups in parallel, pre-buffered) decodes a
            # column about three times faster than ParquetFile.read
            return pq.read_table(
                self.path, columns=list(names), read_dictionary=text or None, filters=where
            )
        except (pa.ArrowException, OSError, ValueError) as exc:
            what = f"column {names[0]!r}" if len(names) == 1 else f"columns {list(names)}"
            raise ParseError(
                f"{self.path}: {what} cannot be read ({exc}); the file may be truncated or "
                "corrupt: write it again"
            ) from exc

    def _read_top(self, names: Sequence[str]) -> Any:
        """Columns ``names`` at the rows with ``rank <= max_rank`` or no rank.

        The rank's row-group statistics decide what is decoded (:func:`rank_row_groups`):
        a group whose ranks all exceed X is skipped unread (the top-first layout's deep
        groups), a group whose ranks are all within X is read whole, and only the others
        are filtered, with one vectorised mask per batch.  Arrow's filtered dataset read
        evaluates its filter on every row group and costs about twice a full read of the
        same columns on a file in session order.  Document ids are decoded as plain
        strings (:data:`_PER_ROW_IDS`): a dictionary read would hash every row of the file
        (three times a plain read on lists 100 deep with distinct ids); the categorical is
        built from the rows kept.  Without usable statistics (a rank stored as text, a
        writer that wrote none) the filtered read of :meth:`_read_table` is used.
        """
        import pyarrow as pa
        import pyarrow.compute as pc
        import pyarrow.dataset as ds

        max_rank = self._max_rank
        groups = None if max_rank is None else rank_row_groups(self._file.metadata, max_rank)
        if groups is None:
            return self._read_table(names, rank_filter=True)
        read, whole = groups
        dictionary = [n for n in names if n in self._text and n not in _PER_ROW_IDS]
        try:
            fmt = ds.ParquetFileFormat(
                read_options=ds.ParquetReadOptions(dictionary_columns=dictionary),
                default_fragment_scan_options=ds.ParquetFragmentScanOptions(pre_buffer=True),
            )
            fragment = next(iter(ds.dataset(self.path, format=fmt).get_fragments()))
            scanner = ds.Scanner.from_fragment(
                fragment.subset(row_group_ids=read), columns=list(names), use_threads=True
            )
            batches = []
            for batch in scanner.to_batches():
                if not whole:
                    rank = batch.column("rank")
                    batch = batch.filter(pc.or_kleene(pc.less_equal(rank, max_rank),
                                                      pc.is_null(rank)))  # fmt: skip
                batches.append(batch)
            table = pa.Table.from_batches(batches, schema=scanner.projected_schema)
            for n in names:
                if n in self._text and n in _PER_ROW_IDS:
                    # one hash of the rows kept; the chunks share one dictionary of
                    # distinct values, so it is not hashed again (dictionary_to_categorical)
                    i = table.schema.get_field_index(n)
                    table = table.set_column(i, n, pc.dictionary_encode(table.column(i)))
                    self._unique.add(n)
            return table
        except (pa.ArrowException, OSError, ValueError) as exc:
            raise ParseError(
                f"{self.path}: columns {list(names)} cannot be read ({exc}); the file may be "
                "truncated or corrupt: write it again"
            ) from exc

    def _read(self, name: str) -> Any:
        column = self._read_raw(name)
        if len(column) != self._rows:
            raise ParseError(
                f"{self.path}: column {name!r} has {len(column)} values but the file has "
                f"{self._rows} rows; the file is damaged: write it again"
            )
        return _decode_binary(self.path, name, column) if name in self._binary else column

    def _read_raw(self, name: str) -> Any:
        if name in self._cache:
            return self._cache.pop(name)  # read once by the loader: freed after use
        column = self._read_table([name], rank_filter=False).column(0)
        if self._max_rank is None:
            return column
        if self._keep is None:
            import pyarrow.compute as pc

            # a column read at a few rows only (query text, times): the mask of the kept rows
            rank = self._read_table(["rank"], rank_filter=False).column(0)
            self._keep = pc.or_kleene(pc.less_equal(rank, self._max_rank), pc.is_null(rank))
        return column.filter(self._keep)

    def column(self, name: str) -> pd.Series:
        """The whole column (text as categorical, integers with nulls as masked arrays)."""
        col = self._read(name)
        if self._is_text(name):
            cat = dictionary_to_categorical(
                col, source=f"{self.path}: column {name!r}", unique=name in self._unique
            )
            return pd.Series(cat)
        # masked integers: a nullable int column never becomes a float64 copy
        masked = _masked_integers(col)
        if masked is not None:
            return pd.Series(masked, copy=False)
        out: pd.Series = col.to_pandas(types_mapper=_masked_int)
        return out

    def entry_codes(self, name: str) -> tuple[npt.NDArray[np.int32], Any] | None:
        """A text column as codes into the concatenation of its row groups' dictionaries.

        ``(codes, dictionary)``: one int32 code per row (``-1``: null) and the Arrow
        array of the dictionaries, one after the other in the order of the row groups.
        Equal codes are equal values; different codes may still be equal values (two row
        groups, or a dictionary listing a value twice).  No string is hashed: a check that
        one value repeats on many rows compares codes and looks at values only where the
        codes change.  ``None`` when the column is not a dictionary-encoded string column
        or a code is outside its dictionary (:meth:`column` then reports it).
        """
        import pyarrow as pa

        if name not in self._text:
            return None
        col = self._read(name)
        groups = _dictionary_groups(col)
        codes = np.empty(self._rows, dtype=np.int32)
        pos, base = 0, 0
        if sum(len(d) for d, _ in groups) >= np.iinfo(np.int32).max:
            return None  # codes would not fit in 32 bits
        for d, parts in groups:
            for idx in parts:
                top = int(idx.max()) if len(idx) else 0
                if top > len(d) or (len(idx) and int(idx.min()) < 0):
                    return None
                out = codes[pos : pos + len(idx)]
                np.add(idx, base, out=out, casting="unsafe")
                if top == len(d):
                    out[idx == top] = -1  # the null sentinel
                pos += len(idx)
            base += len(d)
        del col
        if pos != self._rows:
            return None
        if not groups:
            return codes, pa.array([], pa.string())
        return codes, pa.concat_arrays([d for d, _ in groups])

    def take(self, name: str, rows: npt.NDArray[np.int64]) -> pd.Series:
        """The column at ``rows`` (read whole, taken, then freed)."""
        col = _take_chunked(self._read(name), rows)
        if self._is_text(name):
            return pd.Series(dictionary_to_categorical(col, source=f"{self.path}: column {name!r}"))
        out: pd.Series = col.to_pandas()
        return out

    def release(self, keep: Collection[str]) -> None:
        """Nothing to free: columns are read on demand, and those read ahead are freed on use."""


def rank_row_groups(metadata: Any, max_rank: int) -> tuple[list[int], bool] | None:
    """The row groups a read of ``rank <= max_rank`` (or no rank) must decode, from statistics.

    Returns ``(groups, whole)``: the groups that may hold such rows, in file order, and
    whether every one of them holds nothing else (then no row needs filtering).  A group
    whose smallest rank exceeds ``max_rank`` and which has no missing rank is left out;
    one whose largest rank is at most ``max_rank`` is kept whole.  ``None`` when a group
    has no usable statistics or the rank is not stored as integers: the caller filters
    every row.

    Examples
    --------
    >>> import pyarrow as pa, pyarrow.parquet as pq, io
    >>> buf = io.BytesIO()
    >>> t = pa.table({"rank": pa.array([1, 2, 3, 4, 5, 6], pa.int32())})
    >>> pq.write_table(t, buf, row_group_size=2)
    >>> f = pq.ParquetFile(buf)
    >>> rank_row_groups(f.metadata, 2), rank_row_groups(f.metadata, 3)
    (([0], True), ([0, 1], False))
    """
    import pyarrow as pa

    schema = metadata.schema.to_arrow_schema()
    if "rank" not in schema.names or not pa.types.is_integer(schema.field("rank").type):
        return None
    leaves = [metadata.schema.column(i).path for i in range(metadata.num_columns)]
    if "rank" not in leaves:
        return None
    col = leaves.index("rank")
    groups, whole = [], True
    for g in range(metadata.num_row_groups):
        rg = metadata.row_group(g)
        if rg.num_rows == 0:
            continue
        stats = rg.column(col).statistics
        if stats is None or not stats.has_null_count:
            return None
        nulls = stats.null_count
        if nulls == rg.num_rows:  # queries without results only: kept whole
            groups.append(g)
            continue
        if not stats.has_min_max:
            return None
        if stats.min > max_rank and nulls == 0:
            continue
        groups.append(g)
        whole &= bool(stats.max <= max_rank)
    return groups, whole


#: the logical type of each flat column (``rating_<name>``: float)
_KIND: Final = {c.name: c.kind for c in FLAT_COLUMNS}

#: each logical type in words
_WHAT: Final = {
    "id": "an id",
    "text": "a text",
    "int": "an integer",
    "float": "a number",
    "time": "a time",
}

#: what each logical type may be stored as, in words (for messages)
_ALLOWED: Final = {
    "id": "string, binary (UTF-8) or integer",
    "text": "string or binary (UTF-8)",
    "int": "integer, floating point (whole numbers) or string",
    "float": "integer, floating point or string",
    "time": "timestamp or string (ISO-8601)",
}


def _type_fits(kind: str, t: Any) -> bool:
    """Whether a column of Arrow type ``t`` can hold values of the logical ``kind``."""
    import pyarrow as pa

    if pa.types.is_dictionary(t):
        t = t.value_type
    if pa.types.is_null(t):  # every value missing: the rules say whether that is allowed
        return True
    text = _is_text(t) or _is_binary(t)
    if kind == "id":
        return text or pa.types.is_integer(t)
    if kind == "text":
        return text
    if kind in ("int", "float"):
        return bool(pa.types.is_integer(t) or pa.types.is_floating(t) or _is_text(t))
    return bool(pa.types.is_timestamp(t) or _is_text(t))  # time


def _check_schema(path: Path, schema: Any, names: Sequence[str]) -> None:
    """Column names unique and each flat column of a type its values can be read from.

    Raises
    ------
    ParseError
        A column name that appears more than once.
    InputFormatError
        A flat column of another type (a list, a struct, a boolean ...): file, column,
        the type found and the types allowed.
    """
    twice = sorted(n for n, k in Counter(schema.names).items() if k > 1)
    if twice:
        raise ParseError(
            f"{path}: column(s) {', '.join(map(repr, twice))} appear more than once in the "
            "Parquet schema (each column name must be unique); rename or drop the repeats"
        )
    for name in names:
        kind = "float" if name.startswith("rating_") else _KIND.get(name)
        if kind is None:
            continue
        t = schema.field(name).type
        if not _type_fits(kind, t):
            raise InputFormatError(
                f"{path}: column {name!r} has Parquet type {t}, which cannot hold "
                f"{_WHAT[kind]} (allowed: {_ALLOWED[kind]})"
            )


def _is_binary(t: Any) -> bool:
    import pyarrow as pa

    if pa.types.is_dictionary(t):
        t = t.value_type
    return bool(pa.types.is_binary(t) or pa.types.is_large_binary(t))


def _decode_binary(path: Path, name: str, column: Any) -> Any:
    """A binary column as UTF-8 strings; the first bytes that are not UTF-8 are a located error."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if pa.types.is_dictionary(column.type):
        column = column.cast(column.type.value_type)
    try:
        return pc.cast(
            column, pa.large_string() if pa.types.is_large_binary(column.type) else pa.string()
        )
    except pa.ArrowException:
        pass
    # the slow path only when the file is wrong: find the rows to name them
    bad: list[str] = []
    for row, value in enumerate(column.to_pylist()):
        if value is None:
            continue
        try:
            value.decode("utf-8")
        except UnicodeDecodeError:
            bad.append(f"row {row + 1}: {value!r}")
            if len(bad) == 5:
                break
    raise ParseError(
        f"{path}: column {name!r} holds bytes that are not valid UTF-8 ({'; '.join(bad)}); "
        "ids and texts must be UTF-8 strings"
    )


def _take_chunked(col: Any, rows: npt.NDArray[np.int64]) -> Any:
    """``col.take(rows)`` for a chunked column, chunk by chunk when ``rows`` ascend.

    Arrow's take on a chunked array first joins the chunks (a copy of the whole
    column, to pick a value per query or session); ascending rows are taken from
    each chunk in turn instead, and the pieces stay chunks of the result.
    """
    import pyarrow as pa

    indices = pa.array(rows, type=pa.int64())
    if col.num_chunks <= 1 or (len(rows) > 1 and bool((np.diff(rows) < 0).any())):
        return col.take(indices)
    lengths = np.array([len(c) for c in col.chunks], dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(lengths)])
    cuts = np.searchsorted(rows, starts)
    pieces = [
        chunk.take(pa.array(rows[a:b] - start, type=pa.int64()))
        for chunk, start, a, b in zip(col.chunks, starts[:-1], cuts[:-1], cuts[1:], strict=True)
    ]
    return pa.chunked_array(pieces, type=col.type)


def _masked_integers(col: Any) -> Any:
    """An Arrow integer column as a pandas masked array: one copy of the values, one of the mask.

    ``to_pandas(types_mapper=)`` converts chunk by chunk and then joins them (two copies
    of each value).  Values under the mask are whatever the buffers hold (pandas never
    shows them).  ``None`` for a column of another type.
    """
    import pyarrow as pa

    if not pa.types.is_integer(col.type) or _masked_int(col.type) is None:
        return None
    dtype = np.dtype(col.type.to_pandas_dtype())
    n = len(col)
    values = np.empty(n, dtype=dtype)
    mask = np.zeros(n, dtype=bool)
    pos = 0
    for chunk in col.chunks:
        m = len(chunk)
        buf = chunk.buffers()[1]
        if m and buf is not None:
            values[pos : pos + m] = np.frombuffer(
                buf, dtype=dtype, count=m, offset=chunk.offset * dtype.itemsize
            )
        if chunk.null_count:
            nulls = chunk.is_null().to_numpy(zero_copy_only=False)
            mask[pos : pos + m] = nulls
            values[pos : pos + m][nulls] = 0  # the buffer's bytes there are undefined
        pos += m
    return pd.arrays.IntegerArray(values, mask)


def _masked_int(t: Any) -> Any:
    import pyarrow as pa

    masked = {
        pa.int8(): pd.Int8Dtype(),
        pa.int16(): pd.Int16Dtype(),
        pa.int32(): pd.Int32Dtype(),
        pa.int64(): pd.Int64Dtype(),
    }
    return masked.get(t)


def _is_text(t: Any) -> bool:
    import pyarrow as pa

    if pa.types.is_dictionary(t):
        t = t.value_type
    return bool(pa.types.is_string(t) or pa.types.is_large_string(t))


def _dictionary_groups(col: Any) -> list[tuple[Any, list[npt.NDArray[np.integer[Any]]]]]:
    """The chunks of a dictionary column grouped by dictionary: ``(dictionary, [indices])``.

    Batches of one row group share its dictionary: consecutive chunks are grouped by
    it, so each dictionary is scanned once, not once per batch.  Null indices become
    the sentinel ``len(dictionary)``.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    groups: list[tuple[Any, list[npt.NDArray[np.integer[Any]]]]] = []
    last_key: tuple[int, int, int] | None = None
    for chunk in col.chunks:
        if not len(chunk):
            continue
        if not pa.types.is_dictionary(chunk.type):
            chunk = chunk.dictionary_encode()
        d = chunk.dictionary
        key = (d.buffers()[-1].address if d.buffers()[-1] is not None else 0, d.offset, len(d))
        indices = chunk.indices
        if indices.type.bit_width < 32:  # room for the sentinel
            indices = indices.cast(pa.int32())
        if chunk.null_count:
            # nulls -> the sentinel slot len(d)
            indices = pc.fill_null(indices, len(d))
        # int32 as stored (an int64 copy would be 4 more bytes per row)
        idx = indices.to_numpy()
        if key != last_key:
            groups.append((d, []))
            last_key = key
        groups[-1][1].append(idx)
    return groups


def dictionary_to_categorical(
    col: Any, *, source: str = "column", unique: bool = False
) -> pd.Categorical:
    """A chunked Arrow dictionary column as one pandas Categorical, hashing only used entries.

    Parquet stores a dictionary per row group, and writers often repeat the whole
    dictionary in every group.  Unifying them hashes every entry of every group,
    which at hundreds of groups × millions of ids dominates a load.  Here each
    chunk's codes are first reduced to the entries they use (a bincount), so the
    hashing work is bounded by the number of rows, not groups × dictionary size.
    ``unique``: the caller knows the chunks share one dictionary of distinct values
    (``pyarrow.compute.dictionary_encode`` of the column): its used entries are the
    categories as they are, not hashed again.

    Raises
    ------
    ParseError
        A code outside its dictionary (a corrupt dictionary page: Arrow does not check
        the codes); ``source`` names the file and column in the message.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    n = sum(len(c) for c in col.chunks)
    groups = _dictionary_groups(col)
    if not groups:
        return pd.Categorical.from_codes(
            np.full(len(col), -1, dtype=np.int32), categories=pd.Index([], dtype="string")
        )
    subs, used_entries = [], []
    for d, parts in groups:
        size = len(d)
        top = max(int(idx.max()) for idx in parts)  # chunks are never empty here
        low = min(int(idx.min()) for idx in parts)
        if top > size or low < 0:
            raise ParseError(
                f"{source}: a value refers to entry {top} of a dictionary of {size} "
                "(a corrupt dictionary page); the file is damaged: write it again"
            )
        counts = np.zeros(size + 1, dtype=np.int64)
        for idx in parts:
            counts += np.bincount(idx, minlength=size + 1)
        used = np.flatnonzero(counts[:size] > 0)
        used_entries.append(used)
        subs.append(d.take(pa.array(used, type=pa.int64())))
    # the groups' used entries as one set of categories, hashed by Arrow (no Python string
    # per entry; first-appearance order, as pandas.factorize gives)
    used_values = pa.concat_arrays(subs)
    try:
        used_values.validate(full=True)  # Arrow reads string pages without checking UTF-8
    except pa.ArrowException as exc:
        raise ParseError(
            f"{source}: a value is not valid UTF-8 or the page is damaged ({exc}); "
            "write the file again with valid UTF-8 strings"
        ) from None
    if unique and len(groups) == 1:
        global_codes = np.arange(len(used_values), dtype=np.int64)
        categories = used_values.to_pandas()
    else:
        encoded = pc.dictionary_encode(used_values)
        global_codes = encoded.indices.fill_null(-1).to_numpy(zero_copy_only=False)
        categories = encoded.dictionary.to_pandas()
    codes = np.empty(n, dtype=np.int32)
    pos, base = 0, 0
    for (d, parts), used in zip(groups, used_entries, strict=True):
        # entry -> category in one table (the sentinel slot len(d), a null, stays -1), so each
        # row is looked up once
        table = np.full(len(d) + 1, -1, dtype=np.int32)
        table[used] = global_codes[base : base + len(used)]
        for idx in parts:
            np.take(table, idx, out=codes[pos : pos + len(idx)])
            pos += len(idx)
        base += len(used)
    return pd.Categorical.from_codes(codes, categories=pd.Index(categories, dtype="string"))

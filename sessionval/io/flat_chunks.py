"""One chunk of whole sessions as the flat one-row-per-result table (pandas, then Arrow).

The flat writers (:func:`sessionval.io.writers.write_flat`, the Parquet layouts of
:mod:`sessionval.io.parquet_layout`) build the table a chunk at a time
(:func:`~sessionval.io.jsonl_text.frame_chunks`), so memory stays bounded by a chunk.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa

from ..frame import FLAT_COLUMNS, SessionFrame
from ..validate.flat import frame_to_flat
from .jsonl_text import FLAT_INTEGERS, Chunk, arrow_strings

__all__ = [
    "arrow_chunk",
    "flat_chunk",
    "flat_columns",
    "flat_rows",
]


def flat_chunk(frame: SessionFrame, c: Chunk) -> pd.DataFrame:
    """:func:`~sessionval.validate.flat.frame_to_flat` of one chunk of whole sessions."""
    s = frame.sessions.iloc[c.sessions].reset_index(drop=True)
    q = frame.queries.iloc[c.queries].reset_index(drop=True)
    r = frame.results.iloc[c.results].reset_index(drop=True)
    codes = q["session_id"].cat.codes.to_numpy() - c.sessions.start
    q["session_id"] = pd.Categorical.from_codes(codes, categories=pd.Index(range(len(s))))
    r["query_idx"] = (r["query_idx"].to_numpy(np.int64) - c.queries.start).astype(np.int32)
    # frame_to_flat takes a query's session from the codes; the checks of the
    # SessionFrame constructor are skipped on purpose (a slice of a valid frame)
    sub = object.__new__(SessionFrame)
    for name, value in (("sessions", s), ("queries", q), ("results", r)):
        object.__setattr__(sub, name, value)
    flat = frame_to_flat(sub)
    # integers stay integers whether or not the chunk has an empty query (a null row)
    for col in FLAT_INTEGERS:
        if col in flat.columns:
            values = flat[col]
            whole = values.isna() | (values == values.round())
            if bool(whole.all()):
                flat[col] = values.astype("Int64")
    return flat


def arrow_chunk(flat: pd.DataFrame) -> pa.Table:
    """A flat chunk as Arrow with a fixed schema: ids and text as plain strings."""
    arrays = {}
    for col in flat.columns:
        v = flat[col]
        if (
            isinstance(v.dtype, pd.CategoricalDtype)
            or v.dtype == object
            or pd.api.types.is_string_dtype(v.dtype)
        ):
            arrays[str(col)] = arrow_strings(v)
        else:
            arrays[str(col)] = pa.array(v, from_pandas=True)
    return pa.table(arrays)


def flat_columns(frame: SessionFrame) -> list[str]:
    """The flat layout's column names for ``frame`` (for a table with no rows)."""
    r = frame.results.columns
    names = [c.name for c in FLAT_COLUMNS if c.level != "result" or c.name in ("rank", *r)]
    return names + [str(c) for c in frame.sessions.columns if str(c).startswith("rating_")]


def flat_rows(frame: SessionFrame) -> int:
    """Rows of ``frame``'s flat table: one per result, one per query without results."""
    return frame.n_results + int((frame.queries["n_results"].to_numpy() == 0).sum())

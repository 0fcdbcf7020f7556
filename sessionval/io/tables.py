"""Flat tables (one row per result) to a validated :class:`~sessionval.frame.SessionFrame`.

This is the bulk path every loader funnels into: JSON-lines logs, CSV and
Parquet tables and the real-world formats all become a *flat* DataFrame (the
layout of ``docs/formats.md``) and pass through :func:`frame_from_flat`, which
enforces the study's rules (:mod:`sessionval.rules`, the same functions the
models call) with vectorised checks and reports every problem with its row.

Flat layout: one row per result with ``session_id, user_id, topic_id,
system_id, query_pos, rank, doc_id`` and optional ``query_text, query_time,
query_id, scan_depth, url, title, snippet, clicks, dwell, user_grade,
session_start, session_end, qrels_id, rating_<name>``.  A query without results
is one row whose ``rank`` and ``doc_id`` are null.  ``qrels_id`` is the judgment
key of the query when judgments are per session or per turn (default: the topic).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, Literal

import numpy as np
import numpy.typing as npt
import pandas as pd

from ..errors import InputFormatError, ParseError, Problem, ValidationFailed
from ..frame import SessionFrame
from ..models.judgments import GradeScale
from ..rules import check_in_levels, check_one_to_n, check_unique_within

__all__ = [
    "FLAT_OPTIONAL",
    "FLAT_REQUIRED",
    "LoadReport",
    "Mode",
    "frame_from_flat",
    "frame_to_flat",
    "read_flat_table",
]

Mode = Literal["strict", "lenient"]

FLAT_REQUIRED: Final[tuple[str, ...]] = (
    "session_id",
    "user_id",
    "topic_id",
    "system_id",
    "query_pos",
    "rank",
    "doc_id",
)
FLAT_OPTIONAL: Final[tuple[str, ...]] = (
    "query_text",
    "query_time",
    "query_id",
    "scan_depth",
    "url",
    "title",
    "snippet",
    "clicks",
    "dwell",
    "user_grade",
    "session_start",
    "session_end",
    "qrels_id",
)
_ID_COLUMNS: Final = ("session_id", "user_id", "topic_id", "system_id")
_TEXT_COLUMNS: Final = ("url", "title", "snippet")


@dataclass
class LoadReport:
    """What a loader read, accepted and rejected.

    ``records_read == sessions_accepted + sessions_rejected`` always holds; a
    record is a session (a JSON line, or a session's rows of a flat table).
    ``rejects`` has one row per problem of a rejected record (lenient mode).
    """

    source: str
    records_read: int = 0
    rows_read: int = 0
    sessions_accepted: int = 0
    sessions_rejected: int = 0
    problems: list[Problem] = field(default_factory=list)

    @property
    def rejects(self) -> pd.DataFrame:
        """Every problem of every rejected record, as a table."""
        cols = ["record", "source", "location", "field", "message", "value"]
        return pd.DataFrame(
            [[p.record, p.source, p.location, p.field, p.message, p.value] for p in self.problems],
            columns=cols,
        )

    def merge(self, other: LoadReport) -> None:
        """Add the counts and problems of ``other`` (e.g. records rejected while parsing)."""
        self.records_read += other.records_read
        self.rows_read += other.rows_read
        self.sessions_accepted += other.sessions_accepted
        self.sessions_rejected += other.sessions_rejected
        self.problems.extend(other.problems)

    def summary_line(self) -> str:
        """``records read = accepted + rejected`` in words."""
        return (
            f"{self.records_read} records read = {self.sessions_accepted} sessions accepted"
            f" + {self.sessions_rejected} rejected"
        )


# ---------------------------------------------------------------------------------------------
# reading files


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
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        schema = pq.read_schema(p)
    except (pa.ArrowInvalid, OSError) as exc:
        raise ParseError(f"{p}: not a readable Parquet file ({exc})") from exc
    names = schema.names if columns is None else [c for c in columns if c in schema.names]

    def is_text(t: pa.DataType) -> bool:
        if pa.types.is_dictionary(t):
            t = t.value_type
        return bool(pa.types.is_string(t) or pa.types.is_large_string(t))

    # every text column is read dictionary-encoded: values repeated on each row of a query or
    # session (ids, query text) never become one Python string per row
    ids = [n for n in names if is_text(schema.field(n).type)]
    try:
        table = pq.read_table(p, columns=names, read_dictionary=ids)
    except (pa.ArrowInvalid, OSError) as exc:
        raise ParseError(f"{p}: not a readable Parquet file ({exc})") from exc
    out: dict[str, object] = {}
    for name in names:
        col = table.column(name)
        out[name] = _dictionary_to_categorical(col) if name in ids else col.to_pandas()
        table = table.drop_columns([name])  # free each column as soon as it is converted
    return pd.DataFrame(out)


def _dictionary_to_categorical(col: object) -> pd.Categorical:
    """A chunked dictionary column as one pandas Categorical, hashing only used entries.

    Parquet stores a dictionary per row group; writers often repeat the whole
    dictionary in every group.  ``unify_dictionaries`` hashes all of them, which at
    hundreds of row groups × millions of ids dominates the load.  Here each chunk's
    codes are first reduced to the entries they use (a bincount), so the hashing
    work is bounded by the number of rows, not rows groups × dictionary size.
    """
    import pyarrow as pa

    chunks = col.chunks  # type: ignore[attr-defined]
    n = sum(len(c) for c in chunks)
    if not chunks:
        return pd.Categorical([], categories=pd.Index([], dtype="string"))
    subs, locals_ = [], []
    for chunk in chunks:
        idx = chunk.indices.to_numpy(zero_copy_only=False)
        valid = ~np.asarray(chunk.is_null().to_numpy(zero_copy_only=False), dtype=bool)
        size = len(chunk.dictionary)
        idx = np.where(valid, idx, size).astype(np.int64, copy=False)  # nulls -> sentinel slot
        used = np.flatnonzero(np.bincount(idx[valid], minlength=size) > 0)
        remap = np.full(size + 1, -1, dtype=np.int64)
        remap[used] = np.arange(len(used))
        subs.append(chunk.dictionary.take(pa.array(used, type=pa.int64())))
        locals_.append(remap[idx])
    values = pa.concat_arrays(subs).to_pandas()
    global_codes, categories = pd.factorize(values, sort=False)
    codes = np.empty(n, dtype=np.int32)
    pos, base = 0, 0
    for sub, local in zip(subs, locals_, strict=True):
        # local code -1 (null) picks the appended -1
        g = np.append(global_codes[base : base + len(sub)], -1)
        codes[pos : pos + len(local)] = g[local]
        pos += len(local)
        base += len(sub)
    return pd.Categorical.from_codes(codes, categories=pd.Index(categories, dtype="string"))


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


# ---------------------------------------------------------------------------------------------
# flat -> frame


class _Collector:
    """Collect problems per row; map rows to the session they reject."""

    def __init__(
        self,
        source: str,
        session_codes: npt.NDArray[np.int64],
        names: pd.Index,
        locate: Callable[[int], str],
    ) -> None:
        self.source = source
        self.session_codes = session_codes
        self.names = names
        self.locate = locate
        self.problems: list[Problem] = []
        self.bad_sessions: set[int] = set()

    def add(
        self,
        rows: npt.ArrayLike,
        field_name: str,
        messages: Sequence[str],
        values: Sequence[object] | None = None,
    ) -> None:
        rows_arr = np.asarray(rows, dtype=np.int64)
        for k, row in enumerate(rows_arr.tolist()):
            code = int(self.session_codes[row])
            self.bad_sessions.add(code)
            val = "" if values is None else repr(values[k])
            self.problems.append(
                Problem(
                    source=self.source,
                    location=self.locate(row),
                    field=field_name,
                    message=messages[k],
                    value=val,
                    record=str(self.names[code]) if code >= 0 else "",
                )
            )


def _locator(
    kind: str, row_offset: Sequence[int] | npt.NDArray[np.int64] | None
) -> Callable[[int], str]:
    """``row -> "row 17"`` / ``"line 17"``; ``row_offset`` maps frame rows to file lines."""
    if row_offset is None:
        return lambda row: f"{kind} {row + (2 if kind == 'line' else 1)}"
    offsets = np.asarray(row_offset)
    return lambda row: f"{kind} {int(offsets[row])}"


def _as_category(col: pd.Series) -> pd.Series:
    """The column as a categorical with string categories (ids are encoded once)."""
    if isinstance(col.dtype, pd.CategoricalDtype):
        cats = col.cat.categories
        if not pd.api.types.is_string_dtype(cats.dtype) or cats.dtype != "string":
            col = col.cat.rename_categories(list(cats.astype(str)))
            col = col.cat.set_categories(pd.Index(col.cat.categories, dtype="string"))
        return col
    codes, uniques = pd.factorize(col, sort=False)
    cat = pd.Categorical.from_codes(codes, categories=pd.Index(uniques.astype(str), dtype="string"))
    out: pd.Series = pd.Series(cat)
    return out


def _take_compact(col: pd.Series, rows: npt.NDArray[np.int64]) -> pd.Series:
    """``col.iloc[rows]`` as a categorical that keeps only the categories used there.

    A bincount over the codes replaces ``remove_unused_categories`` (which sorts).
    """
    codes = col.cat.codes.to_numpy()[rows]
    cats = col.cat.categories
    valid = codes >= 0
    used = np.bincount(codes[valid], minlength=len(cats)) > 0
    remap = np.cumsum(used) - 1
    new = np.where(valid, remap[np.maximum(codes, 0)], -1).astype(np.int32)
    out: pd.Series = pd.Series(pd.Categorical.from_codes(new, categories=cats[used]))
    return out


def _numeric(
    df: pd.DataFrame,
    name: str,
    coll: _Collector,
    *,
    integer: bool,
    nullable_rows: npt.NDArray[np.bool_] | None = None,
    at: npt.NDArray[np.int64] | None = None,
) -> npt.NDArray[np.float64]:
    """Column as float64 (NaN = missing); non-numeric values are problems.

    With ``at`` only those rows are read (query- or session-level columns are
    read at the first row of each query or session), and problems name them.
    """
    raw = df[name] if at is None else df[name].iloc[at]
    where = (lambda idx: idx) if at is None else (lambda idx: at[idx])
    if pd.api.types.is_numeric_dtype(raw.dtype) and not isinstance(raw.dtype, pd.CategoricalDtype):
        vals = raw.to_numpy(dtype=np.float64, na_value=np.nan, copy=True)
        bad_text = np.zeros(len(vals), dtype=bool)
    else:
        conv = pd.to_numeric(raw.astype("string"), errors="coerce")
        vals = conv.to_numpy(dtype=np.float64, na_value=np.nan, copy=True)
        bad_text = np.isnan(vals) & raw.notna().to_numpy()
    if bad_text.any():
        rows = np.flatnonzero(bad_text)
        kind = "an integer" if integer else "a number"
        coll.add(where(rows), name, [f"must be {kind}"] * len(rows), raw.iloc[rows].tolist())
    if integer:
        frac = ~np.isnan(vals) & (vals != np.floor(vals))
        if frac.any():
            rows = np.flatnonzero(frac)
            coll.add(where(rows), name, ["must be a whole number"] * len(rows), vals[rows].tolist())
            vals[rows] = np.nan
    vals[bad_text] = np.nan
    if nullable_rows is not None:
        missing = np.isnan(vals) & ~nullable_rows & ~bad_text
        if missing.any():
            rows = np.flatnonzero(missing)
            coll.add(where(rows), name, ["is required"] * len(rows))
    return vals


def _times(df: pd.DataFrame, name: str, coll: _Collector, at: npt.NDArray[np.int64]) -> pd.Series:
    """Times of column ``name`` at rows ``at`` as UTC (NaT when missing or absent)."""
    if name not in df.columns:
        return pd.Series(pd.NaT, index=range(len(at)), dtype="datetime64[ns, UTC]")
    raw = df[name].iloc[at].reset_index(drop=True)
    if isinstance(raw.dtype, pd.DatetimeTZDtype):
        aware: pd.Series = raw.dt.tz_convert("UTC").astype("datetime64[ns, UTC]")
        return aware
    if pd.api.types.is_datetime64_dtype(raw.dtype):
        naive: pd.Series = raw.dt.tz_localize("UTC").astype("datetime64[ns, UTC]")
        return naive
    conv = pd.to_datetime(raw.astype("string"), errors="coerce", utc=True, format="ISO8601")
    bad = conv.isna().to_numpy() & raw.notna().to_numpy()
    if bad.any():
        rows = np.flatnonzero(bad)
        coll.add(
            at[rows],
            name,
            ["must be an ISO-8601 time (e.g. 2008-03-01T09:00:05Z)"] * len(rows),
            raw.iloc[rows].tolist(),
        )
    return conv.astype("datetime64[ns, UTC]")


def frame_from_flat(
    flat: pd.DataFrame,
    *,
    source: str = "<frame>",
    mode: Mode = "strict",
    max_problems: int = 50,
    user_grade_scale: GradeScale | None = None,
    location_kind: Literal["row", "line"] = "row",
    row_locations: npt.NDArray[np.int64] | None = None,
) -> tuple[SessionFrame, LoadReport]:
    """Validate a flat table and build the columnar :class:`SessionFrame`.

    The rules (:mod:`sessionval.rules`) are checked for all rows at once:
    query positions ``1..n`` per session, ranks ``1..k`` per query, a document at
    most once per list, searcher grades on the scale, non-negative clicks and
    dwell, and one user/topic/system per session.

    Parameters
    ----------
    flat
        One row per result (layout in the module docstring). Not modified.
    source
        File name used in messages.
    mode
        ``"strict"``: collect up to ``max_problems`` problems then raise
        :class:`~sessionval.errors.ValidationFailed` with all of them.
        ``"lenient"``: drop every session with a problem and report it.
    max_problems
        Limit of problems listed in strict mode.
    user_grade_scale
        Scale that ``user_grade`` values must be on (not checked when ``None``).
    location_kind, row_locations
        How rows are named in messages (``"row 3"``, ``"line 3"``); ``row_locations``
        gives the file line/row of each table row when it is not simply its index.

    Returns
    -------
    (SessionFrame, LoadReport)

    Examples
    --------
    >>> flat = pd.DataFrame({"session_id": ["s1"] * 3, "user_id": "u1", "topic_id": "T1",
    ...     "system_id": "S1", "query_pos": [1, 1, 2], "rank": [1, 2, None],
    ...     "doc_id": ["d1", "d2", None]})
    >>> frame, report = frame_from_flat(flat)
    >>> frame.queries["n_results"].tolist(), report.summary_line()
    ([2, 0], '1 records read = 1 sessions accepted + 0 rejected')
    """
    missing = [c for c in FLAT_REQUIRED if c not in flat.columns]
    if missing:
        raise InputFormatError(
            f"{source}: missing column(s) {', '.join(missing)}; "
            f"found {', '.join(map(str, flat.columns))}"
            f" (required: {', '.join(FLAT_REQUIRED)})"
        )
    n_rows = len(flat)
    if n_rows == 0:
        raise ParseError(f"{source}: no rows (expected one row per result)")
    df = flat.reset_index(drop=True)
    locate = _locator(location_kind, row_locations)

    # sessions keep the order of first appearance; codes index `names`
    sess_raw = df["session_id"]
    missing_sess = sess_raw.isna().to_numpy()
    codes_arr, names = pd.factorize(sess_raw, sort=False)
    s_codes = codes_arr.astype(np.int64)
    names = pd.Index(names.astype(str))
    coll = _Collector(source, s_codes, names, locate)
    if missing_sess.any():
        rows = np.flatnonzero(missing_sess)
        coll.problems.extend(
            Problem(source, locate(int(r)), "session_id", "is required") for r in rows.tolist()
        )

    for name in ("user_id", "topic_id", "system_id"):
        miss = df[name].isna().to_numpy() & ~missing_sess
        if miss.any():
            rows = np.flatnonzero(miss)
            coll.add(rows, name, ["is required"] * len(rows))

    empty_row = df["doc_id"].isna().to_numpy()
    pos = _numeric(df, "query_pos", coll, integer=True, nullable_rows=np.zeros(n_rows, dtype=bool))
    rank = _numeric(df, "rank", coll, integer=True, nullable_rows=empty_row)
    rank_present = ~np.isnan(rank)
    # a row with a rank but no document, or a document but no rank
    half = rank_present & empty_row
    if half.any():
        rows = np.flatnonzero(half)
        coll.add(
            rows,
            "doc_id",
            ["is required when rank is given (leave both empty for a query without results)"]
            * len(rows),
        )

    # order rows: session (first appearance), query_pos, rank; skip the sort when already sorted
    pos_i = np.nan_to_num(pos, nan=-1).astype(np.int64)
    rank_i = np.nan_to_num(rank, nan=0).astype(np.int64)
    ordered = _is_sorted(s_codes, pos_i, rank_i)
    order = np.arange(n_rows) if ordered else np.lexsort((rank_i, pos_i, s_codes))

    # ---- per-session constants
    sc, pc = s_codes[order], pos_i[order]
    for name in ("user_id", "topic_id", "system_id"):
        vcodes = pd.factorize(df[name])[0].astype(np.int64)[order]
        change = np.zeros(n_rows, dtype=bool)
        change[1:] = (sc[1:] == sc[:-1]) & (vcodes[1:] != vcodes[:-1])
        if change.any():
            rows = order[np.flatnonzero(change)]
            coll.add(
                rows,
                name,
                [f"differs from an earlier row of the same session (one {name[:-3]} per session)"]
                * len(rows),
                df[name].iloc[rows].tolist(),
            )

    # ---- queries: one per (session, query_pos)
    qstart = np.ones(n_rows, dtype=bool)
    qstart[1:] = (sc[1:] != sc[:-1]) | (pc[1:] != pc[:-1])
    q_first = order[qstart]
    q_session = sc[qstart]
    q_pos = pc[qstart]
    v = check_one_to_n(q_pos, q_session, what="query position")
    if v:
        coll.add(q_first[v.rows], "query_pos", v.messages, q_pos[v.rows].tolist())

    # ---- results: ranks 1..k per query, unique documents
    q_of_row = np.cumsum(qstart) - 1  # query index per sorted row
    res_mask_sorted = rank_present[order] & ~empty_row[order]
    empty_q = np.zeros(len(q_first), dtype=bool)
    empty_q[q_of_row[empty_row[order] & ~rank_present[order]]] = True
    mixed = empty_q & (np.bincount(q_of_row[res_mask_sorted], minlength=len(q_first)) > 0)
    if mixed.any():
        rows = q_first[np.flatnonzero(mixed)]
        coll.add(rows, "doc_id", ["a query has both results and an empty-result row"] * len(rows))
    r_rows = order[res_mask_sorted]
    r_q = q_of_row[res_mask_sorted]
    r_rank = rank_i[r_rows]
    v = check_one_to_n(r_rank, r_q, what="rank", presorted=ordered)
    if v:
        coll.add(r_rows[v.rows], "rank", v.messages, r_rank[v.rows].tolist())
    doc = _as_category(df["doc_id"])
    doc_codes = doc.cat.codes.to_numpy()
    v = check_unique_within(doc_codes[r_rows], r_q, what="document", presorted_groups=True)
    if v:
        coll.add(
            r_rows[v.rows], "doc_id", v.messages, doc.iloc[r_rows[v.rows]].astype(str).tolist()
        )

    # ---- optional numeric result columns
    clicks = _numeric(df, "clicks", coll, integer=True) if "clicks" in df else None
    dwell = _numeric(df, "dwell", coll, integer=False) if "dwell" in df else None
    ugrade = _numeric(df, "user_grade", coll, integer=True) if "user_grade" in df else None
    for name, arr in (("clicks", clicks), ("dwell", dwell)):
        if arr is not None:
            neg = arr < 0
            if neg.any():
                rows = np.flatnonzero(neg)
                coll.add(rows, name, ["must be >= 0"] * len(rows), arr[rows].tolist())
    if ugrade is not None and user_grade_scale is not None:
        v = check_in_levels(ugrade, user_grade_scale.grades, what="user_grade")
        if v:
            coll.add(v.rows, "user_grade", v.messages)
    # query- and session-level columns are read once per query / session
    sstart = np.ones(n_rows, dtype=bool)
    sstart[1:] = sc[1:] != sc[:-1]
    s_first = order[sstart]
    scan = (
        _numeric(df, "scan_depth", coll, integer=True, at=q_first) if "scan_depth" in df else None
    )
    if scan is not None:
        n_res_q = np.bincount(r_q, minlength=len(q_first))
        sq = scan
        bad = ~np.isnan(sq) & ((sq < 0) | (sq > n_res_q))
        if bad.any():
            qi = np.flatnonzero(bad)
            coll.add(
                q_first[qi],
                "scan_depth",
                [f"must be between 0 and the number of results ({int(n_res_q[i])})" for i in qi],
                sq[qi].tolist(),
            )
    q_time = _times(df, "query_time", coll, q_first)
    s_start = _times(df, "session_start", coll, s_first)
    s_end = _times(df, "session_end", coll, s_first)
    ratings = [c for c in df.columns if str(c).startswith("rating_")]
    rating_vals = {c: _numeric(df, c, coll, integer=False, at=s_first) for c in ratings}

    report = LoadReport(source=source, records_read=len(names), rows_read=n_rows)
    if coll.problems and mode == "strict":
        truncated = len(coll.problems) > max_problems
        raise ValidationFailed(coll.problems[:max_problems], truncated=truncated)

    # lenient: drop every row of a rejected session
    keep_sorted = np.ones(n_rows, dtype=bool)
    if coll.bad_sessions or missing_sess.any():
        bad_codes = np.fromiter(coll.bad_sessions, dtype=np.int64, count=len(coll.bad_sessions))
        keep_sorted = ~np.isin(sc, bad_codes) & ~missing_sess[order]
        report.problems = coll.problems
    report.sessions_rejected = len(coll.bad_sessions)
    report.sessions_accepted = len(names) - report.sessions_rejected

    frame = _assemble(
        df,
        q_keep=keep_sorted[qstart],
        s_keep=keep_sorted[sstart],
        order=order,
        keep_sorted=keep_sorted,
        qstart=qstart,
        res_mask_sorted=res_mask_sorted,
        s_codes=s_codes,
        names=names,
        pos_i=pos_i,
        rank_i=rank_i,
        doc=doc,
        clicks=clicks,
        dwell=dwell,
        ugrade=ugrade,
        scan=scan,
        q_time=q_time,
        s_start=s_start,
        s_end=s_end,
        rating_vals=rating_vals,
        source=source,
        user_grade_scale=user_grade_scale,
    )
    return frame, report


def _is_sorted(
    s: npt.NDArray[np.int64], p: npt.NDArray[np.int64], r: npt.NDArray[np.int64]
) -> bool:
    if len(s) < 2:
        return True
    ds, dp, dr = np.diff(s), np.diff(p), np.diff(r)
    ok = (ds > 0) | ((ds == 0) & ((dp > 0) | ((dp == 0) & (dr > 0))))
    return bool(ok.all())


def _assemble(
    df: pd.DataFrame,
    *,
    order: npt.NDArray[np.int64],
    keep_sorted: npt.NDArray[np.bool_],
    qstart: npt.NDArray[np.bool_],
    res_mask_sorted: npt.NDArray[np.bool_],
    q_keep: npt.NDArray[np.bool_],
    s_keep: npt.NDArray[np.bool_],
    s_codes: npt.NDArray[np.int64],
    names: pd.Index,
    pos_i: npt.NDArray[np.int64],
    rank_i: npt.NDArray[np.int64],
    doc: pd.Series,
    clicks: npt.NDArray[np.float64] | None,
    dwell: npt.NDArray[np.float64] | None,
    ugrade: npt.NDArray[np.float64] | None,
    scan: npt.NDArray[np.float64] | None,
    q_time: pd.Series,
    s_start: pd.Series,
    s_end: pd.Series,
    rating_vals: dict[str, npt.NDArray[np.float64]],
    source: str,
    user_grade_scale: GradeScale | None,
) -> SessionFrame:
    """Build the three linked tables from the sorted, filtered rows.

    Query-level inputs (``scan``, ``q_time``) have one value per query and
    session-level ones (``s_start``, ``s_end``, ``rating_vals``) one per session, in
    sorted order; ``q_keep``/``s_keep`` select the accepted ones.
    """
    all_kept = bool(keep_sorted.all())
    rows = order if all_kept else order[keep_sorted]
    qs = qstart if all_kept else qstart[keep_sorted]
    rm = res_mask_sorted if all_kept else res_mask_sorted[keep_sorted]
    sc = s_codes[rows]

    # sessions, renumbered in order of first appearance among kept ones
    kept_codes = np.unique(sc) if not all_kept else np.arange(len(names))
    sess_names = names[kept_codes]
    remap = np.full(len(names), -1, dtype=np.int64)
    remap[kept_codes] = np.arange(len(kept_codes))
    new_sc = remap[sc]
    sess_cat = pd.CategoricalDtype(pd.Index(sess_names, dtype="string"), ordered=False)

    q_rows = rows[qs]
    q_sess = new_sc[qs]
    q_of_row = np.cumsum(qs) - 1
    n_q = len(q_rows)
    n_res = np.bincount(q_of_row[rm], minlength=n_q).astype(np.int32)

    s_first_mask = np.ones(len(q_sess), dtype=bool)
    s_first_mask[1:] = q_sess[1:] != q_sess[:-1]
    s_rows = q_rows[s_first_mask]
    n_queries = np.bincount(q_sess, minlength=len(kept_codes)).astype(np.int16)

    def cat_of(col: str, at: npt.NDArray[np.int64]) -> pd.Series:
        return _take_compact(_as_category(df[col]), at)

    sessions = pd.DataFrame(
        {
            "session_id": pd.Categorical.from_codes(np.arange(len(kept_codes)), dtype=sess_cat),
            "user_id": cat_of("user_id", s_rows),
            "topic_id": cat_of("topic_id", s_rows),
            "system_id": cat_of("system_id", s_rows),
            "start_time": s_start[s_keep].reset_index(drop=True),
            "end_time": s_end[s_keep].reset_index(drop=True),
            "n_queries": n_queries,
        }
    )
    for c, vals in rating_vals.items():
        sessions[c] = vals[s_keep]

    q_session_cat = pd.Categorical.from_codes(q_sess, dtype=sess_cat)
    q_pos = pos_i[q_rows].astype(np.int16)
    if "query_id" in df.columns:
        qid = df["query_id"].iloc[q_rows].astype("string").reset_index(drop=True)
        fallback = (
            pd.Series(sess_names[q_sess], dtype="string") + ":" + pd.Series(q_pos).astype("string")
        )
        qid = qid.fillna(fallback)
    else:
        qid = (
            pd.Series(sess_names[q_sess], dtype="string") + ":" + pd.Series(q_pos).astype("string")
        )
    text = (
        df["query_text"].iloc[q_rows].astype("string").fillna("").reset_index(drop=True)
        if "query_text" in df.columns
        else pd.Series([""] * n_q, dtype="string")
    )
    topic_of_q = sessions["topic_id"].iloc[q_sess].reset_index(drop=True).astype("string")
    if "qrels_id" in df.columns:
        # per-session or per-turn judgment keys; an empty key falls back to the topic
        keys = df["qrels_id"].iloc[q_rows].astype("string").reset_index(drop=True)
        topic_of_q = keys.fillna(topic_of_q)
    if scan is not None:
        kept_scan = scan[q_keep]
        scan_col = pd.arrays.IntegerArray(
            np.nan_to_num(kept_scan).astype(np.int32), np.isnan(kept_scan)
        )
    else:
        scan_col = pd.arrays.IntegerArray(np.zeros(n_q, dtype=np.int32), np.ones(n_q, dtype=bool))
    queries = pd.DataFrame(
        {
            "session_id": q_session_cat,
            "query_pos": q_pos,
            "query_id": qid.astype("string"),
            "text": text,
            "time": q_time[q_keep].reset_index(drop=True),
            "n_results": n_res,
            "scan_depth": scan_col,
            "qrels_id": topic_of_q.astype("category"),
        }
    )

    r_rows = rows[rm]
    r_q = q_of_row[rm].astype(np.int32)
    n_r = len(r_rows)
    results = pd.DataFrame(
        {
            "query_idx": r_q,
            "session_id": pd.Categorical.from_codes(new_sc[rm], dtype=sess_cat),
            "query_pos": pos_i[r_rows].astype(np.int16),
            "rank": rank_i[r_rows].astype(np.int32),
            "doc_id": _take_compact(doc, r_rows),
        }
    )
    for c in _TEXT_COLUMNS:
        if c in df.columns:
            results[c] = df[c].iloc[r_rows].astype("string").reset_index(drop=True)
    results["clicks"] = (
        np.nan_to_num(clicks[r_rows]).astype(np.int16)
        if clicks is not None
        else np.zeros(n_r, dtype=np.int16)
    )
    results["dwell"] = (
        dwell[r_rows].astype(np.float32)
        if dwell is not None
        else np.full(n_r, np.nan, dtype=np.float32)
    )
    results["user_grade"] = (
        ugrade[r_rows].astype(np.float32)
        if ugrade is not None
        else np.full(n_r, np.nan, dtype=np.float32)
    )
    return SessionFrame(
        sessions=sessions,
        queries=queries,
        results=results,
        users=pd.DataFrame({"user_id": sessions["user_id"].cat.categories.astype("string")}),
        topics=pd.DataFrame(
            {
                "topic_id": sessions["topic_id"].cat.categories.astype("string"),
                "title": "",
                "description": "",
                "judged": True,
            }
        ),
        systems=pd.DataFrame(
            {
                "system_id": sessions["system_id"].cat.categories.astype("string"),
                "name": "",
                "description": "",
            }
        ),
        grade_scale=user_grade_scale,
        source=source,
    )


def frame_to_flat(frame: SessionFrame) -> pd.DataFrame:
    """The inverse of :func:`frame_from_flat`: one row per result, empty queries as null rows.

    Examples
    --------
    >>> flat = pd.DataFrame({"session_id": ["s1", "s1"], "user_id": "u", "topic_id": "T",
    ...     "system_id": "S", "query_pos": [1, 2], "rank": [1, None], "doc_id": ["d1", None]})
    >>> frame_to_flat(frame_from_flat(flat)[0])[["query_pos", "rank", "doc_id"]].to_dict("list")
    {'query_pos': [1, 2], 'rank': [1, None], 'doc_id': ['d1', None]}
    """
    q, r, s = frame.queries, frame.results, frame.sessions
    s_idx = q["session_id"].cat.codes.to_numpy()
    empty = np.flatnonzero(q["n_results"].to_numpy() == 0)
    # each result row, plus one placeholder row per empty query, in query order
    q_idx = np.concatenate([r["query_idx"].to_numpy(np.int64), empty])
    row_of = np.concatenate([np.arange(len(r)), np.full(len(empty), -1)])
    rank = np.concatenate([r["rank"].to_numpy(np.int64), np.zeros(len(empty), dtype=np.int64)])
    order = np.lexsort((rank, q_idx))
    q_idx, row_of = q_idx[order], row_of[order]
    has = row_of >= 0
    if not len(r):  # no result rows at all: every row is an empty-query placeholder
        r = pd.DataFrame({c: pd.Series([pd.NA], dtype=r[c].dtype) for c in r.columns})
    safe = np.where(has, row_of, 0)
    sess_of = s_idx[q_idx]
    out = pd.DataFrame(
        {
            "session_id": q["session_id"].iloc[q_idx].reset_index(drop=True),
            "user_id": s["user_id"].iloc[sess_of].reset_index(drop=True),
            "topic_id": s["topic_id"].iloc[sess_of].reset_index(drop=True),
            "system_id": s["system_id"].iloc[sess_of].reset_index(drop=True),
            "query_pos": q["query_pos"].iloc[q_idx].to_numpy(),
            "query_id": q["query_id"].iloc[q_idx].reset_index(drop=True),
            "query_text": q["text"].iloc[q_idx].reset_index(drop=True),
            "query_time": q["time"].iloc[q_idx].reset_index(drop=True),
            "scan_depth": q["scan_depth"].iloc[q_idx].reset_index(drop=True),
            "qrels_id": q["qrels_id"].iloc[q_idx].reset_index(drop=True),
            "rank": pd.arrays.IntegerArray(
                np.where(has, r["rank"].to_numpy()[safe], 0).astype(np.int32), ~has
            ),
            "doc_id": r["doc_id"].iloc[safe].reset_index(drop=True).astype(object).where(has, None),
        }
    )
    for c in (*_TEXT_COLUMNS, "clicks", "dwell", "user_grade"):
        if c in r.columns:
            out[c] = r[c].iloc[safe].reset_index(drop=True).where(has)
    out["session_start"] = s["start_time"].iloc[sess_of].reset_index(drop=True)
    out["session_end"] = s["end_time"].iloc[sess_of].reset_index(drop=True)
    for c in s.columns:
        if str(c).startswith("rating_"):
            out[c] = s[c].iloc[sess_of].to_numpy()
    return out

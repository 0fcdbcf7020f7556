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

import itertools
from collections.abc import Callable, Sequence
from typing import Any, Final, Literal

import numpy as np
import numpy.typing as npt
import pandas as pd

from ..errors import InputFormatError, ParseError, ValidationFailed
from ..frame import FLAT_REQUIRED, SessionFrame
from ..models.judgments import GradeScale
from ..problems import LoadReport, Mode, Problem
from ..rules import check_in_levels, check_one_to_n, check_unique_within
from .sources import Columns, FrameColumns

__all__ = [
    "LOAD_PHASES",
    "frame_from_flat",
    "frame_to_flat",
]


#: the phases :func:`frame_from_flat` reports to its ``progress`` callback, in order
LOAD_PHASES: Final[tuple[str, ...]] = (
    "reading sessions",
    "reading documents and ranks",
    "checking sessions",
    "checking ranks and documents",
    "reading clicks and grades",
    "reading queries and sessions",
    "building tables",
)
_ID_COLUMNS: Final = ("session_id", "user_id", "topic_id", "system_id")
_TEXT_COLUMNS: Final = ("url", "title", "snippet")


# ---------------------------------------------------------------------------------------------
# reading files


# ---------------------------------------------------------------------------------------------
# flat -> frame


class _Collector:
    """Collect problems per row; map rows to the session they reject."""

    def __init__(
        self,
        source: str,
        session_codes: npt.NDArray[np.int32],
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
            if code >= 0:  # rows without a session id are dropped with their own problem
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
        if cats.dtype != "string":
            col = col.cat.rename_categories(list(cats.astype(str)))
            col = col.cat.set_categories(pd.Index(col.cat.categories, dtype="string"))
        return col
    codes, uniques = pd.factorize(col, sort=False)
    cat = pd.Categorical.from_codes(codes, categories=pd.Index(uniques.astype(str), dtype="string"))
    out: pd.Series = pd.Series(cat)
    return out


def _compact(codes: npt.NDArray[np.integer[Any]], categories: pd.Index) -> pd.Categorical:
    """A categorical of ``codes`` keeping only the categories used (a bincount, no sort)."""
    valid = codes >= 0
    used = np.bincount(codes[valid], minlength=len(categories)) > 0
    remap = (np.cumsum(used) - 1).astype(np.int32)
    new = np.where(valid, remap[np.maximum(codes, 0)], -1).astype(np.int32)
    return pd.Categorical.from_codes(new, categories=categories[used])


def _take(arr: npt.NDArray[Any], rows: npt.NDArray[np.int64] | None) -> npt.NDArray[Any]:
    """``arr[rows]``, or ``arr`` itself when ``rows`` is ``None`` (the identity: rows in order)."""
    return arr if rows is None else arr[rows]


def _numeric(
    raw: pd.Series,
    name: str,
    coll: _Collector,
    *,
    integer: bool,
    dtype: type[np.floating[Any]] = np.float64,
    nullable_rows: npt.NDArray[np.bool_] | None = None,
    at: npt.NDArray[np.int64] | None = None,
) -> npt.NDArray[np.floating[Any]]:
    """Column values as floats (NaN = missing); non-numeric values are problems.

    ``raw`` holds the column at rows ``at`` (all rows when ``None``): query- and
    session-level columns are read at the first row of each query or session.
    Row-level columns use ``float32``, exact for the integers they hold.
    """
    where = (lambda idx: idx) if at is None else (lambda idx: at[idx])
    if pd.api.types.is_numeric_dtype(raw.dtype) and not isinstance(raw.dtype, pd.CategoricalDtype):
        vals = raw.to_numpy(dtype=dtype, na_value=np.nan, copy=True)
        bad_text = None
    else:
        conv = pd.to_numeric(raw.astype("string"), errors="coerce")
        vals = conv.to_numpy(dtype=dtype, na_value=np.nan, copy=True)
        bad_text = np.isnan(vals) & raw.notna().to_numpy()
        if bad_text.any():
            rows = np.flatnonzero(bad_text)
            kind = "an integer" if integer else "a number"
            coll.add(where(rows), name, [f"must be {kind}"] * len(rows), raw.iloc[rows].tolist())
    if integer:
        frac = vals != np.floor(vals)  # NaN compares unequal to itself: excluded below
        frac &= ~np.isnan(vals)
        if frac.any():
            rows = np.flatnonzero(frac)
            coll.add(where(rows), name, ["must be a whole number"] * len(rows), vals[rows].tolist())
            vals[rows] = np.nan
    if nullable_rows is not None:
        missing = np.isnan(vals) & ~nullable_rows
        if bad_text is not None:
            missing &= ~bad_text
        if missing.any():
            rows = np.flatnonzero(missing)
            coll.add(where(rows), name, ["is required"] * len(rows))
    return vals


def _times(raw: pd.Series, name: str, coll: _Collector, at: npt.NDArray[np.int64]) -> pd.Series:
    """Times at rows ``at`` (``raw`` already taken there) as UTC; unparseable ones are problems."""
    raw = raw.reset_index(drop=True)
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


def _integers(
    raw: pd.Series,
    name: str,
    coll: _Collector,
    *,
    fill: int,
    nullable_rows: npt.NDArray[np.bool_] | None,
) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.bool_]]:
    """An integer column as int32 (missing -> ``fill``) and its missing mask.

    Integer columns (Parquet, typed DataFrames) are converted directly; anything
    else goes through :func:`_numeric`, which reports non-numbers and fractions.
    ``nullable_rows`` marks rows that may be empty (``None``: none may).
    """
    if pd.api.types.is_integer_dtype(raw.dtype) and not isinstance(raw.dtype, pd.CategoricalDtype):
        missing = raw.isna().to_numpy()
        values = raw.to_numpy(dtype=np.int64, na_value=fill) if missing.any() else raw.to_numpy()
        lo, hi = np.iinfo(np.int32).min, np.iinfo(np.int32).max
        out_of_range = (values < lo) | (values > hi)
        if out_of_range.any():
            rows = np.flatnonzero(out_of_range)
            coll.add(rows, name, ["must fit in 32 bits"] * len(rows), values[rows].tolist())
        ints = values.astype(np.int32)
        required = missing if nullable_rows is None else missing & ~nullable_rows
        if required.any():
            rows = np.flatnonzero(required)
            coll.add(rows, name, ["is required"] * len(rows))
        return ints, missing
    allowed = np.zeros(len(raw), dtype=bool) if nullable_rows is None else nullable_rows
    vals = _numeric(raw, name, coll, integer=True, dtype=np.float64, nullable_rows=allowed)
    missing = np.isnan(vals)
    return _to_int(vals, fill=fill, dtype=np.int32), missing


def _to_int(
    values: npt.NDArray[np.floating[Any]], *, fill: int, dtype: type[np.integer[Any]]
) -> npt.NDArray[Any]:
    """Floats with NaN as integers, NaN replaced by ``fill`` (no ±inf scan as in nan_to_num)."""
    with np.errstate(invalid="ignore"):  # NaN casts to garbage here, replaced just below
        out = values.astype(dtype)
    nan = np.isnan(values)
    if nan.any():
        out[nan] = fill
    return out


def _no_times(n: int) -> pd.Series:
    return pd.Series(pd.NaT, index=range(n), dtype="datetime64[ns, UTC]")


def _segment_bounds(starts: npt.NDArray[np.bool_], chunk: int) -> list[tuple[int, int]]:
    """Split ``range(len(starts))`` into pieces of about ``chunk`` rows at group starts."""
    n = len(starts)
    if n <= chunk:
        return [(0, n)]
    start_idx = np.flatnonzero(starts)
    cuts = np.unique(
        start_idx[
            np.searchsorted(start_idx, np.arange(chunk, n, chunk)).clip(max=len(start_idx) - 1)
        ]
    )
    edges = [0, *[int(c) for c in cuts if c > 0], n]
    return [(a, b) for a, b in itertools.pairwise(edges) if b > a]


#: rows per piece for the grouped rule checks: bounds their temporaries on huge tables
_CHECK_CHUNK: Final = 1 << 24


def frame_from_flat(
    flat: pd.DataFrame | Columns,
    *,
    source: str | None = None,
    mode: Mode = "strict",
    max_problems: int = 50,
    user_grade_scale: GradeScale | None = None,
    location_kind: Literal["row", "line"] = "row",
    row_locations: npt.NDArray[np.int64] | None = None,
    progress: Callable[[str], None] | None = None,
    max_rank: int | None = None,
) -> tuple[SessionFrame, LoadReport]:
    """Validate a flat table and build the columnar :class:`SessionFrame`.

    The rules (:mod:`sessionval.rules`) are checked for all rows at once:
    query positions ``1..n`` per session, ranks ``1..k`` per query, a document at
    most once per list, searcher grades on the scale, non-negative clicks and
    dwell, and one user/topic/system per session.  Query- and session-level
    columns (query text and time, scan depth, session times, ratings) are read at
    the first row of each query or session.

    Parameters
    ----------
    flat
        One row per result (layout in the module docstring), as a DataFrame (not
        modified) or a column source such as
        :class:`~sessionval.validate.sources.ParquetColumns`, which reads a large file
        one column at a time.
    source
        File name used in messages (default: the column source's).
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
    progress
        Called with the name of each phase in :data:`LOAD_PHASES` as it starts
        (a progress bar on long inputs).
    max_rank
        The result lists were cut at this rank when read (``load_sessions(max_rank=)``):
        a logged scan depth beyond a cut list is clipped to it instead of reported.

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
    tick = progress or (lambda _phase: None)
    tick(LOAD_PHASES[0])
    src: Columns = (
        FrameColumns(flat, source=source or "<frame>") if isinstance(flat, pd.DataFrame) else flat
    )
    source = source or src.source
    missing = [c for c in FLAT_REQUIRED if c not in src]
    if missing:
        raise InputFormatError(
            f"{source}: missing column(s) {', '.join(missing)}; "
            f"found {', '.join(src.names)}"
            f" (required: {', '.join(FLAT_REQUIRED)})"
        )
    n_rows = len(src)
    if n_rows == 0:
        raise ParseError(f"{source}: no rows (expected one row per result)")
    locate = _locator(location_kind, row_locations)

    # sessions keep the order of first appearance; codes index `names`
    sess_raw = _as_category(src.column("session_id"))
    raw_codes = sess_raw.cat.codes.to_numpy()
    missing_sess = raw_codes < 0
    # a value first appears at row 0 or where the code changes: factorize only those rows
    present = raw_codes[~missing_sess] if missing_sess.any() else raw_codes
    change = np.flatnonzero(present[1:] != present[:-1]) + 1
    first_seen = pd.unique(np.concatenate([present[:1], present[change]]))
    del present, change
    remap = np.full(len(sess_raw.cat.categories) + 1, -1, dtype=np.int32)
    remap[first_seen] = np.arange(len(first_seen), dtype=np.int32)
    s_codes = remap[raw_codes]  # -1 (null) picks the sentinel slot
    names = pd.Index(sess_raw.cat.categories[first_seen].astype(str))
    del sess_raw, raw_codes
    coll = _Collector(source, s_codes, names, locate)
    if missing_sess.any():
        rows = np.flatnonzero(missing_sess)
        coll.problems.extend(
            Problem(source, locate(int(r)), "session_id", "is required") for r in rows.tolist()
        )

    tick(LOAD_PHASES[1])
    doc = _as_category(src.column("doc_id"))
    doc_codes = doc.cat.codes.to_numpy()
    doc_categories = doc.cat.categories
    del doc
    empty_row = doc_codes < 0
    pos_i, pos_missing = _integers(
        src.column("query_pos"), "query_pos", coll, fill=-1, nullable_rows=None
    )
    rank_i, rank_missing = _integers(
        src.column("rank"), "rank", coll, fill=0, nullable_rows=empty_row
    )
    rank_present = ~rank_missing
    del pos_missing
    # a row with a rank but no document
    half = rank_present & empty_row
    if half.any():
        rows = np.flatnonzero(half)
        coll.add(
            rows,
            "doc_id",
            ["is required when rank is given (leave both empty for a query without results)"]
            * len(rows),
        )
    del rank_missing, half

    # order rows: session (first appearance), query_pos, rank; the identity when already sorted
    order: npt.NDArray[np.int64] | None = None
    if not _is_sorted(s_codes, pos_i, rank_i):
        order = np.lexsort((rank_i, pos_i, s_codes))
    sc, pc = _take(s_codes, order), _take(pos_i, order)

    # ---- queries: one per (session, query_pos); sessions
    qstart = np.ones(n_rows, dtype=bool)
    qstart[1:] = (sc[1:] != sc[:-1]) | (pc[1:] != pc[:-1])
    sstart = np.ones(n_rows, dtype=bool)
    sstart[1:] = sc[1:] != sc[:-1]
    q_first_sorted = np.flatnonzero(qstart)
    q_first = q_first_sorted if order is None else order[q_first_sorted]
    s_first = np.flatnonzero(sstart) if order is None else order[sstart]

    # ---- one user, topic and system per session (each kept at the sessions' first rows)
    tick(LOAD_PHASES[2])
    entity_at_start: dict[str, pd.Series] = {}
    for name in ("user_id", "topic_id", "system_id"):
        col = _as_category(src.column(name))
        vcodes = col.cat.codes.to_numpy()
        miss = (vcodes < 0) & ~missing_sess
        if miss.any():
            rows = np.flatnonzero(miss)
            coll.add(rows, name, ["is required"] * len(rows))
        vs = _take(vcodes, order)
        change = np.zeros(n_rows, dtype=bool)
        change[1:] = (sc[1:] == sc[:-1]) & (vs[1:] != vs[:-1])
        if change.any():
            bad_sorted = np.flatnonzero(change)
            rows = bad_sorted if order is None else order[bad_sorted]
            coll.add(
                rows,
                name,
                [f"differs from an earlier row of the same session (one {name[:-3]} per session)"]
                * len(rows),
                col.iloc[rows].astype(str).tolist(),
            )
        entity_at_start[name] = col.iloc[s_first].reset_index(drop=True)
        del col, vcodes, vs, change

    q_session = sc[q_first_sorted]
    q_pos = pc[q_first_sorted]
    n_q = len(q_first)
    v = check_one_to_n(q_pos, q_session, what="query position")
    if v:
        coll.add(q_first[v.rows], "query_pos", v.messages, q_pos[v.rows].tolist())
    del pc

    # ---- results: ranks 1..k per query, unique documents (in pieces of whole queries)
    tick(LOAD_PHASES[3])
    q_of_row = np.cumsum(qstart, dtype=np.int32)  # query per sorted row
    q_of_row -= 1
    empty_sorted = _take(empty_row, order)
    present_sorted = _take(rank_present, order)
    res_mask = present_sorted & ~empty_sorted
    empty_q = np.zeros(n_q, dtype=bool)
    empty_q[q_of_row[empty_sorted & ~present_sorted]] = True
    n_res_q = np.bincount(q_of_row[res_mask], minlength=n_q)
    mixed = empty_q & (n_res_q > 0)
    if mixed.any():
        rows = q_first[np.flatnonzero(mixed)]
        coll.add(rows, "doc_id", ["a query has both results and an empty-result row"] * len(rows))
    del empty_sorted, present_sorted, empty_q, mixed
    rank_s = _take(rank_i, order)
    doc_s = _take(doc_codes, order)
    for a, b in _segment_bounds(qstart, _CHECK_CHUNK):
        m = res_mask[a:b]
        in_piece = np.flatnonzero(m) + a
        rq, rr = q_of_row[in_piece], rank_s[in_piece]
        v = check_one_to_n(rr, rq, what="rank", presorted=True)  # sorted space
        if v:
            rows = in_piece[v.rows] if order is None else order[in_piece[v.rows]]
            coll.add(rows, "rank", v.messages, rr[v.rows].tolist())
        v = check_unique_within(doc_s[in_piece], rq, what="document", presorted_groups=True)
        if v:
            rows = in_piece[v.rows] if order is None else order[in_piece[v.rows]]
            coll.add(
                rows, "doc_id", v.messages, doc_categories[doc_codes[rows]].astype(str).tolist()
            )
    del rank_s, doc_s

    # ---- optional row-level columns (float32: exact for the values they hold)
    tick(LOAD_PHASES[4])

    def row_numeric(name: str, integer: bool) -> npt.NDArray[np.floating[Any]] | None:
        if name not in src:
            return None
        return _numeric(src.column(name), name, coll, integer=integer, dtype=np.float32)

    clicks_i = None
    if "clicks" in src:
        clicks_i, _ = _integers(
            src.column("clicks"), "clicks", coll, fill=0, nullable_rows=np.ones(n_rows, dtype=bool)
        )
    dwell = row_numeric("dwell", False)
    ugrade = row_numeric("user_grade", True)
    for name, arr in (("clicks", clicks_i), ("dwell", dwell)):
        if arr is not None:
            neg = arr < 0
            if neg.any():
                rows = np.flatnonzero(neg)
                coll.add(rows, name, ["must be >= 0"] * len(rows), arr[rows].tolist())
    if ugrade is not None and user_grade_scale is not None:
        v = check_in_levels(ugrade, user_grade_scale.grades, what="user_grade")
        if v:
            coll.add(v.rows, "user_grade", v.messages)
    clicks = None
    if clicks_i is not None:
        too_many = clicks_i > np.iinfo(np.int16).max
        if too_many.any():
            rows = np.flatnonzero(too_many)
            coll.add(rows, "clicks", ["must be <= 32767"] * len(rows), clicks_i[rows].tolist())
        clicks = clicks_i.clip(0, np.iinfo(np.int16).max).astype(np.int16)
        del clicks_i

    # ---- query- and session-level columns: read once per query / session
    tick(LOAD_PHASES[5])
    scan = None
    if "scan_depth" in src:
        scan = _numeric(
            src.take("scan_depth", q_first), "scan_depth", coll, integer=True, at=q_first
        )
        over = scan > n_res_q
        if max_rank is not None:
            # lists were cut at max_rank when read: a deeper scan is clipped, not an error
            cut = over & (n_res_q >= max_rank)
            scan[cut] = n_res_q[cut]
            over &= ~cut
        bad = ~np.isnan(scan) & ((scan < 0) | over)
        if bad.any():
            qi = np.flatnonzero(bad)
            coll.add(
                q_first[qi],
                "scan_depth",
                [f"must be between 0 and the number of results ({int(n_res_q[i])})" for i in qi],
                scan[qi].tolist(),
            )

    def times(name: str, at: npt.NDArray[np.int64]) -> pd.Series:
        return _times(src.take(name, at), name, coll, at) if name in src else _no_times(len(at))

    q_time = times("query_time", q_first)
    s_start = times("session_start", s_first)
    s_end = times("session_end", s_first)
    rating_vals = {
        c: _numeric(src.take(c, s_first), c, coll, integer=False, at=s_first)
        for c in src.names
        if c.startswith("rating_")
    }

    report = LoadReport(source=source, records_read=len(names), rows_read=n_rows)
    if coll.problems and mode == "strict":
        truncated = len(coll.problems) > max_problems
        raise ValidationFailed(coll.problems[:max_problems], truncated=truncated)

    # lenient: drop every row of a rejected session (and rows without a session)
    keep: npt.NDArray[np.bool_] | None = None
    if coll.bad_sessions or missing_sess.any():
        bad_codes = np.fromiter(coll.bad_sessions, dtype=np.int64, count=len(coll.bad_sessions))
        bad_session = np.zeros(len(names) + 1, dtype=bool)  # last slot: rows without a session
        bad_session[bad_codes] = True
        bad_session[-1] = True
        keep = ~bad_session[sc]
        report.problems = coll.problems
    report.sessions_rejected = len(coll.bad_sessions)
    report.sessions_accepted = len(names) - report.sessions_rejected

    # ---- assemble the three tables from the kept, sorted rows
    tick(LOAD_PHASES[6])
    q_keep = np.ones(n_q, dtype=bool) if keep is None else keep[q_first_sorted]
    s_keep = np.ones(len(s_first), dtype=bool) if keep is None else keep[sstart]
    res_kept = res_mask if keep is None else res_mask & keep
    del res_mask, keep

    kept_sessions = sc[sstart][s_keep]  # codes of kept sessions, in first-appearance order
    sess_names = names[kept_sessions]
    new_code = np.full(len(names) + 1, -1, dtype=np.int32)
    new_code[kept_sessions] = np.arange(len(kept_sessions), dtype=np.int32)
    sess_cat = pd.CategoricalDtype(pd.Index(sess_names, dtype="string"), ordered=False)
    q_rows = q_first[q_keep]
    q_sess = new_code[q_session[q_keep]]
    q_new = (np.cumsum(q_keep, dtype=np.int64) - 1).astype(np.int32)  # renumber kept queries

    def entity(name: str) -> pd.Categorical:
        col = entity_at_start[name][s_keep]
        return _compact(col.cat.codes.to_numpy(), col.cat.categories)

    sessions = pd.DataFrame(
        {
            "session_id": pd.Categorical.from_codes(
                np.arange(len(kept_sessions), dtype=np.int32), dtype=sess_cat
            ),
            "user_id": entity("user_id"),
            "topic_id": entity("topic_id"),
            "system_id": entity("system_id"),
            "start_time": s_start[s_keep].reset_index(drop=True),
            "end_time": s_end[s_keep].reset_index(drop=True),
            "n_queries": np.bincount(q_sess, minlength=len(kept_sessions)).astype(np.int16),
        }
    )
    for c, vals in rating_vals.items():
        sessions[c] = vals[s_keep]

    q_pos_kept = q_pos[q_keep].astype(np.int16)
    default_qid = (
        pd.Series(sess_names[q_sess], dtype="string") + ":" + pd.Series(q_pos_kept).astype("string")
    )
    qid = (
        src.take("query_id", q_rows).astype("string").fillna(default_qid)
        if "query_id" in src
        else default_qid
    )
    text = (
        src.take("query_text", q_rows).astype("string").fillna("")
        if "query_text" in src
        else pd.Series([""] * len(q_rows), dtype="string")
    )
    qrels_key = sessions["topic_id"].astype("string").iloc[q_sess].reset_index(drop=True)
    if "qrels_id" in src:
        # per-session or per-turn judgment keys; an empty key falls back to the topic
        qrels_key = src.take("qrels_id", q_rows).astype("string").fillna(qrels_key)
    if scan is not None:
        kept_scan = scan[q_keep]
        scan_col = pd.arrays.IntegerArray(
            np.nan_to_num(kept_scan).astype(np.int32), np.isnan(kept_scan)
        )
    else:
        n_kept = len(q_rows)
        scan_col = pd.arrays.IntegerArray(
            np.zeros(n_kept, dtype=np.int32), np.ones(n_kept, dtype=bool)
        )
    queries = pd.DataFrame(
        {
            "session_id": pd.Categorical.from_codes(q_sess, dtype=sess_cat),
            "query_pos": q_pos_kept,
            "query_id": qid,
            "text": text,
            "time": q_time[q_keep].reset_index(drop=True),
            "n_results": n_res_q[q_keep].astype(np.int32),
            "scan_depth": scan_col,
            "qrels_id": qrels_key.astype("category"),
        }
    )

    # results: each column is taken from the kept rows and its source freed at once, so the
    # peak stays near the size of the result (boolean compress when rows are already sorted)
    r_rows: npt.NDArray[np.int64] | None = None
    if order is not None:
        r_rows = order[res_kept]

    def pick(arr: npt.NDArray[Any]) -> npt.NDArray[Any]:
        """Kept result rows of a column in input order."""
        return arr[res_kept] if r_rows is None else arr[r_rows]

    query_idx = q_new[q_of_row[res_kept]]
    del q_of_row, sc, pos_i
    results = pd.DataFrame(
        {
            "query_idx": query_idx,
            "session_id": pd.Categorical.from_codes(q_sess[query_idx], dtype=sess_cat),
            "query_pos": q_pos_kept[query_idx],
        },
        copy=False,
    )
    results["rank"] = pick(rank_i)
    del rank_i
    results["doc_id"] = _compact(pick(doc_codes), doc_categories)
    del doc_codes
    n_r = len(results)
    text_rows = r_rows if r_rows is not None else np.flatnonzero(res_kept)
    for c in _TEXT_COLUMNS:
        if c in src:
            results[c] = src.take(c, text_rows).astype("string")
    results["clicks"] = pick(clicks) if clicks is not None else np.zeros(n_r, dtype=np.int16)
    del clicks
    results["dwell"] = pick(dwell) if dwell is not None else np.full(n_r, np.nan, np.float32)
    del dwell
    results["user_grade"] = pick(ugrade) if ugrade is not None else np.full(n_r, np.nan, np.float32)
    del ugrade
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
    ), report


def _is_sorted(
    s: npt.NDArray[np.int32], p: npt.NDArray[np.int32], r: npt.NDArray[np.int32]
) -> bool:
    """Rows ordered by (session, query_pos, rank) with no repeated triple, checked in pieces."""
    n = len(s)
    step = _CHECK_CHUNK
    for a in range(0, max(n - 1, 0), step):
        b = min(a + step + 1, n)
        ds, dp, dr = np.diff(s[a:b]), np.diff(p[a:b]), np.diff(r[a:b])
        ok = (ds > 0) | ((ds == 0) & ((dp > 0) | ((dp == 0) & (dr > 0))))
        if not ok.all():
            return False
    return True


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

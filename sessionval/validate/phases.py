"""The phases of :func:`~sessionval.validate.flat.frame_from_flat`, one function per phase.

Each phase reads a few columns of the flat table, checks the study's rules on
them for all rows at once and leaves what later phases need in a
:class:`LoadState`.  The phases run in the order of
:data:`~sessionval.validate.flat.LOAD_PHASES`; :func:`settle` then raises (strict)
or picks the sessions to keep (lenient), and
:func:`~sessionval.validate.assemble.build_frame` assembles the three tables.
Arrays are released from the state as soon as no later phase needs them, which
keeps the peak memory of a million-session load near the size of the frame it
builds.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any, Final, Literal

import numpy as np
import numpy.typing as npt
import pandas as pd

from .._types import BoolArray, IntArray
from ..errors import InputFormatError, ParseError, raise_if_any
from ..frame import FLAT_COLUMNS, FLAT_REQUIRED
from ..models.judgments import GradeScale
from ..problems import LoadReport, Mode
from ..rules import check_in_levels, check_one_to_n, check_unique_within, scan_depth_fix
from .collect import ProblemCollector, row_locator
from .fields import (
    as_category,
    blank_rows,
    first_appearance_codes,
    missing_times,
    parse_integers,
    parse_numbers,
    parse_times,
    take_rows,
)
from .ids import strip_ids
from .sources import Columns, FrameColumns

__all__ = [
    "ENTITY_COLUMNS",
    "MAX_GRADE",
    "MAX_QUERY_POS",
    "MIN_GRADE",
    "REPEATED_DOCUMENT",
    "LoadState",
    "check_results",
    "check_sessions",
    "queries_per_row",
    "read_query_values",
    "read_ranks",
    "read_result_values",
    "read_sessions",
    "settle",
]

#: the session-level ids besides ``session_id`` (user, topic, system): one value per session
ENTITY_COLUMNS: Final = tuple(
    c.name
    for c in FLAT_COLUMNS
    if c.level == "session" and c.kind == "id" and c.name != "session_id"
)

#: the largest query position (and number of queries in a session): the frame stores int16
MAX_QUERY_POS: Final = int(np.iinfo(np.int16).max)
#: the searcher grades allowed: grades are int16 wherever they are integers
MIN_GRADE: Final = int(np.iinfo(np.int16).min)
MAX_GRADE: Final = int(np.iinfo(np.int16).max)
#: the message of a document listed twice in one result list (lenient mode repairs it)
REPEATED_DOCUMENT: Final = "document occurs more than once in the same result list"

#: rows per piece for the grouped rule checks: bounds their temporaries on huge tables
#: (a few bytes per row of the piece; 4M rows keep them near 100 MB)
_CHECK_CHUNK: Final = 1 << 22

#: row-level values are float32, query- and session-level ones float64
Floats = npt.NDArray[np.floating[Any]]


@dataclass(slots=True, eq=False, repr=False)
class LoadState:
    """What the phases of one load share; each field is set by the phase named beside it.

    Rows are table rows in input order; "sorted" arrays follow the rows ordered by
    (session, query position, rank), which ``order`` maps back to input rows
    (``None`` when the input is already in that order).
    """

    # read_sessions
    src: Columns
    source: str
    n_rows: int
    coll: ProblemCollector
    names: pd.Index  # session ids in order of first appearance
    s_codes: npt.NDArray[np.int32]  # session code per row (-1: none)
    missing_sess: BoolArray
    # read_ranks
    doc_codes: npt.NDArray[np.integer[Any]] = field(init=False)
    doc_categories: pd.Index = field(init=False)
    doc_all_used: bool = field(init=False)  # every category is used by a row
    empty_row: BoolArray = field(init=False)  # no document: a query without results
    pos_i: npt.NDArray[np.int32] = field(init=False)
    rank_i: npt.NDArray[np.int32] = field(init=False)
    rank_present: BoolArray = field(init=False)
    order: IntArray | None = field(init=False)
    sc: npt.NDArray[np.int32] = field(init=False)  # session code per sorted row
    pc: npt.NDArray[np.int32] = field(init=False)  # query position per sorted row
    qstart: BoolArray = field(init=False)  # sorted row starts a query (until check_results)
    sstart: BoolArray = field(init=False)  # sorted row starts a session (until check_sessions)
    s_first_sorted: IntArray = field(init=False)  # sorted row of each session's first row
    q_first_sorted: IntArray = field(init=False)
    q_first: IntArray = field(init=False)  # input row of each query's first row
    s_first: IntArray = field(init=False)  # input row of each session's first row
    # check_sessions
    entity_at_start: dict[str, pd.Series] = field(init=False)
    q_session: npt.NDArray[np.int32] = field(init=False)
    q_pos: npt.NDArray[np.int32] = field(init=False)
    # check_results
    q_of_row: npt.NDArray[np.int32] = field(init=False)  # query per sorted row
    res_mask: BoolArray = field(init=False)  # sorted row is a result (not an empty query)
    n_res_q: IntArray = field(init=False)
    # read_result_values
    clicks: npt.NDArray[np.int16] | None = field(init=False)
    dwell: Floats | None = field(init=False)
    ugrade: Floats | None = field(init=False)
    # read_query_values
    scan: Floats | None = field(init=False)
    q_time: pd.Series = field(init=False)
    s_start: pd.Series = field(init=False)
    s_end: pd.Series = field(init=False)
    ratings: dict[str, Floats] = field(init=False)
    query_keys: dict[str, pd.Series] = field(init=False)  # query_id, qrels_id: stripped, per query
    # check_results: input rows repeating a document of their result list
    repeated_docs: list[IntArray] = field(init=False, default_factory=list)

    @property
    def n_queries(self) -> int:
        """Number of queries (one per session and query position)."""
        return len(self.q_first)

    def input_rows(self, sorted_rows: IntArray) -> IntArray:
        """The input rows of ``sorted_rows``."""
        return sorted_rows if self.order is None else self.order[sorted_rows]


# ---------------------------------------------------------------------------------------------
# the phases, in the order of LOAD_PHASES


def read_sessions(
    flat: pd.DataFrame | Columns,
    *,
    source: str | None,
    location_kind: Literal["row", "line"],
    row_locations: npt.NDArray[np.integer[Any]] | None,
) -> LoadState:
    """Phase "reading sessions": check the columns, encode session ids, start the state.

    Raises
    ------
    InputFormatError
        A required column is missing (the message lists those found).
    ParseError
        The table has no rows.
    """
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
    names, s_codes, missing_sess = first_appearance_codes(src.column("session_id"))
    coll = ProblemCollector(source, s_codes, names, row_locator(location_kind, row_locations))
    if missing_sess.any():
        coll.add(np.flatnonzero(missing_sess), "session_id", "is required")
    empty = np.flatnonzero(np.asarray(names == "", dtype=bool))
    if len(empty):
        blank = s_codes == int(empty[0])
        _report_blank(coll, blank, "session_id", src)
    return LoadState(src, source, n_rows, coll, names, s_codes, missing_sess)


def _report_blank(coll: ProblemCollector, blank: BoolArray, name: str, src: Columns) -> None:
    """A problem per row whose id is only whitespace (ids are stripped in every format)."""
    rows = np.flatnonzero(blank)
    if len(rows):
        written = src.take(name, rows).astype(str).tolist()
        coll.add(rows, name, "must not be empty (the id is only whitespace)", written)


def read_ranks(st: LoadState) -> None:
    """Phase "reading documents and ranks": documents, query positions, ranks; row order."""
    raw_doc = st.src.column("doc_id")
    # categories from a Parquet dictionary or from factorising hold only values in use; a
    # categorical DataFrame column may carry others
    st.doc_all_used = not isinstance(st.src, FrameColumns) or not isinstance(
        raw_doc.dtype, pd.CategoricalDtype
    )
    doc = as_category(raw_doc)
    del raw_doc
    _report_blank(st.coll, blank_rows(doc), "doc_id", st.src)
    st.doc_codes = doc.cat.codes.to_numpy()
    st.doc_categories = doc.cat.categories
    del doc
    st.empty_row = st.doc_codes < 0
    st.pos_i, _ = parse_integers(
        st.src.column("query_pos"), "query_pos", st.coll, fill=-1, nullable_rows=None
    )
    st.rank_i, rank_missing = parse_integers(
        st.src.column("rank"), "rank", st.coll, fill=0, nullable_rows=st.empty_row
    )
    st.rank_present = ~rank_missing
    half = st.rank_present & st.empty_row  # a rank but no document
    if half.any():
        st.coll.add(
            np.flatnonzero(half),
            "doc_id",
            "is required when rank is given (leave both empty for a query without results)",
        )
    _order_rows(st)


def _order_rows(st: LoadState) -> None:
    """Order rows by session (first appearance), query position, rank; mark query starts."""
    st.order = None
    if not _is_sorted(st.s_codes, st.pos_i, st.rank_i):
        st.order = _row_order(st.s_codes, st.pos_i, st.rank_i)
    st.sc, st.pc = take_rows(st.s_codes, st.order), take_rows(st.pos_i, st.order)
    sc, pc = st.sc, st.pc
    st.qstart = np.ones(st.n_rows, dtype=bool)
    st.qstart[1:] = (sc[1:] != sc[:-1]) | (pc[1:] != pc[:-1])
    st.sstart = np.ones(st.n_rows, dtype=bool)
    st.sstart[1:] = sc[1:] != sc[:-1]
    st.q_first_sorted = np.flatnonzero(st.qstart)
    st.q_first = st.input_rows(st.q_first_sorted)
    st.s_first_sorted = np.flatnonzero(st.sstart)
    st.s_first = st.input_rows(st.s_first_sorted)


def _row_order(
    s: npt.NDArray[np.int32], p: npt.NDArray[np.int32], r: npt.NDArray[np.int32]
) -> npt.NDArray[np.intp]:
    """The stable order of rows by (session, query_pos, rank): ``np.lexsort``'s, faster.

    The three keys are packed into one int64 (each shifted to start at 0), sorted with
    a stable sort: about 10x faster than a three-key ``lexsort`` on 22 M rows, and linear
    when the rows come as a few sorted runs (a top-ranks-first file: two). Falls back to
    ``lexsort`` when the packed key could overflow.
    """
    if len(s) == 0:
        return np.arange(0, dtype=np.intp)
    lows = [int(a.min()) for a in (s, p, r)]
    spans = [int(a.max()) - lo + 1 for a, lo in zip((s, p, r), lows, strict=True)]
    if spans[0] * spans[1] * spans[2] >= 2**63:
        return np.lexsort((r, p, s))
    key = s.astype(np.int64)
    key -= lows[0]
    key *= spans[1]
    key += p
    key -= lows[1]
    key *= spans[2]
    key += r
    key -= lows[2]
    return np.argsort(key, kind="stable")


def _is_sorted(
    s: npt.NDArray[np.int32], p: npt.NDArray[np.int32], r: npt.NDArray[np.int32]
) -> bool:
    """Rows ordered by (session, query_pos, rank) with no repeated triple, checked in pieces."""
    n = len(s)
    for a in range(0, max(n - 1, 0), _CHECK_CHUNK):
        b = min(a + _CHECK_CHUNK + 1, n)
        ds, dp, dr = np.diff(s[a:b]), np.diff(p[a:b]), np.diff(r[a:b])
        ok = (ds > 0) | ((ds == 0) & ((dp > 0) | ((dp == 0) & (dr > 0))))
        if not ok.all():
            return False
    return True


def check_sessions(st: LoadState) -> None:
    """Phase "checking sessions": one user, topic and system per session; positions 1..n."""
    st.entity_at_start = {name: _one_per_session(st, name) for name in ENTITY_COLUMNS}
    st.q_session = st.sc[st.q_first_sorted]
    st.q_pos = st.pc[st.q_first_sorted]
    del st.pc, st.sstart
    v = check_one_to_n(st.q_pos, st.q_session, what="query position")
    if v:
        st.coll.add(st.q_first[v.rows], "query_pos", v.messages, st.q_pos[v.rows].tolist())
    # positions (and so queries per session) are stored in 16 bits: beyond, they would wrap;
    # one problem per session, at its first query beyond the limit
    beyond = np.flatnonzero(st.q_pos > MAX_QUERY_POS)
    if len(beyond):
        _, first = np.unique(st.q_session[beyond], return_index=True)
        qi = beyond[first]
        st.coll.add(
            st.q_first[qi],
            "query_pos",
            f"must be at most {MAX_QUERY_POS} (query positions and queries per session are "
            "stored in 16 bits)",
            st.q_pos[qi].tolist(),
        )


def _one_per_session(st: LoadState, name: str) -> pd.Series:
    """The column's value at each session's first row; a row that differs is a problem."""
    fast = _one_per_session_on_codes(st, name)
    if fast is not None:
        return fast
    col = as_category(st.src.column(name))
    _report_blank(st.coll, blank_rows(col), name, st.src)
    codes = col.cat.codes.to_numpy()
    miss = (codes < 0) & ~st.missing_sess
    if miss.any():
        st.coll.add(np.flatnonzero(miss), name, "is required")
    in_order = take_rows(codes, st.order)
    change = np.zeros(st.n_rows, dtype=bool)
    change[1:] = (st.sc[1:] == st.sc[:-1]) & (in_order[1:] != in_order[:-1])
    del in_order
    if change.any():
        rows = st.input_rows(np.flatnonzero(change))
        st.coll.add(
            rows,
            name,
            f"differs from an earlier row of the same session (one {name[:-3]} per session)",
            col.iloc[rows].astype(str).tolist(),
        )
    at_start: pd.Series = col.iloc[st.s_first].reset_index(drop=True)
    return at_start


def _one_per_session_on_codes(st: LoadState, name: str) -> pd.Series | None:
    """:func:`_one_per_session` on the dictionary codes of a Parquet column, when all is well.

    Rows are compared by their codes into the row groups' dictionaries (equal code:
    equal value); values are looked at only where the code changes within a session
    (a session crossing a row group, or a dictionary listing a value twice) and at the
    sessions' first rows.  The categories are the used values, stripped, in the order of
    their first dictionary entry: those :func:`as_category` gives, so the sessions table
    is the same.  ``None`` (the caller takes the full path, which reports) when rows are
    not in order, a session id or a value is missing, a value is blank or one differs
    within a session.
    """
    entry_codes = getattr(st.src, "entry_codes", None)
    if entry_codes is None or st.order is not None or st.missing_sess.any():
        return None
    found = entry_codes(name)
    if found is None:
        return None
    codes, dictionary = found
    if bool((codes < 0).any()):
        return None
    # rows whose code differs from the row before in the same session
    cand = np.flatnonzero((codes[1:] != codes[:-1]) & ~st.sstart[1:]) + 1
    at_first = codes[st.s_first]
    before, after = codes[cand - 1], codes[cand]
    del codes
    # every used entry is at a session's first row or where the code changes
    used = np.unique(np.concatenate([at_first, after]))
    import pyarrow as pa

    values = pd.Index(
        strip_ids(pd.Series(dictionary.take(pa.array(used, type=pa.int64())).to_pandas())),
        dtype="string",
    )
    if bool((values == "").any()):
        return None
    value_codes, categories = pd.factorize(values, sort=False)
    canon = value_codes.astype(np.int32)
    if len(cand) and bool(
        (canon[np.searchsorted(used, before)] != canon[np.searchsorted(used, after)]).any()
    ):
        return None
    codes_at_first = canon[np.searchsorted(used, at_first)]
    return pd.Series(
        pd.Categorical.from_codes(codes_at_first, categories=pd.Index(categories, dtype="string"))
    )


def check_results(st: LoadState) -> None:
    """Phase "checking ranks and documents": ranks 1..k per query, each document once.

    Checked in pieces of whole queries, so the temporaries stay bounded.
    """
    n_q = st.n_queries
    # rows per query (contiguous in sorted order); a repeat writes the query of each row
    # without the int32 copy of the whole mask that a cumulative sum makes
    q_rows = _rows_per_query(st)
    st.q_of_row = queries_per_row(st, q_rows)
    empty_sorted = take_rows(st.empty_row, st.order)
    present_sorted = take_rows(st.rank_present, st.order)
    st.res_mask = present_sorted & ~empty_sorted
    empty_q = np.zeros(n_q, dtype=bool)
    empty_q[st.q_of_row[empty_sorted & ~present_sorted]] = True
    # results per query: its rows less those that are not results (empty-result rows, few)
    st.n_res_q = q_rows - np.bincount(st.q_of_row[~st.res_mask], minlength=n_q)
    del q_rows
    mixed = empty_q & (st.n_res_q > 0)
    if mixed.any():
        rows = st.q_first[np.flatnonzero(mixed)]
        st.coll.add(rows, "doc_id", "a query has both results and an empty-result row")
    del empty_sorted, present_sorted, empty_q, mixed
    rank_s = take_rows(st.rank_i, st.order)
    doc_s = take_rows(st.doc_codes, st.order)
    for a, b in _segment_bounds(st.qstart, _CHECK_CHUNK):
        ranks_in_order = _ranks_in_order(st, rank_s, a, b)
        if ranks_in_order and _documents_distinct(st, rank_s, doc_s, a, b):
            continue  # the usual case: nothing to report in this piece
        in_piece = np.flatnonzero(st.res_mask[a:b]) + a
        rq, rr = st.q_of_row[in_piece], rank_s[in_piece]
        if not ranks_in_order:
            v = check_one_to_n(rr, rq, what="rank", presorted=True)  # sorted space
            if v:
                st.coll.add(
                    st.input_rows(in_piece[v.rows]), "rank", v.messages, rr[v.rows].tolist()
                )
        v = check_unique_within(doc_s[in_piece], rq, what="document", presorted_groups=True)
        if v:
            rows = st.input_rows(in_piece[v.rows])
            st.repeated_docs.append(rows)
            docs = st.doc_categories[st.doc_codes[rows]].astype(str).tolist()
            st.coll.add(rows, "doc_id", REPEATED_DOCUMENT, docs)
    # no later phase needs these; the query positions and queries per row only the lenient
    # repair of documents (the results table makes the queries per row again)
    del st.empty_row, st.rank_present, st.qstart
    if not st.repeated_docs:
        del st.pos_i, st.q_of_row


def _ranks_in_order(st: LoadState, rank_s: npt.NDArray[np.int32], a: int, b: int) -> bool:
    """Whether every query of sorted rows ``a:b`` lists its results at ranks 1, 2, .. k in turn.

    One comparison per row with the row before: a result row starting its query has
    rank 1, any other follows a result row of rank one less.  ``True`` implies that
    :func:`~sessionval.rules.check_one_to_n` finds nothing (it is stricter: a query
    whose first row is not a result, e.g. one mixing results and an empty-result
    row, gives ``False`` and goes to the full check).
    """
    res = st.res_mask[a:b]
    r = rank_s[a:b]
    qs = st.qstart[a:b]
    ok = np.empty(b - a, dtype=bool)
    ok[0] = r[0] == 1
    np.equal(r[1:] - r[:-1], 1, out=ok[1:])
    ok[1:] &= res[:-1]
    np.copyto(ok, r == 1, where=qs)
    ok |= ~res
    return bool(ok.all())


#: a piece's dense query x rank table may hold this many cells per result row (the rest
#: is padding for shorter lists); beyond, the documents are checked by one sort of keys
_DENSE_SLACK: Final = 4


def _documents_distinct(
    st: LoadState,
    rank_s: npt.NDArray[np.int32],
    doc_s: npt.NDArray[np.integer[Any]],
    a: int,
    b: int,
) -> bool:
    """Whether no document occurs twice in one result list of sorted rows ``a:b``.

    Only when the ranks are ``1..k`` in order (:func:`_ranks_in_order`): each result
    then has its cell ``(query, rank - 1)`` in a dense table of the piece's queries,
    and sorting each table row (short rows of 32-bit codes: vectorised) finds a
    repeat as two equal neighbours, without the sort of 64-bit keys over all rows.
    Padding cells hold distinct negative values, which never equal a code or each other.
    ``False`` also when the table would be too sparse: the caller then runs the full check.
    """
    res = st.res_mask[a:b]
    n_res = int(np.count_nonzero(res))
    if n_res == 0:
        return True
    q = st.q_of_row[a:b]
    q0 = int(q[0])
    n_q = int(q[-1]) - q0 + 1
    r = rank_s[a:b]
    width = int(r.max(where=res, initial=1))
    if n_q * width > _DENSE_SLACK * n_res + 1024:
        return False
    table = np.empty((n_q, width), dtype=np.int32)
    table[:] = -1 - np.arange(width, dtype=np.int32)
    cell = (q[res] - q0).astype(np.int64) * width
    cell += r[res]
    cell -= 1
    table.ravel()[cell] = doc_s[a:b][res]
    del cell
    table.sort(axis=1)
    return not bool((table[:, 1:] == table[:, :-1]).any())


def _rows_per_query(st: LoadState) -> IntArray:
    """Sorted rows of each query (a query's rows are contiguous)."""
    rows: IntArray = np.diff(st.q_first_sorted, append=st.n_rows)
    return rows


def queries_per_row(st: LoadState, q_rows: IntArray | None = None) -> npt.NDArray[np.int32]:
    """The query of each sorted row; ``q_rows``: :func:`_rows_per_query`, when at hand."""
    if q_rows is None:
        q_rows = _rows_per_query(st)
    return np.repeat(np.arange(len(q_rows), dtype=np.int32), q_rows)


def _segment_bounds(starts: BoolArray, chunk: int) -> list[tuple[int, int]]:
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


def read_result_values(st: LoadState, user_grade_scale: GradeScale | None) -> None:
    """Phase "reading clicks and grades": clicks, dwell and the searchers' own grades.

    Row-level values are float32 (exact for the values they hold) and clicks int16.
    """
    src, coll = st.src, st.coll
    clicks = None
    if "clicks" in src:
        clicks, _ = parse_integers(
            src.column("clicks"),
            "clicks",
            coll,
            fill=0,
            nullable_rows=np.ones(st.n_rows, dtype=bool),
            dtype=np.int16,
        )
    st.dwell = _row_numbers(st, "dwell", integer=False)
    st.ugrade = _user_grades(st)
    for name, arr in (("clicks", clicks), ("dwell", st.dwell)):
        if arr is not None:
            neg = arr < 0
            if neg.any():
                rows = np.flatnonzero(neg)
                coll.add(rows, name, "must be >= 0", arr[rows].tolist())
    if st.ugrade is not None and user_grade_scale is not None:
        v = check_in_levels(st.ugrade, user_grade_scale.grades, what="user_grade")
        if v:
            coll.add(v.rows, "user_grade", v.messages)
    st.clicks = None
    if clicks is not None:
        too_many = clicks > np.iinfo(np.int16).max
        if too_many.any():
            rows = np.flatnonzero(too_many)
            coll.add(rows, "clicks", "must be <= 32767", clicks[rows].tolist())
        st.clicks = clicks.clip(0, np.iinfo(np.int16).max).astype(np.int16, copy=False)


def _user_grades(st: LoadState) -> Floats | None:
    """Searcher grades as float32 (exact for the int16 range), checked before the cast."""
    if "user_grade" not in st.src:
        return None
    raw = st.src.column("user_grade")
    if str(raw.dtype) in ("Int8", "Int16", "UInt8"):
        # stored in 16 bits or fewer: within the range, and exact as float32 (no float64 copy)
        return parse_numbers(raw, "user_grade", st.coll, integer=True, dtype=np.float32)
    grades = parse_numbers(raw, "user_grade", st.coll, integer=True, dtype=np.float64)
    beyond = (grades < MIN_GRADE) | (grades > MAX_GRADE)  # NaN compares False
    if beyond.any():
        rows = np.flatnonzero(beyond)
        st.coll.add(
            rows,
            "user_grade",
            f"must be between {MIN_GRADE} and {MAX_GRADE} (grades are stored in 16 bits)",
            raw.iloc[rows].tolist(),
        )
        grades[rows] = np.nan
    return grades.astype(np.float32)


def _row_numbers(st: LoadState, name: str, *, integer: bool) -> Floats | None:
    if name not in st.src:
        return None
    return parse_numbers(st.src.column(name), name, st.coll, integer=integer, dtype=np.float32)


def read_query_values(st: LoadState, max_rank: int | None) -> None:
    """Phase "reading queries and sessions": scan depth, times and ratings, once per query/session.

    ``max_rank``: the lists were cut at this rank when read, so a logged scan depth
    beyond a cut list is clipped to it instead of reported.
    """
    src, coll = st.src, st.coll
    st.scan = None
    if "scan_depth" in src:
        st.scan = _scan_depths(st, max_rank)
    st.query_keys = {name: _query_ids(st, name) for name in ("query_id", "qrels_id") if name in src}
    st.q_time = _times_at(st, "query_time", st.q_first)
    st.s_start = _times_at(st, "session_start", st.s_first)
    st.s_end = _times_at(st, "session_end", st.s_first)
    # sorted by name: the sessions table has the same columns in the same order whatever
    # the input format or its column order
    st.ratings = {
        c: parse_numbers(src.take(c, st.s_first), c, coll, integer=False, at=st.s_first)
        for c in sorted(src.names)
        if c.startswith("rating_")
    }


def _query_ids(st: LoadState, name: str) -> pd.Series:
    """An optional id column at each query's first row, stripped; a blank one is a problem."""
    raw = st.src.take(name, st.q_first).astype("string")
    ids = strip_ids(raw)
    blank = (ids == "").to_numpy(dtype=bool, na_value=False)
    if blank.any():
        qi = np.flatnonzero(blank)
        st.coll.add(
            st.q_first[qi],
            name,
            "must not be empty (the id is only whitespace); leave it out for the default",
            raw.iloc[qi].tolist(),
        )
    return ids


def _scan_depths(st: LoadState, max_rank: int | None) -> Floats:
    scan = parse_numbers(
        st.src.take("scan_depth", st.q_first), "scan_depth", st.coll, integer=True, at=st.q_first
    )
    n_res = st.n_res_q
    over = scan > n_res
    if max_rank is not None:
        cut = over & (n_res >= max_rank)
        scan[cut] = n_res[cut]
        over &= ~cut
    bad = ~np.isnan(scan) & ((scan < 0) | over)
    if bad.any():
        qi = np.flatnonzero(bad)
        st.coll.add(
            st.q_first[qi],
            "scan_depth",
            [
                f"must be between 0 and the number of results ({int(n_res[i])}): "
                + scan_depth_fix(int(n_res[i]))
                for i in qi
            ],
            # the values as written (the parsed ones are floats: 2**63 - 1 would not show)
            list(st.src.take("scan_depth", st.q_first[qi])),
        )
    return scan


def _times_at(st: LoadState, name: str, at: IntArray) -> pd.Series:
    if name not in st.src:
        return missing_times(len(at))
    return parse_times(st.src.take(name, at), name, st.coll, at)


# ---------------------------------------------------------------------------------------------
# after the checks


def settle(
    st: LoadState, *, mode: Mode, max_problems: int, raise_problems: bool = True
) -> tuple[LoadReport, BoolArray | None]:
    """Raise every problem (strict), or pick the sorted rows to keep (lenient).

    With ``raise_problems=False`` strict mode does not raise either: the caller
    raises the report's problems together with its own.

    Returns
    -------
    (LoadReport, keep)
        ``keep`` marks the sorted rows of accepted sessions, ``None`` when all are kept.

    Raises
    ------
    ValidationFailed
        Strict mode and at least one problem (up to ``max_problems`` listed).
    """
    coll = st.coll
    # a row without a session id belongs to no session: it is a record of its own, read and
    # rejected (with its "is required" problem), so that the books count every row
    n_orphans = int(np.count_nonzero(st.missing_sess))
    report = LoadReport(
        source=st.source, records_read=len(st.names) + n_orphans, rows_read=st.n_rows
    )
    if mode == "strict" and raise_problems:
        raise_if_any(coll.problems, limit=max_problems)
    # drop every row of a rejected session (and rows without a session)
    keep: BoolArray | None = None
    if coll.bad_sessions or st.missing_sess.any():
        bad_codes = np.fromiter(coll.bad_sessions, dtype=np.int64, count=len(coll.bad_sessions))
        bad_session = np.zeros(len(st.names) + 1, dtype=bool)  # last slot: rows without a session
        bad_session[bad_codes] = True
        bad_session[-1] = True
        keep = ~bad_session[st.sc]
    report.problems = coll.problems
    report.sessions_rejected = len(coll.bad_sessions) + n_orphans
    report.sessions_accepted = len(st.names) - len(coll.bad_sessions)
    return report, keep

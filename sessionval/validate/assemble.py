"""The last phase of :func:`~sessionval.validate.flat.frame_from_flat`: assemble the tables.

From the results of the checks (:class:`~sessionval.validate.phases.Checked`) and the
rows to keep, build the ``sessions``, ``queries`` and ``results`` tables of the
:class:`~sessionval.frame.SessionFrame` (accepted sessions only, renumbered).  Each
per-row array is released as soon as its column is built.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import numpy.typing as npt
import pandas as pd

from .._types import BoolArray, IntArray
from ..frame import FLAT_COLUMNS, SessionFrame
from ..models.judgments import GradeScale
from .fields import compact_categorical
from .memory import release_free_memory
from .order import RowOrder, SessionRows
from .phases import Checked
from .session_rules import ENTITY_COLUMNS
from .sources import Columns

__all__ = [
    "build_frame",
]

#: optional result-level text columns, carried as they are
_RESULT_TEXT: Final = tuple(
    c.name for c in FLAT_COLUMNS if c.level == "result" and c.kind == "text"
)


@dataclass(frozen=True, slots=True)
class _Kept:
    """The accepted sessions and queries, renumbered."""

    s_keep: BoolArray  # per session (first-appearance order)
    q_keep: BoolArray  # per query
    res_kept: BoolArray  # per sorted row: a result of an accepted session
    sess_names: pd.Index
    sess_cat: pd.CategoricalDtype
    q_rows: IntArray  # input row of each kept query's first row
    q_sess: npt.NDArray[np.int32]  # new session code of each kept query
    q_pos: npt.NDArray[np.int16]  # position of each kept query
    q_new: npt.NDArray[np.int32]  # new query index of each old query


def _kept(rows: SessionRows, order: RowOrder, checked: Checked, keep: BoolArray | None) -> _Kept:
    sessions, res_mask = checked.sessions, checked.lists.result_sorted
    q_keep = np.ones(order.n_queries, dtype=bool) if keep is None else keep[order.q_first_sorted]
    s_keep = np.ones(len(order.s_first), dtype=bool) if keep is None else keep[order.s_first_sorted]
    res_kept = res_mask if keep is None else res_mask & keep
    # codes of kept sessions, in order
    kept_sessions = order.session_sorted[order.s_first_sorted][s_keep]
    sess_names = rows.names[kept_sessions]
    new_code = np.full(len(rows.names) + 1, -1, dtype=np.int32)
    new_code[kept_sessions] = np.arange(len(kept_sessions), dtype=np.int32)
    return _Kept(
        s_keep=s_keep,
        q_keep=q_keep,
        res_kept=res_kept,
        sess_names=sess_names,
        sess_cat=pd.CategoricalDtype(pd.Index(sess_names, dtype="string"), ordered=False),
        q_rows=order.q_first[q_keep],
        q_sess=new_code[sessions.q_session[q_keep]],
        q_pos=sessions.q_pos[q_keep].astype(np.int16),
        q_new=(np.cumsum(q_keep, dtype=np.int64) - 1).astype(np.int32),  # renumber kept queries
    )


def build_frame(
    handed: list[Checked], keep: BoolArray | None, *, grade_scale: GradeScale | None
) -> SessionFrame:
    """Phase "building tables": the sessions, queries and results of the accepted sessions.

    Parameters
    ----------
    handed
        A list holding the caller's only reference to the results of the checks; emptied
        here, so that each per-row array is freed as soon as its column is built (the
        peak of a large load stays near the size of the frame).
    keep
        The sorted rows of accepted sessions (:func:`~sessionval.validate.settle.settle`),
        ``None`` when all are kept.
    grade_scale
        The searchers' grade scale, kept with the frame.
    """
    checked = handed.pop()
    rows = checked.rows
    k = _kept(rows, checked.order, checked, keep)
    # from here on only the query text and the result text are read from the source: a source
    # holding columns in memory (JSON-lines) frees the others before the tables are built
    src, source = rows.src, rows.source
    src.release(("query_text", *_RESULT_TEXT))
    release_free_memory()
    # the problems are settled: the collector no longer needs the session code of each row
    rows.coll.session_codes = np.zeros(0, dtype=np.int32)
    sessions = _sessions_table(checked, k)
    queries = _queries_table(checked, k, sessions["topic_id"])
    docs = _Documents(checked.ranks.doc_categories, checked.ranks.doc_all_used)
    arrays = _row_arrays(checked)
    # the per-row arrays now live in ``arrays`` only: each is freed where its column is built
    del checked, rows
    results = _results_table(arrays, k, keep, src, docs)
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
        grade_scale=grade_scale,
        source=source,
    )


@dataclass(frozen=True, slots=True)
class _Documents:
    """The documents' categories, and whether every one is used by a row."""

    categories: pd.Index
    all_used: bool


def _row_arrays(checked: Checked) -> dict[str, npt.NDArray[Any]]:
    """The per-row arrays the results table is built from, by the column they become.

    ``order`` (sorted row -> input row) only when the input was not in order; the query of
    each sorted row outlives the checks only for the repair of repeated documents,
    otherwise it is made again here.
    """
    order, values = checked.order, checked.row_values
    q_of_row = checked.lists.query_of_row
    arrays: dict[str, npt.NDArray[Any]] = {
        "query_of_row": order.query_of_row() if q_of_row is None else q_of_row,
        "rank": checked.ranks.ranks,
        "doc_id": checked.ranks.doc_codes,
    }
    if order.order is not None:
        arrays["order"] = order.order
    for name, arr in (
        ("clicks", values.clicks),
        ("dwell", values.dwell),
        ("user_grade", values.user_grade),
    ):
        if arr is not None:
            arrays[name] = arr
    return arrays


def _sessions_table(checked: Checked, k: _Kept) -> pd.DataFrame:
    n_kept = len(k.sess_names)
    at_start, qv = checked.sessions.entity_at_start, checked.query_values

    def entity(name: str) -> pd.Categorical:
        col = at_start[name][k.s_keep]
        return compact_categorical(col.cat.codes.to_numpy(), col.cat.categories)

    sessions = pd.DataFrame(
        {
            "session_id": pd.Categorical.from_codes(
                np.arange(n_kept, dtype=np.int32), dtype=k.sess_cat
            ),
            **{name: entity(name) for name in ENTITY_COLUMNS},
            "start_time": qv.s_start[k.s_keep].reset_index(drop=True),
            "end_time": qv.s_end[k.s_keep].reset_index(drop=True),
            "n_queries": np.bincount(k.q_sess, minlength=n_kept).astype(np.int16),
        }
    )
    for c, vals in qv.ratings.items():
        sessions[c] = vals[k.s_keep]
    return sessions


def _queries_table(checked: Checked, k: _Kept, topic_of_session: pd.Series) -> pd.DataFrame:
    src, qv = checked.rows.src, checked.query_values
    q_pos = k.q_pos
    default_qid = _default_query_ids(k)
    keys = {name: col[k.q_keep].reset_index(drop=True) for name, col in qv.query_keys.items()}
    qid = keys["query_id"].fillna(default_qid) if "query_id" in keys else default_qid
    text = (
        src.take("query_text", k.q_rows).astype("string").fillna("")
        if "query_text" in src
        else pd.Series([""] * len(k.q_rows), dtype="string")
    )
    qrels_key = topic_of_session.astype("string").iloc[k.q_sess].reset_index(drop=True)
    if "qrels_id" in keys:
        # per-session or per-turn judgment keys; an empty key falls back to the topic
        qrels_key = keys["qrels_id"].fillna(qrels_key)
    if qv.scan is not None:
        kept_scan = qv.scan[k.q_keep]
        scan_col = pd.arrays.IntegerArray(
            np.nan_to_num(kept_scan).astype(np.int32), np.isnan(kept_scan)
        )
    else:
        n_kept = len(k.q_rows)
        scan_col = pd.arrays.IntegerArray(
            np.zeros(n_kept, dtype=np.int32), np.ones(n_kept, dtype=bool)
        )
    return pd.DataFrame(
        {
            "session_id": pd.Categorical.from_codes(k.q_sess, dtype=k.sess_cat),
            "query_pos": q_pos,
            "query_id": qid,
            "text": text,
            "time": qv.q_time[k.q_keep].reset_index(drop=True),
            "n_results": checked.lists.n_results[k.q_keep].astype(np.int32),
            "scan_depth": scan_col,
            "qrels_id": qrels_key.astype("category"),
        }
    )


def _default_query_ids(k: _Kept) -> pd.Series:
    """``<session>:<position>`` per kept query, joined by Arrow (no Python string per query)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    names = pa.array(k.sess_cat.categories.to_numpy(dtype=object), type=pa.string())
    joined = pc.binary_join_element_wise(
        names.take(pa.array(k.q_sess)), pc.cast(pa.array(k.q_pos), pa.string()), ":"
    )
    return pd.Series(pd.arrays.ArrowStringArray(joined))


def _results_table(
    arrays: dict[str, npt.NDArray[Any]],
    k: _Kept,
    keep: BoolArray | None,
    src: Columns,
    docs: _Documents,
) -> pd.DataFrame:
    # each column is taken from the kept rows and its source popped from ``arrays`` (its only
    # holder) at once, so the peak stays near the size of the result (boolean compress when
    # rows are already sorted); the columns are gathered in a dict and become the frame
    # without a copy (assigning a column to a DataFrame copies it)
    res_kept = k.res_kept
    order = arrays.pop("order", None)
    r_rows = None if order is None else order[res_kept]
    del order

    def pick(name: str) -> npt.NDArray[Any]:
        """Kept result rows of a column in input order; its source is freed."""
        arr = arrays.pop(name)
        return arr[res_kept] if r_rows is None else arr[r_rows]

    query_idx = k.q_new[arrays.pop("query_of_row")[res_kept]]
    release_free_memory()  # the holes of the arrays freed so far, before the columns are built
    cols: dict[str, Any] = {
        "query_idx": query_idx,
        "session_id": pd.Categorical.from_codes(k.q_sess[query_idx], dtype=k.sess_cat),
        "query_pos": k.q_pos[query_idx],
    }
    cols["rank"] = pick("rank")
    doc_codes = pick("doc_id")
    if keep is None and docs.all_used:
        # every session kept and every category used by a result (empty-result rows have
        # none): the categories are already the used ones, no second scan of the codes
        cols["doc_id"] = pd.Categorical.from_codes(doc_codes, categories=docs.categories)
    else:
        cols["doc_id"] = compact_categorical(doc_codes, docs.categories)
    del doc_codes
    n_r = len(query_idx)
    # the row values first, so that their sources are freed before the text columns are built
    values: dict[str, Any] = {
        "clicks": pick("clicks") if "clicks" in arrays else np.zeros(n_r, dtype=np.int16)
    }
    for name in ("dwell", "user_grade"):
        values[name] = pick(name) if name in arrays else np.full(n_r, np.nan, np.float32)
    release_free_memory()  # every per-row array of the checks is freed: before the text columns
    text = [c for c in _RESULT_TEXT if c in src]
    for c in text:
        if r_rows is None:
            # rows in order: the column's kept rows by the mask (no row index of 8 bytes per row)
            cols[c] = _as_string(pd.Series(src.column(c).array[res_kept], copy=False))
        else:
            cols[c] = _as_string(src.take(c, r_rows))
    cols.update(values)  # the frame's column order: the text before the row values
    return pd.DataFrame(cols, copy=False)


def _as_string(col: pd.Series) -> pd.Series:
    """A text column as the ``string`` dtype; one without any value built without a copy.

    ``astype("string")`` of a categorical passes through an object array of the rows; a
    column with no value (JSON-lines input without url, title or snippet) is built as the
    same Arrow-backed array of nulls directly.
    """
    dtype = pd.StringDtype()
    if (
        dtype.storage == "pyarrow"
        and isinstance(col.dtype, pd.CategoricalDtype)
        and not len(col.cat.categories)
    ):
        import pyarrow as pa

        nulls = pa.chunked_array([pa.nulls(len(col), pa.large_string())])
        return pd.Series(pd.arrays.ArrowStringArray(nulls), copy=False)
    return col.astype(dtype)

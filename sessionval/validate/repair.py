"""Lenient repair of a document listed twice in one result list (issue 10, item 3).

Real logs repeat a document within one result page (the TREC 2012 Session Track
log does so in 12 judged sessions).  Strict mode reports it; lenient mode keeps
the session: the first occurrence (by rank) stays, the later one is removed and
the results below it move up one rank, and every repair is listed
(:attr:`~sessionval.problems.LoadReport.repairs`: session, query, document, both
ranks, and the removed row's line).  A session that also has another problem is
rejected as before, its repeated document listed among its problems.

The repair runs only when :func:`~sessionval.validate.phases.check_results` found
a repeat, so a clean load pays nothing for it.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pandas as pd

from .._types import IntArray
from ..problems import Problem
from .fields import take_rows
from .phases import REPEATED_DOCUMENT, LoadState

__all__ = ["remove_repeated_documents"]


def remove_repeated_documents(
    st: LoadState, row_locations: npt.NDArray[np.int64]
) -> tuple[pd.DataFrame, IntArray, list[Problem]] | None:
    """The flat table without the later copies of repeated documents, ranks moved up.

    Parameters
    ----------
    st
        The state after every check phase (``st.repeated_docs`` set).
    row_locations
        The file line or row of each table row (named in the repairs).

    Returns
    -------
    (table, row_locations, repairs) or None
        The repaired table with the file location of each of its rows, and one
        repair per removed row; ``None`` when no session can be repaired (each
        session with a repeat also has another problem).
    """
    repeated = np.unique(np.concatenate(st.repeated_docs))
    codes = st.s_codes[repeated]
    other = {
        p.record
        for p in st.coll.problems
        if not (p.field == "doc_id" and p.message == REPEATED_DOCUMENT)
    }
    other_codes = st.names.get_indexer(pd.Index(list(other), dtype=object))
    # a row without a session id (code -1) belongs to no session: it is dropped with its
    # own problem, never repaired
    fixable = (codes >= 0) & ~np.isin(codes, other_codes[other_codes >= 0])
    removed_rows = repeated[fixable]
    if not len(removed_rows):
        return None
    n = st.n_rows
    removed = np.zeros(n, dtype=bool)
    removed[removed_rows] = True
    # within each query (sorted by rank): how many removed rows come before each row
    rm_s = take_rows(removed, st.order).astype(np.int64)
    before = np.cumsum(rm_s) - rm_s
    shift_s = before - before[st.q_first_sorted][st.q_of_row]
    shift = np.empty(n, dtype=np.int64)
    if st.order is None:
        shift[:] = shift_s
    else:
        shift[st.order] = shift_s
    new_rank = st.rank_i.astype(np.int64) - shift
    kept_rows = _kept_copies(st, removed_rows)
    keep = np.flatnonzero(~removed)
    table = pd.DataFrame({name: st.src.take(name, keep) for name in st.src.names})
    moved = shift[keep] > 0  # only ranks that move are rewritten; others stay as written
    if moved.any():
        rank = table["rank"].astype(object).to_numpy(copy=True)
        rank[moved] = new_rank[keep][moved]
        table["rank"] = rank
    counted = _move_clicks(st, table, removed_rows, np.searchsorted(keep, kept_rows))
    repairs = [
        Problem(
            st.source,
            f"{st.coll.locate(0).split()[0]} {int(row_locations[r])}",
            "doc_id",
            f"document {doc} listed twice in the result list of query {int(st.pos_i[r])}: "
            f"kept at rank {int(st.rank_i[k])}, removed at rank {int(st.rank_i[r])}; the "
            f"results below moved up one rank{note}",
            repr(doc),
            record=str(st.names[st.s_codes[r]]),
        )
        for r, k, note in zip(removed_rows.tolist(), kept_rows.tolist(), counted, strict=True)
        for doc in (str(st.doc_categories[st.doc_codes[r]]),)
    ]
    return table, row_locations[keep], repairs


def _kept_copies(st: LoadState, rows: IntArray) -> IntArray:
    """The kept copy of each removed row: same session, query and document, lowest rank."""
    key = pd.MultiIndex.from_arrays([st.s_codes, st.pos_i, st.doc_codes])
    ranks = pd.Series(st.rank_i.astype(np.int64))
    best: IntArray = ranks.groupby(key).transform("idxmin").to_numpy(np.int64)
    return best[rows]


def _move_clicks(
    st: LoadState, table: pd.DataFrame, removed: IntArray, kept_at: IntArray
) -> list[str]:
    """Clicks and dwell of a removed copy counted for its kept copy (the same document).

    Returns what each repair says about them (``""`` when the copy had none).
    """
    notes = [""] * len(removed)
    for col, what in (("clicks", "click(s)"), ("dwell", "s dwell")):
        if col not in table.columns:
            continue
        gone = pd.to_numeric(st.src.take(col, removed), errors="coerce").to_numpy(np.float64)
        has = np.flatnonzero(np.nan_to_num(gone) > 0)
        if not len(has):
            continue
        values = table[col].astype(object).to_numpy(copy=True)
        for i in has.tolist():
            here = pd.to_numeric(pd.Series([values[kept_at[i]]]), errors="coerce").iloc[0]
            total = gone[i] + (0.0 if pd.isna(here) else float(here))
            values[kept_at[i]] = int(total) if col == "clicks" else total
            amount = f"{int(gone[i])}" if col == "clicks" else f"{gone[i]:g}"
            notes[i] += f"; its {amount} {what} counted for the kept copy"
        table[col] = values
    return notes

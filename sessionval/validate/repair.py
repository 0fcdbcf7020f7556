"""Lenient repair of a document listed twice in one result list (issue 10, item 3).

Real logs repeat a document within one result page (the TREC 2012 Session Track
log does so in 12 judged sessions).  Strict mode reports it; lenient mode keeps
the session: the first occurrence (by rank) stays, the later one is removed and
the results below it move up one rank, and every repair is listed
(:attr:`~sessionval.problems.LoadReport.repairs`: session, query, document, both
ranks, and the removed row's line).  A session that also has another problem is
rejected as before, its repeated document listed among its problems.

The repair runs only when :func:`~sessionval.validate.list_rules.check_results` found
a repeat, so a clean load pays nothing for it.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pandas as pd

from .._types import IntArray
from ..problems import Problem
from .fields import take_rows
from .list_rules import REPEATED_DOCUMENT
from .order import Ranks
from .phases import Checked
from .sources import Columns

__all__ = ["remove_repeated_documents"]


def remove_repeated_documents(
    checked: Checked, row_locations: npt.NDArray[np.int64]
) -> tuple[pd.DataFrame, IntArray, list[Problem]] | None:
    """The flat table without the later copies of repeated documents, ranks moved up.

    Parameters
    ----------
    checked
        The results of the check phases, with a repeated document
        (``checked.lists.repeated_docs`` set, ``checked.keys`` kept).
    row_locations
        The file line or row of each table row (named in the repairs).

    Returns
    -------
    (table, row_locations, repairs) or None
        The repaired table with the file location of each of its rows, and one
        repair per removed row; ``None`` when no session can be repaired (each
        session with a repeat also has another problem).
    """
    rows, ranks, order, lists = checked.rows, checked.ranks, checked.order, checked.lists
    if checked.keys is None or lists.query_of_row is None:
        raise ValueError("no repeated document to repair")  # pragma: no cover - caller's bug
    positions = checked.keys.positions
    repeated = np.unique(np.concatenate(lists.repeated_docs))
    codes = rows.session_of_row[repeated]
    other = {
        p.record
        for p in rows.coll.problems
        if not (p.field == "doc_id" and p.message == REPEATED_DOCUMENT)
    }
    other_codes = rows.names.get_indexer(pd.Index(list(other), dtype=object))
    # a row without a session id (code -1) belongs to no session: it is dropped with its
    # own problem, never repaired
    fixable = (codes >= 0) & ~np.isin(codes, other_codes[other_codes >= 0])
    removed_rows = repeated[fixable]
    if not len(removed_rows):
        return None
    n = rows.n_rows
    removed = np.zeros(n, dtype=bool)
    removed[removed_rows] = True
    # within each query (sorted by rank): how many removed rows come before each row
    rm_s = take_rows(removed, order.order).astype(np.int64)
    before = np.cumsum(rm_s) - rm_s
    shift_s = before - before[order.q_first_sorted][lists.query_of_row]
    shift = np.empty(n, dtype=np.int64)
    if order.order is None:
        shift[:] = shift_s
    else:
        shift[order.order] = shift_s
    new_rank = ranks.ranks.astype(np.int64) - shift
    kept_rows = _kept_copies(rows.session_of_row, positions, ranks, removed_rows)
    keep = np.flatnonzero(~removed)
    table = pd.DataFrame({name: rows.src.take(name, keep) for name in rows.src.names})
    moved = shift[keep] > 0  # only ranks that move are rewritten; others stay as written
    if moved.any():
        rank = table["rank"].astype(object).to_numpy(copy=True)
        rank[moved] = new_rank[keep][moved]
        table["rank"] = rank
    counted = _move_clicks(rows.src, table, removed_rows, np.searchsorted(keep, kept_rows))
    repairs = [
        Problem(
            rows.source,
            f"{rows.coll.locate(0).split()[0]} {int(row_locations[r])}",
            "doc_id",
            f"document {doc} listed twice in the result list of query {int(positions[r])}: "
            f"kept at rank {int(ranks.ranks[k])}, removed at rank {int(ranks.ranks[r])}; the "
            f"results below moved up one rank{note}",
            repr(doc),
            record=str(rows.names[rows.session_of_row[r]]),
        )
        for r, k, note in zip(removed_rows.tolist(), kept_rows.tolist(), counted, strict=True)
        for doc in (str(ranks.doc_categories[ranks.doc_codes[r]]),)
    ]
    return table, row_locations[keep], repairs


def _kept_copies(
    sessions: npt.NDArray[np.int32], positions: npt.NDArray[np.int32], ranks: Ranks, rows: IntArray
) -> IntArray:
    """The kept copy of each removed row: same session, query and document, lowest rank."""
    key = pd.MultiIndex.from_arrays([sessions, positions, ranks.doc_codes])
    by_rank = pd.Series(ranks.ranks.astype(np.int64))
    best: IntArray = by_rank.groupby(key).transform("idxmin").to_numpy(np.int64)
    return best[rows]


def _move_clicks(
    src: Columns, table: pd.DataFrame, removed: IntArray, kept_at: IntArray
) -> list[str]:
    """Clicks and dwell of a removed copy counted for its kept copy (the same document).

    Returns what each repair says about them (``""`` when the copy had none).
    """
    notes = [""] * len(removed)
    for col, what in (("clicks", "click(s)"), ("dwell", "s dwell")):
        if col not in table.columns:
            continue
        gone = pd.to_numeric(src.take(col, removed), errors="coerce").to_numpy(np.float64)
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

"""Lenient repair of a document listed twice in one result list of a JSON-lines session.

The same repair as :mod:`sessionval.validate.repair` makes for flat tables (issue 10,
item 3), applied to a parsed JSON line before the :class:`~sessionval.models.session.Session`
model checks it (the model rejects a repeated document): the first copy (by rank) stays,
the later one is removed and the results below it move up one rank, clicks and dwell
logged on the removed copy are counted for the kept one, and every repair is listed.
Per session and per query in Python, like the JSON parsing it follows.
"""

from __future__ import annotations

from bisect import bisect_left
from typing import Any

from ..problems import Problem
from ..validate.ids import strip_id

__all__ = ["remove_repeated_documents"]


def remove_repeated_documents(obj: dict[str, Any], source: str, line: int) -> list[Problem]:
    """Remove later copies of repeated documents from ``obj``'s result lists, in place.

    Parameters
    ----------
    obj
        One parsed JSON-lines session (not yet validated).
    source, line
        Where it was read, for the repairs.

    Returns
    -------
    list of Problem
        One repair per removed result (nothing when no list repeats a document, or
        when a list's ranks or ids are not plain values: the model reports those).

    Examples
    --------
    >>> s = {"session_id": "s1", "queries": [{"position": 1, "results": [
    ...     {"rank": 1, "doc_id": "a"}, {"rank": 2, "doc_id": " a", "clicks": 1},
    ...     {"rank": 3, "doc_id": "b"}]}]}
    >>> [r.message for r in remove_repeated_documents(s, "s.jsonl", 1)]
    ['document a listed twice in the result list of query 1: kept at rank 1, removed at
      rank 2; the results below moved up one rank; its 1 click(s) counted for the kept copy']
    >>> s["queries"][0]["results"]
    [{'rank': 1, 'doc_id': 'a', 'clicks': 1}, {'rank': 2, 'doc_id': 'b'}]
    """
    queries = obj.get("queries")
    if not isinstance(queries, list):
        return []
    record = strip_id(str(obj.get("session_id", "")))
    repairs: list[Problem] = []
    for qi, query in enumerate(queries):
        results = query.get("results") if isinstance(query, dict) else None
        if not isinstance(results, list) or len(results) < 2:
            continue
        if not all(isinstance(r, dict) for r in results):
            continue
        ranks = [r.get("rank") for r in results]
        docs = [r.get("doc_id") for r in results]
        if not all(type(k) is int for k in ranks) or not all(isinstance(d, str) for d in docs):
            continue
        docs = [strip_id(d) for d in docs]  # the one whitespace rule for ids
        first: dict[str, int] = {}
        removed: list[tuple[int, int]] = []  # (removed result, kept result)
        for i in sorted(range(len(results)), key=ranks.__getitem__):
            if docs[i] in first:
                removed.append((i, first[docs[i]]))
            else:
                first[docs[i]] = i
        if not removed:
            continue
        position = query.get("position", qi + 1)
        for i, k in removed:
            note = _move_counts(results[i], results[k])
            repairs.append(
                Problem(
                    source,
                    f"line {line}",
                    f"queries[{qi}].results[{i}].doc_id",
                    f"document {docs[i]} listed twice in the result list of query {position}: "
                    f"kept at rank {ranks[k]}, removed at rank {ranks[i]}; the results below "
                    f"moved up one rank{note}",
                    repr(docs[i]),
                    record,
                )
            )
        gone = {i for i, _ in removed}
        removed_ranks = sorted(ranks[i] for i in gone)
        kept = []
        for j, result in enumerate(results):
            if j in gone:
                continue
            shift = bisect_left(removed_ranks, ranks[j])
            if shift:
                result["rank"] = ranks[j] - shift
            kept.append(result)
        query["results"] = kept
    return repairs


def _number(value: Any) -> float | None:
    """A JSON number (not a boolean), else None."""
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _move_counts(gone: dict[str, Any], kept: dict[str, Any]) -> str:
    """Clicks and dwell of the removed copy added to the kept copy; what the repair says."""
    note = ""
    for key, what in (("clicks", "click(s)"), ("dwell", "s dwell")):
        amount = _number(gone.get(key))
        if amount is None or amount <= 0:
            continue
        here = _number(kept.get(key))
        if kept.get(key) is not None and here is None:
            continue  # the kept copy's value is invalid: the model reports it
        total = amount + (here or 0.0)
        kept[key] = int(total) if key == "clicks" else total
        shown = f"{int(amount)}" if key == "clicks" else f"{amount:g}"
        note += f"; its {shown} {what} counted for the kept copy"
    return note

r"""One row per reformulation: what changed from one query of a session to the next, and its effect.

:func:`reformulations` turns a :class:`~sessionval.evaluation.result.SessionEvaluation`
into a tidy table with one row per consecutive query pair of a session
(:data:`REFORMULATION_COLUMNS`, in that order):

``session_id, user_id, topic_id, system_id``
    the session's ids.
``from_pos, to_pos``
    the positions of the earlier and the later query (``to_pos = from_pos + 1``).
``type, group``
    what the searcher changed (:func:`~sessionval.analysis.reformulation_types.classify`:
    Huang & Efthimiadis's taxonomy) and its move (specialisation, generalisation,
    parallel, repeat, new).
``terms_added, terms_removed, terms_kept``
    the terms (lower-cased Unicode ``\w+`` tokens) only in the later query, only in
    the earlier one, in both; space-separated, in the order of the query they come from.
``term_jaccard``
    :math:`|A \cap B| / |A \cup B|` of the two term sets (1 when both are empty).
``result_jaccard``
    the same index of the two queries' top-X document sets, X the evaluation's
    ``cutoff`` (1 when both are empty).
``new_docs``
    documents of the later query's top X that no earlier query of the session had in
    its top X.
``new_relevant``
    those of them with a reference grade >= 1 (the assessors' judgments, never the
    searcher's own; <NA> without judgments for the later query's topic).
``delta_dcg``
    the later query's DCG@X minus the earlier's (``dcg`` of
    :meth:`~sessionval.evaluation.result.SessionEvaluation.per_query`: duplicate policy
    applied, no query discount).
``delta_sdcg``
    the same for the query-discounted ``sdcg = qd(q) · DCG_q`` (Järvelin et al. 2008):
    what the reformulation was worth to the session after paying for the extra query.
``seconds``
    the time between the two queries when both are logged (NaN otherwise).

``from_query`` and ``to_query`` (the two texts) follow.  Everything is computed with
array operations over the whole study; only the type of each *distinct* pair of texts
is found by string rules, once.

Examples
--------
>>> from sessionval import SessionConfig, evaluate, judgments_from_records
>>> from sessionval.models.judgments import GradeScale
>>> from sessionval.validate.flat import frame_from_flat
>>> flat = pd.DataFrame({
...     "session_id": ["s1"] * 4, "user_id": ["u1"] * 4, "topic_id": ["t"] * 4,
...     "system_id": ["A"] * 4, "query_pos": [1, 1, 2, 2], "query_text": ["ipod", "ipod",
...     "ipod nano", "ipod nano"], "rank": [1, 2, 1, 2], "doc_id": ["d1", "d2", "d2", "d3"]})
>>> frame = frame_from_flat(flat).frame
>>> qrels = judgments_from_records([("t", "d3", 2)], scale=GradeScale.default())
>>> ev = evaluate(frame, qrels, SessionConfig(cutoff=2))
>>> row = reformulations(ev, qrels).iloc[0]
>>> row["type"], row["group"], row["terms_added"], int(row["new_docs"]), int(row["new_relevant"])
('add_words', 'specialisation', 'nano', 1, 1)
>>> round(float(row["result_jaccard"]), 3), float(row["delta_dcg"]) > 0
(0.333, True)
"""

from __future__ import annotations

from typing import Final, cast

import numpy as np
import pandas as pd

from .._types import BoolArray, IntArray
from ..evaluation.result import SessionEvaluation
from ..frame import JudgmentFrame
from ..judgments.lookup import JudgmentIndex, frame_lookup
from ..kernels.segments import cut_segments, segment_ids
from .reformulation_types import GROUP_ORDER, GROUPS, TYPES, classify, terms

__all__ = [
    "REFORMULATION_COLUMNS",
    "pair_terms",
    "reformulations",
]

#: The columns of :func:`reformulations`, in order (``from_query``, ``to_query`` follow).
REFORMULATION_COLUMNS: Final = (
    "session_id",
    "user_id",
    "topic_id",
    "system_id",
    "from_pos",
    "to_pos",
    "type",
    "group",
    "terms_added",
    "terms_removed",
    "terms_kept",
    "term_jaccard",
    "result_jaccard",
    "new_docs",
    "new_relevant",
    "delta_dcg",
    "delta_sdcg",
    "seconds",
)


def pair_terms(a: str | None, b: str | None) -> tuple[str, str, str, float, str]:
    """Added, removed and kept terms, the term Jaccard index and the type of ``a`` → ``b``.

    >>> pair_terms("ipod nano", "ipod shuffle")
    ('shuffle', 'nano', 'ipod', 0.3333333333333333, 'word_substitution')
    """
    ta, tb = terms(a), terms(b)
    sa, sb = set(ta), set(tb)
    union = sa | sb
    jaccard = len(sa & sb) / len(union) if union else 1.0
    added = " ".join(dict.fromkeys(t for t in tb if t not in sa))
    removed = " ".join(dict.fromkeys(t for t in ta if t not in sb))
    kept = " ".join(dict.fromkeys(t for t in tb if t in sa))
    return added, removed, kept, jaccard, classify(a, b)


def _text_pairs(texts: pd.Series, earlier: IntArray, later: IntArray) -> pd.DataFrame:
    """:func:`pair_terms` of each pair, computed once per distinct pair of texts."""
    codes, uniques = pd.factorize(texts.fillna(""), sort=False)
    k = max(len(uniques), 1)
    pair = codes[earlier].astype(np.int64) * k + codes[later]
    distinct, inverse = np.unique(pair, return_inverse=True)
    words = [str(u) for u in uniques]
    rows = [pair_terms(words[p // k], words[p % k]) for p in distinct.tolist()]
    table = pd.DataFrame(
        rows, columns=["terms_added", "terms_removed", "terms_kept", "term_jaccard", "type"]
    )
    if table.empty:
        table = table.astype({"term_jaccard": "float64"})
    picked: pd.DataFrame = table.iloc[inverse.reshape(-1)]
    return picked.reset_index(drop=True)


def _top_documents(
    ev: SessionEvaluation, judgments: JudgmentFrame | None
) -> tuple[IntArray, BoolArray, BoolArray, BoolArray]:
    """Each distinct top-X document of each query: its query and where it was seen.

    Returns the query index of each (a document listed twice in one query's top X
    counts once), whether it is the first time the session showed it, whether that
    first showing is of a document with a reference grade >= 1 (False without
    judgments), and whether the previous query of the session showed it too, in no
    particular order of the rows (what is made of them are counts per query).  One
    stable sort of the rows by (session, document) answers all three: rows are in
    query order, so in a run of one session's document the queries come in order (no
    hash table of the rows).
    """
    res = ev.frame.results
    # ranks run 1..k in each query's rows (the frame's order), so its top X are its first
    # X rows: taken from the offsets, not found by comparing every result row's rank
    rows, offsets = cut_segments(ev.frame.query_offsets(), ev.config.cutoff)
    qidx = segment_ids(offsets)
    doc_codes = cast(pd.Categorical, res["doc_id"].array)
    n_docs = len(doc_codes.categories) + 1
    key = doc_codes.codes[rows].astype(np.int64)  # the codes' view: no copy of every row's
    del rows
    key += 1
    key += (ev.query_session.astype(np.int64) * n_docs)[qidx]
    order = np.argsort(key, kind="stable")
    k, q = key[order], qidx[order]
    del key, qidx, order
    new = np.ones(k.size, dtype=bool)
    new[1:] = k[1:] != k[:-1]  # the session's first showing of the document
    # a later row of a run: the row before it is the latest earlier showing in the session
    after = ~new
    keep = after.copy()  # ... by the same query's list: listed twice, counted once
    keep[1:] &= q[1:] == q[:-1]
    np.logical_not(keep, out=keep)
    shown_before = after  # ... by the query just before
    shown_before[1:] &= q[1:] == q[:-1] + 1
    # the counts made of these (bincounts by query) do not depend on the rows' order:
    # the rows stay in the sort's order
    q, first, previous = q[keep], new[keep], shown_before[keep]
    relevant = np.zeros(q.size, dtype=bool)
    if judgments is None:
        return q, first, relevant, previous
    # the one grade join, on the first showings only (the one count that needs a grade)
    at = np.flatnonzero(first)
    doc = k[keep][at]
    doc %= n_docs
    doc -= 1
    lookup = frame_lookup(ev.frame, JudgmentIndex.build(judgments))
    keys = ev.frame.queries["qrels_id"].array.codes[q[at]]
    relevant[at] = lookup.rows(keys, doc) >= 1  # NaN (not judged): False
    return q, first, relevant, previous


def _judged(qrels_id: pd.Series, topics: pd.Index | pd.Series) -> BoolArray:
    """Each query's topic has judgments (compared as text); a categorical by its categories.

    ``astype(str)`` of every query's topic and a hash probe per query cost 0.2-0.3 s
    at 200k sessions; the distinct topics are probed once and the codes take the answer.
    """
    wanted = topics.astype(str)
    if not isinstance(qrels_id.dtype, pd.CategoricalDtype):
        return np.asarray(qrels_id.astype(str).isin(wanted).to_numpy(), dtype=bool)
    hit = np.r_[pd.Index(qrels_id.cat.categories.astype(str)).isin(wanted), False]
    return np.asarray(hit[qrels_id.cat.codes.to_numpy()], dtype=bool)  # code -1: the False


def reformulations(ev: SessionEvaluation, judgments: JudgmentFrame | None = None) -> pd.DataFrame:
    """One row per consecutive query pair of every session (module docstring).

    Parameters
    ----------
    ev
        The evaluation (its ``cutoff`` is the X of the top-X sets; its ``per_query``
        gives the DCG values).
    judgments
        Reference judgments for ``new_relevant`` (``None``: <NA>).

    Returns
    -------
    pandas.DataFrame
        :data:`REFORMULATION_COLUMNS`, then ``from_query`` and ``to_query``; sessions in
        the study's order, pairs in query order; ``attrs["config"]`` is the evaluation's.
    """
    pq = ev.per_query()
    q = ev.frame.queries
    qs = ev.query_session.astype(np.int64)
    n = qs.size
    later = np.flatnonzero(qs[1:] == qs[:-1]) + 1 if n else np.zeros(0, np.int64)
    earlier = later - 1

    qidx, first, relevant, shared = _top_documents(ev, judgments)
    size = np.bincount(qidx, minlength=n)
    inter = np.bincount(qidx[shared], minlength=n)[later]
    union = size[later] + size[earlier] - inter
    with np.errstate(invalid="ignore", divide="ignore"):
        result_jaccard = np.where(union > 0, inter / np.maximum(union, 1), 1.0)
    new_docs = np.bincount(qidx[first], minlength=n)[later]
    new_rel = np.bincount(qidx[relevant], minlength=n)[later]

    new_relevant = pd.array(new_rel.astype(np.int32), dtype="Int32")
    judged = (
        np.zeros(later.size, dtype=bool)
        if judgments is None
        else _judged(q["qrels_id"], judgments.topics)[later]
    )
    new_relevant[~judged] = pd.NA

    text = q["text"].astype("string")
    pairs = _text_pairs(text, earlier, later)
    time = q["time"].to_numpy(dtype="datetime64[ns]")  # UTC
    seconds = (time[later] - time[earlier]) / np.timedelta64(1, "s")
    dcg = pq["dcg"].to_numpy(dtype=np.float64)
    sdcg = pq["sdcg"].to_numpy(dtype=np.float64)
    qpos = q["query_pos"].to_numpy()
    out = pd.DataFrame(
        {
            **{c: pq[c].iloc[later].reset_index(drop=True) for c in REFORMULATION_COLUMNS[:4]},
            "from_pos": qpos[earlier].astype(np.int16),
            "to_pos": qpos[later].astype(np.int16),
            "type": pd.Categorical(pairs["type"], categories=list(TYPES)),
            "group": pd.Categorical(
                pairs["type"].map(GROUPS).astype(object), categories=list(GROUP_ORDER)
            ),
            "terms_added": pairs["terms_added"].astype("string"),
            "terms_removed": pairs["terms_removed"].astype("string"),
            "terms_kept": pairs["terms_kept"].astype("string"),
            "term_jaccard": pairs["term_jaccard"].to_numpy(dtype=np.float64),
            "result_jaccard": result_jaccard.astype(np.float64),
            "new_docs": new_docs.astype(np.int32),
            "new_relevant": new_relevant,
            "delta_dcg": dcg[later] - dcg[earlier],
            "delta_sdcg": sdcg[later] - sdcg[earlier],
            "seconds": np.asarray(seconds, dtype=np.float64),
            "from_query": text.iloc[earlier].reset_index(drop=True),
            "to_query": text.iloc[later].reset_index(drop=True),
        }
    )
    out.attrs["config"] = cast(dict[str, object], pq.attrs.get("config", {}))
    return out

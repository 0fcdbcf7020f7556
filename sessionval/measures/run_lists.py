"""Ranked lists from a scored run: order, duplicate check, grade join, one list per query.

Two roads to the same :class:`~sessionval.measures.lists.RankedLists`, through the same
steps (:func:`_lists`), one for each implementation of the grade join
(:class:`~sessionval.judgments.join.GradeJoin`):

* :func:`lists_from_run` (``RankedLists.from_run``): ids coded against dictionaries
  (categoricals, or Arrow's hash encoder), grades through the judgments'
  :class:`~sessionval.judgments.lookup.GradeLookup`;
* :func:`lists_from_tables` (``RankedLists.from_tables``, the road of ``evaluate_run``
  from string DataFrames): document ids read as 64-bit keys from Arrow's buffers and
  joined per topic (:class:`~sessionval.measures.key_join.JudgedKeys`; qrels that
  repeat a topic's judgments per query are joined once per distinct set,
  :class:`~sessionval.measures.judgment_sets.SetKeys`), no document dictionary.

:func:`ranked_lists` is the one place that chooses between them, by the data.  The
steps see the documents only through a :class:`_RunDocs`: how tied ids rank, where a
document repeats, what an id reads, and the grade of each row (through the join).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Literal, Protocol, TypeVar

import numpy as np
import numpy.typing as npt
import pandas as pd

from .._types import BoolArray, FloatArray, IntArray
from ..errors import InputFormatError, MeasureSpecError
from ..judgments.gains import GAIN_SCHEMES, NegativePolicy
from ..judgments.ideal import ideal_from_codes
from ..judgments.join import GradeJoin
from ..judgments.lookup import JudgmentIndex, index_in, string_ranks
from ..kernels.blocks import n_threads
from ..kernels.segments import gather_ranges, offsets_from_counts, segment_ids
from ..validate.runs import check_run_table
from .judgment_sets import judgment_sets
from .key_join import JudgedKeys
from .lists import TIE_BREAKS, KeyStats, TieBreak, assemble_lists, check_negative
from .ranking import coded_doc_ranks, factorize_ids, first_duplicate, run_order
from .string_ids import IdKeys, KeyCollision, id_codes, id_key_jobs

if TYPE_CHECKING:
    from ..frame import JudgmentFrame
    from ..judgments.unjudged import UnjudgedPolicy
    from .lists import RankedLists

__all__ = [
    "QrelsTable",
    "beside",
    "lists_from_run",
    "lists_from_tables",
    "ranked_lists",
]

Missing = Literal["skip", "empty"]


class _RunDocs(Protocol):
    """What the steps need to know of the run's documents (rows index the run table)."""

    def ranks(self, rows: IntArray) -> npt.NDArray[np.integer]:
        """Integer keys of the ids of ``rows`` in byte order (tie-breaks; see ``run_order``)."""
        ...

    def label(self, row: int) -> str:
        """The id of the document at ``row`` (for messages)."""
        ...

    def grades(
        self, present: IntArray, counts: IntArray, rows: IntArray, topic_of: IntArray
    ) -> FloatArray:
        """Grades of ``rows`` (list ``i`` = query code ``present[i]`` owns ``counts[i]``).

        Raises :class:`_Repeated` for a document repeated in its list.
        """
        ...


class _Repeated(Exception):
    """A document appears twice in one list, at position ``at`` of the ranked rows."""

    def __init__(self, at: int) -> None:
        super().__init__(at)
        self.at = at


@dataclass(frozen=True)
class _CodedDocs:
    """Documents coded against a dictionary; grades through the judgments' GradeLookup."""

    codes: npt.NDArray[np.int32]
    categories: pd.Index
    index: JudgmentIndex
    query_categories: pd.Index

    def ranks(self, rows: IntArray) -> IntArray:
        return coded_doc_ranks(self.codes, self.categories)(rows)

    def label(self, row: int) -> str:
        return str(self.categories[self.codes[row]])

    def grades(
        self, present: IntArray, counts: IntArray, rows: IntArray, topic_of: IntArray
    ) -> FloatArray:
        d_rows = self.codes[rows]
        # the rows come list after list: each row's list number is its query's
        i = first_duplicate(segment_ids(offsets_from_counts(counts)), d_rows)
        if i >= 0:
            raise _Repeated(i)
        # the join is prepared after the sort: its document map is not held through it
        join: GradeJoin[npt.ArrayLike] = self.index.prepare(self.query_categories, self.categories)
        return join.lists(present, counts, d_rows)


@dataclass(frozen=True)
class _KeyedDocs:
    """Documents as 64-bit keys; grades by :class:`JudgedKeys` (or :class:`SetKeys` on sets)."""

    keys: IdKeys
    ids: pd.Series
    judged: GradeJoin[IdKeys]

    def ranks(self, rows: IntArray) -> npt.NDArray[np.integer]:
        return self.keys.order_keys(rows)

    def label(self, row: int) -> str:
        return str(self.ids.iloc[row])

    def grades(
        self, present: IntArray, counts: IntArray, rows: IntArray, topic_of: IntArray
    ) -> FloatArray:
        docs = self.keys.take(rows)
        join: GradeJoin[IdKeys] = self.judged
        try:
            # the join sorts each list's keys: a repeated document shows up there
            return join.lists(topic_of[present], counts, docs)
        except KeyCollision as clash:
            a, b = clash.rows
            if docs.same(np.array([a]), docs, np.array([b]))[0]:
                raise _Repeated(max(a, b)) from None
            raise


def _check_run(run: pd.DataFrame, *, ties: str, missing: str) -> pd.DataFrame:
    """The run through its boundary (:func:`~sessionval.validate.runs.check_run_table`); options."""
    if ties not in TIE_BREAKS:
        raise MeasureSpecError(
            f"tie-break {ties!r} unknown; use {', '.join(TIE_BREAKS)} (default trec_eval)"
        )
    if missing not in ("skip", "empty"):
        raise MeasureSpecError(f"missing={missing!r} unknown; use 'skip' or 'empty'")
    return check_run_table(run)


def _ranked_rows(
    qc: npt.NDArray[np.int32],
    qrank: npt.NDArray[np.int32],
    judged_q: BoolArray,
    score: FloatArray,
    doc_ranks: Callable[[IntArray], npt.NDArray[np.integer]],
    ties: TieBreak,
) -> IntArray:
    """Rows of the judged queries in ranked order (query rank, score, tie-break)."""
    if judged_q.all():
        return run_order(qc, qrank, score, doc_ranks, ties=ties)
    rows_in = np.flatnonzero(judged_q[qc])

    def ranks_in(rows: IntArray) -> npt.NDArray[np.integer]:
        return doc_ranks(rows_in[rows])

    return rows_in[run_order(qc[rows_in], qrank, score[rows_in], ranks_in, ties=ties)]


def _add_unretrieved_topics(
    labels: pd.Index, pos: IntArray, counts: IntArray, grades: FloatArray, stats: KeyStats
) -> tuple[pd.Index, IntArray, IntArray, FloatArray]:
    """``missing="empty"``: an empty list for every judged topic the run lacks (trec_eval -c)."""
    have = np.zeros(len(stats.ideal.keys), dtype=bool)
    have[pos] = True
    judged_keys = np.flatnonzero(~have & (stats.n_judged > 0))
    if judged_keys.size == 0:
        return labels, pos, counts, grades
    labels = labels.append(pd.Index(stats.ideal.keys[judged_keys].astype(str)))
    pos = np.concatenate([pos, judged_keys])
    counts = np.concatenate([counts, np.zeros(judged_keys.size, dtype=np.int64)])
    o = np.argsort(string_ranks(labels), kind="stable")
    # re-sort lists; rows move with their list (vectorised gather)
    starts = offsets_from_counts(counts)[:-1]
    row_idx = gather_ranges(starts[o], counts[o])
    return labels[o], pos[o], counts[o], grades[row_idx]


def _lists(
    qc: npt.NDArray[np.int32],
    qcat: pd.Index,
    score: FloatArray,
    docs: _RunDocs,
    stats: KeyStats,
    *,
    ties: TieBreak,
    missing: Missing,
    negative: NegativePolicy,
    unjudged: UnjudgedPolicy,
) -> RankedLists:
    """The steps both roads share, from query codes, scores and the documents."""
    # judgment topic of each query category (−1: no judgments, skipped)
    topic_of = index_in(qcat, stats.ideal.keys)
    judged_q = topic_of >= 0
    per_query = np.bincount(qc, minlength=len(qcat))
    n_skipped = int(np.count_nonzero(~judged_q & (per_query > 0)))
    # query order: sorted ids (as trec_eval prints them)
    qrank = string_ranks(qcat).astype(np.int32)
    rows = _ranked_rows(qc, qrank, judged_q, score, docs.ranks, ties)
    # one list per judged query present, in query-rank order (the rows' order)
    present = np.flatnonzero(judged_q & (per_query > 0))
    present = present[np.argsort(qrank[present])]
    counts = per_query[present]
    try:
        grades = docs.grades(present, counts, rows, topic_of)
    except _Repeated as rep:
        raise InputFormatError(
            f"run table: document {docs.label(int(rows[rep.at]))!r} appears twice for query "
            f"{qcat[qc[rows[rep.at]]]!r}; a document may appear once per ranked list"
        ) from None
    del rows
    labels = pd.Index(qcat[present]).astype(str)
    pos = topic_of[present]
    if missing == "empty":
        labels, pos, counts, grades = _add_unretrieved_topics(labels, pos, counts, grades, stats)
    offsets = offsets_from_counts(counts)
    return assemble_lists(labels, offsets, grades, pos, stats, negative, unjudged, n_skipped)


def lists_from_run(
    run: pd.DataFrame,
    judgments: JudgmentFrame,
    *,
    ties: TieBreak,
    missing: Missing,
    negative: NegativePolicy,
    unjudged: UnjudgedPolicy,
) -> RankedLists:
    """:meth:`RankedLists.from_run <sessionval.measures.lists.RankedLists.from_run>`."""
    run = _check_run(run, ties=ties, missing=missing)
    stats = KeyStats.build(judgments, negative=negative)
    index = JudgmentIndex.build(judgments)
    qc, qcat = factorize_ids(run["query_id"])
    dc, dcat = factorize_ids(run["doc_id"])
    docs = _CodedDocs(dc, dcat, index, qcat)
    score = run["score"].to_numpy(dtype=np.float64)
    return _lists(
        qc, qcat, score, docs, stats, ties=ties, missing=missing, negative=negative,
        unjudged=unjudged,
    )  # fmt: skip


def lists_from_tables(
    run: pd.DataFrame,
    qrels: pd.DataFrame,
    *,
    ties: TieBreak,
    missing: Missing,
    negative: NegativePolicy,
    unjudged: UnjudgedPolicy,
    source: str,
) -> RankedLists | None:
    """:meth:`RankedLists.from_tables <sessionval.measures.lists.RankedLists.from_tables>`.

    The judgments' side (their ids' words, topics, sets, sort and recall bases) is
    prepared on a second thread while this one reads the run's ids: the two share
    nothing until the join, and NumPy releases the GIL in their passes.
    """
    run = _check_run(run, ties=ties, missing=missing)
    jobs = id_key_jobs([run["doc_id"], qrels["doc_id"]])
    if jobs is None:
        return None
    run_job, judged_job = jobs
    side = beside(partial(_judged_side, qrels, judged_job, negative, source))
    try:
        run_docs = run_job()
        # query ids come in runs of rows: ranked from the first row of each run
        qc, qcat = id_codes(run["query_id"]) or factorize_ids(run["query_id"])
    finally:
        judged_side = side()  # waited for even when the run's side fails
    if judged_side is None or (qc < 0).any():
        return None  # missing ids, a repeat or a key collision: the dictionary road says where
    judged, stats = judged_side
    docs = _KeyedDocs(run_docs, run["doc_id"], judged)
    score = run["score"].to_numpy(dtype=np.float64)
    try:
        return _lists(
            qc, qcat, score, docs, stats, ties=ties, missing=missing, negative=negative,
            unjudged=unjudged,
        )  # fmt: skip
    except KeyCollision:
        return None


def _judged_side(
    qrels: pd.DataFrame,
    keys: Callable[[], IdKeys],
    negative: NegativePolicy,
    source: str,
) -> tuple[GradeJoin[IdKeys], KeyStats] | None:
    """The judgments' join and statistics on 64-bit keys; ``None``: the dictionary road."""
    judged_docs = keys()
    tc, tcat = id_codes(qrels["query_id"]) or factorize_ids(qrels["query_id"])
    if (tc < 0).any():
        return None  # missing ids: the dictionary road says where
    grades = qrels["grade"].to_numpy(dtype=np.float64)
    check_negative(grades, negative, where=f"judgments {source}")
    tcodes = tc.astype(np.int64)
    topics = pd.Index(tcat).astype(str)
    # qrels expanded from topics repeat one set per query: each distinct set handled once
    sets = judgment_sets(tcodes, len(tcat), judged_docs, grades)
    judged: GradeJoin[IdKeys] | None
    if sets is not None:
        judged = sets.join(judged_docs, grades)
        stats = KeyStats(sets.ideal(topics, grades), sets.n_judged())
    else:
        judged = JudgedKeys.build(tcodes, len(tcat), judged_docs, grades)
        stats = KeyStats(
            ideal_from_codes(topics, tcodes, grades, GAIN_SCHEMES["grade"]),
            np.bincount(tcodes, minlength=len(topics)).astype(np.int64),
        )
    return None if judged is None else (judged, stats)


_T = TypeVar("_T")
_SIDE: ThreadPoolExecutor | None = None
_SIDE_LOCK = threading.Lock()


def beside(fn: Callable[[], _T]) -> Callable[[], _T]:
    """Start ``fn`` on a second thread (when the process has two cores); call to wait.

    The one second thread of ``evaluate_run``: the judgments' side while the run's ids
    are read, the id spelling notes while the measures are computed.  Its block
    passes (:func:`~sessionval.kernels.blocks.for_blocks`) share the blocks' pool with
    the caller's; with one core ``fn`` runs when waited for.
    """
    global _SIDE
    if n_threads() < 2:
        return fn
    with _SIDE_LOCK:
        if _SIDE is None:
            _SIDE = ThreadPoolExecutor(1, thread_name_prefix="sessionval-side")
        future = _SIDE.submit(fn)
    return future.result


class QrelsTable(Protocol):
    """Judgments as a table of string ids (``query_id, doc_id, grade``), not yet coded."""

    @property
    def table(self) -> pd.DataFrame:
        """``query_id``, ``doc_id``, ``grade`` (checked), ids as given."""
        ...

    @property
    def source(self) -> str:
        """Name of the judgments in messages."""
        ...

    def judgments(self) -> JudgmentFrame:
        """The table through the boundary (:mod:`sessionval.validate.judgments`)."""
        ...


def ranked_lists(
    run: pd.DataFrame,
    judged: JudgmentFrame | QrelsTable,
    *,
    ties: TieBreak,
    missing: Missing,
    negative: NegativePolicy,
    unjudged: UnjudgedPolicy,
) -> RankedLists:
    """The ranked lists of a run, through the implementation of the grade join the data suits.

    The one choice between the two :class:`~sessionval.judgments.join.GradeJoin`
    implementations: judgments given as a table of plain ASCII string ids, with a run
    of such ids, are joined on 64-bit keys (:func:`lists_from_tables`, no document
    dictionary: several times faster on millions of rows); anything else (judgments
    already coded, categoricals, non-ASCII or missing ids, a (topic, document) judged
    twice, a key collision) goes through the boundary's judgments and
    :class:`~sessionval.judgments.lookup.GradeLookup` (:func:`lists_from_run`).  Both
    give the same lists.
    """
    from ..frame import JudgmentFrame

    if not isinstance(judged, JudgmentFrame):
        lists = lists_from_tables(
            run, judged.table, ties=ties, missing=missing, negative=negative,
            unjudged=unjudged, source=judged.source,
        )  # fmt: skip
        if lists is not None:
            return lists
        judged = judged.judgments()
    return lists_from_run(
        run, judged, ties=ties, missing=missing, negative=negative, unjudged=unjudged
    )

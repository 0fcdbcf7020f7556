"""The single-query input: :class:`RankedLists`, built from a study, a run or plain arrays.

All single-query measures (:mod:`~sessionval.measures.cg`,
:mod:`~sessionval.measures.precision`, :mod:`~sessionval.measures.sakai`) run on a
:class:`RankedLists` (every ranked list of a study or a run in
one segment layout: per-row grades plus per-list offsets, and each list's recall base)
and return one float per list, computed for all lists at once with NumPy segment
operations (``sessionval.kernels.segments``).  Spec: ``spec/metrics.md`` sections 2–3.

Conventions
-----------
* Ranks start at 1.  Grades are floats, NaN = unjudged; a document is *relevant* at
  level ``rel`` when ``grade >= rel`` (``rel = 1``: the recall base, grade > 0).
* ``R`` is the recall-base size of the list's judgment key; ``N`` the number of its
  judged non-relevant documents (grade < ``rel``).
* A list whose judgment key has no relevant document (``R = 0``) has no defined value
  for a normalised measure: NaN by default and counted
  (:attr:`SingleEvaluation.n_empty_recall_base`); ``empty="zero"`` gives 0 (trec_eval).
* Cut-off ``@k`` keeps the first ``k`` rows of each list; vectors and ``CG/DCG@k`` extend
  a list shorter than ``k`` with gain 0.  Without a cut-off, nDCG/nCG compare the whole
  list with the whole ideal vector (trec_eval's ``ndcg``).

References
----------
Järvelin & Kekäläinen (2002), TOIS 20(4) [jk2002]; research note RN-2002-2 [jk2002rn];
Järvelin, Price, Delcambre & Nielsen (2008), ECIR [jk2008];
Bompada et al. (2007), SIGIR [bompada2007]; Sakai (2007), IPSJ TOD 48(SIG9) [sakai2007];
Buckley & Voorhees (2004), SIGIR (bpref); Yilmaz & Aslam (2006), CIKM (infAP).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal, TypeAlias

import numpy as np
import numpy.typing as npt
import pandas as pd

from .._types import BoolArray, FloatArray, IntArray
from ..errors import InputFormatError, JudgmentError, MeasureSpecError
from ..frame import JudgmentFrame, SessionFrame
from ..judgments.gains import GainScheme, NegativePolicy
from ..judgments.ideal import IdealGains, ideal_gains
from ..judgments.unjudged import UnjudgedPolicy, apply_unjudged
from ..kernels.segments import cut_segments, offsets_from_counts, segment_ids, segment_ranks

__all__ = [
    "TIE_BREAKS",
    "CutLists",
    "EmptyPolicy",
    "GainArg",
    "KeyStats",
    "RankedLists",
    "TieBreak",
    "apply_empty",
    "assemble_lists",
    "check_negative",
    "cut_lists",
    "ideal_gain_segments",
    "list_gains",
    "safe_div",
]

EmptyPolicy: TypeAlias = Literal["nan", "zero"]
TieBreak: TypeAlias = Literal["trec_eval", "doc_id", "input"]
"""Order of tied scores in a run: doc id descending (trec_eval), ascending, or input order."""

TIE_BREAKS: Final[tuple[TieBreak, ...]] = ("trec_eval", "doc_id", "input")
"""The tie-breaks, the default (trec_eval's) first."""
GainArg: TypeAlias = "str | GainScheme"


# ---------------------------------------------------------------------------
# per-list vector helpers (the papers' worked examples)
# ---------------------------------------------------------------------------


# ---------------------------------------------------------------------------
# the columnar input
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class RankedLists:
    """Every ranked list to evaluate, in segment layout.

    Parameters
    ----------
    query_ids
        One label per list (``pd.Index``).
    offsets
        int64, ``n + 1``: list ``i`` owns rows ``offsets[i]:offsets[i + 1]``.
    grades
        float64 per row in rank order; NaN = unjudged; may be negative.
    ideal_offsets, ideal_grades
        Each list's recall base (grades > 0, descending) in segment layout.
    n_judged
        Number of judged documents of each list's judgment key.
    has_judgments
        Whether the list's judgment key has any judgment at all.
    negative
        Negative-grade policy the gains use (``clip``, ``keep``).
    n_negative, n_unjudged
        Counts over the result rows, for reporting.
    n_skipped
        Lists left out because their key has no judgments (``evaluate`` default).
    """

    query_ids: pd.Index
    offsets: IntArray
    grades: FloatArray
    ideal_offsets: IntArray
    ideal_grades: FloatArray
    n_judged: IntArray
    has_judgments: BoolArray
    negative: NegativePolicy = "clip"
    n_negative: int = 0
    n_unjudged: int = 0
    n_skipped: int = 0

    @property
    def n(self) -> int:
        """Number of lists."""
        return int(self.offsets.size - 1)

    @property
    def seg(self) -> IntArray:
        """List number of every row."""
        return segment_ids(self.offsets)

    def n_relevant(self, rel: float = 1) -> IntArray:
        """Recall-base size per list at relevance level ``rel``."""
        iseg = segment_ids(self.ideal_offsets)
        return np.bincount(iseg, weights=self.ideal_grades >= rel, minlength=self.n).astype(
            np.int64
        )

    @classmethod
    def from_arrays(
        cls,
        query_ids: Sequence[str] | pd.Index,
        offsets: npt.ArrayLike,
        grades: npt.ArrayLike,
        *,
        recall_base: Sequence[Sequence[float]] | None = None,
        n_judged: npt.ArrayLike | None = None,
        negative: NegativePolicy = "clip",
        unjudged: UnjudgedPolicy = "zero",
    ) -> RankedLists:
        """Build from plain arrays (tests, examples, custom pipelines).

        ``recall_base[i]`` lists the grades (> 0) of list ``i``'s relevant documents;
        by default the relevant rows of the list itself.  ``n_judged`` defaults to the
        recall base plus the list's judged non-relevant rows.

        Examples
        --------
        >>> lists = RankedLists.from_arrays(["q1"], [0, 3], [0, 2, float("nan")],
        ...                                 recall_base=[[2, 1]])
        >>> lists.n_relevant().tolist()
        [2]
        """
        off = np.asarray(offsets, dtype=np.int64)
        g = np.asarray(grades, dtype=np.float64)
        n = off.size - 1
        if off[0] != 0 or off[-1] != g.size or np.any(np.diff(off) < 0):
            raise InputFormatError(
                f"offsets must rise from 0 to the number of rows ({g.size}), got {off.tolist()}"
            )
        check_negative(g, negative, where="results")
        if recall_base is None:
            seg = segment_ids(off)
            relrows = g > 0
            rb_seg, rb = seg[relrows], g[relrows]
        else:
            if len(recall_base) != n:
                raise InputFormatError(f"recall_base has {len(recall_base)} lists, expected {n}")
            rb_seg = np.repeat(np.arange(n), [len(x) for x in recall_base])
            rb = np.concatenate(
                [np.zeros(0)] + [np.asarray(x, dtype=np.float64) for x in recall_base]
            )
            if np.any(rb <= 0):
                raise JudgmentError("recall_base grades must be > 0")
        order = np.lexsort((-rb, rb_seg))
        ioff = offsets_from_counts(np.bincount(rb_seg, minlength=n))
        if n_judged is None:
            seg = segment_ids(off)
            nonrel = np.bincount(seg, weights=(g <= 0), minlength=n).astype(np.int64)
            nj = np.diff(ioff) + nonrel
        else:
            nj = np.asarray(n_judged, dtype=np.int64)
        lists = cls(
            pd.Index([str(q) for q in query_ids]),
            off,
            g,
            ioff,
            rb[order],
            nj,
            np.ones(n, dtype=bool),
            negative,
            int(np.count_nonzero(g < 0)),
            int(np.count_nonzero(np.isnan(g))),
        )
        return _condense(lists, unjudged)

    @classmethod
    def from_frame(
        cls,
        frame: SessionFrame,
        judgments: JudgmentFrame | None,
        *,
        source: Literal["reference", "searcher"] = "reference",
        negative: NegativePolicy = "clip",
        unjudged: UnjudgedPolicy = "zero",
    ) -> RankedLists:
        """One list per query of a study (queries without results are empty lists).

        With ``source="reference"`` grades come from ``judgments`` through each query's
        ``qrels_id``; with ``source="searcher"`` from ``results.user_grade``, and the
        recall base of a query is its own searcher-judged relevant results.
        """
        from ..judgments.lookup import result_grades

        offsets = frame.query_offsets()
        grades = result_grades(frame, judgments, source=source)
        qids = pd.Index(frame.queries["query_id"].astype(str).to_numpy())
        if source == "searcher" or judgments is None:
            # the recall base of each list is its own judged relevant rows
            return cls.from_arrays(qids, offsets, grades, negative=negative, unjudged=unjudged)
        stats = KeyStats.build(judgments, negative=negative)
        pos = stats.ideal.positions(frame.queries["qrels_id"])
        return assemble_lists(qids, offsets, grades, pos, stats, negative, unjudged, 0)

    @classmethod
    def from_run(
        cls,
        run: pd.DataFrame,
        judgments: JudgmentFrame,
        *,
        ties: TieBreak = "trec_eval",
        missing: Literal["skip", "empty"] = "skip",
        negative: NegativePolicy = "clip",
        unjudged: UnjudgedPolicy = "zero",
    ) -> RankedLists:
        """Build lists from a TREC-style run table ordered by score.

        Parameters
        ----------
        run
            Columns ``query_id``, ``doc_id``, ``score`` (strings may be categorical).
        judgments
            Reference judgments; ``topic_id`` is matched to ``query_id``.
        ties
            Order within a list: score descending, then document id descending
            (``"trec_eval"``, the default: trec_eval's order, so ir_measures' and
            pytrec_eval's numbers), document id ascending (``"doc_id"``) or input
            order (``"input"``).  Ids compare as bytes (``strcmp``), as trec_eval.
        missing
            Queries of the run without judgments are always skipped (counted in
            ``n_skipped``, as trec_eval does); ``"empty"`` also adds an empty list for
            every judged topic the run lacks (trec_eval ``-c``).
        negative, unjudged
            Policies, see :mod:`sessionval.judgments.gains`.
        """
        from .run_lists import lists_from_run

        return lists_from_run(
            run, judgments, ties=ties, missing=missing, negative=negative, unjudged=unjudged
        )

    @classmethod
    def from_tables(
        cls,
        run: pd.DataFrame,
        qrels: pd.DataFrame,
        *,
        ties: TieBreak = "trec_eval",
        missing: Literal["skip", "empty"] = "skip",
        negative: NegativePolicy = "clip",
        unjudged: UnjudgedPolicy = "zero",
        source: str = "<qrels table>",
    ) -> RankedLists | None:
        """Build lists from a run and qrels with string ids, without id dictionaries.

        The fast path of :func:`~sessionval.evaluation.lists.evaluate_run`: ids are
        read as 64-bit keys from Arrow's buffers and joined per topic
        (:mod:`sessionval.measures.string_ids`); the lists equal :meth:`from_run`'s.

        Parameters
        ----------
        run
            ``query_id``, ``doc_id``, ``score``.
        qrels
            ``query_id``, ``doc_id`` and ``grade`` (integer-valued, checked).
        ties, missing, negative, unjudged
            As :meth:`from_run`.
        source
            Name of the qrels in messages.

        Returns
        -------
        RankedLists or None
            ``None`` when an id column is not plain ASCII strings without missing
            values (categoricals, numbers, non-ASCII): use :meth:`from_run`.
        """
        from .run_lists import lists_from_tables

        return lists_from_tables(
            run,
            qrels,
            ties=ties,
            missing=missing,
            negative=negative,
            unjudged=unjudged,
            source=source,
        )


def check_negative(g: FloatArray, negative: NegativePolicy, *, where: str) -> None:
    """Raise on an unknown policy, or on negative grades under ``negative="error"``."""
    if negative not in ("clip", "keep", "error"):
        raise MeasureSpecError(f"negative-grade policy {negative!r} unknown; use clip, keep, error")
    if negative == "error" and np.any(g < 0):
        raise JudgmentError(
            f"{int(np.count_nonzero(g < 0))} negative grade(s) in {where}; "
            "negative-grade policy is 'error' (use 'clip' or 'keep')"
        )


@dataclass(frozen=True)
class KeyStats:
    """Per judgment topic: recall base (``ideal``, scheme ``grade``) and judged count."""

    ideal: IdealGains  # scheme "grade": the values are the recall base's grades
    n_judged: IntArray

    @classmethod
    def build(cls, judgments: JudgmentFrame, *, negative: NegativePolicy) -> KeyStats:
        """Recall base and judged count of every topic of ``judgments``."""
        g = judgments.table["grade"].to_numpy()
        check_negative(g.astype(np.float64), negative, where=f"judgments {judgments.source}")
        ideal = ideal_gains(judgments, "grade")
        codes = judgments.table["topic_id"].cat.codes.to_numpy().astype(np.int64)
        nj = np.bincount(codes[codes >= 0], minlength=len(ideal.keys)).astype(np.int64)
        return cls(ideal, nj)


def assemble_lists(
    labels: pd.Index,
    offsets: IntArray,
    grades: FloatArray,
    pos: IntArray,
    stats: KeyStats,
    negative: NegativePolicy,
    unjudged: UnjudgedPolicy,
    n_skipped: int,
) -> RankedLists:
    """The :class:`RankedLists` of a run: grades per row, recall base and judged counts per list."""
    ioff, ivals = stats.ideal.segments(pos)
    nj = np.where(pos >= 0, stats.n_judged[np.maximum(pos, 0)], 0).astype(np.int64)
    check_negative(grades, negative, where="results")
    lists = RankedLists(
        labels,
        offsets,
        grades,
        ioff,
        ivals,
        nj,
        pos >= 0,
        negative,
        int(np.count_nonzero(grades < 0)),
        int(np.count_nonzero(np.isnan(grades))),
        n_skipped,
    )
    return _condense(lists, unjudged)


def _condense(lists: RankedLists, unjudged: UnjudgedPolicy) -> RankedLists:
    if unjudged == "zero":
        return lists
    g, off, _ = apply_unjudged(lists.grades, lists.offsets, policy=unjudged)
    if unjudged == "error":
        return lists
    return RankedLists(
        lists.query_ids,
        off,
        g,
        lists.ideal_offsets,
        lists.ideal_grades,
        lists.n_judged,
        lists.has_judgments,
        lists.negative,
        lists.n_negative,
        lists.n_unjudged,
        lists.n_skipped,
    )


# ---------------------------------------------------------------------------
# shared pieces
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class CutLists:
    """Rows of each list up to the cut-off, with per-row rank and list number."""

    rows: IntArray
    offsets: IntArray
    seg: IntArray
    rank: IntArray
    grades: FloatArray


def cut_lists(lists: RankedLists, cutoff: int | None) -> CutLists:
    """The rows of every list down to ``cutoff`` (all rows when ``None``)."""
    if cutoff is not None and cutoff < 1:
        raise MeasureSpecError(f"cut-off must be >= 1, got {cutoff}")
    rows, off = cut_segments(lists.offsets, cutoff)
    seg = segment_ids(off)
    return CutLists(rows, off, seg, segment_ranks(off, seg), lists.grades[rows])


def list_gains(grades: FloatArray, scheme: GainScheme, negative: NegativePolicy) -> FloatArray:
    """Gains of ``grades`` under ``scheme``; unjudged (NaN) rows gain 0."""
    g = scheme.gains(grades, negative=negative)
    return np.where(np.isnan(g), 0.0, g)


def ideal_gain_segments(lists: RankedLists, scheme: GainScheme) -> tuple[IntArray, FloatArray]:
    """Ideal gains per list (descending), recomputed for the scheme."""
    ig = scheme.gains(lists.ideal_grades, negative="keep")
    ioff = lists.ideal_offsets
    iseg = segment_ids(ioff)
    if ig.size > 1:
        same = iseg[1:] == iseg[:-1]
        if np.any(same & (ig[1:] > ig[:-1])):  # a non-monotone custom scheme
            ig = ig[np.lexsort((-ig, iseg))]
    return ioff, ig


def apply_empty(values: FloatArray, r: IntArray, empty: EmptyPolicy) -> FloatArray:
    """``values`` where the recall base ``r`` is non-empty, else NaN or 0 as ``empty`` says."""
    if empty not in ("nan", "zero"):
        raise MeasureSpecError(f"empty={empty!r} unknown; use 'nan' or 'zero'")
    return np.where(r > 0, values, np.nan if empty == "nan" else 0.0)


def safe_div(a: FloatArray, b: FloatArray) -> FloatArray:
    """``a / b`` with 0 where ``b`` is 0."""
    out = np.zeros(np.broadcast(a, b).shape)
    np.divide(a, b, out=out, where=b != 0)
    return out


# ---------------------------------------------------------------------------
# cumulated-gain family
# ---------------------------------------------------------------------------


# ---------------------------------------------------------------------------
# binary and blended-ratio measures
# ---------------------------------------------------------------------------

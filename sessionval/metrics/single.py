"""Single-query measures: the cumulated-gain family and the seeds' other measures.

All measures run on a :class:`RankedLists` (every ranked list of a study or a run in
one segment layout: per-row grades plus per-list offsets, and each list's recall base)
and return one float per list, computed for all lists at once with NumPy segment
operations (``sessionval.metrics._kernels``).  Spec: ``spec/metrics.md`` sections 2–3.

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
from itertools import pairwise
from typing import Final, Literal, TypeAlias

import numpy as np
import numpy.typing as npt
import pandas as pd

from ..errors import InputFormatError, JudgmentError, MeasureSpecError
from ..frame import JudgmentFrame, SessionFrame
from ..judgments.gains import (
    GainScheme,
    IdealGains,
    JudgmentIndex,
    NegativePolicy,
    UnjudgedPolicy,
    apply_unjudged,
    gain_scheme,
    ideal_gains,
    index_in,
    string_ranks,
)
from . import _kernels as K

__all__ = [
    "INFAP_EPSILON",
    "EmptyPolicy",
    "RankedLists",
    "TieBreak",
    "average_precision",
    "avg_pos",
    "avg_vect",
    "bpref",
    "cumulated_gain",
    "discounted_cumulated_gain",
    "gain_scalar",
    "gain_vectors",
    "inf_ap",
    "norm_vect",
    "nwrr",
    "o_measure",
    "p_measure",
    "p_plus",
    "precision",
    "q_measure",
    "recall",
    "reciprocal_rank",
    "wrr",
]

FloatArray: TypeAlias = npt.NDArray[np.float64]
IntArray: TypeAlias = npt.NDArray[np.int64]
BoolArray: TypeAlias = npt.NDArray[np.bool_]
EmptyPolicy: TypeAlias = Literal["nan", "zero"]
TieBreak: TypeAlias = Literal["doc_id", "trec_eval", "input"]
GainArg: TypeAlias = "str | GainScheme"

INFAP_EPSILON: Final[float] = 1e-5
"""trec_eval's ``INFAP_EPSILON``: smoothing of the precision estimate above a rank."""


# ---------------------------------------------------------------------------
# per-list vector helpers (the papers' worked examples)
# ---------------------------------------------------------------------------


def cumulated_gain(gains: Sequence[float] | npt.ArrayLike) -> FloatArray:
    r"""Cumulated gain vector of one ranked list.

    Parameters
    ----------
    gains
        Gain at ranks 1, 2, ….

    Returns
    -------
    numpy.ndarray
        :math:`CG[i] = \sum_{j \le i} G[j]`.

    References
    ----------
    Järvelin & Kekäläinen (2002), section 2.1 [jk2002].

    Examples
    --------
    The worked example of [jk2002], section 2:

    >>> cumulated_gain([3, 2, 3, 0, 0, 1, 2, 2, 3, 0])
    array([ 3.,  5.,  8.,  8.,  8.,  9., 11., 13., 16., 16.])
    """
    return np.cumsum(np.asarray(gains, dtype=np.float64))


def discounted_cumulated_gain(
    gains: Sequence[float] | npt.ArrayLike, *, discount: str = "jk2002", b: float = 2.0
) -> FloatArray:
    r"""Discounted cumulated gain vector of one ranked list.

    Parameters
    ----------
    gains
        Gain at ranks 1, 2, ….
    discount
        ``jk2008`` (:math:`1 + \log_b j`), ``jk2002`` (1 for :math:`j < b`, else
        :math:`\log_b j`), ``jk2002rn`` (1 at rank 1, :math:`\log_b j` from rank 2),
        ``log2p1`` (:math:`\log_2(j + 1)`) or ``none``.
    b
        Log base (> 1) of the ``jk*`` discounts.

    Returns
    -------
    numpy.ndarray
        :math:`DCG[i] = \sum_{j \le i} G[j] / d(j)`.

    Notes
    -----
    Järvelin et al. (2008)'s appendix prints, for ``jk2008`` with ``b = 4``,
    ``<3, 4, 5.67, 5.67, 5.67, 6.11, 6.94, 8.14, 9.30, 9.30>``: ranks 2 and 8 are
    arithmetic slips (an erratum); the formula, which we follow, gives
    ``<3, 4.33, 6.01, 6.01, 6.01, 6.44, 7.28, 8.08, 9.24, 9.24>``.

    References
    ----------
    [jk2002] section 2.1; [jk2002rn]; [jk2008] section 3; Burges et al. (2005) for log2p1.

    Examples
    --------
    [jk2002], section 2 (the paper truncates to two decimals):

    >>> g = [3, 2, 3, 0, 0, 1, 2, 2, 3, 0]
    >>> discounted_cumulated_gain(g, discount="jk2002", b=2).round(2)
    array([3.  , 5.  , 6.89, 6.89, 6.89, 7.28, 7.99, 8.66, 9.61, 9.61])

    [jk2008], appendix (erratum: see Notes):

    >>> discounted_cumulated_gain(g, discount="jk2008", b=4).round(2)
    array([3.  , 4.33, 6.01, 6.01, 6.01, 6.44, 7.28, 8.08, 9.24, 9.24])
    """
    _check_discount(discount, b)
    g = np.asarray(gains, dtype=np.float64)
    r = np.arange(1, g.size + 1, dtype=np.int64)
    return np.cumsum(g / K.discount(r, discount, b))


def _check_discount(discount: str, b: float) -> None:
    if discount not in K.DISCOUNTS:
        raise MeasureSpecError(
            f"unknown discount {discount!r}; valid discounts: {', '.join(K.DISCOUNTS)}"
        )
    if discount.startswith("jk") and not b > 1:
        raise MeasureSpecError(f"log base b must be > 1, got {b}")


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
        return K.segment_ids(self.offsets)

    def n_relevant(self, rel: float = 1) -> IntArray:
        """Recall-base size per list at relevance level ``rel``."""
        iseg = K.segment_ids(self.ideal_offsets)
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
        _check_negative(g, negative, where="results")
        if recall_base is None:
            seg = K.segment_ids(off)
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
        ioff = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(rb_seg, minlength=n), out=ioff[1:])
        if n_judged is None:
            seg = K.segment_ids(off)
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
        from ..judgments.gains import result_grades

        offsets = frame.query_offsets()
        grades = result_grades(frame, judgments, source=source)
        qids = pd.Index(frame.queries["query_id"].astype(str).to_numpy())
        if source == "searcher" or judgments is None:
            # the recall base of each list is its own judged relevant rows
            return cls.from_arrays(qids, offsets, grades, negative=negative, unjudged=unjudged)
        stats = _KeyStats.build(judgments, negative=negative)
        pos = stats.ideal.positions(frame.queries["qrels_id"])
        return _assemble(qids, offsets, grades, pos, stats, negative, unjudged, 0)

    @classmethod
    def from_run(
        cls,
        run: pd.DataFrame,
        judgments: JudgmentFrame,
        *,
        ties: TieBreak = "doc_id",
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
            Order within a list: score descending, then ``"doc_id"`` ascending
            (default, independent of input order), ``"trec_eval"`` (doc id descending,
            what trec_eval does) or ``"input"`` (input order).
        missing
            Queries of the run without judgments are always skipped (counted in
            ``n_skipped``, as trec_eval does); ``"empty"`` also adds an empty list for
            every judged topic the run lacks (trec_eval ``-c``).
        negative, unjudged
            Policies, see :mod:`sessionval.judgments.gains`.
        """
        for col in ("query_id", "doc_id", "score"):
            if col not in run.columns:
                raise InputFormatError(
                    f"run table: missing column {col!r} (found {', '.join(map(str, run.columns))})"
                )
        if ties not in ("doc_id", "trec_eval", "input"):
            raise MeasureSpecError(f"tie-break {ties!r} unknown; use doc_id, trec_eval or input")
        stats = _KeyStats.build(judgments, negative=negative)
        qc, qcat = _codes(run["query_id"])
        dc, dcat = _codes(run["doc_id"])
        # keep only queries with judgments
        qpos_cat = index_in(qcat, stats.ideal.keys)
        judged_q = qpos_cat >= 0
        qcount = np.bincount(qc, minlength=len(qcat))
        n_skipped = int(np.count_nonzero(~judged_q & (qcount > 0)))
        # query order: sorted ids (as trec_eval prints them)
        qrank = string_ranks(qcat).astype(np.int32)
        score = run["score"].to_numpy(dtype=np.float64)
        if np.isnan(score).any():
            row = int(np.flatnonzero(np.isnan(score))[0])
            raise InputFormatError(f"run table: row {row}: score is missing or not a number")
        # ties are broken by doc id below unless ties="input": the sort need not be stable
        stable = ties == "input"
        if judged_q.all():
            rows = _score_order(qrank[qc], score, stable=stable)
        else:
            rows_in = np.flatnonzero(judged_q[qc])
            rows = rows_in[_score_order(qrank[qc[rows_in]], score[rows_in], stable=stable)]
            del rows_in
        q_rows = qc[rows]
        if ties != "input" and rows.size > 1:
            # break score ties by doc id; only tied rows need their ids compared
            ss = score[rows]
            same = (q_rows[1:] == q_rows[:-1]) & (ss[1:] == ss[:-1])
            del ss
            if same.any():
                tied = np.zeros(rows.size, dtype=bool)
                tied[1:] |= same
                tied[:-1] |= same
                at = np.flatnonzero(tied)
                del tied
                # a tied row opens a new group unless it ties with the row before it
                group = np.cumsum(~np.concatenate([[False], same])[at])
                at_rows = rows[at]
                dkey = _id_ranks(dc[at_rows], dcat)
                if ties == "trec_eval":
                    dkey = int(dkey.max()) - dkey
                # one argsort of a packed (group, doc rank) key instead of a lexsort
                packed = group * (int(dkey.max()) + 1) + dkey
                rows[at] = at_rows[np.argsort(packed)]
                del at, at_rows, group, dkey, packed
            del same
        d_rows = dc[rows]
        del rows, dc
        i = _first_duplicate(q_rows, d_rows)
        if i >= 0:
            raise InputFormatError(
                f"run table: document {dcat[d_rows[i]]!r} appears twice for query "
                f"{qcat[q_rows[i]]!r}; a document may appear once per ranked list"
            )
        present = np.flatnonzero(np.bincount(q_rows, minlength=len(qcat)) > 0)
        present = present[np.argsort(qrank[present])]
        counts = np.bincount(q_rows, minlength=len(qcat))[present]
        labels = pd.Index(qcat[present]).astype(str)
        pos = qpos_cat[present]
        grades = stats.index.lookup_lists(pos, counts, d_rows, pd.Index(dcat))
        del q_rows, d_rows
        if missing == "empty":
            have = np.zeros(len(stats.ideal.keys), dtype=bool)
            have[pos] = True
            judged_keys = np.flatnonzero(~have & (stats.n_judged > 0))
            if judged_keys.size:
                labels = labels.append(pd.Index(stats.ideal.keys[judged_keys].astype(str)))
                pos = np.concatenate([pos, judged_keys])
                counts = np.concatenate([counts, np.zeros(judged_keys.size, dtype=np.int64)])
                o = np.argsort(string_ranks(labels), kind="stable")
                # re-sort lists; rows move with their list (vectorised gather)
                starts = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
                c_new = counts[o]
                new_starts = np.concatenate([[0], np.cumsum(c_new)[:-1]]).astype(np.int64)
                row_idx = np.arange(int(c_new.sum()), dtype=np.int64) + np.repeat(
                    starts[o] - new_starts, c_new
                )
                grades, labels, pos, counts = grades[row_idx], labels[o], pos[o], counts[o]
        elif missing != "skip":
            raise MeasureSpecError(f"missing={missing!r} unknown; use 'skip' or 'empty'")
        offsets = np.zeros(counts.size + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])
        return _assemble(labels, offsets, grades, pos, stats, negative, unjudged, n_skipped)


def _id_ranks(codes: npt.NDArray[np.integer], cats: pd.Index) -> IntArray:
    """Byte-order rank (``strcmp``, as trec_eval) of the ids ``cats[codes]``, as int64.

    Only relative order matters: when ``cats`` are strings already in order (pandas
    sorts categories; UTF-8 byte order is code-point order) the codes are the ranks.
    """
    c = codes.astype(np.int64)
    if pd.api.types.is_string_dtype(cats.dtype) and cats.dtype != object:
        if cats.is_monotonic_increasing:
            return c
    uniq, inv = np.unique(c, return_inverse=True)
    out: IntArray = string_ranks(pd.Index(cats[uniq]))[inv]
    return out


def _blocks(q: npt.NDArray[np.integer]) -> tuple[IntArray, IntArray]:
    """Starts and lengths of the runs of equal values in ``q``."""
    n = q.size
    starts = np.concatenate([[0], np.flatnonzero(q[1:] != q[:-1]) + 1]).astype(np.int64)
    return starts, np.diff(np.concatenate([starts, [n]])).astype(np.int64)


def _padded(n: int, lengths: IntArray) -> bool:
    """Whether a (blocks x longest block) matrix stays small (per-row sorts pay off)."""
    return lengths.size > 0 and lengths.size * int(lengths.max()) <= 4 * n + 1024


def _score_order(q: npt.NDArray[np.integer], score: FloatArray, *, stable: bool = True) -> IntArray:
    """Order rows by query rank, then score descending.

    With ``stable=True`` rows of equal query and score keep their input order; with
    ``stable=False`` their order is unspecified (callers that break ties themselves
    use the faster unstable sort).

    TREC runs usually list each query's documents together, best first: then only the
    blocks move (an O(n) check, no sort of the rows).  Otherwise rows are grouped by
    query (blocks moved, or a stable sort when a query's rows are scattered) and each
    query's scores are sorted as one row of a padded matrix, which is much faster than
    one global lexsort; when every query has the same number of rows the matrix is a
    reshape of the grouped scores.
    """
    n = q.size
    kind: Literal["stable", "quicksort"] = "stable" if stable else "quicksort"
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    starts, lengths = _blocks(q)
    block_q = q[starts]
    grouped: IntArray | None
    if np.unique(block_q).size == block_q.size:
        # each query's rows are contiguous: move whole blocks into query order
        border = np.argsort(block_q, kind="stable")
        new_len = lengths[border]
        new_start = np.zeros(new_len.size, dtype=np.int64)
        np.cumsum(new_len[:-1], out=new_start[1:])
        if np.array_equal(border, np.arange(border.size)):
            grouped, gs = None, score
        else:
            grouped = np.arange(n, dtype=np.int64)
            grouped += np.repeat(starts[border] - new_start, new_len)
            gs = score[grouped]
        # already best first within each query?  (block boundaries always pass)
        ok = gs[1:] <= gs[:-1]
        ok[new_start[1:] - 1] = True
        if ok.all():
            return np.arange(n, dtype=np.int64) if grouped is None else grouped
        del ok
        starts, lengths = new_start, new_len
    else:
        grouped = np.argsort(q, kind="stable").astype(np.int64)
        gs = score[grouped]
        starts, lengths = _blocks(q[grouped])
    if not _padded(n, lengths):
        return np.asarray(np.lexsort((-score, q)), dtype=np.int64)
    # +inf padding must sort after every real row: a stable sort keeps real +inf
    # (score -inf) rows before it; without such scores any sort does
    if not stable and np.isinf(gs).any():
        kind = "stable"
    # the result overwrites ``grouped`` block by block (a block only reads its own rows)
    out = np.empty(n, dtype=np.int64) if grouped is None else grouped
    # whole lists in blocks of about _SORT_BLOCK rows (a loop over fixed-size blocks,
    # not over lists): the matrices stay small, which bounds peak memory
    firsts = np.unique(np.searchsorted(starts, np.arange(0, n, _SORT_BLOCK), side="right") - 1)
    bounds = np.append(firsts, lengths.size).tolist()
    for l0, l1 in pairwise(bounds):
        r0 = int(starts[l0])
        r1 = int(starts[l1]) if l1 < lengths.size else n
        local = _sort_rows(gs[r0:r1], starts[l0:l1] - r0, lengths[l0:l1], kind)
        local += r0
        out[r0:r1] = local if grouped is None else grouped[local]  # gather, then store
    return out


_SORT_BLOCK: Final[int] = 1 << 20


def _sort_rows(
    gs: FloatArray, starts: IntArray, lengths: IntArray, kind: Literal["stable", "quicksort"]
) -> IntArray:
    """Order of the rows of consecutive lists by score descending (one matrix row each)."""
    n, rows = gs.size, lengths.size
    width = int(lengths.max())
    if rows * width == n:
        # equal lengths: the scores are the matrix
        o = np.argsort(np.negative(gs).reshape(rows, width), axis=1, kind=kind)
        o += starts[:, None]
        return np.asarray(o.ravel(), dtype=np.int64)
    # scatter row i of list b to b * width + (i - starts[b]); pad with +inf
    flat = np.arange(n, dtype=np.int64)
    flat += np.repeat(np.arange(rows, dtype=np.int64) * width - starts, lengths)
    m = np.full(rows * width, np.inf)
    m[flat] = np.negative(gs)
    o = np.argsort(m.reshape(rows, width), axis=1, kind=kind)
    valid = np.arange(width)[None, :] < lengths[:, None]
    return np.asarray((o + starts[:, None])[valid], dtype=np.int64)


def _first_duplicate(q_rows: npt.NDArray[np.integer], d_rows: npt.NDArray[np.integer]) -> int:
    """Row of a document repeated within its list (rows grouped by list), or -1."""
    n = q_rows.size
    if n < 2:
        return -1
    starts, lengths = _blocks(q_rows)
    if _padded(n, lengths):
        # one padded row per list, sorted, in fixed-size blocks of lists
        firsts = np.unique(np.searchsorted(starts, np.arange(0, n, _SORT_BLOCK), side="right") - 1)
        for l0, l1 in pairwise(np.append(firsts, lengths.size).tolist()):
            r0 = int(starts[l0])
            r1 = int(starts[l1]) if l1 < lengths.size else n
            st, ln = starts[l0:l1] - r0, lengths[l0:l1]
            width = int(ln.max())
            flat = np.arange(r1 - r0, dtype=np.int64)
            flat += np.repeat(np.arange(ln.size, dtype=np.int64) * width - st, ln)
            m = np.full(ln.size * width, -1, dtype=d_rows.dtype)
            m[flat] = d_rows[r0:r1]
            del flat
            m2 = m.reshape(ln.size, width)
            m2.sort(axis=1)
            hit = np.flatnonzero(((m2[:, 1:] == m2[:, :-1]) & (m2[:, 1:] >= 0)).any(axis=1))
            if hit.size == 0:
                continue
            b = l0 + int(hit[0])
            block = d_rows[starts[b] : starts[b] + lengths[b]]
            _, first = np.unique(block, return_index=True)
            dup = np.setdiff1d(np.arange(block.size), first)
            return int(starts[b] + dup[0])
        return -1
    pair = q_rows.astype(np.int64) * (int(d_rows.max()) + 1) + d_rows
    order = np.argsort(pair, kind="stable")
    same = np.flatnonzero(pair[order][1:] == pair[order][:-1])
    return -1 if same.size == 0 else int(order[same[0] + 1])


def _codes(col: pd.Series) -> tuple[npt.NDArray[np.int32], pd.Index]:
    if isinstance(col.dtype, pd.CategoricalDtype):
        codes = col.cat.codes.to_numpy()
        return codes.astype(np.int32, copy=False), pd.Index(col.cat.categories)
    if isinstance(col.dtype, pd.StringDtype) and col.dtype.storage == "pyarrow":
        # Arrow-backed strings (pandas' default ``str``): Arrow's hash encoder on the
        # zero-copy array is faster than pd.factorize (no round trip through pandas)
        import pyarrow as pa
        import pyarrow.compute as pc

        enc = pc.dictionary_encode(pa.chunked_array(pa.array(col.array)))
        enc = enc.unify_dictionaries()
        idx = [ch.indices.fill_null(-1).to_numpy(zero_copy_only=False) for ch in enc.chunks]
        acodes = np.concatenate([np.zeros(0, dtype=np.int32), *idx]).astype(np.int32)
        dictionary = enc.chunk(0).dictionary if enc.num_chunks else pa.array([], pa.string())
        return acodes, pd.Index(pd.array(dictionary, dtype=col.dtype))
    fcodes, uniq = pd.factorize(col if pd.api.types.is_string_dtype(col.dtype) else col.astype(str))
    return fcodes.astype(np.int32), pd.Index(uniq)


def _check_negative(g: FloatArray, negative: NegativePolicy, *, where: str) -> None:
    if negative not in ("clip", "keep", "error"):
        raise MeasureSpecError(f"negative-grade policy {negative!r} unknown; use clip, keep, error")
    if negative == "error" and np.any(g < 0):
        raise JudgmentError(
            f"{int(np.count_nonzero(g < 0))} negative grade(s) in {where}; "
            "negative-grade policy is 'error' (use 'clip' or 'keep')"
        )


@dataclass(frozen=True)
class _KeyStats:
    index: JudgmentIndex
    ideal: IdealGains  # scheme "grade": the values are the recall base's grades
    n_judged: IntArray

    @classmethod
    def build(cls, judgments: JudgmentFrame, *, negative: NegativePolicy) -> _KeyStats:
        g = judgments.table["grade"].to_numpy()
        _check_negative(g.astype(np.float64), negative, where=f"judgments {judgments.source}")
        ideal = ideal_gains(judgments, "grade")
        codes = judgments.table["topic_id"].cat.codes.to_numpy().astype(np.int64)
        nj = np.bincount(codes[codes >= 0], minlength=len(ideal.keys)).astype(np.int64)
        return cls(JudgmentIndex.build(judgments), ideal, nj)


def _assemble(
    labels: pd.Index,
    offsets: IntArray,
    grades: FloatArray,
    pos: IntArray,
    stats: _KeyStats,
    negative: NegativePolicy,
    unjudged: UnjudgedPolicy,
    n_skipped: int,
) -> RankedLists:
    ioff, ivals = stats.ideal.segments(pos)
    nj = np.where(pos >= 0, stats.n_judged[np.maximum(pos, 0)], 0).astype(np.int64)
    _check_negative(grades, negative, where="results")
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
class _Cut:
    """Rows of each list up to the cut-off, with per-row rank and list number."""

    rows: IntArray
    offsets: IntArray
    seg: IntArray
    rank: IntArray
    grades: FloatArray


def _cut(lists: RankedLists, k: int | None) -> _Cut:
    if k is not None and k < 1:
        raise MeasureSpecError(f"cut-off must be >= 1, got {k}")
    rows, off = K.cut(lists.offsets, k)
    seg = K.segment_ids(off)
    return _Cut(rows, off, seg, K.ranks(off, seg), lists.grades[rows])


def _gains(grades: FloatArray, scheme: GainScheme, negative: NegativePolicy) -> FloatArray:
    g = scheme.gains(grades, negative=negative)
    return np.where(np.isnan(g), 0.0, g)


def _ideal_gain_segments(lists: RankedLists, scheme: GainScheme) -> tuple[IntArray, FloatArray]:
    """Ideal gains per list (descending), recomputed for the scheme."""
    ig = scheme.gains(lists.ideal_grades, negative="keep")
    ioff = lists.ideal_offsets
    iseg = K.segment_ids(ioff)
    if ig.size > 1:
        same = iseg[1:] == iseg[:-1]
        if np.any(same & (ig[1:] > ig[:-1])):  # a non-monotone custom scheme
            ig = ig[np.lexsort((-ig, iseg))]
    return ioff, ig


def _empty(values: FloatArray, r: IntArray, empty: EmptyPolicy) -> FloatArray:
    if empty not in ("nan", "zero"):
        raise MeasureSpecError(f"empty={empty!r} unknown; use 'nan' or 'zero'")
    return np.where(r > 0, values, np.nan if empty == "nan" else 0.0)


def _safe_div(a: FloatArray, b: FloatArray) -> FloatArray:
    out = np.zeros(np.broadcast(a, b).shape)
    np.divide(a, b, out=out, where=b != 0)
    return out


# ---------------------------------------------------------------------------
# cumulated-gain family
# ---------------------------------------------------------------------------


def gain_scalar(
    lists: RankedLists,
    *,
    kind: Literal["CG", "DCG", "nCG", "nDCG"] = "nDCG",
    cutoff: int | None = None,
    discount: str = "log2p1",
    b: float = 2.0,
    gain: str | GainScheme = "grade",
    empty: EmptyPolicy = "nan",
) -> FloatArray:
    r"""CG, DCG, nCG or nDCG at a cut-off, one value per list.

    Parameters
    ----------
    lists
        The ranked lists.
    kind
        ``CG``, ``DCG`` (raw), ``nCG``, ``nDCG`` (divided by the ideal's value).
    cutoff
        Rank ``k``; ``None``: the whole list against the whole ideal vector.
    discount, b
        Discount and log base (see :func:`discounted_cumulated_gain`); ``CG``/``nCG``
        ignore them.
    gain
        Gain scheme (:func:`~sessionval.judgments.gains.gain_scheme`); ``grade`` is
        trec_eval's.
    empty
        Value of a normalised measure for an empty recall base.

    Returns
    -------
    numpy.ndarray
        One float per list.

    Notes
    -----
    :math:`DCG@k = \sum_{j \le k} G[j] / d(j)`,
    :math:`nDCG@k = DCG@k / DCG_I@k` with :math:`DCG_I` the same sum over the ideal
    gain vector (the recall base's gains, descending) [jk2002, jk2008].
    ``nDCG`` with ``discount=log2p1, gain=grade`` is trec_eval's ``ndcg`` /
    ``ndcg_cut.k``.

    Examples
    --------
    >>> lists = RankedLists.from_arrays(["q"], [0, 10], [3, 2, 3, 0, 0, 1, 2, 2, 3, 0],
    ...                                 recall_base=[[3, 3, 3, 2, 2, 2, 1, 1, 1, 1]])
    >>> gain_scalar(lists, kind="nCG", cutoff=4).round(2)
    array([0.73])
    >>> gain_scalar(lists, kind="DCG", cutoff=10, discount="jk2002", b=2).round(2)
    array([9.61])
    """
    _check_discount(discount, b)
    scheme = gain_scheme(gain)
    c = _cut(lists, cutoff)
    g = _gains(c.grades, scheme, lists.negative)
    disc = kind in ("DCG", "nDCG")
    dname = discount if disc else "none"
    val = K.segment_sum(g / K.discount(c.rank, dname, b), c.seg, lists.n)
    if kind in ("CG", "DCG"):
        return val
    if kind not in ("nCG", "nDCG"):
        raise MeasureSpecError(f"kind {kind!r} unknown; use CG, DCG, nCG, nDCG")
    ioff, ig = _ideal_gain_segments(lists, scheme)
    irows, ioff2 = K.cut(ioff, cutoff)
    iseg = K.segment_ids(ioff2)
    irank = K.ranks(ioff2, iseg)
    ideal = K.segment_sum(ig[irows] / K.discount(irank, dname, b), iseg, lists.n)
    r = lists.n_relevant()
    return _empty(_safe_div(val, ideal), r, empty)


def gain_vectors(
    lists: RankedLists,
    *,
    kind: Literal["CG", "DCG", "nCG", "nDCG"] = "nDCG",
    depth: int = 10,
    discount: str = "jk2002",
    b: float = 2.0,
    gain: str | GainScheme = "grade",
    empty: EmptyPolicy = "nan",
    ideal: bool = False,
) -> pd.DataFrame:
    r"""(n)(D)CG vectors to ``depth`` as a tidy frame (``query_id``, ``rank``, ``value``).

    Parameters
    ----------
    lists
        The ranked lists.
    kind
        ``CG``, ``DCG``, ``nCG`` or ``nDCG`` (norm-vect: component-wise division by
        the ideal vector's measure).
    depth
        Ranks 1..depth; shorter lists are extended with gain 0.
    discount, b, gain, empty
        As in :func:`gain_scalar`.
    ideal
        Return the ideal vector's ``CG``/``DCG`` instead (``kind`` CG or DCG).

    Returns
    -------
    pandas.DataFrame
        ``n * depth`` rows, columns ``query_id`` (str), ``rank`` (int32), ``value``.

    Notes
    -----
    Järvelin & Kekäläinen (2002), sections 2.1–2.3: vectors are the measures; a
    position where the ideal is 0 (empty recall base) is NaN (``empty="nan"``).

    Examples
    --------
    >>> lists = RankedLists.from_arrays(["q"], [0, 10], [3, 2, 3, 0, 0, 1, 2, 2, 3, 0],
    ...                                 recall_base=[[3, 3, 3, 2, 2, 2, 1, 1, 1, 1]])
    >>> gain_vectors(lists, kind="nCG", depth=10)["value"].round(2).tolist()
    [1.0, 0.83, 0.89, 0.73, 0.62, 0.6, 0.69, 0.76, 0.89, 0.84]
    >>> gain_vectors(lists, kind="DCG", depth=6, ideal=True)["value"].round(2).tolist()
    [3.0, 6.0, 7.89, 8.89, 9.75, 10.52]
    """
    if depth < 1:
        raise MeasureSpecError(f"depth must be >= 1, got {depth}")
    _check_discount(discount, b)
    scheme = gain_scheme(gain)
    n = lists.n
    dname = discount if kind in ("DCG", "nDCG") else "none"
    d = K.discount(np.arange(1, depth + 1, dtype=np.int64), dname, b)

    def dense(off: IntArray, vals: FloatArray) -> FloatArray:
        rows, o2 = K.cut(off, depth)
        seg = K.segment_ids(o2)
        m = np.zeros((n, depth))
        m[seg, K.ranks(o2, seg) - 1] = vals[rows]
        return np.cumsum(m / d, axis=1)

    ioff, ig = _ideal_gain_segments(lists, scheme)
    if ideal:
        if kind not in ("CG", "DCG"):
            raise MeasureSpecError("ideal=True needs kind CG or DCG")
        mat = dense(ioff, ig)
    else:
        mat = dense(lists.offsets, _gains(lists.grades, scheme, lists.negative))
        if kind in ("nCG", "nDCG"):
            im = dense(ioff, ig)
            with np.errstate(invalid="ignore", divide="ignore"):
                mat = np.where(im != 0, mat / np.where(im != 0, im, 1.0), np.nan)
            if empty == "zero":
                mat = np.nan_to_num(mat, nan=0.0)
        elif kind not in ("CG", "DCG"):
            raise MeasureSpecError(f"kind {kind!r} unknown; use CG, DCG, nCG, nDCG")
    return pd.DataFrame(
        {
            "query_id": np.repeat(np.asarray(lists.query_ids, dtype=object), depth),
            "rank": np.tile(np.arange(1, depth + 1, dtype=np.int32), n),
            "value": mat.ravel(),
        }
    )


def avg_vect(vectors: pd.DataFrame) -> pd.DataFrame:
    r"""Component-wise mean of vectors of equal length (``avg-vect``).

    Parameters
    ----------
    vectors
        Tidy frame with ``rank`` and ``value`` (e.g. from :func:`gain_vectors`);
        NaN values (empty recall base) are left out of the mean.

    Returns
    -------
    pandas.DataFrame
        ``rank``, ``value``: :math:`\bar V[i] = \frac{1}{n}\sum_q V_q[i]`.

    References
    ----------
    Järvelin & Kekäläinen (2002), section 2.2 [jk2002].

    Examples
    --------
    >>> v = pd.DataFrame({"query_id": ["a", "a", "b", "b"], "rank": [1, 2, 1, 2],
    ...                   "value": [1.0, 3.0, 3.0, 5.0]})
    >>> avg_vect(v)["value"].tolist()
    [2.0, 4.0]
    """
    return vectors.groupby("rank", sort=True)["value"].mean().reset_index()


def norm_vect(average: pd.DataFrame, ideal_average: pd.DataFrame) -> pd.DataFrame:
    r"""Component-wise division of an average vector by the average ideal (``norm-vect``).

    Parameters
    ----------
    average, ideal_average
        Frames with ``rank``, ``value`` (from :func:`avg_vect`).

    Returns
    -------
    pandas.DataFrame
        ``rank``, ``value``: :math:`\bar V[i] / \bar I[i]` (NaN where the ideal is 0).

    References
    ----------
    Järvelin & Kekäläinen (2002), section 2.3 [jk2002].

    Examples
    --------
    >>> a = pd.DataFrame({"rank": [1, 2], "value": [3.0, 5.0]})
    >>> i = pd.DataFrame({"rank": [1, 2], "value": [3.0, 6.0]})
    >>> norm_vect(a, i)["value"].round(2).tolist()
    [1.0, 0.83]
    """
    m = average.merge(ideal_average, on="rank", suffixes=("", "_ideal"), how="inner")
    iv = m["value_ideal"].to_numpy(dtype=np.float64)
    v = m["value"].to_numpy(dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where(iv != 0, v / np.where(iv != 0, iv, 1.0), np.nan)
    return pd.DataFrame({"rank": m["rank"].to_numpy(), "value": out})


def avg_pos(vectors: pd.DataFrame, k: int) -> pd.DataFrame:
    r"""Mean of each vector's first ``k`` positions (``avg-pos``).

    Parameters
    ----------
    vectors
        Tidy frame with ``query_id``, ``rank``, ``value``.
    k
        Number of positions (vectors must reach rank ``k``).

    Returns
    -------
    pandas.DataFrame
        ``query_id``, ``value``: :math:`\frac{1}{k}\sum_{i \le k} V[i]`.

    References
    ----------
    Järvelin & Kekäläinen (2002), section 2.2 [jk2002].

    Examples
    --------
    >>> v = pd.DataFrame({"query_id": ["a"] * 3, "rank": [1, 2, 3], "value": [3.0, 5.0, 8.0]})
    >>> avg_pos(v, 2)["value"].tolist()
    [4.0]
    """
    if k < 1:
        raise MeasureSpecError(f"avg-pos needs k >= 1, got {k}")
    top = vectors[vectors["rank"] <= k]
    short = top.groupby("query_id", sort=False)["rank"].max()
    if (short < k).any():
        q = short.index[int(np.flatnonzero((short < k).to_numpy())[0])]
        raise MeasureSpecError(f"vector of query {q!r} is shorter than k={k}")
    return (top.groupby("query_id", sort=False)["value"].sum() / k).reset_index()


# ---------------------------------------------------------------------------
# binary and blended-ratio measures
# ---------------------------------------------------------------------------


def _rel_counts(c: _Cut, rel: float) -> tuple[BoolArray, FloatArray]:
    isrel = c.grades >= rel  # NaN -> False
    count = K.segment_cumsum(isrel, c.offsets, c.seg)
    return isrel, count


def _relevant_rows(
    lists: RankedLists, cutoff: int | None, rel: float
) -> tuple[IntArray, FloatArray, FloatArray]:
    """List number, rank and ``count(rank)`` of every relevant row down to the cut-off.

    Works on the relevant rows only (no per-row arrays over the whole lists):
    ``count`` is a row's position among its list's relevant rows, so the cut-off
    keeps a prefix of them and the counts stay valid.
    """
    if cutoff is not None and cutoff < 1:
        raise MeasureSpecError(f"cut-off must be >= 1, got {cutoff}")
    off = lists.offsets
    rows = np.flatnonzero(lists.grades >= rel)  # NaN -> not relevant
    seg = np.searchsorted(off, rows, side="right") - 1
    rank = rows - off[seg] + 1
    first = np.searchsorted(rows, off[:-1])  # each list's first relevant row in ``rows``
    count = np.arange(1, rows.size + 1, dtype=np.int64) - first[seg]
    if cutoff is not None:
        keep = rank <= cutoff
        seg, rank, count = seg[keep], rank[keep], count[keep]
    return seg, rank.astype(np.float64), count.astype(np.float64)


def average_precision(
    lists: RankedLists, *, cutoff: int | None = None, rel: float = 1, empty: EmptyPolicy = "nan"
) -> FloatArray:
    r"""Average precision (trec_eval ``map``; with a cut-off ``map_cut.k``).

    Notes
    -----
    :math:`AP@k = \frac{1}{R}\sum_{r \le k} isrel(r)\, count(r)/r` (divided by ``R``,
    as trec_eval; NTCIREVAL's AP@k divides by min(R, k)) [sakai2007, section 3].

    Examples
    --------
    >>> lists = RankedLists.from_arrays(["q"], [0, 4], [1, 0, 1, 0], recall_base=[[1, 1, 1]])
    >>> average_precision(lists).round(4)
    array([0.5556])
    """
    seg, rank, count = _relevant_rows(lists, cutoff, rel)
    s = K.segment_sum(count / rank, seg, lists.n)
    r = lists.n_relevant(rel)
    return _empty(_safe_div(s, r.astype(np.float64)), r, empty)


def _blended(
    lists: RankedLists, c: _Cut, beta: float, gain: str | GainScheme
) -> tuple[BoolArray, FloatArray, FloatArray]:
    """isrel, count(r) and BR(r) per row (Sakai 2007, eq. for the blended ratio)."""
    scheme = gain_scheme(gain)
    g = _gains(c.grades, scheme, lists.negative)
    isrel, count = _rel_counts(c, 1)
    cg = K.segment_cumsum(g, c.offsets, c.seg)
    ioff, ig = _ideal_gain_segments(lists, scheme)
    icum = K.segment_cumsum(ig, ioff, K.segment_ids(ioff))
    cgi = K.take_prefix(icum, ioff, c.seg, c.rank)
    br = (count + beta * cg) / (c.rank + beta * cgi)
    return isrel, count, br


def q_measure(
    lists: RankedLists,
    *,
    cutoff: int | None = None,
    beta: float = 1.0,
    gain: str | GainScheme = "grade",
    empty: EmptyPolicy = "nan",
) -> FloatArray:
    r"""Q-measure (Sakai): AP with the blended ratio instead of precision.

    Notes
    -----
    :math:`BR(r) = (count(r) + \beta\, cg(r)) / (r + \beta\, cg_I(r))`,
    :math:`Q = \frac{1}{R}\sum_r isrel(r)\, BR(r)`; ``Q@k`` sums ranks ``<= k`` and
    divides by :math:`\min(R, k)` (NTCIREVAL) [sakai2007, section 3].

    Examples
    --------
    >>> lists = RankedLists.from_arrays(["q"], [0, 3], [1, 2, 3], recall_base=[[3, 2, 1]])
    >>> q_measure(lists).round(4)
    array([0.7381])
    """
    c = _cut(lists, cutoff)
    isrel, _, br = _blended(lists, c, beta, gain)
    s = K.segment_sum(np.where(isrel, br, 0.0), c.seg, lists.n)
    r = lists.n_relevant()
    denom = r if cutoff is None else np.minimum(r, cutoff)
    return _empty(_safe_div(s, denom.astype(np.float64)), r, empty)


def o_measure(
    lists: RankedLists,
    *,
    cutoff: int | None = None,
    beta: float = 1.0,
    gain: str | GainScheme = "grade",
    empty: EmptyPolicy = "nan",
) -> FloatArray:
    r"""O-measure: the blended ratio at the first relevant document, 0 when none.

    Notes
    -----
    :math:`O = BR(r_1)` [sakai2007, section 3].

    Examples
    --------
    Sakai (2007) section 3, gains S=3, A=2, B=1, topic with one S, A and B each:
    system X (B at rank 1) and Y (S at rank 2).

    >>> rb = [[3, 2, 1]]
    >>> float(o_measure(RankedLists.from_arrays(["X"], [0, 1], [1], recall_base=rb))[0])
    0.5
    >>> o_measure(RankedLists.from_arrays(["Y"], [0, 2], [0, 3], recall_base=rb)).round(2)
    array([0.57])
    """
    c = _cut(lists, cutoff)
    isrel, _, br = _blended(lists, c, beta, gain)
    first = K.first_true_rank(isrel, c.offsets, c.seg)
    out = np.zeros(lists.n)
    has = first > 0
    out[has] = br[c.offsets[:-1][has] + first[has] - 1]
    return _empty(out, lists.n_relevant(), empty)


def _first_max(c: _Cut, n: int) -> IntArray:
    """Rank of the first document of the highest grade present (> 0), 0 when none."""
    g = np.where(np.isnan(c.grades), -np.inf, c.grades)
    maxg = np.full(n, -np.inf)
    nonempty = np.flatnonzero(np.diff(c.offsets) > 0)
    if nonempty.size:
        maxg[nonempty] = np.maximum.reduceat(g, c.offsets[:-1][nonempty])
    return K.first_true_rank((g == maxg[c.seg]) & (g > 0), c.offsets, c.seg)


def p_measure(
    lists: RankedLists,
    *,
    cutoff: int | None = None,
    beta: float = 1.0,
    gain: str | GainScheme = "grade",
    empty: EmptyPolicy = "nan",
) -> FloatArray:
    r"""P-measure: the blended ratio at the first document of the highest level retrieved.

    Notes
    -----
    :math:`P = BR(r_p)`, :math:`r_p` the rank of the first document whose grade is the
    highest grade in the (cut) list; 0 with no relevant document [sakai2007, section 3].

    Examples
    --------
    Sakai (2007): system Z (B at 1, S at 2) gets 6/7; the perfect inverse (B, A, S) 1.

    >>> rb = [[3, 2, 1]]
    >>> p_measure(RankedLists.from_arrays(["Z"], [0, 2], [1, 3], recall_base=rb)).round(2)
    array([0.86])
    >>> p_measure(RankedLists.from_arrays(["inv"], [0, 3], [1, 2, 3], recall_base=rb))
    array([1.])
    """
    c = _cut(lists, cutoff)
    _, _, br = _blended(lists, c, beta, gain)
    rp = _first_max(c, lists.n)
    out = np.zeros(lists.n)
    has = rp > 0
    out[has] = br[c.offsets[:-1][has] + rp[has] - 1]
    return _empty(out, lists.n_relevant(), empty)


def p_plus(
    lists: RankedLists,
    *,
    cutoff: int | None = None,
    beta: float = 1.0,
    gain: str | GainScheme = "grade",
    empty: EmptyPolicy = "nan",
) -> FloatArray:
    r"""P+-measure: mean blended ratio over the relevant documents down to :math:`r_p`.

    Notes
    -----
    :math:`P^+ = \frac{1}{count(r_p)}\sum_{r \le r_p} isrel(r)\, BR(r)`, 0 with no
    relevant document [sakai2007, section 3].

    Examples
    --------
    Sakai (2007): the perfect inverse (B, A, S) gets P+ = 0.74.

    >>> rb = [[3, 2, 1]]
    >>> p_plus(RankedLists.from_arrays(["inv"], [0, 3], [1, 2, 3], recall_base=rb)).round(2)
    array([0.74])
    """
    c = _cut(lists, cutoff)
    isrel, count, br = _blended(lists, c, beta, gain)
    rp = _first_max(c, lists.n)
    upto = c.rank <= rp[c.seg]
    s = K.segment_sum(np.where(isrel & upto, br, 0.0), c.seg, lists.n)
    has = rp > 0
    cnt = np.zeros(lists.n)
    cnt[has] = count[c.offsets[:-1][has] + rp[has] - 1]
    return _empty(_safe_div(s, cnt), lists.n_relevant(), empty)


def reciprocal_rank(
    lists: RankedLists, *, cutoff: int | None = None, rel: float = 1, empty: EmptyPolicy = "zero"
) -> FloatArray:
    r"""Reciprocal rank :math:`1/r_1` of the first relevant document, 0 when none.

    ``empty="zero"`` by default (trec_eval's ``recip_rank``): RR needs no recall base.

    Examples
    --------
    >>> reciprocal_rank(RankedLists.from_arrays(["q"], [0, 3], [0, 0, 2]))
    array([0.33333333])
    """
    seg, rank, count = _relevant_rows(lists, cutoff, rel)
    first = count == 1
    out = np.zeros(lists.n)
    out[seg[first]] = 1.0 / rank[first]
    return _empty(out, lists.n_relevant(rel), empty)


def _penalties(penalties: str | Sequence[float]) -> FloatArray:
    if isinstance(penalties, str):
        try:
            vals = [float(x) for x in penalties.split("-")]
        except ValueError:
            raise MeasureSpecError(
                f"penalties {penalties!r}: give one number per grade 1, 2, … as '4-3-2'"
            ) from None
    else:
        vals = [float(x) for x in penalties]
    if not vals or any(v <= 1 for v in vals):
        raise MeasureSpecError(f"penalties must be > 1 (one per grade 1, 2, …), got {penalties!r}")
    return np.asarray(vals)


def _beta_of(grades: FloatArray, pen: FloatArray) -> FloatArray:
    gi = grades.astype(np.int64)
    if np.any((gi < 1) | (gi > pen.size)):
        bad = int(gi[(gi < 1) | (gi > pen.size)][0])
        raise MeasureSpecError(
            f"no WRR penalty for grade {bad}: penalties give grades 1..{pen.size}"
        )
    return pen[gi - 1]


def wrr(
    lists: RankedLists,
    *,
    cutoff: int | None = None,
    penalties: str | Sequence[float] = "4-3-2",
    empty: EmptyPolicy = "zero",
) -> FloatArray:
    r"""Weighted reciprocal rank (Eguchi et al.; Sakai 2007).

    Notes
    -----
    :math:`WRR = 1/(r_1 - 1/\beta(L_1))`, :math:`L_1` the grade of the first relevant
    document; penalties β per grade 1, 2, 3 default 4, 3, 2 (B, A, S) [sakai2007].

    Examples
    --------
    >>> wrr(RankedLists.from_arrays(["q"], [0, 3], [0, 0, 3]))
    array([0.4])
    """
    pen = _penalties(penalties)
    c = _cut(lists, cutoff)
    first = K.first_true_rank(c.grades >= 1, c.offsets, c.seg)
    has = first > 0
    out = np.zeros(lists.n)
    l1 = c.grades[c.offsets[:-1][has] + first[has] - 1]
    out[has] = 1.0 / (first[has] - 1.0 / _beta_of(l1, pen))
    return _empty(out, lists.n_relevant(), empty)


def nwrr(
    lists: RankedLists,
    *,
    cutoff: int | None = None,
    penalties: str | Sequence[float] = "4-3-2",
    empty: EmptyPolicy = "nan",
) -> FloatArray:
    r"""Normalised weighted reciprocal rank.

    Notes
    -----
    :math:`NWRR = (1 - 1/\beta(M)) / (r_1 - 1/\beta(L_1))`, :math:`M` the topic's
    highest grade [sakai2007].

    Examples
    --------
    Sakai (2007): an S document at rank 3 gives NWRR = 1/5.

    >>> nwrr(RankedLists.from_arrays(["q"], [0, 3], [0, 0, 3], recall_base=[[3]]))
    array([0.2])
    """
    pen = _penalties(penalties)
    w = wrr(lists, cutoff=cutoff, penalties=pen.tolist(), empty="zero")
    r = lists.n_relevant()
    has = r > 0
    m = np.zeros(lists.n)
    m[has] = lists.ideal_grades[lists.ideal_offsets[:-1][has]]
    out = np.zeros(lists.n)
    out[has] = w[has] * (1.0 - 1.0 / _beta_of(m[has], pen))
    return _empty(out, r, empty)


def precision(
    lists: RankedLists, *, cutoff: int | None = None, rel: float = 1, empty: EmptyPolicy = "zero"
) -> FloatArray:
    r"""Precision at ``k``: relevant documents in the top ``k``, divided by ``k``.

    Without a cut-off, divided by the list length (0 for an empty list).  Same as
    trec_eval ``P_k`` (a list shorter than ``k`` still divides by ``k``).

    Examples
    --------
    >>> precision(RankedLists.from_arrays(["q"], [0, 3], [1, 0, 2]), cutoff=5)
    array([0.4])
    """
    c = _cut(lists, cutoff)
    s = K.segment_sum(c.grades >= rel, c.seg, lists.n)
    denom = np.diff(c.offsets).astype(np.float64) if cutoff is None else np.full(lists.n, cutoff)
    return _empty(_safe_div(s, denom), lists.n_relevant(rel), empty)


def recall(
    lists: RankedLists, *, cutoff: int | None = None, rel: float = 1, empty: EmptyPolicy = "nan"
) -> FloatArray:
    r"""Recall at ``k``: relevant documents in the top ``k`` over ``R`` (trec_eval ``recall_k``).

    Examples
    --------
    >>> recall(RankedLists.from_arrays(["q"], [0, 3], [1, 0, 2], recall_base=[[2, 1, 1, 1]]),
    ...        cutoff=2)
    array([0.25])
    """
    c = _cut(lists, cutoff)
    s = K.segment_sum(c.grades >= rel, c.seg, lists.n)
    r = lists.n_relevant(rel)
    return _empty(_safe_div(s, r.astype(np.float64)), r, empty)


def bpref(
    lists: RankedLists, *, cutoff: int | None = None, rel: float = 1, empty: EmptyPolicy = "nan"
) -> FloatArray:
    r"""Binary preference (Buckley & Voorhees 2004; Bompada et al. 2007, sec. 2), as trec_eval.

    Notes
    -----
    :math:`bpref = \frac{1}{R}\sum_{x} \left(1 - \frac{\min(|N(x)|, R)}{\min(R, N)}\right)`
    over the judged relevant documents ``x`` retrieved, :math:`|N(x)|` the judged
    non-relevant documents ranked above ``x``; a term is 1 when :math:`|N(x)| = 0`.
    Unjudged documents are ignored.

    Examples
    --------
    >>> lists = RankedLists.from_arrays(["q"], [0, 4], [0, 1, float("nan"), 1],
    ...                                 recall_base=[[1, 1]], n_judged=[4])
    >>> bpref(lists)
    array([0.5])
    """
    c = _cut(lists, cutoff)
    judged = ~np.isnan(c.grades)
    isrel = c.grades >= rel
    nonrel = judged & ~isrel
    above = K.segment_cumsum(nonrel, c.offsets, c.seg)  # inclusive; equal above at rel rows
    r = lists.n_relevant(rel)
    n_nonrel = (lists.n_judged - r).astype(np.float64)
    rr = r[c.seg].astype(np.float64)
    denom = np.minimum(rr, n_nonrel[c.seg])
    term = np.where(above > 0, 1.0 - np.minimum(above, rr) / np.where(denom > 0, denom, 1.0), 1.0)
    s = K.segment_sum(np.where(isrel, term, 0.0), c.seg, lists.n)
    return _empty(_safe_div(s, r.astype(np.float64)), r, empty)


def inf_ap(
    lists: RankedLists, *, cutoff: int | None = None, rel: float = 1, empty: EmptyPolicy = "nan"
) -> FloatArray:
    r"""Inferred average precision (Yilmaz & Aslam 2006; Bompada et al. 2007), as trec_eval.

    Notes
    -----
    At a judged relevant document at rank :math:`k > 1`:
    :math:`E[prec@k] = \frac{1}{k} + \frac{k-1}{k}\cdot\frac{|J|}{k-1}\cdot
    \frac{|R_{above}| + \epsilon}{|R_{above}| + |N_{above}| + 2\epsilon}` with
    :math:`J, R_{above}, N_{above}` the judged, judged relevant and judged non-relevant
    documents above ``k``, :math:`\epsilon = 10^{-5}`; 1 at rank 1.
    :math:`infAP = \frac{1}{R}\sum E[prec@k]`.  Unjudged documents take up ranks but
    are not in :math:`J` (trec_eval's documents outside the pool; every judged document
    here is in the pool, a negative grade counts as judged non-relevant).

    Examples
    --------
    >>> lists = RankedLists.from_arrays(["q"], [0, 3], [1, float("nan"), 1],
    ...                                 recall_base=[[1, 1]])
    >>> inf_ap(lists).round(6)
    array([0.833331])
    """
    c = _cut(lists, cutoff)
    judged = ~np.isnan(c.grades)
    isrel = c.grades >= rel
    nonrel = judged & ~isrel
    rel_above = K.segment_cumsum(isrel, c.offsets, c.seg) - isrel
    non_above = K.segment_cumsum(nonrel, c.offsets, c.seg) - nonrel
    k = c.rank.astype(np.float64)
    km1 = np.where(k > 1, k - 1.0, 1.0)
    eps = INFAP_EPSILON
    est = 1.0 / k + ((k - 1.0) / k) * ((rel_above + non_above) / km1) * (
        (rel_above + eps) / (rel_above + non_above + 2 * eps)
    )
    est = np.where(k == 1, 1.0, est)
    s = K.segment_sum(np.where(isrel, est, 0.0), c.seg, lists.n)
    r = lists.n_relevant(rel)
    return _empty(_safe_div(s, r.astype(np.float64)), r, empty)

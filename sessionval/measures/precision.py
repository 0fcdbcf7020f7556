"""Binary-relevance measures as trec_eval computes them, and the judgment rate Judged@k.

AP, RR, P@k, R@k, bpref, infAP; Judged@k (the share of judged documents).

References: Sakai (2007) [sakai2007] for AP and RR; Buckley & Voorhees (2004) and
Bompada et al. (2007) [bompada2007] for bpref; Yilmaz & Aslam (2006) for infAP;
MacAvaney et al. (2022), ir_measures [macavaney2022], for Judged@k.
"""

from __future__ import annotations

from typing import Any, Final

import numpy as np

from .._types import BoolArray, FloatArray, IntArray
from ..errors import MeasureSpecError
from ..kernels.segments import segment_cumsum, segment_sum
from .grammar import MeasureDef, Spelling
from .lists import CutLists, EmptyPolicy, RankedLists, apply_empty, cut_lists, safe_div
from .params import REL, SAKAI2007, plain

__all__ = [
    "DEFINITIONS",
    "INFAP_EPSILON",
    "average_precision",
    "bpref",
    "geometric_terms",
    "inf_ap",
    "judged",
    "precision",
    "recall",
    "reciprocal_rank",
    "relevant_counts",
    "relevant_rows",
]


MIN_GEO_MEAN: Final[float] = 1e-5
"""trec_eval's ``MIN_GEO_MEAN``: the floor of a value before its log in ``gm_map``."""

INFAP_EPSILON: Final[float] = 1e-5
"""trec_eval's ``INFAP_EPSILON``: smoothing of the precision estimate above a rank."""


def relevant_counts(c: CutLists, rel: float) -> tuple[BoolArray, FloatArray]:
    """Per cut row: relevant (grade >= ``rel``) and the running count of relevant rows."""
    isrel = c.grades >= rel  # NaN -> False
    count = segment_cumsum(isrel, c.offsets, c.seg)
    return isrel, count


def relevant_rows(
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
    seg, rank, count = relevant_rows(lists, cutoff, rel)
    s = segment_sum(count / rank, seg, lists.n)
    r = lists.n_relevant(rel)
    return apply_empty(safe_div(s, r.astype(np.float64)), r, empty)


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
    seg, rank, count = relevant_rows(lists, cutoff, rel)
    first = count == 1
    out = np.zeros(lists.n)
    out[seg[first]] = 1.0 / rank[first]
    return apply_empty(out, lists.n_relevant(rel), empty)


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
    c = cut_lists(lists, cutoff)
    s = segment_sum(c.grades >= rel, c.seg, lists.n)
    denom = np.diff(c.offsets).astype(np.float64) if cutoff is None else np.full(lists.n, cutoff)
    return apply_empty(safe_div(s, denom), lists.n_relevant(rel), empty)


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
    c = cut_lists(lists, cutoff)
    s = segment_sum(c.grades >= rel, c.seg, lists.n)
    r = lists.n_relevant(rel)
    return apply_empty(safe_div(s, r.astype(np.float64)), r, empty)


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
    c = cut_lists(lists, cutoff)
    judged = ~np.isnan(c.grades)
    isrel = c.grades >= rel
    nonrel = judged & ~isrel
    above = segment_cumsum(nonrel, c.offsets, c.seg)  # inclusive; equal above at rel rows
    r = lists.n_relevant(rel)
    n_nonrel = (lists.n_judged - r).astype(np.float64)
    rr = r[c.seg].astype(np.float64)
    denom = np.minimum(rr, n_nonrel[c.seg])
    term = np.where(above > 0, 1.0 - np.minimum(above, rr) / np.where(denom > 0, denom, 1.0), 1.0)
    s = segment_sum(np.where(isrel, term, 0.0), c.seg, lists.n)
    return apply_empty(safe_div(s, r.astype(np.float64)), r, empty)


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
    c = cut_lists(lists, cutoff)
    judged = ~np.isnan(c.grades)
    isrel = c.grades >= rel
    nonrel = judged & ~isrel
    rel_above = segment_cumsum(isrel, c.offsets, c.seg) - isrel
    non_above = segment_cumsum(nonrel, c.offsets, c.seg) - nonrel
    k = c.rank.astype(np.float64)
    km1 = np.where(k > 1, k - 1.0, 1.0)
    eps = INFAP_EPSILON
    est = 1.0 / k + ((k - 1.0) / k) * ((rel_above + non_above) / km1) * (
        (rel_above + eps) / (rel_above + non_above + 2 * eps)
    )
    est = np.where(k == 1, 1.0, est)
    s = segment_sum(np.where(isrel, est, 0.0), c.seg, lists.n)
    r = lists.n_relevant(rel)
    return apply_empty(safe_div(s, r.astype(np.float64)), r, empty)


def judged(
    lists: RankedLists, *, cutoff: int | None = None, empty: EmptyPolicy = "zero"
) -> FloatArray:
    r"""Judgment rate: the share of the top ``k`` documents that have a judgment.

    Notes
    -----
    :math:`Judged@k = |\{r \le k : d_r \text{ judged}\}| / \min(k, n)` for a list
    of ``n`` documents (the whole list without a cut-off), as ir_measures' ``Judged@k``
    [macavaney2022]; a judged document of any grade counts, negative grades too.  Not
    a measure of effectiveness: it says how far the other values rest on judgments
    (an unjudged document counts as non-relevant everywhere else).  An empty list
    scores 0.

    Worked example: grades 2, unjudged, 0, unjudged: :math:`Judged@3 = 2/3`,
    :math:`Judged@10 = 2/4`.

    Examples
    --------
    >>> lists = RankedLists.from_arrays(["q"], [0, 4], [2, float("nan"), 0, float("nan")])
    >>> judged(lists, cutoff=3).round(6), judged(lists, cutoff=10)
    (array([0.666667]), array([0.5]))
    """
    c = cut_lists(lists, cutoff)
    n_judged = segment_sum(~np.isnan(c.grades), c.seg, lists.n)
    return safe_div(n_judged, np.diff(c.offsets).astype(np.float64))


def geometric_terms(values: FloatArray) -> FloatArray:
    r"""Per-query terms of a geometric mean: :math:`\ln \max(v, 10^{-5})` (NaN stays NaN).

    trec_eval's ``gm_map`` and ``gm_bpref`` print these per query and
    :math:`\exp` of their mean over queries (Robertson 2006, "On GMAP", CIKM
    [robertson2006]; trec_eval ``MIN_GEO_MEAN``).

    Examples
    --------
    >>> geometric_terms(np.array([1.0, 0.0])).round(4)
    array([  0.    , -11.5129])
    """
    with np.errstate(invalid="ignore"):
        return np.log(np.maximum(values, MIN_GEO_MEAN))


def _geometric(fn: Any) -> Any:
    def compute(
        lists: RankedLists, *, cutoff: int | None, empty: EmptyPolicy, **kw: Any
    ) -> FloatArray:
        return geometric_terms(fn(lists, cutoff=cutoff, empty=empty, **kw))

    return compute


# ---------------------------------------------------------------------------
# declarations
# ---------------------------------------------------------------------------

_CUTS: Final = (5, 10, 15, 20, 30, 100, 200, 500, 1000)  # trec_eval's default cut-offs

DEFINITIONS: Final[tuple[MeasureDef, ...]] = (
    MeasureDef(
        "AP",
        "Average precision",
        "mean precision at the relevant documents; AP@k divides by R (trec_eval map_cut)",
        "AP@k = (1/R) sum_{r<=k} isrel(r) count(r)/r",
        SAKAI2007 + "; trec_eval map",
        (REL,),
        plain(average_precision),
        spellings=(
            Spelling("trec_eval", "map"),
            Spelling("trec_eval", "map_cut", "required", defaults=_CUTS),
            Spelling("ir_measures", "AP", "optional"),
            Spelling("ranx", "map", "optional"),
        ),
    ),
    MeasureDef(
        "RR",
        "Reciprocal rank",
        "1 / rank of the first relevant document, 0 when none (trec_eval recip_rank)",
        "RR = 1 / r_1",
        SAKAI2007 + "; trec_eval recip_rank",
        (REL,),
        plain(reciprocal_rank, zero_empty=True),
        normalised=False,
        spellings=(
            Spelling("trec_eval", "recip_rank"),
            Spelling("ir_measures", "RR", "optional"),
            Spelling("ranx", "mrr", "optional"),
        ),
    ),
    MeasureDef(
        "P",
        "Precision",
        "relevant documents in the top k divided by k (trec_eval P_k)",
        "P@k = count(k) / k",
        "trec_eval P",
        (REL,),
        plain(precision, zero_empty=True),
        cutoff="required",
        normalised=False,
        ideal_is_one=False,
        spellings=(
            Spelling("trec_eval", "P", "required", defaults=_CUTS),
            Spelling("ir_measures", "P", "required"),
            Spelling("ranx", "precision", "required"),
        ),
    ),
    MeasureDef(
        "R",
        "Recall",
        "relevant documents in the top k divided by R (trec_eval recall_k)",
        "R@k = count(k) / R",
        "trec_eval recall",
        (REL,),
        plain(recall),
        spellings=(
            Spelling("trec_eval", "recall", "required", defaults=_CUTS),
            Spelling("trec_eval", "set_recall"),
            Spelling("ir_measures", "SetR"),
            Spelling("ir_measures", "R", "optional"),
            Spelling("ranx", "recall", "required"),
        ),
    ),
    MeasureDef(
        "Bpref",
        "bpref",
        "binary preference: judged non-relevant documents above each relevant one",
        "bpref = (1/R) sum_{rel x} (1 - min(|N above x|, R) / min(R, N))",
        "bompada2007 (Bompada et al. 2007, SIGIR, sec. 2); Buckley & Voorhees 2004; trec_eval",
        (REL,),
        plain(bpref),
        aliases=("bpref",),
        spellings=(
            Spelling("trec_eval", "bpref"),
            Spelling("ir_measures", "Bpref"),
        ),
    ),
    MeasureDef(
        "infAP",
        "Inferred average precision",
        "AP estimated from incomplete judgments (agrees with trec_eval infAP)",
        "infAP = (1/R) sum_{rel k} [1/k + ((k-1)/k)(|J|/(k-1))((R_a+e)/(R_a+N_a+2e))]",
        "bompada2007 (sec. 2); Yilmaz & Aslam 2006; trec_eval infAP",
        (REL,),
        plain(inf_ap),
        spellings=(Spelling("trec_eval", "infAP"), Spelling("ir_measures", "infAP")),
    ),
    MeasureDef(
        "GMAP",
        "Geometric mean average precision",
        "per query ln(max(AP, 1e-5)); over queries exp of their mean (trec_eval gm_map)",
        "GMAP = exp(mean_q ln(max(AP_q, 1e-5)))",
        "robertson2006 (Robertson 2006, CIKM); trec_eval gm_map",
        (REL,),
        _geometric(average_precision),
        cutoff="none",
        upper=0.0,
        lower=None,
        ideal_is_one=False,
        aggregate="exp_mean",
        spellings=(Spelling("trec_eval", "gm_map"),),
    ),
    MeasureDef(
        "GMBpref",
        "Geometric mean bpref",
        "per query ln(max(bpref, 1e-5)); over queries exp of their mean (trec_eval gm_bpref)",
        "GMBpref = exp(mean_q ln(max(bpref_q, 1e-5)))",
        "robertson2006; trec_eval gm_bpref",
        (REL,),
        _geometric(bpref),
        cutoff="none",
        upper=0.0,
        lower=None,
        ideal_is_one=False,
        aggregate="exp_mean",
        spellings=(Spelling("trec_eval", "gm_bpref"),),
    ),
    MeasureDef(
        "Judged",
        "Judgment rate",
        "share of the top k documents with a judgment (not effectiveness: coverage)",
        "Judged@k = |judged in top k| / min(k, n)",
        "macavaney2022 (ir_measures Judged@k)",
        (),
        plain(judged, zero_empty=True),
        normalised=False,
        spellings=(Spelling("ir_measures", "Judged", "optional"),),
    ),
)
"""The binary-relevance measures in the registry."""

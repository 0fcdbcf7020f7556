r"""trec_eval's experimental gain measures: G, binG, ndcg_rel and Rndcg (Buckley, 2008).

Each is nDCG's idea (Järvelin & Kekäläinen 2002) bent another way: G and binG
discount a document by how far the run is behind the ideal when it is retrieved
(the gain still owed, or the non-relevant documents above), ndcg_rel averages nDCG
at the relevant documents, Rndcg at the points where the ideal gain level changes.
The gain of a document is its grade (unjudged and negative grades: 0), the discount
:math:`\log_2`; the ideal vector is the recall base's grades in descending order.
trec_eval's ``rel_level=gain`` parameters are not offered.

References: trec_eval 9.0 (``m_G.c``, ``m_binG.c``, ``m_ndcg_rel.c``, ``m_Rndcg.c``;
experimental measures by C. Buckley, 4/2008) [trec_eval]; Järvelin & Kekäläinen
(2002), TOIS 20(4) [jk2002].
"""

from __future__ import annotations

from typing import Final

import numpy as np

from .._types import FloatArray, IntArray
from ..kernels.discounts import rank_discount
from ..kernels.segments import segment_cumsum, segment_ids, segment_sum, take_prefix
from .grammar import MeasureDef, Spelling
from .lists import EmptyPolicy, RankedLists, apply_empty, safe_div
from .params import REL, plain
from .precision import relevant_rows

__all__ = ["DEFINITIONS", "bin_g", "g_measure", "ndcg_rel", "r_ndcg"]


def _row_gains(lists: RankedLists) -> tuple[IntArray, FloatArray, FloatArray]:
    """List number, 1-based rank and gain (grade; unjudged and negative: 0) of every row."""
    seg = lists.seg
    rank = (np.arange(lists.grades.size) - lists.offsets[seg] + 1).astype(np.float64)
    g = np.where(np.isnan(lists.grades), 0.0, np.maximum(lists.grades, 0.0))
    return seg, rank, g


def _ideal_at(lists: RankedLists, seg: IntArray, rank: FloatArray) -> FloatArray:
    """The ideal gain at each row's rank (0 past the recall base)."""
    ioff = lists.ideal_offsets
    pos = ioff[seg] + rank.astype(np.int64) - 1
    inside = pos < ioff[seg + 1]
    out = np.zeros(rank.size)
    out[inside] = lists.ideal_grades[pos[inside]]
    return out


def _dcg_prefix(lists: RankedLists) -> tuple[FloatArray, FloatArray]:
    """Running DCG of every list and of every ideal vector (gain / log2(rank + 1))."""
    _seg, rank, g = _row_gains(lists)
    dcg = segment_cumsum(g / rank_discount(rank, b=2.0, kind="log2p1"), lists.offsets)
    ioff = lists.ideal_offsets
    irank = np.arange(lists.ideal_grades.size) - ioff[segment_ids(ioff)] + 1.0
    idcg = segment_cumsum(lists.ideal_grades / rank_discount(irank, b=2.0, kind="log2p1"), ioff)
    return dcg, idcg


def g_measure(
    lists: RankedLists, *, cutoff: int | None = None, empty: EmptyPolicy = "nan"
) -> FloatArray:
    r"""G: gain discounted by the gain the run still owes the ideal (trec_eval ``G``).

    Notes
    -----
    :math:`G = \frac{1}{\sum_j g^I_j}\sum_i g_i / \log_2(2 + C_i - S_i)` with
    :math:`S_i = \sum_{j \le i} g_j` the run's gain so far and
    :math:`C_i = \sum_{j \le i} \max(g^I_j, 1)` the ideal's (at least 1 per rank)
    [trec_eval ``m_G.c``].

    Worked example: grades 0, 2 and an ideal 2, 1: rank 2 adds
    :math:`2 / \log_2(2 + 3 - 2) = 1.2619`; :math:`G = 1.2619 / 3 = 0.4206`.

    Examples
    --------
    >>> g_measure(RankedLists.from_arrays(["q"], [0, 2], [0, 2], recall_base=[[2, 1]])).round(4)
    array([0.4206])
    """
    seg, rank, g = _row_gains(lists)
    cost = segment_cumsum(np.maximum(_ideal_at(lists, seg, rank), 1.0), lists.offsets)
    got = segment_cumsum(g, lists.offsets)
    terms = np.where(g != 0, g / np.log2(2.0 + cost - got), 0.0)
    total = segment_sum(lists.ideal_grades, segment_ids(lists.ideal_offsets), lists.n)
    v = safe_div(segment_sum(terms, seg, lists.n), total)
    return apply_empty(v, lists.n_relevant(), empty)


def bin_g(
    lists: RankedLists, *, cutoff: int | None = None, rel: float = 1, empty: EmptyPolicy = "nan"
) -> FloatArray:
    r"""Binary G: :math:`\frac{1}{R}\sum_{rel\ r} 1/\log_2(2 + r - count(r))` (trec_eval ``binG``).

    Each relevant document is discounted by the non-relevant (or unjudged) documents
    above it, :math:`r - count(r)` [trec_eval ``m_binG.c``].

    Examples
    --------
    >>> bin_g(RankedLists.from_arrays(["q"], [0, 3], [0, 1, 1], recall_base=[[1, 1]])).round(4)
    array([0.6309])
    """
    seg, rank, count = relevant_rows(lists, None, rel)
    s = segment_sum(1.0 / np.log2(2.0 + rank - count), seg, lists.n)
    r = lists.n_relevant(rel)
    return apply_empty(safe_div(s, r.astype(np.float64)), r, empty)


def ndcg_rel(
    lists: RankedLists, *, cutoff: int | None = None, empty: EmptyPolicy = "nan"
) -> FloatArray:
    r"""NDCG averaged over the relevant documents (trec_eval ``ndcg_rel``).

    Notes
    -----
    :math:`\frac{1}{R}\left(\sum_{i:\,g_i > 0} \frac{DCG(i)}{IDCG(\min(i, R))} +
    (R - m)\frac{DCG(n)}{IDCG(R)}\right)` over the ``m`` retrieved documents of
    positive gain, ``n`` the list length: a relevant document not retrieved counts
    the nDCG of the whole list [trec_eval ``m_ndcg_rel.c``].

    Examples
    --------
    >>> ndcg_rel(RankedLists.from_arrays(["q"], [0, 2], [0, 1], recall_base=[[1, 1]])).round(4)
    array([0.3869])
    """
    seg, rank, g = _row_gains(lists)
    dcg, idcg = _dcg_prefix(lists)
    r = lists.n_relevant()
    ideal = take_prefix(idcg, lists.ideal_offsets, seg, rank.astype(np.int64))
    terms = np.where(g > 0, safe_div(dcg, ideal), 0.0)
    n = np.diff(lists.offsets)
    every = np.arange(lists.n)
    full = take_prefix(dcg, lists.offsets, every, n) / np.where(
        r > 0, take_prefix(idcg, lists.ideal_offsets, every, r), 1.0
    )
    m = segment_sum(g > 0, seg, lists.n)
    s = segment_sum(terms, seg, lists.n) + (r - m) * full
    return apply_empty(safe_div(s, r.astype(np.float64)), r, empty)


def r_ndcg(
    lists: RankedLists, *, cutoff: int | None = None, empty: EmptyPolicy = "nan"
) -> FloatArray:
    r"""NDCG averaged at the R levels of the ideal vector (trec_eval ``Rndcg``).

    Notes
    -----
    The R levels are the ranks :math:`k_1 < \dots < k_L = R` where the ideal gain
    drops (after the last document of each grade); :math:`Rndcg` is the mean of
    :math:`DCG(\min(k, n)) / IDCG(k)` over them, and of :math:`DCG(n) / IDCG(R)` too
    when the list is longer than :math:`R + 1` (trec_eval's "final implied R-level
    change at num_retrieved") [trec_eval ``m_Rndcg.c``].

    Worked example: ideal 2, 1 (levels at 1 and 2) and grades 1, 2:
    :math:`(1/2 + (1 + 2/\log_2 3)/(2 + 1/\log_2 3))/2 = (0.5 + 0.8597)/2 = 0.6799`.

    Examples
    --------
    >>> r_ndcg(RankedLists.from_arrays(["q"], [0, 2], [1, 2], recall_base=[[2, 1]])).round(4)
    array([0.6799])
    """
    dcg, idcg = _dcg_prefix(lists)
    ioff, ig = lists.ideal_offsets, lists.ideal_grades
    iseg = segment_ids(ioff)
    # an R level: the last position of each grade in the ideal vector
    last = np.ones(ig.size, dtype=bool)
    last[:-1] = (ig[1:] != ig[:-1]) | (iseg[1:] != iseg[:-1])
    lseg = iseg[last]
    k = (np.flatnonzero(last) - ioff[lseg] + 1).astype(np.int64)
    n = np.diff(lists.offsets)
    ratio = (
        take_prefix(dcg, lists.offsets, lseg, np.minimum(k, n[lseg])) / idcg[np.flatnonzero(last)]
    )
    r = lists.n_relevant()
    every = np.arange(lists.n)
    longer = (n > r + 1) & (r > 0)
    final = np.zeros(lists.n)
    final[longer] = take_prefix(dcg, lists.offsets, every[longer], n[longer]) / take_prefix(
        idcg, ioff, every[longer], r[longer]
    )
    s = segment_sum(ratio, lseg, lists.n) + final
    points = np.bincount(lseg, minlength=lists.n) + longer
    return apply_empty(safe_div(s, points.astype(np.float64)), r, empty)


TREC: Final = "trec_eval 9.0 (Buckley 2008, experimental; m_{name}.c)"

DEFINITIONS: Final[tuple[MeasureDef, ...]] = (
    MeasureDef(
        "G", "Normalised gain G", "gain discounted by the ideal gain still owed when retrieved",
        "G = (1/sum g_I) sum_i g_i / log2(2 + C_i - S_i)", TREC.format(name="G"), (),
        plain(g_measure), cutoff="none", ideal_is_one=False,
        spellings=(Spelling("trec_eval", "G"),),
    ),
    MeasureDef(
        "binG", "Binary G", "relevant documents discounted by the non-relevant ones above",
        "binG = (1/R) sum_{rel r} 1 / log2(2 + r - count(r))", TREC.format(name="binG"), (REL,),
        plain(bin_g), cutoff="none",
        spellings=(Spelling("trec_eval", "binG"),),
    ),
    MeasureDef(
        "nDCG_rel", "nDCG at relevant documents", "nDCG averaged over the relevant documents",
        "nDCG_rel = (1/R)(sum_{g_i>0} DCG(i)/IDCG(min(i,R)) + (R - m) DCG(n)/IDCG(R))",
        TREC.format(name="ndcg_rel") + "; jk2002", (), plain(ndcg_rel), cutoff="none",
        spellings=(Spelling("trec_eval", "ndcg_rel"),),
    ),
    MeasureDef(
        "RnDCG", "nDCG at R levels", "nDCG averaged where the ideal gain level drops",
        "RnDCG = mean over R levels k of DCG(min(k, n)) / IDCG(k)",
        TREC.format(name="Rndcg") + "; jk2002", (), plain(r_ndcg), cutoff="none",
        spellings=(Spelling("trec_eval", "Rndcg"),),
    ),
)  # fmt: skip
r"""trec_eval's experimental gain measures in the registry."""

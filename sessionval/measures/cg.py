"""The cumulated-gain family: CG, DCG, nCG, nDCG as scalars and vectors, avg-vect, norm-vect.

Järvelin & Kekäläinen (2002), TOIS 20(4), section 2 [jk2002]; research note
RN-2002-2 [jk2002rn]; Järvelin et al. (2008) [jk2008].  The rank discounts come
from the one table in :mod:`sessionval.kernels.discounts`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, Literal

import numpy as np
import numpy.typing as npt
import pandas as pd

from .._types import FloatArray, IntArray
from ..errors import MeasureSpecError
from ..judgments.gains import GainScheme, gain_scheme
from ..kernels.cumulate import cumulate_lists
from ..kernels.discounts import (
    RANK_DISCOUNT_TABLE,
    RankDiscount,
    check_rank_discount,
    rank_discount,
)
from ..kernels.segments import cut_segments, segment_ids, segment_ranks, segment_sum
from .grammar import Compute, MeasureDef, Spelling
from .lists import (
    EmptyPolicy,
    RankedLists,
    apply_empty,
    cut_lists,
    ideal_gain_segments,
    list_gains,
    safe_div,
)
from .params import (
    DISCOUNT,
    GAIN,
    JK2002,
    LOG_BASE_DEFAULT,
    QUERY_DISCOUNT_DEFAULT,
    QUERY_GAIN_DEFAULT,
    B,
    base_rule,
    default_discount_rule,
    rules,
)

__all__ = [
    "DEFINITIONS",
    "avg_pos",
    "avg_vect",
    "cumulated_gain",
    "discounted_cumulated_gain",
    "gain_scalar",
    "gain_vectors",
    "norm_vect",
]


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
    g = np.asarray(gains, dtype=np.float64)
    out: FloatArray = cumulate_lists(np.array([0, g.size]), g, ranks=g.size)[0]
    return out


def discounted_cumulated_gain(
    gains: Sequence[float] | npt.ArrayLike,
    *,
    discount: RankDiscount = QUERY_DISCOUNT_DEFAULT,
    b: float = LOG_BASE_DEFAULT,
) -> FloatArray:
    r"""Discounted cumulated gain vector of one ranked list.

    Parameters
    ----------
    gains
        Gain at ranks 1, 2, ….
    discount
        A kind of the discount table
        (:data:`~sessionval.kernels.discounts.RANK_DISCOUNT_TABLE`): ``jk2008``
        (:math:`1 + \log_b j`), ``jk2002`` (1 for :math:`j < b`, else :math:`\log_b j`),
        ``jk2002rn`` (1 at rank 1, :math:`\log_b j` from rank 2), ``log2p1``
        (:math:`\log_2(j + 1)`, the single-query default, as trec_eval),
        ``shifted-log`` (:math:`\log_b(j + b - 1)`) or ``none``.
    b
        Log base (> 1) of the discounts with a base (ignored by ``log2p1`` and ``none``).

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
    check_rank_discount(discount, b)
    g = np.asarray(gains, dtype=np.float64)
    d = rank_discount(np.arange(1, g.size + 1, dtype=np.int64), b=b, kind=discount)
    out: FloatArray = cumulate_lists(np.array([0, g.size]), g, ranks=g.size, discount=d)[0]
    return out


def gain_scalar(
    lists: RankedLists,
    *,
    kind: Literal["CG", "DCG", "nCG", "nDCG"] = "nDCG",
    cutoff: int | None = None,
    discount: RankDiscount = QUERY_DISCOUNT_DEFAULT,
    b: float = LOG_BASE_DEFAULT,
    gain: str | GainScheme = QUERY_GAIN_DEFAULT,
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
        Discount and log base (see :func:`discounted_cumulated_gain`; defaults
        ``log2p1`` and 2, the single-query context's); ``CG``/``nCG`` ignore them.
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
    check_rank_discount(discount, b)
    scheme = gain_scheme(gain)
    c = cut_lists(lists, cutoff)
    g = list_gains(c.grades, scheme, lists.negative)
    disc = kind in ("DCG", "nDCG")
    dname: RankDiscount = discount if disc else "none"
    val = segment_sum(g / rank_discount(c.rank, b=b, kind=dname), c.seg, lists.n)
    if kind in ("CG", "DCG"):
        return val
    if kind not in ("nCG", "nDCG"):
        raise MeasureSpecError(f"kind {kind!r} unknown; use CG, DCG, nCG, nDCG")
    ioff, ig = ideal_gain_segments(lists, scheme)
    irows, ioff2 = cut_segments(ioff, cutoff)
    iseg = segment_ids(ioff2)
    irank = segment_ranks(ioff2, iseg)
    ideal = segment_sum(ig[irows] / rank_discount(irank, b=b, kind=dname), iseg, lists.n)
    r = lists.n_relevant()
    return apply_empty(safe_div(val, ideal), r, empty)


def gain_vectors(
    lists: RankedLists,
    *,
    kind: Literal["CG", "DCG", "nCG", "nDCG"] = "nDCG",
    depth: int = 10,
    discount: RankDiscount = QUERY_DISCOUNT_DEFAULT,
    b: float = LOG_BASE_DEFAULT,
    gain: str | GainScheme = QUERY_GAIN_DEFAULT,
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
        Length of the vectors: ranks 1..depth (shorter lists are extended with gain
        0).  Not a cut-off: the scalar at cut-off ``k`` is the vector's value at rank
        ``k`` (:func:`gain_scalar`).
    discount, b, gain, empty
        As in :func:`gain_scalar` (the same single-query defaults, so vectors and
        scalars agree).
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
    The vectors come from the engine that draws the run's CG figures
    (:func:`~sessionval.kernels.cumulate.cumulate_by_rank`, one cell per list), so
    :func:`avg_vect` of them is the run's ``cg_curves`` of the same lists.

    Examples
    --------
    >>> lists = RankedLists.from_arrays(["q"], [0, 10], [3, 2, 3, 0, 0, 1, 2, 2, 3, 0],
    ...                                 recall_base=[[3, 3, 3, 2, 2, 2, 1, 1, 1, 1]])
    >>> gain_vectors(lists, kind="nCG", depth=10)["value"].round(2).tolist()
    [1.0, 0.83, 0.89, 0.73, 0.62, 0.6, 0.69, 0.76, 0.89, 0.84]
    >>> ideal = gain_vectors(lists, kind="DCG", depth=6, discount="jk2002", ideal=True)
    >>> ideal["value"].round(2).tolist()
    [3.0, 6.0, 7.89, 8.89, 9.75, 10.52]
    """
    if depth < 1:
        raise MeasureSpecError(f"depth must be >= 1, got {depth}")
    check_rank_discount(discount, b)
    scheme = gain_scheme(gain)
    n = lists.n
    dname: RankDiscount = discount if kind in ("DCG", "nDCG") else "none"
    d = rank_discount(np.arange(1, depth + 1, dtype=np.int64), b=b, kind=dname)

    def dense(off: IntArray, vals: FloatArray) -> FloatArray:
        # the one cumulated-gain-by-rank engine, the one behind the run's figures
        return cumulate_lists(off, vals, ranks=depth, discount=d)

    ioff, ig = ideal_gain_segments(lists, scheme)
    if ideal:
        if kind not in ("CG", "DCG"):
            raise MeasureSpecError("ideal=True needs kind CG or DCG")
        mat = dense(ioff, ig)
    else:
        mat = dense(lists.offsets, list_gains(lists.grades, scheme, lists.negative))
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
# declarations
# ---------------------------------------------------------------------------


def _cg(kind: Literal["CG", "DCG", "nCG", "nDCG"]) -> Compute:
    def compute(
        lists: RankedLists,
        *,
        cutoff: int | None,
        empty: EmptyPolicy,
        gain: GainScheme,
        discount: RankDiscount = "none",
        b: float = LOG_BASE_DEFAULT,
    ) -> FloatArray:
        return gain_scalar(
            lists, kind=kind, cutoff=cutoff, discount=discount, b=b, gain=gain, empty=empty
        )

    return compute


def _ir_measures_dcg(value: str) -> dict[str, str]:
    """ir_measures' ``nDCG(dcg=...)``: ``log2`` (gain = grade) or ``exp-log2`` (2^g - 1)."""
    forms = {"log2": {}, "exp-log2": {"gain": "exp"}}
    if value not in forms:
        raise MeasureSpecError(
            f"nDCG: ir_measures' dcg={value!r} is not offered; dcg=log2 or dcg=exp-log2 "
            "(= gain=exp), or sessionval's discount= and gain= parameters"
        )
    return forms[value]


def _ir_measures_judged_only(value: str) -> dict[str, str]:
    """ir_measures' ``judged_only``: sessionval removes unjudged documents per evaluation."""
    if value in ("False", "false", "0"):
        return {}
    raise MeasureSpecError(
        "nDCG: ir_measures' judged_only=True removes unjudged documents; in sessionval that is "
        "the evaluation's policy for every measure: --unjudged condense (evaluate_run(..., "
        "unjudged='condense')) with nDCG"
    )


_IR_MEASURES_NDCG: Final = {
    "dcg": _ir_measures_dcg,
    "judged_only": _ir_measures_judged_only,
    "gains": lambda v: {"gain": v},  # ir_measures' {grade: gain} is sessionval's mapping
}

# a base the discount ignores, or a discount that is the default one: no effect, refused
_B_WITH_DISCOUNT = rules(base_rule(("b", "discount", RANK_DISCOUNT_TABLE)), default_discount_rule())

DEFINITIONS: Final[tuple[MeasureDef, ...]] = (
    MeasureDef(
        "CG",
        "Cumulated gain",
        "sum of gains down to rank k (whole list without a cut-off)",
        "CG@k = sum_{j<=k} G[j]",
        JK2002,
        (GAIN,),
        _cg("CG"),
        normalised=False,
        upper=None,
        ideal_is_one=False,
    ),
    MeasureDef(
        "DCG",
        "Discounted cumulated gain",
        "sum of discounted gains down to rank k",
        "DCG@k = sum_{j<=k} G[j] / d(j)",
        JK2002 + "; jk2008 (Järvelin et al. 2008, ECIR, sec. 3); Burges et al. 2005 (log2p1)",
        (DISCOUNT, B, GAIN),
        _cg("DCG"),
        normalised=False,
        upper=None,
        ideal_is_one=False,
        validate=_B_WITH_DISCOUNT,
        spellings=(
            Spelling("ranx", "dcg", "required"),
            Spelling("ranx", "dcg_burges", "required", (("gain", "exp"),)),
        ),
    ),
    MeasureDef(
        "nCG",
        "Normalised cumulated gain",
        "CG@k divided by the ideal vector's CG@k",
        "nCG@k = CG@k / CG_I@k",
        JK2002,
        (GAIN,),
        _cg("nCG"),
    ),
    MeasureDef(
        "nDCG",
        "Normalised discounted cumulated gain",
        "DCG@k over the ideal DCG@k; defaults are trec_eval's ndcg / ndcg_cut",
        "nDCG@k = DCG@k / DCG_I@k",
        JK2002 + "; jk2008; trec_eval ndcg",
        (DISCOUNT, B, GAIN),
        _cg("nDCG"),
        validate=_B_WITH_DISCOUNT,
        spellings=(
            Spelling("trec_eval", "ndcg"),
            Spelling(
                "trec_eval",
                "ndcg_cut",
                "required",
                defaults=(5, 10, 15, 20, 30, 100, 200, 500, 1000),
            ),
            Spelling("ir_measures", "nDCG", "optional"),
            Spelling("ir_measures", "nDCG", "optional", (("dcg", "exp-log2"),)),
            Spelling("ranx", "ndcg", "optional"),
            Spelling("ranx", "ndcg_burges", "optional", (("gain", "exp"),)),
        ),
        translate=_IR_MEASURES_NDCG,
    ),
)
"""The cumulated-gain family in the registry."""

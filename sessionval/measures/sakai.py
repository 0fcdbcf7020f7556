"""Sakai's graded measures: Q, O, P, P+ (blended ratio) and WRR, NWRR.

Sakai (2007), IPSJ TOD 48(SIG9), section 3 [sakai2007]; cross-checked against
pyNTCIREVAL.  All functions take a :class:`~sessionval.measures.lists.RankedLists`
and return one float per list.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import numpy as np

from .._types import BoolArray, FloatArray, IntArray
from ..errors import MeasureSpecError
from ..judgments.gains import GainScheme, gain_scheme
from ..kernels.segments import (
    first_true_rank,
    segment_cumsum,
    segment_ids,
    segment_sum,
    take_prefix,
)
from .grammar import MeasureDef, Param
from .lists import (
    CutLists,
    EmptyPolicy,
    RankedLists,
    apply_empty,
    cut_lists,
    ideal_gain_segments,
    list_gains,
    safe_div,
)
from .params import BETA, GAIN, SAKAI2007, plain
from .precision import relevant_counts

__all__ = [
    "DEFINITIONS",
    "nwrr",
    "o_measure",
    "p_measure",
    "p_plus",
    "q_measure",
    "wrr",
]


def _blended(
    lists: RankedLists, c: CutLists, beta: float, gain: str | GainScheme
) -> tuple[BoolArray, FloatArray, FloatArray]:
    """isrel, count(r) and BR(r) per row (Sakai 2007, eq. for the blended ratio)."""
    scheme = gain_scheme(gain)
    g = list_gains(c.grades, scheme, lists.negative)
    isrel, count = relevant_counts(c, 1)
    cg = segment_cumsum(g, c.offsets, c.seg)
    ioff, ig = ideal_gain_segments(lists, scheme)
    icum = segment_cumsum(ig, ioff, segment_ids(ioff))
    cgi = take_prefix(icum, ioff, c.seg, c.rank)
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
    c = cut_lists(lists, cutoff)
    isrel, _, br = _blended(lists, c, beta, gain)
    s = segment_sum(np.where(isrel, br, 0.0), c.seg, lists.n)
    r = lists.n_relevant()
    denom = r if cutoff is None else np.minimum(r, cutoff)
    return apply_empty(safe_div(s, denom.astype(np.float64)), r, empty)


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
    c = cut_lists(lists, cutoff)
    isrel, _, br = _blended(lists, c, beta, gain)
    first = first_true_rank(isrel, c.offsets, c.seg)
    out = np.zeros(lists.n)
    has = first > 0
    out[has] = br[c.offsets[:-1][has] + first[has] - 1]
    return apply_empty(out, lists.n_relevant(), empty)


def _first_max(c: CutLists, n: int) -> IntArray:
    """Rank of the first document of the highest grade present (> 0), 0 when none."""
    g = np.where(np.isnan(c.grades), -np.inf, c.grades)
    maxg = np.full(n, -np.inf)
    nonempty = np.flatnonzero(np.diff(c.offsets) > 0)
    if nonempty.size:
        maxg[nonempty] = np.maximum.reduceat(g, c.offsets[:-1][nonempty])
    return first_true_rank((g == maxg[c.seg]) & (g > 0), c.offsets, c.seg)


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
    c = cut_lists(lists, cutoff)
    _, _, br = _blended(lists, c, beta, gain)
    rp = _first_max(c, lists.n)
    out = np.zeros(lists.n)
    has = rp > 0
    out[has] = br[c.offsets[:-1][has] + rp[has] - 1]
    return apply_empty(out, lists.n_relevant(), empty)


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
    c = cut_lists(lists, cutoff)
    isrel, count, br = _blended(lists, c, beta, gain)
    rp = _first_max(c, lists.n)
    upto = c.rank <= rp[c.seg]
    s = segment_sum(np.where(isrel & upto, br, 0.0), c.seg, lists.n)
    has = rp > 0
    cnt = np.zeros(lists.n)
    cnt[has] = count[c.offsets[:-1][has] + rp[has] - 1]
    return apply_empty(safe_div(s, cnt), lists.n_relevant(), empty)


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
    c = cut_lists(lists, cutoff)
    first = first_true_rank(c.grades >= 1, c.offsets, c.seg)
    has = first > 0
    out = np.zeros(lists.n)
    l1 = c.grades[c.offsets[:-1][has] + first[has] - 1]
    out[has] = 1.0 / (first[has] - 1.0 / _beta_of(l1, pen))
    return apply_empty(out, lists.n_relevant(), empty)


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
    return apply_empty(out, r, empty)


# ---------------------------------------------------------------------------
# declarations
# ---------------------------------------------------------------------------


def _pen_check(v: Any) -> str | None:
    try:
        _penalties(str(v))
    except MeasureSpecError as exc:
        return str(exc)
    return None


_PEN = Param(
    "penalties",
    "str",
    "4-3-2",
    "WRR penalty beta per grade 1, 2, 3, ... (each > 1)",
    check=_pen_check,
)

DEFINITIONS: Final[tuple[MeasureDef, ...]] = (
    MeasureDef(
        "Q",
        "Q-measure",
        "AP with the blended ratio; Q@k divides by min(R, k) (NTCIREVAL)",
        "BR(r) = (count(r) + beta cg(r)) / (r + beta cg_I(r)); Q = (1/R) sum_r isrel(r) BR(r)",
        SAKAI2007,
        (BETA, GAIN),
        plain(q_measure),
    ),
    MeasureDef(
        "O",
        "O-measure",
        "blended ratio at the first relevant document (0 when none)",
        "O = BR(r_1)",
        SAKAI2007,
        (BETA, GAIN),
        plain(o_measure),
    ),
    MeasureDef(
        "Pmeasure",
        "P-measure",
        "blended ratio at the first document of the highest grade retrieved",
        "P = BR(r_p)",
        SAKAI2007,
        (BETA, GAIN),
        plain(p_measure),
    ),
    MeasureDef(
        "Pplus",
        "P+-measure",
        "mean blended ratio over relevant documents down to r_p",
        "P+ = (1/count(r_p)) sum_{r<=r_p} isrel(r) BR(r)",
        SAKAI2007,
        (BETA, GAIN),
        plain(p_plus),
    ),
    MeasureDef(
        "WRR",
        "Weighted reciprocal rank",
        "reciprocal rank with a grade-dependent penalty (can exceed 1)",
        "WRR = 1 / (r_1 - 1/beta(L_1))",
        SAKAI2007,
        (_PEN,),
        plain(wrr, zero_empty=True),
        normalised=False,
        upper=2.0,
        ideal_is_one=False,
    ),
    MeasureDef(
        "NWRR",
        "Normalised weighted reciprocal rank",
        "WRR divided by its maximum for the topic's highest grade M",
        "NWRR = (1 - 1/beta(M)) / (r_1 - 1/beta(L_1))",
        SAKAI2007,
        (_PEN,),
        plain(nwrr),
    ),
)
"""Sakai's graded measures in the registry."""

"""User-model measures: expected reciprocal rank (ERR) and rank-biased precision (RBP).

Both model a user who walks down the list and stops: ERR when satisfied by a
document (a cascade, stopping probability rising with the grade), RBP with a fixed
persistence ``p`` of going on to the next rank.  Neither is normalised by an ideal
list, so a topic without relevant documents scores 0.

References: Chapelle, Metzler, Zhang & Grinspan (2009), "Expected reciprocal rank for
graded relevance", CIKM [chapelle2009]; Moffat & Zobel (2008), "Rank-biased precision
for measurement of retrieval effectiveness", TOIS 27(1) [moffat2008].
"""

from __future__ import annotations

from typing import Any, Final

import numpy as np

from .._types import FloatArray
from ..errors import JudgmentError
from ..judgments.gains import GainScheme, gain_scheme
from ..kernels.discounts import geometric_weights
from ..kernels.segments import segment_cumsum, segment_sum
from .grammar import MeasureDef, Param, Spelling
from .lists import EmptyPolicy, RankedLists, cut_lists, list_gains
from .params import GAIN, REL, plain

__all__ = [
    "DEFINITIONS",
    "ERR_MAX_GRADE",
    "RBP_PERSISTENCE",
    "expected_reciprocal_rank",
    "rank_biased_precision",
]

ERR_MAX_GRADE: Final[int] = 4
"""Top grade of ERR's stopping probability by default: gdeval's ``$MAX_JUDGMENT`` (so
ir_measures' ``ERR@k``), the top of the TREC Web track's 0-4 scale."""

RBP_PERSISTENCE: Final[float] = 0.8
"""RBP's persistence ``p`` by default (ir_measures' default)."""


def expected_reciprocal_rank(
    lists: RankedLists,
    *,
    cutoff: int | None = None,
    max_grade: int = ERR_MAX_GRADE,
    empty: EmptyPolicy = "zero",
) -> FloatArray:
    r"""Expected reciprocal rank (Chapelle et al. 2009, eq. 4), as gdeval computes it.

    Notes
    -----
    :math:`ERR@k = \sum_{r \le k} \frac{1}{r} R_r \prod_{i < r} (1 - R_i)` with the
    stopping probability :math:`R_i = (2^{g_i} - 1) / 2^{g_{max}}` of a document of
    grade :math:`g_i` [chapelle2009, section 4].  :math:`g_{max}` is ``max_grade``
    (default 4, as gdeval and so ir_measures' ``ERR@k``); a grade above it is an
    error.  Unjudged documents and negative grades stop no one (:math:`R = 0`), as
    gdeval.  The product is taken per grade level, :math:`\prod_g (1 - R_g)^{n_g}`
    with :math:`n_g` the documents of grade ``g`` above: exact counts, no running
    product or sum of logarithms across lists.  A topic without relevant documents
    scores 0.

    Worked example: grades 2, 0, 1 (``max_grade`` 4): :math:`R = 3/16, 0, 1/16`;
    :math:`ERR = 3/16 + 0 + \frac{1}{3}\cdot\frac{1}{16}\cdot\frac{13}{16} = 0.204427`.

    Examples
    --------
    >>> lists = RankedLists.from_arrays(["q"], [0, 3], [2, 0, 1])
    >>> expected_reciprocal_rank(lists).round(6)
    array([0.204427])
    >>> expected_reciprocal_rank(lists, cutoff=1)
    array([0.1875])
    """
    c = cut_lists(lists, cutoff)
    g = np.where(np.isnan(c.grades), 0.0, np.maximum(c.grades, 0.0))
    if g.size and float(g.max()) > max_grade:
        raise JudgmentError(
            f"ERR: grade {g.max():g} is above max_grade={max_grade}; "
            f"give the scale's top grade, e.g. ERR(max_grade={int(g.max())})"
        )
    stop = (np.exp2(g) - 1.0) / 2.0**max_grade
    # probability of reaching each rank: product over the documents above, one grade
    # level at a time (exact counts, no log of 1 - R)
    reach = np.ones(g.size)
    for level in np.unique(g[g > 0]):
        above = segment_cumsum(g == level, c.offsets, c.seg) - (g == level)
        reach *= (1.0 - (2.0**level - 1.0) / 2.0**max_grade) ** above
    return segment_sum(stop * reach / c.rank, c.seg, lists.n)


def rank_biased_precision(
    lists: RankedLists,
    *,
    cutoff: int | None = None,
    p: float = RBP_PERSISTENCE,
    rel: float = 1,
    gain: str | GainScheme = "binary",
    empty: EmptyPolicy = "zero",
) -> FloatArray:
    r"""Rank-biased precision (Moffat & Zobel 2008, eq. 5), binary relevance at ``rel``.

    Notes
    -----
    :math:`RBP = (1 - p) \sum_{i \le k} r_i\, p^{i - 1}` with :math:`r_i = 1` when the
    document at rank ``i`` has grade :math:`\ge` ``rel`` [moffat2008, section 4]:
    the expected rate of relevant documents a user of persistence ``p`` sees.  The
    residual (the weight of unjudged and unseen ranks) is not reported.  Equals
    ir_measures' ``RBP(rel=1)`` (cwl_eval).  With a gain scheme (``gain=grade``),
    :math:`r_i` is the document's gain instead: ranx's ``rbp.80`` is
    ``RBP(p=0.8,gain=grade)``.

    Worked example: relevance 1, 0, 1 and ``p = 0.8``:
    :math:`RBP = 0.2 \cdot (1 + 0.8^2) = 0.328`.

    Examples
    --------
    >>> rank_biased_precision(RankedLists.from_arrays(["q"], [0, 3], [2, 0, 1])).round(6)
    array([0.328])
    """
    c = cut_lists(lists, cutoff)
    weight = (1.0 - p) * geometric_weights(c.rank, p=p)
    if gain == "binary":
        return segment_sum(np.where(c.grades >= rel, weight, 0.0), c.seg, lists.n)
    scheme = gain if isinstance(gain, GainScheme) else gain_scheme(gain)
    return segment_sum(weight * list_gains(c.grades, scheme, lists.negative), c.seg, lists.n)


# ---------------------------------------------------------------------------
# declarations
# ---------------------------------------------------------------------------


def _persistence(v: Any) -> str | None:
    return None if 0.0 < float(v) < 1.0 else "persistence must be between 0 and 1 (exclusive)"


def _top_grade(v: Any) -> str | None:
    return None if int(v) >= 1 else "must be >= 1"


MAX_GRADE: Final = Param(
    "max_grade",
    "int",
    ERR_MAX_GRADE,
    "top grade g_max of the stopping probability (2^g - 1) / 2^g_max (gdeval: 4)",
    check=_top_grade,
)
P_PERSISTENCE: Final = Param(
    "p",
    "float",
    RBP_PERSISTENCE,
    "persistence: probability of going on to the next rank",
    check=_persistence,
)


def _rbp_gain(v: Any) -> Any:
    return "binary" if str(v) == "binary" else GAIN.parse(v)  # type: ignore[misc]


RBP_GAIN: Final = Param(
    "gain",
    "str",
    "binary",
    "binary (1 at grade >= rel) or a gain scheme (" + GAIN.description.split(": ", 1)[1] + ")",
    parse=_rbp_gain,
)


def _rel_with_binary(given: Any, value: Any) -> str | None:
    if "rel" in given and value("gain") != "binary":
        return "rel applies to gain=binary; a gain scheme weighs every grade"
    return None


CHAPELLE2009: Final = "chapelle2009 (Chapelle et al. 2009, CIKM, sec. 4, eq. 4)"
MOFFAT2008: Final = "moffat2008 (Moffat & Zobel 2008, TOIS 27(1), sec. 4, eq. 5)"

DEFINITIONS: Final[tuple[MeasureDef, ...]] = (
    MeasureDef(
        "ERR",
        "Expected reciprocal rank",
        "cascade model: 1/r weighted by the probability of stopping at rank r (gdeval)",
        "ERR@k = sum_{r<=k} (1/r) R_r prod_{i<r} (1 - R_i), R = (2^g - 1) / 2^g_max",
        CHAPELLE2009 + "; gdeval (TREC Web track)",
        (MAX_GRADE,),
        plain(expected_reciprocal_rank, zero_empty=True),
        normalised=False,
        ideal_is_one=False,
        spellings=(Spelling("ir_measures", "ERR", "required"),),
    ),
    MeasureDef(
        "RBP",
        "Rank-biased precision",
        "expected rate of relevant documents seen by a user of persistence p (binary, rel)",
        "RBP = (1 - p) sum_{i<=k} isrel(i) p^(i-1)",
        MOFFAT2008,
        (P_PERSISTENCE, REL, RBP_GAIN),
        plain(rank_biased_precision, zero_empty=True),
        validate=_rel_with_binary,
        normalised=False,
        ideal_is_one=False,
        spellings=(
            Spelling(
                "ir_measures",
                "RBP",
                "none",
                (("rel", 1),),
                "ir_measures' RBP without rel is trectools' graded variant (gain x grade)",
            ),
        ),
    ),
)
"""The user-model measures in the registry."""

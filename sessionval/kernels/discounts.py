r"""The one table of rank and query discounts used by every measure.

Rank discount ``d(i)`` (``DCG[i] = Σ_{j<=i} G[j] / d(j)``) and query discount
``qd(q)`` (the multiplier of the ``q``-th query of a session), each declared once
by kind with its formula and its source.  Single-query measures
(``nDCG(discount=...)``), the session kernels, the figures, the codebook and the
report all read this table, so a kind means, computes and prints the same
everywhere.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, Literal, TypeAlias

import numpy as np
import numpy.typing as npt

from .._types import FloatArray
from ..errors import MeasureSpecError

__all__ = [
    "QUERY_DISCOUNTS",
    "QUERY_DISCOUNT_TABLE",
    "RANK_DISCOUNTS",
    "RANK_DISCOUNT_TABLE",
    "DiscountKind",
    "QueryDiscount",
    "RankDiscount",
    "query_discount",
    "rank_discount",
]

QueryDiscount: TypeAlias = Literal["jk2008", "shifted-log", "none"]


RankDiscount: TypeAlias = Literal["jk2008", "jk2002", "jk2002rn", "log2p1", "shifted-log", "none"]


QUERY_DISCOUNTS: Final = ("jk2008", "shifted-log", "none")


RANK_DISCOUNTS: Final = ("jk2008", "jk2002", "jk2002rn", "log2p1", "shifted-log", "none")


@dataclass(frozen=True, slots=True)
class DiscountKind:
    """One discount: its name, formula (plain text), source and function.

    ``fn(x, base)`` maps ranks (rank discounts: the denominator ``d(i)``) or query
    positions (query discounts: the multiplier ``qd(q)``) to float64 values.
    """

    name: str
    formula: str
    reference: str
    fn: Callable[[FloatArray, float], FloatArray]


def _log(x: FloatArray, base: float) -> FloatArray:
    out: FloatArray = np.log(x) / math.log(base)
    return out


RANK_DISCOUNT_TABLE: Final[dict[str, DiscountKind]] = {
    "jk2008": DiscountKind(
        "jk2008",
        "d(i) = 1 + log_b(i)",
        "Järvelin et al. 2008, appendix eq. 2",
        lambda r, b: 1.0 + _log(r, b),
    ),
    "jk2002": DiscountKind(
        "jk2002",
        "d(i) = 1 for i < b, log_b(i) from i = b on",
        "Järvelin & Kekäläinen 2002, TOIS, sec. 2.1",
        lambda r, b: np.where(r < b, 1.0, _log(np.maximum(r, 1.0), b)),
    ),
    "jk2002rn": DiscountKind(
        "jk2002rn",
        "d(i) = 1 at i = 1, log_b(i) from i = 2 on",
        "Järvelin & Kekäläinen 2002, research note RN-2002-2",
        lambda r, b: np.where(r < 2, 1.0, _log(np.maximum(r, 1.0), b)),
    ),
    "log2p1": DiscountKind(
        "log2p1",
        "d(i) = log_2(i + 1)",
        "Burges et al. 2005; trec_eval ndcg",
        lambda r, b: np.log2(r + 1.0),
    ),
    "shifted-log": DiscountKind(
        "shifted-log",
        "d(i) = log_b(i + b - 1)",
        "Jiang & Allan 2016, session-metrics code",
        lambda r, b: _log(r + b - 1.0, b),
    ),
    "none": DiscountKind("none", "d(i) = 1 (no discount: CG)", "", lambda r, b: np.ones_like(r)),
}
"""Rank discounts by kind; :data:`RANK_DISCOUNTS` lists the names in this order."""

QUERY_DISCOUNT_TABLE: Final[dict[str, DiscountKind]] = {
    "jk2008": DiscountKind(
        "jk2008",
        "qd(q) = 1 / (1 + log_bq(q))",
        "Järvelin et al. 2008, eq. 1",
        lambda q, bq: 1.0 / (1.0 + _log(q, bq)),
    ),
    "shifted-log": DiscountKind(
        "shifted-log",
        "qd(q) = 1 / log_bq(q + bq - 1)",
        "Jiang & Allan 2016, session-metrics code",
        lambda q, bq: math.log(bq) / np.log(q + bq - 1.0),
    ),
    "none": DiscountKind(
        "none", "qd(q) = 1 (no query discount)", "", lambda q, bq: np.ones_like(q)
    ),
}
"""Query discounts by kind; :data:`QUERY_DISCOUNTS` lists the names in this order."""


def query_discount(
    positions: npt.ArrayLike, *, bq: float = 4.0, kind: QueryDiscount = "jk2008"
) -> FloatArray:
    r"""Multiplier of the query at each session position ``q`` (1-based).

    Parameters
    ----------
    positions
        Query positions ``q >= 1``.
    bq
        Log base of the query discount, ``bq > 1``; ``math.inf`` turns the discount off.
    kind
        ``"jk2008"``: :math:`1 / (1 + \log_{bq} q)` (Järvelin et al. 2008, eq. 1);
        ``"shifted-log"``: :math:`1 / \log_{bq}(q + bq - 1)` (Jiang & Allan 2016's
        session-metrics code); ``"none"``: 1.

    Returns
    -------
    numpy.ndarray
        float64 multipliers, 1 at ``q = 1`` for every kind.

    Raises
    ------
    MeasureSpecError
        ``bq <= 1`` or an unknown ``kind``.

    Examples
    --------
    >>> query_discount([1, 2, 4, 16], bq=4)
    array([1.        , 0.66666667, 0.5       , 0.33333333])
    >>> query_discount([1, 2], bq=4, kind="shifted-log").round(4)
    array([1.    , 0.8614])
    """
    q = np.asarray(positions, dtype=np.float64)
    if not bq > 1:
        raise MeasureSpecError(f"query log base bq must be > 1, got {bq}")
    entry = QUERY_DISCOUNT_TABLE.get(kind)
    if entry is None:
        raise MeasureSpecError(f"query discount {kind!r} unknown; use one of {QUERY_DISCOUNTS}")
    if math.isinf(bq):
        return np.ones_like(q)
    return entry.fn(q, bq)


def rank_discount(
    ranks: npt.ArrayLike, *, b: float = 2.0, kind: RankDiscount = "jk2008"
) -> FloatArray:
    r"""Denominator ``d(i)`` of the rank discount: ``DCG[i] = Σ_{j<=i} G[j] / d(j)``.

    Parameters
    ----------
    ranks
        Ranks ``i >= 1`` (within a query's slot).
    b
        Log base ``b > 1``.
    kind
        ``"jk2008"``: :math:`1 + \log_b i` (Järvelin et al. 2008, appendix eq. 2);
        ``"jk2002"``: 1 for ``i < b``, :math:`\log_b i` otherwise (TOIS 2002);
        ``"jk2002rn"``: 1 at ``i = 1``, :math:`\log_b i` from 2 on (RN-2002-2);
        ``"log2p1"``: :math:`\log_2(i + 1)` (Burges et al. 2005); ``"shifted-log"``:
        :math:`\log_b(i + b - 1)` (Jiang & Allan 2016's code); ``"none"``: 1 (CG).

    Returns
    -------
    numpy.ndarray
        float64 denominators.

    Examples
    --------
    The appendix of Järvelin et al. (2008), ``b = 4``, ``G' = <3,2,3,0,0,1,2,2,3,0>``:
    the formula gives ``<3, 4.33, 6.01, 6.01, 6.01, 6.44, 7.28, 8.08, 9.24, 9.24>``.
    The paper prints 4 and 8.14 at ranks 2 and 8 (slips; spec section 2 erratum).

    >>> g = np.array([3, 2, 3, 0, 0, 1, 2, 2, 3, 0.0])
    >>> np.cumsum(g / rank_discount(np.arange(1, 11), b=4)).round(2)
    array([3.  , 4.33, 6.01, 6.01, 6.01, 6.44, 7.28, 8.08, 9.24, 9.24])
    """
    r = np.asarray(ranks, dtype=np.float64)
    if not b > 1:
        raise MeasureSpecError(f"rank log base b must be > 1, got {b}")
    entry = RANK_DISCOUNT_TABLE.get(kind)
    if entry is None:
        raise MeasureSpecError(f"rank discount {kind!r} unknown; use one of {RANK_DISCOUNTS}")
    return entry.fn(r, b)

r"""The one table of rank and query discounts used by every measure.

Rank discount ``d(i)`` (``DCG[i] = Σ_{j<=i} G[j] / d(j)``) and query discount
``qd(q)``, each by kind; single-query measures (``nDCG(discount=...)``), the
session kernels and the figures all call these two functions, so a kind means the
same everywhere.
"""

from __future__ import annotations

import math
from typing import Final, Literal, TypeAlias

import numpy as np
import numpy.typing as npt

from .._types import FloatArray
from ..errors import MeasureSpecError

__all__ = [
    "QUERY_DISCOUNTS",
    "RANK_DISCOUNTS",
    "QueryDiscount",
    "RankDiscount",
    "query_discount",
    "rank_discount",
]


QueryDiscount: TypeAlias = Literal["jk2008", "shifted-log", "none"]


RankDiscount: TypeAlias = Literal["jk2008", "jk2002", "jk2002rn", "log2p1", "shifted-log", "none"]


QUERY_DISCOUNTS: Final = ("jk2008", "shifted-log", "none")


RANK_DISCOUNTS: Final = ("jk2008", "jk2002", "jk2002rn", "log2p1", "shifted-log", "none")


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
    if kind == "none" or math.isinf(bq):
        return np.ones_like(q)
    if kind == "jk2008":
        return 1.0 / (1.0 + np.log(q) / math.log(bq))
    if kind == "shifted-log":
        return math.log(bq) / np.log(q + bq - 1.0)
    raise MeasureSpecError(f"query discount {kind!r} unknown; use one of {QUERY_DISCOUNTS}")


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
    lb = math.log(b)
    if kind == "jk2008":
        return 1.0 + np.log(r) / lb
    if kind == "jk2002":
        return np.where(r < b, 1.0, np.log(np.maximum(r, 1.0)) / lb)
    if kind == "jk2002rn":
        return np.where(r < 2, 1.0, np.log(np.maximum(r, 1.0)) / lb)
    if kind == "log2p1":
        return np.log2(r + 1.0)
    if kind == "shifted-log":
        return np.log(r + b - 1.0) / lb
    if kind == "none":
        return np.ones_like(r)
    raise MeasureSpecError(f"rank discount {kind!r} unknown; use one of {RANK_DISCOUNTS}")

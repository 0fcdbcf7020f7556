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
from typing import Final, Literal, TypeAlias, get_args

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
    "check_query_discount",
    "check_rank_discount",
    "geometric_weights",
    "query_discount",
    "rank_discount",
]

QueryDiscount: TypeAlias = Literal["jk2008", "shifted-log", "none"]


RankDiscount: TypeAlias = Literal["jk2008", "jk2002", "jk2002rn", "log2p1", "shifted-log", "none"]


QUERY_DISCOUNTS: Final[tuple[QueryDiscount, ...]] = get_args(QueryDiscount)
"""Query-discount kinds, in table order (the one list; derived from :data:`QueryDiscount`)."""

RANK_DISCOUNTS: Final[tuple[RankDiscount, ...]] = get_args(RankDiscount)
"""Rank-discount kinds, in table order (the one list; derived from :data:`RankDiscount`)."""


@dataclass(frozen=True, slots=True)
class DiscountKind:
    """One discount: its name, formula (plain text), source, function and use of a base.

    ``fn(x, base)`` maps ranks (rank discounts: the denominator ``d(i)``) or query
    positions (query discounts: the multiplier ``qd(q)``) to float64 values;
    ``uses_base`` says whether ``base`` (``b`` or ``bq``) enters the formula, so a
    measure can refuse a base its discount ignores.
    """

    name: str
    formula: str
    reference: str
    fn: Callable[[FloatArray, float], FloatArray]
    uses_base: bool = True


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
        uses_base=False,
    ),
    "shifted-log": DiscountKind(
        "shifted-log",
        "d(i) = log_b(i + b - 1)",
        "Jiang & Allan 2016, session-metrics code",
        lambda r, b: _log(r + b - 1.0, b),
    ),
    "none": DiscountKind(
        "none", "d(i) = 1 (no discount: CG)", "", lambda r, b: np.ones_like(r), uses_base=False
    ),
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
        "none",
        "qd(q) = 1 (no query discount)",
        "Kanoulas et al. 2011, no discount",
        lambda q, bq: np.ones_like(q),
        uses_base=False,
    ),
}
"""Query discounts by kind; :data:`QUERY_DISCOUNTS` lists the names in this order."""


def check_rank_discount(kind: str, b: float) -> None:
    """Validate a rank discount at a boundary (configuration, measure parameters, public call).

    Raises
    ------
    MeasureSpecError
        An unknown kind (the message lists the table's kinds) or ``b <= 1`` for a kind
        that uses its base.
    """
    entry = RANK_DISCOUNT_TABLE.get(kind)
    if entry is None:
        raise MeasureSpecError(
            f"rank discount {kind!r} unknown; valid discounts: {', '.join(RANK_DISCOUNTS)}"
        )
    if entry.uses_base and not b > 1:
        raise MeasureSpecError(f"rank log base b must be > 1, got {b}")


def check_query_discount(kind: str, bq: float) -> None:
    """Validate a query discount at a boundary; ``bq`` must be > 1 (``inf``: no discount).

    Raises
    ------
    MeasureSpecError
        An unknown kind or ``bq <= 1``.
    """
    if kind not in QUERY_DISCOUNT_TABLE:
        raise MeasureSpecError(
            f"query discount {kind!r} unknown; valid discounts: {', '.join(QUERY_DISCOUNTS)}"
        )
    if not bq > 1:
        raise MeasureSpecError(f"query log base bq must be > 1, got {bq}")


def query_discount(positions: npt.ArrayLike, *, bq: float, kind: QueryDiscount) -> FloatArray:
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

    Notes
    -----
    A kernel: ``kind`` and ``bq`` were validated where they entered
    (:class:`~sessionval.evaluation.config.SessionConfig`, a measure's parameters,
    :func:`check_query_discount`) and are trusted here.

    Examples
    --------
    >>> query_discount([1, 2, 4, 16], bq=4, kind="jk2008")
    array([1.        , 0.66666667, 0.5       , 0.33333333])
    >>> query_discount([1, 2], bq=4, kind="shifted-log").round(4)
    array([1.    , 0.8614])
    """
    q = np.asarray(positions, dtype=np.float64)
    if math.isinf(bq):
        return np.ones_like(q)
    return QUERY_DISCOUNT_TABLE[kind].fn(q, bq)


def rank_discount(ranks: npt.ArrayLike, *, b: float, kind: RankDiscount) -> FloatArray:
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

    Notes
    -----
    A kernel: ``kind`` and ``b`` are trusted (validated at the boundary,
    :func:`check_rank_discount`); kinds without a base (``log2p1``, ``none``) ignore ``b``.

    Examples
    --------
    The appendix of Järvelin et al. (2008), ``b = 4``, ``G' = <3,2,3,0,0,1,2,2,3,0>``:
    the formula gives ``<3, 4.33, 6.01, 6.01, 6.01, 6.44, 7.28, 8.08, 9.24, 9.24>``.
    The paper prints 4 and 8.14 at ranks 2 and 8 (slips; spec section 2 erratum).

    >>> g = np.array([3, 2, 3, 0, 0, 1, 2, 2, 3, 0.0])
    >>> np.cumsum(g / rank_discount(np.arange(1, 11), b=4, kind="jk2008")).round(2)
    array([3.  , 4.33, 6.01, 6.01, 6.01, 6.44, 7.28, 8.08, 9.24, 9.24])
    """
    return RANK_DISCOUNT_TABLE[kind].fn(np.asarray(ranks, dtype=np.float64), b)


def geometric_weights(ranks: npt.ArrayLike, *, p: float) -> FloatArray:
    r"""The geometric rank weight :math:`p^{i-1}` of rank-biased precision.

    RBP (Moffat & Zobel 2008, TOIS 27(1), eq. 1) weights rank ``i`` by the chance
    :math:`p^{i-1}` that a patient searcher reaches it; RBP-AE (Jiang et al. 2017) and
    session RBP (Lipani et al. 2019) use the same weight along ranks and queries.
    A multiplier, not a denominator like :func:`rank_discount`.

    Parameters
    ----------
    ranks
        Ranks ``i >= 1`` (or query positions).
    p
        Persistence, ``0 < p < 1`` (trusted: validated with the measure's parameters).

    Returns
    -------
    numpy.ndarray
        float64 weights, 1 at rank 1.

    Examples
    --------
    Moffat & Zobel's worked example, relevance 1, 0, 1 and ``p = 0.8``:
    :math:`RBP = (1 - p)(1 + p^2) = 0.328`.

    >>> w = geometric_weights([1, 2, 3], p=0.8)
    >>> w
    array([1.  , 0.8 , 0.64])
    >>> round(float(0.2 * (w * [1, 0, 1]).sum()), 3)
    0.328
    """
    out: FloatArray = p ** (np.asarray(ranks, dtype=np.float64) - 1.0)
    return out

"""Parameters shared by several measure families, with the single-query defaults.

Two contexts, one default each:

* **single-query measures** (``nDCG@10``, :func:`~sessionval.measures.cg.gain_scalar`,
  :func:`~sessionval.measures.cg.gain_vectors`,
  :func:`~sessionval.measures.cg.discounted_cumulated_gain`): trec_eval's conventions,
  declared here once (:data:`QUERY_DISCOUNT_DEFAULT` ``log2p1``, :data:`LOG_BASE_DEFAULT`
  2, :data:`QUERY_GAIN_DEFAULT` ``grade``), so ``nDCG@10`` is ``ndcg_cut.10``;
* **session measures** (``sDCG``, ``nsDCG``): the evaluation's
  :class:`~sessionval.evaluation.config.SessionConfig`, whose defaults are Järvelin et
  al. (2008)'s (``jk2008``, ``b = 2``, ``bq = 4``, gains 0-1-10-100).  A session
  measure's parameters therefore have no default of their own: a parameter the
  measure does not give comes from the configuration.

Each parameter has one name: the cut-off is ``@k`` (``cutoff``), the rank log base
``b``, the query log base ``bq``, the rank discount ``discount``, the query discount
``query_discount``, the gain scheme ``gain`` (the configuration's field ``gains``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

import numpy as np

from .._types import FloatArray
from ..judgments.gains import GAIN_SCHEMES, GainScheme, gain_scheme
from ..kernels.discounts import (
    QUERY_DISCOUNT_TABLE,
    QUERY_DISCOUNTS,
    RANK_DISCOUNT_TABLE,
    RANK_DISCOUNTS,
    DiscountKind,
    RankDiscount,
)
from ..kernels.session import IDEAL_RULES
from ..kernels.slots import DUPLICATE_POLICIES, ShortLists
from .grammar import Compute, Param, ParamValue, fmt
from .lists import EmptyPolicy, RankedLists

__all__ = [
    "BETA",
    "DISCOUNT",
    "GAIN",
    "JK2002",
    "LOG_BASE_DEFAULT",
    "QUERY_DISCOUNT_DEFAULT",
    "QUERY_GAIN_DEFAULT",
    "REL",
    "SAKAI2007",
    "SESSION_PARAMS",
    "B",
    "base_rule",
    "default_discount_rule",
    "plain",
    "rules",
    "session_rule",
]

QUERY_DISCOUNT_DEFAULT: Final[RankDiscount] = "log2p1"
"""Rank discount of single-query measures by default (trec_eval's ``ndcg``)."""

LOG_BASE_DEFAULT: Final[float] = 2.0
"""Log base ``b`` of single-query measures by default (used by the discounts with a base)."""

QUERY_GAIN_DEFAULT: Final[GainScheme] = GAIN_SCHEMES["grade"]
"""Gain scheme of single-query measures by default (trec_eval: the grade itself)."""

JK2002: Final = "jk2002 (Järvelin & Kekäläinen 2002, TOIS 20(4), sec. 2)"
SAKAI2007: Final = "sakai2007 (Sakai 2007, IPSJ TOD 48(SIG9), sec. 3)"


def _table_text(table: Mapping[str, DiscountKind]) -> str:
    return "; ".join(f"{k}: {e.formula}" for k, e in table.items())


def _b_check(v: Any) -> str | None:
    return None if float(v) > 1 else "log base must be > 1"


def _positive(v: Any) -> str | None:
    return None if float(v) >= 0 else "must be >= 0"


def _gain_parse(v: Any) -> GainScheme:
    return gain_scheme(v if isinstance(v, GainScheme) else str(v))


def _uses_base(table: Mapping[str, DiscountKind]) -> str:
    return ", ".join(k for k, e in table.items() if e.uses_base)


def base_rule(
    *pairs: tuple[str, str, Mapping[str, DiscountKind]],
) -> Callable[[Mapping[str, ParamValue], Callable[[str], ParamValue]], str | None]:
    """A cross-parameter rule: a base (``b``, ``bq``) given with a discount that ignores it.

    ``pairs`` are ``(base, discount, table)`` names; the rule returns a problem when
    a base is given (not its default) while the effective discount does not use a
    base; an effective discount still unknown (``None``: a session measure's
    discount taken from the configuration later) passes here and is checked at
    evaluation.
    """

    def rule(given: Mapping[str, ParamValue], value: Callable[[str], ParamValue]) -> str | None:
        for base, discount, table in pairs:
            kind = value(discount)
            if base in given and kind is not None and not table[str(kind)].uses_base:
                return (
                    f"{base} is not used by {discount}={kind}; {base} applies to "
                    f"{discount} {_uses_base(table)}"
                )
        return None

    return rule


def default_discount_rule(
    default: str = QUERY_DISCOUNT_DEFAULT,
) -> Callable[[Mapping[str, ParamValue], Callable[[str], ParamValue]], str | None]:
    """A cross-parameter rule: a ``discount`` given that equals the default one at ``b``.

    ``shifted-log`` at ``b = 2`` is ``log_2(i + 1)``, the default ``log2p1``: the
    parameter would have no effect, so the name is refused (one name per measure).
    Discounts are compared on ranks 1..10,000.
    """
    ranks = np.arange(1.0, 10_001.0)
    reference = RANK_DISCOUNT_TABLE[default].fn(ranks, LOG_BASE_DEFAULT)

    def rule(given: Mapping[str, ParamValue], value: Callable[[str], ParamValue]) -> str | None:
        kind = given.get("discount")
        if kind is None:
            return None
        b = float(value("b"))
        if np.allclose(RANK_DISCOUNT_TABLE[str(kind)].fn(ranks, b), reference, rtol=1e-12):
            return (
                f"discount={kind} with b={fmt(b)} is the default discount {default} "
                f"(d(i) = log_2(i + 1)): leave discount out, or give another b"
            )
        return None

    return rule


def rules(
    *checks: Callable[[Mapping[str, ParamValue], Callable[[str], ParamValue]], str | None],
) -> Callable[[Mapping[str, ParamValue], Callable[[str], ParamValue]], str | None]:
    """Several cross-parameter rules as one: the first problem found."""

    def rule(given: Mapping[str, ParamValue], value: Callable[[str], ParamValue]) -> str | None:
        for check in checks:
            problem = check(given, value)
            if problem:
                return problem
        return None

    return rule


def plain(fn: Callable[..., FloatArray], *, zero_empty: bool = False) -> Compute:
    """The registry's compute of a measure function ``fn(lists, *, cutoff, empty, **params)``.

    ``zero_empty``: the measure needs no recall base (RR, P, WRR): 0, not NaN, when
    the recall base is empty, whatever the evaluation's ``empty``.
    """

    def compute(
        lists: RankedLists, *, cutoff: int | None, empty: EmptyPolicy, **kw: Any
    ) -> FloatArray:
        return fn(lists, cutoff=cutoff, empty="zero" if zero_empty else empty, **kw)

    return compute


# ---------------------------------------------------------------------------
# single-query parameters
# ---------------------------------------------------------------------------

DISCOUNT: Final = Param(
    "discount",
    "str",
    QUERY_DISCOUNT_DEFAULT,
    "rank discount d(j) (" + _table_text(RANK_DISCOUNT_TABLE) + ")",
    choices=RANK_DISCOUNTS,
)
B: Final = Param(
    "b",
    "float",
    LOG_BASE_DEFAULT,
    f"log base of the discounts with a base ({_uses_base(RANK_DISCOUNT_TABLE)}), > 1",
    check=_b_check,
)
GAIN: Final = Param(
    "gain",
    "str",
    QUERY_GAIN_DEFAULT,
    "gain scheme: " + ", ".join(GAIN_SCHEMES) + ", a dash list of gains for grades "
    "0, 1, 2, ... or a mapping {grade:gain,...}",
    parse=_gain_parse,
)
REL: Final = Param("rel", "int", 1, "minimum grade counted as relevant", check=_positive)
BETA: Final = Param("beta", "float", 1.0, "weight of gain in the blended ratio", check=_positive)


# ---------------------------------------------------------------------------
# session parameters: SessionConfig fields, no default of their own
# ---------------------------------------------------------------------------


def _config_param(
    name: str, description: str, *, kind: str = "str", field: str | None = None, **kw: Any
) -> Param:
    """A session parameter: sets the configuration field ``field`` (default: ``name``)."""
    return Param(
        name,
        "float" if kind == "float" else "str",
        None,
        description + " (default: the evaluation's configuration)",
        field=field or name,
        **kw,
    )


SESSION_PARAMS: Final[tuple[Param, ...]] = (
    _config_param("b", "log base of the rank discount, > 1", kind="float", check=_b_check),
    _config_param("bq", "log base of the query discount, > 1", kind="float", check=_b_check),
    _config_param(
        "discount",
        "rank discount d(i) (" + _table_text(RANK_DISCOUNT_TABLE) + ")",
        choices=RANK_DISCOUNTS,
    ),
    _config_param(
        "query_discount",
        "query discount qd(q) (" + _table_text(QUERY_DISCOUNT_TABLE) + ")",
        choices=QUERY_DISCOUNTS,
    ),
    _config_param(
        "gain", "gain scheme (SessionConfig field gains)", field="gains", parse=_gain_parse
    ),
    _config_param(
        "duplicates",
        "a document shown by an earlier query: every, first or drop",
        choices=DUPLICATE_POLICIES,
    ),
    _config_param(
        "short_lists",
        "a query with fewer than X results: pad, none or min:m",
        parse=ShortLists.parse,
    ),
    _config_param("ideal", "ideal session: repeat or no-repeat", choices=IDEAL_RULES),
    _config_param(
        "scan_depth",
        "per-query scan depth from the log: ignore, replace or cap X",
        choices=("ignore", "replace", "cap"),
    ),
)
"""The parameters of the sDCG family; each sets the SessionConfig field of its name
(``gain`` sets ``gains``) and ``@X`` sets ``cutoff``."""


def session_rule() -> Callable[[Mapping[str, ParamValue], Callable[[str], ParamValue]], str | None]:
    """The base rule of the session measures: ``b`` with ``discount``, ``bq`` with its kind."""
    return base_rule(
        ("b", "discount", RANK_DISCOUNT_TABLE), ("bq", "query_discount", QUERY_DISCOUNT_TABLE)
    )

"""Counts and set-based measures: what trec_eval prints as ``num_*``, ``set_*``, ``utility``.

A run's list is read here as a *set* (its whole length, or its top ``k`` with a
cut-off): the number of queries, of documents retrieved, relevant, relevant
retrieved and judged non-relevant retrieved; set precision, recall, relative
precision, F and "set MAP"; the linear utility of the contingency table; and
Success@k (one relevant document in the top k).

References: trec_eval 9.0 (``m_num_*.c``, ``m_set_*.c``, ``m_utility.c``,
``m_success.c``; Buckley, ``trec_eval`` documentation) [trec_eval]; van Rijsbergen
(1979), *Information Retrieval*, ch. 7 (F as the complement of E) [vanrijsbergen1979];
Lewis (1995), "The TREC-4 filtering track" (linear utility) [lewis1995].
"""

from __future__ import annotations

from typing import Any, Final

import numpy as np

from .._types import FloatArray
from ..kernels.segments import segment_sum
from .grammar import MeasureDef, Param, Spelling
from .lists import EmptyPolicy, RankedLists, apply_empty, cut_lists, safe_div
from .params import REL, plain
from .precision import precision, recall

__all__ = [
    "DEFINITIONS",
    "f_measure",
    "num_nonrel_judged_ret",
    "num_q",
    "num_rel",
    "num_rel_ret",
    "num_ret",
    "set_average_precision",
    "set_precision",
    "set_relative_precision",
    "success",
    "utility",
]

TREC_EVAL: Final = "trec_eval 9.0 (Buckley; m_{name}.c)"


def _rel_ret(lists: RankedLists, cutoff: int | None, rel: float) -> FloatArray:
    c = cut_lists(lists, cutoff)
    return segment_sum(c.grades >= rel, c.seg, lists.n)


def _n_ret(lists: RankedLists, cutoff: int | None) -> FloatArray:
    n = np.diff(lists.offsets).astype(np.float64)
    return n if cutoff is None else np.minimum(n, float(cutoff))


def num_q(
    lists: RankedLists, *, cutoff: int | None = None, empty: EmptyPolicy = "zero"
) -> FloatArray:
    """1 per list: summed over queries, the number of queries (trec_eval ``num_q``).

    Examples
    --------
    >>> num_q(RankedLists.from_arrays(["a", "b"], [0, 1, 1], [1]))
    array([1., 1.])
    """
    return np.ones(lists.n)


def num_ret(
    lists: RankedLists, *, cutoff: int | None = None, empty: EmptyPolicy = "zero"
) -> FloatArray:
    """Documents retrieved (in the top ``k``): trec_eval ``num_ret``.

    Examples
    --------
    >>> num_ret(RankedLists.from_arrays(["q"], [0, 3], [1, 0, 2])), num_ret(
    ...     RankedLists.from_arrays(["q"], [0, 3], [1, 0, 2]), cutoff=2)
    (array([3.]), array([2.]))
    """
    return _n_ret(lists, cutoff)


def num_rel(
    lists: RankedLists, *, cutoff: int | None = None, rel: float = 1, empty: EmptyPolicy = "zero"
) -> FloatArray:
    """Relevant documents judged for the topic, ``R`` (trec_eval ``num_rel``).

    Examples
    --------
    >>> num_rel(RankedLists.from_arrays(["q"], [0, 2], [1, 0], recall_base=[[1, 2, 3]]))
    array([3.])
    """
    return lists.n_relevant(rel).astype(np.float64)


def num_rel_ret(
    lists: RankedLists, *, cutoff: int | None = None, rel: float = 1, empty: EmptyPolicy = "zero"
) -> FloatArray:
    """Relevant documents retrieved (in the top ``k``): trec_eval ``num_rel_ret``, ranx ``hits@k``.

    Examples
    --------
    >>> num_rel_ret(RankedLists.from_arrays(["q"], [0, 3], [1, 0, 2]))
    array([2.])
    """
    return _rel_ret(lists, cutoff, rel)


def num_nonrel_judged_ret(
    lists: RankedLists, *, cutoff: int | None = None, rel: float = 1, empty: EmptyPolicy = "zero"
) -> FloatArray:
    """Judged non-relevant documents retrieved (trec_eval ``num_nonrel_judged_ret``).

    A negative grade counts as judged non-relevant; an unjudged document does not.

    Examples
    --------
    >>> num_nonrel_judged_ret(RankedLists.from_arrays(["q"], [0, 3], [0, float("nan"), 2]))
    array([1.])
    """
    c = cut_lists(lists, cutoff)
    judged_nonrel = ~np.isnan(c.grades) & ~(c.grades >= rel)
    return segment_sum(judged_nonrel, c.seg, lists.n)


def set_precision(
    lists: RankedLists, *, cutoff: int | None = None, rel: float = 1, empty: EmptyPolicy = "zero"
) -> FloatArray:
    r"""Set precision :math:`|rel \cap ret| / |ret|` (trec_eval ``set_P``; 0 for an empty list).

    Examples
    --------
    >>> set_precision(RankedLists.from_arrays(["q"], [0, 4], [1, 0, 2, 0]))
    array([0.5])
    """
    return safe_div(_rel_ret(lists, cutoff, rel), _n_ret(lists, cutoff))


def set_relative_precision(
    lists: RankedLists, *, cutoff: int | None = None, rel: float = 1, empty: EmptyPolicy = "nan"
) -> FloatArray:
    r"""Relative set precision :math:`|rel \cap ret| / \min(|ret|, R)` (``set_relative_P``).

    Examples
    --------
    >>> set_relative_precision(RankedLists.from_arrays(["q"], [0, 4], [1, 0, 0, 0],
    ...                                                recall_base=[[1, 1]]))
    array([0.5])
    """
    r = lists.n_relevant(rel)
    v = safe_div(_rel_ret(lists, cutoff, rel), np.minimum(_n_ret(lists, cutoff), r))
    return apply_empty(v, r, empty)


def set_average_precision(
    lists: RankedLists, *, cutoff: int | None = None, rel: float = 1, empty: EmptyPolicy = "nan"
) -> FloatArray:
    r"""Set "MAP": set precision times set recall (trec_eval ``set_map``, ir_measures ``SetAP``).

    Examples
    --------
    >>> set_average_precision(RankedLists.from_arrays(["q"], [0, 2], [1, 0],
    ...                                               recall_base=[[1, 1]]))
    array([0.25])
    """
    r = lists.n_relevant(rel)
    hits = _rel_ret(lists, cutoff, rel)
    v = safe_div(hits, _n_ret(lists, cutoff)) * safe_div(hits, r.astype(np.float64))
    return apply_empty(v, r, empty)


def f_measure(
    lists: RankedLists,
    *,
    cutoff: int | None = None,
    beta: float = 1.0,
    rel: float = 1,
    empty: EmptyPolicy = "nan",
) -> FloatArray:
    r"""F: the weighted harmonic mean of precision and recall (van Rijsbergen 1979, ch. 7).

    Notes
    -----
    :math:`F_\beta = (1 + \beta^2) P R / (\beta^2 P + R)`, 0 when :math:`P = R = 0`
    [vanrijsbergen1979].  Without a cut-off, ``P`` and ``R`` are of the whole list
    (trec_eval ``set_F``, ir_measures ``SetF``); with one they are ``P@k`` (divided by
    ``k``) and ``R@k`` (ranx ``f1@k``).

    Worked example: 2 of 4 retrieved are relevant, ``R = 3``: :math:`P = 1/2`,
    :math:`R = 2/3`, :math:`F_1 = 2 \cdot (1/3) / (7/6) = 4/7`.

    Examples
    --------
    >>> lists = RankedLists.from_arrays(["q"], [0, 4], [1, 0, 2, 0], recall_base=[[1, 2, 3]])
    >>> f_measure(lists).round(6)
    array([0.571429])
    """
    p = precision(lists, cutoff=cutoff, rel=rel, empty="zero")
    r = recall(lists, cutoff=cutoff, rel=rel, empty="zero")
    b2 = beta * beta
    v = safe_div((1.0 + b2) * p * r, b2 * p + r)
    return apply_empty(v, lists.n_relevant(rel), empty)


def success(
    lists: RankedLists, *, cutoff: int | None = None, rel: float = 1, empty: EmptyPolicy = "zero"
) -> FloatArray:
    """1 when a relevant document is in the top ``k``, else 0 (trec_eval ``success``).

    Examples
    --------
    >>> success(RankedLists.from_arrays(["q"], [0, 3], [0, 0, 1]), cutoff=2)
    array([0.])
    """
    return (_rel_ret(lists, cutoff, rel) > 0).astype(np.float64)


def utility(
    lists: RankedLists,
    *,
    cutoff: int | None = None,
    a: float = 1.0,
    b: float = -1.0,
    c: float = 0.0,
    rel: float = 1,
    empty: EmptyPolicy = "zero",
) -> FloatArray:
    r"""Linear set utility :math:`a |rel \cap ret| + b |ret \setminus rel| + c |rel \setminus ret|`.

    trec_eval's ``utility`` (defaults 1, -1, 0) [lewis1995]: every retrieved
    document that is not relevant (judged or not) costs ``b``.  trec_eval's fourth
    coefficient (non-relevant documents not retrieved) needs the collection size and
    is not offered.

    Examples
    --------
    >>> utility(RankedLists.from_arrays(["q"], [0, 3], [1, 0, float("nan")]))
    array([-1.])
    """
    hits = _rel_ret(lists, cutoff, rel)
    misses = _n_ret(lists, cutoff) - hits
    r = lists.n_relevant(rel).astype(np.float64)
    return a * hits + b * misses + c * (r - hits)


# ---------------------------------------------------------------------------
# declarations
# ---------------------------------------------------------------------------


def _positive(v: Any) -> str | None:
    return None if float(v) > 0 else "must be > 0"


BETA_F: Final = Param("beta", "float", 1.0, "weight of recall against precision", check=_positive)


def _coef(name: str, default: float, what: str) -> Param:
    return Param(name, "float", default, f"utility of each {what}")


def _count(
    name: str, pretty: str, description: str, formula: str, fn: Any, te: str, *extra: Spelling,
    params: tuple[Param, ...] = (REL,), cutoff: Any = "optional",
) -> MeasureDef:  # fmt: skip
    return MeasureDef(
        name, pretty, description, formula, TREC_EVAL.format(name=te), params,
        plain(fn, zero_empty=True), cutoff=cutoff, normalised=False, upper=None,
        ideal_is_one=False, aggregate="sum",
        spellings=(Spelling("trec_eval", te), *extra),
    )  # fmt: skip


DEFINITIONS: Final[tuple[MeasureDef, ...]] = (
    _count("NumQ", "Number of queries", "1 per query: summed, the queries evaluated",
           "NumQ = 1 (summed over queries)", num_q, "num_q",
           Spelling("ir_measures", "NumQ"), params=(), cutoff="none"),
    _count("NumRet", "Documents retrieved", "documents in the list (top k), summed over queries",
           "NumRet@k = min(k, n)", num_ret, "num_ret", Spelling("ir_measures", "NumRet"),
           params=()),
    _count("NumRel", "Relevant documents", "recall base size R, summed over queries",
           "NumRel = R", num_rel, "num_rel", Spelling("ir_measures", "NumRel"), cutoff="none"),
    _count("NumRelRet", "Relevant retrieved", "relevant documents in the list (top k)",
           "NumRelRet@k = count(k)", num_rel_ret, "num_rel_ret",
           Spelling("ir_measures", "NumRelRet")),
    MeasureDef(
        "Hits", "Hits", "relevant documents in the top k, averaged over queries (ranx hits)",
        "Hits@k = count(k)", "ranx hits; " + TREC_EVAL.format(name="num_rel_ret"), (REL,),
        plain(num_rel_ret, zero_empty=True), cutoff="required", normalised=False, upper=None,
        ideal_is_one=False, spellings=(Spelling("ranx", "hits", "required"),),
    ),
    _count("NumNonRelJudgedRet", "Judged non-relevant retrieved",
           "judged non-relevant documents in the list (top k)",
           "NumNonRelJudgedRet@k = |judged, grade < rel, in top k|", num_nonrel_judged_ret,
           "num_nonrel_judged_ret"),
    MeasureDef(
        "SetP", "Set precision", "relevant retrieved / retrieved over the whole list",
        "SetP = count(n) / n", TREC_EVAL.format(name="set_P"), (REL,),
        plain(set_precision, zero_empty=True), cutoff="none", normalised=False,
        ideal_is_one=False,
        spellings=(Spelling("trec_eval", "set_P"), Spelling("ir_measures", "SetP")),
    ),
    MeasureDef(
        "SetRelP", "Relative set precision", "relevant retrieved / min(retrieved, R)",
        "SetRelP = count(n) / min(n, R)", TREC_EVAL.format(name="set_relative_P"), (REL,),
        plain(set_relative_precision), cutoff="none", ideal_is_one=False,
        spellings=(Spelling("trec_eval", "set_relative_P"),),
    ),
    MeasureDef(
        "SetAP", "Set MAP", "set precision times set recall",
        "SetAP = (count(n) / n) (count(n) / R)", TREC_EVAL.format(name="set_map"), (REL,),
        plain(set_average_precision), cutoff="none", ideal_is_one=False,
        spellings=(Spelling("trec_eval", "set_map"), Spelling("ir_measures", "SetAP")),
    ),
    MeasureDef(
        "F", "F measure", "weighted harmonic mean of precision and recall (of the top k)",
        "F = (1 + beta^2) P R / (beta^2 P + R)",
        "vanrijsbergen1979 (van Rijsbergen 1979, ch. 7); " + TREC_EVAL.format(name="set_F"),
        (BETA_F, REL), plain(f_measure), ideal_is_one=False,
        spellings=(
            Spelling("trec_eval", "set_F"),
            Spelling("ir_measures", "SetF"),
            Spelling("ranx", "f1", "required"),
        ),
    ),
    MeasureDef(
        "Success", "Success", "1 when a relevant document is in the top k",
        "Success@k = [count(k) > 0]", TREC_EVAL.format(name="success"), (REL,),
        plain(success, zero_empty=True), cutoff="required", normalised=False,
        ideal_is_one=False,
        spellings=(
            Spelling("trec_eval", "success", "required", defaults=(1, 5, 10)),
            Spelling("ir_measures", "Success", "required"),
            Spelling("ranx", "hit_rate", "required"),
        ),
    ),
    MeasureDef(
        "Utility", "Linear utility", "a per relevant retrieved, b per other retrieved, c per "
        "relevant missed", "Utility = a count(n) + b (n - count(n)) + c (R - count(n))",
        "lewis1995; " + TREC_EVAL.format(name="utility"),
        (_coef("a", 1.0, "relevant document retrieved"),
         _coef("b", -1.0, "other document retrieved"),
         _coef("c", 0.0, "relevant document not retrieved"), REL),
        plain(utility, zero_empty=True), cutoff="none", normalised=False, upper=None,
        lower=None, ideal_is_one=False,
        spellings=(Spelling("trec_eval", "utility"),),
    ),
)  # fmt: skip
"""The counts and set measures in the registry."""

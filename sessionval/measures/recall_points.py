r"""Precision at recall points and at multiples of R, as trec_eval computes them.

R-precision and its multiples (``Rprec``, ``Rprec_mult``), interpolated precision
at a recall level (``iprec_at_recall``) and its 11-point average (``11pt_avg``), and
precision relative to the best possible at a cut-off (``relative_P``).

trec_eval turns a fraction ``x`` of ``R`` into a number of documents as
:math:`\lfloor xR + 0.9 \rfloor` (``(long)(x * num_rel + 0.9)``, the version behind
pytrec_eval); this module does the same, in the same double arithmetic, so the
numbers are trec_eval's.

References: Buckley & Voorhees (2000), "Evaluating evaluation measure stability",
SIGIR (R-precision) [buckley2000]; Manning, Raghavan & Schütze (2008), *Introduction
to Information Retrieval*, sec. 8.4 (interpolated precision, 11-point average)
[manning2008]; trec_eval 9.0 (``m_Rprec_mult.c``, ``m_iprec_at_recall.c``,
``m_11pt_avg.c``, ``m_relative_P.c``) [trec_eval].
"""

from __future__ import annotations

from typing import Any, Final, cast

import numpy as np
import pandas as pd

from .._types import FloatArray
from ..kernels.segments import offsets_from_counts, segment_sum
from .grammar import MeasureDef, Param, Spelling
from .lists import EmptyPolicy, RankedLists, apply_empty, cut_lists, safe_div
from .params import REL, plain
from .precision import relevant_rows

__all__ = [
    "DEFINITIONS",
    "ELEVEN_POINTS",
    "eleven_point_average",
    "interpolated_precision",
    "r_precision",
    "relative_precision",
]

ELEVEN_POINTS: Final[tuple[float, ...]] = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
"""The recall levels of the 11-point average (trec_eval's defaults of ``iprec_at_recall``)."""


def _docs_for(fraction: float, r: FloatArray) -> FloatArray:
    """trec_eval's number of documents for a fraction of ``R``: ``(long)(x * R + 0.9)``."""
    return np.floor(fraction * r + 0.9)


def r_precision(
    lists: RankedLists,
    *,
    cutoff: int | None = None,
    mult: float = 1.0,
    rel: float = 1,
    empty: EmptyPolicy = "nan",
) -> FloatArray:
    r"""Precision at :math:`m R` documents (R-precision at ``mult = 1``).

    Notes
    -----
    :math:`Rprec_m = count(c) / c` with :math:`c = \lfloor mR + 0.9 \rfloor`; a list
    shorter than ``c`` still divides by ``c`` [buckley2000; trec_eval ``Rprec`` and
    ``Rprec_mult``].

    Worked example: relevance 1, 0, 1, 0 and ``R = 3``: :math:`Rprec = 2/3`;
    ``mult = 2``: :math:`c = 6`, :math:`2/6`.

    Examples
    --------
    >>> lists = RankedLists.from_arrays(["q"], [0, 4], [1, 0, 1, 0], recall_base=[[1, 1, 1]])
    >>> r_precision(lists).round(6), r_precision(lists, mult=2).round(6)
    (array([0.666667]), array([0.333333]))
    """
    r = lists.n_relevant(rel)
    c = _docs_for(mult, r.astype(np.float64))
    seg, rank, _ = relevant_rows(lists, None, rel)
    hits = segment_sum(rank <= c[seg], seg, lists.n)
    return apply_empty(safe_div(hits, c), r, empty)


def _suffix_max_precision(
    lists: RankedLists, rel: float
) -> tuple[FloatArray, FloatArray, np.ndarray[Any, Any]]:
    """Interpolated precision at each relevant row: the best precision at or below it.

    Returns the values (relevant rows of all lists in order), each list's number of
    relevant rows retrieved and the offset of its first one.
    """
    seg, rank, count = relevant_rows(lists, None, rel)
    prec = count / rank
    # max over the relevant rows at or below (precision peaks at relevant rows)
    rev = pd.Series(prec[::-1]).groupby(seg[::-1], sort=False).cummax()
    best = cast(FloatArray, rev.to_numpy(np.float64)[::-1])
    n_ret = np.bincount(seg, minlength=lists.n).astype(np.float64)
    return best, n_ret, offsets_from_counts(n_ret.astype(np.int64))


def interpolated_precision(
    lists: RankedLists,
    *,
    cutoff: int | None = None,
    recall: float = 0.0,
    rel: float = 1,
    empty: EmptyPolicy = "nan",
) -> FloatArray:
    r"""Interpolated precision at a recall level (trec_eval ``iprec_at_recall``).

    Notes
    -----
    :math:`iprec(x) = \max_{r \ge r_c} count(r)/r` with :math:`r_c` the rank of the
    :math:`c`-th relevant document, :math:`c = \max(1, \lfloor xR + 0.9 \rfloor)`;
    0 when fewer than ``c`` relevant documents are retrieved [manning2008, sec. 8.4;
    trec_eval].

    Worked example: relevance 0, 1, 0, 1 and ``R = 3``: precision 1/2 at rank 2 and
    at rank 4; :math:`iprec(0.5)`: :math:`c = 2`, 1/2; :math:`iprec(0.8)`:
    :math:`c = 3 > 2` retrieved, 0.

    Examples
    --------
    >>> lists = RankedLists.from_arrays(["q"], [0, 4], [0, 1, 0, 1], recall_base=[[1, 1, 1]])
    >>> interpolated_precision(lists, recall=0.5), interpolated_precision(lists, recall=0.8)
    (array([0.5]), array([0.]))
    """
    best, n_ret, start = _suffix_max_precision(lists, rel)
    return _at_level(best, n_ret, start, lists.n_relevant(rel), recall, empty)


def _at_level(
    best: FloatArray,
    n_ret: FloatArray,
    start: np.ndarray[Any, Any],
    r: np.ndarray[Any, Any],
    level: float,
    empty: EmptyPolicy,
) -> FloatArray:
    c = _docs_for(level, r.astype(np.float64))
    ok = (n_ret > 0) & (c <= n_ret)
    at = start[:-1] + np.maximum(c, 1.0).astype(np.int64) - 1
    out = np.zeros(r.size)
    out[ok] = best[at[ok]]
    return apply_empty(out, r, empty)


def eleven_point_average(
    lists: RankedLists, *, cutoff: int | None = None, rel: float = 1, empty: EmptyPolicy = "nan"
) -> FloatArray:
    r"""Interpolated precision averaged over recall 0, 0.1, ..., 1 (trec_eval ``11pt_avg``).

    Notes
    -----
    :math:`\frac{1}{11}\sum_{x \in \{0, 0.1, \dots, 1\}} iprec(x)` [manning2008, sec. 8.4].

    Examples
    --------
    >>> lists = RankedLists.from_arrays(["q"], [0, 2], [1, 0], recall_base=[[1, 1]])
    >>> eleven_point_average(lists).round(6)  # iprec 1 up to recall 0.5, then 0
    array([0.545455])
    """
    best, n_ret, start = _suffix_max_precision(lists, rel)
    r = lists.n_relevant(rel)
    # summed from the highest level down, as trec_eval adds them
    total = np.zeros(lists.n)
    for level in ELEVEN_POINTS[::-1]:
        total += _at_level(best, n_ret, start, r, level, "zero")
    return apply_empty(total / len(ELEVEN_POINTS), r, empty)


def relative_precision(
    lists: RankedLists, *, cutoff: int | None = None, rel: float = 1, empty: EmptyPolicy = "nan"
) -> FloatArray:
    r"""Precision at ``k`` relative to the best possible: :math:`count(k) / \min(k, R)`.

    Precision up to ``R``, recall after it (trec_eval ``relative_P``).

    Examples
    --------
    >>> lists = RankedLists.from_arrays(["q"], [0, 3], [1, 0, 1], recall_base=[[1, 1]])
    >>> relative_precision(lists, cutoff=3)
    array([1.])
    """
    c = cut_lists(lists, cutoff)
    hits = segment_sum(c.grades >= rel, c.seg, lists.n)
    r = lists.n_relevant(rel)
    k = np.diff(lists.offsets) if cutoff is None else np.full(lists.n, cutoff)
    return apply_empty(safe_div(hits, np.minimum(k, r).astype(np.float64)), r, empty)


# ---------------------------------------------------------------------------
# declarations
# ---------------------------------------------------------------------------


def _positive(v: Any) -> str | None:
    return None if float(v) > 0 else "must be > 0"


def _fraction(v: Any) -> str | None:
    return None if 0.0 <= float(v) <= 1.0 else "must be from 0 to 1"


MULT: Final = Param(
    "mult", "float", 1.0, "multiple of R at which precision is taken", check=_positive
)
RECALL: Final = Param(
    "recall", "float", None, "recall level, from 0 to 1 (written @x)", check=_fraction
)
TREC: Final = "trec_eval 9.0 (Buckley; m_{name}.c)"
MULTS: Final = (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)

DEFINITIONS: Final[tuple[MeasureDef, ...]] = (
    MeasureDef(
        "Rprec", "R-precision", "precision at mult x R documents (R-precision at mult=1)",
        "Rprec = count(c) / c, c = floor(mult R + 0.9)",
        "buckley2000 (Buckley & Voorhees 2000, SIGIR); " + TREC.format(name="Rprec_mult"),
        (MULT, REL), plain(r_precision), cutoff="none",
        spellings=(
            Spelling("trec_eval", "Rprec"),
            Spelling("trec_eval", "Rprec_mult", "required", defaults=MULTS, at="mult"),
            Spelling("ir_measures", "Rprec"),
            Spelling("ranx", "r-precision"),
        ),
    ),
    MeasureDef(
        "IPrec", "Interpolated precision", "best precision at or after the recall level",
        "IPrec@x = max_{r >= r_c} count(r) / r, c = max(1, floor(x R + 0.9))",
        "manning2008 (Manning et al. 2008, sec. 8.4); " + TREC.format(name="iprec_at_recall"),
        (RECALL, REL), plain(interpolated_precision), cutoff="none", at_param="recall",
        spellings=(
            Spelling("trec_eval", "iprec_at_recall", "required", defaults=ELEVEN_POINTS,
                     at="recall"),
            Spelling("ir_measures", "IPrec", "required", at="recall"),
        ),
    ),
    MeasureDef(
        "IPrec11", "11-point interpolated average precision",
        "interpolated precision averaged over recall 0, 0.1, ..., 1",
        "IPrec11 = (1/11) sum_{x in 0, 0.1, ..., 1} IPrec@x",
        "manning2008 (sec. 8.4); " + TREC.format(name="11pt_avg"), (REL,),
        plain(eleven_point_average), cutoff="none",
        spellings=(Spelling("trec_eval", "11pt_avg"),),
    ),
    MeasureDef(
        "RelP", "Relative precision", "relevant in the top k over min(k, R)",
        "RelP@k = count(k) / min(k, R)", TREC.format(name="relative_P"), (REL,),
        plain(relative_precision), cutoff="required", ideal_is_one=False,
        spellings=(
            Spelling("trec_eval", "relative_P", "required",
                     defaults=(5, 10, 15, 20, 30, 100, 200, 500, 1000)),
        ),
    ),
)  # fmt: skip
"""The recall-point measures in the registry."""

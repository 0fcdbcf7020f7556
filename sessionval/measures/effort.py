"""Adaptive-effort single-query measures (Jiang & Allan, ECIR 2016): DCG_AE, nDCG_AE, RBP_AE, P_AE.

Each divides the measure's weighted gain by the weighted effort of reading the same
ranks (:func:`~sessionval.kernels.effort.effort_ratio`), the effort depending on each
result's grade (``effort``: ``static`` = 1 for every grade, or a dash list / mapping of
efforts per grade, e.g. the paper's ``0.25-1-1``).  As in the authors' code
(``query_metrics.py``): DCG_AE uses the gain ``gain`` (default ``exp``, 2^g − 1) and the
weight ``1/log2(i + 1)``, RBP_AE and P_AE a binary gain (grade >= ``rel``) and the weights
``p^{i-1}`` and 1; a list is read to ``min(k, n)``; the value is 0 when the gain is 0.
nDCG_AE divides DCG_AE by DCG_AE of the ideal list (the recall base in decreasing order,
then the key's judged non-relevant documents, to ``min(k, judged)``).  Unjudged
documents count as grade 0 for gain and effort, negative grades take grade 0's effort.

With ``effort=static`` and lists of ``k`` results nDCG_AE is nDCG@k with exponential gains;
on a shorter list the run's effort covers only the ranks it has: this is the "nDCG" of
the CHIIR 2016 experiment (``NDCG([1.0, 1.0, 1.0])``), whose sum/mean/max/min/first/last
per session are ``sum(nDCG_AE@9)`` … ``last(nDCG_AE@9)``.

References
----------
Jiang, J., Allan, J. (2016). Adaptive effort for search evaluation metrics. ECIR 2016
[jiang2016ae].
"""

from __future__ import annotations

from typing import Any, Final, cast

import numpy as np

from .._types import FloatArray
from ..judgments.gains import GainScheme, gain_scheme
from ..kernels.discounts import geometric_weights, rank_discount
from ..kernels.effort import effort_ratio
from ..kernels.segments import cut_segments, offsets_from_counts, segment_ids, segment_ranks
from .grammar import Compute, MeasureDef, Param
from .lists import EmptyPolicy, RankedLists
from .params import GAIN, REL

__all__ = [
    "DEFINITIONS",
]


def _effort_parse(v: Any) -> str | GainScheme:
    if isinstance(v, GainScheme) or v == "static":
        return v  # type: ignore[no-any-return]
    return gain_scheme(str(v))


EFFORT: Final = Param(
    "effort",
    "str",
    "static",
    "effort of reading a result of each grade: static (1 for every grade), a dash list "
    "of efforts for grades 0, 1, 2, ... (the paper's 0.25-1-1) or a mapping {grade:effort}",
    parse=_effort_parse,
)
EXP_GAIN: Final = Param(
    GAIN.name, GAIN.kind, gain_scheme("exp"), GAIN.description, parse=GAIN.parse
)
PERSISTENCE: Final = Param(
    "p",
    "float",
    0.8,
    "persistence of RBP: probability of reading one more result",
    check=lambda v: None if 0 <= float(v) < 1 else "must be in [0, 1)",
)

_REFERENCE: Final = (
    "jiang2016ae (Jiang & Allan 2016, ECIR: adaptive effort; code: query_metrics.py "
    "DCG, NDCG, RBP, Prec with an effort vector)"
)


def _efforts(grades: FloatArray, effort: str | GainScheme) -> FloatArray:
    if effort == "static":
        return np.ones(grades.size)
    g = np.where(np.isnan(grades), 0.0, grades)
    out: FloatArray = cast(GainScheme, effort).gains(g, negative="clip")
    return out


def _run(lists: RankedLists, cutoff: int | None) -> tuple[FloatArray, Any, Any]:
    rows, off = cut_segments(lists.offsets, cutoff)
    grades = lists.grades[rows]
    return grades, off, segment_ranks(off)


def _ideal(lists: RankedLists, cutoff: int | None) -> tuple[FloatArray, Any, Any]:
    """The ideal list: recall base, then the judged non-relevant (grade 0), to min(k, judged)."""
    n_rel = np.diff(lists.ideal_offsets)
    length = lists.n_judged if cutoff is None else np.minimum(lists.n_judged, cutoff)
    length = np.maximum(length, np.minimum(n_rel, length))
    off = offsets_from_counts(length)
    seg = segment_ids(off)
    rank = segment_ranks(off, seg)
    grades = np.zeros(int(off[-1]))
    rel = rank <= n_rel[seg]
    grades[rel] = lists.ideal_grades[lists.ideal_offsets[seg[rel]] + rank[rel] - 1]
    return grades, off, rank


def _dcg_weight(rank: Any) -> FloatArray:
    out: FloatArray = 1.0 / rank_discount(rank, b=2.0, kind="log2p1")
    return out


def _ratio(
    grades: FloatArray,
    off: Any,
    rank: Any,
    *,
    kind: str,
    gain: GainScheme,
    effort: str | GainScheme,
    negative: str,
    rel: int,
    p: float,
) -> FloatArray:
    judged = np.where(np.isnan(grades), 0.0, grades)
    if kind == "DCG":
        g = gain.gains(judged, negative=negative)  # type: ignore[arg-type]
        w = _dcg_weight(rank)
    else:
        g = (judged >= rel).astype(np.float64)
        w = geometric_weights(rank, p=p) if kind == "RBP" else np.ones(g.size)
    return effort_ratio(g, _efforts(grades, effort), w, off)


def _measure(kind: str, *, normalised: bool = False) -> Compute:
    def compute(
        lists: RankedLists,
        *,
        cutoff: int | None,
        empty: EmptyPolicy,
        effort: str | GainScheme = "static",
        gain: GainScheme = EXP_GAIN.default,
        rel: int = 1,
        p: float = 0.8,
    ) -> FloatArray:
        kw = {"kind": kind, "gain": gain, "effort": effort, "negative": lists.negative}
        value = _ratio(*_run(lists, cutoff), rel=rel, p=p, **kw)  # type: ignore[arg-type]
        if not normalised:
            return value
        best = _ratio(*_ideal(lists, cutoff), rel=rel, p=p, **kw)  # type: ignore[arg-type]
        out = np.zeros(value.size)
        np.divide(value, best, out=out, where=best != 0)
        empty_base = np.diff(lists.ideal_offsets) == 0
        out[empty_base] = np.nan if empty == "nan" else 0.0
        return out

    return compute


_RATIO: Final = "sum_{i<=n} g_i w_i / sum_{i<=n} e(r_i) w_i, n = min(k, list length) (0 if no gain)"

DEFINITIONS: Final[tuple[MeasureDef, ...]] = (
    MeasureDef(
        "DCG_AE",
        "DCG with adaptive effort",
        "discounted gain per unit of discounted reading effort",
        _RATIO + ", g = gain(r), w_i = 1/log2(i+1)",
        _REFERENCE,
        (EFFORT, EXP_GAIN),
        _measure("DCG"),
        normalised=False,
        upper=None,
        ideal_is_one=False,
        example="grades (2, 0, 1), exp gains (3, 0, 1), static effort: "
        "(3 + 1/2)/(1 + 1/log2 3 + 1/2) = 1.6426",
    ),
    MeasureDef(
        "nDCG_AE",
        "nDCG with adaptive effort",
        "DCG_AE of the list over DCG_AE of the ideal list (NaN or 0 on an empty recall base)",
        "DCG_AE(list) / DCG_AE(ideal), ideal = recall base then judged non-relevant, "
        "to min(k, judged)",
        _REFERENCE + "; jiang2016 (CHIIR 2016: the per-query nDCG of the session "
        "aggregates, NDCG([1.0, 1.0, 1.0]) with k = 9)",
        (EFFORT, EXP_GAIN),
        _measure("DCG", normalised=True),
        upper=None,
        ideal_is_one=True,
        example="a list of 2 (grades 2, 0) against a pool of 3 (grades 2, 1, 0), k = 3, "
        "static effort: (3/(1 + 0.6309)) / ((3 + 0.6309)/(1 + 0.6309 + 0.5)) = 1.0795, "
        "where nDCG@3 (exp gains) is 3/(3 + 0.6309) = 0.8262: the short list costs less "
        "effort",
    ),
    MeasureDef(
        "RBP_AE",
        "RBP with adaptive effort",
        "rank-biased relevant results per unit of rank-biased reading effort",
        _RATIO + ", g = [r >= rel], w_i = p^(i-1)",
        _REFERENCE,
        (EFFORT, REL, PERSISTENCE),
        _measure("RBP"),
        normalised=False,
        ideal_is_one=False,
        example="grades (1, 0), p = 0.8, efforts 0.25-1-1: 1/(1 + 0.25*0.8) = 0.8333",
    ),
    MeasureDef(
        "P_AE",
        "Precision with adaptive effort",
        "relevant results per unit of reading effort",
        _RATIO + ", g = [r >= rel], w_i = 1",
        _REFERENCE,
        (EFFORT, REL),
        _measure("P"),
        normalised=False,
        ideal_is_one=False,
        example="grades (1, 0, 0), efforts 0.25-1-1: 1/(1 + 0.25 + 0.25) = 0.6667",
    ),
)
"""The adaptive-effort measures in the registry."""

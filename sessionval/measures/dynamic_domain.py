"""TREC Dynamic Domain measures beside the jig's sDCG: Cube Test (CT, nCT, ACT), Expected Utility.

Positional session measures (:class:`~sessionval.measures.session.PositionCompute`)
following the jig's ``scorer/cubetest.py`` and ``scorer/expected_utility.py``
(trec-dd/trec-dd-jig).  A DD *iteration* is a query of the session; the jig's iteration
cut-off is the configuration's ``max_queries`` (the ``trec-dd-jig`` preset: 10 iterations
of X = 5 documents), and its sDCG is ``sDCG``/``nsDCG`` under that preset.  The gains are
the configuration's (``gain=grade`` with grades that are the documents' summed passage
ratings, as the jig reads its truth).  sessionval's judgments hold one grade per
document, so the jig's subtopics reduce to one (CT) and its nuggets to one per relevant
document with length 1 (EU); see the kernels for the formulas.

References
----------
Luo, J., Wing, C., Yang, H., Hearst, M. (2013). The water filling model and the cube test.
CIKM 2013 [luo2013].

Yang, Y., Lad, A. (2009). Modeling expected utility of multi-session information
distillation. ICTIR 2009 [yang2009].

Yang, G. H., Tang, Z., Soboroff, I. (2015). TREC 2015 Dynamic Domain track overview [yang2015dd].
"""

from __future__ import annotations

from typing import Any, Final

import numpy as np

from .._types import FloatArray
from ..kernels.cube_test import cube_test, cube_test_bound
from ..kernels.expected_utility import expected_utility
from ..kernels.segments import offsets_from_counts, segment_ranks
from .grammar import MeasureDef, Param
from .session import SessionView, config_params, positional

__all__ = [
    "DEFINITIONS",
]


def _unit(v: Any) -> str | None:
    return None if 0 < float(v) < 1 else "must be in (0, 1)"


def _positive(v: Any) -> str | None:
    return None if float(v) > 0 else "must be > 0"


def _at_least_one(v: Any) -> str | None:
    return None if int(v) >= 1 else "must be >= 1"


GAMMA: Final = Param(
    "gamma", "float", 0.5, "discount of a relevant document found again (novelty)", check=_unit
)
MAX_HEIGHT: Final = Param("max_height", "float", 5.0, "height of the cube", check=_positive)
STOP: Final = Param(
    "p", "float", 0.5, "probability of stopping at each rank of a list", check=_unit
)
COST: Final = Param(
    "a", "float", 0.001, "cost of reading one document (length 1)", check=lambda v: None
)
MAX_QUERIES: Final = Param(
    "max_queries",
    "int",
    None,
    "iterations evaluated (the jig's cut-off; default: the evaluation's configuration)",
    check=_at_least_one,
    field="max_queries",
)

_CONFIG: Final = (*config_params("gain", "duplicates"), MAX_QUERIES)


def _documents(view: SessionView) -> tuple[FloatArray, Any, Any, Any]:
    """Gains, iterations, ranks and session offsets of the documents the sessions show."""
    shown = view.shown
    gain = view.gain[shown]
    iteration = view.query_pos[view.pos_query[shown]]
    per_session = np.bincount(view.pos_session[shown], minlength=view.n_sessions)
    doc_off = offsets_from_counts(per_session)
    rank = segment_ranks(view.shown_query_offsets())
    return gain, iteration, rank, doc_off


def _cube(view: SessionView, *, gamma: float, max_height: float) -> tuple[FloatArray, FloatArray]:
    gain, iteration, _, doc_off = _documents(view)
    return cube_test(gain, iteration, doc_off, view.n_queries, gamma=gamma, max_height=max_height)


def ct(view: SessionView, *, gamma: float, max_height: float) -> FloatArray:
    """Cube Test of every session of ``view``."""
    return _cube(view, gamma=gamma, max_height=max_height)[0]


def act(view: SessionView, *, gamma: float, max_height: float) -> FloatArray:
    """Average Cube Test of every session of ``view``."""
    return _cube(view, gamma=gamma, max_height=max_height)[1]


def nct(view: SessionView, *, gamma: float, max_height: float) -> FloatArray:
    """Cube Test over the jig's bound (NaN or 0 where the bound is 0)."""
    value = ct(view, gamma=gamma, max_height=max_height)
    n_it = (
        np.full(view.n_sessions, view.max_queries)
        if view.max_queries is not None
        else view.n_queries
    )
    bound = cube_test_bound(
        view.ideal_offsets,
        view.ideal_values,
        iterations=n_it,
        width=view.cutoff,
        gamma=gamma,
        max_height=max_height,
    )
    with np.errstate(divide="ignore", invalid="ignore"):
        out: FloatArray = value / bound
    out[~(bound > 0)] = 0.0 if view.empty == "zero" else np.nan
    return out


def eu(view: SessionView, *, gamma: float, p: float, a: float) -> FloatArray:
    """Expected Utility of every session of ``view`` (documents as nuggets, length 1)."""
    gain, _, rank, _ = _documents(view)
    shown = view.shown
    return expected_utility(
        gain,
        rank,
        view.doc[shown],
        view.pos_session[shown],
        view.n_sessions,
        gamma=gamma,
        p=p,
        a=a,
    )


_JIG: Final = "yang2015dd (TREC Dynamic Domain jig, github.com/trec-dd/trec-dd-jig, "
_ONE_SUBTOPIC: Final = (
    "; one subtopic: the judgments hold one grade per document, so the jig's weights "
    "1/#subtopics are 1"
)

DEFINITIONS: Final[tuple[MeasureDef, ...]] = (
    positional(
        "CT",
        "Cube Test",
        "the jig's Cube Test: the relevant gain of the session's documents, each decayed by "
        "gamma^c (c-th relevant document found) and capped at the cube's height, per "
        "iteration",
        "CT = min(H, sum_j gamma^(c_j) r_j) / (H T), T = iterations, c_j = relevant "
        "documents found up to j",
        "luo2013 (Luo, Wing, Yang & Hearst 2013, CIKM); "
        + _JIG
        + "scorer/cubetest.py cubetest_per_topic)"
        + _ONE_SUBTOPIC,
        (GAMMA, MAX_HEIGHT, *_CONFIG),
        ct,
        example="iteration 1 shows ratings (2, 0), iteration 2 (4), gamma = 0.5, H = 5: "
        "height min(5, 0.5*2 + 0.25*4) = 2, CT = 2/(5*2) = 0.2",
    ),
    positional(
        "nCT",
        "Normalised Cube Test",
        "CT divided by the jig's bound: the best CT of N iterations of X documents "
        "(N = max_queries, else the session's iterations)",
        "nCT = CT / (min(H, sum_{i=0}^{min(R, N X + 1) - 1} gamma^i r*_i) / (H N)), r* the "
        "ratings in decreasing order",
        "luo2013; " + _JIG + "scorer/cubetest.py ct_bound_per_topic: the bound's first "
        "document gets gamma^0, the run's gamma^1, as in the jig)" + _ONE_SUBTOPIC,
        (GAMMA, MAX_HEIGHT, *_CONFIG),
        nct,
        normalised=True,
        example="ratings (4, 2) judged, N = 2, X = 5, gamma = 0.5, H = 5: bound = "
        "min(5, 4 + 0.5*2)/(5*2) = 0.5; the CT example over it: 0.2/0.5 = 0.4",
    ),
    positional(
        "ACT",
        "Average Cube Test",
        "the jig's average Cube Test: the mean over the session's documents of the CT "
        "reached after each document, in its own iteration",
        "ACT = (1/D) sum_j height_j / (H t_j), t_j the iteration of document j",
        "luo2013; " + _JIG + "scorer/cubetest.py cubetest_per_topic: act)" + _ONE_SUBTOPIC,
        (GAMMA, MAX_HEIGHT, *_CONFIG),
        act,
        example="the CT example: heights 1, 1, 2 after iterations 1, 1, 2: "
        "ACT = (1/5 + 1/5 + 2/10)/3 = 0.2",
    ),
    positional(
        "EU",
        "Expected Utility",
        "the jig's Expected Utility: the expected nugget gain with diminishing returns "
        "for nuggets read again, minus the expected reading cost (stopping at each rank "
        "with probability p)",
        "EU = sum_nuggets w (1 - gamma^E)/(1 - gamma) - a sum_iterations sum_k (1-p)^(k-1), "
        "E = sum over the nugget's appearances of (1-p)^(rank-1)",
        "yang2009 (Yang & Lad 2009, ICTIR); "
        + _JIG
        + "scorer/expected_utility.py eu_per_topic; each relevant document is one nugget "
        "rated by its gain, each document has length 1: the judgments hold neither "
        "nuggets nor lengths)",
        (GAMMA, STOP, COST, *_CONFIG),
        eu,
        example="one iteration showing ratings (3, 0), p = 0.5, gamma = 0.5, a = 0.1: "
        "the nugget is read with probability 1 (worth 3 (1 - 0.5)/0.5 = 3), the cost "
        "0.1 (1 + 0.5): EU = 2.85",
    ),
)
"""The Dynamic Domain measures in the registry."""

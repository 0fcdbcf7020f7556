"""Model-based session measures: esNDCG and esNCG (Kanoulas et al. 2011), sRBP (Lipani et al. 2019).

Positional session measures (:class:`~sessionval.measures.session.PositionCompute`): each
reads the session positions of a chunk (:class:`~sessionval.measures.session.SessionView`)
after the session kernel applied the configuration's gains, duplicate policy and
cut-off ``@X``, so ``esNDCG(pref=0.9,pdown=0.7,gain=exp)@9`` is the CHIIR 2016 setting.

References
----------
Kanoulas, E., Carterette, B., Clough, P. D., Sanderson, M. (2011). Evaluating multi-query
sessions. SIGIR 2011 [kanoulas2011].

Jiang, J., Allan, J. (2016). Correlation between system and user metrics in a session.
CHIIR 2016 [jiang2016].

Lipani, A., Carterette, B., Yilmaz, E. (2019). From a user model for query sessions to
session rank biased precision (sRBP). ICTIR 2019 [lipani2019].
"""

from __future__ import annotations

from typing import Any, Final

import numpy as np

from .._types import FloatArray
from ..kernels.expected_session import expected_session_ndcg
from ..kernels.session_rbp import session_rbp
from .grammar import MeasureDef, Param
from .session import SessionView, config_params, positional

__all__ = [
    "DEFINITIONS",
]


def _probability(v: Any) -> str | None:
    return None if 0 <= float(v) <= 1 else "must be a probability in [0, 1]"


def _persistence(v: Any) -> str | None:
    return None if 0 <= float(v) < 1 else "must be in [0, 1)"


PREF: Final = Param(
    "pref",
    "float",
    0.9,
    "probability of reformulating (going on to the next query) after a query",
    check=_probability,
)
PREF_NCG: Final = Param(
    PREF.name, PREF.kind, 0.8, PREF.description, check=_probability
)  # esNCG's default: exp_chiir16.py uses ESNDCG(0.8, 0.7, False)
PDOWN: Final = Param(
    "pdown", "float", 0.7, "probability of going down to the next rank", check=_probability
)
PERSISTENCE: Final = Param(
    "p", "float", 0.8, "persistence: probability of examining one more document", check=_persistence
)
BALANCE: Final = Param(
    "b",
    "float",
    0.5,
    "balance: probability that a searcher who goes on goes down the list rather than "
    "reformulating (sRBP's b, not the rank log base of sDCG)",
    check=_probability,
)

#: The configuration parameters a positional measure reads: gains, repeats, the log's depth.
_CONFIG: Final = config_params("gain", "duplicates", "scan_depth")


def _expected(view: SessionView, *, pref: float, pdown: float, discounted: bool) -> FloatArray:
    out = expected_session_ndcg(
        view.gain[view.shown],
        view.shown_query_offsets(),
        view.session_query_offsets,
        view.ideal_offsets,
        view.ideal_values,
        pref=pref,
        pdown=pdown,
        discounted=discounted,
    )
    if view.empty == "zero":
        out[np.isnan(out)] = 0.0
    return out


def esndcg(view: SessionView, *, pref: float, pdown: float) -> FloatArray:
    """Expected session nDCG of every session of ``view`` (exact, over the browsing paths)."""
    return _expected(view, pref=pref, pdown=pdown, discounted=True)


def esncg(view: SessionView, *, pref: float, pdown: float) -> FloatArray:
    """Expected session nCG of every session of ``view`` (no discount along the path)."""
    return _expected(view, pref=pref, pdown=pdown, discounted=False)


def srbp(view: SessionView, *, p: float, b: float) -> FloatArray:
    """Session RBP of every session of ``view``; relevance = gain / gain of the top grade."""
    rel = np.clip(view.gain / view.gain_top, 0.0, 1.0) if view.gain_top > 0 else view.gain * 0
    return session_rbp(
        rel,
        view.query_pos[view.pos_query],
        view.pos_slot,
        view.pos_session,
        view.n_sessions,
        p=p,
        b=b,
    )


_KANOULAS: Final = (
    "kanoulas2011 (Kanoulas, Carterette, Clough & Sanderson 2011, SIGIR: "
    "model-based measures, expected session nDCG over browsing paths); jiang2016 (Jiang & "
    "Allan 2016, CHIIR: ESNDCG in session_metrics.py, the browsing model implemented here; "
    "their script uses esNDCG(pref=0.9,pdown=0.7) and esNCG(pref=0.8,pdown=0.7) with k = 9, "
    "estimated from 1000 sampled paths; computed exactly here)"
)
_PATH_FORMULA: Final = (
    "E over browsing paths of sum_{j<=L} g_j {d} / sum_{j<=L} g*_j {d}; a path examines rank "
    "1 of each query, goes down with pdown (to min(X, n)), then reformulates with pref or "
    "stops; L = path length, g* = the session's ideal gains"
)

DEFINITIONS: Final[tuple[MeasureDef, ...]] = (
    positional(
        "esNDCG",
        "Expected session nDCG",
        "expected nDCG of the concatenated documents a simulated searcher examines, over "
        "every browsing path (reformulate with pref, go down with pdown), each path "
        "normalised by the ideal of its length",
        _PATH_FORMULA.replace("{d}", "/log2(j+1)"),
        _KANOULAS,
        (PREF, PDOWN, *_CONFIG),
        esndcg,
        normalised=True,
        example="one query (gains 1, 0) then a repeat of the first document (1), ideal (1), "
        "pref = pdown = 0.5, no discount (esNCG): paths (d1), (d1,d1), (d1,d2), (d1,d2,d1) "
        "with probability 1/4 each and values 1, 2, 1, 2: esNCG = 1.5",
    ),
    positional(
        "esNCG",
        "Expected session nCG",
        "esNDCG without the discount along the path: the expected ratio of the examined "
        "gain to the ideal gain of the same number of documents",
        _PATH_FORMULA.replace("{d}", ""),
        _KANOULAS,
        (PREF_NCG, PDOWN, *_CONFIG),
        esncg,
        normalised=True,
        example="as esNDCG's example: 1/4 (1 + 2 + 1 + 2) = 1.5",
    ),
    positional(
        "sRBP",
        "Session rank-biased precision",
        "RBP generalised to sessions: a searcher stops with 1 - p after each document, "
        "else goes down with b or reformulates with 1 - b; relevance = gain / gain of the "
        "scale's top grade",
        "sRBP@X = (1-p) sum_m ((p-bp)/(1-bp))^(m-1) sum_{k<=X} (bp)^(k-1) r_{m,k}",
        "lipani2019 (Lipani, Carterette & Yilmaz 2019, ICTIR: the user model and "
        "sRBP; b = 1 gives RBP of the first query)",
        (PERSISTENCE, BALANCE, *_CONFIG),
        srbp,
        upper=1.0,
        example="queries (1, 0) and (1), p = 0.8, b = 0.5: bp = 0.4, (p-bp)/(1-bp) = 2/3, "
        "sRBP = 0.2 (1 + 2/3) = 1/3",
    ),
)
"""The model-based session measures in the registry."""

r"""Session measures: sDCG, nsDCG and per-session aggregates of single-query measures.

Two kinds, both declared in the registry with the one grammar:

* **session-vector measures** (``sDCG(b=2,bq=4)@10``, ``nsDCG@10``): read off one run of
  the session kernel (:func:`~sessionval.kernels.session.session_vectors`) with the
  evaluation's :class:`~sessionval.evaluation.config.SessionConfig` changed by the
  measure's parameters (``@X`` is ``cutoff``); ``compute(scores, *, empty)`` takes the
  run's :class:`SessionScores`;
* **aggregates** of a single-query measure over each session's queries
  (``last(nDCG@10)``, ``best(AP)``): ``compute(values, query_offsets)`` takes one
  value per query (the measure on each query's own logged list) and the queries of
  each session in segment layout.

Adding a measure is one declaration plus a kernel call: sDCG/q is
``MeasureDef("sDCG/q", ..., SESSION_PARAMS, lambda s, *, empty: s.final / s.n_queries,
scope="session")``; a ``mean`` aggregate is ``_aggregate("mean", ..., segment_mean)``; a
parameter of the measure's own (a patience ``p``) is a :class:`Param` without ``field``,
passed to ``compute``.

References
----------
Järvelin, K., Price, S. L., Delcambre, L. M. L., Nielsen, M. L. (2008). Discounted
cumulated gain based evaluation of multiple-query IR sessions. ECIR 2008 [jarvelin2008].
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

from .._types import FloatArray, IntArray
from ..kernels.segments import segment_last, segment_max
from .grammar import MeasureDef
from .params import SESSION_PARAMS, session_rule

__all__ = [
    "DEFINITIONS",
    "SessionScores",
    "normalise",
]


def normalise(num: FloatArray, den: FloatArray, empty: str) -> FloatArray:
    """``num / den``, with NaN (``empty="nan"``) or 0 (``"zero"``) where ``den`` is 0.

    Examples
    --------
    >>> normalise(np.array([1.0, 2.0]), np.array([2.0, 0.0]), "nan")
    array([0.5, nan])
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        out: FloatArray = num / den
    out[den == 0] = 0.0 if empty == "zero" else np.nan
    return out


@dataclass(frozen=True)
class SessionScores:
    """What a session-vector measure reads from one run of the session kernel.

    Per session: ``final`` (``S[P]``), ``ideal_final`` (``I[P]``), ``n_positions``
    (``P``) and ``query_offsets`` (the session's queries, segment layout).  Per
    query: ``dcg`` (``DCG_q[L_q]``), ``qd`` (``qd(q)``) and ``ideal_dcg``.
    """

    final: FloatArray
    ideal_final: FloatArray
    n_positions: IntArray
    query_offsets: IntArray
    dcg: FloatArray
    qd: FloatArray
    ideal_dcg: FloatArray

    @property
    def n_queries(self) -> IntArray:
        """Queries per session."""
        return np.diff(self.query_offsets)


def _final(scores: SessionScores, *, empty: str) -> FloatArray:
    return scores.final


def _normalised_final(scores: SessionScores, *, empty: str) -> FloatArray:
    return normalise(scores.final, scores.ideal_final, empty)


_SDCG_FORMULA = (
    "sDCG@X = S[P] = sum_q qd(q) DCG_q[L_q], DCG_q[i] = sum_{j<=i} G_q[j] / d(j), "
    "L_q = X (the query's slot)"
)
_JARVELIN = "jarvelin2008 (Järvelin et al. 2008, ECIR, sec. 2.2, 3.3; appendix)"

_AggregateKernel = Callable[[npt.ArrayLike, IntArray], FloatArray]


def _aggregate(
    name: str, pretty: str, description: str, formula: str, fn: _AggregateKernel
) -> MeasureDef:
    """Declare ``name(M)``: one value per session from the values of M on its queries."""
    return MeasureDef(
        name,
        pretty,
        description,
        formula,
        "jarvelin2008 (Järvelin et al. 2008, ECIR, sec. 3.2 and Figure 1: last and best "
        "queries; sec. 4: their gain as a session score); "
        "jiang2016 (Jiang & Allan 2016, CHIIR: per-session aggregates)",
        (),
        fn,
        scope="session",
        cutoff="none",
        normalised=False,
        upper=None,
        ideal_is_one=False,
        of_measure=True,
    )


DEFINITIONS: Final[tuple[MeasureDef, ...]] = (
    MeasureDef(
        "sDCG",
        "Session DCG",
        "discounted cumulated gain of the session: the queries' top-X DCG, each discounted "
        "by its position in the session (the final value S[P] of the session vector)",
        _SDCG_FORMULA,
        _JARVELIN,
        SESSION_PARAMS,
        _final,
        scope="session",
        normalised=False,
        upper=None,
        ideal_is_one=False,
        validate=session_rule(),
    ),
    MeasureDef(
        "nsDCG",
        "Normalised session DCG",
        "sDCG divided by the ideal session's sDCG (NaN or 0 where the ideal is 0)",
        "nsDCG@X = S[P] / I[P], I the ideal session built from the same slots and discounts",
        _JARVELIN,
        SESSION_PARAMS,
        _normalised_final,
        scope="session",
        validate=session_rule(),
    ),
    _aggregate(
        "last",
        "Last query",
        "the single-query measure M of the session's last query",
        "last(M) = M(q_n)",
        segment_last,
    ),
    _aggregate(
        "best",
        "Best query",
        "the single-query measure M of the session's best query by M: its maximum over "
        "the session's queries (NaN values left out)",
        "best(M) = max_q M(q)",
        segment_max,
    ),
)
"""The session measures in the registry."""

r"""Session measures: sDCG, nsDCG, sDCG/q and per-session aggregates of single-query measures.

Three kinds, all declared in the registry with the one grammar:

* **session-vector measures** (``sDCG(b=2,bq=4)@10``, ``nsDCG@10``): read off one run of
  the session kernel (:func:`~sessionval.kernels.session.session_vectors`) with the
  evaluation's :class:`~sessionval.evaluation.config.SessionConfig` changed by the
  measure's parameters (``@X`` is ``cutoff``); ``compute(scores, *, empty)`` takes the
  run's :class:`SessionScores`;
* **aggregates** of a single-query measure over each session's queries
  (``last(nDCG@10)``, ``best(AP)``): ``compute(values, query_offsets)`` takes one
  value per query (the measure on each query's own logged list) and the queries of
  each session in segment layout;
* **positional** measures (``sRBP``, ``esNDCG``, ``CT``, …, declared in
  :mod:`~sessionval.measures.session_models` and
  :mod:`~sessionval.measures.dynamic_domain`): their ``compute`` is a
  :class:`PositionCompute` whose function reads a :class:`SessionView` (the session
  positions of one chunk of whole sessions) and runs inside each chunk, so the
  positions are never kept for the whole study.

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

from .._types import BoolArray, FloatArray, IntArray
from ..errors import MeasureSpecError
from ..kernels.segments import (
    offsets_from_counts,
    segment_first,
    segment_ids,
    segment_last,
    segment_max,
    segment_min,
    segment_nanmean,
    segment_nansum,
)
from .grammar import MeasureDef, Param
from .params import SESSION_PARAMS, session_rule

__all__ = [
    "DEFINITIONS",
    "PositionCompute",
    "SessionScores",
    "SessionView",
    "config_params",
    "normalise",
    "positional",
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


@dataclass(frozen=True)
class SessionView:
    """The session positions of one chunk of whole sessions: what a positional measure reads.

    Per position (sessions one after another, queries in order, ``P`` in all):
    ``pos_query`` (chunk-local query index), ``pos_slot`` (rank in the query's slot),
    ``gain`` (credited after the duplicate policy, 0 on padding), ``shown`` (a result
    is shown there; a query's shown positions come first in its slot) and ``doc``
    (document code, −1 on padding).  Per query: ``query_session`` and ``query_pos``
    (1-based position in the session); ``slot_offsets`` (positions per query).  Per
    session: ``session_offsets`` (positions), ``ideal_offsets``/``ideal_values`` (the
    ideal gains of the session's judgment key, its first query's, in decreasing
    order).  Evaluation settings: ``gain_top`` (the gain of the scale's top grade),
    ``cutoff`` (X), ``max_queries`` and ``empty`` (the empty-ideal policy).
    """

    n_sessions: int
    session_offsets: IntArray
    slot_offsets: IntArray
    query_session: IntArray
    query_pos: IntArray
    pos_query: IntArray
    pos_slot: IntArray
    gain: FloatArray
    shown: BoolArray
    doc: IntArray
    ideal_offsets: IntArray
    ideal_values: FloatArray
    gain_top: float
    cutoff: int
    max_queries: int | None
    empty: str

    @property
    def pos_session(self) -> IntArray:
        """Session index of every position."""
        return segment_ids(self.session_offsets)

    @property
    def session_query_offsets(self) -> IntArray:
        """Queries per session (segment layout)."""
        return offsets_from_counts(np.bincount(self.query_session, minlength=self.n_sessions))

    @property
    def n_queries(self) -> IntArray:
        """Queries per session that are evaluated (at most ``max_queries``)."""
        n = np.bincount(self.query_session, minlength=self.n_sessions)
        return n if self.max_queries is None else np.minimum(n, self.max_queries)

    def shown_query_offsets(self) -> IntArray:
        """Shown results per query (segment layout over ``gain[shown]``)."""
        counts = np.bincount(self.pos_query[self.shown], minlength=self.query_pos.size)
        return offsets_from_counts(counts)


@dataclass(frozen=True)
class PositionCompute:
    """The compute of a positional session measure: ``fn(view, **params)`` per chunk.

    :func:`sessionval.evaluation.session.evaluate` runs ``fn`` inside each chunk on the
    chunk's :class:`SessionView` and concatenates the values; calling the object
    itself on a :class:`SessionScores` is an error (the positions are gone by then).
    """

    fn: Callable[..., FloatArray]

    def __call__(self, *args: object, **kwargs: object) -> FloatArray:
        """Refuse: the value comes from the chunks (see the class docstring)."""
        raise MeasureSpecError(
            "a positional session measure is computed per chunk by sessionval.evaluate"
        )


def positional(
    name: str,
    pretty: str,
    description: str,
    formula: str,
    reference: str,
    params: tuple[Param, ...],
    fn: Callable[..., FloatArray],
    *,
    example: str,
    normalised: bool = False,
    upper: float | None = None,
) -> MeasureDef:
    """Declare a positional session measure: ``fn(view, **params)`` runs on each chunk."""
    return MeasureDef(
        name,
        pretty,
        description,
        formula,
        reference,
        params,
        PositionCompute(fn),
        scope="session",
        normalised=normalised,
        upper=upper,
        ideal_is_one=False,
        example=example,
    )


def config_params(*names: str) -> tuple[Param, ...]:
    """The configuration parameters (of :data:`SESSION_PARAMS`) a measure uses, by name."""
    by_name = {p.name: p for p in SESSION_PARAMS}
    return tuple(by_name[n] for n in names)


def _final(scores: SessionScores, *, empty: str) -> FloatArray:
    return scores.final


def _per_query(scores: SessionScores, *, empty: str) -> FloatArray:
    with np.errstate(divide="ignore", invalid="ignore"):
        out: FloatArray = scores.final / scores.n_queries
    return out


def _normalised_final(scores: SessionScores, *, empty: str) -> FloatArray:
    return normalise(scores.final, scores.ideal_final, empty)


_SDCG_FORMULA = (
    "sDCG@X = S[P] = sum_q qd(q) DCG_q[L_q], DCG_q[i] = sum_{j<=i} G_q[j] / d(j), "
    "L_q = X (the query's slot)"
)
_JARVELIN = "jarvelin2008 (Järvelin et al. 2008, ECIR, sec. 2.2, 3.3; appendix)"

_AggregateKernel = Callable[[npt.ArrayLike, IntArray], FloatArray]

_JIANG_AGGREGATES = (
    "jiang2016 (Jiang & Allan 2016, CHIIR: sum, mean, max, min, first and last "
    "nDCG of a session's queries; code: SQMetric with np.sum, np.mean, np.max, np.min, "
    "first, last)"
)
_JARVELIN_AGGREGATES = (
    "jarvelin2008 (Järvelin et al. 2008, ECIR, sec. 3.2 and Figure 1: last and best "
    "queries; sec. 4: their gain as a session score); " + _JIANG_AGGREGATES
)


def _aggregate(
    name: str,
    pretty: str,
    description: str,
    formula: str,
    fn: _AggregateKernel,
    reference: str = _JIANG_AGGREGATES,
) -> MeasureDef:
    """Declare ``name(M)``: one value per session from the values of M on its queries."""
    return MeasureDef(
        name,
        pretty,
        description,
        formula,
        reference,
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
    MeasureDef(
        "sDCG/q",
        "sDCG per query",
        "sDCG divided by the session's number of queries (the per_session column "
        "sdcg_per_query under the evaluation's configuration)",
        "sDCG/q@X = S[P] / n, n the session's number of queries (NaN without queries)",
        "jiang2016 (Jiang & Allan 2016, CHIIR: sDCG/q; code: SDCGQ in session_metrics.py); "
        + _JARVELIN,
        SESSION_PARAMS,
        _per_query,
        scope="session",
        normalised=False,
        upper=None,
        ideal_is_one=False,
        validate=session_rule(),
    ),
    _aggregate(
        "last",
        "Last query",
        "the single-query measure M of the session's last query",
        "last(M) = M(q_n)",
        segment_last,
        _JARVELIN_AGGREGATES,
    ),
    _aggregate(
        "best",
        "Best query",
        "the single-query measure M of the session's best query by M: its maximum over "
        "the session's queries (NaN values left out)",
        "best(M) = max_q M(q)",
        segment_max,
        _JARVELIN_AGGREGATES,
    ),
    _aggregate(
        "first",
        "First query",
        "the single-query measure M of the session's first query",
        "first(M) = M(q_1)",
        segment_first,
    ),
    _aggregate(
        "sum",
        "Sum over queries",
        "the sum of the single-query measure M over the session's queries (NaN values left out)",
        "sum(M) = sum_q M(q)",
        segment_nansum,
    ),
    _aggregate(
        "mean",
        "Mean over queries",
        "the mean of the single-query measure M over the session's queries (NaN values left out)",
        "mean(M) = (1/n) sum_q M(q)",
        segment_nanmean,
    ),
    _aggregate(
        "max",
        "Maximum over queries",
        "the largest value of the single-query measure M over the session's queries "
        "(NaN values left out; the same as best(M))",
        "max(M) = max_q M(q)",
        segment_max,
    ),
    _aggregate(
        "min",
        "Minimum over queries",
        "the smallest value of the single-query measure M over the session's queries "
        "(NaN values left out)",
        "min(M) = min_q M(q)",
        segment_min,
    ),
)
"""The session measures in the registry."""

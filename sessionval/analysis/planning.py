r"""Planning: how many topics (or searchers) a study needs (Sakai's topic set size design).

Given a variance estimate :math:`\hat\sigma^2` of the scores (the residual variance
:math:`V_E` of a two-way ANOVA of a pilot or earlier collection, :func:`variance_estimate`),
the smallest topic set size ``n`` such that

``"paired-t"``
    a two-sided paired t test at level α detects a true difference ``min_diff`` with
    probability ``power``; the variance of a difference is :math:`2\hat\sigma^2`,
    and the power is exact under the noncentral t with :math:`\lambda =
    \sqrt n\, d / \sigma_d`;
``"anova"``
    a one-way ANOVA over ``n_systems`` systems detects a difference ``min_diff``
    between the best and the worst with probability ``power`` (Sakai's worst case:
    :math:`\lambda = n\, d^2 / (2\hat\sigma^2)`, noncentral F with :math:`m - 1` and
    :math:`m(n - 1)` degrees of freedom);
``"ci"``
    the *expected* width of the :math:`100(1-\alpha)\%` confidence interval of a
    paired difference is at most ``min_diff`` (Sakai 2016, section 3.3): with
    :math:`\sigma_t^2 = 2\hat\sigma^2` the variance of a difference, the interval is
    :math:`\bar d \pm t_{\alpha/2}(n-1)\, s_t/\sqrt n` and its half width is random
    through :math:`s_t`, whose expectation is :math:`c(n)\,\sigma_t` with
    :math:`c(n) = \sqrt{2/(n-1)}\;\Gamma(n/2)/\Gamma((n-1)/2)` (< 1; the planning
    factor), so the requirement is

    .. math::

        2\, t_{\alpha/2}(n-1)\, c(n)\, \sigma_t / \sqrt n \le d,

    searched upwards from Sakai's normal approximation
    :math:`n_0 = 4 z_{\alpha/2}^2 \sigma_t^2 / d^2` (the same requirement with
    :math:`z` for :math:`t` and :math:`c = 1`).  Without :math:`c(n)` (the width of an
    interval whose SD were known) one or two more topics would be asked for.

The same holds for searchers of a user study: estimate the variance from a pilot's
searcher × system means (:func:`sessionval.analysis.compare.blocked_scores`).

References
----------
Sakai (2016), "Topic set size design", Information Retrieval Journal 19(3), 256-283
[sakai2016]; Sakai (2018), *Laboratory Experiments in Information Retrieval*, ch. 6.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, Literal, TypeAlias

import numpy as np
import pandas as pd

from ..errors import StatisticsError
from .multiple import two_way_anova
from .score_table import levels_in_order, score_matrix

__all__ = [
    "PLANNING_METHODS",
    "PlanningMethod",
    "expected_ci_width",
    "power",
    "topic_set_size",
    "topic_set_table",
    "variance_estimate",
]

PlanningMethod: TypeAlias = Literal["paired-t", "anova", "ci"]
PLANNING_METHODS: Final[tuple[PlanningMethod, ...]] = ("paired-t", "anova", "ci")
_MAX_N: Final = 1_000_000
#: Noncentrality beyond which the power is 1 in double precision (scipy's noncentral t
#: and F return NaN for a noncentrality of ~1e11 and more, as a variance near 0 gives).
_MAX_NONCENTRALITY: Final = 1e6


def power(
    n: int,
    min_diff: float,
    variance: float,
    *,
    alpha: float = 0.05,
    method: PlanningMethod = "paired-t",
    n_systems: int = 2,
) -> float:
    """Power of the paired t test or the one-way ANOVA with ``n`` topics (module docstring).

    Examples
    --------
    >>> round(power(50, 0.1, 0.04), 3)   # sigma_d = sqrt(0.08), d/sigma_d = 0.354
    0.688
    """
    from scipy import stats

    _check(min_diff, variance, alpha, 0.5)
    if n < 2:
        return float("nan")
    if method == "paired-t":
        df = n - 1
        lam = min(np.sqrt(n) * min_diff / np.sqrt(2.0 * variance), _MAX_NONCENTRALITY)
        crit = stats.t.ppf(1.0 - alpha / 2.0, df)
        return float(stats.nct.sf(crit, df, lam) + stats.nct.cdf(-crit, df, lam))
    if method == "anova":
        if n_systems < 2:
            raise StatisticsError(f"the ANOVA needs n_systems >= 2, got {n_systems}")
        df1, df2 = n_systems - 1, n_systems * (n - 1)
        lam = min(n * min_diff**2 / (2.0 * variance), _MAX_NONCENTRALITY)
        return float(stats.ncf.sf(stats.f.ppf(1.0 - alpha, df1, df2), df1, df2, lam))
    raise StatisticsError(f"power is defined for paired-t and anova, not {method!r}")


def _check(min_diff: float, variance: float, alpha: float, target: float) -> None:
    if not min_diff > 0:
        raise StatisticsError(f"min_diff must be > 0, got {min_diff}")
    if not variance > 0:
        raise StatisticsError(f"variance must be > 0, got {variance}")
    for name, v in (("alpha", alpha), ("power", target)):
        if not 0.0 < v < 1.0:
            raise StatisticsError(f"{name} must be in (0, 1), got {v}")


def topic_set_size(
    min_diff: float,
    variance: float,
    *,
    alpha: float = 0.05,
    power_target: float = 0.8,
    method: PlanningMethod = "paired-t",
    n_systems: int = 2,
) -> int:
    r"""Smallest number of topics that meets the requirement of ``method``.

    Parameters
    ----------
    min_diff
        The minimum difference to detect (``paired-t``, ``anova``) or the largest
        confidence interval width allowed (``ci``).
    variance
        :math:`\hat\sigma^2`, the variance of one system's scores after removing topic
        and system effects (:func:`variance_estimate`).
    alpha
        Significance level (two-sided).
    power_target
        Required power ``1 - beta`` (``paired-t``, ``anova``).
    method
        ``"paired-t"``, ``"anova"`` or ``"ci"``.
    n_systems
        Systems compared (``anova``).

    Returns
    -------
    int

    Examples
    --------
    >>> topic_set_size(0.1, 0.04), topic_set_size(0.1, 0.04, method="anova", n_systems=5)
    (65, 97)
    >>> topic_set_size(0.1, 0.04, method="ci")   # n_0 = 4 * 1.96^2 * 0.08 / 0.01 = 122.9
    125
    """
    _check(min_diff, variance, alpha, power_target)
    if method not in PLANNING_METHODS:
        raise StatisticsError(f"unknown method {method!r}; allowed: {', '.join(PLANNING_METHODS)}")

    def ok(n: int) -> bool:
        if method == "ci":
            return bool(expected_ci_width(n, variance, alpha=alpha) <= min_diff)
        return power(n, min_diff, variance, alpha=alpha, method=method, n_systems=n_systems) >= (
            power_target
        )

    # the requirement is monotone in n: double, then bisect
    hi = 2
    while not ok(hi):
        hi *= 2
        if hi > _MAX_N:
            raise StatisticsError(
                f"{method}: more than {_MAX_N} topics would be needed for min_diff "
                f"{min_diff:g} with variance {variance:.4g}"
            )
    lo = max(2, hi // 2)
    if ok(lo):
        return lo
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
    return hi


def expected_ci_width(n: int, variance: float, *, alpha: float = 0.05) -> float:
    r"""Expected width of the paired-difference interval with ``n`` topics (Sakai 2016, 3.3).

    :math:`2\, t_{\alpha/2}(n-1)\, c(n) \sqrt{2\hat\sigma^2 / n}` with the planning factor
    :math:`c(n) = \sqrt{2/(n-1)}\;\Gamma(n/2)/\Gamma((n-1)/2)`, the expectation of the
    sample SD over the population SD (module docstring).

    Examples
    --------
    >>> round(expected_ci_width(125, 0.04), 5), round(expected_ci_width(124, 0.04), 5)
    (0.09994, 0.10035)
    """
    from scipy import stats
    from scipy.special import gammaln

    if n < 2:
        return float("inf")
    factor = np.sqrt(2.0 / (n - 1)) * np.exp(gammaln(n / 2.0) - gammaln((n - 1) / 2.0))
    t = stats.t.ppf(1.0 - alpha / 2.0, n - 1)
    return float(2.0 * t * factor * np.sqrt(2.0 * variance / n))


def variance_estimate(scores: pd.DataFrame, measure: str | None = None) -> tuple[float, int, int]:
    """Residual variance :math:`V_E` of the two-way ANOVA (topic × system) of a score table.

    Sakai's recommended estimate for topic set size design: the scores of a set of
    systems on the topics all of them were scored on.

    Returns
    -------
    variance, n_topics, n_systems
    """
    x, _, _ = score_matrix(scores, measure)
    xb = x[~np.isnan(x).any(axis=1)]
    an = two_way_anova(xb)
    return an.ms_residual, an.n_topics, an.n_systems


def topic_set_table(
    scores: pd.DataFrame,
    min_diffs: Sequence[float],
    *,
    measures: Sequence[str] | None = None,
    alpha: float = 0.05,
    power_target: float = 0.8,
    method: PlanningMethod = "paired-t",
    n_systems: int | None = None,
) -> pd.DataFrame:
    """Topics needed per measure and minimum difference, the variance estimated from ``scores``.

    Raises
    ------
    StatisticsError
        A measure's residual variance is 0 (rounding noise counts as 0,
        :func:`~sessionval.analysis.multiple.two_way_anova`): it cannot plan anything.

    Returns
    -------
    pandas.DataFrame
        ``measure, method, variance, n_topics_pilot, n_systems, alpha, power,
        min_diff, n_required``.
    """
    wanted = list(measures) if measures is not None else levels_in_order(scores["measure"])
    rows = []
    for m in wanted:
        var, n_t, n_s = variance_estimate(scores, m)
        if var == 0.0:
            raise StatisticsError(
                f"{m}: the residual variance of the {n_s} runs over {n_t} topics is 0 (the "
                "runs are identical, or differ by the same amount on every topic): it "
                "estimates no variance to plan with; use runs that differ from topic to topic"
            )
        k = n_systems if n_systems is not None else n_s
        for d in min_diffs:
            n = topic_set_size(
                d, var, alpha=alpha, power_target=power_target, method=method, n_systems=k
            )
            rows.append((m, method, var, n_t, k, alpha, power_target, float(d), n))
    return pd.DataFrame(
        rows,
        columns=[
            "measure",
            "method",
            "variance",
            "n_topics_pilot",
            "n_systems",
            "alpha",
            "power",
            "min_diff",
            "n_required",
        ],
    )

r"""Many systems at once: two-way ANOVA and Friedman, Tukey HSD, multiplicity corrections.

All functions take a complete block design: a matrix ``X`` of scores, topics (or
searchers) × systems, with a score in every cell.  The topic is a *block*: every
procedure here removes the topic effect before it compares systems, so paired scores
are never treated as independent groups (the mistake of running a one-way Tukey HSD
on IR scores, which inflates the error variance by the topic variance).

:func:`two_way_anova`
    Two-way ANOVA without replication (topic × system), the model behind Tukey HSD
    and Sakai's effect size :math:`ES_{E2}` (Sakai 2018, ch. 4-5).
:func:`friedman`
    Friedman's rank test over systems blocked by topic (Järvelin & Kekäläinen 2002,
    Table 2), through ``scipy.stats.friedmanchisquare``.
:func:`tukey_hsd`
    Tukey's HSD from the two-way ANOVA: :math:`q = |\bar x_a - \bar x_b| /
    \sqrt{V_E/n}` against the studentised range with :math:`m` systems and
    :math:`(m-1)(n-1)` degrees of freedom; simultaneous intervals
    :math:`\bar x_a - \bar x_b \pm q_{1-\alpha} \sqrt{V_E/n}`.
:func:`randomised_tukey_hsd`
    Carterette's (2012) randomised Tukey HSD: in each of :math:`B` trials every topic's
    scores are permuted over the systems, and a pair's p-value is the share of trials
    whose range of system means (max − min) reaches the pair's observed difference,
    with the ``+1`` correction :math:`(1 + \#)/(B + 1)`.  The family-wise error rate is
    controlled over all pairs at once.
:func:`adjust_p`
    Holm, Bonferroni and Benjamini-Hochberg adjustment (``statsmodels``).

References
----------
Carterette (2012), ACM TOIS 30(1), 4 [carterette2012]; Sakai (2018), *Laboratory
Experiments in Information Retrieval*, Springer, ch. 4-5 [sakai2018]; Järvelin &
Kekäläinen (2002), TOIS 20(4), Table 2 [jarvelin2002]; Holm (1979); Benjamini &
Hochberg (1995).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal, TypeAlias

import numpy as np
import numpy.typing as npt

from .._types import FloatArray, IntArray
from ..errors import StatisticsError

__all__ = [
    "CORRECTIONS",
    "ROUNDING",
    "Anova",
    "Correction",
    "RandomisedTukey",
    "adjust_p",
    "all_tied",
    "check_finite",
    "friedman",
    "pair_indices",
    "randomised_tukey_hsd",
    "studentized_range_sf",
    "tukey_hsd",
    "two_way_anova",
]

Correction: TypeAlias = Literal["holm", "bonferroni", "bh", "tukey-hsd", "none"]
CORRECTIONS: Final[tuple[Correction, ...]] = ("holm", "bonferroni", "bh", "tukey-hsd", "none")
_STATSMODELS_METHOD: Final = {"holm": "holm", "bonferroni": "bonferroni", "bh": "fdr_bh"}
#: Above this many p-values the studentised range tail is interpolated on a grid.
_EXACT_PTUKEY: Final = 64
#: Cells (systems × topics × trials) per block of the randomised Tukey HSD shuffle.
_SHUFFLE_BLOCK: Final = 1 << 22
#: A sum of squares whose root mean square per cell is below this share of the largest
#: absolute score is rounding noise (about 4,500 units of double rounding; the mean of a
#: billion scores carries at most ~30): it counts as 0.
ROUNDING: Final = 1e-12


def adjust_p(p: npt.ArrayLike, method: Correction) -> FloatArray:
    """Adjust a family of p-values for multiplicity (NaN p-values stay NaN, outside the family).

    Parameters
    ----------
    p
        The p-values of one family (e.g. every pair of systems of one measure).
    method
        ``"holm"`` (step-down, controls the family-wise error rate), ``"bonferroni"``,
        ``"bh"`` (Benjamini-Hochberg, controls the false discovery rate) or
        ``"none"``.  ``"tukey-hsd"`` is not an adjustment of p-values: use
        :func:`tukey_hsd` or :func:`randomised_tukey_hsd`.

    Returns
    -------
    numpy.ndarray
        Adjusted p-values, in the input order.

    Examples
    --------
    >>> adjust_p([0.01, 0.04, 0.03, float("nan")], "holm").tolist()
    [0.03, 0.06, 0.06, nan]
    """
    values = np.asarray(p, dtype=np.float64)
    if method == "none":
        return values.copy()
    if method not in _STATSMODELS_METHOD:
        raise StatisticsError(
            f"cannot adjust p-values by {method!r}; use holm, bonferroni, bh or none"
        )
    from statsmodels.stats.multitest import multipletests

    out = np.full(values.shape, np.nan)
    ok = ~np.isnan(values)
    if ok.any():
        out[ok] = (
            _holm(values[ok])
            if method == "holm"
            else multipletests(values[ok], method=_STATSMODELS_METHOD[method])[1]
        )
    return out


def _holm(p: FloatArray) -> FloatArray:
    """Holm's (1979) step-down adjustment: ``max_{j <= i} min(1, (m - j + 1) p_(j))``.

    Computed here rather than by ``multipletests``, whose Holm branch runs a full
    ``gc.collect()`` on every call (about 70 ms with pandas and statsmodels loaded: most
    of the time of a two-system comparison).  Same values (tested against it).

    Examples
    --------
    >>> _holm(np.array([0.01, 0.04, 0.03])).tolist()
    [0.03, 0.06, 0.06]
    """
    order = np.argsort(p, kind="stable")
    steps = np.maximum.accumulate(p[order] * np.arange(len(p), 0, -1))
    out = np.empty_like(p)
    out[order] = np.minimum(steps, 1.0)
    return out


@dataclass(frozen=True)
class Anova:
    r"""Two-way ANOVA without replication, systems × topics (Sakai 2018, section 4.3).

    Attributes
    ----------
    n_topics, n_systems
        Block design size.
    system_means, topic_means, grand_mean
        The means.
    ss_system, ss_topic, ss_residual
        Variations :math:`S_A = n \sum_i (\bar x_{i\cdot} - \bar x)^2`,
        :math:`S_B = m \sum_j (\bar x_{\cdot j} - \bar x)^2`,
        :math:`S_E = \sum_{ij} (x_{ij} - \bar x_{i\cdot} - \bar x_{\cdot j} + \bar x)^2`;
        a variation at the level of rounding noise is 0 (:func:`two_way_anova`).
    df_system, df_topic, df_residual
        :math:`m - 1`, :math:`n - 1`, :math:`(m-1)(n-1)`.
    ms_system, ms_topic, ms_residual
        Variances :math:`V = S / \phi`; :math:`V_E` is the residual variance.
    f_system, f_topic, p_system, p_topic
        F statistics and their p-values: a factor without variation has F = 0 and
        p = 1; one with variation over a residual of 0 has F = inf and p = 0.
    """

    n_topics: int
    n_systems: int
    system_means: FloatArray
    topic_means: FloatArray
    grand_mean: float
    ss_system: float
    ss_topic: float
    ss_residual: float
    df_system: int
    df_topic: int
    df_residual: int
    ms_system: float
    ms_topic: float
    ms_residual: float
    f_system: float
    f_topic: float
    p_system: float
    p_topic: float


def check_finite(xm: FloatArray, what: str) -> None:
    """Refuse an infinite score in a topics × systems matrix (NaN, a missing score, passes).

    One infinite score makes a mean, a variance and every statistic built on them
    infinite or NaN: a Tukey HSD would call every pair of its system significant.

    Raises
    ------
    StatisticsError
        Naming the first infinite cell (topic row and system column, from 0) and the count.

    Examples
    --------
    >>> check_finite(np.array([[0.5, np.inf]]), "paired tests")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    sessionval.errors.StatisticsError: paired tests: score at topic row 0, system column 1 ...
    """
    bad = np.isinf(xm)
    if bad.any():
        row, col = np.argwhere(bad)[0]
        raise StatisticsError(
            f"{what}: score at topic row {row}, system column {col} is {xm[row, col]}; scores "
            f"must be finite numbers (NaN marks a missing score), {int(bad.sum())} cell(s) "
            "are not"
        )


def _block(x: npt.ArrayLike, what: str, *, min_systems: int = 2) -> FloatArray:
    xm = np.asarray(x, dtype=np.float64)
    if xm.ndim != 2:
        raise StatisticsError(f"{what}: scores must be a topics x systems matrix")
    check_finite(xm, what)
    if np.isnan(xm).any():
        raise StatisticsError(
            f"{what}: needs a score for every topic and system (a complete block design); "
            f"{int(np.isnan(xm).sum())} cell(s) are missing"
        )
    if xm.shape[0] < 2 or xm.shape[1] < min_systems:
        raise StatisticsError(
            f"{what}: needs at least 2 topics and {min_systems} systems, got "
            f"{xm.shape[0]} topics and {xm.shape[1]} systems"
        )
    return xm


def two_way_anova(x: npt.ArrayLike) -> Anova:
    r"""Two-way ANOVA without replication of a topics × systems matrix.

    A sum of squares is computed from differences of means, so systems identical on
    every topic leave rounding noise of about :math:`10^{-30}` in :math:`S_A` and
    :math:`S_E` alike, and their ratio is an arbitrary F (37.8 for three copies of a
    run).  A variation whose root mean square per cell,
    :math:`\sqrt{S/(nm)}`, is at most :data:`ROUNDING` × the largest :math:`|x_{ij}|`
    is therefore taken as exactly 0.  Then a factor without variation has F = 0 and
    p = 1 (no evidence of a difference, as a paired test of identical systems), and a
    factor with variation over a residual of 0 has F = inf and p = 0.

    Examples
    --------
    Sakai's (2018) Table 5.1 example (20 topics, 3 systems):

    >>> a = [.70, .30, .20, .60, .40, .40, .00, .70, .10, .30,
    ...      .50, .40, .00, .60, .50, .30, .10, .50, .20, .10]
    >>> b = [.50, .10, .00, .20, .40, .30, .00, .50, .30, .30,
    ...      .40, .40, .10, .40, .20, .10, .10, .60, .30, .20]
    >>> c = [.00, .00, .20, .10, .30, .30, .10, .20, .40, .40,
    ...      .40, .30, .30, .20, .20, .20, .10, .50, .40, .30]
    >>> r = two_way_anova(np.column_stack([a, b, c]))
    >>> round(r.ss_system, 4), round(r.ss_topic, 4), round(r.ss_residual, 4)
    (0.1083, 1.0293, 0.8317)
    >>> round(r.ms_residual, 4), round(r.f_system, 3), round(r.p_system, 3)
    (0.0219, 2.475, 0.098)

    Three copies of one system:

    >>> r = two_way_anova(np.column_stack([a, a, a]))
    >>> r.ss_system, r.ss_residual, r.f_system, r.p_system
    (0.0, 0.0, 0.0, 1.0)
    """
    from scipy import stats

    xm = _block(x, "two-way ANOVA")
    n, m = xm.shape
    sys_m = xm.mean(axis=0)
    top_m = xm.mean(axis=1)
    # the grand mean as the mean of the system means: identical columns give S_A = 0 exactly
    grand = float(sys_m.mean())
    floor = n * m * (ROUNDING * float(np.abs(xm).max())) ** 2
    ss_a, ss_b, ss_e = (
        ss if ss > floor else 0.0
        for ss in (
            float(n * np.sum((sys_m - grand) ** 2)),
            float(m * np.sum((top_m - grand) ** 2)),
            float(np.sum((xm - sys_m[None, :] - top_m[:, None] + grand) ** 2)),
        )
    )
    df_a, df_b, df_e = m - 1, n - 1, (m - 1) * (n - 1)
    v_a, v_b, v_e = ss_a / df_a, ss_b / df_b, ss_e / df_e
    f_a, f_b = _f_ratio(v_a, v_e), _f_ratio(v_b, v_e)
    return Anova(
        n_topics=n,
        n_systems=m,
        system_means=sys_m,
        topic_means=top_m,
        grand_mean=grand,
        ss_system=ss_a,
        ss_topic=ss_b,
        ss_residual=ss_e,
        df_system=df_a,
        df_topic=df_b,
        df_residual=df_e,
        ms_system=v_a,
        ms_topic=v_b,
        ms_residual=v_e,
        f_system=f_a,
        f_topic=f_b,
        p_system=float(stats.f.sf(f_a, df_a, df_e)),
        p_topic=float(stats.f.sf(f_b, df_b, df_e)),
    )


def _f_ratio(v: float, v_e: float) -> float:
    """F = V / V_E, with 0 for a factor without variation and inf over a residual of 0."""
    if v == 0.0:
        return 0.0
    return v / v_e if v_e > 0.0 else float("inf")


def friedman(x: npt.ArrayLike) -> tuple[float, float]:
    """Friedman's test over the systems (columns) blocked by topic (rows): ``(chi2, p)``.

    Needs at least three systems (``scipy.stats.friedmanchisquare``); ties within a
    topic get mid-ranks and the statistic is tie-corrected.  When every topic ties all
    the systems (identical systems) the ranks carry no information and the tie
    correction is 0/0 (scipy: NaN and a warning): every permutation of the ranks is the
    observed one, so the result is ``(0.0, 1.0)``, no evidence of a difference.

    Examples
    --------
    >>> friedman([[0.5, 0.5, 0.5], [0.2, 0.2, 0.2]])
    (0.0, 1.0)
    """
    from scipy import stats

    xm = _block(x, "Friedman test", min_systems=3)
    if all_tied(xm):
        return 0.0, 1.0
    res = stats.friedmanchisquare(*xm.T)
    return float(res.statistic), float(res.pvalue)


def all_tied(x: FloatArray) -> bool:
    """Whether every row of a topics × systems matrix gives all systems one score."""
    return bool((x == x[:, :1]).all())


def studentized_range_sf(q: npt.ArrayLike, k: int, df: float) -> FloatArray:
    """Upper tail of the studentised range distribution (``scipy.stats.studentized_range``).

    scipy integrates numerically (milliseconds per value); beyond a few dozen values
    the tail is evaluated on a grid of 64 points over the range of ``q`` and
    interpolated monotonically in ``log p`` (PCHIP), which keeps about four
    significant digits.
    """
    from scipy import interpolate, stats

    qv = np.asarray(q, dtype=np.float64)
    out = np.full(qv.shape, np.nan)
    ok = np.isfinite(qv)
    out[np.isposinf(qv)] = 0.0
    vals = qv[ok]
    if vals.size == 0:
        return out
    uniq = np.unique(vals)
    if uniq.size <= _EXACT_PTUKEY:
        res = stats.studentized_range.sf(uniq, k, df)
    else:
        grid = np.unique(np.quantile(uniq, np.linspace(0.0, 1.0, _EXACT_PTUKEY)))
        tail = np.clip(stats.studentized_range.sf(grid, k, df), 1e-300, 1.0)
        res = np.exp(interpolate.PchipInterpolator(grid, np.log(tail))(uniq))
    out[ok] = np.clip(res, 0.0, 1.0)[np.searchsorted(uniq, vals)]
    return out


def tukey_hsd(
    x: npt.ArrayLike, a: npt.ArrayLike, b: npt.ArrayLike, *, confidence: float = 0.95
) -> tuple[FloatArray, FloatArray, FloatArray, Anova]:
    """Tukey HSD for the pairs ``(a, b)`` of columns, blocked by topic.

    Returns
    -------
    q, p_adjusted, half_width, anova
        Studentised range statistic and family-wise p-value of each pair, the half
        width of the simultaneous ``confidence`` interval of ``mean_a - mean_b``, and
        the two-way ANOVA it rests on.

    Examples
    --------
    >>> x = np.array([[.5, .4, .1], [.6, .3, .2], [.2, .2, .0], [.9, .5, .4]])
    >>> q, p, half, anova = tukey_hsd(x, [0, 0, 1], [1, 2, 2])
    >>> [round(float(v), 3) for v in p]
    [0.064, 0.004, 0.101]
    """
    from scipy import stats

    xm = _block(x, "Tukey HSD")
    anova = two_way_anova(xm)
    n, m = xm.shape
    ia = np.asarray(a, dtype=np.int64).ravel()
    ib = np.asarray(b, dtype=np.int64).ravel()
    diff = anova.system_means[ia] - anova.system_means[ib]
    se = np.sqrt(anova.ms_residual / n)
    with np.errstate(divide="ignore", invalid="ignore"):
        q = np.where(se > 0, np.abs(diff) / se, np.where(diff == 0, 0.0, np.inf))
    p = studentized_range_sf(q, m, anova.df_residual)
    q_crit = float(stats.studentized_range.ppf(confidence, m, anova.df_residual))
    return q, p, np.full(ia.size, q_crit * se), anova


@dataclass(frozen=True)
class RandomisedTukey:
    """Result of :func:`randomised_tukey_hsd`.

    Attributes
    ----------
    p_adjusted
        Family-wise p-value of each pair.
    half_width
        Half width of the simultaneous interval: the ``confidence`` quantile of the
        randomisation distribution of the range of system means.
    ranges
        That distribution (one value per trial).
    """

    p_adjusted: FloatArray
    half_width: FloatArray
    ranges: FloatArray


def randomised_tukey_hsd(
    x: npt.ArrayLike,
    a: npt.ArrayLike,
    b: npt.ArrayLike,
    *,
    resamples: int = 10_000,
    seed: int = 0,
    confidence: float = 0.95,
) -> RandomisedTukey:
    r"""Carterette's (2012) randomised Tukey HSD for the pairs ``(a, b)``, blocked by topic.

    In each trial the scores of every topic are shuffled over the systems (a uniform
    permutation per topic, Fisher-Yates, vectorised over trials and topics), the
    system means are recomputed and their range :math:`\max - \min` recorded.  A
    pair's p-value is :math:`(1 + \#\{range^* \ge |\bar x_a - \bar x_b|\})/(B + 1)`.

    Parameters
    ----------
    x
        Complete topics × systems matrix.
    a, b
        Column indices of the pairs to report.
    resamples
        ``B``, the trials.
    seed
        Seed of the local generator.
    confidence
        Level of the simultaneous intervals.

    Returns
    -------
    RandomisedTukey

    Examples
    --------
    Two systems: the test is Fisher's randomisation test of the mean difference.

    >>> x = np.array([[.5, .4], [.6, .3], [.2, .1], [.9, .5], [.4, .2]])
    >>> r = randomised_tukey_hsd(x, [0], [1], resamples=2000, seed=1)
    >>> 0.05 < float(r.p_adjusted[0]) < 0.08   # exact randomisation p: 2/32 = 0.0625
    True
    """
    xm = _block(x, "randomised Tukey HSD")
    if resamples < 1:
        raise StatisticsError(f"resamples must be >= 1, got {resamples}")
    n, m = xm.shape
    ia = np.asarray(a, dtype=np.int64).ravel()
    ib = np.asarray(b, dtype=np.int64).ravel()
    rng = np.random.default_rng(seed)
    ranges = np.empty(resamples)
    # trials and topics in blocks of about _SHUFFLE_BLOCK cells (bounded memory)
    columns = max(1, _SHUFFLE_BLOCK // m)
    trials = min(resamples, columns)
    topics = max(1, min(n, columns // trials))
    xt = np.ascontiguousarray(xm.T)  # systems x topics
    for t0 in range(0, resamples, trials):
        nb = min(trials, resamples - t0)
        sums = np.zeros((m, nb))
        for i0 in range(0, n, topics):
            nt = min(topics, n - i0)
            sums += _shuffled_sums(xt[:, i0 : i0 + nt], nb, rng)
        ranges[t0 : t0 + nb] = (sums.max(axis=0) - sums.min(axis=0)) / n
    means = xm.mean(axis=0)
    observed = np.abs(means[ia] - means[ib])
    tol = 1e-12 * max(1.0, float(np.abs(xm).max()))
    order = np.sort(ranges)
    count = resamples - np.searchsorted(order, observed - tol, side="left")
    p = (count + 1.0) / (resamples + 1.0)
    half = float(np.quantile(ranges, confidence))
    return RandomisedTukey(p_adjusted=p, half_width=np.full(ia.size, half), ranges=ranges)


def _shuffled_sums(xt: FloatArray, trials: int, rng: np.random.Generator) -> FloatArray:
    """Per trial, the system sums of ``xt`` (systems × topics) with each topic's column shuffled.

    One uniform permutation per (topic, trial) by Fisher-Yates over the system axis:
    ``m - 1`` vectorised swap steps over every (topic, trial) column at once.
    """
    m, nt = xt.shape
    cols = nt * trials
    dtype = np.int16 if m < (1 << 15) else np.int64
    idx = np.repeat(np.arange(m, dtype=dtype)[:, None], cols, axis=1)  # column = topic, trial
    flat = idx.reshape(-1)
    col = np.arange(cols, dtype=np.int64)
    at = np.empty(cols, dtype=np.int64)
    for j in range(m - 1, 0, -1):
        # swap row j with a uniform row r <= j of each column (flat index r * cols + column)
        np.multiply(rng.integers(0, j + 1, size=cols), cols, out=at)
        at += col
        tmp = flat[at]
        flat[at] = idx[j]
        idx[j] = tmp
    out = np.zeros((m, trials))
    for i in range(nt):  # topics of the block (a handful): gather each topic's shuffled scores
        out += xt[:, i][idx[:, i * trials : (i + 1) * trials]]
    return out


def pair_indices(n_systems: int, baseline: int | None = None) -> tuple[IntArray, IntArray]:
    """Column pairs: every ``(i, j)``, ``i < j``, or every ``(i, baseline)``, ``i != baseline``.

    Examples
    --------
    >>> [x.tolist() for x in pair_indices(3)]
    [[0, 0, 1], [1, 2, 2]]
    >>> [x.tolist() for x in pair_indices(3, baseline=0)]
    [[1, 2], [0, 0]]
    """
    if baseline is None:
        a, b = np.triu_indices(n_systems, 1)
        return a.astype(np.int64), b.astype(np.int64)
    others = np.array([i for i in range(n_systems) if i != baseline], dtype=np.int64)
    return others, np.full(others.size, baseline, dtype=np.int64)

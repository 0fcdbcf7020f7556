r"""Paired tests of many pairs of systems at once, on a topic × system score matrix.

Every test here takes the same input, a matrix ``X`` (topics × systems, NaN where a
system has no score for a topic) and the pairs to test (column indices ``a``, ``b``),
and returns one value per pair.  A pair's *topics* are those scored for both systems
(as trec_eval pairs them); pairs with the same topics are tested together, so the
common case (every run scored on every topic) is one group and each resampling test
is a handful of matrix products.

Tests (two-sided):

``paired-t``
    Student's t on the differences :math:`z_i = x_{ai} - x_{bi}`:
    :math:`t = \bar z / (s_z/\sqrt n)`, :math:`n - 1` degrees of freedom.
``wilcoxon``
    Wilcoxon signed-rank test (``scipy.stats.wilcoxon``: zero differences dropped,
    exact null distribution for small samples without ties, normal approximation
    otherwise), the method chosen for each pair alone.
``sign``
    Sign test: the number of topics with :math:`z_i > 0` among the non-zero
    differences, exact binomial with :math:`p = 1/2`.
``randomisation``
    Fisher's paired randomisation (permutation) test of the mean difference: under
    :math:`H_0` each topic's difference is as likely to have either sign.  Exact (all
    :math:`2^n` sign vectors) when :math:`2^n \le \max(B, 2^{16})`; otherwise
    :math:`B` random sign vectors with the ``+1`` correction
    :math:`p = (1 + \#\{|T^*| \ge |T|\})/(B + 1)` (Phipson & Smyth 2010), so a
    Monte Carlo p-value is never 0.
``bootstrap``
    The paired bootstrap test with the studentised statistic of Sakai (2007, section
    4.3, Figs. 5-6): :math:`t(z) = \bar z/(\bar\sigma/\sqrt n)`, the centred differences
    :math:`w_i = z_i - \bar z` (which obey :math:`H_0`) resampled :math:`B` times with
    replacement, and the achieved significance level
    :math:`ASL = \#\{|t(w^{*b})| \ge |t(z)|\}/B`, as in the paper.

Confidence intervals of the mean difference: the Student t interval for every test
but ``bootstrap``, which gives the studentised bootstrap (bootstrap-t) interval from
the same resamples, :math:`[\bar z - \hat t_{1-\alpha/2}\, s_z/\sqrt n,\ \bar z -
\hat t_{\alpha/2}\, s_z/\sqrt n]` with :math:`\hat t` the quantiles of :math:`t(w^*)`.

A bootstrap resample without spread (one topic repeated) has :math:`t^* = \pm\infty`,
counted by the ASL (or 0/0, undefined and not counted); an infinite quantile leaves the
interval undefined (NaN).

When every difference of a pair is zero there is no evidence of a difference: the
statistic is 0 and p is 1 under every test.

References
----------
Sakai (2007), IPSJ TOD 48(SIG9), section 4.3 [sakai2007]; Smucker, Allan & Carterette
(2007), CIKM [smucker2007]; Efron & Tibshirani (1993), *An Introduction to the
Bootstrap*; Phipson & Smyth (2010), Stat. Appl. Genet. Mol. Biol. 9(1) [phipson2010].
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final, Literal, TypeAlias

import numpy as np
import numpy.typing as npt

from .._types import BoolArray, FloatArray, IntArray
from ..errors import StatisticsError
from ..progress import NO_PROGRESS, Progress, ProgressLike, as_progress
from .multiple import ROUNDING, check_finite

__all__ = [
    "EXACT_RANDOMISATION_MAX",
    "TESTS",
    "PairedResult",
    "PairedTest",
    "bootstrap_counts",
    "paired_tests",
    "sign_vectors",
    "studentised_resamples",
]

PairedTest: TypeAlias = Literal["paired-t", "wilcoxon", "sign", "randomisation", "bootstrap"]
TESTS: Final[tuple[PairedTest, ...]] = (
    "paired-t",
    "wilcoxon",
    "sign",
    "randomisation",
    "bootstrap",
)

#: The randomisation test enumerates every sign vector when there are at most this many.
EXACT_RANDOMISATION_MAX: Final = 1 << 16
#: Pairs per block of the resampling products (bounds memory: resamples × block floats).
_PAIR_BLOCK: Final = 256


@dataclass(frozen=True)
class PairedResult:
    """Per pair: sample size, means, test statistic, p-value and interval of the difference.

    Attributes
    ----------
    n
        Topics scored for both systems.
    mean_a, mean_b
        Means of the two systems over those topics.
    diff, sd
        Mean and standard deviation (``ddof=1``) of the differences ``a - b``.
    statistic, p
        The test's statistic and two-sided p-value (NaN when ``n`` is too small).
    ci_low, ci_high
        Confidence interval of the mean difference.
    ci_method
        How the interval was computed (``"t"`` or ``"bootstrap-t"``).
    exact
        Whether the p-value is exact (randomisation by enumeration, exact Wilcoxon
        or sign test) rather than a Monte Carlo or asymptotic value.
    """

    n: IntArray
    mean_a: FloatArray
    mean_b: FloatArray
    diff: FloatArray
    sd: FloatArray
    statistic: FloatArray
    p: FloatArray
    ci_low: FloatArray
    ci_high: FloatArray
    ci_method: str
    exact: BoolArray


def sign_vectors(n: int) -> FloatArray:
    """Every vector of ``n`` signs (±1), one per row, ``2**n`` rows; the identity first.

    Examples
    --------
    >>> sign_vectors(2).tolist()
    [[1.0, 1.0], [-1.0, 1.0], [1.0, -1.0], [-1.0, -1.0]]
    """
    bits = (np.arange(1 << n, dtype=np.int64)[:, None] >> np.arange(n, dtype=np.int64)) & 1
    out: FloatArray = 1.0 - 2.0 * bits.astype(np.float64)
    return out


def _groups(valid: BoolArray, a: IntArray, b: IntArray) -> Iterator[tuple[BoolArray, IntArray]]:
    """Pairs with the same topics: ``(topic mask, pair indices)``, in order of first pair."""
    both = valid[:, a] & valid[:, b]  # topics x pairs
    packed = np.packbits(both, axis=0).T  # one row of bytes per pair
    _, first, inverse = np.unique(packed, axis=0, return_index=True, return_inverse=True)
    inverse = inverse.ravel()
    for g in np.argsort(first, kind="stable"):
        pairs = np.flatnonzero(inverse == g)
        yield both[:, pairs[0]], pairs.astype(np.int64)


def _t_interval(diff: FloatArray, sd: FloatArray, n: FloatArray, confidence: float) -> FloatArray:
    """Half-width of the Student t interval of a mean (NaN below two values)."""
    from scipy import stats

    with np.errstate(invalid="ignore", divide="ignore"):
        q = stats.t.ppf((1.0 + confidence) / 2.0, n - 1.0)
        half: FloatArray = np.where(n >= 2, q * sd / np.sqrt(n), np.nan)
    return half


def paired_tests(
    x: npt.ArrayLike,
    a: npt.ArrayLike,
    b: npt.ArrayLike,
    *,
    test: PairedTest = "paired-t",
    confidence: float = 0.95,
    resamples: int = 10_000,
    seed: int = 0,
    progress: ProgressLike = None,
) -> PairedResult:
    """Test each pair ``(a[k], b[k])`` of columns of ``x`` over their common topics.

    Parameters
    ----------
    x
        Scores, topics × systems; NaN where a system has no score for a topic.
    a, b
        Column indices of the pairs (``diff = a - b``).
    test
        ``"paired-t"``, ``"wilcoxon"``, ``"sign"``, ``"randomisation"`` or
        ``"bootstrap"`` (module docstring).
    confidence
        Level of the intervals, in (0, 1).
    resamples
        ``B``: random sign vectors (randomisation) or bootstrap samples.
    seed
        Seed of the resampling tests (one local generator; the same seed gives the
        same p-values).
    progress
        Advanced by the pairs tested, a block of pairs at a time in the resampling
        tests (:class:`~sessionval.progress.Progress`; the caller starts the phase).

    Returns
    -------
    PairedResult

    Raises
    ------
    StatisticsError
        Unknown test, ``confidence`` outside (0, 1), ``resamples < 1``, a pair
        index out of range, or an infinite score.

    Examples
    --------
    Four topics, two systems; the t test agrees with ``scipy.stats.ttest_rel``:

    >>> x = np.array([[0.5, 0.4], [0.6, 0.3], [0.2, 0.2], [0.9, 0.5]])
    >>> r = paired_tests(x, [0], [1])
    >>> round(float(r.diff[0]), 3), round(float(r.p[0]), 4)
    (0.2, 0.1162)

    The randomisation test enumerates the 16 sign vectors (exact): only the observed
    signs and their reverse reach ``|sum| = 0.8`` (twice each: topic 3's difference is 0):

    >>> r = paired_tests(x, [0], [1], test="randomisation")
    >>> float(r.p[0]), bool(r.exact[0])
    (0.25, True)
    """
    if test not in TESTS:
        raise StatisticsError(f"unknown test {test!r}; allowed: {', '.join(TESTS)}")
    if not 0.0 < confidence < 1.0:
        raise StatisticsError(f"confidence must be in (0, 1), got {confidence}")
    if resamples < 1:
        raise StatisticsError(f"resamples must be >= 1, got {resamples}")
    xm = np.asarray(x, dtype=np.float64)
    if xm.ndim != 2:
        raise StatisticsError(f"scores must be a topics x systems matrix, got shape {xm.shape}")
    check_finite(xm, "paired tests")
    ia = np.asarray(a, dtype=np.int64).ravel()
    ib = np.asarray(b, dtype=np.int64).ravel()
    k = xm.shape[1]
    if ia.size != ib.size or np.any((ia < 0) | (ia >= k) | (ib < 0) | (ib >= k)):
        raise StatisticsError(f"pairs must index the {k} systems, got a={ia}, b={ib}")
    n_pairs = ia.size
    out = {
        name: np.full(n_pairs, np.nan)
        for name in ("mean_a", "mean_b", "diff", "sd", "statistic", "p", "ci_low", "ci_high")
    }
    n = np.zeros(n_pairs, dtype=np.int64)
    exact = np.zeros(n_pairs, dtype=bool)
    rng = np.random.default_rng(seed)
    valid = ~np.isnan(xm)
    tally = _Tally(as_progress(progress))
    for topics, pairs in _groups(valid, ia, ib):
        xg = np.nan_to_num(xm[topics])  # systems outside the group's pairs may have NaN
        ga, gb = ia[pairs], ib[pairs]
        ng = xg.shape[0]
        n[pairs] = ng
        before = tally.done
        if ng == 0:
            tally.advance(pairs.size)
            continue
        xa, xb = xg[:, ga], xg[:, gb]
        z = xa - xb
        out["mean_a"][pairs] = xa.mean(axis=0)
        out["mean_b"][pairs] = xb.mean(axis=0)
        zbar = z.mean(axis=0)
        out["diff"][pairs] = zbar
        sd = _spread(z.std(axis=0, ddof=1), xg) if ng >= 2 else np.full(pairs.size, np.nan)
        out["sd"][pairs] = sd
        half = _t_interval(zbar, sd, np.full(pairs.size, float(ng)), confidence)
        out["ci_low"][pairs] = zbar - half
        out["ci_high"][pairs] = zbar + half
        group = _Group(x=xg, a=ga, b=gb, z=z, tally=tally)
        stat, p, ex, ci = _GROUP_TESTS[test](group, rng, resamples, confidence)
        tally.advance(pairs.size - (tally.done - before))  # what the test did not count
        out["statistic"][pairs] = stat
        out["p"][pairs] = p
        exact[pairs] = ex
        if ci is not None:
            out["ci_low"][pairs], out["ci_high"][pairs] = ci
        # no difference at all: no evidence against H0, under every test
        null = np.all(z == 0.0, axis=0)
        out["statistic"][pairs[null]] = 0.0
        out["p"][pairs[null]] = 1.0
    return PairedResult(
        n=n,
        ci_method="bootstrap-t" if test == "bootstrap" else "t",
        exact=exact,
        **out,
    )


# --------------------------------------------------------------------------------------------
# one function per test: (group, rng, B, confidence) -> (statistic, p, exact, optional CI)


@dataclass
class _Tally:
    """The pairs tested so far, passed on to a progress (a resampling test counts blocks)."""

    shown: Progress = NO_PROGRESS
    done: int = 0

    def advance(self, n: int) -> None:
        self.shown.advance(n)
        self.done += n


@dataclass(frozen=True)
class _Group:
    """Pairs with the same topics: scores (topics x systems), pair columns, differences."""

    x: FloatArray
    a: IntArray
    b: IntArray
    z: FloatArray
    tally: _Tally


_Interval: TypeAlias = tuple[FloatArray, FloatArray]
_GroupResult: TypeAlias = tuple[FloatArray, FloatArray, BoolArray, _Interval | None]


def _t_test(g: _Group, rng: np.random.Generator, resamples: int, confidence: float) -> _GroupResult:
    """Student's paired t test (t = mean / (sd / sqrt n), n - 1 df)."""
    from scipy import stats

    ga, z = g.a, g.z
    n = z.shape[0]
    if n < 2:
        return _nan_result(ga.size)
    zbar = z.mean(axis=0)
    sd = _spread(z.std(axis=0, ddof=1), g.x)
    with np.errstate(invalid="ignore", divide="ignore"):
        # the same difference on every topic: no spread, t = +-inf (p = 0), not the
        # +-1e16 that rounding noise in the SD would give (0/0 when it is 0: see below)
        t = np.where(sd > 0, zbar / (sd / np.sqrt(n)), np.sign(zbar) * np.inf)
    p = 2.0 * stats.t.sf(np.abs(t), n - 1)
    return t, p, np.zeros(ga.size, dtype=bool), None


def _wilcoxon(
    g: _Group, rng: np.random.Generator, resamples: int, confidence: float
) -> _GroupResult:
    """Wilcoxon signed-rank test (scipy; zero differences dropped), its method chosen per pair.

    scipy's ``method="auto"`` looks for zeros and ties over the whole array of a 2-D
    call, so one pair's p-value would depend on the other pairs tested with it.  Each
    pair gets the method scipy's rule gives it alone: more than 50 topics, normal
    approximation; no zero and no tied ``|z|``, the exact distribution; else up to 13
    topics, the permutation distribution over all ``2^n`` signs (exact too); else
    normal.  One 2-D call per method.
    """
    from scipy import stats

    ga, z = g.a, g.z
    n = z.shape[0]
    stat = np.full(ga.size, np.nan)
    p = np.full(ga.size, np.nan)
    exact = np.zeros(ga.size, dtype=bool)
    live = np.count_nonzero(z, axis=0) > 0
    zeros = np.any(z == 0.0, axis=0)
    mags = np.sort(np.abs(z), axis=0)
    ties = np.any(mags[1:] == mags[:-1], axis=0) if n > 1 else np.zeros(ga.size, dtype=bool)
    plain = ~(zeros | ties)
    if n > 50:
        methods = [("asymptotic", live)]
    else:
        # "auto" on pairs that all have zeros or ties and n <= 13: scipy's permutation test
        permutation = "auto" if n <= 13 else "asymptotic"
        methods = [("exact", live & plain), (permutation, live & ~plain)]
    for method, chosen in methods:
        if chosen.any():
            res = stats.wilcoxon(z[:, chosen], axis=0, zero_method="wilcox", method=method)
            stat[chosen] = res.statistic
            p[chosen] = res.pvalue
            exact[chosen] = method != "asymptotic"
    return stat, p, exact, None


def _sign(g: _Group, rng: np.random.Generator, resamples: int, confidence: float) -> _GroupResult:
    """Sign test: positives among non-zero differences, exact binomial(1/2), two-sided."""
    from scipy import stats

    z = g.z
    pos = np.count_nonzero(z > 0, axis=0)
    neg = np.count_nonzero(z < 0, axis=0)
    m = pos + neg
    k = np.minimum(pos, neg)
    with np.errstate(invalid="ignore"):
        p = np.minimum(1.0, 2.0 * stats.binom.cdf(k, m, 0.5))
    p = np.where(m > 0, p, np.nan)
    return pos.astype(np.float64), p, m > 0, None


def _randomisation(
    g: _Group, rng: np.random.Generator, resamples: int, confidence: float
) -> _GroupResult:
    """Fisher's paired randomisation test of the mean difference (exact or +1 Monte Carlo).

    The permuted sums of a pair are linear in the scores, ``S @ z = S @ x_a - S @ x_b``,
    so one product ``S @ X`` over the systems serves every pair of the group.
    """
    xg, ga, gb, z = g.x, g.a, g.b, g.z
    n = z.shape[0]
    is_exact = (1 << min(n, 62)) <= max(resamples, EXACT_RANDOMISATION_MAX)
    if is_exact:
        signs = sign_vectors(n)
    else:
        signs = rng.integers(0, 2, size=(resamples, n), dtype=np.int8).astype(np.float64)
        signs = 1.0 - 2.0 * signs
    perm = signs @ xg  # (resamples or 2^n) x systems
    observed = z.sum(axis=0)
    # a permuted sum equal to the observed one must count although it was summed in
    # another order: compare with a relative tolerance
    tol = 1e-10 * np.maximum(np.abs(z).sum(axis=0), 1e-300)
    count = np.zeros(ga.size, dtype=np.int64)
    for sl in _blocks(ga.size):
        t_star = np.abs(perm[:, ga[sl]] - perm[:, gb[sl]])
        count[sl] = np.count_nonzero(t_star >= np.abs(observed[sl]) - tol[sl], axis=0)
        g.tally.advance(t_star.shape[1])
    total = float(signs.shape[0]) if is_exact else resamples + 1.0
    p = np.asarray((count + (0.0 if is_exact else 1.0)) / total, dtype=np.float64)
    mean: FloatArray = z.mean(axis=0)
    return mean, p, np.full(ga.size, is_exact), None


def bootstrap_counts(n: int, resamples: int, rng: np.random.Generator) -> FloatArray:
    """Topic counts of ``resamples`` bootstrap samples of ``n`` topics (Sakai 2007, Fig. 5).

    Row ``b`` counts how often each topic was drawn into :math:`Q^{*b}` (``n`` draws
    with replacement); the rows sum to ``n``.

    Examples
    --------
    >>> c = bootstrap_counts(5, 3, np.random.default_rng(0))
    >>> c.shape, c.sum(axis=1).tolist()
    ((3, 5), [5.0, 5.0, 5.0])
    """
    draws = rng.integers(0, n, size=(resamples, n))
    flat = (np.arange(resamples, dtype=np.int64)[:, None] * n + draws).ravel()
    counts: FloatArray = (
        np.bincount(flat, minlength=resamples * n).reshape(resamples, n).astype(np.float64)
    )
    return counts


def studentised_resamples(
    x: FloatArray, a: IntArray, b: IntArray, counts: FloatArray
) -> Iterator[tuple[slice, FloatArray, FloatArray]]:
    r"""The bootstrap replicates of Sakai's paired test, pairs in blocks.

    For every resample (row of ``counts``) and pair: the mean :math:`\bar w^{*b}` of the
    resampled centred differences :math:`w = z - \bar z` and the studentised
    statistic :math:`t(w^{*b}) = \bar w^{*b} / (\bar\sigma^{*b}/\sqrt n)` (Sakai 2007,
    Figs. 5-6).  The sums over a resample are ``counts @ w`` and ``counts @ w**2``; the
    first is shared by every pair (``counts @ x_a - counts @ x_b - n * zbar``).

    Yields
    ------
    pairs, t_star, mean_star
        A slice of the pairs and, for them, ``(resamples, pairs)`` arrays.
    """
    n = x.shape[0]
    cx = counts @ x  # resamples x systems
    # the sums of squares are the costly product (resamples x topics x pairs): single
    # precision on the centred differences (no cancellation; counts are exact in float32)
    # keeps about 7 digits of each variance at twice the speed
    counts32 = counts.astype(np.float32)
    z = x[:, a] - x[:, b]
    zbar = z.mean(axis=0)
    noise = ROUNDING * float(np.abs(x).max()) if x.size else 0.0
    for sl in _blocks(a.size):
        s1 = cx[:, a[sl]] - cx[:, b[sl]] - n * zbar[sl]  # sum of c * w
        w = z[:, sl] - zbar[sl]
        s2 = (counts32 @ (w**2).astype(np.float32)).astype(np.float64)  # sum of c * w^2
        spread = s2 - s1**2 / n  # n - 1 times the resample's variance
        # where single precision cannot resolve the spread (a resample of one topic, or
        # nearly: n = 2 or 3), it is recomputed exactly in two passes; rounding noise
        # would otherwise give a t* of +-1e3 or more
        rb, rk = np.nonzero(spread <= 1e-4 * s2)
        if rb.size:
            dev = w[:, rk].T - (s1[rb, rk] / n)[:, None]
            spread[rb, rk] = np.einsum("ij,ij->i", counts[rb], dev**2)
        mean = s1 / n
        mean[np.abs(mean) <= noise] = 0.0
        var = np.where(spread > n * noise**2, spread, 0.0) / (n - 1)
        with np.errstate(invalid="ignore", divide="ignore"):
            # no spread: t* is +-inf (counted by the ASL), or 0/0 when w* = 0 (undefined)
            t_star = np.where(var > 0, mean / np.sqrt(var / n), np.sign(mean) * np.inf)
        t_star[(var == 0) & (mean == 0)] = np.nan
        yield sl, t_star, mean


def _bootstrap(
    g: _Group, rng: np.random.Generator, resamples: int, confidence: float
) -> _GroupResult:
    """Sakai's (2007) paired bootstrap test, studentised statistic, and the bootstrap-t interval."""
    xg, ga, gb, z = g.x, g.a, g.b, g.z
    n = z.shape[0]
    if n < 2:
        return _nan_result(ga.size)
    counts = bootstrap_counts(n, resamples, rng)
    zbar = z.mean(axis=0)
    sd = z.std(axis=0, ddof=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        t_obs = zbar / (sd / np.sqrt(n))
    stat_abs = np.abs(t_obs)
    count = np.zeros(ga.size, dtype=np.int64)
    lo_q = np.full(ga.size, np.nan)
    hi_q = np.full(ga.size, np.nan)
    alpha = 1.0 - confidence
    for sl, t_star, _ in studentised_resamples(xg, ga, gb, counts):
        # |t*| >= |t(z)| counts, with the ASL of Fig. 6 (count / B); an undefined t* (a
        # resample of one repeated topic with w = 0) does not
        count[sl] = np.count_nonzero(np.abs(t_star) >= stat_abs[sl], axis=0)
        lo_q[sl], hi_q[sl] = _quantiles(t_star, alpha)
        g.tally.advance(t_star.shape[1])
    p = count / resamples
    se = sd / np.sqrt(n)
    # an infinite quantile (more than alpha/2 of the resamples without spread): no interval
    with np.errstate(invalid="ignore"):
        ci = (
            np.where(np.isfinite(hi_q), zbar - hi_q * se, np.nan),
            np.where(np.isfinite(lo_q), zbar - lo_q * se, np.nan),
        )
    return t_obs, p, np.zeros(ga.size, dtype=bool), ci


def _quantiles(t_star: FloatArray, alpha: float) -> tuple[FloatArray, FloatArray]:
    """The alpha/2 and 1 - alpha/2 quantiles of each column, NaN resamples left out.

    numpy's linear interpolation (method 7) on the sorted values, without numpy's
    ``inf - inf`` warnings: a quantile that falls on or next to an infinite t* (many
    resamples without spread, a handful of topics) is that infinity.
    """
    ordered = np.sort(t_star, axis=0)  # NaN last
    m = np.count_nonzero(~np.isnan(t_star), axis=0)
    cols = np.arange(t_star.shape[1])
    out = []
    for prob in (alpha / 2, 1 - alpha / 2):
        h = np.maximum(m - 1, 0) * prob
        lo = np.floor(h).astype(np.int64)
        hi = np.minimum(lo + 1, np.maximum(m - 1, 0))
        g = h - lo
        a, b = ordered[lo, cols], ordered[hi, cols]
        with np.errstate(invalid="ignore"):
            linear = a + (b - a) * g
        q = np.where(
            np.isfinite(a) & np.isfinite(b),
            linear,
            np.where((g == 0) | (a == -np.inf), a, np.where(b == np.inf, b, np.nan)),
        )
        out.append(np.where(m > 0, q, np.nan))
    return out[0], out[1]


def _blocks(n: int) -> Iterator[slice]:
    for start in range(0, n, _PAIR_BLOCK):
        yield slice(start, min(n, start + _PAIR_BLOCK))


def _spread(sd: FloatArray, x: FloatArray) -> FloatArray:
    """The SDs of the differences, rounding noise counted as 0.

    Differences that are the same on every topic (``0.7 - 0.6`` and ``0.2 - 0.1``)
    differ in their last bits, so their SD is ~1e-17 instead of 0 and a paired t of
    ~1e16 would follow.  As the two-way ANOVA does with its sums of squares
    (:data:`~sessionval.analysis.multiple.ROUNDING`), an SD at most ``ROUNDING`` × the
    largest absolute score is exactly 0.

    Examples
    --------
    >>> x = np.array([[0.7, 0.6], [0.2, 0.1], [0.9, 0.8]])
    >>> z = x[:, 0] - x[:, 1]
    >>> bool(z.std(ddof=1) > 0), float(_spread(z.std(ddof=1, keepdims=True), x)[0])
    (True, 0.0)
    """
    noise = ROUNDING * float(np.abs(x).max()) if x.size else 0.0
    return np.where(sd <= noise, 0.0, sd)


def _nan_result(n_pairs: int) -> _GroupResult:
    nan = np.full(n_pairs, np.nan)
    return nan, nan.copy(), np.zeros(n_pairs, dtype=bool), None


_GROUP_TESTS: Final = {
    "paired-t": _t_test,
    "wilcoxon": _wilcoxon,
    "sign": _sign,
    "randomisation": _randomisation,
    "bootstrap": _bootstrap,
}

"""Paired tests of many pairs at once, against scipy and against the papers' procedures.

References: scipy.stats (ttest_rel, wilcoxon, binomtest, permutation_test); Sakai (2007,
004) section 4.3, Figs. 5-6 (the studentised paired bootstrap test), re-run literally.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats

from sessionval.analysis.paired import TESTS, paired_tests, sign_vectors
from sessionval.errors import StatisticsError


def _scores(n: int = 30, k: int = 4, seed: int = 3) -> np.ndarray:
    rng = np.random.default_rng(seed)
    topic = rng.random((n, 1))
    return np.clip(topic + rng.normal(0, 0.15, (n, k)) + np.linspace(0, 0.1, k), 0, 1)


def test_paired_t_matches_scipy_ttest_rel_with_its_interval():
    x = _scores()
    a, b = np.triu_indices(4, 1)
    r = paired_tests(x, a, b, test="paired-t", confidence=0.9)
    for k, (i, j) in enumerate(zip(a, b, strict=True)):
        ref = stats.ttest_rel(x[:, i], x[:, j])
        ci = ref.confidence_interval(0.9)
        assert r.statistic[k] == pytest.approx(ref.statistic)
        assert r.p[k] == pytest.approx(ref.pvalue)
        assert (r.ci_low[k], r.ci_high[k]) == pytest.approx((ci.low, ci.high))
        assert r.diff[k] == pytest.approx(np.mean(x[:, i] - x[:, j]))
    assert r.ci_method == "t"


def test_wilcoxon_and_sign_tests_match_scipy():
    x = np.round(_scores(n=25), 2)  # rounded: zero differences and ties occur
    a, b = np.triu_indices(4, 1)
    w = paired_tests(x, a, b, test="wilcoxon")
    s = paired_tests(x, a, b, test="sign")
    for k, (i, j) in enumerate(zip(a, b, strict=True)):
        d = x[:, i] - x[:, j]
        ref = stats.wilcoxon(x[:, i], x[:, j])
        assert (w.statistic[k], w.p[k]) == pytest.approx((ref.statistic, ref.pvalue))
        npos, nneg = int((d > 0).sum()), int((d < 0).sum())
        assert s.statistic[k] == npos
        assert s.p[k] == pytest.approx(stats.binomtest(npos, npos + nneg).pvalue)


@pytest.mark.parametrize("n", [9, 13, 20, 45, 60])
def test_wilcoxon_chooses_exact_or_normal_per_pair_as_scipy_does_for_it_alone(n):
    # issue 23 item 6: scipy's "auto" on a 2-D call looked for ties and zeros over every
    # pair, so a pair's p-value changed with the runs compared along with it
    rng = np.random.default_rng(n)
    x = rng.random((n, 1)) + rng.normal(0, 0.1, (n, 2))  # continuous: no ties, no zeros
    coarse = np.round(x[:, :1] * 4) / 4
    x = np.hstack([x, coarse, coarse + (rng.random((n, 1)) < 0.5) * 0.25])
    a, b = np.array([0, 0, 2, 1]), np.array([1, 2, 3, 3])
    together = paired_tests(x, a, b, test="wilcoxon")
    alone = paired_tests(x[:, :2], [0], [1], test="wilcoxon")
    assert together.p[0] == alone.p[0]
    for k, (i, j) in enumerate(zip(a, b, strict=True)):
        ref = stats.wilcoxon(x[:, i], x[:, j])
        assert (together.statistic[k], together.p[k]) == pytest.approx((ref.statistic, ref.pvalue))
    assert bool(together.exact[0]) == (n <= 50)


def test_exact_randomisation_matches_scipy_permutation_test_and_enumeration():
    x = _scores(n=11, k=3)
    a, b = np.array([0, 0, 1]), np.array([1, 2, 2])
    r = paired_tests(x, a, b, test="randomisation")
    assert r.exact.all()
    for k, (i, j) in enumerate(zip(a, b, strict=True)):
        ref = stats.permutation_test(
            (x[:, i], x[:, j]),
            lambda u, v: np.mean(u - v),
            permutation_type="samples",
            n_resamples=np.inf,
        )
        assert r.p[k] == pytest.approx(ref.pvalue)
        # and by brute force over the 2^11 sign vectors (the identity included)
        d = x[:, i] - x[:, j]
        sums = [abs(np.dot(s, d)) for s in itertools.product((1, -1), repeat=d.size)]
        assert r.p[k] == pytest.approx(np.mean(np.array(sums) >= abs(d.sum()) - 1e-12))


def test_monte_carlo_randomisation_uses_the_plus_one_correction():
    x = _scores(n=40, k=2)
    b_res = 999
    r = paired_tests(x, [1], [0], test="randomisation", resamples=b_res, seed=5)
    assert not r.exact[0]
    # the same draws, literally: p = (1 + #{|T*| >= |T|}) / (B + 1)
    rng = np.random.default_rng(5)
    signs = 1.0 - 2.0 * rng.integers(0, 2, size=(b_res, 40), dtype=np.int8)
    d = x[:, 1] - x[:, 0]
    count = np.count_nonzero(np.abs(signs @ d) >= abs(d.sum()) - 1e-12)
    assert r.p[0] == pytest.approx((count + 1) / (b_res + 1))
    assert r.p[0] > 0  # never 0, however strong the difference


def test_bootstrap_is_sakai_figs_5_and_6_literally():
    """004, Figs. 5-6: resample topics, w* from w = z - mean(z), ASL = #{|t(w*)| >= |t(z)|}/B."""
    x = _scores(n=20, k=2, seed=11)
    b_res = 500
    r = paired_tests(x, [1], [0], test="bootstrap", resamples=b_res, seed=2)
    z = x[:, 1] - x[:, 0]
    n = z.size
    t_z = z.mean() / (z.std(ddof=1) / np.sqrt(n))
    w = z - z.mean()
    draws = np.random.default_rng(2).integers(0, n, size=(b_res, n))
    count = 0
    t_star = []
    for q in draws:  # Fig. 5: Q*b, then w*b
        wb = w[q]
        t = wb.mean() / (wb.std(ddof=1) / np.sqrt(n))  # Fig. 6
        t_star.append(t)
        count += abs(t) >= abs(t_z)
    assert r.statistic[0] == pytest.approx(t_z)
    assert r.p[0] == pytest.approx(count / b_res)
    # bootstrap-t interval from the same resamples
    lo, hi = np.quantile(t_star, [0.025, 0.975])
    se = z.std(ddof=1) / np.sqrt(n)
    assert (r.ci_low[0], r.ci_high[0]) == pytest.approx((z.mean() - hi * se, z.mean() - lo * se))
    assert r.ci_method == "bootstrap-t"


def test_sakai_fig5_worked_example_of_a_resample():
    """004: w = (.2, 0, .1, .4, 0), Q* = (001, 003, 001, 002, 005) gives w* = (.2, .1, .2, 0, 0)."""
    w = np.array([0.2, 0.0, 0.1, 0.4, 0.0])
    q = np.array([0, 2, 0, 1, 4])
    assert w[q].tolist() == [0.2, 0.1, 0.2, 0.0, 0.0]
    # the test's count form: the resample's sums are counts @ w and counts @ w**2
    counts = np.bincount(q, minlength=5).astype(float)
    assert counts @ w == pytest.approx(w[q].sum())
    assert counts @ w**2 == pytest.approx((w[q] ** 2).sum())


@pytest.mark.parametrize("test", TESTS)
def test_identical_systems_are_never_significant(test):
    x = _scores(n=15, k=2)
    x[:, 1] = x[:, 0]
    r = paired_tests(x, [0], [1], test=test, resamples=200)
    assert r.p[0] == 1.0
    assert r.statistic[0] == 0.0


@pytest.mark.parametrize("test", TESTS)
def test_fixed_seed_reproduces_exactly_and_topic_offsets_change_nothing(test):
    x = _scores(n=60, k=5)
    a, b = np.triu_indices(5, 1)
    r1 = paired_tests(x, a, b, test=test, resamples=300, seed=9)
    r2 = paired_tests(x, a, b, test=test, resamples=300, seed=9)
    np.testing.assert_array_equal(r1.p, r2.p)
    # adding a per-topic constant (a harder or easier topic) changes no difference
    shifted = x + np.random.default_rng(0).normal(0, 5, (60, 1))
    r3 = paired_tests(shifted, a, b, test=test, resamples=300, seed=9)
    np.testing.assert_allclose(r3.p, r1.p, atol=1e-12)


def test_pairs_use_the_topics_scored_for_both():
    x = _scores(n=12, k=3)
    x[:3, 0] = np.nan  # system 0 lacks three topics
    x[5, 2] = np.nan
    r = paired_tests(x, [0, 0, 1], [1, 2, 2], test="randomisation")
    assert r.n.tolist() == [9, 8, 11]
    keep = ~np.isnan(x[:, 0]) & ~np.isnan(x[:, 2])
    ref = paired_tests(x[keep][:, [0, 2]], [0], [1], test="randomisation")
    assert r.p[1] == pytest.approx(ref.p[0])
    assert r.mean_a[1] == pytest.approx(x[keep, 0].mean())


def test_sign_vectors_enumerate_every_sign_pattern():
    s = sign_vectors(3)
    assert s.shape == (8, 3)
    assert {tuple(r) for r in s} == set(itertools.product((1.0, -1.0), repeat=3))
    assert s[0].tolist() == [1.0, 1.0, 1.0]


def test_bad_options_raise():
    x = _scores()
    with pytest.raises(StatisticsError, match="unknown test"):
        paired_tests(x, [0], [1], test="z")  # type: ignore[arg-type]
    with pytest.raises(StatisticsError, match="confidence"):
        paired_tests(x, [0], [1], confidence=1.0)
    with pytest.raises(StatisticsError, match="pairs must index"):
        paired_tests(x, [0], [7])


@pytest.mark.parametrize("n", [2, 3, 4, 6])
def test_bootstrap_with_a_handful_of_topics_has_no_rounding_artefacts_or_warnings(n):
    # issue 23 item 6: with n <= 3 a resample repeating one topic has no spread; single
    # precision left ~1e-7 of it, so t* was ~1e3 and the interval +-1505, with numpy's
    # inf - inf warnings beside
    import warnings

    x = np.array([[0.5, 0.1], [0.2, 0.4], [0.9, 0.3], [0.3, 0.35], [0.6, 0.2], [0.7, 0.1]])[:n]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = paired_tests(x, [0], [1], test="bootstrap", resamples=4000, seed=1)
    low, high = r.ci_low[0], r.ci_high[0]
    if n <= 3:  # most resamples have t* = +-inf: the quantiles are infinite, no interval
        assert np.isnan(low) and np.isnan(high)
    else:
        assert low < r.diff[0] < high and high - low < 10
    assert 0.0 <= r.p[0] <= 1.0
    # the ASL is Fig. 6 in exact arithmetic: a resample without spread has |t*| = inf
    z = x[:, 0] - x[:, 1]
    w = z - z.mean()
    t_z = abs(z.mean() / (z.std(ddof=1) / np.sqrt(n)))
    draws = np.random.default_rng(1).integers(0, n, size=(4000, n))
    wb = w[draws]
    spread = ((wb - wb.mean(axis=1, keepdims=True)) ** 2).sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        t_star = np.where(spread > 1e-20, wb.mean(axis=1) / np.sqrt(spread / (n - 1) / n), np.inf)
    assert r.p[0] == pytest.approx(np.count_nonzero(np.abs(t_star) >= t_z) / 4000)

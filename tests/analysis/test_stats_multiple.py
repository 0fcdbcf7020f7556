"""Two-way ANOVA, Friedman, Tukey HSD (blocked by topic), randomised Tukey HSD, corrections.

References: statsmodels (OLS + anova_lm, multipletests), scipy (friedmanchisquare,
studentized_range, tukey_hsd), Sakai (2018) Table 5.1 as quoted by elinor's tests,
Carterette (2012) for the randomised Tukey HSD procedure.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from sessionval.analysis.multiple import (
    adjust_p,
    friedman,
    pair_indices,
    randomised_tukey_hsd,
    studentized_range_sf,
    tukey_hsd,
    two_way_anova,
)
from sessionval.analysis.paired import paired_tests
from sessionval.errors import StatisticsError

# Sakai (2018), Table 5.1: 20 topics x 3 systems
SAKAI_A = [.70, .30, .20, .60, .40, .40, .00, .70, .10, .30, .50, .40, .00, .60, .50, .30, .10, .50, .20, .10]  # fmt: skip  # noqa: E501
SAKAI_B = [.50, .10, .00, .20, .40, .30, .00, .50, .30, .30, .40, .40, .10, .40, .20, .10, .10, .60, .30, .20]  # fmt: skip  # noqa: E501
SAKAI_C = [.00, .00, .20, .10, .30, .30, .10, .20, .40, .40, .40, .30, .30, .20, .20, .20, .10, .50, .40, .30]  # fmt: skip  # noqa: E501
SAKAI = np.column_stack([SAKAI_A, SAKAI_B, SAKAI_C])


def _long(x: np.ndarray) -> pd.DataFrame:
    n, k = x.shape
    return pd.DataFrame(
        {
            "topic": np.repeat([f"t{i}" for i in range(n)], k),
            "system": np.tile([f"s{j}" for j in range(k)], n),
            "value": x.ravel(),
        }
    )


def _ols_anova(x: np.ndarray) -> pd.DataFrame:
    import statsmodels.formula.api as smf
    from statsmodels.stats.anova import anova_lm

    return anova_lm(smf.ols("value ~ C(system) + C(topic)", data=_long(x)).fit())


def test_two_way_anova_matches_sakai_table_5_1_and_statsmodels():
    r = two_way_anova(SAKAI)
    # Sakai (2018), via elinor's doc tests: S_A, S_B, S_E, V_E, F, p
    assert (r.ss_system, r.ss_topic, r.ss_residual) == pytest.approx(
        (0.1083, 1.0293, 0.8317), abs=1e-4
    )
    assert r.ms_residual == pytest.approx(0.0219, abs=1e-4)
    assert r.f_system == pytest.approx(2.475, abs=1e-3)
    assert (r.p_system, r.p_topic) == pytest.approx((0.098, 0.009), abs=1e-3)
    ref = _ols_anova(SAKAI)
    assert r.ss_system == pytest.approx(ref.loc["C(system)", "sum_sq"])
    assert r.ss_residual == pytest.approx(ref.loc["Residual", "sum_sq"])
    assert r.df_residual == ref.loc["Residual", "df"]
    assert r.p_system == pytest.approx(ref.loc["C(system)", "PR(>F)"])
    assert r.p_topic == pytest.approx(ref.loc["C(topic)", "PR(>F)"])


def test_friedman_is_scipys_over_systems_blocked_by_topic():
    chi2, p = friedman(SAKAI)
    ref = stats.friedmanchisquare(SAKAI_A, SAKAI_B, SAKAI_C)
    assert (chi2, p) == pytest.approx((ref.statistic, ref.pvalue))
    with pytest.raises(StatisticsError, match="at least 2 topics and 3 systems"):
        friedman(SAKAI[:, :2])


def test_tukey_hsd_uses_the_two_way_residual_not_independent_groups():
    a, b = pair_indices(3)
    q, p, half, _ = tukey_hsd(SAKAI, a, b)
    ref = _ols_anova(SAKAI)
    mse, df = ref.loc["Residual", "mean_sq"], ref.loc["Residual", "df"]
    means = SAKAI.mean(axis=0)
    for k, (i, j) in enumerate(zip(a, b, strict=True)):
        q_ref = abs(means[i] - means[j]) / np.sqrt(mse / 20)
        assert q[k] == pytest.approx(q_ref)
        assert p[k] == pytest.approx(stats.studentized_range.sf(q_ref, 3, df), rel=1e-6)
    assert half[0] == pytest.approx(stats.studentized_range.ppf(0.95, 3, df) * np.sqrt(mse / 20))
    # a one-way Tukey HSD (systems as independent groups, what ranx does) differs: it
    # keeps the topic variance in the error term
    one_way = stats.tukey_hsd(SAKAI_A, SAKAI_B, SAKAI_C).pvalue
    assert p[1] < one_way[0, 2]


def test_blocked_procedures_ignore_topic_offsets_one_way_tukey_does_not():
    rng = np.random.default_rng(4)
    x = rng.normal(0.5, 0.1, (30, 4)) + np.array([0, 0.02, 0.05, 0.08])
    hard = x + rng.normal(0, 2.0, (30, 1))  # topics of very different difficulty
    a, b = pair_indices(4)
    np.testing.assert_allclose(tukey_hsd(hard, a, b)[1], tukey_hsd(x, a, b)[1])
    r1 = randomised_tukey_hsd(x, a, b, resamples=300, seed=1)
    r2 = randomised_tukey_hsd(hard, a, b, resamples=300, seed=1)
    np.testing.assert_allclose(r1.p_adjusted, r2.p_adjusted)
    one_way = [stats.tukey_hsd(*m.T).pvalue[0, 3] for m in (x, hard)]
    assert abs(one_way[0] - one_way[1]) > 0.1


def test_studentized_range_grid_keeps_four_digits():
    q = np.linspace(0.05, 7.0, 90)
    approx = studentized_range_sf(q, 6, 120)
    exact = stats.studentized_range.sf(q, 6, 120)
    np.testing.assert_allclose(approx, exact, rtol=2e-3, atol=1e-6)
    assert studentized_range_sf([np.inf, np.nan], 3, 10)[0] == 0.0


def test_randomised_tukey_with_two_systems_is_the_randomisation_test():
    x = SAKAI[:12, :2]
    exact = paired_tests(x, [0], [1], test="randomisation").p[0]
    r = randomised_tukey_hsd(x, [0], [1], resamples=20_000, seed=3)
    assert r.p_adjusted[0] == pytest.approx(exact, abs=0.01)


def test_randomised_tukey_procedure_of_carterette_2012():
    """Per trial, permute each topic's scores over systems; p = (1 + #{range >= |d|})/(B + 1)."""
    x = SAKAI
    a, b = pair_indices(3)
    r = randomised_tukey_hsd(x, a, b, resamples=4000, seed=7)
    means = x.mean(axis=0)
    d = np.abs(means[a] - means[b])
    count = (r.ranges[:, None] >= d[None, :] - 1e-12).sum(axis=0)
    np.testing.assert_allclose(r.p_adjusted, (count + 1) / 4001)
    # the null distribution of the range, by a literal loop with another generator,
    # agrees in distribution (Kolmogorov-Smirnov)
    rng = np.random.default_rng(99)
    lit = [np.ptp(rng.permuted(x, axis=1).mean(axis=0)) for _ in range(4000)]
    assert stats.ks_2samp(r.ranges, lit).pvalue > 0.001
    again = randomised_tukey_hsd(x, a, b, resamples=4000, seed=7)
    np.testing.assert_array_equal(again.ranges, r.ranges)


def test_adjust_p_matches_statsmodels_and_keeps_nan_out_of_the_family():
    from statsmodels.stats.multitest import multipletests

    p = np.array([0.01, 0.2, 0.03, np.nan, 0.04, 0.005])
    ok = ~np.isnan(p)
    for ours, theirs in (("holm", "holm"), ("bonferroni", "bonferroni"), ("bh", "fdr_bh")):
        out = adjust_p(p, ours)
        assert np.isnan(out[3])
        np.testing.assert_allclose(out[ok], multipletests(p[ok], method=theirs)[1])
    # Holm by hand: sorted .005 .01 .03 .04 .2 times 5 4 3 2 1, then running maxima
    assert adjust_p(p, "holm")[ok].tolist() == pytest.approx([0.04, 0.2, 0.09, 0.09, 0.025])
    np.testing.assert_array_equal(adjust_p(p, "none"), p)
    with pytest.raises(StatisticsError, match="tukey"):
        adjust_p(p, "tukey-hsd")


def test_holm_matches_statsmodels_on_ties_large_and_single_families():
    from statsmodels.stats.multitest import multipletests

    rng = np.random.default_rng(3)
    for p in (
        rng.random(40),
        np.array([0.02, 0.02, 0.5, 0.5, 0.9]),  # ties, and products above 1 clipped
        np.array([0.3]),
    ):
        np.testing.assert_allclose(adjust_p(p, "holm"), multipletests(p, method="holm")[1])


def test_incomplete_block_is_refused():
    x = SAKAI.copy()
    x[2, 1] = np.nan
    with pytest.raises(StatisticsError, match="complete block"):
        two_way_anova(x)


@pytest.mark.parametrize("copies", [3, 5])
@pytest.mark.parametrize("scale", [1.0, 1e6, 1e-6])
def test_identical_systems_have_no_variation_beyond_rounding(copies, scale):
    # the mean of 40 random scores rounds differently from the grand mean: S_A and S_E
    # were ~1e-30 each and F their arbitrary ratio (37.8, p = 3e-12)
    x = np.repeat(np.random.default_rng(0).random(40)[:, None] * scale, copies, axis=1)
    r = two_way_anova(x)
    assert (r.ss_system, r.ss_residual) == (0.0, 0.0)
    assert (r.f_system, r.p_system) == (0.0, 1.0)
    assert r.ss_topic > 0 and r.p_topic == 0.0
    # a real difference far below the scores' size is kept, as statsmodels has it
    y = x.copy()
    y[:, 0] += 1e-6 * scale * np.random.default_rng(1).random(40)
    ref = _ols_anova(y)
    assert two_way_anova(y).p_system == pytest.approx(ref.loc["C(system)", "PR(>F)"], rel=1e-6)


def test_constant_differences_have_no_residual_and_infinite_f():
    x = SAKAI[:, :1] + np.array([[0.0, 0.1, 0.3]])
    r = two_way_anova(x)
    assert r.ss_residual == 0.0 and (r.f_system, r.p_system) == (np.inf, 0.0)


def test_friedman_of_identical_systems_is_defined_without_a_warning():
    import warnings

    x = np.repeat(np.asarray(SAKAI_A)[:, None], 3, axis=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert friedman(x) == (0.0, 1.0)
    # one topic that tells the systems apart is scipy's test again
    x[0] = [0.1, 0.2, 0.3]
    assert friedman(x) == pytest.approx(tuple(stats.friedmanchisquare(*x.T)))

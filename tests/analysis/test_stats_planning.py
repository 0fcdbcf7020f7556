"""Topic set size design (Sakai 2016) against statsmodels' power calculations."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.power import FTestAnovaPower, TTestPower

from sessionval.analysis.multiple import two_way_anova
from sessionval.analysis.planning import power, topic_set_size, topic_set_table, variance_estimate
from sessionval.errors import StatisticsError


@pytest.mark.parametrize(("d", "var"), [(0.05, 0.02), (0.1, 0.04), (0.02, 0.01)])
def test_paired_t_power_and_size_match_statsmodels(d, var):
    es = d / np.sqrt(2 * var)
    assert power(40, d, var) == pytest.approx(TTestPower().power(es, nobs=40, alpha=0.05))
    n = topic_set_size(d, var, power_target=0.8)
    assert n == int(np.ceil(TTestPower().solve_power(es, alpha=0.05, power=0.8)))
    assert power(n, d, var) >= 0.8 > power(n - 1, d, var)


def test_anova_power_matches_statsmodels_one_way_anova():
    # m systems, n topics each: N = m n, Cohen's f^2 = lambda / N = d^2 / (2 m sigma^2)
    m, n, d, var = 5, 30, 0.1, 0.04
    f = np.sqrt(d**2 / (2 * m * var))
    ref = FTestAnovaPower().power(effect_size=f, nobs=m * n, alpha=0.05, k_groups=m)
    assert power(n, d, var, method="anova", n_systems=m) == pytest.approx(ref)
    size = topic_set_size(d, var, method="anova", n_systems=m)
    assert power(size, d, var, method="anova", n_systems=m) >= 0.8
    assert power(size - 1, d, var, method="anova", n_systems=m) < 0.8


def test_ci_based_size_caps_the_expected_interval_width_as_sakai_2016():
    """Sakai (2016) 3.3: E(width) = 2 t c(n) sigma_t / sqrt(n) <= d, c(n) = E(s)/sigma."""
    from math import gamma, sqrt

    def width(k: int) -> float:  # independent: math.gamma, not gammaln
        c = sqrt(2 / (k - 1)) * gamma(k / 2) / gamma((k - 1) / 2)
        return 2 * stats.t.ppf(0.975, k - 1) * c * sqrt(0.08 / k)

    n = topic_set_size(0.1, 0.04, method="ci")
    assert width(n) <= 0.1 < width(n - 1)
    assert n == 125  # the width with sigma known (c = 1) asked for 126
    # near Sakai's normal start n0 = 4 z^2 sigma_t^2 / d^2, and above it (t > z)
    n0 = 4 * stats.norm.ppf(0.975) ** 2 * 0.08 / 0.1**2
    assert n0 < n < n0 + 4
    # the planning factor c(n) < 1 and tends to 1
    c = [sqrt(2 / (k - 1)) * gamma(k / 2) / gamma((k - 1) / 2) for k in (2, 10, 100)]
    assert c[0] < c[1] < c[2] < 1 and c[2] == pytest.approx(1 - 1 / (4 * 100), abs=1e-4)


def test_variance_estimate_is_the_two_way_residual_and_table_rows():
    rng = np.random.default_rng(0)
    x = rng.random((40, 1)) + rng.normal(0, 0.1, (40, 4))
    t = pd.DataFrame({"system": np.tile(list("abcd"), 40), "topic": np.repeat(range(40), 4),
                      "measure": "AP", "value": x.ravel()})  # fmt: skip
    var, n_t, n_s = variance_estimate(t, "AP")
    assert (var, n_t, n_s) == (pytest.approx(two_way_anova(x).ms_residual), 40, 4)
    table = topic_set_table(t, [0.02, 0.05])
    assert table["n_required"].iloc[0] > table["n_required"].iloc[1]
    assert table["n_required"].iloc[1] == topic_set_size(0.05, var)


def test_bad_planning_options():
    with pytest.raises(StatisticsError, match="min_diff"):
        topic_set_size(0.0, 0.1)
    with pytest.raises(StatisticsError, match="power"):
        topic_set_size(0.1, 0.1, power_target=1.0)


def test_zero_or_tiny_variance_plans_sensibly():
    # issue 23 item 6: identical runs said "more than 1000000 topics would be needed"
    x = np.repeat(np.random.default_rng(0).random((40, 1)), 3, axis=1)
    t = pd.DataFrame({"system": np.tile(list("abc"), 40), "topic": np.repeat(range(40), 3),
                      "measure": "AP", "value": x.ravel()})  # fmt: skip
    with pytest.raises(StatisticsError, match="AP: the residual variance of the 3 runs over 40"):
        topic_set_table(t, [0.05])
    # a variance near 0 is a noncentrality beyond scipy's range: power 1, two topics
    assert power(2, 0.05, 1e-30) == 1.0
    assert power(2, 0.05, 1e-30, method="anova", n_systems=3) == 1.0
    assert topic_set_size(0.05, 1e-30) == topic_set_size(0.05, 1e-30, method="anova") == 2

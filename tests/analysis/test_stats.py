"""Per-system means with confidence intervals and paired tests, against scipy."""

from __future__ import annotations

import pytest
from scipy import stats

from sessionval.analysis.stats import paired_comparison, score_table
from sessionval.errors import SessionvalError
from tests.analysis.scores import two_system_sessions


def test_analysis_score_table_matches_scipy():
    ps = two_system_sessions()
    t = score_table(ps, measures=["nsdcg", "sdcg"], confidence=0.9)
    row = t[(t["system"] == "S2") & (t["measure"] == "sdcg")].iloc[0]
    x = ps.loc[ps["system_id"] == "S2", "sdcg"].to_numpy()
    lo, hi = stats.t.interval(0.9, len(x) - 1, loc=x.mean(), scale=stats.sem(x))
    assert row["n"] == 6
    assert row["mean"] == pytest.approx(x.mean())
    assert row["sd"] == pytest.approx(x.std(ddof=1))
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((lo, hi))
    with pytest.raises(SessionvalError, match="confidence"):
        score_table(ps, measures=["nsdcg"], confidence=1.5)
    with pytest.raises(SessionvalError, match="not in the per-session table"):
        score_table(ps, measures=["nope"])


def test_analysis_paired_comparison_matches_scipy():
    ps = two_system_sessions()
    res = paired_comparison(ps, measures=["nsdcg"], a="S1", b="S2").iloc[0]
    a = ps[ps["system_id"] == "S1"].sort_values("user_id")["nsdcg"].to_numpy()
    b = ps[ps["system_id"] == "S2"].sort_values("user_id")["nsdcg"].to_numpy()
    assert res["n_pairs"] == 6
    assert res["p_t"] == pytest.approx(stats.ttest_rel(a, b).pvalue)
    assert res["p_wilcoxon"] == pytest.approx(stats.wilcoxon(a, b).pvalue)
    with pytest.raises(SessionvalError, match="system 'S9' not found"):
        paired_comparison(ps, measures=["nsdcg"], a="S1", b="S9")

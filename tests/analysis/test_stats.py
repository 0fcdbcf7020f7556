"""Per-system means with confidence intervals and paired tests, against scipy."""

from __future__ import annotations

import pytest
from scipy import stats

from sessionval.analysis.by_design import compare_per_session
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


def _paired(*args, **kwargs):
    with pytest.warns(DeprecationWarning, match="compare_per_session"):
        return paired_comparison(*args, **kwargs)


def test_analysis_paired_comparison_matches_scipy_when_paired_by_searcher():
    ps = two_system_sessions()
    res = _paired(ps, measures=["nsdcg"], a="S1", b="S2", block="searcher").iloc[0]
    a = ps[ps["system_id"] == "S1"].sort_values("user_id")["nsdcg"].to_numpy()
    b = ps[ps["system_id"] == "S2"].sort_values("user_id")["nsdcg"].to_numpy()
    assert res["n_pairs"] == 6
    assert res["mean_diff"] == pytest.approx((a - b).mean())
    assert res["t"] == pytest.approx(stats.ttest_rel(a, b).statistic)
    assert res["p_t"] == pytest.approx(stats.ttest_rel(a, b).pvalue)
    assert res["W"] == pytest.approx(stats.wilcoxon(a, b).statistic)
    assert res["p_wilcoxon"] == pytest.approx(stats.wilcoxon(a, b).pvalue)
    # a − b: the other order turns the sign, not the p-value
    back = _paired(ps, measures=["nsdcg"], a="S2", b="S1", block="searcher").iloc[0]
    assert (back["mean_diff"], back["t"]) == pytest.approx((-res["mean_diff"], -res["t"]))
    assert back["p_t"] == pytest.approx(res["p_t"])
    with pytest.raises(SessionvalError, match="system 'S9' not found"):
        _paired(ps, measures=["nsdcg"], a="S1", b="S9")


def test_analysis_paired_comparison_follows_the_design_as_compare_per_session():
    """One implementation: the Latin square is analysed with searcher and topic blocks."""
    ps = two_system_sessions()
    res = _paired(ps, measures=["nsdcg", "sdcg"], a="S1", b="S2")
    ref = compare_per_session(ps, measures=["nsdcg", "sdcg"], correction="none")
    assert set(res["design"]) == {"within"} and set(res["block"]) == {"searcher+topic"}
    assert res["p_t"].to_numpy() == pytest.approx(ref["p"].to_numpy())
    assert res["mean_diff"].to_numpy() == pytest.approx(ref["diff"].to_numpy())
    assert res["n_pairs"].tolist() == ref["n"].tolist()
    # no pairs under the blocks model: no Wilcoxon row pretending there were
    assert res["W"].isna().all() and res["p_wilcoxon"].isna().all()
    # searchers each on one system: Welch's test, not a pairing by searcher
    between = ps[ps["user_id"].isin(["u0", "u1", "u2"]) == (ps["system_id"] == "S1")]
    row = _paired(between, measures=["nsdcg"], a="S1", b="S2").iloc[0]
    assert (row["design"], row["test"]) == ("between", "welch-t")
    xa = between.loc[between["system_id"] == "S1", "nsdcg"].to_numpy()
    xb = between.loc[between["system_id"] == "S2", "nsdcg"].to_numpy()
    assert row["p_t"] == pytest.approx(stats.ttest_ind(xa, xb, equal_var=False).pvalue)

"""compare_systems, omnibus_tests and the searcher-blocked scores of a user study."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from sessionval.analysis.compare import (
    COMPARISON_COLUMNS,
    blocked_scores,
    compare_systems,
    hedges_correction,
    omnibus_tests,
    score_matrix,
    system_means,
)
from sessionval.analysis.multiple import tukey_hsd, two_way_anova
from sessionval.analysis.paired import paired_tests
from sessionval.errors import StatisticsError
from tests.analysis.scores import two_system_sessions


def _runs(n_topics: int = 25, systems=("bm25", "dense", "rerank"), seed: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    base = rng.random(n_topics)
    rows = []
    for k, s in enumerate(systems):
        for m, shift in (("nDCG@10", 0.05), ("AP", 0.02)):
            v = np.clip(base + k * shift + rng.normal(0, 0.08, n_topics), 0, 1)
            rows.append(
                pd.DataFrame(
                    {
                        "system": s,
                        "topic": [f"q{i}" for i in range(n_topics)],
                        "measure": m,
                        "value": v,
                    }
                )
            )
    return pd.concat(rows, ignore_index=True)


def test_compare_systems_one_row_per_measure_and_pair_with_the_issue_columns():
    r = compare_systems(_runs())
    assert tuple(r.columns) == COMPARISON_COLUMNS
    assert len(r) == 2 * 3
    assert r[["measure", "a", "b"]].iloc[:3].to_numpy().tolist() == [
        ["nDCG@10", "bm25", "dense"],
        ["nDCG@10", "bm25", "rerank"],
        ["nDCG@10", "dense", "rerank"],
    ]
    row = r.iloc[1]
    t = _runs()
    x = t[(t.measure == "nDCG@10") & (t.system == "bm25")]["value"].to_numpy()
    y = t[(t.measure == "nDCG@10") & (t.system == "rerank")]["value"].to_numpy()
    assert row["p"] == pytest.approx(stats.ttest_rel(x, y).pvalue)
    assert row["effect_size"] == pytest.approx(np.mean(x - y) / np.std(x - y, ddof=1))
    assert row["effect_size_kind"] == "sakai_dz"
    # Holm over the three pairs of the measure
    from statsmodels.stats.multitest import multipletests

    fam = r[r.measure == "nDCG@10"]
    np.testing.assert_allclose(fam["p_adjusted"], multipletests(fam["p"], method="holm")[1])
    assert (fam["significant"] == (fam["p_adjusted"] < 0.05)).all()


def test_baseline_compares_each_system_with_it_only():
    r = compare_systems(_runs(), baseline="bm25", measures=["AP"])
    assert r[["a", "b"]].to_numpy().tolist() == [["dense", "bm25"], ["rerank", "bm25"]]
    assert (r["diff"] > 0).all()
    with pytest.raises(StatisticsError, match="baseline 'x' is not a system"):
        compare_systems(_runs(), baseline="x")


def test_tukey_hsd_correction_gives_sakai_es_e2_and_simultaneous_intervals():
    t = _runs()
    r = compare_systems(t, correction="tukey-hsd", measures=["nDCG@10"])
    x, _, _ = score_matrix(t, "nDCG@10")
    an = two_way_anova(x)
    d = an.system_means[0] - an.system_means[2]
    row = r.iloc[1]
    assert row["effect_size"] == pytest.approx(d / np.sqrt(an.ms_residual))
    assert row["effect_size_kind"] == "sakai_es_e2"
    assert row["ci_method"] == "tukey-hsd"
    q = stats.studentized_range.ppf(0.95, 3, an.df_residual) * np.sqrt(an.ms_residual / 25)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((d - q, d + q))
    rr = compare_systems(t, test="randomisation", correction="tukey-hsd", resamples=500)
    assert (rr["ci_method"] == "randomised-tukey-hsd").all()
    with pytest.raises(StatisticsError, match="tukey-hsd corrects"):
        compare_systems(t, test="wilcoxon", correction="tukey-hsd")


def test_effect_size_choices():
    t = _runs()
    d = compare_systems(t, effect_size="cohen-d")
    g = compare_systems(t, effect_size="hedges-g")
    assert (d["effect_size_kind"] == "cohen_dz").all()
    assert (g["effect_size_kind"] == "hedges_gz").all()
    np.testing.assert_allclose(g["effect_size"], d["effect_size"] * hedges_correction(24.0))
    # J(24) against the usual approximation 1 - 3 / (4 * df - 1)
    assert float(hedges_correction(np.array([24.0]))[0]) == pytest.approx(1 - 3 / 95, abs=1e-4)


def test_identical_runs_give_no_significant_pair():
    t = _runs()
    copy = t[t.system == "bm25"].assign(system="bm25-copy")
    for test in ("paired-t", "wilcoxon", "sign", "randomisation", "bootstrap"):
        r = compare_systems(pd.concat([t, copy]), test=test, resamples=200)
        same = r[(r.a == "bm25") & (r.b == "bm25-copy")]
        assert (same["p"] == 1.0).all() and not same["significant"].any()


def test_score_matrix_refuses_two_scores_for_one_cell():
    t = _runs()
    with pytest.raises(StatisticsError, match="more than one score"):
        score_matrix(pd.concat([t, t.iloc[:1]]), "nDCG@10")
    with pytest.raises(StatisticsError, match="no scores of measure"):
        score_matrix(t, "P@5")


def test_omnibus_tests_are_friedman_and_the_two_way_anova():
    t = _runs()
    o = omnibus_tests(t)
    assert o["test"].tolist() == ["anova", "friedman"] * 2
    x, _, _ = score_matrix(t, "AP")
    fr = o[(o.measure == "AP") & (o.test == "friedman")].iloc[0]
    ref = stats.friedmanchisquare(*x.T)
    assert (fr["statistic"], fr["p"]) == pytest.approx((ref.statistic, ref.pvalue))
    an = o[(o.measure == "AP") & (o.test == "anova")].iloc[0]
    assert (an["df1"], an["df2"]) == (2, 48)


def test_blocked_scores_pair_systems_by_searcher_as_paired_comparison_did():
    ps = two_system_sessions()
    long = blocked_scores(ps, measures=["nsdcg"])
    r = compare_systems(long, test="paired-t", correction="none")
    a = ps[ps.system_id == "S1"].sort_values("user_id")["nsdcg"].to_numpy()
    b = ps[ps.system_id == "S2"].sort_values("user_id")["nsdcg"].to_numpy()
    assert r.iloc[0]["n"] == 6
    assert r.iloc[0]["p"] == pytest.approx(stats.ttest_rel(a, b).pvalue)


def test_monte_carlo_resolution_too_coarse_for_holm_is_said():
    t = _runs(n_topics=30, systems=tuple(f"s{k}" for k in range(6)))
    r = compare_systems(t, test="randomisation", resamples=199, measures=["AP"])
    (note,) = r.attrs["notes"]
    assert "1/(B+1) = 0.005" in note and "--resamples 300" in note
    assert not compare_systems(t, test="randomisation", resamples=999).attrs["notes"]


def test_omnibus_tests_of_identical_systems_say_why_they_are_degenerate():
    t = _runs()
    bm25 = t[t.system == "bm25"]
    same = pd.concat([bm25.assign(system=f"copy{i}") for i in range(3)])
    o = omnibus_tests(same).set_index(["measure", "test"])
    assert (o["statistic"] == 0.0).all() and (o["p"] == 1.0).all()
    assert o.loc[("AP", "anova"), "note"].startswith("the systems' means do not differ")
    assert o.loc[("AP", "friedman"), "note"].startswith("every topic ties all the systems")
    assert (omnibus_tests(t)["note"] == "").all()
    r = compare_systems(same, correction="tukey-hsd")
    assert (r["p_adjusted"] == 1.0).all() and (r["effect_size"] == 0.0).all()


def test_an_infinite_score_is_refused_with_its_measure_system_and_topic():
    # issue 23 item 6: one inf made every Tukey HSD pair of its system "significant"
    t = _runs()
    i = t.index[(t.system == "dense") & (t.topic == "q3") & (t.measure == "AP")][0]
    bad = t.copy()
    bad.loc[i, "value"] = np.inf
    where = "scores: measure 'AP', system 'dense', topic 'q3': value is inf"
    for call in (
        lambda: compare_systems(bad, correction="tukey-hsd"),
        lambda: compare_systems(bad, measures=["AP"]),
        lambda: omnibus_tests(bad),
        lambda: system_means(bad),
    ):
        with pytest.raises(StatisticsError, match=re.escape(where)):
            call()
    x, _, _ = score_matrix(t, "AP")
    x[4, 2] = -np.inf
    for call in (
        lambda: paired_tests(x, [0], [2]),
        lambda: tukey_hsd(x, [0], [2]),
        lambda: two_way_anova(x),
    ):
        with pytest.raises(StatisticsError, match="topic row 4, system column 2 is -inf"):
            call()
    # NaN stays a missing score
    gap = t.copy()
    gap.loc[i, "value"] = np.nan
    assert compare_systems(gap, measures=["AP"])["n"].tolist() == [24, 25, 24]


def test_rows_without_a_test_or_an_interval_say_why():
    t = _runs(n_topics=2)
    r = compare_systems(t, measures=["AP"], test="bootstrap", resamples=2000)
    assert r["ci_low"].isna().all()
    assert any("bootstrap-t interval of 3 pair(s) is undefined" in n for n in r.attrs["notes"])
    one = compare_systems(_runs(n_topics=1), measures=["AP"])
    assert one["p"].isna().all()
    assert any(
        "3 pair(s) share fewer than 2 scored topics: no interval" in n for n in one.attrs["notes"]
    )


def test_tukey_hsd_rows_describe_one_topic_set_the_complete_block():
    """n, means, diff, interval and effect size of a Tukey row are all over the complete block."""
    rng = np.random.default_rng(3)
    rows = [
        (s, str(t), "AP", float(v))
        for s, shift in (("A", 0.0), ("B", 0.1), ("C", 0.2))
        for t, v in enumerate(rng.uniform(0, 0.6, 8) + shift)
        if not (s == "C" and t >= 6)  # C misses topics 6 and 7
    ]
    long = pd.DataFrame(rows, columns=["system", "topic", "measure", "value"])
    r = compare_systems(long, correction="tukey-hsd").set_index(["a", "b"])
    ab = r.loc[("A", "B")]
    block = long[long["topic"].astype(int) < 6]
    xa = block[block.system == "A"]["value"].to_numpy()
    xb = block[block.system == "B"]["value"].to_numpy()
    assert ab["n"] == 6  # not the 8 topics A and B share
    assert ab["diff"] == pytest.approx(xa.mean() - xb.mean())
    assert (ab["ci_low"] + ab["ci_high"]) / 2 == pytest.approx(ab["diff"])
    assert ab["p"] == pytest.approx(stats.ttest_rel(xa, xb).pvalue)
    note = " ".join(r.attrs["notes"])
    assert "6 topics scored for every system; 2 topic(s)" in note

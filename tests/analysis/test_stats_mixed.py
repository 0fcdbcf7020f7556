"""The linear mixed model of session scores (system fixed; searcher, topic random)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from sessionval.analysis.mixed import MIXED_COLUMNS, mixed_model
from sessionval.errors import StatisticsError


def _study(effect: float = 0.15, seed: int = 5) -> pd.DataFrame:
    """A Latin-square-like study: 24 searchers x 4 topics, systems alternating."""
    rng = np.random.default_rng(seed)
    users = np.repeat([f"u{i:02d}" for i in range(24)], 4)
    topics = np.tile(list("ABCD"), 24)
    system = np.where((np.arange(96) + np.repeat(np.arange(24), 4)) % 2 == 0, "S1", "S2")
    u = rng.normal(0, 0.15, 24)[np.repeat(np.arange(24), 4)]
    t = np.array([0.0, 0.2, -0.1, 0.1])[np.tile(np.arange(4), 24)]
    y = 0.4 + effect * (system == "S2") + u + t + rng.normal(0, 0.08, 96)
    return pd.DataFrame(
        {"user_id": users, "topic_id": topics, "system_id": system, "nsdcg": y, "sdcg": 10 * y}
    )


def test_mixed_model_is_statsmodels_crossed_random_intercepts():
    import statsmodels.formula.api as smf

    ps = _study()
    r = mixed_model(ps, measures=["nsdcg"])
    assert tuple(r.columns) == MIXED_COLUMNS
    d = ps.rename(columns={"nsdcg": "y"}).assign(g=1)
    vc = {"u": "0 + C(user_id)", "t": "0 + C(topic_id)"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = smf.mixedlm("y ~ C(system_id)", d, groups="g", re_formula="0", vc_formula=vc).fit(
            reml=True
        )
    fx = r[r.kind == "fixed"].set_index("term")
    # written a − b (S1 − S2): statsmodels' S2 − S1 contrast with its sign turned
    key = "C(system_id)[T.S2]"
    assert fx.loc["S1 − S2", "estimate"] == pytest.approx(-ref.fe_params[key])
    assert fx.loc["S1 − S2", "se"] == pytest.approx(ref.bse_fe[key], rel=1e-4)
    assert fx.loc["S1 − S2", "z"] == pytest.approx(-ref.tvalues[key], rel=1e-4)
    lo, hi = ref.conf_int().loc[key]
    assert (fx.loc["S1 − S2", "ci_low"], fx.loc["S1 − S2", "ci_high"]) == pytest.approx(
        (-hi, -lo), rel=1e-4
    )
    var = r[r.kind == "variance"].set_index("term")["estimate"]
    assert set(var.index) == {"var(searcher)", "var(topic)", "var(residual)"}
    assert var["var(residual)"] == pytest.approx(ref.scale, rel=1e-4)


def test_mixed_model_recovers_a_known_system_effect():
    r = mixed_model(_study(effect=0.15), measures=["nsdcg", "sdcg"])
    row = r[(r.measure == "nsdcg") & (r.term == "S1 − S2")].iloc[0]
    assert row["ci_low"] < -0.15 < row["ci_high"] < 0
    assert row["p"] < 0.001 and bool(row["converged"])
    assert (row["n_sessions"], row["n_searchers"], row["n_topics"]) == (96, 24, 4)
    null = mixed_model(_study(effect=0.0, seed=8), measures=["nsdcg"])
    assert (
        null[null.term == "S1 − S2"].iloc[0]["ci_low"]
        < 0
        < null[null.term == "S1 − S2"].iloc[0]["ci_high"]
    )


def test_mixed_model_errors():
    ps = _study()
    with pytest.raises(StatisticsError, match="missing"):
        mixed_model(ps, measures=["nope"])
    with pytest.raises(StatisticsError, match="two systems"):
        mixed_model(ps.assign(system_id="S1"), measures=["nsdcg"])


def test_singular_fit_warnings_become_notes_not_stderr():
    """Unequal cells: statsmodels warned (sqrt of a negative variance) on stderr."""
    import warnings

    ps = pd.DataFrame(
        {
            "user_id": ["u1", "u2", "u3", "u1", "u2", "u3"],
            "topic_id": ["A", "A", "A", "B", "C", "C"],
            "system_id": ["S1", "S1", "S1", "S2", "S1", "S2"],
            "nsdcg": [0.9536293885142088, 0.5759731729633082, 0.5743074057407139,
                      0.32165566061793716, 0.5, 0.7],
        }
    )  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a raw RuntimeWarning fails here
        with pytest.raises(StatisticsError, match="degenerate on this design"):
            mixed_model(ps, measures=["nsdcg"])


def test_large_design_falls_back_to_cluster_robust_ols_and_says_so():
    """Above max_cells: OLS with topic fixed effects, CR1 errors by searcher (= statsmodels)."""
    import statsmodels.formula.api as smf

    ps = _study(effect=0.15)
    r = mixed_model(ps, measures=["nsdcg"], max_cells=100)
    assert set(r["estimator"]) == {"ols-cluster"}
    (note,) = r.attrs["notes"]
    assert "96 sessions with 24 searcher + 4 topic random-effect levels (2,688 cells)" in note
    assert "ols-cluster" in note and "cluster-robust standard errors by searcher" in note
    ref = smf.ols("nsdcg ~ C(system_id) + C(topic_id)", ps).fit(
        cov_type="cluster", cov_kwds={"groups": pd.factorize(ps["user_id"])[0]}, use_t=True
    )
    key = "C(system_id)[T.S2]"
    row = r[r.term == "S1 − S2"].iloc[0]
    assert row["estimate"] == pytest.approx(-ref.params[key])
    assert row["se"] == pytest.approx(ref.bse[key], rel=1e-8)
    assert row["p"] == pytest.approx(ref.pvalues[key], rel=1e-6)
    lo, hi = ref.conf_int().loc[key]
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((-hi, -lo))
    var = r[r.kind == "variance"].set_index("term")["estimate"]
    assert set(var.index) == {"var(searcher)", "var(residual)"}  # topics are fixed here
    assert var["var(residual)"] == pytest.approx(ref.mse_resid)
    assert 0.01 < var["var(searcher)"] < 0.05  # the simulated searcher SD is 0.15


def test_between_design_nests_searchers_in_systems():
    rng = np.random.default_rng(4)
    users = np.repeat(np.arange(40), 3)
    system = np.where(users < 20, "S1", "S2")
    topic = np.tile(["A", "B", "C"], 40)
    y = 0.4 + 0.2 * (system == "S2") + rng.normal(0, 0.1, 40)[users] + rng.normal(0, 0.05, 120)
    ps = pd.DataFrame({"user_id": users.astype(str), "topic_id": topic, "system_id": system,
                       "nsdcg": y})  # fmt: skip
    r = mixed_model(ps, measures=["nsdcg"])
    assert set(r["estimator"]) == {"reml-nested"}
    row = r[r.term == "S1 − S2"].iloc[0]
    assert row["ci_low"] < -0.2 < row["ci_high"]
    assert "var(searcher)" in set(r["term"])


def test_runs_never_fit_a_searcher_effect_that_is_the_system():
    rng = np.random.default_rng(6)
    topics = [str(t) for t in range(10)]
    ps = pd.DataFrame(
        [(s, t, s, 0.3 + 0.1 * k + rng.normal(0, 0.05)) for k, s in enumerate(("r1", "r2"))
         for t in topics],
        columns=["user_id", "topic_id", "system_id", "nsdcg"],
    )  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no library warning reaches stderr
        r = mixed_model(ps, measures=["nsdcg"])
    assert set(r["estimator"]) == {"reml-topic"}
    assert "var(searcher)" not in set(r["term"]) and "var(topic)" in set(r["term"])
    assert any("searcher is the system" in n for n in r.attrs["notes"])


def test_the_threshold_is_where_the_dense_fit_became_too_slow():
    from sessionval.analysis.mixed import MAX_DESIGN_CELLS

    assert MAX_DESIGN_CELLS == 1_000_000  # measured: benchmarks/bench_mixed.py
    big = pd.DataFrame(  # 2,000 sessions x (300 + 200) levels = 1,000,000 cells: REML
        {"user_id": (np.arange(2000) % 300).astype(str),
         "topic_id": (np.arange(2000) % 200).astype(str),
         "system_id": np.where(np.arange(2000) % 2, "S2", "S1"), "nsdcg": 0.0}
    )  # fmt: skip
    cells = len(big) * (big["user_id"].nunique() + big["topic_id"].nunique())
    assert cells == MAX_DESIGN_CELLS
    one_more = pd.concat([big, big.iloc[:1].assign(user_id="new")], ignore_index=True)
    one_more["nsdcg"] = np.random.default_rng(0).normal(size=len(one_more))
    r = mixed_model(one_more, measures=["nsdcg"])
    assert set(r["estimator"]) == {"ols-cluster"}


def test_boundary_variance_is_a_singular_fit_note_not_a_warning():
    """No topic effect simulated: its variance is estimated at 0, said in a note."""
    rng = np.random.default_rng(1)
    users = np.repeat(np.arange(30), 4)
    system = np.array(["S1", "S2", "S3"])[users % 3]
    y = 0.4 + 0.1 * (system == "S2") + rng.normal(0, 0.1, 30)[users] + rng.normal(0, 0.05, 120)
    ps = pd.DataFrame({"user_id": users.astype(str), "topic_id": np.tile(list("ABCD"), 30),
                       "system_id": system, "nsdcg": y})  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = mixed_model(ps, measures=["nsdcg"])
    notes = r.attrs["notes"]
    assert any("singular fit, the variance of topic is estimated at 0" in n for n in notes)
    assert any("boundary of the parameter space" in n for n in notes)  # statsmodels' warning

"""Comparisons that follow the design (sessionval.analysis.by_design, compare_systems)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import sessionval as sv
from sessionval.analysis.compare import compare_systems
from sessionval.errors import StatisticsError


def _latin(n_users: int = 12, effect: float = 0.1, seed: int = 1) -> pd.DataFrame:
    """Latin square with searcher and topic effects: B better by ``effect``."""
    rng = np.random.default_rng(seed)
    topic_effect = {"t1": 0.0, "t2": 0.3, "t3": -0.2, "t4": 0.1}
    rows = []
    for u in range(n_users):
        skill = rng.normal(0, 0.2)
        for k, t in enumerate(topic_effect):
            s = "AB"[(k // 2 + u) % 2]
            y = 0.4 + skill + topic_effect[t] + (effect if s == "B" else 0) + rng.normal(0, 0.02)
            rows.append((f"s{u}-{k}", f"u{u}", t, s, k + 1, y))
    cols = ["session_id", "user_id", "topic_id", "system_id", "session_order", "nsdcg"]
    return pd.DataFrame(rows, columns=cols)


def test_per_session_table_is_accepted_and_latin_square_uses_blocks() -> None:
    r = sv.compare_systems(_latin(), measures=["nsdcg"])
    row = r.iloc[0]
    assert (row["design"], row["block"], row["test"], row["n"]) == (
        "within",
        "searcher+topic",
        "ols-blocks+period",
        12,
    )
    assert row["diff"] == pytest.approx(-0.1, abs=0.02)
    assert row["p"] < 1e-6
    assert row["note"] == ""


def test_runs_as_sessions_are_paired_by_topic_as_compare_does() -> None:
    values = {"A": [0.5, 0.6, 0.2, 0.9], "B": [0.4, 0.3, 0.2, 0.5]}
    ps = pd.DataFrame(
        [
            (f"{s}:{t}", s, t, s, v)
            for s, vs in values.items()
            for t, v in zip("1234", vs, strict=True)
        ],
        columns=["session_id", "user_id", "topic_id", "system_id", "nsdcg"],
    )
    r = compare_systems(ps, measures=["nsdcg"])
    long = pd.DataFrame(
        [(s, t, "nsdcg", v) for s, vs in values.items() for t, v in zip("1234", vs, strict=True)],
        columns=["system", "topic", "measure", "value"],
    )
    expected = compare_systems(long)
    assert (r["design"].iloc[0], r["block"].iloc[0], r["n"].iloc[0]) == ("by_topic", "topic", 4)
    cols = ["n", "diff", "statistic", "p"]
    np.testing.assert_allclose(r[cols].to_numpy(float), expected[cols].to_numpy(float))


def test_between_searchers_is_welch_and_short_pair_says_why() -> None:
    ps = pd.DataFrame(
        {
            "session_id": [f"s{i}" for i in range(7)],
            "user_id": [f"u{i}" for i in range(7)],
            "topic_id": "t1",
            "system_id": ["A", "A", "A", "B", "B", "B", "C"],
            "nsdcg": [0.1, 0.2, 0.15, 0.5, 0.6, 0.55, 0.3],
        }
    )
    from scipy import stats

    r = compare_systems(ps, measures=["nsdcg"]).set_index(["a", "b"])
    ab = r.loc[("A", "B")]
    assert (ab["design"], ab["test"], ab["n"]) == ("between", "welch-t", 6)
    expected = stats.ttest_ind([0.1, 0.2, 0.15], [0.5, 0.6, 0.55], equal_var=False).pvalue
    assert ab["p"] == pytest.approx(expected)
    assert "1 with C (need 2 each)" in r.loc[("A", "C"), "note"]


def test_one_system_and_overrides() -> None:
    ps = _latin()
    one = ps[ps["system_id"] == "A"]
    r = compare_systems(one, measures=["nsdcg"])
    assert r.empty and "nothing to compare" in r.attrs["notes"][0]
    by_searcher = compare_systems(ps, measures=["nsdcg"], block="searcher")
    assert (by_searcher["block"].iloc[0], by_searcher["test"].iloc[0]) == ("searcher", "paired-t")
    with pytest.raises(StatisticsError, match="allowed: auto, within, between, by_topic, log"):
        compare_systems(ps, measures=["nsdcg"], design="latin")


def test_paired_pair_without_enough_blocks_says_why() -> None:
    rows = [
        (f"{u}{s}{t}", u, t, s, v + 0.01 * i)
        for i, (u, s, v, t) in enumerate(
            (u, s, v, t)
            for u in ("u1", "u2", "u3")
            for s, v in (("A", 0.2), ("B", 0.4))
            for t in ("t1", "t2")
        )
    ]
    rows += [("x", "u1", "t1", "C", 0.5), ("y", "u1", "t2", "C", 0.6)]
    ps = pd.DataFrame(rows, columns=["session_id", "user_id", "topic_id", "system_id", "nsdcg"])
    r = compare_systems(ps, measures=["nsdcg"]).set_index(["a", "b"])
    assert r.loc[("A", "B"), "note"] == ""
    assert r.loc[("A", "C"), "note"] == (
        "not compared: 1 searcher(s) scored for both systems (need 2)"
    )


@pytest.mark.filterwarnings("ignore:The design matrix is rank-deficient")  # order = topic here
def test_blocks_model_and_welch_of_many_measures_match_statsmodels_and_scipy() -> None:
    import statsmodels.formula.api as smf
    from scipy import stats

    ps = _latin(n_users=10, effect=0.05, seed=4)
    rng = np.random.default_rng(0)
    ps["m2"] = ps["nsdcg"] + rng.normal(0, 0.1, len(ps))
    ps["m3"] = ps["m2"].where(ps.index != 5)  # another missing pattern: its own solve
    measures = ["nsdcg", "m2", "m3"]
    r = compare_systems(ps, measures=measures).set_index("measure")
    for m in measures:
        data = ps.dropna(subset=[m]).assign(
            system=lambda x: pd.Categorical(x["system_id"], categories=["B", "A"])
        )
        fit = smf.ols(f"{m} ~ system + C(user_id) + C(topic_id) + C(session_order)", data).fit()
        key = "system[T.A]"
        row = r.loc[m]
        assert row["diff"] == pytest.approx(fit.params[key], abs=1e-12)
        assert row["p"] == pytest.approx(fit.pvalues[key], rel=1e-9)
        assert [row["ci_low"], row["ci_high"]] == pytest.approx(
            fit.conf_int().loc[key].tolist(), abs=1e-12
        )
        assert row["effect_size"] == pytest.approx(fit.params[key] / np.sqrt(fit.mse_resid))
    # between searchers: each column its own Welch test of the searcher means
    between = ps.assign(user_id=ps["user_id"] + ps["system_id"])
    w = compare_systems(between, measures=measures).set_index("measure")
    for m in measures:
        means = between.groupby(["system_id", "user_id"])[m].mean()
        expected = stats.ttest_ind(means["A"], means["B"], equal_var=False)
        assert (w.loc[m, "test"], w.loc[m, "n"]) == ("welch-t", 20)
        assert w.loc[m, "p"] == pytest.approx(expected.pvalue, rel=1e-12)


def test_blocks_model_says_when_blocks_are_collinear_or_confound_the_system() -> None:
    # _latin runs the topics in one order for every searcher: order and topic coincide
    r = compare_systems(_latin(), measures=["nsdcg"])
    assert np.isfinite(r["p"].iloc[0])
    assert any("blocks are collinear" in n for n in r.attrs["notes"])
    # every searcher searched t1, t2 with A and t3, t4 with B: the topic is the system
    ps = _latin()
    ps["system_id"] = ps["topic_id"].map({"t1": "A", "t2": "A", "t3": "B", "t4": "B"})
    c = compare_systems(ps, measures=["nsdcg"])
    assert c["note"].iloc[0] == (
        "not compared: the system is confounded with the searcher and topic blocks"
    )
    assert np.isnan(c["p"].iloc[0])


def test_searcher_block_notes_name_searchers_not_topics() -> None:
    """The notes of a pairing by searcher count searchers (they said "topics")."""
    rows = [
        (f"{u}{s}{t}", u, t, s, v + 0.01 * i)
        for i, (u, s, v, t) in enumerate(
            (u, s, v, t)
            for u in ("u1", "u2", "u3")
            for s, v in (("A", 0.2), ("B", 0.4))
            for t in ("t1", "t2")
        )
    ]
    rows += [("x", "u1", "t1", "C", 0.5), ("y", "u1", "t2", "C", 0.6)]
    ps = pd.DataFrame(rows, columns=["session_id", "user_id", "topic_id", "system_id", "nsdcg"])
    r = compare_systems(ps, measures=["nsdcg"])
    assert (r["block"] == "searcher").all()
    text = " ".join(r.attrs["notes"])
    assert "fewer than 2 scored searchers" in text and "topic" not in text
    runs = ps.assign(user_id=ps["system_id"])  # by topic: the same notes count topics
    notes = " ".join(compare_systems(runs, measures=["nsdcg"]).attrs["notes"])
    assert "searcher" not in notes


def test_constant_differences_give_an_infinite_t_with_a_note_not_1e16() -> None:
    """0.7 - 0.6 and 0.2 - 0.1 differ in their last bits: the SD is rounding noise."""
    a = np.array([0.7, 0.2, 0.9, 0.5, 0.35])
    b = np.array([0.6, 0.1, 0.8, 0.4, 0.25])
    assert 0 < np.std(a - b, ddof=1) < 1e-15  # scipy's t would be ~1e16
    long = pd.DataFrame(
        {
            "system": ["A"] * 5 + ["B"] * 5,
            "topic": list("12345") * 2,
            "measure": "AP",
            "value": np.concatenate([a, b]),
        }
    )
    row = compare_systems(long).iloc[0]
    assert row["statistic"] == np.inf and row["p"] == 0.0 and row["significant"]
    assert np.isnan(row["effect_size"]) and row["ci_low"] == row["ci_high"] == row["diff"]
    (note,) = compare_systems(long).attrs["notes"]
    assert "same amount on every topic" in note and "t = ±inf, p = 0" in note
    # paired by searcher (crossed topics), the note names the searchers
    ps = pd.DataFrame(
        {
            "session_id": [f"s{i}" for i in range(10)],
            "user_id": [f"u{i}" for i in range(5)] * 2,
            "topic_id": "t1",
            "system_id": ["A"] * 5 + ["B"] * 5,
            "nsdcg": np.concatenate([a, b]),
        }
    )
    r = compare_systems(ps, measures=["nsdcg"])
    assert r["block"].iloc[0] == "searcher" and r["statistic"].iloc[0] == np.inf
    assert "same amount on every searcher" in " ".join(r.attrs["notes"])


def test_blocks_model_without_residual_variation_is_said_not_1e16() -> None:
    """score = searcher + topic + system exactly: the residual is rounding noise."""
    exact = _latin(effect=0.1)
    skill = exact.groupby("user_id")["nsdcg"].transform("first") * 0  # no noise below
    topic = exact["topic_id"].map({"t1": 0.0, "t2": 0.3, "t3": -0.2, "t4": 0.1})
    user = exact["user_id"].str[1:].astype(int) * 0.01
    exact["nsdcg"] = 0.4 + skill + topic + user + 0.1 * (exact["system_id"] == "B")
    r = compare_systems(exact, measures=["nsdcg"])
    row = r.iloc[0]
    assert row["block"] == "searcher+topic"
    assert row["statistic"] == -np.inf and row["p"] == 0.0
    assert row["diff"] == pytest.approx(-0.1) and np.isnan(row["effect_size"])
    assert row["note"].startswith("no residual variation") and "t = ±inf, p = 0" in row["note"]


def test_blocks_model_memory_grows_with_sessions_not_sessions_times_searchers() -> None:
    """20,000 searchers: searcher dummies would take 40,000 x 20,000 doubles (6.4 GB)."""
    import tracemalloc

    from sessionval.synth import simulate_scores

    ps = simulate_scores(design="within", topics="nested", n_searchers=20_000, n_topics=2, seed=3)
    tracemalloc.start()
    try:
        r = compare_systems(ps, measures=list(ps.attrs["measures"]))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert r["block"].iloc[0] == "searcher+topic" and np.isfinite(r["p"].iloc[0])
    assert peak < 200e6, f"peak {peak / 1e6:.0f} MB"

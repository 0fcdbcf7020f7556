"""The reformulation analyses: effects, system comparisons, transitions, strategies."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from sessionval.analysis.reformulation_effects import (
    EFFECT_COLUMNS,
    compare_reformulation_effects,
    reformulation_effects,
    reformulation_transitions,
)
from sessionval.analysis.reformulation_strategies import strategy_model
from sessionval.analysis.reformulation_types import GROUPS
from sessionval.errors import StatisticsError


def _pairs(rows):
    """Reformulation rows from (session, user, system, from_pos, type, delta_dcg, new_rel)."""
    t = pd.DataFrame(
        rows,
        columns=[
            "session_id",
            "user_id",
            "system_id",
            "from_pos",
            "type",
            "delta_dcg",
            "new_relevant",
        ],
    )
    t["group"] = t["type"].map(GROUPS)
    return t


TABLE = _pairs(
    [
        ("s1", "u1", "A", 1, "add_words", 2.0, 1),
        ("s1", "u1", "A", 2, "add_words", 4.0, 0),
        ("s1", "u1", "A", 3, "same", 0.0, 0),
        ("s2", "u2", "A", 1, "add_words", 9.0, 2),
        ("s3", "u3", "A", 1, "add_words", 1.0, 1),
        ("s3", "u3", "A", 2, "remove_words", -3.0, 0),
        ("s4", "u1", "B", 1, "substring", 5.0, 1),
    ]
)


def test_effects_average_units_first_and_give_t_intervals():
    eff = reformulation_effects(TABLE, confidence=0.9)
    assert list(eff.columns) == list(EFFECT_COLUMNS)
    row = eff[(eff["category"] == "add_words") & (eff["outcome"] == "delta_dcg")].iloc[0]
    units = np.array([3.0, 9.0, 1.0])  # s1's two pairs averaged first
    half = stats.t.ppf(0.95, 2) * units.std(ddof=1) / np.sqrt(3)
    assert (row["n_pairs"], row["n_units"]) == (4, 3)
    assert row["mean"] == pytest.approx(units.mean())
    assert (row["ci_low"], row["ci_high"]) == pytest.approx(
        (units.mean() - half, units.mean() + half)
    )
    one = eff[(eff["category"] == "substring") & (eff["outcome"] == "delta_dcg")].iloc[0]
    assert one["mean"] == 5.0 and np.isnan(one["ci_low"])  # one unit: no interval
    # groups: specialisation pools add_words; generalisation pools remove_words and substring
    gen = eff[(eff["level"] == "group") & (eff["category"] == "generalisation")]
    gen = gen[gen["outcome"] == "delta_dcg"].set_index("system_id")
    assert gen.loc["A", "mean"] == -3.0 and gen.loc["B", "mean"] == 5.0


def test_effects_by_searcher_pool_the_searchers_sessions():
    eff = reformulation_effects(TABLE, unit="user_id")
    row = eff[(eff["category"] == "add_words") & (eff["outcome"] == "new_relevant")].iloc[0]
    assert row["n_units"] == 3 and row["mean"] == pytest.approx((0.5 + 2 + 1) / 3)


def test_effects_name_a_missing_column():
    with pytest.raises(StatisticsError, match="lacks column"):
        reformulation_effects(TABLE.drop(columns="delta_dcg"))


def test_transitions_follow_the_sessions_and_end():
    tr = reformulation_transitions(TABLE.sample(frac=1, random_state=3))
    got = {(a, b): n for a, b, n in zip(tr["from_type"], tr["to_type"], tr["n"], strict=True)}
    assert got == {
        ("add_words", "add_words"): 1,
        ("add_words", "same"): 1,
        ("add_words", "end"): 1,
        ("add_words", "remove_words"): 1,
        ("same", "end"): 1,
        ("remove_words", "end"): 1,
        ("substring", "end"): 1,
    }
    assert tr["n"].sum() == len(TABLE)
    np.testing.assert_allclose(tr.groupby("from_type")["share"].sum(), 1.0)


def _study(n_searchers=12, seed=0):
    """Searchers each using both systems on two topics; nsDCG up by 0.2 with specialisation."""
    rng = np.random.default_rng(seed)
    sessions, pairs = [], []
    for u in range(n_searchers):
        for k, system in enumerate(("A", "B")):
            sid = f"s{u}-{system}"
            spec = rng.random() < 0.5
            score = 0.3 + 0.2 * spec + 0.05 * (system == "B") + rng.normal(0, 0.01)
            sessions.append((sid, f"u{u}", f"t{(u + k) % 2}", system, score))
            kinds = ["add_words" if spec else "word_substitution", "new"]
            for pos, kind in enumerate(kinds, start=1):
                gain = 10.0 + 5 * (system == "B") + rng.normal(0, 1)
                pairs.append((sid, f"u{u}", system, pos, kind, gain, 1))
    columns = ["session_id", "user_id", "topic_id", "system_id", "nsdcg"]
    ps = pd.DataFrame(sessions, columns=columns)
    return _pairs(pairs), ps


def test_both_levels_in_one_comparison_give_each_levels_rows():
    from sessionval.analysis.reformulation_effects import compare_reformulation_levels

    table, ps = _study()
    both = compare_reformulation_levels(table, ps, levels=("group", "type"))
    assert list(both.columns)[-1] == "level"  # last, as the run's table has it
    parts = [
        compare_reformulation_effects(table, ps, level=lv).assign(level=lv)
        for lv in ("group", "type")
    ]
    want = pd.concat(parts, ignore_index=True)
    # "new" is a category of both levels: told apart inside, named as before outside
    assert (both["measure"] == "delta_dcg|new").sum() == 2
    text = ["level", "measure", "a", "b", "test", "note", "significant"]
    pd.testing.assert_frame_equal(both[text], want[text])
    numbers = both.drop(columns=text).select_dtypes("number").columns
    # measures of one missing pattern share a solve, so equal to rounding, not bit for bit
    np.testing.assert_allclose(
        both[numbers].to_numpy(float), want[numbers].to_numpy(float), rtol=1e-12, atol=1e-12
    )
    assert not any("group:" in n or "type:" in n for n in both.attrs["notes"])
    with pytest.raises(StatisticsError, match="level"):
        compare_reformulation_levels(table, ps, levels=("group", "bogus"))


def test_strategy_model_recovers_the_association():
    table, ps = _study()
    fit = strategy_model(table, ps)
    row = fit.set_index("term").loc["used_specialisation"]
    assert row["estimate"] == pytest.approx(0.2, abs=0.02)
    assert row["ci_low"] < 0.2 < row["ci_high"] and row["n_sessions"] == len(ps)
    assert "C(searcher)" in row["formula"] and "C(topic)" in row["formula"]
    # a group every session used is no strategy that varies: left out
    assert "used_new" not in set(fit["term"])
    # each session used specialisation or parallel: the second indicator is the first's
    # complement, left out so the estimates are identified
    assert "used_parallel" not in set(fit["term"]) and "collinear" in fit.attrs["notes"][0]


def test_strategy_model_with_too_few_sessions_says_why():
    table, ps = _study(n_searchers=1)
    out = strategy_model(table, ps)
    assert out.empty and "not fitted" in out.attrs["notes"][0]


def test_systems_compared_per_group_as_the_design_asks(tmp_path):
    table, ps = _study()
    out = compare_reformulation_effects(table, ps, level="group")
    row = out.set_index("measure").loc["delta_dcg|new"]
    assert row["diff"] == pytest.approx(-5.0, abs=1.0)  # A - B
    assert row["ci_low"] < -5.0 < row["ci_high"] and row["design"] == "within"
    assert "within searchers" in out.attrs["design"]
    out.to_parquet(tmp_path / "c.parquet")  # attrs are plain: the run writes the table
    one = compare_reformulation_effects(table, ps.assign(system_id="A"))
    assert one.empty
    with pytest.raises(StatisticsError, match="level"):
        compare_reformulation_effects(table, ps, level="bogus")


def test_strategy_model_absorbing_a_block_matches_the_dummy_fit():
    """The absorbed searcher block gives statsmodels' estimates, errors and intervals."""
    import statsmodels.formula.api as smf

    table, ps = _study(n_searchers=24, seed=4)
    rng = np.random.default_rng(1)
    # topics drawn at random (in _study's square the blocks leave a term unidentified)
    ps = ps.assign(
        nsdcg=ps["nsdcg"] + rng.normal(0, 0.05, len(ps)),
        topic_id=rng.choice(["t0", "t1", "t2"], len(ps)),
    )
    # vary the number of reformulations and the groups used beyond the design of _study
    extra = ps["session_id"].iloc[::3]
    again = ps["session_id"].iloc[1::4]
    more = _pairs(
        [(s, "u", "A", 3, "remove_words", 1.0, 0) for s in extra]
        + [(s, "u", "A", 4, "new", 1.0, 0) for s in again]
    )
    table = pd.concat([table, more], ignore_index=True)
    table = table[~((table["session_id"] == "s0-A") & (table["type"] == "new"))]
    fit = strategy_model(table, ps).set_index("term")
    used = pd.crosstab(table["session_id"], table["group"]).gt(0).astype(float)
    data = ps.set_index("session_id").join(used, how="inner")
    data["n"] = table["session_id"].value_counts()
    terms = ["specialisation", "generalisation", "new", "n"]
    blocks = "C(system_id) + C(user_id) + C(topic_id)"
    model = smf.ols(f"nsdcg ~ {' + '.join(terms)} + {blocks}", data)
    assert np.linalg.matrix_rank(model.exog) == model.exog.shape[1]
    ref = model.fit()
    assert list(fit.index) == ["used_specialisation", "used_generalisation", "used_new",
                               "n_reformulations"]  # fmt: skip
    for term, name in zip(fit.index, terms, strict=True):
        assert fit.loc[term, "estimate"] == pytest.approx(ref.params[name])
        assert fit.loc[term, "se"] == pytest.approx(ref.bse[name])
        assert fit.loc[term, "p"] == pytest.approx(ref.pvalues[name])
        assert fit.loc[term, "ci_low"] == pytest.approx(ref.conf_int().loc[name, 0])


def test_strategy_rows_are_the_pivot_of_the_pairs_by_session():
    """The session rows (bincount on codes) are pandas' crosstab of the pairs, joined."""
    from sessionval.analysis.reformulation_strategies import _sessions

    rng = np.random.default_rng(8)
    n_pairs = 400
    table = pd.DataFrame(
        {
            "session_id": pd.Categorical([f"s{i}" for i in rng.integers(0, 120, n_pairs)]),
            "group": rng.choice(["new", "parallel", "repeat", "specialisation"], n_pairs),
        }
    )
    ps = pd.DataFrame(
        {
            "session_id": [f"s{i}" for i in range(150)],  # 30 sessions without a pair
            "nsdcg": np.where(rng.random(150) < 0.1, np.nan, rng.random(150)),
            "system_id": rng.choice(["A", "B"], 150),
            "user_id": [f"u{i % 40}" for i in range(150)],
        }
    )
    sid = table["session_id"].astype(str)
    used = pd.crosstab(sid, table["group"].astype(str)).gt(0).astype(np.float64)
    used.columns = [f"used_{c}" for c in used.columns]
    want = pd.DataFrame(
        {
            "session_id": ps["session_id"],
            "y": ps["nsdcg"],
            "system": ps["system_id"],
            "searcher": ps["user_id"],
        }
    ).merge(used, left_on="session_id", right_index=True, how="inner")
    want["n_reformulations"] = sid.value_counts().reindex(want["session_id"]).to_numpy(float)
    want = want.dropna(subset=["y"]).reset_index(drop=True)
    got = _sessions(table, ps, "nsdcg")
    assert list(got.columns) == list(want.columns)
    pd.testing.assert_frame_equal(got, want, check_dtype=False)
    assert 0 < len(got) < 120


def test_transitions_of_no_pair_are_an_empty_table():
    out = reformulation_transitions(TABLE.iloc[:0])
    assert out.empty and list(out.columns) == ["from_type", "to_type", "n", "share"]


def test_pairs_meet_their_sessions_by_row_whatever_the_ids_dtype():
    # the pairs find their session's row by the ids' text: categoricals (one of them with
    # categories of its own order), shuffled sessions, a session without pairs and a
    # repeated id (the join on the text) give the table the text ids give
    from sessionval.analysis.reformulation_effects import compare_reformulation_levels

    table, ps = _study()
    want = compare_reformulation_levels(table, ps)
    extra = ps.iloc[[0]].assign(session_id="s-none", nsdcg=0.5)
    shuffled = pd.concat([ps, extra]).sample(frac=1.0, random_state=3)
    coded = shuffled.assign(session_id=shuffled["session_id"].astype("category"))
    pairs = table.assign(
        session_id=pd.Categorical(
            table["session_id"], categories=sorted(set(table["session_id"]), reverse=True)
        )
    )
    for sessions, rows in ((shuffled, table), (coded, pairs), (pd.concat([ps, ps]), table)):
        got = compare_reformulation_levels(rows, sessions)
        cols = ["level", "measure", "a", "b", "diff", "p"]
        if sessions is shuffled or sessions is coded:
            pd.testing.assert_frame_equal(got[cols], want[cols], check_exact=False, rtol=1e-12)
        else:  # every session twice: other numbers, the same rows
            assert got[["level", "measure"]].equals(want[["level", "measure"]])


def test_strategy_model_meets_the_sessions_by_row_whatever_the_ids_dtype():
    table, ps = _study(n_searchers=40, seed=2)
    want = strategy_model(table, ps)
    shuffled = ps.sample(frac=1.0, random_state=5)
    coded = shuffled.assign(session_id=shuffled["session_id"].astype("category"))
    pairs = table.assign(session_id=table["session_id"].astype("category"))
    for sessions, rows in ((coded, pairs), (pd.concat([ps, ps.iloc[:3]]), table)):
        got = strategy_model(rows, sessions)
        assert got["term"].tolist() == want["term"].tolist()
        if sessions is coded:
            np.testing.assert_allclose(got["estimate"], want["estimate"], rtol=1e-10)


def test_session_rows_match_by_text_or_say_none():
    from sessionval.analysis.reformulation_effects import session_rows

    ps = pd.DataFrame(
        {"session_id": pd.Categorical(["b", "a", "c"], categories=["c", "a", "b", "z"])}
    )
    pairs = pd.DataFrame({"session_id": ["a", "a", "x", "c", None]})
    assert session_rows(pairs, ps).tolist() == [1, 1, -1, 2, -1]
    assert session_rows(pairs, ps.assign(session_id=["b", None, "c"])) is None  # missing
    assert session_rows(pairs, ps.assign(session_id=["b", "b", "c"])) is None  # repeated

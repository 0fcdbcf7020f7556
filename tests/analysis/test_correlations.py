"""rating_correlations: the tidy table of measure-rating correlations, against scipy."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import sessionval
from sessionval.analysis.correlations import CORRELATION_COLUMNS, rating_correlations
from sessionval.errors import SessionvalError
from tests.analysis.scores import per_session_table


def test_table_is_tidy_and_equals_scipy() -> None:
    ps = per_session_table()
    ps["rating_difficulty"] = [2.0, 1.0, np.nan, 5.0, 1.0, 4.0, 2.0, 3.0]
    t = sessionval.rating_correlations(ps, measures=["sdcg", "nsdcg"])
    assert tuple(t.columns) == CORRELATION_COLUMNS
    assert t[["measure", "rating"]].to_numpy().tolist() == [
        ["sdcg", "rating_satisfaction"],
        ["sdcg", "rating_difficulty"],
        ["nsdcg", "rating_satisfaction"],
        ["nsdcg", "rating_difficulty"],
    ]
    for row in t.itertuples(index=False):
        both = ps[[row.measure, row.rating]].dropna()
        x, y = both[row.measure], both[row.rating]
        assert row.n == len(both)
        assert row.pearson_r == pytest.approx(stats.pearsonr(x, y)[0])
        assert row.pearson_p == pytest.approx(stats.pearsonr(x, y)[1])
        assert row.spearman_rho == pytest.approx(stats.spearmanr(x, y)[0])
        assert row.spearman_p == pytest.approx(stats.spearmanr(x, y)[1])
        assert row.kendall_tau == pytest.approx(stats.kendalltau(x, y)[0])
        assert row.kendall_p == pytest.approx(stats.kendalltau(x, y)[1])
    # nsdcg is NaN in one session and difficulty in another: both left out of that pair
    assert t.loc[3, "n"] == 6


def test_defaults_take_every_score_and_every_rating() -> None:
    ps = per_session_table()
    t = rating_correlations(ps)
    assert set(t["rating"]) == {"rating_satisfaction"}
    # numeric, non-id, non-rating columns (the nullable integer too)
    assert list(t["measure"]) == ["n_queries", "sdcg", "nsdcg", "first_rel_query"]


def test_too_few_sessions_or_a_constant_column_give_nan() -> None:
    ps = pd.DataFrame(
        {"a": [1.0, 2.0, 3.0], "flat": [1.0, 1.0, 1.0], "rating_x": [1.0, 2.0, np.nan]}
    )
    t = rating_correlations(ps)
    assert t["n"].tolist() == [2, 2]
    assert t.iloc[:, 3:].isna().all().all()
    ps.loc[2, "rating_x"] = 5.0
    t = rating_correlations(ps)
    assert t.loc[0, "spearman_rho"] == pytest.approx(1.0)
    assert t.loc[1, ["pearson_r", "kendall_tau"]].isna().all()  # constant measure


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"measures": ["nope"]}, "column 'nope' not in the per-session table"),
        ({"ratings": ["rating_mood"]}, "column 'rating_mood' not in"),
        ({"measures": ["system_id"]}, "is not numeric"),
    ],
)
def test_bad_columns_are_named(kwargs, fragment) -> None:
    with pytest.raises(SessionvalError) as info:
        rating_correlations(per_session_table(), **kwargs)
    assert fragment in str(info.value)


def test_no_rating_gives_an_empty_table() -> None:
    t = rating_correlations(per_session_table().drop(columns="rating_satisfaction"))
    assert t.empty and tuple(t.columns) == CORRELATION_COLUMNS


def test_spearman_and_kendall_from_shared_sorts_are_scipys() -> None:
    # each column is ranked and sorted once and reused by every pair on the same
    # sessions (Kendall's discordant pairs counted by rating level); a pair with a
    # missing value ranks its own sessions: the numbers are scipy's, bit for bit
    rng = np.random.default_rng(7)
    n = 300
    ps = pd.DataFrame(
        {
            "sdcg": rng.normal(size=n).round(1),  # ties
            "nsdcg": rng.uniform(size=n),
            "rating_a": rng.integers(1, 6, size=n).astype(float),
            "rating_b": rng.integers(1, 4, size=n).astype(float),
        }
    )
    ps.loc[::7, "rating_b"] = np.nan
    table = rating_correlations(ps, ["sdcg", "nsdcg"], ["rating_a", "rating_b"])
    for row in table.itertuples(index=False):
        both = ps[[row.measure, row.rating]].dropna()
        expected = stats.spearmanr(both[row.measure], both[row.rating])
        assert (row.spearman_rho, row.spearman_p) == (expected[0], expected[1])
        tau = stats.kendalltau(both[row.measure], both[row.rating])
        assert (row.kendall_tau, row.kendall_p) == (tau[0], tau[1])
        assert row.n == len(both)

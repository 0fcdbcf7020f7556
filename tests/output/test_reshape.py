"""Long form and the paired by-system layout of score tables."""

from __future__ import annotations

import numpy as np
import pandas as pd

from sessionval.output.reshape import long_form, wide_by_system
from tests.analysis.scores import per_session_table


def test_analysis_long_form_matches_wide():
    ps = per_session_table()
    long = long_form(ps, id_columns=["session_id", "system_id"])
    assert list(long["measure"].cat.categories) == [
        "n_queries",
        "sdcg",
        "nsdcg",
        "first_rel_query",
        "rating_satisfaction",
    ]
    back = long.pivot_table(
        index="session_id",
        columns="measure",
        values="value",
        dropna=False,
        observed=True,
        aggfunc="first",
    )
    np.testing.assert_allclose(back["sdcg"].to_numpy(), ps["sdcg"].to_numpy())
    assert len(long) == len(ps) * 5
    assert long["value"].isna().sum() == ps["nsdcg"].isna().sum() + 3


def test_analysis_wide_by_system_means():
    ps = per_session_table()
    w = wide_by_system(ps, measures=["nsdcg", "sdcg"])
    assert w["user_id"].tolist() == ["u1", "u2", "u3", "u4"]
    # issue 12: the full system names (only .dta/.sav shorten them)
    assert w["sdcg__Sys 1"].tolist() == [10.5, 0.0, 55.5, 7.5]
    assert w["sdcg__Sys 2"].tolist() == [20.25, 3.0, 1.0, 12.0]
    assert w["n_sessions__Sys 1"].tolist() == [1, 1, 1, 1]
    assert np.isnan(w.loc[2, "nsdcg__Sys 2"])


def test_long_form_is_the_melt_of_the_wide_table():
    # built from codes (repeat and tile), it is pandas' own melt, row for row
    ps = per_session_table()
    ids = ["session_id", "system_id"]
    long = long_form(ps, id_columns=ids, value_columns=["sdcg", "nsdcg"])
    melted = (
        ps.reset_index(drop=True)
        .melt(id_vars=ids, value_vars=["sdcg", "nsdcg"], var_name="measure", ignore_index=False)
        .sort_index(kind="stable")  # by record, then measure (melt's column order)
    )
    assert long["session_id"].tolist() == melted["session_id"].tolist()
    assert long["measure"].astype(str).tolist() == melted["measure"].tolist()
    np.testing.assert_array_equal(long["value"].to_numpy(), melted["value"].to_numpy(dtype=float))
    assert long["measure"].dtype == pd.CategoricalDtype(["sdcg", "nsdcg"])
    assert len(long_form(ps.iloc[:0], id_columns=ids)) == 0


def test_wide_by_system_is_a_pivot_table_per_measure():
    # one grouped mean over every measure: each value bit for bit the pivot table's
    rng = np.random.default_rng(7)
    n = 400
    ps = pd.DataFrame(
        {
            "user_id": pd.Categorical(rng.choice(["u10", "u2", "u1", "é"], n)),
            "system_id": rng.choice(["B", "A", "C"], n),
            "x": rng.random(n) * 1e3,
            "y": np.where(rng.random(n) < 0.2, np.nan, rng.random(n) / 3),
        }
    )
    ps = ps[~((ps["user_id"] == "é") & (ps["system_id"] == "C"))]
    w = wide_by_system(ps, measures=["x", "y", "x"])
    frame = ps.astype({"user_id": str, "system_id": str})
    for m in ("x", "y"):
        ref = frame.pivot_table(index="user_id", columns="system_id", values=m, aggfunc="mean")
        for s in ("A", "B", "C"):
            np.testing.assert_array_equal(w[f"{m}__{s}"].to_numpy(), ref[s].to_numpy())
    assert w["user_id"].tolist() == ["u1", "u10", "u2", "é"]
    assert w["n_sessions__C"].tolist()[-1] == 0
    empty = wide_by_system(ps.iloc[:0], measures=["x"])
    assert list(empty.columns) == ["user_id"] and len(empty) == 0

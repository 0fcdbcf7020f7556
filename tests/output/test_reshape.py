"""Long form and the paired by-system layout of score tables."""

from __future__ import annotations

import numpy as np

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

"""Pearson's r with ratings from sums over partitions (sessionval.analysis.rating_sums)."""

from __future__ import annotations

import pickle

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sessionval.analysis.correlations import rating_correlations
from sessionval.analysis.rating_sums import combine_ratings, pearson_from_sums, rating_sums
from sessionval.errors import StatisticsError

MEASURES, RATINGS = ["a", "b", "flat"], ["rating_p", "rating_q", "rating_z"]


def _table(n: int = 60, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    ps = pd.DataFrame(
        {
            "a": rng.normal(size=n),
            "b": rng.normal(size=n) * 3 + 10,
            "flat": 0.5,  # constant: no correlation
            "rating_p": rng.integers(1, 6, n).astype(float),
            "rating_q": rng.integers(1, 4, n).astype(float),
            "rating_z": np.nan,  # no session rated: not shown
        }
    )
    ps["b"] += ps["rating_p"]
    ps.loc[:5, "a"] = np.nan
    ps.loc[n - 10 :, "rating_q"] = np.nan
    return ps


def _check(got: pd.DataFrame, ps: pd.DataFrame) -> None:
    local = rating_correlations(ps, measures=MEASURES, ratings=["rating_p", "rating_q"])
    cols = ["measure", "rating", "n"]
    pd.testing.assert_frame_equal(got[cols], local[cols])
    for c in ("pearson_r", "pearson_p"):
        np.testing.assert_allclose(got[c], local[c], rtol=1e-12, atol=0)
    assert got[["spearman_rho", "spearman_p", "kendall_tau", "kendall_p"]].isna().all().all()
    assert got.dtypes.equals(local.dtypes)


def test_pearson_from_partitions_equals_the_local_table() -> None:
    ps = _table()
    parts = [rating_sums(ps.iloc[k::3], MEASURES, RATINGS) for k in range(3)]
    got = pearson_from_sums(combine_ratings(parts[2], parts[0], parts[1]))
    _check(got, ps)
    assert got["pearson_r"].notna().sum() == 4  # the constant measure has none


def test_partitions_with_other_rating_columns_and_empty_ones_combine() -> None:
    ps = _table()
    first = rating_sums(ps.iloc[:20], MEASURES, ["rating_p"])  # a partition without rating_q
    rest = rating_sums(ps.iloc[20:], MEASURES, RATINGS)
    empty = rating_sums(ps.iloc[:0], MEASURES, RATINGS)
    whole = ps.copy()
    whole.loc[:19, "rating_q"] = np.nan
    _check(pearson_from_sums(combine_ratings(empty, rest, first)), whole)
    again = pickle.loads(pickle.dumps(rest))
    assert again.n.shape == (3, 3)


def test_bad_input_is_refused() -> None:
    ps = _table()
    with pytest.raises(StatisticsError, match="missing to correlate"):
        rating_sums(ps, ["nope"], RATINGS)
    with pytest.raises(StatisticsError, match="no rating sums"):
        combine_ratings()
    with pytest.raises(StatisticsError, match="different measures"):
        combine_ratings(rating_sums(ps, ["a"], RATINGS), rating_sums(ps, ["b"], RATINGS))


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 6), st.integers(0, 2**16), st.randoms(use_true_random=False))
def test_result_does_not_depend_on_split_or_order(n_parts, seed, rnd) -> None:
    ps = _table(n=40, seed=seed % 5)
    which = np.random.default_rng(seed).integers(0, n_parts, len(ps))
    parts = [rating_sums(ps[which == k], MEASURES, RATINGS) for k in range(n_parts)]
    rnd.shuffle(parts)
    acc = parts[0]
    for p in parts[1:]:
        acc = combine_ratings(p, acc) if rnd.random() < 0.5 else combine_ratings(acc, p)
    _check(pearson_from_sums(acc), ps)

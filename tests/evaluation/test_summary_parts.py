"""A summary is finish_summary of summary_parts, and parts of disjoint units add up."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from sessionval.evaluation.protocol import (
    add_summary_parts,
    finish_summary,
    summarise_long,
    summary_parts,
)

ORDER = ["AP", "NumRet", "GMAP", "Unscored"]
HOW = {"NumRet": "sum", "GMAP": "exp_mean"}


def long_table(values: list[float | None], measures: list[int]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "measure": [ORDER[m] for m in measures],
            "value": np.array([np.nan if v is None else v for v in values], dtype=float),
        }
    )


def test_the_summary_of_a_table_is_the_grouped_mean_bit_for_bit() -> None:
    rng = np.random.default_rng(3)
    t = long_table(list(rng.random(5000)), list(rng.integers(0, 3, 5000)))
    g = t.groupby("measure", sort=False)["value"]
    got = summarise_long(t, ORDER, HOW).set_index("measure")["value"]
    assert got["AP"] == g.mean()["AP"]
    assert got["NumRet"] == g.sum()["NumRet"]
    assert got["GMAP"] == np.exp(g.mean()["GMAP"])
    assert np.isnan(got["Unscored"])  # a measure without values: NaN, n 0


values = st.lists(
    st.tuples(
        st.one_of(st.none(), st.floats(-5, 5, allow_nan=False)), st.integers(0, len(ORDER) - 2)
    ),
    min_size=1,
    max_size=60,
)


@settings(max_examples=60, deadline=None)
@given(values, st.lists(st.integers(0, 60), max_size=4), st.randoms(use_true_random=False))
def test_parts_of_any_split_in_any_order_add_up_to_the_whole(rows, cuts, order) -> None:
    t = long_table([v for v, _ in rows], [m for _, m in rows])
    edges = sorted({0, len(t), *(min(c, len(t)) for c in cuts)})
    pieces = [summary_parts(t.iloc[a:b], ORDER) for a, b in itertools.pairwise(edges)]
    order.shuffle(pieces)
    got = finish_summary(add_summary_parts(pieces, ORDER), ORDER, HOW)
    want = summarise_long(t, ORDER, HOW)
    pd.testing.assert_series_equal(got["n"], want["n"])
    np.testing.assert_allclose(got["value"], want["value"], rtol=1e-12, atol=1e-12)

"""The blocks model's rows: coded keys, one decomposition (model_rows, absorb)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from sessionval.analysis.absorb import pinv_and_rank
from sessionval.analysis.model_rows import SessionRows, text_levels


@pytest.mark.parametrize(
    "col",
    [
        pd.Series(pd.Categorical(["b", "a", None, "b", "c"], categories=["z", "c", "b", "a"])),
        pd.Series([3, 1, 10, 2, 1]),  # sorted as text: "1" < "10" < "2"
        pd.Series(["u2", "u10", "u1", None], dtype="str"),
        pd.Series([1, "1", "x"], dtype=object),  # one text, one level
    ],
)
def test_text_levels_group_and_sort_as_the_text(col: pd.Series) -> None:
    text = col.astype(str)
    coded = pd.Series(text_levels(col))
    assert coded.astype(str).equals(text.astype(str))
    for sort in (False, True):
        got, expected = pd.factorize(coded, sort=sort)[0], pd.factorize(text, sort=sort)[0]
        np.testing.assert_array_equal(got, expected)
    assert coded.nunique() == text.nunique()


def test_session_rows_keys_are_coded_text() -> None:
    ps = pd.DataFrame(
        {
            "system_id": pd.Categorical(["B", "A", "B", "A"], categories=["B", "A", "C"]),
            "user_id": ["u1", "u1", "u2", "u2"],
            "topic_id": [1, 2, 2, 1],
            "session_order": [1, 2, 1, 2],
            "nsdcg": [0.1, 0.2, 0.3, 0.4],
        }
    )
    rows = SessionRows(ps).rows(["nsdcg"], period=True)
    assert list(rows.keys.columns) == ["system", "searcher", "topic", "order"]
    assert rows.keys["system"].isin(["A"]).tolist() == [False, True, False, True]
    assert list(rows.keys["system"].cat.categories) == ["A", "B"]  # present, sorted
    assert rows.keys["topic"].astype(str).tolist() == ["1", "2", "2", "1"]


@pytest.mark.parametrize(
    "x",
    [
        np.random.default_rng(1).normal(size=(50, 4)),
        np.column_stack([np.ones(6), np.arange(6.0), 2 * np.arange(6.0)]),  # rank 2 of 3
        np.zeros((5, 2)),
    ],
)
def test_pinv_and_rank_is_numpys(x: np.ndarray) -> None:
    pinv, rank = pinv_and_rank(x)
    np.testing.assert_array_equal(pinv, np.linalg.pinv(x))
    assert rank == np.linalg.matrix_rank(x)


def test_searchers_with_both_systems_as_the_groupby_finds_them() -> None:
    from sessionval.analysis.by_design import _with_both

    rng = np.random.default_rng(3)
    keys = pd.DataFrame(
        {
            "searcher": rng.choice(["u1", "u2", "u3", "u4", None], size=60),
            "system": rng.choice(["A", "B"], size=60),
        }
    )
    keys.loc[keys["searcher"] == "u4", "system"] = "A"  # one system only
    both = keys.groupby("searcher")["system"].nunique()
    want = keys["searcher"].isin(both.index[both == 2]).to_numpy()
    for frame in (keys, keys.astype("category")):
        np.testing.assert_array_equal(_with_both(frame["searcher"], frame["system"]), want)
    assert not want[keys["searcher"].isin(["u4"]).to_numpy()].any()

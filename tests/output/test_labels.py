"""Stata/SPSS names and value labels."""

from __future__ import annotations

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sessionval.errors import SessionvalError
from sessionval.output.labels import (
    sanitise_names,
    shared_label_maps,
    stats_name,
    to_stats_frame,
    value_labels,
)


@settings(deadline=None, max_examples=30)
@given(st.text(min_size=1, max_size=60), st.lists(st.text(max_size=40), max_size=5))
def test_analysis_stats_name_valid(name, taken):
    out = stats_name(name, taken=taken)
    assert len(out) <= 32 and (out[0].isalpha() or out[0] == "_")
    assert all(ch.isascii() and (ch.isalnum() or ch == "_") for ch in out)
    assert out.lower() not in {t.lower() for t in taken}


def test_bad_names_are_refused_and_sanitised():
    with pytest.raises(SessionvalError, match="not a valid Stata/SPSS variable name"):
        to_stats_frame(pd.DataFrame({"bad name": [1.0]}))
    table = pd.DataFrame({"a b": [1.0], "a_b": [2.0], "ok": [3.0]})
    assert list(sanitise_names(table).columns) == ["a_b", "a_b_2", "ok"]
    ok = pd.DataFrame({"ok": [1.0]})
    assert sanitise_names(ok) is ok


def test_codes_are_shared_and_labelled():
    a = pd.DataFrame({"system_id": ["S2", "S1"], "x": [1.0, 2.0], "session_id": ["s1", "s2"]})
    b = pd.DataFrame({"system_id": ["S3"], "flag": [True]})
    maps = shared_label_maps({"a": a, "b": b})
    assert maps == {"system_id": ["S1", "S2", "S3"]}  # session ids stay strings, no booleans
    sf = to_stats_frame(b, label_maps=maps)
    assert sf.data["system_id"].tolist() == [3]
    assert sf.value_labels["flag"] == {0: "no", 1: "yes"}
    assert sf.column_labels["system_id"] == "System"
    with pytest.raises(SessionvalError, match="has no label"):
        to_stats_frame(pd.DataFrame({"system_id": ["S9"]}), label_maps=maps)


def test_variable_labels_follow_the_table_level():
    t = pd.DataFrame({"sdcg": [1.0]})
    assert "end of the session" in to_stats_frame(t).column_labels["sdcg"]
    assert "sDCG_q" in to_stats_frame(t, level="query").column_labels["sdcg"]


def test_stats_frame_codes_categories_and_hands_text_as_objects():
    # a categorical column is coded by its categories (missing stays missing); text
    # columns are Python objects, the type pyreadstat iterates without a per-cell copy
    t = pd.DataFrame(
        {
            "system_id": pd.Categorical(["S2", None, "S1", "S2"], categories=["S2", "S1", "S0"]),
            "session_id": pd.Series(["a", None, "c", "d"], dtype="str"),
        }
    )
    sf = to_stats_frame(t, label_maps={"system_id": ["S0", "S1", "S2"]})
    assert sf.data["system_id"].tolist()[0] == 3.0 and sf.data["system_id"].isna().tolist() == [
        False,
        True,
        False,
        False,
    ]
    assert sf.data["session_id"].dtype == object
    assert sf.data["session_id"].tolist() == ["a", "", "c", "d"]
    with pytest.raises(SessionvalError, match="'S2' has no label"):
        to_stats_frame(t, label_maps={"system_id": ["S1"]})


def test_value_labels_are_the_sorted_text_of_the_distinct_values():
    mixed = pd.Series([1, "1", None, "b", "a", "b"], dtype=object)
    assert value_labels(mixed) == ["1", "a", "b"]
    assert value_labels(pd.Series(["x", None, "x"], dtype="str")) == ["x"]
    assert value_labels(pd.Series([True, False])) is None

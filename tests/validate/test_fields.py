from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from sessionval.validate.collect import ProblemCollector, row_locator
from sessionval.validate.fields import (
    as_category,
    compact_categorical,
    first_appearance_codes,
    floats_to_ints,
    missing_times,
    parse_integers,
    parse_numbers,
    parse_times,
    take_rows,
)


def collector(n: int) -> ProblemCollector:
    return ProblemCollector("t", np.zeros(n, dtype=np.int32), pd.Index(["s"]), row_locator("row"))


def test_as_category_gives_string_categories_in_first_appearance_order():
    col = as_category(pd.Series([20, 10, 20]))
    assert col.cat.categories.tolist() == ["20", "10"]
    assert str(col.cat.categories.dtype) == "string"
    # an existing categorical keeps its codes; its categories become strings
    cat = as_category(pd.Series(pd.Categorical([2, 1, 2])))
    assert cat.astype(str).tolist() == ["2", "1", "2"]
    assert str(cat.cat.categories.dtype) == "string"


def test_first_appearance_codes():
    names, codes, missing = first_appearance_codes(
        pd.Series(pd.Categorical(["z", "a", None, "z", "m"], categories=["a", "m", "z"]))
    )
    assert names.tolist() == ["z", "a", "m"]
    assert codes.tolist() == [0, 1, -1, 0, 2]
    assert missing.tolist() == [False, False, True, False, False]


def test_compact_categorical_drops_unused_categories():
    cat = compact_categorical(np.array([3, 1, 3, -1]), pd.Index(["a", "b", "c", "d"]))
    assert cat.categories.tolist() == ["b", "d"]
    assert cat.codes.tolist() == [1, 0, 1, -1]


def test_take_rows_is_the_identity_without_rows():
    arr = np.arange(4)
    assert take_rows(arr, None) is arr
    assert take_rows(arr, np.array([3, 0])).tolist() == [3, 0]


def test_parse_numbers_reports_text_fractions_and_missing():
    coll = collector(4)
    vals = parse_numbers(
        pd.Series(["1", "x", "2.5", None]),
        "clicks",
        coll,
        integer=True,
        nullable_rows=np.array([False, False, False, False]),
    )
    np.testing.assert_array_equal(vals, [1.0, np.nan, np.nan, np.nan])
    assert [(p.location, p.message, p.value) for p in coll.problems] == [
        ("row 2", "must be an integer", "'x'"),
        ("row 3", "must be a whole number", "2.5"),
        ("row 4", "is required", ""),
    ]


def test_parse_numbers_at_query_rows_names_the_table_row():
    coll = collector(10)
    parse_numbers(pd.Series(["x"]), "scan_depth", coll, integer=False, at=np.array([7]))
    assert coll.problems[0].location == "row 8"
    assert coll.problems[0].message == "must be a number"


def test_parse_integers_typed_and_text_columns_agree():
    typed, typed_missing = parse_integers(
        pd.Series([1, None, 3], dtype="Int64"),
        "rank",
        collector(3),
        fill=0,
        nullable_rows=np.array([False, True, False]),
    )
    text, text_missing = parse_integers(
        pd.Series(["1", None, "3"]),
        "rank",
        collector(3),
        fill=0,
        nullable_rows=np.array([False, True, False]),
    )
    assert typed.dtype == text.dtype == np.int32
    assert typed.tolist() == text.tolist() == [1, 0, 3]
    assert typed_missing.tolist() == text_missing.tolist() == [False, True, False]


def test_parse_integers_out_of_32_bits():
    coll = collector(2)
    ints, _ = parse_integers(pd.Series([1, 2**40]), "rank", coll, fill=0, nullable_rows=None)
    assert [p.message for p in coll.problems] == [
        "must be between -2147483648 and 2147483647 (stored in 32 bits)"
    ]
    assert ints.tolist() == [1, 0] and coll.problems[0].value == repr(2**40)


@pytest.mark.parametrize("written", ["2147483648", "-2147483649", "1e12", "1e400", "inf"])
def test_parse_integers_text_beyond_32_bits_shows_the_value_as_written(written):
    """F9: no wrap to -2147483648; the message shows what the file says."""
    coll = collector(2)
    ints, _ = parse_integers(pd.Series(["1", written]), "rank", coll, fill=0, nullable_rows=None)
    assert ints.tolist() == [1, 0]
    assert [(p.location, p.value) for p in coll.problems] == [("row 2", repr(written))]
    assert "-2147483648" not in coll.problems[0].value


def test_parse_numbers_infinite_after_float32_cast_is_a_problem():
    coll = collector(2)
    vals = parse_numbers(pd.Series(["1.5", "1e39"]), "dwell", coll, integer=False, dtype=np.float32)
    assert np.isnan(vals[1]) and vals[0] == 1.5
    assert [(p.location, p.value) for p in coll.problems] == [("row 2", "'1e39'")]
    assert coll.problems[0].message.startswith("must be a finite number")


def test_floats_to_ints_fills_nan():
    out = floats_to_ints(np.array([2.0, np.nan, -1.0]), fill=7, dtype=np.int16)
    assert out.dtype == np.int16 and out.tolist() == [2, 7, -1]


@pytest.mark.parametrize(
    "raw",
    [
        pd.Series(["2008-03-01T10:00:05+01:00"]),
        pd.Series(pd.to_datetime(["2008-03-01T09:00:05"])),  # naive: taken as UTC
        pd.Series(pd.to_datetime(["2008-03-01T04:00:05-05:00"])),
    ],
)
def test_parse_times_gives_utc(raw):
    t = parse_times(raw, "query_time", collector(1), np.arange(1))
    assert str(t.dtype) == "datetime64[ns, UTC]"
    assert t.iloc[0] == pd.Timestamp("2008-03-01T09:00:05Z")


def test_parse_times_reports_unparseable():
    coll = collector(3)
    t = parse_times(pd.Series(["noon", None]), "session_start", coll, np.array([0, 2]))
    assert t.isna().tolist() == [True, True]
    assert [(p.location, p.value) for p in coll.problems] == [("row 1", "'noon'")]


def test_missing_times():
    t = missing_times(2)
    assert str(t.dtype) == "datetime64[ns, UTC]" and t.isna().all() and len(t) == 2


def test_times_beyond_python_years_are_shown_not_raised(tmp_path):
    """Fuzz campaign finding: a Parquet time of year 148108 (timestamp[us, tz=UTC]) made
    the message's str() raise (exit 70); it is a located problem showing the value."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from sessionval.errors import ValidationFailed
    from sessionval.io.study import load_study

    n = 3
    table = pa.table(
        {
            "session_id": ["s1", "s2", "s3"], "user_id": ["u"] * n, "topic_id": ["T"] * n,
            "system_id": ["S"] * n, "query_pos": [1] * n, "rank": [1] * n,
            "doc_id": ["d"] * n,
            "query_time": pa.array([2**62, -(2**62), 0], type=pa.timestamp("us", tz="UTC")),
        }
    )  # fmt: skip
    path = tmp_path / "sessions.parquet"
    pq.write_table(table, path)
    with pytest.raises(ValidationFailed) as err:
        load_study(path)
    shown = [p.value.replace(" ", "T") for p in err.value.problems]
    assert shown[0].startswith("'148108-07-06T14:00:27.387904")
    assert shown[1].startswith("'-144169-06-28T09:59:32.612096")


def test_parse_numbers_decides_integers_on_their_text():
    coll = collector(3)
    vals = parse_numbers(
        pd.Series(["3.0", "2.9999999999999999", "1e-400"]),
        "user_grade",
        coll,
        integer=True,
        nullable_rows=np.array([False, False, False]),
    )
    np.testing.assert_array_equal(vals, [3.0, np.nan, np.nan])
    assert [(p.location, p.value) for p in coll.problems] == [
        ("row 2", "'2.9999999999999999'"),
        ("row 3", "'1e-400'"),
    ]
    assert all("as written" in p.message for p in coll.problems)

"""The Arrow CSV writer: pandas' text where it can, the same values read back everywhere."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from sessionval.output.csv_writer import write_csv


def _both(table: pd.DataFrame, tmp_path, **kw) -> tuple[str, str]:
    ours, theirs = tmp_path / "ours.csv", tmp_path / "pandas.csv"
    write_csv(table, ours, **kw)
    table.to_csv(theirs, index=False)
    return ours.read_text(encoding="utf-8"), theirs.read_text(encoding="utf-8")


def test_ids_text_integers_missing_values_and_times_are_pandas_text(tmp_path):
    table = pd.DataFrame(
        {
            "session_id": ["s1", "s2", None, "é"],
            "system_id": pd.Categorical(["A", "B", "A", "B"]),
            "n": [1, 2, 3, 4],
            "k": pd.array([1, None, 3, 4], dtype="Int64"),
            "start": pd.to_datetime(
                ["2024-01-01 10:00:00.5", None, "2024-01-02 00:00:00", "2024-01-03"],
                format="ISO8601",
                utc=True,
            ),
            "x": [0.25, np.nan, 0.5, 2.75],
        }
    )
    ours, theirs = _both(table, tmp_path, chunk_rows=3)  # two pieces, one header
    assert ours == theirs


def test_floats_and_booleans_differ_in_spelling_not_in_value(tmp_path):
    table = pd.DataFrame({"x": [1.0, 1e-05, 0.1 + 0.2, 123456789012345.0], "ok": [True] * 4})
    ours, theirs = _both(table, tmp_path)
    assert ours != theirs and ours.splitlines()[1] == "1,true"
    back = pd.read_csv(tmp_path / "ours.csv")
    np.testing.assert_array_equal(back["x"].to_numpy(float), table["x"].to_numpy())
    assert back["ok"].tolist() == [True] * 4


def test_a_piece_with_a_comma_or_quote_is_quoted_and_reads_back(tmp_path):
    table = pd.DataFrame({"q": ["plain", 'say "hi"', "a,b", "line\nbreak"], "v": [1, 2, 3, 4]})
    write_csv(table, tmp_path / "t.csv", chunk_rows=1)
    text = (tmp_path / "t.csv").read_text(encoding="utf-8")
    assert text.startswith("q,v\nplain,1\n")  # the first piece needs no quotes
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "t.csv"), table)


def test_a_header_is_quoted_where_pandas_quotes_it(tmp_path):
    table = pd.DataFrame({"sRBP(p=0.8,b=0.5)": [0.5], "plain": [1]})
    ours, theirs = _both(table, tmp_path)
    assert ours.splitlines()[0] == theirs.splitlines()[0] == '"sRBP(p=0.8,b=0.5)",plain'


def test_an_empty_table_is_its_header(tmp_path):
    ours, theirs = _both(pd.DataFrame({"a": pd.Series([], dtype=float), "b": []}), tmp_path)
    assert ours == theirs == "a,b\n"


def test_a_column_arrow_cannot_convert_is_written_by_pandas(tmp_path):
    table = pd.DataFrame({"mixed": [1, "two", 3.5], "v": [1.0, 2.0, 3.0]})
    ours, theirs = _both(table, tmp_path)
    assert ours == theirs


@pytest.mark.parametrize(
    "times",
    [
        ["2024-01-01 10:00:00", None, "2024-01-02 23:59:59"],  # whole seconds
        ["2024-01-01 10:00:00.001", "2024-01-01 10:00:00", None],  # milliseconds
        ["2024-01-01 10:00:00.000000001", "2024-01-01 10:00:00.5", None],  # nanoseconds
        ["2024-01-01", "2024-01-02", None],  # midnights: dates only without a zone
        [None, None, None],
    ],
)
@pytest.mark.parametrize("tz", [None, "UTC", "Europe/Paris"])
def test_times_are_pandas_text_in_every_zone_and_precision(tmp_path, times, tz):
    # UTC times take a faster path than pandas' own; the text is pandas' all the same
    start = pd.Series(pd.to_datetime(times, format="ISO8601"))
    start = start.dt.tz_localize(tz) if tz else start
    summer = start + pd.Timedelta(days=180)  # Paris changes its offset
    ours, theirs = _both(pd.DataFrame({"start": start, "summer": summer}), tmp_path)
    assert ours == theirs

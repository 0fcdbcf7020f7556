"""The ``.dta`` writer: pandas' column-wise writer, read back as pyreadstat's own file."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from sessionval.output.stata_file import STRL_BYTES, write_dta

pyreadstat = pytest.importorskip("pyreadstat")

LABELS = {
    "session_id": "session",
    "system_id": "system",
    "nsdcg": "normalised session DCG",
    "found": None,
    "start": "session start (UTC)",
    "n": "queries",
}
VALUE_LABELS = {"system_id": {1: "S1", 2: "Sé"}, "found": {0: "no", 1: "yes"}}


def _table() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "session_id": ["s1", "ß-2", ""],  # missing text is "" (to_stats_frame)
            "system_id": np.array([2, 1, 2], dtype=np.int32),
            "nsdcg": [0.25, np.nan, 1.0],
            "found": np.array([1, 0, 1], dtype=np.int8),
            "start": pd.to_datetime(["2008-01-01 10:00:00", "2008-01-02 11:30:15", None]),
            "n": np.array([3, 1, 2], dtype=np.int64),
        }
    )


def _read(path):
    return pyreadstat.read_dta(str(path))


def test_read_back_as_pyreadstat_reads_its_own_file(tmp_path):
    table = _table()
    ours, theirs = tmp_path / "ours.dta", tmp_path / "theirs.dta"
    write_dta(
        table, ours, file_label="study: t", column_labels=LABELS, variable_value_labels=VALUE_LABELS
    )
    pyreadstat.write_dta(
        table,
        str(theirs),
        file_label="study: t",
        column_labels=list(LABELS.values()),
        variable_value_labels=VALUE_LABELS,
    )
    (a, ma), (b, mb) = _read(ours), _read(theirs)
    pd.testing.assert_frame_equal(a, b)
    assert ma.column_labels == mb.column_labels
    assert ma.variable_value_labels == mb.variable_value_labels == VALUE_LABELS
    assert ma.file_label == mb.file_label == "study: t"
    assert ma.readstat_variable_types == mb.readstat_variable_types
    assert a["session_id"].tolist() == ["s1", "ß-2", ""]


def test_text_longer_than_a_fixed_width_string_is_kept_whole(tmp_path):
    long = "é" * (STRL_BYTES // 2 + 10)  # over STRL_BYTES in UTF-8
    table = pd.DataFrame({"query": [long, "short"], "x": [1.0, 2.0]})
    path = tmp_path / "t.dta"
    write_dta(table, path, file_label="", column_labels={}, variable_value_labels={})
    df, _ = _read(path)
    assert df["query"].tolist() == [long, "short"]


def test_what_pandas_refuses_is_left_to_pyreadstat_as_before(tmp_path):
    # a variable label over Stata's 80 characters: pandas refuses it, and pyreadstat's own
    # error is raised, as when pyreadstat wrote every .dta
    label = "a label longer than Stata's eighty characters, " * 2
    table = pd.DataFrame({"x": [1.0, 2.0]})
    with pytest.raises(pyreadstat.ReadstatError, match="label is too long"):
        write_dta(table, tmp_path / "t.dta", file_label="t", column_labels={"x": label},
                  variable_value_labels={})  # fmt: skip

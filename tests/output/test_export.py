"""Exports read back with pandas and pyreadstat: values equal, labels intact."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyreadstat
import pytest

from sessionval.errors import SessionvalError
from sessionval.output import export
from sessionval.output.export import (
    describe_column,
    long_form,
    to_stats_frame,
    write_exports,
    write_table,
)
from tests.analysis.scores import PARAMS, per_query_table, per_session_table


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    out = tmp_path_factory.mktemp("exports")
    ps = per_session_table()
    res = write_exports(out, per_session=ps, per_query=per_query_table(ps), parameters=PARAMS)
    return out, ps, res


def test_analysis_files_written(exported):
    out, _, res = exported
    stems = [
        "per_session_wide",
        "per_session_long",
        "per_user_by_system",
        "per_query_wide",
        "per_query_long",
    ]
    for stem in stems:
        for ext in ("csv", "parquet", "dta", "sav"):
            assert (out / f"{stem}.{ext}").is_file(), f"{stem}.{ext}"
    assert (out / "codebook.csv").is_file() and (out / "codebook.md").is_file()
    assert len(res.files) == len(stems) * 4 + 2


@pytest.mark.parametrize("ext", ["dta", "sav"])
def test_analysis_stats_roundtrip_values_and_labels(exported, ext):
    out, ps, _ = exported
    reader = pyreadstat.read_dta if ext == "dta" else pyreadstat.read_sav
    df, meta = reader(str(out / f"per_session_wide.{ext}"), apply_value_formats=False)
    # system names are value labels of a coded variable
    labels = meta.variable_value_labels["system_id"]
    assert labels == {1: "Sys 1", 2: "Sys 2"}
    decoded = df["system_id"].astype(int).map(labels)
    assert decoded.tolist() == ps["system_id"].astype(str).tolist()
    assert df["topic_id"].astype(int).map(meta.variable_value_labels["topic_id"]).tolist() == (
        ps["topic_id"].astype(str).tolist()
    )
    # session ids stay strings
    assert df["session_id"].tolist() == ps["session_id"].astype(str).tolist()
    np.testing.assert_allclose(df["sdcg"], ps["sdcg"])
    np.testing.assert_allclose(df["nsdcg"], ps["nsdcg"])  # NaN -> system missing -> NaN
    np.testing.assert_allclose(
        df["first_rel_query"], ps["first_rel_query"].to_numpy(dtype=float, na_value=np.nan)
    )
    np.testing.assert_array_equal(df["n_queries"], ps["n_queries"])
    # variable labels
    names = dict(zip(meta.column_names, meta.column_labels, strict=True))
    assert names["nsdcg"] == describe_column("nsdcg").label
    assert names["rating_satisfaction"] == "Searcher's post-task rating: satisfaction"


@pytest.mark.parametrize("ext", ["dta", "sav"])
def test_analysis_codes_shared_between_files(exported, ext):
    out, _, _ = exported
    reader = pyreadstat.read_dta if ext == "dta" else pyreadstat.read_sav
    _, m1 = reader(str(out / f"per_session_wide.{ext}"), metadataonly=True)
    _, m2 = reader(str(out / f"per_query_long.{ext}"), metadataonly=True)
    for col in ("system_id", "topic_id", "user_id"):
        assert m1.variable_value_labels[col] == m2.variable_value_labels[col]
    # booleans: 0/1 with no/yes labels; measure coded with labels
    df, _ = reader(str(out / f"per_query_wide.{ext}"), apply_value_formats=True)
    assert set(df["is_last"]) == {"no", "yes"}
    long, m4 = reader(str(out / f"per_query_long.{ext}"), apply_value_formats=True)
    assert set(long["measure"]) == {"dcg", "sdcg_q"}
    # measure codes are shared with the per-session long file (one label set for both)
    _, m5 = reader(str(out / f"per_session_long.{ext}"), metadataonly=True)
    assert m4.variable_value_labels["measure"] == m5.variable_value_labels["measure"]


def test_analysis_csv_parquet_roundtrip(exported):
    out, ps, res = exported
    pq = pd.read_parquet(out / "per_session_wide.parquet")
    pd.testing.assert_frame_equal(pq, ps, check_dtype=False, check_categorical=False)
    csv = pd.read_csv(out / "per_session_wide.csv")
    np.testing.assert_allclose(csv["nsdcg"], ps["nsdcg"])
    assert csv["system_id"].tolist() == ps["system_id"].astype(str).tolist()
    long = pd.read_parquet(out / "per_session_long.parquet")
    pd.testing.assert_frame_equal(long, res.tables["per_session_long"], check_categorical=False)


def test_analysis_bad_names_and_formats(tmp_path):
    with pytest.raises(SessionvalError, match="not a valid Stata/SPSS variable name"):
        to_stats_frame(pd.DataFrame({"bad name": [1.0]}))
    with pytest.raises(SessionvalError, match="unknown export format"):
        write_exports(tmp_path, per_session=per_session_table(), parameters={}, formats=["xlsx"])
    with pytest.raises(SessionvalError, match="id column"):
        long_form(per_session_table(), id_columns=["nope"])
    # issue 12: CSV and Parquet keep a name with spaces; .dta/.sav get a valid name, and the
    # codebook maps one to the other
    ps = per_session_table().rename(columns={"sdcg": "sDCG at 10"})
    res = write_exports(tmp_path, per_session=ps, parameters={}, formats=["csv", "dta"])
    assert "sDCG at 10" in res.tables["per_session_wide"].columns
    assert "sDCG at 10" in pd.read_csv(tmp_path / "per_session_wide.csv").columns
    book = res.codebook
    row = book[(book["file"] == "per_session_wide") & (book["variable"] == "sDCG at 10")]
    assert row["stats_variable"].tolist() == ["sDCG_at_10"]
    df, _ = pyreadstat.read_dta(str(tmp_path / "per_session_wide.dta"))
    np.testing.assert_allclose(df["sDCG_at_10"], ps["sDCG at 10"])


def test_analysis_codebook_covers_every_column(exported):
    out, _, res = exported
    book = pd.read_csv(out / "codebook.csv", keep_default_na=False)
    for stem, table in res.tables.items():
        got = book.loc[book["file"] == stem, "variable"].tolist()
        assert got == [str(c) for c in table.columns]
    row = book[(book["file"] == "per_session_wide") & (book["variable"] == "nsdcg")].iloc[0]
    assert row["unit"] == "ratio 0-1"
    assert "b=2" in row["parameters"] and "bq=4" in row["parameters"]
    assert "X=10" in row["parameters"] and "gains=0-1-10-100" in row["parameters"]
    sys_row = book[(book["file"] == "per_session_wide") & (book["variable"] == "system_id")]
    assert sys_row["value_labels"].iloc[0] == "1 = Sys 1; 2 = Sys 2"
    q_row = book[(book["file"] == "per_query_wide") & (book["variable"] == "sdcg_q")].iloc[0]
    assert "bq=4" in q_row["parameters"]
    md = (out / "codebook.md").read_text()
    assert "`nsdcg`" in md and "`b` = `2`" in md


def test_long_system_names_stay_unambiguous(tmp_path):
    """Issue 12 item 3: CAsT run names were cut to 32 characters (``…__org_m_2``) everywhere."""
    ps = per_session_table()
    long_names = {"Sys 1": "org_manual_ance_bert", "Sys 2": "org_manual_ance_bert_reranked"}
    ps["system_id"] = ps["system_id"].cat.rename_categories(long_names)
    ps["n_highly_relevant_found"] = np.arange(len(ps), dtype=np.int64)
    title = "A study whose name is far too long for the file label of an SPSS data file"
    res = write_exports(tmp_path, per_session=ps, parameters=PARAMS, title=title)
    wide = pd.read_csv(tmp_path / "per_user_by_system.csv")
    full = "n_highly_relevant_found__org_manual_ance_bert_reranked"
    assert full in wide.columns and wide.columns.is_unique
    assert "n_highly_relevant_found__org_manual_ance_bert" in wide.columns
    pq = pd.read_parquet(tmp_path / "per_user_by_system.parquet")
    assert list(pq.columns) == list(wide.columns)
    for ext, reader in (("dta", pyreadstat.read_dta), ("sav", pyreadstat.read_sav)):
        df, meta = reader(str(tmp_path / f"per_user_by_system.{ext}"))
        labels = dict(zip(meta.column_names, meta.column_labels, strict=True))
        assert df.columns.is_unique and all(len(c) <= 32 for c in df.columns)
        assert labels["n_highly_relevant_found_s2"].endswith(
            ", system org_manual_ance_bert_reranked"
        )
        assert labels["nsdcg_s1"].endswith(", system org_manual_ance_bert")
        np.testing.assert_allclose(df["sdcg_s2"], wide["sdcg__org_manual_ance_bert_reranked"])
        # the study name alone (the file name does not fit), cut to SPSS's 64 bytes
        expected = title if ext == "dta" else title[:61] + "..."
        assert meta.file_label == expected
    book = res.codebook.set_index(["file", "variable"])
    assert book.loc[("per_user_by_system", full), "stats_variable"] == "n_highly_relevant_found_s2"
    assert "`n_highly_relevant_found_s2`" in (tmp_path / "codebook.md").read_text()
    assert len(res.notes) == 1 and "SPSS's 64 bytes" in res.notes[0]  # the .sav label is cut


def test_csv_safe_exports_neutralise_formulas_only_in_csv(tmp_path):
    ps = per_session_table()
    ps["session_id"] = ps["session_id"].cat.rename_categories({"s0": "=cmd|' /C calc'!A0"})
    write_exports(
        tmp_path, per_session=ps, parameters=PARAMS, formats=["csv", "dta"], csv_safe=True
    )
    csv = pd.read_csv(tmp_path / "per_session_wide.csv")
    assert csv["session_id"].iloc[0] == "'=cmd|' /C calc'!A0"
    assert (csv["sdcg"] == ps["sdcg"]).all()  # numbers stay numbers
    df, _ = pyreadstat.read_dta(str(tmp_path / "per_session_wide.dta"))
    assert df["session_id"].iloc[0] == "=cmd|' /C calc'!A0"


@pytest.mark.parametrize("fmt", ["sav", "dta", "parquet", "csv"])
def test_a_refused_write_names_the_export_file(tmp_path, monkeypatch, fmt):
    """Round 3, OS-2: a file-size limit in pyreadstat was an internal error (exit 70)."""
    import errno

    from sessionval.errors import WriteError

    def readstat(*args: object, **kwargs: object) -> None:
        raise pyreadstat.ReadstatError("Unable to write data")  # what `ulimit -f` gives

    def os_error(*args: object, **kwargs: object) -> None:
        raise OSError(errno.EFBIG, "File too large")  # pyarrow and pandas: no file name

    monkeypatch.setattr(pyreadstat, "write_sav", readstat)
    monkeypatch.setattr(pyreadstat, "write_dta", readstat)
    monkeypatch.setattr(pd.DataFrame, "to_parquet", os_error)
    monkeypatch.setattr(pd.DataFrame, "to_stata", os_error)  # .dta: pandas' writer
    monkeypatch.setattr(export, "write_csv", os_error)  # CSV goes through Arrow
    table = pd.DataFrame({"system_id": ["S1", "S2"], "nsdcg": [0.5, 0.25]})
    with pytest.raises(WriteError, match=rf"scores\.{fmt}: cannot write: ") as info:
        write_table(table, tmp_path / "scores", formats=[fmt])
    assert info.value.path == tmp_path / f"scores.{fmt}"
    expected = "Unable to write data" if fmt == "sav" else "ulimit -f"
    assert expected in str(info.value)


def test_a_large_table_is_written_in_the_compact_formats_and_the_notes_say_which(tmp_path):
    ps = per_session_table()
    res = write_exports(
        tmp_path, per_session=ps, per_query=per_query_table(ps), parameters=PARAMS, large_rows=5
    )
    names = {p.name for p in res.files}
    n_users = ps["user_id"].nunique()
    assert len(ps) > 5 and n_users <= 5
    # wide: Parquet and CSV; long: Parquet alone; a small table: every format
    assert {"per_session_wide.parquet", "per_session_wide.csv"} <= names
    assert not {"per_session_wide.dta", "per_session_wide.sav"} & names
    assert "per_session_long.parquet" in names and "per_session_long.csv" not in names
    assert {f"per_user_by_system.{ext}" for ext in ("csv", "parquet", "dta", "sav")} <= names
    (note,) = [n for n in res.notes if "compact formats" in n]
    assert f"per_session_long ({len(res.tables['per_session_long']):,} rows): .parquet" in note
    assert "per_user_by_system" not in note
    # the codebook still describes every table
    assert set(res.codebook["file"]) >= set(res.tables)


def test_no_row_limit_writes_every_table_in_every_format(tmp_path):
    ps = per_session_table()
    res = write_exports(tmp_path, per_session=ps, parameters=PARAMS, large_rows=None)
    assert len(res.files) == 3 * 4 + 2 and not res.notes


def test_copies_are_copied_instead_of_written(tmp_path):
    """A file given as holding a table in a format is copied (the run's tables/), not rebuilt."""
    ps = per_session_table()
    given = tmp_path / "given.csv"
    given.write_text("the run's own file\n", encoding="utf-8")
    res = export.write_exports(
        tmp_path / "out",
        per_session=ps,
        parameters=PARAMS,
        formats=("csv", "parquet"),
        copies={"per_session_wide": {"csv": given, "dta": given}},
    )
    out = tmp_path / "out"
    assert (out / "per_session_wide.csv").read_text(encoding="utf-8") == "the run's own file\n"
    assert {out / "per_session_wide.csv", out / "per_session_wide.parquet"} <= set(res.files)
    pd.testing.assert_frame_equal(pd.read_parquet(out / "per_session_wide.parquet"), ps)
    assert not (out / "per_session_wide.dta").exists()  # a format not asked for is not copied

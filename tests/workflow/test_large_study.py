"""The run's switches for large studies: no per-position table, Parquet only, peak memory."""

from __future__ import annotations

import pytest

from sessionval.errors import SessionvalError
from sessionval.evaluation.config import SessionConfig
from sessionval.evaluation.engine import LocalEngine
from sessionval.workflow import (
    RunOutputs,
    evaluate_step,
    load_step,
    peak_memory_mb,
    run,
    write_tables,
    write_validation,
)


@pytest.fixture
def loaded(study_dir):
    return load_step(study_dir, qrels=study_dir / "qrels.txt", mode="strict")


def test_tables_without_positions_in_parquet_only(loaded, tmp_path):
    outputs = RunOutputs(tmp_path)
    ev = evaluate_step(loaded, SessionConfig(), engine=LocalEngine(chunk_rows=1))
    write_tables(outputs, ev, per_position=False, formats=("parquet",))
    assert outputs.written == ["tables/per_query.parquet", "tables/per_session.parquet"]
    assert "positions" not in ev._cache  # the per-position vectors were never computed


def test_validation_summary_ends_with_the_peak_memory(loaded, tmp_path):
    peak = peak_memory_mb()
    assert peak > 10  # a Python process with pandas holds tens of MB
    outputs = RunOutputs(tmp_path)
    summary = write_validation(outputs, loaded, peak_memory=1234.4)
    text = (outputs.root / "validation.txt").read_text()  # staged until the run finishes
    assert text == summary.to_text() + "\n\npeak memory of this process after loading: 1,234 MB\n"


def test_unknown_table_format_is_refused_before_any_output(study_dir, tmp_path):
    with pytest.raises(SessionvalError, match=r"table formats \['xlsx'\] unknown"):
        run(study_dir, qrels=study_dir / "qrels.txt", out=tmp_path / "o", table_formats=("xlsx",))
    assert not (tmp_path / "o").exists()


FAST = '[figures]\nformats = ["png"]\n[run]\nformats = ["csv"]\n'


def test_no_exports_skips_the_folder_and_says_so(study_dir, tmp_path):
    """``run --no-exports``: no exports/, a note in the report, ``exports = false`` recorded."""
    from sessionval.cli import main

    config = tmp_path / "fast.toml"
    config.write_text(FAST, encoding="utf-8")
    out = tmp_path / "o"
    common = ["run", str(study_dir), "--qrels", str(study_dir / "qrels.txt"), "--no-progress"]
    assert main([*common, "--out", str(out), "--config", str(config), "--no-figures"]) == 0
    assert (out / "exports").is_dir()
    assert main([*common, "--out", str(out), "--config", str(config), "--no-exports"]) == 0
    assert not (out / "exports").exists()  # the previous run's exports are not left behind
    assert "exports not written (--no-exports" in (out / "report.html").read_text()
    written = (out / "config.toml").read_text()
    assert "exports = false" in written
    # the written configuration repeats the run: no exports again, unless --exports
    again = tmp_path / "again.toml"
    again.write_text(written, encoding="utf-8")
    assert main([*common, "--out", str(tmp_path / "o2"), "--config", str(again)]) == 0
    assert not (tmp_path / "o2" / "exports").exists()
    assert main([*common, "--out", str(tmp_path / "o3"), "--config", str(again), "--exports"]) == 0
    assert (tmp_path / "o3" / "exports").is_dir()
    assert "exports = true" in (tmp_path / "o3" / "config.toml").read_text()


def test_large_exports_are_written_once_or_twice_and_all_formats_asks_for_every_one(
    study_dir, tmp_path, capsys
):
    """Issue 26: above ``[run] large_export_rows`` a table is not repeated in every format."""
    from sessionval.cli import main

    common = ["run", str(study_dir), "--qrels", str(study_dir / "qrels.txt"), "--no-progress"]
    slim = tmp_path / "slim.toml"
    slim.write_text(
        '[figures]\nformats = ["png"]\n[run]\nformats = ["csv", "parquet", "dta"]\n'
        "large_export_rows = 1\n",
        encoding="utf-8",
    )
    out = tmp_path / "o"
    assert main([*common, "--out", str(out), "--config", str(slim), "--no-figures"]) == 0
    said = capsys.readouterr()
    exports = {p.name for p in (out / "exports").iterdir()}  # two sessions: 2 rows and more
    assert "per_session_long.parquet" in exports and "per_session_long.csv" not in exports
    assert "per_session_wide.csv" in exports and "per_session_wide.dta" not in exports
    note = "exports/ of more than 1 rows are written in the compact formats only"
    assert note in said.out + said.err
    assert "[run] all_formats = true writes every format" in (out / "report.html").read_text()
    written = (out / "config.toml").read_text()
    assert "all_formats = false" in written and "large_export_rows = 1" in written
    every = tmp_path / "every.toml"
    every.write_text(written.replace("all_formats = false", "all_formats = true"), "utf-8")
    out2 = tmp_path / "o2"
    assert main([*common, "--out", str(out2), "--config", str(every), "--no-figures"]) == 0
    exports = {p.name for p in (out2 / "exports").iterdir()}
    assert {"per_session_long.csv", "per_session_long.dta", "per_session_wide.dta"} <= exports
    assert note not in capsys.readouterr().out


def test_a_large_per_position_table_is_written_once_and_said(study_dir, tmp_path, capsys):
    """Issue 26: above ``[run] large_export_rows`` tables/per_position is Parquet alone."""
    from sessionval.cli import main

    common = ["run", str(study_dir), "--qrels", str(study_dir / "qrels.txt"), "--no-progress"]
    common += ["--no-figures", "--no-exports"]
    slim = tmp_path / "slim.toml"
    slim.write_text(FAST + "large_export_rows = 2\n", encoding="utf-8")
    out = tmp_path / "o"
    assert main([*common, "--out", str(out), "--config", str(slim)]) == 0
    said = capsys.readouterr().err
    tables = {p.name for p in (out / "tables").iterdir()}
    assert "per_position.parquet" in tables and "per_position.csv" not in tables
    assert {"per_query.csv", "per_session.csv"} <= tables  # the wide tables keep both
    note = "tables/per_position has 50 rows (more than [run] large_export_rows = 2): written as"
    assert f"{note} .parquet only" in said
    assert note in (out / "report.html").read_text()
    # --tables csv: the one format asked for; all_formats: every format
    as_csv = ["--out", str(tmp_path / "c"), "--config", str(slim), "--tables", "csv"]
    assert main([*common, *as_csv]) == 0
    assert (tmp_path / "c" / "tables" / "per_position.csv").is_file()
    every = tmp_path / "every.toml"
    every.write_text(FAST + "large_export_rows = 2\nall_formats = true\n", encoding="utf-8")
    capsys.readouterr()
    assert main([*common, "--out", str(tmp_path / "e"), "--config", str(every)]) == 0
    assert (tmp_path / "e" / "tables" / "per_position.csv").is_file()
    assert "tables/per_position has" not in capsys.readouterr().err


def test_the_wide_exports_are_the_tables_files(study_dir, tmp_path):
    """exports/per_*_wide.{csv,parquet} hold the bytes of tables/per_*: copied, not rewritten."""
    from sessionval.cli import main

    config = tmp_path / "safe.toml"
    config.write_text(FAST.replace('["csv"]', '["csv", "parquet", "dta"]'), encoding="utf-8")
    out = tmp_path / "o"
    args = ["run", str(study_dir), "--qrels", str(study_dir / "qrels.txt"), "--no-progress"]
    assert main([*args, "--out", str(out), "--config", str(config), "--csv-safe"]) == 0
    for table, export in (("per_session", "per_session_wide"), ("per_query", "per_query_wide")):
        for ext in ("csv", "parquet"):
            exported = (out / "exports" / f"{export}.{ext}").read_bytes()
            assert exported == (out / "tables" / f"{table}.{ext}").read_bytes()
    assert (out / "exports" / "per_session_wide.dta").is_file()

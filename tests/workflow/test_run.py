"""``sessionval run`` as a user meets it: flags, notes on the console, the output folder kept safe.

Regression tests for issue 10 item 6 (outputs atomic and confined, ``--force``, inputs never
overwritten, ``--csv-safe``), its plotting reproductions (F10/T6: markup and ``_`` in ids) and
issue 12 items 4, 5 and 7 (flags, gains for the grade scale, per-query measures).
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pandas as pd
import pyreadstat
import pytest

from sessionval.cli import main
from sessionval.workflow import MANIFEST
from tests import builders

FAST = '[figures]\nformats = ["png"]\n[run]\nformats = ["csv", "dta"]\n'


@pytest.fixture
def fast(tmp_path) -> Path:
    path = tmp_path / "fast.toml"
    path.write_text(FAST, encoding="utf-8")
    return path


def _run(study: Path, out: Path, *extra: str) -> int:
    args = ["run", str(study), "--qrels", str(study / "qrels.txt"), "--out", str(out)]
    return main([*args, "--no-progress", *extra])


def test_flags_set_the_common_parameters(study_dir, tmp_path, fast, capsys):
    out = tmp_path / "out"
    assert _run(study_dir, out, "--config", str(fast), "--cutoff", "2", "--gains", "0-1-2-3") == 0
    config = tomllib.loads((out / "config.toml").read_text())
    assert (config["cutoff"], config["gains"], config["b"]) == (2, "0-1-2-3", 2.0)
    ps = pd.read_csv(out / "tables" / "per_session.csv")
    assert (ps["n_positions"] == 2 * ps["n_queries"]).all()  # X = 2 positions per query
    assert _run(study_dir, out, "--preset", "jiang-allan-2016", "--b", "3") == 0
    config = tomllib.loads((out / "config.toml").read_text())
    assert (config["preset"], config["b"], config["discount"]) == (
        "jiang-allan-2016",
        3.0,
        "shifted-log",
    )
    capsys.readouterr()
    assert _run(study_dir, out, "--b", "0.5") == 2
    assert "--b = 0.5: must be greater than 1" in capsys.readouterr().err


def test_a_string_is_not_a_boolean(study_dir, tmp_path, capsys):
    """Issue 12 item 4: ``lenient = "false"`` turned lenient mode on."""
    config = tmp_path / "c.toml"
    config.write_text('[run]\nlenient = "false"\n', encoding="utf-8")
    assert _run(study_dir, tmp_path / "out", "--config", str(config)) == 2
    err = capsys.readouterr().err
    assert "[run] lenient = 'false': must be true or false" in err
    assert not (tmp_path / "out").exists()


def test_lenient_rejections_are_announced(study_dir, tmp_path, fast, capsys):
    session = builders.make_session("s3")
    session["queries"][0]["results"][0]["rank"] = 0
    path = study_dir / "sessions.jsonl"
    path.write_text(path.read_text() + json.dumps(session) + "\n")
    out = tmp_path / "out"
    assert _run(study_dir, out, "--config", str(fast), "--lenient") == 0
    err = capsys.readouterr().err
    assert f"lenient mode rejected 1 session(s): the list is in {out / 'rejects.csv'}" in err
    assert len(pd.read_csv(out / "rejects.csv")) == 1


def test_grades_beyond_the_default_scheme(study_dir, tmp_path, fast, capsys):
    """Issue 12 item 5: grade 4 stopped the run; now a documented scheme, said everywhere."""
    (study_dir / "study.json").unlink()  # the header would declare the 0-3 scale
    (study_dir / "qrels.txt").write_text("A 0 d1 4\nA 0 d2 0\nA 0 d3 1\nB 0 d9 2\n")
    out = tmp_path / "out"
    assert _run(study_dir, out, "--config", str(fast)) == 0
    err = capsys.readouterr().err
    assert "note: gains = exp (gain = 2^grade - 1) chosen for the data" in err
    assert "gains = exp (gain = 2^grade - 1) chosen" in (out / "report.html").read_text()
    assert tomllib.loads((out / "config.toml").read_text())["gains"] == "exp"
    assert json.loads((out / "config.json").read_text())["notes"][0].startswith("gains = exp")
    # a scheme the user chose stays an error
    assert _run(study_dir, out, "--config", str(fast), "--gains", "0-1-10-100") == 2
    assert "has no gain for grade(s) [4]" in capsys.readouterr().err


def test_per_query_measures_from_the_configuration(study_dir, tmp_path):
    """Issue 12 item 7: ``[measures] query`` becomes per_query columns and exports."""
    config = tmp_path / "c.toml"
    config.write_text(FAST + '[measures]\nquery = ["nDCG@10", "P@2", "AP"]\n', encoding="utf-8")
    out = tmp_path / "out"
    assert _run(study_dir, out, "--config", str(config)) == 0
    pq = pd.read_csv(out / "tables" / "per_query.csv")
    assert {"nDCG@10", "P@2", "AP"} <= set(pq.columns)
    assert pq["P@2"].between(0, 1).all()
    wide = pd.read_csv(out / "exports" / "per_query_wide.csv")
    assert "nDCG@10" in wide.columns
    df, meta = pyreadstat.read_dta(str(out / "exports" / "per_query_wide.dta"))
    labels = dict(zip(meta.column_names, meta.column_labels, strict=True))
    assert "nDCG_10" in df.columns and "nDCG@10" in labels["nDCG_10"]


def test_session_covariates_in_the_exports(study_dir, tmp_path, fast):
    out = tmp_path / "out"
    assert _run(study_dir, out, "--config", str(fast)) == 0
    ps = pd.read_csv(out / "exports" / "per_session_wide.csv")
    assert {"session_start", "duration_s", "session_order", "user_experience"} <= set(ps.columns)
    book = pd.read_csv(out / "exports" / "codebook.csv", keep_default_na=False)
    rows = book[book["file"] == "per_session_wide"].set_index("variable")
    assert rows.loc["session_order", "label"] == "Order of the session in the searcher's sequence"
    assert rows.loc["user_experience", "label"] == "Searcher attribute: experience"


# ---------------------------------------------------------------------------------------------
# the output folder (issue 10 item 6)


def test_a_failed_run_keeps_the_previous_outputs(study_dir, tmp_path, fast, capsys):
    out = tmp_path / "out"
    assert _run(study_dir, out, "--config", str(fast)) == 0
    before = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    session = builders.make_session("s3")
    session["queries"][0]["results"][0]["rank"] = 0
    path = study_dir / "sessions.jsonl"
    good = path.read_text()
    path.write_text(good + json.dumps(session) + "\n")
    capsys.readouterr()
    assert _run(study_dir, out, "--config", str(fast)) == 1
    err = capsys.readouterr().err
    assert "rank" in err and f"the problems are also in {out / 'validation-failed.txt'}" in err
    after = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    failed = after.pop(Path("validation-failed.txt"))
    assert failed.startswith(b"VALIDATION FAILED")
    assert {k: v for k, v in after.items() if k != Path(MANIFEST)} == {
        k: v for k, v in before.items() if k != Path(MANIFEST)
    }
    # the next good run removes the failure report with the other stale files
    path.write_text(good)
    assert _run(study_dir, out, "--config", str(fast)) == 0
    assert not (out / "validation-failed.txt").exists()
    assert not [p for p in out.iterdir() if p.name.startswith(".sessionval-staging")]


def test_the_config_file_in_out_is_never_overwritten(study_dir, tmp_path, fast, capsys):
    out = tmp_path / "out"
    assert _run(study_dir, out, "--config", str(fast)) == 0
    written = out / "config.toml"
    text = written.read_text().replace("cutoff = 10", "cutoff = 3")
    written.write_text(text)
    capsys.readouterr()
    assert _run(study_dir, out, "--config", str(written), "--force") == 2
    assert f"--out {out} contains the input {written}" in capsys.readouterr().err
    assert written.read_text() == text


def test_foreign_files_are_not_overwritten_without_force(study_dir, tmp_path, fast, capsys):
    out = tmp_path / "out"
    out.mkdir()
    (out / "report.html").write_text("my own report")
    (out / "notes.txt").write_text("mine")
    assert _run(study_dir, out, "--config", str(fast)) == 2
    assert "exists and no earlier sessionval run wrote it" in capsys.readouterr().err
    assert (out / "report.html").read_text() == "my own report"
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt", "report.html"]
    assert _run(study_dir, out, "--config", str(fast), "--force") == 0
    assert (out / "report.html").read_text().startswith("<!DOCTYPE html>")
    assert (out / "notes.txt").read_text() == "mine"


def test_a_planted_manifest_and_symlink_touch_nothing_outside(study_dir, tmp_path, fast):
    """Issue 10: a crafted manifest plus a symlink made ``run`` delete a file outside --out."""
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    out = tmp_path / "out"
    out.mkdir()
    (out / "escape").symlink_to(tmp_path, target_is_directory=True)
    (out / MANIFEST).write_text(json.dumps({"files": ["escape/victim.txt", "../victim.txt"]}))
    assert _run(study_dir, out, "--config", str(fast)) == 0
    assert victim.read_text() == "keep me"


def test_csv_safe_neutralises_formulas(study_dir, tmp_path, fast):
    path = study_dir / "sessions.jsonl"
    path.write_text(path.read_text().replace('"system_id": "S1"', '"system_id": "=S1"'))
    header = json.loads((study_dir / "study.json").read_text())
    header["systems"][0]["system_id"] = "=S1"
    (study_dir / "study.json").write_text(json.dumps(header))
    raw, safe = tmp_path / "raw", tmp_path / "safe"
    assert _run(study_dir, raw, "--config", str(fast)) == 0
    assert _run(study_dir, safe, "--config", str(fast), "--csv-safe") == 0
    for out, expected in ((raw, "=S1"), (safe, "'=S1")):
        for rel in ("tables/per_session.csv", "exports/per_session_wide.csv"):
            ps = pd.read_csv(out / rel)
            assert expected in set(ps["system_id"]), rel
    # Parquet and Stata keep the value as it is
    assert "=S1" in set(pd.read_parquet(safe / "tables" / "per_session.parquet")["system_id"])
    assert tomllib.loads((safe / "config.toml").read_text())["run"]["csv_safe"] is True


@pytest.mark.parametrize("system", [r"$\frac{1}$", "_hidden", "$x^2$"])
def test_ids_with_markup_are_drawn_as_text(study_dir, tmp_path, fast, system):
    """Issue 10 F10/T6: mathtext in an id crashed the figures; an id starting with _ vanished."""
    path = study_dir / "sessions.jsonl"
    record = json.dumps({"system_id": system})[1:-1]
    path.write_text(path.read_text().replace('"system_id": "S1"', record))
    header = json.loads((study_dir / "study.json").read_text())
    header["systems"][0]["system_id"] = system
    (study_dir / "study.json").write_text(json.dumps(header))
    out = tmp_path / "out"
    assert _run(study_dir, out, "--config", str(fast)) == 0
    # nine, and the two reformulation figures (issue 27: the id is in the gains' legend)
    assert len(list((out / "figures").glob("*.png"))) == 11
    fig2 = pd.read_csv(out / "figures" / "fig2_session_nsdcg.csv", keep_default_na=False)
    assert system in set(fig2["system_id"])

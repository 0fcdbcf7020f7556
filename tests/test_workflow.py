"""``sessionval run`` end to end: files, values, re-runs, exit codes, the report in a browser."""

from __future__ import annotations

import json
import shutil
import tomllib
from pathlib import Path

import numpy as np
import pandas as pd
import pyreadstat
import pytest

from sessionval.cli import main
from sessionval.synth import write_study

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "sample_logs"
FIGURES = [
    "fig1_last_vs_nonlast",
    "fig1b_best_vs_other",
    "fig2_session_nsdcg",
    "fig3_scenario_sdcg",
    "fig4_individual_sessions",
    "cg_CG",
    "cg_DCG",
    "cg_nCG",
    "cg_nDCG",
    "rating_correlations",  # issue 13: measures against the ratings (the sample has ratings)
    "reformulation_gains",  # issue 27: change of DCG per reformulation group and system
    "reformulation_transitions",  # issue 27: which reformulation follows which
]


@pytest.fixture(scope="module")
def study(tmp_path_factory) -> Path:
    """sample_logs/ (the README's first command) copied, or the same design generated."""
    root = tmp_path_factory.mktemp("logs")
    if (SAMPLE / "qrels.txt").is_file() and (SAMPLE / "study.json").is_file():
        for p in SAMPLE.iterdir():
            if p.is_file():
                shutil.copy(p, root / p.name)
    else:
        write_study(root, n_sessions=120, seed=2008, formats="jsonl")
    return root


@pytest.fixture(scope="module")
def first_run(study, tmp_path_factory):
    out = tmp_path_factory.mktemp("out")
    (out / "my_notes.txt").write_text("not sessionval's", encoding="utf-8")
    code = main(
        ["run", str(study), "--qrels", str(study / "qrels.txt"), "--out", str(out), "--no-progress"]
    )
    return code, out


def test_analysis_run_writes_everything(first_run, study):
    code, out = first_run
    assert code == 0
    for name in ("per_position", "per_query", "per_session", "reformulations"):
        assert (out / "tables" / f"{name}.csv").is_file()
        assert (out / "tables" / f"{name}.parquet").is_file()
    for name in FIGURES:
        assert (out / "figures" / f"{name}.png").read_bytes().startswith(b"\x89PNG")
        assert (out / "figures" / f"{name}.pdf").read_bytes().startswith(b"%PDF")
        assert b"<svg" in (out / "figures" / f"{name}.svg").read_bytes()[:1000]
        assert (out / "figures" / f"{name}.csv").is_file()
    for ext in ("csv", "parquet", "dta", "sav"):
        assert (out / "exports" / f"per_session_wide.{ext}").is_file()
    assert (out / "exports" / "codebook.csv").is_file()
    assert (out / "validation.txt").read_text().startswith("120 records read")
    assert (out / "rejects.csv").is_file() and (out / "report.html").is_file()
    assert (out / "my_notes.txt").read_text() == "not sessionval's"


def test_run_writes_the_reformulations_of_the_sample(first_run):
    """Issue 27: one row per consecutive query pair, the issue's columns first."""
    from sessionval.analysis.reformulations import REFORMULATION_COLUMNS

    _, out = first_run
    table = pd.read_parquet(out / "tables" / "reformulations.parquet")
    pq = pd.read_parquet(out / "tables" / "per_query.parquet")
    assert list(table.columns)[: len(REFORMULATION_COLUMNS)] == list(REFORMULATION_COLUMNS)
    assert len(table) == len(pq) - pq["session_id"].nunique()
    csv = pd.read_csv(out / "tables" / "reformulations.csv")
    np.testing.assert_allclose(csv["delta_dcg"], table["delta_dcg"])
    assert table["new_relevant"].notna().all() and table["seconds"].notna().all()
    # two systems within searchers: the systems are compared per group and type, the
    # intervals per type are over searchers, and the report has the section
    comparisons = pd.read_csv(out / "tables" / "reformulation_comparisons.csv")
    assert set(comparisons["design"]) == {"within"} and set(comparisons["level"]) == {
        "group",
        "type",
    }
    effects = pd.read_csv(out / "tables" / "reformulation_effects.csv")
    assert set(effects["unit"]) == {"user_id"} and set(effects["system_id"]) == {"S1", "S2"}
    assert 'id="reformulations"' in (out / "report.html").read_text(encoding="utf-8")


def test_analysis_run_values_consistent(first_run):
    _, out = first_run
    ps = pd.read_parquet(out / "tables" / "per_session.parquet")
    assert len(ps) == 120
    csv = pd.read_csv(out / "tables" / "per_session.csv")
    np.testing.assert_allclose(csv["nsdcg"], ps["nsdcg"])
    # the exported Stata file holds the same scores, system names as value labels
    df, meta = pyreadstat.read_dta(str(out / "exports" / "per_session_wide.dta"))
    np.testing.assert_allclose(df["nsdcg"], ps["nsdcg"])
    assert sorted(meta.variable_value_labels["system_id"].values()) == sorted(
        ps["system_id"].astype(str).unique()
    )
    # Figure 2's table: its last position is the mean final nsDCG per system (sessions held)
    fig2 = pd.read_csv(out / "figures" / "fig2_session_nsdcg.csv")
    nsd = fig2[fig2["measure"] == "nsdcg"]
    final = nsd[nsd["position"] == nsd["position"].max()].set_index("system_id")["value"]
    expected = ps.groupby(ps["system_id"].astype(str))["nsdcg"].mean()
    np.testing.assert_allclose(final.sort_index().to_numpy(), expected.sort_index().to_numpy())
    # configuration actually used: the paper's defaults
    cfg = tomllib.loads((out / "config.toml").read_text())
    assert (cfg["b"], cfg["bq"], cfg["cutoff"], cfg["gains"]) == (2.0, 4.0, 10, "0-1-10-100")
    assert cfg["figures"]["ranks"] == 100  # the figures' ranks (issue 9: no longer "depth")
    assert json.loads((out / "config.json").read_text())["session"]["duplicates"] == "every"


def test_analysis_run_report_in_browser(first_run, browser, tmp_path):
    _, out = first_run
    html = (out / "report.html").read_text()
    assert html.count("<img ") == len(FIGURES)
    assert "S1" in html and "nsdcg" in html and "Comparison of systems" in html
    assert "Paired comparison" not in html and "diff (a − b)" in html  # shown once
    copy = tmp_path / "report.html"  # probe a copy: the run's directory stays as written
    copy.write_text(html, encoding="utf-8")
    results = browser.probe(copy)
    assert len(results) == len(FIGURES)
    assert all(r.startswith("ok:") for r in results), results
    shot = browser.screenshot(copy, tmp_path / "report.png")
    assert shot.stat().st_size > 10_000


def test_analysis_run_config_roundtrip_and_clean_rerun(first_run, study, tmp_path):
    _, first = first_run
    out = tmp_path / "out"
    shutil.copytree(first, out)
    cfg = tomllib.loads((first / "config.toml").read_text())
    # the written configuration re-used with a more patient query discount (bq 4 -> 8):
    # later queries are discounted less, so no session scores lower and multi-query ones higher
    conf = tmp_path / "conf.toml"
    text = (first / "config.toml").read_text()
    text = (
        text.replace("bq = 4.0", "bq = 8.0")
        .replace("ranks = 100", "ranks = 20")
        .replace("max_sessions = 30", "max_sessions = 5")
    )
    # the written configuration has a [run] table (issue 12): change its formats there
    text = text.replace('formats = ["csv", "parquet", "dta", "sav"]', 'formats = ["csv"]')
    conf.write_text(text, encoding="utf-8")
    code = main(
        [
            "run",
            str(study),
            "--qrels",
            str(study / "qrels.txt"),
            "--out",
            str(out),
            "--config",
            str(conf),
            "--no-progress",
        ]
    )
    assert code == 0
    assert tomllib.loads((out / "config.toml").read_text())["bq"] == 8.0
    assert cfg["bq"] == 4.0
    new = pd.read_parquet(out / "tables" / "per_session.parquet")
    old = pd.read_parquet(first / "tables" / "per_session.parquet")
    assert (new["sdcg"] >= old["sdcg"] - 1e-9).all() and (new["sdcg"] > old["sdcg"]).any()
    # stale files of the first run are gone, the user's file is kept
    assert not (out / "exports" / "per_session_wide.dta").exists()
    assert not (out / "exports" / "per_session_wide.sav").exists()
    assert (out / "exports" / "per_session_wide.csv").is_file()
    assert (out / "my_notes.txt").is_file()
    manifest = json.loads((out / ".sessionval-run.json").read_text())["files"]
    assert "report.html" in manifest and all((out / f).is_file() for f in manifest)
    fig1 = pd.read_csv(out / "figures" / "fig1_last_vs_nonlast.csv")
    assert fig1["rank"].max() == 20
    fig4 = pd.read_csv(out / "figures" / "fig4_individual_sessions.csv")
    assert fig4["session_id"].nunique() == 5
    assert "the first 5 of" in (out / "report.html").read_text()


def _bad_study(study: Path, root: Path) -> Path:
    root.mkdir()
    for p in study.iterdir():
        if p.is_file() and p.name != "sessions.parquet":
            shutil.copy(p, root / p.name)
    lines = (root / "sessions.jsonl").read_text().splitlines()
    for i, line in enumerate(lines):
        session = json.loads(line)
        with_results = [q for q in session["queries"] if q.get("results")]
        if with_results:
            with_results[0]["results"][0]["rank"] = 0  # ranks start at 1
            lines[i] = json.dumps(session)
            break
    (root / "sessions.jsonl").write_text("\n".join(lines) + "\n")
    return root


def test_analysis_run_validation_failure_exit_1(study, tmp_path, capsys):
    bad = _bad_study(study, tmp_path / "bad")
    out = tmp_path / "out"
    code = main(["run", str(bad), "--qrels", str(bad / "qrels.txt"), "--out", str(out)])
    assert code == 1
    text = (out / "validation.txt").read_text()
    assert "VALIDATION FAILED" in text and "rank" in text
    assert "rank" in capsys.readouterr().err
    # lenient: the bad session is rejected, the rest evaluated
    code = main(
        [
            "run",
            str(bad),
            "--qrels",
            str(bad / "qrels.txt"),
            "--out",
            str(out),
            "--lenient",
            "--no-progress",
        ]
    )
    assert code == 0
    rejects = pd.read_csv(out / "rejects.csv")
    assert len(rejects) >= 1
    assert len(pd.read_parquet(out / "tables" / "per_session.parquet")) == 119


@pytest.mark.parametrize(
    ("args", "config", "message"),
    [
        (["--out"], None, "requires an argument"),
        ([], None, "Missing option '--out'"),
        (["--out", "{tmp}/o", "--config", "{tmp}/c.toml"], "b = [", "not valid TOML"),
        (
            ["--out", "{tmp}/o", "--config", "{tmp}/c.toml"],
            "[figures]\nwidth = 3\n",
            "unknown key(s) ['width'] in [figures]",
        ),
        (["--out", "{tmp}/o", "--config", "{tmp}/c.toml"], "b = 0.5\n", "invalid configuration"),
        (
            ["--out", "{tmp}/o", "--config", "{tmp}/c.toml"],
            '[figures]\nscenario = "Z"\n',
            "scenario 'Z' is not a topic",
        ),
    ],
)
def test_analysis_run_usage_errors_exit_2(study, tmp_path, capsys, args, config, message):
    if config is not None:
        (tmp_path / "c.toml").write_text(config)
    argv = [
        "run",
        str(study),
        "--qrels",
        str(study / "qrels.txt"),
        "--no-progress",
        *[a.format(tmp=tmp_path) for a in args],
    ]
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_analysis_run_missing_inputs_exit_2(tmp_path, capsys):
    assert main(["run", str(tmp_path / "nope"), "--out", str(tmp_path / "o")]) == 2
    assert "does not exist" in capsys.readouterr().err


PINNED = Path(__file__).resolve().parent / "fixtures" / "sample_run"


@pytest.mark.parametrize("name", ["per_session.csv", "per_query.csv", "per_position.parquet"])
def test_run_tables_on_sample_logs_are_pinned(first_run, name):
    """The README's main job writes the tables it wrote before the architecture change.

    The pinned files were written by ``sessionval run sample_logs/`` at the last commit
    before the wave-2 layout; integers and ids must match exactly, floats to 1e-12.
    """
    _, out = first_run
    read = pd.read_csv if name.endswith(".csv") else pd.read_parquet
    got, want = read(out / "tables" / name), read(PINNED / name)
    assert list(got.columns)[: len(want.columns)] == list(want.columns)
    got = got[list(want.columns)]
    for col in want.columns:
        w, g = want[col], got[col]
        if pd.api.types.is_float_dtype(w):
            np.testing.assert_allclose(g.to_numpy(float), w.to_numpy(float), rtol=1e-12, atol=0)
        else:
            pd.testing.assert_series_equal(g.astype(str), w.astype(str), check_names=False)


@pytest.mark.parametrize(
    ("config", "message", "written"),
    [
        ('[figures]\ncg_gains = "bogus"\n', "invalid configuration", False),
        ('[figures]\nscenario = "Z"\n', "scenario 'Z' is not a topic", True),
    ],
)
def test_analysis_run_settings_checked_before_tables_are_written(
    study, tmp_path, capsys, config, message, written
):
    (tmp_path / "c.toml").write_text(config)
    out = tmp_path / "o"
    argv = ["run", str(study), "--qrels", str(study / "qrels.txt"), "--out", str(out)]
    assert main([*argv, "--config", str(tmp_path / "c.toml"), "--no-progress"]) == 2
    assert message in capsys.readouterr().err
    # a configuration error leaves no output; a figure cell unknown to the study is found
    # right after validation, before any score is written
    assert out.exists() is written
    assert not (out / "tables").exists()


@pytest.mark.parametrize(
    ("inputs", "extra"),
    [
        ("lab", []),  # auto-detected; the folder brings its own qrels
        ("cast", ["--from", "cast", "--qrels", "{fx}/cast/qrels.txt", "--depth", "3"]),
    ],
)
def test_run_reads_every_format(fx, tmp_path, inputs, extra):
    """``run`` loads through the format registry, as ``validate`` and ``convert`` do."""
    out = tmp_path / "out"
    config = tmp_path / "config.toml"
    config.write_text('gains = "exp"\n', encoding="utf-8")  # CAsT grades run to 4
    args = [a.replace("{fx}", str(fx)) for a in extra]
    code = main(
        [
            "run",
            str(fx / inputs),
            *args,
            "--config",
            str(config),
            "--out",
            str(out),
            "--no-progress",
        ]
    )
    assert code == 0
    ps = pd.read_csv(out / "tables" / "per_session.csv")
    assert len(ps) > 0 and ps["sdcg"].notna().all()
    assert (out / "report.html").is_file()


def test_run_without_judgments_stops_before_writing(tmp_path):
    out = tmp_path / "out"
    code = main(["run", str(SAMPLE), "--out", str(out), "--no-progress"])
    assert code == 2 and not out.exists()

"""``[run] background_process``: the figures rendered by a second process are the same files."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pyreadstat
import pytest
from pydantic import ValidationError

from sessionval import write_study
from sessionval.output.background import BackgroundWork
from sessionval.workflow import run
from sessionval.workflow.config_file import RunOptions
from sessionval.workflow.plan import use_background


def _config(tmp_path: Path, value: str) -> Path:
    path = tmp_path / f"run-{value}.toml"
    path.write_text(f"[run]\nbackground_process = {value}\n", encoding="utf-8")
    return path


def test_background_figures_equal_figures_rendered_here(tmp_path, monkeypatch):
    logs = tmp_path / "logs"
    write_study(logs, n_sessions=60, seed=11, formats="jsonl")
    started = []
    start = BackgroundWork.start

    def watched(self: BackgroundWork, preload: tuple[str, ...] = ()) -> None:
        started.append(self)
        start(self, preload)

    monkeypatch.setattr(BackgroundWork, "start", watched)
    outs = {}
    for value in ("false", "true"):
        out = tmp_path / f"out-{value}"
        res = run(
            logs, qrels=logs / "qrels.txt", out=out, progress=False,
            config_path=_config(tmp_path, value),
        )  # fmt: skip
        outs[value] = (out, res)
        assert len(started) == (value == "true")  # the second process only when asked
    (here, res_here), (there, res_there) = outs["false"], outs["true"]
    # every file the same bytes: figures, their tables, the statistics' and correlations'
    # tables (made in the background process); not those that record when or how they ran
    varies = {"config.toml", "config.json", "validation.txt", "report.html", ".dta", ".sav"}
    files = sorted(p.relative_to(here) for p in here.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(there) for p in there.rglob("*") if p.is_file())
    assert sum(p.suffix == ".pdf" for p in files) > 5
    names = {p.name for p in files}
    assert {"comparisons.csv", "mixed_model.csv", "rating_correlations.csv"} <= names
    for rel in files:
        if rel.name not in varies and rel.suffix not in varies:
            assert (here / rel).read_bytes() == (there / rel).read_bytes(), rel
    # Stata and SPSS files (written there) record their time: the same data, labels, measures
    stats = [rel for rel in files if rel.suffix in (".dta", ".sav")]
    assert len(stats) >= 4
    for rel in stats:
        read = pyreadstat.read_dta if rel.suffix == ".dta" else pyreadstat.read_sav
        (a, meta_a), (b, meta_b) = read(str(here / rel)), read(str(there / rel))
        pd.testing.assert_frame_equal(a, b)
        assert meta_a.column_labels == meta_b.column_labels
        assert meta_a.variable_value_labels == meta_b.variable_value_labels
    # the report shows the same figures (its PNGs and SVGs are the background's)
    uris = [
        re.findall(r"data:image/[^\"']+", (o / "report.html").read_text()) for o in (here, there)
    ]
    assert len(uris[0]) > 10 and uris[0] == uris[1]
    assert sorted(res_here.files) == sorted(res_there.files)
    assert started[0].ran_here == 0  # every figure and step pickled: none made here


@pytest.mark.parametrize(("value", "n_sessions", "cpus", "expected"), [
    ("auto", 60, 2, False), ("auto", 20_000, 2, True), ("auto", 10**6, 1, False),
    (True, 60, 1, True), (False, 10**6, 2, False),
])  # fmt: skip
def test_background_decided_from_the_study_and_the_cpus(value, n_sessions, cpus, expected):
    option = RunOptions(background_process=value).background_process
    assert use_background(option, n_sessions, work=True, cpus=cpus) is expected
    # nothing to hand off (no figures, no Stata/SPSS exports): no process
    assert use_background(option, n_sessions, work=False, cpus=cpus) is False


def test_background_process_accepts_auto_true_false_only():
    with pytest.raises(ValidationError, match="background_process"):
        RunOptions(background_process="yes")


def test_without_figures_the_stata_and_spss_files_still_go_to_the_process(tmp_path, monkeypatch):
    logs = tmp_path / "logs"
    write_study(logs, n_sessions=40, seed=5, formats="jsonl")
    started: list[BackgroundWork] = []
    start = BackgroundWork.start

    def watched(self: BackgroundWork, preload: tuple[str, ...] = ()) -> None:
        started.append(self)
        start(self, preload)

    monkeypatch.setattr(BackgroundWork, "start", watched)
    out = tmp_path / "out"
    run(
        logs, qrels=logs / "qrels.txt", out=out, progress=False, figures=False,
        config_path=_config(tmp_path, "true"),
    )  # fmt: skip
    assert len(started) == 1 and started[0].ran_here == 0
    assert (out / "exports" / "per_session_wide.sav").is_file()
    # no Stata/SPSS format and no figures: nothing to hand off, no process
    no_stats = tmp_path / "csv.toml"
    no_stats.write_text('[run]\nbackground_process = true\nformats = ["csv"]\n', encoding="utf-8")
    run(logs, qrels=logs / "qrels.txt", out=tmp_path / "out2", progress=False, figures=False,
        config_path=no_stats)  # fmt: skip
    assert len(started) == 1

"""``gains = "auto"``: the gain scheme fitted to the data once, the same on every road.

Python's ``evaluate()``, ``sessionval run`` and ``meta sensitivity`` score a study graded
0-4 alike (issue 22: before, only the run fitted the gains and the other two raised).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from sessionval.cli import main
from sessionval.errors import JudgmentError
from sessionval.evaluation.config import SessionConfig
from sessionval.evaluation.gain_fit import ConfigNote, data_grades, fit_gains
from sessionval.evaluation.session import evaluate
from sessionval.io.study import load_study
from sessionval.workflow.meta import parameter_sensitivity
from tests import builders

PACKAGE = Path(__file__).resolve().parents[2] / "sessionval"
CHOSEN = "gains = exp (gain = 2^grade - 1) chosen for the data"


@pytest.fixture
def graded_to_4(study_dir: Path) -> Path:
    """The two-session study with a judgment of grade 4 (no header: it declares 0-3)."""
    (study_dir / "study.json").unlink()
    (study_dir / "qrels.txt").write_text("A 0 d1 4\nA 0 d2 0\nA 0 d3 1\nB 0 d9 2\nB 0 d1 0\n")
    return study_dir


def test_auto_is_the_default_and_round_trips() -> None:
    cfg = SessionConfig()
    assert cfg.gains.name == "auto" and not cfg.gains_fitted
    assert SessionConfig.model_validate_json(cfg.model_dump_json()) == cfg
    assert cfg.replace(b=4).gains.name == "auto"  # a change keeps the choice open
    assert SessionConfig(gains="auto") == cfg and SessionConfig(gains="exp").gains_fitted


@pytest.mark.parametrize(
    ("grades", "negative", "chosen", "noted"),
    [
        ([0, 1, 2, 3], "clip", "0-1-10-100", False),
        ([0, 4], "clip", "exp", True),
        ([-2, 0, 3], "clip", "0-1-10-100", False),  # clipped to 0: covered
        ([-2, 0, 3], "keep", "exp", True),  # kept: -2 has no gain in 0-1-10-100
        ([0, np.nan, 2], "clip", "0-1-10-100", False),
    ],
)
def test_auto_settles_on_the_grades(grades, negative, chosen, noted) -> None:
    cfg, notes = SessionConfig(negative=negative).fit_gains(grades)
    assert cfg.gains.name == chosen and cfg.gains_fitted and bool(notes) == noted
    assert cfg.fit_gains(grades) == (cfg, ())  # settled once: then only checked


def test_a_chosen_scheme_is_checked_not_changed() -> None:
    cfg = SessionConfig(gains="0-1-10-100")
    with pytest.raises(JudgmentError, match=r"has no gain for grade\(s\) \[4\] of the judgments"):
        cfg.fit_gains([0, 4])
    assert SessionConfig(gains="exp").fit_gains([0, 7]) == (SessionConfig(gains="exp"), ())


def test_the_grades_are_the_scale_of_whoever_grades(graded_to_4: Path) -> None:
    loaded = load_study(graded_to_4, qrels=graded_to_4 / "qrels.txt")
    ref = data_grades(SessionConfig(), loaded.judgments, loaded.frame)
    assert ref is not None and 4.0 in ref
    searcher = SessionConfig(judgments="searcher")
    assert data_grades(searcher, None) is None  # not known before the sessions are read
    assert fit_gains(searcher, None) == (searcher, ())


def test_evaluate_scores_what_run_scores_on_a_0_to_4_study(graded_to_4: Path, tmp_path) -> None:
    out = tmp_path / "out"
    args = ["run", str(graded_to_4), "--qrels", str(graded_to_4 / "qrels.txt"), "--out", str(out)]
    assert main([*args, "--no-progress", "--no-figures", "--no-exports"]) == 0
    tables = pd.read_csv(out / "tables" / "per_session.csv")
    loaded = load_study(graded_to_4, qrels=graded_to_4 / "qrels.txt")
    with pytest.warns(ConfigNote, match=r"chosen for the data.*grade\(s\) \[4\]"):
        ev = evaluate(loaded.frame, loaded.judgments)
    assert ev.config.gains.name == "exp"
    ours = ev.per_session()
    assert ours["session_id"].astype(str).tolist() == tables["session_id"].astype(str).tolist()
    for column in ("sdcg", "ideal", "nsdcg", "avg_pos_nsdcg"):
        np.testing.assert_allclose(ours[column].to_numpy(float), tables[column], rtol=1e-12)


def test_meta_sensitivity_scores_a_0_to_4_study(graded_to_4: Path, capsys) -> None:
    args = ["meta", "sensitivity", str(graded_to_4), "--qrels", str(graded_to_4 / "qrels.txt")]
    assert main([*args, "--grid", "b=2,4"]) == 0
    assert f"note: {CHOSEN}" in capsys.readouterr().err
    loaded = load_study(graded_to_4, qrels=graded_to_4 / "qrels.txt")
    table = parameter_sensitivity(loaded, {"gains": ["auto", "exp"]})
    assert table["mean"].iloc[0] == table["mean"].iloc[1]  # auto is exp on this scale
    with pytest.raises(JudgmentError, match=r"gains = 0-1-2-3 has no gain for grade\(s\) \[4\]"):
        parameter_sensitivity(loaded, {"gains": ["0-1-2-3"]})


def test_evaluate_keeps_the_paper_gains_on_a_0_to_3_study() -> None:
    frame = builders.frame([("s", "u", "T", "S", [["a", "b"]])])
    judgments = builders.judgments([("T", "a", 3), ("T", "b", 1)])
    ev = evaluate(frame, judgments)
    assert ev.config.gains.name == "0-1-10-100"
    assert ev.per_session()["sdcg"].iloc[0] == pytest.approx(100 + 1 / 2)


def test_only_the_configuration_decides_the_gains() -> None:
    """The fitting's note is written in one module: a second decider would need its own."""
    writers = sorted(
        str(p.relative_to(PACKAGE))
        for p in PACKAGE.rglob("*.py")
        if "chosen for the data" in p.read_text(encoding="utf-8")
    )
    assert writers == ["evaluation/config.py"]

"""The design knobs of the full synthetic study: assignment, sessions per searcher, effect."""

from __future__ import annotations

import pytest

from sessionval.analysis.by_design import compare_per_session
from sessionval.analysis.design import detect_design
from sessionval.cli import main
from sessionval.errors import SessionvalError
from sessionval.evaluation.session import evaluate
from sessionval.io.study import load_study
from sessionval.synth import Assignment, generate_study, write_study
from sessionval.synth.design import design_study
from sessionval.synth.simulate import CHUNK_SESSIONS


def _sessions(study):
    """One row per session of a generated study: its searcher, scenario and system."""
    cols = ["session_id", "user_id", "topic_id", "system_id"]
    flat = study.flat.select(cols).to_pandas()
    return flat.drop_duplicates("session_id").astype(str).reset_index(drop=True)


def test_default_knobs_are_the_papers_study():
    base = generate_study(n_sessions=40, seed=5, jsonl=False)
    same = generate_study(
        n_sessions=40,
        seed=5,
        jsonl=False,
        assignment=Assignment(design="within", sessions_per_searcher=4, system_effect=1.0),
    )
    assert same.flat.equals(base.flat)
    assert same.header == base.header


@pytest.mark.parametrize(
    ("assignment", "design", "block", "latin", "per_user"),
    [
        (Assignment(sessions_per_searcher=3), "within", "searcher+topic", True, {3}),
        (Assignment(topics="crossed"), "within", "searcher", False, {8}),
        (Assignment(design="between"), "between", "none", False, {4}),
        (Assignment(design="by_topic"), "by_topic", "topic", False, {24}),
    ],
    ids=["latin-3-per-searcher", "crossed", "between", "by-topic"],
)
def test_run_detects_the_asked_design(assignment, design, block, latin, per_user):
    study = generate_study(n_sessions=48, seed=3, jsonl=False, assignment=assignment)
    ps = _sessions(study)
    assert set(ps.groupby("user_id").size()) == per_user
    d = detect_design(ps)
    assert (d.design, d.block, d.latin_square) == (design, block, latin)


def test_crossed_searchers_see_each_scenario_with_both_systems():
    ps = _sessions(
        generate_study(n_sessions=64, seed=1, jsonl=False, assignment=Assignment(topics="crossed"))
    )
    assert set(ps.groupby(["user_id", "topic_id"])["system_id"].nunique()) == {2}
    assert set(ps.groupby(["topic_id", "system_id"]).size()) == {8}


def test_system_effect_moves_quality(tmp_path):
    means = {}
    for effect in (0.0, 1.0):
        write_study(
            tmp_path / str(effect),
            n_sessions=400,
            seed=11,
            formats="parquet",
            assignment=Assignment(system_effect=effect),
        )
        study = load_study(tmp_path / str(effect), qrels=tmp_path / str(effect) / "qrels.txt")
        ps = evaluate(study.frame, study.judgments).per_session()
        m = ps.groupby(ps["system_id"].astype(str))["nsdcg"].mean()
        means[effect] = m["S2"] - m["S1"]
    # equal systems differ by noise only; the paper's S2 is clearly better
    assert abs(means[0.0]) < 0.02
    assert means[1.0] > 0.04
    assert design_study(40, 1, 3, Assignment(system_effect=0.5)).system_strength.tolist() == [
        0.0,
        0.25,
        0.5,
    ]


def test_cli_knobs_write_a_between_null_study(tmp_path):
    out = tmp_path / "s"
    argv = ["synth", "--sessions", "60", "--seed", "4", "--design", "between"]
    argv += ["--system-effect", "0", "--format", "jsonl", "--out", str(out)]
    assert main(argv) == 0
    study = load_study(out, qrels=out / "qrels.txt")
    assert (
        study.study.name == "synthetic portal study (60 sessions, seed 4, between, system effect 0)"
    )
    ps = evaluate(study.frame, study.judgments).per_session()
    r = compare_per_session(ps, measures=["nsdcg"])
    assert (r["design"].iloc[0], r["test"].iloc[0]) == ("between", "welch-t")


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"design": "latin"}, r"'latin' is not a design; allowed: within, between, by_topic"),
        ({"topics": "mixed"}, r"allowed: nested, crossed"),
        ({"sessions_per_searcher": 0}, r"integer >= 1, got 0"),
        ({"system_effect": 1.5}, r"in \[0, 1\]"),
    ],
)
def test_bad_knobs_say_what_is_allowed(kwargs, match):
    with pytest.raises(SessionvalError, match=match):
        Assignment(**kwargs)


def test_assignments_that_cannot_be_laid_out_are_refused():
    with pytest.raises(SessionvalError, match="would repeat a scenario; give at most 4"):
        generate_study(n_sessions=10, assignment=Assignment(sessions_per_searcher=5))
    with pytest.raises(SessionvalError, match="at least 2 sessions per searcher"):
        generate_study(n_sessions=10, assignment=Assignment(sessions_per_searcher=1))
    # a searcher straddling two chunks would restart its clock: refused before drawing
    with pytest.raises(SessionvalError, match="straddle"):
        design = Assignment(design="between", sessions_per_searcher=3)
        generate_study(n_sessions=CHUNK_SESSIONS + 3, jsonl=False, assignment=design)

"""``--systems K``: studies and test collections of K systems of graded, known quality."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from sessionval.analysis.compare import system_means
from sessionval.analysis.meta import kendall_tau
from sessionval.cli import main
from sessionval.errors import SessionvalError
from sessionval.evaluation.session import evaluate
from sessionval.io.study import load_study
from sessionval.synth import generate_runs, generate_study, study_header, write_study
from sessionval.synth.design import SYSTEMS, design_study
from sessionval.workflow.runs import score_runs


def test_two_systems_is_the_papers_design():
    d = design_study(120, 2008, 2)
    assert d.systems == SYSTEMS
    assert d.system_strength.tolist() == [0.0, 1.0]
    assert study_header().name == "synthetic portal study (120 sessions, seed 2008)"


def test_k_systems_are_balanced_and_graded(tmp_path):
    d = design_study(600, 3, 5)
    assert [s[0] for s in d.systems] == ["S1", "S2", "S3", "S4", "S5"]
    counts = np.bincount(d.session_system, minlength=5)
    assert counts.min() >= 115 and counts.max() <= 125
    # every searcher's four sessions use four different systems
    per_user = d.session_system.reshape(-1, 4)
    assert all(len(set(row)) == 4 for row in per_user)
    write_study(tmp_path, n_sessions=600, seed=3, n_systems=5, formats="jsonl")
    study = load_study(tmp_path, qrels=tmp_path / "qrels.txt")
    assert [s.system_id for s in study.study.systems] == ["S1", "S2", "S3", "S4", "S5"]
    ps = evaluate(study.frame, study.judgments).per_session()
    mean = ps.groupby(ps["system_id"].astype(str))["sdcg"].mean().to_numpy()
    assert kendall_tau(mean, np.arange(5)) >= 0.8  # the known order, up to noise


def test_k_system_study_is_reproducible():
    a = generate_study(n_sessions=40, seed=9, n_systems=3, jsonl=False)
    b = generate_study(n_sessions=40, seed=9, n_systems=3, jsonl=False)
    assert a.flat.equals(b.flat)
    with pytest.raises(SessionvalError, match="n_systems"):
        generate_study(n_sessions=4, n_systems=1)


def test_runs_of_known_quality():
    c = generate_runs(n_systems=6, n_topics=40, seed=2)
    assert list(c.runs) == [f"sys0{k}" for k in range(1, 7)]
    assert c.quality["quality"].is_monotonic_increasing
    run = c.runs["sys03"]
    assert run.groupby("query_id", observed=True).size().eq(100).all()
    assert (run.groupby("query_id", observed=True)["score"].diff().dropna() <= 0).all()
    scores = score_runs(c.runs, c.judgments, ["nDCG@10", "AP"])
    means = system_means(scores)
    for m in ("nDCG@10", "AP"):
        x = means[means.measure == m]["mean"].to_numpy()
        assert kendall_tau(x, c.quality["quality"].to_numpy()) >= 0.8
    again = generate_runs(n_systems=6, n_topics=40, seed=2)
    pd.testing.assert_frame_equal(again.runs["sys06"], c.runs["sys06"])


def test_synth_runs_on_the_command_line(tmp_path, capsys):
    out = tmp_path / "coll"
    args = ["synth", "--systems", "4", "--runs", "--topics", "10", "--seed", "5"]
    assert main([*args, "--out", str(out)]) == 0
    assert "wrote 4 runs over 10 topics" in capsys.readouterr().out
    assert sorted(p.name for p in (out / "runs").iterdir()) == [
        "sys01.run", "sys02.run", "sys03.run", "sys04.run",
    ]  # fmt: skip
    first = (out / "runs" / "sys02.run").read_text()
    assert first.splitlines()[0].split()[1:4:2] == ["Q0", "1"]
    truth = pd.read_csv(out / "systems.tsv", sep="\t")
    assert truth["rank"].tolist() == [4, 3, 2, 1]
    assert main([*args, "--out", str(tmp_path / "again")]) == 0
    assert (tmp_path / "again" / "runs" / "sys02.run").read_text() == first

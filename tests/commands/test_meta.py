"""`sessionval meta ...` through main(argv): summary tables, detail tables, figures, f-qrels."""

from __future__ import annotations

import io

import pandas as pd
import pytest

from sessionval.cli import main
from sessionval.io.trec import read_qrels
from tests.builders import trec_runs


def _table(text: str) -> pd.DataFrame:
    return pd.read_csv(io.StringIO(text), sep="\t")


def test_rank_correlation_rows(tmp_path, capsys):
    qrels, runs = trec_runs(tmp_path, quality=(0.1, 0.4, 0.8, 1.5))
    args = ["meta", "rank-correlation", str(qrels), *map(str, runs), "-m", "AP", "-m", "P@3"]
    assert main([*args, "-m", "RR"]) == 0
    t = _table(capsys.readouterr().out)
    assert list(t.columns) == ["measure_a", "measure_b", "n_systems", "tau", "z0", "p", "tau_ap"]
    assert len(t) == 3 and (t["n_systems"] == 4).all()
    assert t[["measure_a", "measure_b"]].to_numpy().tolist() == [
        ["AP", "P@3"],
        ["AP", "RR"],
        ["P@3", "RR"],
    ]
    assert t["tau"].between(-1, 1).all() and (t["z0"] >= 0).all()


@pytest.mark.parametrize(("method", "detail"), [("swap", "bins"), ("bootstrap", "pairs")])
def test_discriminative_power_writes_its_tables_and_figure(tmp_path, capsys, method, detail):
    qrels, runs = trec_runs(tmp_path, quality=(0.1, 0.4, 0.8, 1.5))
    out = tmp_path / "out"
    args = ["meta", "discriminative-power", str(qrels), *map(str, runs), "-m", "AP"]
    assert main([*args, "--method", method, "--resamples", "200", "--out", str(out)]) == 0
    summary = _table(capsys.readouterr().out)
    assert summary["n_pairs"].tolist() == [6]
    assert (out / f"{method}_{detail}.tsv").is_file()
    for ext in ("png", "svg", "pdf"):
        assert (out / f"{method}.{ext}").stat().st_size > 0


def test_incomplete_judgments_writes_nested_fqrels(tmp_path, capsys):
    qrels, runs = trec_runs(tmp_path, n_topics=20)
    qdir = tmp_path / "fq"
    args = ["meta", "incomplete-judgments", str(qrels), *map(str, runs), "-m", "AP"]
    args += ["--fractions", "0.2,0.5,1.0", "--seed", "4", "--write-qrels", str(qdir)]
    assert main(args) == 0
    t = _table(capsys.readouterr().out)
    assert t["fraction"].tolist() == [0.2, 0.5, 1.0]
    full = t[t.fraction == 1.0].iloc[0]
    assert (full["tau"], full["accuracy"]) == (1.0, 1.0)
    names = sorted(p.name for p in qdir.iterdir() if not p.name.startswith("."))
    assert names == ["fqrels_0.20.txt", "fqrels_0.50.txt", "fqrels_1.00.txt"]
    sizes = [len(read_qrels(qdir / n).table) for n in names]
    assert sizes[0] <= sizes[1] <= sizes[2] == len(read_qrels(qrels).table)


def test_sensitivity_on_a_study_with_the_issue_grid_syntax(tmp_path, capsys, study_dir):
    out = tmp_path / "out"
    args = ["meta", "sensitivity", str(study_dir), "--qrels", str(study_dir / "qrels.txt")]
    assert main([*args, "--grid", "b=2,4", "bq=4,10", "--out", str(out)]) == 0
    t = _table(capsys.readouterr().out)
    assert t["setting"].tolist() == ["b=2 bq=4", "b=2 bq=10", "b=4 bq=4", "b=4 bq=10"]
    default = t[t.setting == "b=2 bq=4"].iloc[0]
    assert (default["tau_systems"], default["tau_sessions"]) == (1.0, 1.0)
    assert (out / "sensitivity.png").is_file()
    assert main([*args, "--grid", "nonsense=1"]) == 2
    assert "not a session parameter" in capsys.readouterr().err


def test_topic_set_size_from_runs(tmp_path, capsys):
    qrels, runs = trec_runs(tmp_path, n_topics=20)
    args = ["meta", "topic-set-size", str(qrels), *map(str, runs), "-m", "AP"]
    assert main([*args, "--min-diff", "0.05,0.1"]) == 0
    t = _table(capsys.readouterr().out)
    assert t["min_diff"].tolist() == [0.05, 0.1]
    assert t["n_required"].iloc[0] > t["n_required"].iloc[1] >= 2
    assert main([*args, "--min-diff", "-1"]) == 2


def test_meta_runs_read_with_an_encoding(tmp_path, capsys):
    """issue 10: --encoding reaches the qrels and every run of meta's run commands."""
    qrels, runs = trec_runs(tmp_path, quality=(0.1, 0.8, 1.5))
    for path in (qrels, *runs):  # one latin-1 document id in every file
        path.write_bytes(
            path.read_text(encoding="utf-8").replace(" d", " \u00e9d").encode("latin-1")
        )
    args = ["meta", "rank-correlation", str(qrels), *map(str, runs), "-m", "AP", "-m", "RR"]
    assert main(args) == 2
    assert "is not valid utf-8" in capsys.readouterr().err
    assert main([*args, "--encoding", "latin-1"]) == 0


def test_out_is_staged_and_refuses_foreign_files(tmp_path, capsys):
    """Issue 10 item 6: ``meta --out`` writes like ``run``: staged, swapped in, confined."""
    qrels, runs = trec_runs(tmp_path, quality=(0.1, 0.4, 0.8))
    out = tmp_path / "out"
    out.mkdir()
    (out / "rank_correlation_summary.tsv").write_text("mine")
    args = ["meta", "rank-correlation", str(qrels), *map(str, runs), "-m", "AP", "-m", "RR"]
    assert main([*args, "--out", str(out)]) == 2
    assert "no earlier sessionval run wrote it" in capsys.readouterr().err
    assert (out / "rank_correlation_summary.tsv").read_text() == "mine"
    assert main([*args, "--out", str(out), "--force"]) == 0
    assert (out / "rank_correlation_summary.tsv").read_text().startswith("measure_a")
    # a second subcommand adds its files and keeps the first one's
    swap = ["meta", "discriminative-power", str(qrels), *map(str, runs), "-m", "AP"]
    assert main([*swap, "--method", "swap", "--resamples", "50", "--out", str(out)]) == 0
    assert (out / "rank_correlation_summary.tsv").is_file() and (out / "swap_bins.tsv").is_file()
    assert main([*args, "--out", str(out)]) == 0  # its own files: replaced without --force
    assert not [p for p in out.iterdir() if p.name.startswith(".sessionval-staging")]

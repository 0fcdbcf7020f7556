"""`sessionval compare` through main(argv): runs scored, paired, tested, printed."""

from __future__ import annotations

import json
import re
import warnings

import pandas as pd
import pytest
from scipy import stats

from sessionval.analysis.score_table import system_means
from sessionval.cli import main
from sessionval.errors import InputFormatError
from sessionval.io.trec import read_qrels
from sessionval.workflow.runs import load_runs, run_name, score_runs
from tests.builders import trec_runs


def test_compare_prints_one_row_per_measure_and_pair(tmp_path, capsys):
    qrels, runs = trec_runs(tmp_path)
    code = main(["compare", str(qrels), *map(str, runs), "-m", "AP", "-m", "P@3"])
    assert code == 0
    out, err = capsys.readouterr()
    table = pd.read_csv(pd.io.common.StringIO(out), sep="\t")
    assert list(table.columns[:15]) == [
        "measure", "a", "b", "n", "mean_a", "mean_b", "diff", "ci_low", "ci_high",
        "effect_size", "statistic", "p", "p_adjusted", "test", "correction",
    ]  # fmt: skip
    assert len(table) == 2 * 3
    assert table[["a", "b"]].iloc[0].tolist() == ["sys_0", "sys_1"]
    # the p-value is the paired t test over the per-topic AP of the two runs
    scores = score_runs(load_runs(runs), read_qrels(qrels), ["AP"])
    x = scores[scores.system == "sys_0"].sort_values("topic")["value"].to_numpy()
    y = scores[scores.system == "sys_2"].sort_values("topic")["value"].to_numpy()
    row = table[(table.measure == "AP") & (table.b == "sys_2")].iloc[0]
    assert row["p"] == pytest.approx(stats.ttest_rel(x, y).pvalue, rel=1e-5)
    assert "friedman over 3 runs x 12 topics" in err
    # the terminal text shows p as the report does (APA), the TSV keeps full precision
    assert re.search(r"friedman over .*, p (=|<) \.\d{3}\b", err), err
    assert not re.search(r"\bp 0\.|p = 0\.", err)


def test_compare_baseline_jsonl_and_resampling_options(tmp_path, capsys):
    qrels, runs = trec_runs(tmp_path)
    args = ["compare", str(qrels), *map(str, runs), "-m", "AP", "--baseline", "sys_0"]
    args += ["--test", "bootstrap", "--resamples", "500", "--seed", "3", "--format", "jsonl"]
    assert main(args) == 0
    first = capsys.readouterr().out
    rows = [json.loads(line) for line in first.splitlines()]
    assert [(r["a"], r["b"]) for r in rows] == [("sys_1", "sys_0"), ("sys_2", "sys_0")]
    assert rows[0]["test"] == "bootstrap" and rows[0]["ci_method"] == "bootstrap-t"
    assert main(args) == 0
    assert capsys.readouterr().out == first  # the same seed, the same p-values


def test_compare_latex_marks_significance_and_bolds_the_best(tmp_path, capsys):
    qrels, runs = trec_runs(tmp_path, n_topics=30, quality=(0.0, 0.05, 3.0))
    assert main(["compare", str(qrels), *map(str, runs), "-m", "AP", "--format", "latex"]) == 0
    out = capsys.readouterr().out
    assert r"\begin{tabular}{llr}" in out and r"\toprule" in out
    best = next(line for line in out.splitlines() if line.startswith("c & sys\\_2"))
    assert r"\textbf{" in best and "$^{a,b}$" in best
    assert "paired t test, Holm correction" in out


def test_compare_omnibus_and_usage_errors(tmp_path, capsys):
    qrels, runs = trec_runs(tmp_path)
    assert main(["compare", str(qrels), *map(str, runs), "-m", "AP", "--omnibus"]) == 0
    om = pd.read_csv(pd.io.common.StringIO(capsys.readouterr().out), sep="\t")
    assert om["test"].tolist() == ["anova", "friedman"]
    assert main(["compare", str(qrels), str(runs[0])]) == 2
    assert "at least two runs" in capsys.readouterr().err
    bad = ["compare", str(qrels), *map(str, runs), "--test", "wilcoxon"]
    assert main([*bad, "--correction", "tukey-hsd"]) == 2
    assert "tukey-hsd corrects" in capsys.readouterr().err


def test_run_names_are_file_names_without_run(tmp_path):
    assert run_name(tmp_path / "a.b.run") == "a.b"
    _, runs = trec_runs(tmp_path)
    (tmp_path / "x").mkdir()
    dup = tmp_path / "x" / "sys_0.run"
    dup.write_text(runs[0].read_text())
    with pytest.raises(Exception, match="two runs are named 'sys_0'"):
        load_runs([runs[0], dup])


def test_compare_omnibus_of_identical_runs_is_f_0_and_no_warning(tmp_path, capsys):
    qrels, runs = trec_runs(tmp_path, quality=(0.5,))
    copies = []
    for i in range(3):
        copies.append(tmp_path / f"copy{i}.run")
        copies[-1].write_text(runs[0].read_text())
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # scipy's RuntimeWarning of a 0/0 would fail the run
        assert main(["compare", str(qrels), *map(str, copies), "-m", "AP", "--omnibus"]) == 0
    om = pd.read_csv(pd.io.common.StringIO(capsys.readouterr().out), sep="\t")
    assert om["statistic"].tolist() == [0.0, 0.0] and om["p"].tolist() == [1.0, 1.0]
    assert om["note"].notna().all()


@pytest.mark.parametrize("name", ["tab\tname.run", "two\n\npar.run", "esc\x1b.run"])
def test_a_run_file_name_with_a_control_character_is_refused_where_it_is_named(
    tmp_path, capsys, name
):
    # ST-2: the name went raw into the TSV rows, meta's files and the LaTeX table
    qrels, runs = trec_runs(tmp_path)
    odd = tmp_path / name
    odd.write_text(runs[0].read_text())
    for args in (["compare"], ["meta", "rank-correlation"]):
        assert main([*args, str(qrels), str(runs[1]), str(odd), str(runs[2])]) == 2
        err = capsys.readouterr().err
        assert repr(str(odd)) in err and "rename the file" in err
        assert len(err.strip().splitlines()) == 1
    with pytest.raises(InputFormatError, match="control character"):
        load_runs([runs[0], odd])


def _tied(tmp_path):
    """Two runs whose topic-1 lists tie in score; the relevant doc "a" sorts last by trec_eval."""
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("1 0 a 1\n1 0 b 0\n1 0 c 0\n1 0 d 0\n2 0 a 1\n")
    runs = []
    for name in ("x", "y"):
        r = tmp_path / f"{name}.run"
        # every score tied: trec_eval orders d, c, b, a (doc id descending) -> RR 0.25
        r.write_text("".join(f"1 Q0 {d} {i} 1.0 {name}\n" for i, d in enumerate("abcd", 1)))
        r.write_text(r.read_text() + f"2 Q0 a 1 2.0 {name}\n")
        runs.append(r)
    return qrels, runs


def test_compare_breaks_ties_as_evaluate_does(tmp_path, capsys):
    # before: compare ordered ties by doc id ascending (RR 1.0 on topic 1), evaluate as
    # trec_eval (RR 0.25): mean RR 1.0 vs 0.625
    qrels, runs = _tied(tmp_path)
    assert main(["evaluate", str(qrels), str(runs[0]), "-m", "RR"]) == 0
    evaluated = capsys.readouterr().out.strip().splitlines()[-1]
    assert evaluated == "RR\tall\t0.6250"
    assert main(["compare", str(qrels), *map(str, runs), "-m", "RR"]) == 0
    row = pd.read_csv(pd.io.common.StringIO(capsys.readouterr().out), sep="\t").iloc[0]
    assert row["mean_a"] == pytest.approx(0.625) and row["mean_b"] == pytest.approx(0.625)


def test_compare_per_topic_scores_are_evaluates(tmp_path, capsys):
    qrels, runs = trec_runs(tmp_path)
    measures = ["nDCG@10", "AP", "RR", "P@3"]
    scores = score_runs(load_runs(runs), read_qrels(qrels), measures)
    for path in runs:
        args = ["evaluate", str(qrels), str(path), "-q", "--format", "jsonl"]
        assert main([*args, *(x for m in measures for x in ("-m", m))]) == 0
        rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
        want = {(r["query_id"], r["measure"]): r["value"] for r in rows if r["query_id"] != "all"}
        got = scores[scores.system == run_name(path)]
        keys = zip(got.topic, got.measure.astype(str), strict=True)
        have = dict(zip(keys, got.value, strict=True))
        assert have == pytest.approx(want)


def test_compare_summarises_gmap_and_counts_as_evaluate_does(tmp_path, capsys):
    # GMAP's per-topic values are logs and NumRet is a count: the runs' scores are
    # evaluate's summary (geometric mean, sum), not the plain mean of the topic values
    qrels, runs = trec_runs(tmp_path)
    want = {}
    for path in runs:
        args = ["evaluate", str(qrels), str(path), "--format", "jsonl"]
        assert main([*args, "-m", "GMAP", "-m", "NumRet"]) == 0
        rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
        want[run_name(path)] = {r["measure"]: r["value"] for r in rows if r["query_id"] == "all"}
    scores = score_runs(load_runs(runs), read_qrels(qrels), ["GMAP", "NumRet"])
    means = system_means(scores)
    for s, m, v in zip(means.system, means.measure, means["mean"], strict=True):
        assert v == pytest.approx(want[s][m])
    plain = scores[scores.measure == "GMAP"].groupby("system", observed=True)["value"].mean()
    assert not plain.to_numpy() == pytest.approx(means[means.measure == "GMAP"]["mean"])
    assert main(["compare", str(qrels), *map(str, runs), "-m", "GMAP"]) == 0
    out, err = capsys.readouterr()
    row = pd.read_csv(pd.io.common.StringIO(out), sep="\t").iloc[0]
    assert row["mean_a"] == pytest.approx(want[row["a"]]["GMAP"])
    assert "geometric means" in err
    assert main(["compare", str(qrels), *map(str, runs), "-m", "GMAP", "-m", "NumRet",
                 "--format", "table"]) == 0  # fmt: skip
    out = capsys.readouterr().out
    assert "GMAP: geometric mean over topics; NumRet: sum over topics" in out

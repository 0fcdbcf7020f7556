"""Issue 25 item 4: what ir_measures, ranx and ir_datasets users hold goes into
``evaluate_run`` and ``compare_systems`` in their argument order; the result objects
show themselves in a console and a notebook."""

from __future__ import annotations

import gzip
from collections import namedtuple

import pandas as pd
import pytest

import sessionval as sv
from sessionval.errors import InputFormatError, StatisticsError
from sessionval.evaluation.inputs import input_kind, records_table, run_and_qrels
from tests.builders import trec_runs

# ir_datasets' qrels record and ir_measures' run record, as they define them
TrecQrel = namedtuple("TrecQrel", "query_id doc_id relevance iteration")
ScoredDoc = namedtuple("ScoredDoc", "query_id doc_id score")

QRELS = [TrecQrel("1", "a", 1, "0"), TrecQrel("1", "b", 0, "0"), TrecQrel("2", "c", 2, "0")]
RUN = [ScoredDoc("1", "b", 2.0), ScoredDoc("1", "a", 1.0), ScoredDoc("2", "c", 0.5)]
MEASURES = ["AP", "P@1", "nDCG@10"]


def _means(ev: sv.SingleEvaluation) -> dict[str, float]:
    return {k: round(v, 12) for k, v in ev.means.items()}


def test_every_shape_in_either_order_gives_the_same_means(tmp_path):
    expected = _means(sv.evaluate_run(pd.DataFrame(RUN), pd.DataFrame(QRELS), MEASURES))
    # AP of query 1 is 1/2 (a at rank 2), of query 2 is 1
    assert expected["AP"] == 0.75 and expected["P@1"] == 0.5
    qrels_dict = {"1": {"a": 1, "b": 0}, "2": {"c": 2}}
    run_dict = {"1": {"b": 2.0, "a": 1.0}, "2": {"c": 0.5}}
    qrels_file = tmp_path / "qrels.txt"
    qrels_file.write_text("".join(f"{q} 0 {d} {r}\n" for q, d, r, _ in QRELS))
    run_file = tmp_path / "run.txt.gz"  # gzip sniffed too
    with gzip.open(run_file, "wt") as fh:
        fh.writelines(f"{q} Q0 {d} {i} {s} t\n" for i, (q, d, s) in enumerate(RUN, start=1))
    shapes = [
        (iter(QRELS), iter(RUN)),  # ir_datasets' qrels_iter() and ScoredDoc iterables
        (pd.DataFrame(QRELS), pd.DataFrame(RUN)),
        (qrels_dict, run_dict),  # pytrec_eval / ranx
        (qrels_file, run_file),
        (str(qrels_file), pd.DataFrame(RUN)),
    ]
    for qrels, run in shapes:
        assert _means(sv.evaluate_run(qrels, run, MEASURES)) == expected, type(qrels)
    # the current order keeps working
    assert _means(sv.evaluate_run(run_dict, qrels_dict, MEASURES)) == expected
    assert _means(sv.evaluate_run(run=RUN, qrels=QRELS, measures=MEASURES)) == expected
    # the same qrels become the same judgments whatever their shape
    from sessionval.evaluation.runs import as_judgments

    grades = [sorted(as_judgments(q).table["grade"].tolist()) for q, _ in shapes[1:]]
    assert grades == [[0, 1, 2]] * 4


def test_kinds_are_told_by_content_and_an_ambiguous_pair_keeps_its_order(tmp_path):
    assert input_kind(pd.DataFrame(RUN)) == "run"
    assert input_kind({"q": {"d": 3}}) == "qrels" and input_kind({"q": {"d": 0.5}}) == "run"
    assert input_kind({"q": {}}) is None
    csv = tmp_path / "judgments.csv"
    csv.write_text("topic_id,doc_id,grade\nA,d1,2\n")
    assert input_kind(csv) == "qrels"
    assert input_kind(tmp_path / "missing.txt") is None
    odd = tmp_path / "odd.txt"
    odd.write_text("a b c\n")
    assert input_kind(odd) is None
    first, second = pd.DataFrame({"x": [1]}), pd.DataFrame({"y": [1]})
    assert run_and_qrels(first, second) == (first, second)


def test_records_that_are_not_named_tuples_are_refused_with_what_to_give():
    assert records_table([]) is None
    assert records_table("qrels.txt") is None
    with pytest.raises(InputFormatError, match="named tuples with query_id, doc_id"):
        sv.evaluate_run([("1", "a", 1.0)], QRELS, ["AP"])


def test_compare_systems_takes_qrels_and_runs_as_ranx_compare(tmp_path):
    qrels, runs = trec_runs(tmp_path, n_topics=10, quality=(0.0, 2.0))
    from sessionval.workflow.runs import load_runs, score_runs

    scores = score_runs(load_runs(runs), sv.read_qrels(qrels), ["AP"])
    expected = sv.compare_systems(scores, measures=["AP"])
    by_path = sv.compare_systems(qrels, dict(zip(("sys_0", "sys_1"), runs, strict=True)), ["AP"])
    assert by_path[["a", "b", "diff", "p"]].equals(expected[["a", "b", "diff", "p"]])
    assert bool(by_path["significant"].iloc[0]) and by_path["diff"].iloc[0] < 0
    # runs as DataFrames in ir_measures' columns, named by the mapping's keys
    frames = {}
    for name, path in zip(("low", "high"), runs, strict=True):
        t = pd.read_csv(path, sep=" ", header=None, dtype={0: str, 2: str})
        frames[name] = t.rename(columns={0: "query_id", 2: "doc_id", 4: "score"})
    names = ["query_id", "iteration", "doc_id", "relevance"]
    qrels_frame = pd.read_csv(qrels, sep=" ", header=None, names=names, dtype={0: str, 2: str})
    by_frame = sv.compare_systems(qrels_frame, frames, ["AP"], test="wilcoxon")
    assert by_frame[["a", "b"]].iloc[0].tolist() == ["low", "high"]
    assert by_frame["diff"].iloc[0] == pytest.approx(expected["diff"].iloc[0])
    assert by_frame["test"].iloc[0] == "wilcoxon"
    with pytest.raises(StatisticsError, match="runs must map names to runs"):
        sv.compare_systems(qrels, runs, ["AP"])
    # without measures, those of `sessionval compare`
    from sessionval.commands.compare import DEFAULT_MEASURES
    from sessionval.evaluation.runs import DEFAULT_COMPARE_MEASURES

    assert DEFAULT_MEASURES == DEFAULT_COMPARE_MEASURES
    default = sv.compare_systems(qrels, dict(zip(("sys_0", "sys_1"), runs, strict=True)))
    assert default["measure"].drop_duplicates().tolist() == list(DEFAULT_MEASURES)


def test_single_evaluation_shows_its_means():
    ev = sv.evaluate_run(QRELS, RUN, ["AP", "P@1"])
    assert repr(ev) == "SingleEvaluation(2 queries; AP 0.7500, P@1 0.5000)"
    html = ev._repr_html_()
    assert "<strong>SingleEvaluation</strong>" in html and "<td>0.7500</td>" in html


def test_session_evaluation_shows_the_means_per_system(random_study):
    frame, judgments = random_study(3)
    ev = sv.evaluate(frame, judgments, sv.SessionConfig(cutoff=5))
    per_system = ev.per_session().groupby("system_id", observed=True)["nsdcg"].mean()
    text = repr(ev)
    assert text.startswith(f"SessionEvaluation({frame.n_sessions} sessions; ")
    assert "b=2, bq=4, cutoff=5" in text
    for system, mean in per_system.items():
        assert f"{system} {mean:.4f}" in text
    html = ev._repr_html_()
    assert html.count("<tr") == 1 + len(per_system) and f"{per_system.iloc[0]:.4f}" in html


def test_study_summary_shows_its_tables(study_dir):
    summary = sv.summarize(sv.load_study(study_dir, qrels=study_dir / "qrels.txt"))
    assert repr(summary).startswith("StudySummary(2 records read = 2 sessions accepted")
    html = summary._repr_html_()
    for heading in ("Study", "Sessions per system x topic", "Judgment coverage"):
        assert f"<h4>{heading}" in html
    # labelled tables keep their index (system), the counts table does not show 0, 1, ...
    study_table = html.split("<h4>Study</h4>")[1].split("<h4>")[0]
    assert "<th>S1</th>" in html and "<th>0</th>" not in study_table


def test_html_escapes_names():
    from sessionval.evaluation.display import html_block

    html = html_block("<x>", ["a<b"], {"t&t": pd.DataFrame({"c": ["<script>"]})})
    assert "<x>" not in html and "&lt;script&gt;" in html and "t&amp;t" in html

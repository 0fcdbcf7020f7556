"""``run`` on small and unbalanced studies: every design gives a report (issue 12)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest

from sessionval.cli import main
from tests import builders

SAMPLE = Path(__file__).resolve().parents[2] / "sample_logs"
DOCS = [["d1", "d2", "d3"], ["d2", "d4"], ["d5", "d1"], ["d3"]]


def _study(root: Path, sessions: list[dict], *, qrels: str, topics: list[dict] | None = None):
    root.mkdir()
    header = {"name": "design"}
    if topics is not None:
        header["topics"] = topics
    (root / "study.json").write_text(json.dumps(header), encoding="utf-8")
    builders.write_jsonl(root / "sessions.jsonl", sessions)
    (root / "qrels.txt").write_text(qrels, encoding="utf-8")
    return root


def _sessions(cells: list[tuple[str, str]], queries: list[list[str]] = DOCS) -> list[dict]:
    """One session per (topic, system) cell, searchers u1, u2, … in turn."""
    return [
        builders.make_session(
            f"s{i}", user=f"u{i % 3 + 1}", topic=t, system=s, queries=queries[: 1 + i % 4]
        )
        for i, (t, s) in enumerate(cells)
    ]


QRELS = "A 0 d1 3\nA 0 d2 1\nA 0 d5 2\nB 0 d3 2\nB 0 d4 1\nC 0 d2 3\n"


def _design(name: str, root: Path) -> Path:
    if name == "first five sessions of sample_logs":
        root.mkdir()
        lines = (SAMPLE / "sessions.jsonl").read_text(encoding="utf-8").splitlines()[:5]
        (root / "sessions.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
        shutil.copy(SAMPLE / "study.json", root / "study.json")
        shutil.copy(SAMPLE / "qrels.txt", root / "qrels.txt")
        return root
    if name == "one system":
        return _study(root, _sessions([("A", "S1"), ("B", "S1"), ("A", "S1")]), qrels=QRELS)
    if name == "one session":
        return _study(root, _sessions([("A", "S1")]), qrels=QRELS)
    if name == "one query":
        one = [builders.make_session("s1", topic="A", system="S1", queries=[["d1"]])]
        return _study(root, one, qrels=QRELS)
    if name == "unequal cells":
        cells = [("A", "S1"), ("A", "S1"), ("A", "S1"), ("B", "S2"), ("C", "S1"), ("C", "S2")]
        return _study(root, _sessions(cells), qrels=QRELS)
    if name == "five systems":
        cells = [(t, f"S{k}") for k in range(1, 6) for t in ("A", "B")]
        return _study(root, _sessions(cells), qrels=QRELS)
    if name == "topics without judgments":
        cells = [("A", "S1"), ("D", "S1"), ("D", "S2"), ("E", "S2")]
        topics = [{"topic_id": t, "judged": t == "A"} for t in "ADE"]
        return _study(root, _sessions(cells), qrels=QRELS, topics=topics)
    raise AssertionError(name)


DESIGNS = [
    "first five sessions of sample_logs",
    "one system",
    "one session",
    "one query",
    "unequal cells",
    "five systems",
    "topics without judgments",
]


@pytest.fixture
def png_only(tmp_path) -> Path:
    """A configuration that writes one image per figure (the designs test the run, not SVG)."""
    path = tmp_path / "png.toml"
    path.write_text('[figures]\nformats = ["png"]\n[run]\nformats = ["csv", "dta"]\n')
    return path


@pytest.mark.parametrize("design", DESIGNS)
def test_run_succeeds_on_every_design(design, tmp_path, png_only):
    logs = _design(design, tmp_path / "logs")
    out = tmp_path / "out"
    args = ["run", str(logs), "--qrels", str(logs / "qrels.txt"), "--out", str(out)]
    assert main([*args, "--config", str(png_only), "--no-progress"]) == 0
    html = (out / "report.html").read_text(encoding="utf-8")
    drawn = len(list((out / "figures").glob("*.png")))
    assert html.count("<img ") == drawn >= 1
    # [figures] formats holds for every figure, the rating correlations included
    assert not list((out / "figures").glob("*.svg")) and not list((out / "figures").glob("*.pdf"))
    # a figure of the papers (nine) that could not be drawn is named in the report's notes;
    # the rating-correlation figure (issue 13) comes with sessions that carry ratings, the
    # two reformulation figures (issue 27) with sessions of more than one query
    extra = ("rating_correlations", "reformulation_gains", "reformulation_transitions")
    papers = drawn - sum((out / "figures" / f"{name}.png").is_file() for name in extra)
    skipped = 9 - papers
    assert len(re.findall(r"<li>[^<]* is not drawn: ", html)) == skipped
    ps = pd.read_csv(out / "tables" / "per_session.csv")
    assert len(ps) == len((logs / "sessions.jsonl").read_text().splitlines())
    assert (out / "exports" / "per_session_wide.dta").is_file()


def test_unjudged_topics_are_noted_under_the_scores(tmp_path, png_only):
    logs = _design("topics without judgments", tmp_path / "logs")
    out = tmp_path / "out"
    args = ["run", str(logs), "--qrels", str(logs / "qrels.txt"), "--out", str(out)]
    assert main([*args, "--config", str(png_only)]) == 0
    html = (out / "report.html").read_text(encoding="utf-8")
    # topics D and E have no judgments: no score in any measure (before: sDCG 0,
    # averaged in, so S1's sDCG was over 2 sessions and its nsDCG over 1)
    assert "nsdcg, sdcg, avg_pos_nsdcg, n_relevant_found over 1; n_queries over 2" in html
    assert "3 sessions on 2 topics without judgments (D, E): no score" in html
    scores = pd.read_csv(out / "tables" / "per_session.csv")
    s1 = scores[scores["system_id"] == "S1"]
    assert s1["sdcg"].notna().sum() == s1["nsdcg"].notna().sum() == 1


def test_the_default_figure_cell_has_sessions(tmp_path, png_only):
    """The first five sessions of sample_logs: scenario B has no session of S1 (it crashed)."""
    logs = _design("first five sessions of sample_logs", tmp_path / "logs")
    out = tmp_path / "out"
    args = ["run", str(logs), "--qrels", str(logs / "qrels.txt"), "--out", str(out)]
    assert main([*args, "--config", str(png_only)]) == 0
    fig4 = pd.read_csv(out / "figures" / "fig4_individual_sessions.csv")
    assert fig4["session_id"].nunique() >= 1
    cell = fig4[["topic_id", "system_id"]].drop_duplicates()
    assert len(cell) == 1
    # a cell the user names without sessions is skipped with a note, not fatal
    config = tmp_path / "c.toml"
    topic, system = cell.iloc[0]
    other = "S2" if system == "S1" else "S1"
    config.write_text(
        f'[figures]\nscenario = "{topic}"\nsystem = "{other}"\nformats = ["png"]\n',
        encoding="utf-8",
    )
    args = ["run", str(logs), "--qrels", str(logs / "qrels.txt"), "--out", str(tmp_path / "o2")]
    assert main([*args, "--config", str(config)]) == 0
    html = (tmp_path / "o2" / "report.html").read_text(encoding="utf-8")
    assert f"system &#39;{other}&#39; has no session in scenario &#39;{topic}&#39;" in html

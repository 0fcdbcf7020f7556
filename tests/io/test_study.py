from __future__ import annotations

from pathlib import Path

from sessionval.io.study import load_study
from sessionval.validate.flat import LOAD_PHASES


def test_progress_reports_every_phase_in_order(study_dir: Path):
    seen: list[str] = []
    load_study(study_dir, qrels=study_dir / "qrels.txt", progress=seen.append)
    assert seen == list(LOAD_PHASES)


def test_load_study_reads_every_format_as_load_input_does(fx, same_frame):
    from sessionval.io.formats import load_input

    for path, kw in (
        (fx / "study", {"qrels": fx / "study" / "qrels.txt"}),
        (fx / "ts2013.xml", {"qrels": fx / "qrels2013.txt", "topic_map": fx / "topicmap2013.txt"}),
        (fx / "lab", {}),
        (fx / "cast" / "runA.run", {"fmt": "cast", "depth": 1}),
    ):
        a, b = load_study(path, **kw), load_input(path, **kw)
        same_frame(a.frame, b.frame)
        assert a.report.summary_line() == b.report.summary_line()
        assert a.notes == b.notes and a.unjudged == b.unjudged and a.qrels_key == b.qrels_key


def test_load_study_header_elsewhere_and_unjudged(fx, tmp_path):
    header = tmp_path / "h.json"
    header.write_text((fx / "study" / "study.json").read_text().replace('"tiny"', '"moved"'))
    loaded = load_study(fx / "study" / "sessions.jsonl", header=header)
    assert loaded.study.name == "moved"
    assert loaded.unjudged == () and loaded.judgments is None
    partial = tmp_path / "q.txt"
    partial.write_text("A 0 d1 3\n")
    h = tmp_path / "study.json"
    h.write_text(
        (fx / "study" / "study.json").read_text().replace('"title": "topic B"', '"judged": false')
    )
    loaded = load_study(fx / "study" / "sessions.jsonl", header=h, qrels=partial)
    assert loaded.unjudged == ("B",)  # declared unjudged: accepted and listed

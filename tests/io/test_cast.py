from __future__ import annotations

import inspect

import pytest

from sessionval.errors import InputFormatError, JudgmentError, ParseError, ValidationFailed
from sessionval.io.cast import CAST_GRADE_SCALE, load_cast
from sessionval.io.cast_topics import read_cast_topics
from sessionval.io.trec import read_run


def load(fx, **kw):
    d = fx / "cast"
    kw.setdefault("qrels", d / "qrels.txt")
    kw.setdefault("topics", d / "topics.json")
    return load_cast([d / "runA.run", d / "runB.run"], **kw)


def docs_of(frame, session, pos):
    q = frame.queries
    idx = q.index[(q["session_id"].astype(str) == session) & (q["query_pos"] == pos)][0]
    r = frame.results
    return r.loc[r["query_idx"] == idx, "doc_id"].astype(str).tolist()


def test_one_session_per_run_and_topic(fx):
    r = load(fx)
    f = r.frame
    assert r.details["systems"] == ("runA", "runB")
    assert f.sessions["session_id"].astype(str).tolist() == [
        "runA:201",
        "runA:202",
        "runB:201",
        "runB:202",
    ]
    assert f.sessions["system_id"].astype(str).tolist() == ["runA", "runA", "runB", "runB"]
    assert f.sessions["topic_id"].astype(str).tolist() == ["201", "202", "201", "202"]
    # turns in turn-number order even though the topics file lists turn 2 first
    assert f.queries["query_id"].tolist()[:3] == ["201_1", "201_2", "201_3"]
    assert f.queries["text"].tolist()[:2] == ["Tell me about otters.", "And how big do they get?"]
    # qrels are per turn
    assert f.queries["qrels_id"].astype(str).tolist() == f.queries["query_id"].tolist()


def test_missing_turns_are_queries_without_results(fx):
    f = load(fx).frame
    assert f.queries["n_results"].tolist() == [3, 2, 0, 1, 2, 0, 1, 2]


def test_trec_eval_tie_break_and_rank_order(fx):
    f = load(fx).frame
    # d1 and d2 tie at 10.0: trec_eval orders ties by docno descending
    assert docs_of(f, "runA:201", 1) == ["d2", "d1", "d3"]
    g = load(fx, order="rank").frame
    assert docs_of(g, "runA:201", 1) == ["d1", "d2", "d3"]
    assert f.results["rank"].tolist()[:3] == [1, 2, 3]


def test_depth_and_text_choice(fx):
    r = load(fx, depth=1, text="manual")
    assert r.frame.queries["n_results"].max() == 1
    assert r.frame.queries["text"].iloc[1] == "How big do otters get?"
    assert r.details["depth"] == 1


def test_judgments_per_turn(fx):
    r = load(fx)
    assert r.judgments is not None
    assert r.judgments.scale == CAST_GRADE_SCALE
    assert set(r.judgments.table["topic_id"].astype(str)) == {"201_1", "201_2", "202_1"}
    assert r.unjudged == ("201_3",)


def test_without_topics_file_turns_come_from_runs(fx):
    d = fx / "cast"
    r = load_cast(d / "runB.run")
    f = r.frame
    assert f.sessions["session_id"].astype(str).tolist() == ["runB:201", "runB:202"]
    assert f.queries["query_id"].tolist() == ["201_1", "201_3", "202_1"]
    assert f.queries["query_pos"].tolist() == [1, 2, 1]
    assert r.judgments is None


def test_bad_turn_id(fx, tmp_path):
    run = tmp_path / "bad.run"
    run.write_text("201 Q0 d1 1 1.0 x\n201_1 Q0 d1 1 1.0 x\n")
    with pytest.raises(ValidationFailed, match=r"bad\.run:1: qid: turn id must be <topic>_<turn>"):
        load_cast(run)
    r = load_cast(run, mode="lenient")
    assert r.frame.n_queries == 1 and len(r.report.problems) == 1 and not r.notes


def test_duplicate_document_in_a_run(fx, tmp_path):
    run = tmp_path / "dup.run"
    run.write_text("1_1 Q0 d1 1 2.0 x\n1_1 Q0 d1 2 1.0 x\n1_1 Q0 d2 3 0.5 x\n")
    with pytest.raises(ValidationFailed, match="occurs more than once"):
        load_cast(run)
    r = load_cast(run, mode="lenient")
    assert r.frame.results["doc_id"].astype(str).tolist() == ["d1", "d2"]
    assert r.frame.results["rank"].tolist() == [1, 2]
    # a repair, not a rejection: listed with both ranks, the session kept
    assert not r.report.problems and r.report.sessions_rejected == 0
    (rep,) = r.report.repairs
    # the one repair of every session table (validate/repair.py), named by the run line
    assert rep.source == str(run) and rep.location == "line 2" and rep.value == "'d1'"
    assert rep.field == "doc_id" and rep.record == "x:1"
    assert "listed twice" in rep.message and "kept at rank 1, removed at rank 2" in rep.message
    assert r.notes == (rep,)
    # the depth cut counts documents: the repaired list still holds `depth` of them
    cut = load_cast(run, mode="lenient", depth=2)
    assert cut.frame.results["doc_id"].astype(str).tolist() == ["d1", "d2"]


def test_problems_of_the_table_name_the_run_file_and_line(tmp_path):
    a, b = tmp_path / "a.run", tmp_path / "b.run"
    a.write_text("1_1 Q0 d1 1 2.0 x\n")
    b.write_text("1_1 Q0 d3 1 2.0 y\n1_1 Q0 d4 2 1.5 y\n1_1 Q0 d3 3 1.0 y\n")
    with pytest.raises(ValidationFailed) as err:
        load_cast([a, b])
    (p,) = err.value.problems
    assert (p.source, p.location, p.field) == (str(b), "line 3", "doc_id")


def test_malformed_run_and_qrels_surface_with_lines(fx, tmp_path):
    run = tmp_path / "r.run"
    run.write_text("1_1 Q0 d1 1 2.0 x\n1_1 Q0 d2 one 1.0 x\n")
    with pytest.raises(ParseError, match=r"r\.run:2: rank: must be an integer \(got 'one'\)"):
        load_cast(run)
    good = tmp_path / "g.run"
    good.write_text("1_1 Q0 d1 1 2.0 x\n")
    q = tmp_path / "q.txt"
    q.write_text("1_1 0 d1 1\n1_1 0 d1 2\n")
    with pytest.raises(JudgmentError, match="judged more than once for topic '1_1'"):
        load_cast(good, qrels=q)


def test_read_cast_topics_errors(tmp_path):
    p = tmp_path / "t.json"
    p.write_text('[{"number": 1,')
    with pytest.raises(ParseError, match=r"t\.json:1:\d+: malformed JSON"):
        read_cast_topics(p)


def test_read_cast_reads_a_folder_of_runs(fx, tmp_path):
    from sessionval.errors import InputFormatError
    from sessionval.io.cast import load_cast

    r = load_cast(fx / "cast", qrels=fx / "cast" / "qrels.txt", topics=fx / "cast" / "topics.json")
    assert r.details["systems"] == ("runA", "runB") and r.qrels_key == "query_id"
    assert r.report.summary_line() == load(fx).report.summary_line()
    with pytest.raises(InputFormatError, match=r"no \*\.run file in the folder"):
        load_cast(tmp_path)


def test_unjudged_turns_are_the_turns_without_qrels(fx):
    """Agreement: ``unjudged`` (one helper for every format) = the topics file's unjudged turns."""
    r = load(fx)
    turns = read_cast_topics(fx / "cast" / "topics.json")
    judged = set(r.judgments.table["topic_id"].astype(str))
    expected = [t for t in turns.sort_values(["topic", "turn"])["turn_id"] if t not in judged]
    assert list(r.unjudged) == expected


def test_strict_lists_at_most_max_problems(tmp_path):
    run = tmp_path / "bad.run"
    run.write_text("".join(f"{i} Q0 d1 1 1.0 x\n" for i in range(5)) + "1_1 Q0 d1 1 1.0 x\n")
    with pytest.raises(ValidationFailed) as err:
        load_cast(run, max_problems=3)
    assert len(err.value.problems) == 3 and err.value.truncated


# --- issue 10: every bad input a located error ------------------------------------------------


def _topics(tmp_path, data: str):
    p = tmp_path / "topics.json"
    p.write_text(data)
    return p


@pytest.mark.parametrize(
    ("topics", "where"),
    [
        ('[{"number": 201, "turn": [{"number": "one", "raw_utterance": "hi"}]}]',
         r"topics\[0\]\.turn\[0\]\.number: must be a whole turn number .*\(got 'one'\)"),
        ('[{"number": 201, "turn": 5}]', r"topics\[0\]\.turn: must be a list of turns \(got 5\)"),
        ('[{"number": 201, "turn": [{"number": 1e400}]}]', r"topics\[0\]\.turn\[0\]\.number"),
        ('[{"number": 201, "turn": [{"number": 99999999999999999999}]}]', r"\(got 9999"),
        ('[{"number": 201, "turn": [{"number": 1}, {"number": 1}]}]', r"turn 1 occurs twice"),
        ('[{"number": 201, "turn": [{"number": 1, "raw_utterance": {"a": 1}}]}]',
         r"raw_utterance: must be a string"),
        ('{"number": 201}', r"expected a JSON list of topics .*got a JSON object"),
        ("[7, null]", r"topics\[0\]: must be an object.*\n.*topics\[1\]"),
        ("[" * 100000 + "]" * 100000, r"nested too deeply|malformed JSON"),
    ],
)  # fmt: skip
def test_topics_of_the_wrong_shape_are_located_errors(tmp_path, topics, where):
    run = tmp_path / "a.run"
    run.write_text("201_1 Q0 d1 1 1.0 runA\n")
    with pytest.raises((InputFormatError, ParseError), match=where):
        load_cast(run, topics=_topics(tmp_path, topics))


def test_topics_list_every_problem_at_once(tmp_path):
    run = tmp_path / "a.run"
    run.write_text("201_1 Q0 d1 1 1.0 runA\n")
    t = _topics(tmp_path, '[{"number": 1, "turn": [{"number": "x"}, {"number": "y"}]}, 3]')
    with pytest.raises(InputFormatError, match="3 problem") as err:
        load_cast(run, topics=t)
    assert "turn[1].number" in str(err.value) and "topics[1]" in str(err.value)


def test_turn_number_too_long_is_a_problem_not_an_overflow(tmp_path):
    run = tmp_path / "c.run"
    run.write_text("201_99999999999999999999 Q0 d1 1 1.0 runA\n201_1 Q0 d1 1 1.0 runA\n")
    with pytest.raises(ValidationFailed, match=r"c\.run:1: qid: turn number has more than 18"):
        load_cast(run)
    r = load_cast(run, mode="lenient")
    assert r.frame.queries["query_id"].tolist() == ["201_1"]
    assert [p.location for p in r.report.problems] == ["line 1"]
    # the dropped line is a record read and rejected (the books left it out: fuzz campaign)
    assert r.report.summary_line() == "2 records read = 1 sessions accepted + 1 rejected"
    # every line flagged: the problems, not a traceback
    run.write_text("201_99999999999999999999 Q0 d1 1 1.0 runA\n")
    with pytest.raises(ValidationFailed, match="more than 18 digits"):
        load_cast(run, mode="lenient")


def test_non_ascii_digits_are_not_a_turn_number(tmp_path):
    run = tmp_path / "d.run"
    run.write_text("201_\u0663 Q0 d1 1 1.0 runA\n", encoding="utf-8")
    with pytest.raises(ValidationFailed, match="turn id must be <topic>_<turn>"):
        load_cast(run)


def test_cr_only_line_ends_are_read_with_their_lines(tmp_path):
    run = tmp_path / "cr.run"
    run.write_bytes(b"201_1 Q0 d1 1 1.0 runA\r201_1 Q0 d1 2 0.5 runA\r201_2 Q0 d2 1 0.5 runA\r")
    with pytest.raises(
        ValidationFailed, match=r"cr\.run:2: doc_id: document occurs more than once"
    ):
        load_cast(run)
    r = load_cast(run, mode="lenient")
    assert r.frame.queries["query_id"].tolist() == ["201_1", "201_2"]


@pytest.mark.parametrize("space", ["\x0b", "\x85", "\u2028", "\u00a0"])
def test_tags_differing_only_by_whitespace_are_a_located_error(tmp_path, space):
    run = tmp_path / "t.run"
    run.write_text(f"T_1 Q0 d1 1 2.0 runA\nT_1 Q0 d2 2 1.0 runA{space}\n", encoding="utf-8")
    with pytest.raises(ValidationFailed, match=r"t\.run:2: tag: run tag differs from 'runA' only"):
        load_cast(run)
    r = load_cast(run, mode="lenient")
    assert r.details["systems"] == ("runA",)
    assert r.report.sessions_accepted == 1 and len(r.report.problems) == 1


def test_strict_lists_problems_of_every_kind_in_one_error(tmp_path):
    run = tmp_path / "m.run"
    run.write_text("bad Q0 d1 1 1.0 x\n1_1 Q0 d1 1 2.0 x\n1_1 Q0 d1 2 1.0 x\n")
    with pytest.raises(ValidationFailed) as err:
        load_cast(run)
    msgs = [p.message for p in err.value.problems]
    assert any("turn id" in m for m in msgs) and any("more than once" in m for m in msgs)


def test_non_utf8_run_and_topics_are_located_errors(tmp_path):
    run = tmp_path / "l.run"
    run.write_bytes(b"201_1 Q0 d1 1 1.0 runA\n201_1 Q0 d\xe9 2 0.5 runA\n")
    with pytest.raises(ParseError, match=r"l\.run:2: byte offset 33: b'\\xe9' is not valid"):
        load_cast(run)
    good = tmp_path / "g.run"
    good.write_text("201_1 Q0 d1 1 1.0 runA\n")
    t = tmp_path / "t.json"
    t.write_bytes(
        '[{"number": 201, "turn": [{"number": 1, "raw_utterance": "caf\u00e9"}]}]'.encode("latin-1")
    )
    with pytest.raises(ParseError, match=r"t\.json:1: byte offset \d+: b'\\xe9'"):
        load_cast(good, topics=t)
    r = load_cast(good, topics=t, encoding="latin-1")
    assert r.frame.queries["text"].tolist() == ["caf\u00e9"]
    with pytest.raises(ParseError, match="encoding 'klingon' is not known"):
        load_cast(good, encoding="klingon")


@pytest.mark.skipif(
    "encoding" not in inspect.signature(read_run).parameters,
    reason="read_run(encoding=) comes with the TREC readers' share of issue 10",
)
def test_a_latin1_run_reads_with_encoding(tmp_path):
    run = tmp_path / "l.run"
    run.write_bytes(b"201_1 Q0 d1 1 1.0 runA\n201_1 Q0 d\xe9 2 0.5 runA\n")
    r = load_cast(run, encoding="latin-1")
    assert r.frame.results["doc_id"].astype(str).tolist() == ["d1", "d\u00e9"]


def test_load_runs_as_sessions_is_a_deprecated_alias_of_load_cast(fx):
    import sessionval

    with pytest.warns(DeprecationWarning, match="call sessionval.load_cast"):
        old = sessionval.load_runs_as_sessions([fx / "cast" / "runA.run"])
    new = sessionval.load_cast(fx / "cast" / "runA.run")
    assert old.report.summary_line() == new.report.summary_line()
    assert old.frame.results.equals(new.frame.results)


def test_runs_are_ranked_by_the_one_trec_eval_order(fx, monkeypatch):
    """Issue 22: the lists of runs read as sessions come from validate.ranking.run_order."""
    from sessionval.io import runs_as_sessions
    from sessionval.measures import ranking as measures_ranking
    from sessionval.validate import ranking

    assert measures_ranking.run_order is ranking.run_order  # one rule, re-exported
    calls = []

    def spy(*args, **kwargs):
        calls.append(kwargs["ties"])
        return ranking.run_order(*args, **kwargs)

    monkeypatch.setattr(runs_as_sessions, "run_order", spy)
    load(fx)
    assert calls == ["trec_eval"]

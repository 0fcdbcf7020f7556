from __future__ import annotations

import numpy as np
import pytest

from sessionval.errors import InputFormatError, JudgmentError, ValidationFailed
from sessionval.io.lab_tables import JIANG_ALLAN_SCALE, LabColumns, load_lab_tables


def load(fx, **kw):
    d = fx / "lab"
    return load_lab_tables(d / "session", d / "results", d / "qrels", **kw)


def test_sessions_queries_results(fx):
    r = load(fx)
    f = r.frame
    assert f.sessions["session_id"].astype(str).tolist() == ["1", "2", "3"]
    assert f.sessions["user_id"].astype(str).tolist() == ["U1", "U1", "U2"]
    # topic ids are kept as text (leading zero)
    assert f.sessions["topic_id"].astype(str).tolist() == ["01", "02", "01"]
    assert f.sessions["system_id"].astype(str).tolist() == ["lab"] * 3
    assert f.sessions["n_queries"].tolist() == [3, 1, 1]
    assert f.queries["n_results"].tolist() == [0, 2, 2, 1, 2]
    assert r.details["empty_serps"] == 1
    # quotes are data, not CSV quoting
    assert f.results["title"].iloc[0] == 'A "quoted'
    assert f.results["doc_id"].astype(str).tolist() == [
        "http://w/a",
        "http://w/b",
        "http://w/b",
        "http://w/c",
        "http://w/x",
        "http://w/a",
        "http://w/c",
    ]


def test_ratings_carried_into_sessions(fx):
    r = load(fx)
    # sorted by name whatever the table's column order (the same in every format)
    assert r.details["ratings"] == ("rating_difficulty", "rating_performance")
    assert r.frame.sessions["rating_performance"].tolist() == [4.0, 2.0, 5.0]
    assert r.frame.sessions["rating_difficulty"].tolist() == [2.0, 5.0, 1.0]


def test_judgments_are_per_session(fx):
    r = load(fx)
    assert r.frame.queries["qrels_id"].astype(str).tolist() == ["1", "1", "1", "2", "3"]
    j = r.judgments
    assert j is not None
    assert j.scale == JIANG_ALLAN_SCALE
    t = j.table
    # the same URL has different grades in different sessions
    a = t[t["doc_id"].astype(str) == "http://w/a"].set_index("topic_id")["grade"]
    assert a.to_dict() == {"1": 2, "3": 0}
    assert t.loc[t["doc_id"].astype(str) == "http://w/b", "grade"].tolist() == [-1]


def test_grades_join_per_session(fx):
    from sessionval.judgments.lookup import result_grades

    r = load(fx)
    g = result_grades(r.frame, r.judgments)
    # session 1: a=2, b=-1, b=-1, c=1; session 2: x=0; session 3: a=0, c=2
    np.testing.assert_array_equal(g, [2, -1, -1, 1, 0, 0, 2])


def test_unknown_session_in_results(fx, tmp_path):
    d = fx / "lab"
    res = tmp_path / "results"
    res.write_text((d / "results").read_text() + "9\t1\t1\thttp://w/z\tZ\tz\n")
    with pytest.raises(ValidationFailed, match=r"results:10: SessionID: session id not in the"):
        load_lab_tables(d / "session", res, d / "qrels")
    r = load_lab_tables(d / "session", res, d / "qrels", mode="lenient")
    assert r.report.sessions_rejected == 1 and r.report.sessions_accepted == 3
    assert r.report.rejects["record"].tolist() == ["9"]


def test_conflicting_judgments(fx, tmp_path):
    d = fx / "lab"
    q = tmp_path / "qrels"
    q.write_text((d / "qrels").read_text() + "1\thttp://w/a\t0\n")
    # the judgments boundary's rule and message (the lab tables' key is the session)
    with pytest.raises(
        JudgmentError,
        match=r"qrels:9: \w+: .* for topic '1' with different grades \(2, 0 on lines 2, 9\)",
    ):
        load_lab_tables(d / "session", d / "results", q)


def test_missing_column_message(fx, tmp_path):
    d = fx / "lab"
    s = tmp_path / "session"
    s.write_text("Sess\tUser\tTopic\n1\tU1\t01\n")
    with pytest.raises(
        InputFormatError, match=r"lacks column.*SessionID.*found: Sess, User, Topic"
    ):
        load_lab_tables(s, d / "results")
    r = load_lab_tables(
        s,
        d / "results",
        columns=LabColumns(session="Sess", results_session="SessionID"),
        mode="lenient",
    )
    assert r.frame.sessions["session_id"].astype(str).tolist() == ["1"]
    assert r.report.sessions_rejected == 2


def test_duplicate_document_in_a_list_strict_error_lenient_repair(fx, tmp_path):
    d = fx / "lab"
    res = tmp_path / "results"
    res.write_text((d / "results").read_text() + "2\t1\t2\thttp://w/x\tX\tx\n")
    with pytest.raises(
        ValidationFailed, match="results:10: doc_id: document occurs more than once"
    ):
        load_lab_tables(d / "session", res)
    # lenient: repaired, not rejected (issue 10, item 3): the later copy removed and listed
    r = load_lab_tables(d / "session", res, mode="lenient")
    assert r.frame.sessions["session_id"].astype(str).tolist() == ["1", "2", "3"]
    assert [(p.record, p.location) for p in r.report.repairs] == [("2", "line 10")]


def test_per_session_pool_drives_the_ideal(fx):
    """End to end: per-session keys make each session's ideal come from its own judged pool."""
    from sessionval.evaluation.config import SessionConfig
    from sessionval.evaluation.session import evaluate

    r = load(fx)
    cfg = SessionConfig(gains="exp", negative="keep", discount="log2p1", cutoff=2, bq=float("inf"))
    pq = evaluate(r.frame, r.judgments, cfg).per_query()
    log3 = np.log2(3)
    # session 1 pool {a:2, b:-1, c:1, d:2}: ideal top 2 = 3 + 3/log2(3) (d is never retrieved)
    ideal1 = 3 + 3 / log3
    np.testing.assert_allclose(pq["ideal_dcg"].iloc[:3], [ideal1] * 3)
    # q2 = a(2), b(-1): 3 - 0.5/log2(3); q3 = b(-1), c(1): -0.5 + 1/log2(3); q1 is empty
    np.testing.assert_allclose(pq["dcg"].iloc[:3], [0, 3 - 0.5 / log3, -0.5 + 1 / log3])
    # session 3 pool {a:0, c:2}: the same URL a has grade 0 here, 2 in session 1
    np.testing.assert_allclose(pq["dcg"].iloc[4], 3 / log3)
    np.testing.assert_allclose(pq["ideal_dcg"].iloc[4], 3.0)


def test_load_lab_tables_finds_the_folders_tables(fx, tmp_path):
    r = load_lab_tables(fx / "lab")
    assert r.judgments is not None and r.qrels_key == "session"
    assert r.report.summary_line() == load(fx).report.summary_line()
    (tmp_path / "session").write_text((fx / "lab" / "session").read_text())
    with pytest.raises(InputFormatError, match=r"no 'results' table \(looked for results, "):
        load_lab_tables(tmp_path)
    # the folder's session table named instead of the folder: the same tables
    same = load_lab_tables(fx / "lab" / "session")
    assert same.report.summary_line() == r.report.summary_line()


def test_lenient_lists_every_row_of_unknown_sessions(fx, tmp_path):
    d = fx / "lab"
    res = tmp_path / "results"
    extra = "".join(f"{9 + i}\t1\t1\thttp://w/z\tZ\tz\n" for i in range(4))
    res.write_text((d / "results").read_text() + extra)
    r = load_lab_tables(d / "session", res, d / "qrels", mode="lenient", max_problems=2)
    assert r.report.rejects["record"].tolist() == ["9", "10", "11", "12"]
    assert r.report.records_read == r.report.sessions_accepted + r.report.sessions_rejected == 7
    with pytest.raises(ValidationFailed) as err:
        load_lab_tables(d / "session", res, d / "qrels", max_problems=2)
    assert len(err.value.problems) == 2 and err.value.truncated


def test_a_session_row_without_its_ratings_is_kept_with_a_located_note(fx, tmp_path):
    """CV-2: a row cut short before its ratings lost them without a word."""
    import shutil

    d = tmp_path / "lab"
    shutil.copytree(fx / "lab", d)
    rows = (d / "session").read_text().splitlines()
    rows[2] = "2\tU1\t02"  # the row ends before Performance and Difficulty
    rows[3] = "3\tU2\t01\t5\t"  # Difficulty left empty
    (d / "session").write_text("\n".join(rows) + "\n")
    for mode in ("strict", "lenient"):
        r = load_lab_tables(d / "session", d / "results", d / "qrels", mode=mode)
        assert r.frame.n_sessions == 3 and r.report.problems == []
        assert np.isnan(r.frame.sessions["rating_performance"].iloc[1])
        assert [str(n) for n in r.notes] == [
            f"{d / 'session'}:3: Performance, Difficulty: no value (the field is empty, or the "
            "row ends before it): the session is kept without this post-task rating",
            f"{d / 'session'}:4: Difficulty: no value (the field is empty, or the row ends "
            "before it): the session is kept without this post-task rating",
        ]
        assert [n.record for n in r.notes] == ["2", "3"]
    assert load(fx).notes == ()

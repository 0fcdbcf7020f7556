from __future__ import annotations

import json

import pandas as pd
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from sessionval.cli import main
from sessionval.io.cast import load_cast
from sessionval.io.jsonl import load_jsonl
from sessionval.io.lab_tables import load_lab_tables
from sessionval.io.mapping import load_mapped_table
from sessionval.io.study import load_study
from sessionval.io.trec import read_qrels
from sessionval.io.trec_session import load_trec_session
from sessionval.io.writers import write_flat, write_jsonl
from sessionval.models.session import Session
from sessionval.models.study import Study
from sessionval.validate.flat import frame_from_flat, frame_to_flat


def sources(fx):
    d = fx / "lab"
    c = fx / "cast"
    return {
        "trec-session": (
            lambda: load_trec_session(fx / "ts2013.xml", qrels=fx / "qrels2013.txt"),
            [
                str(fx / "ts2013.xml"),
                "--from",
                "trec-session",
                "--qrels",
                str(fx / "qrels2013.txt"),
            ],
            "topic",
        ),
        "lab-tables": (
            lambda: load_lab_tables(d / "session", d / "results", d / "qrels"),
            [str(d), "--from", "lab-tables"],
            "session",
        ),
        "cast": (
            lambda: load_cast(
                [c / "runA.run", c / "runB.run"], qrels=c / "qrels.txt", topics=c / "topics.json"
            ),
            [
                str(c),
                "--from",
                "cast",
                "--qrels",
                str(c / "qrels.txt"),
                "--topics",
                str(c / "topics.json"),
            ],
            "query_id",
        ),
    }


@pytest.mark.parametrize("fmt", ["trec-session", "lab-tables", "cast"])
def test_convert_to_jsonl_round_trip(fx, tmp_path, fmt, same_frame, capsys):
    load, args, key = sources(fx)[fmt]
    original = load()
    out = tmp_path / "out"
    assert main(["convert", *args, "--out", str(out)]) == 0
    # every line is exactly the Session model; study.json is a Study header
    for line in (out / "sessions.jsonl").read_text().splitlines():
        Session.model_validate_json(line)
    study = Study.model_validate_json((out / "study.json").read_text())
    assert study.grade_scale == original.judgments.scale
    # per-session / per-turn judgment keys travel as each query's qrels_id, so the converted
    # study loads and validates (every key judged or declared) with no extra step
    loaded = load_study(out, qrels=out / "qrels.txt")
    frame, j1 = loaded.frame, loaded.judgments.table
    same_frame(original.frame, frame)
    assert main(["validate", str(out), "--qrels", str(out / "qrels.txt")]) == 0
    j0 = original.judgments.table
    assert sorted(
        zip(j0["topic_id"].astype(str), j0["doc_id"].astype(str), j0["grade"], strict=True)
    ) == sorted(zip(j1["topic_id"].astype(str), j1["doc_id"].astype(str), j1["grade"], strict=True))
    said = capsys.readouterr().out
    assert "sessions accepted" in said
    if key != "topic":
        assert "the keys are in each query's qrels_id" in said


@pytest.mark.parametrize("fmt", ["trec-session", "lab-tables", "cast"])
@pytest.mark.parametrize("to", ["parquet", "csv"])
def test_convert_to_flat_round_trip(fx, tmp_path, fmt, to, same_frame):
    load, args, _ = sources(fx)[fmt]
    original = load()
    out = tmp_path / f"out.{to}"
    assert main(["convert", *args, "--out", str(out), "--to", to]) == 0
    back = load_mapped_table(out, "")
    # the qrels_id column restores per-session / per-turn judgment keys
    same_frame(original.frame, back.frame)
    j = read_qrels(out.with_suffix(".qrels"))
    assert len(j.table) == len(original.judgments.table)


def test_convert_mapped_flat_and_jsonl_input(fx, tmp_path, same_frame):
    out = tmp_path / "m"
    spec = "session=SID,user=Who,topic=Task,query_pos=Qno,rank=Pos,doc=Doc,system='lab'"
    assert (
        main(
            ["convert", str(fx / "mapped.csv"), "--from", "flat", "--map", spec, "--out", str(out)]
        )
        == 0
    )
    first = load_jsonl(out / "sessions.jsonl").frame
    again = tmp_path / "again.parquet"
    assert (
        main(
            [
                "convert",
                str(out / "sessions.jsonl"),
                "--from",
                "jsonl",
                "--out",
                str(again),
                "--to",
                "parquet",
            ]
        )
        == 0
    )
    same_frame(first, load_mapped_table(again, "").frame)


@pytest.mark.parametrize("fmt", ["trec-session", "lab-tables", "cast"])
def test_convert_recognises_the_format(fx, tmp_path, fmt, same_frame):
    load, args, _ = sources(fx)[fmt]
    i = args.index("--from")
    auto = [*args[:i], *args[i + 2 :]]  # the same call without --from
    assert main(["convert", *auto, "--out", str(tmp_path / "o.parquet"), "--to", "parquet"]) == 0
    same_frame(load().frame, load_mapped_table(tmp_path / "o.parquet", "").frame)


def test_convert_lenient_reports_repairs(fx, tmp_path, capsys):
    rc = main(
        [
            "convert",
            str(fx / "ts2013_quirks.xml"),
            "--from",
            "trec-session",
            "--out",
            str(tmp_path / "q"),
            "--lenient",
        ]
    )
    assert rc == 0
    err = capsys.readouterr().err
    assert "repaired:" in err and "click skipped" in err
    assert "rejected:" in err and "has no topic" in err


def test_convert_strict_failure_exit_code(fx, tmp_path, capsys):
    rc = main(
        [
            "convert",
            str(fx / "ts2013_bare_amp.xml"),
            "--from",
            "trec-session",
            "--out",
            str(tmp_path / "x"),
        ]
    )
    assert rc == 2
    assert "bare '&'" in capsys.readouterr().err


def test_convert_unknown_map_target_is_usage_error(fx, tmp_path, capsys):
    rc = main(
        [
            "convert",
            str(fx / "mapped.csv"),
            "--from",
            "flat",
            "--map",
            "sesion=SID",
            "--out",
            str(tmp_path / "x"),
        ]
    )
    assert rc == 2
    assert "unknown target column 'sesion'" in capsys.readouterr().err


def test_jsonl_output_leaves_out_unknowns(fx, tmp_path):
    r = load_trec_session(fx / "ts2013.xml")
    write_jsonl(r.frame, tmp_path / "o")
    first = json.loads((tmp_path / "o" / "sessions.jsonl").read_text().splitlines()[0])
    res = first["queries"][0]["results"]
    assert "dwell" not in res[0] and res[1]["dwell"] == pytest.approx(35.0)
    assert res[1]["clicks"] == 2 and "clicks" not in res[0]
    assert first["queries"][1]["results"] == []


def test_flat_table_has_one_judgment_key_per_row(fx):
    r = load_lab_tables(fx / "lab" / "session", fx / "lab" / "results", fx / "lab" / "qrels")
    flat = frame_to_flat(r.frame)
    assert (flat["qrels_id"].astype(str) == flat["session_id"].astype(str)).all()
    assert len(flat) == r.frame.n_results + 1  # plus the empty query's row


ids = st.sampled_from(["a", "b", "c", "d", "e"])


@st.composite
def flat_tables(draw):
    rows = []
    n_sessions = draw(st.integers(1, 4))
    for s in range(n_sessions):
        user, topic = draw(ids), draw(ids)
        rating = draw(st.one_of(st.none(), st.floats(0, 5, allow_nan=False)))
        for q in range(1, draw(st.integers(1, 3)) + 1):
            docs = draw(
                st.lists(st.sampled_from([f"d{i}" for i in range(8)]), unique=True, max_size=4)
            )
            text = draw(st.text(alphabet="xyz ä&<", max_size=6)).strip()
            if not docs:
                rows.append((f"s{s}", user, topic, q, None, None, text, 0, None, rating))
            for k, d in enumerate(docs, start=1):
                clicks = draw(st.integers(0, 2))
                dwell = draw(st.one_of(st.none(), st.floats(0, 100, width=32)))
                rows.append((f"s{s}", user, topic, q, k, d, text, clicks, dwell, rating))
    t = pd.DataFrame(
        rows,
        columns=[
            "session_id",
            "user_id",
            "topic_id",
            "query_pos",
            "rank",
            "doc_id",
            "query_text",
            "clicks",
            "dwell",
            "rating_x",
        ],
    )
    t["system_id"] = "S"
    t["rank"] = pd.array(t["rank"], dtype="Int64")
    t["dwell"] = pd.array(t["dwell"], dtype="Float64")
    return t


@settings(deadline=None, max_examples=15)
@given(flat_tables())
def test_writers_round_trip_any_frame(tmp_path_factory, same_frame, flat):
    # frame_to_flat (validate/flat.py) cannot flatten a frame without any result row
    assume(flat["doc_id"].notna().any())
    frame = frame_from_flat(flat).frame
    out = tmp_path_factory.mktemp("rt")
    write_jsonl(frame, out)
    same_frame(frame, load_jsonl(out / "sessions.jsonl").frame)
    write_flat(frame, out / "f.parquet")
    same_frame(frame, load_mapped_table(out / "f.parquet", "").frame)


# ---------------------------------------------------------------- issue 10 (reliability)


def test_convert_when_every_session_is_rejected(tmp_path, capsys):
    """F12: lenient convert with nothing valid: a clear error, exit 2, no file left."""
    bad = tmp_path / "allbad.csv"
    bad.write_text(
        "session_id,user_id,topic_id,system_id,query_pos,rank,doc_id\n"
        "s1,u,A,S,1,1,d1\ns1,u,A,S,1,1,d2\n"
    )
    for to, out in (("jsonl", tmp_path / "o"), ("parquet", tmp_path / "o.parquet")):
        args = ["convert", str(bad), "--from", "flat", "--out", str(out), "--to", to]
        assert main([*args, "--lenient"]) == 2
        err = capsys.readouterr().err
        assert "rejected: " in err and "rank 1 appears twice" in err
        assert (
            f"no session to convert (every session was rejected); nothing written to {out}" in err
        )
        assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["allbad.csv"]


def test_convert_sessions_without_results(tmp_path, make_session, write_jsonl, same_frame):
    """T3: sessions whose queries have no results convert, as validate accepts them."""
    (tmp_path / "in").mkdir()
    sessions = [make_session("s1", queries=[[]]), make_session("s2", queries=[[], []])]
    src = write_jsonl(tmp_path / "in" / "sessions.jsonl", sessions)
    assert main(["validate", str(src)]) == 0
    original = load_jsonl(src).frame
    assert original.n_results == 0
    out = tmp_path / "out"
    assert main(["convert", str(src), "--from", "jsonl", "--out", str(out)]) == 0
    loaded = load_jsonl(out / "sessions.jsonl")
    back, report = loaded.frame, loaded.report
    assert report.sessions_accepted == 2
    same_frame(original, back)
    for to in ("parquet", "csv"):
        table = tmp_path / f"t.{to}"
        assert main(["convert", str(src), "--out", str(table), "--to", to]) == 0
        same_frame(original, load_mapped_table(table, "").frame)


def _lab_with_spaces(fx, tmp_path):
    lab = tmp_path / "labsp"
    lab.mkdir()
    for name in ("session", "results", "qrels"):
        text = (fx / "lab" / name).read_text(encoding="utf-8")
        (lab / name).write_text(text.replace("http://w/a", "http://w/a b"), encoding="utf-8")
    assert "http://w/a b" in (lab / "qrels").read_text()
    return lab


def test_convert_ids_with_spaces_round_trip(fx, tmp_path, same_frame, capsys):
    """F16: a document id with a space is written where it reads back (qrels.csv)."""
    lab = _lab_with_spaces(fx, tmp_path)
    original = load_lab_tables(lab / "session", lab / "results", lab / "qrels")
    out = tmp_path / "out"
    assert main(["convert", str(lab), "--from", "lab-tables", "--out", str(out)]) == 0
    assert "written as CSV (qrels.csv)" in capsys.readouterr().err
    assert not (out / "qrels.txt").exists()
    loaded = load_study(out, qrels=out / "qrels.csv")
    same_frame(original.frame, loaded.frame)
    j0, j1 = original.judgments.table, loaded.judgments.table
    assert sorted(
        zip(j0["topic_id"].astype(str), j0["doc_id"].astype(str), j0["grade"], strict=True)
    ) == sorted(zip(j1["topic_id"].astype(str), j1["doc_id"].astype(str), j1["grade"], strict=True))
    assert "http://w/a b" in set(j1["doc_id"].astype(str))
    assert main(["validate", str(out), "--qrels", str(out / "qrels.csv")]) == 0
    table = tmp_path / "t.parquet"
    assert (
        main(["convert", str(lab), "--from", "lab-tables", "--out", str(table), "--to", "parquet"])
        == 0
    )
    back = load_mapped_table(table, "", qrels=tmp_path / "t.qrels.csv")
    same_frame(original.frame, back.frame)
    assert len(back.judgments.table) == len(j0)


def test_convert_never_overwrites_its_input(tmp_path, make_session, write_jsonl):
    folder = tmp_path / "study"
    folder.mkdir()
    src = write_jsonl(folder / "sessions.jsonl", [make_session("s1")])
    before = src.read_bytes()
    assert main(["convert", str(src), "--out", str(folder)]) == 2
    assert main(["convert", str(folder), "--from", "jsonl", "--out", str(folder)]) == 2
    table = tmp_path / "t.csv"
    assert main(["convert", str(src), "--out", str(table), "--to", "csv"]) == 0
    assert main(["convert", str(table), "--from", "flat", "--out", str(table), "--to", "csv"]) == 2
    assert src.read_bytes() == before
    assert sorted(p.name for p in folder.iterdir()) == ["sessions.jsonl"]

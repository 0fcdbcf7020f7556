"""TREC readers, `sessionval evaluate` and `sessionval measures` through main(argv)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from sessionval.cli import main
from sessionval.errors import JudgmentError, ParseError
from sessionval.io.trec import read_judgments_csv, read_qrels, read_run
from sessionval.measures.registry import measures_markdown

QRELS = """\
1 0 a 2
1 0 b 0
1 0 c 1

2 0 a 0
2 0 x -1
3 0 z 1
"""
RUN = """\
1 Q0 b 1 3.0 t
1 Q0 a 2 2.0 t
1 Q0 d 3 2.0 t
2 Q0 a 1 1 t
4 Q0 a 1 1 t
"""


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    q = tmp_path / "qrels.txt"
    r = tmp_path / "run.txt"
    q.write_text(QRELS)
    r.write_text(RUN)
    return q, r


def test_read_qrels_and_run(files) -> None:
    q, r = files
    j = read_qrels(q)
    assert len(j.table) == 6
    assert str(j.table["grade"].dtype) == "int16"
    assert j.scale.grades == (-1, 0, 1, 2)
    run = read_run(r)
    assert list(run.columns) == ["query_id", "doc_id", "rank", "score", "tag"]
    assert run["score"].tolist() == [3.0, 2.0, 2.0, 1.0, 1.0]


def test_reader_errors_give_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_text("1 0 a 2\n\n1 0 b x\n")
    with pytest.raises(ParseError, match=r"bad\.txt:3: grade: must be an integer \(got 'x'\)"):
        read_qrels(bad)
    bad.write_text("1 0 a 2\n1 0 b\n")
    with pytest.raises(ParseError, match=r"bad\.txt:2: qrels line has 3 fields, expected 4"):
        read_qrels(bad)
    bad.write_text("1 0 a 2\n1 0 a 1\n")
    with pytest.raises(JudgmentError, match="judged more than once for topic '1'"):
        read_qrels(bad)


def test_read_judgments_csv(tmp_path: Path) -> None:
    p = tmp_path / "j.csv"
    p.write_text("topic_id,doc_id,grade,assessor\n1,a,2,x\n1,b,0,y\n")
    j = read_judgments_csv(p)
    assert j.table["assessor"].tolist() == ["x", "y"]
    p.write_text("topic,doc_id,grade\n1,a,2\n")
    with pytest.raises(ParseError, match="missing column"):
        read_judgments_csv(p)


def test_evaluate_tsv_per_query(files, capsys) -> None:
    q, r = files
    opts = ["--ties", "doc_id", "--empty", "nan"]  # not trec_eval's defaults: a before d, NaN
    code = main(
        ["evaluate", str(q), str(r), "-q", "-m", "nDCG@10", "-m", "RR", "-m", "bpref", *opts]
    )
    assert code == 0
    out, err = capsys.readouterr()
    rows = [line.split("\t") for line in out.strip().splitlines()]
    # per-query rows (query-major), then the means; topic 2 has no relevant document
    assert rows[0] == ["nDCG@10", "1", f"{(2 / np.log2(3)) / (2 + 1 / np.log2(3)):.4f}"]
    assert rows[1] == ["RR", "1", "0.5000"]
    assert ["nDCG@10", "2", "NaN"] in rows
    # asked by trec_eval's name, bpref prints under it
    assert rows[-2:] == [["RR", "all", "0.2500"], ["bpref", "all", "0.0000"]]
    assert "1 run queries without judgments skipped" in err
    assert "1 queries with an empty recall base" in err


def test_evaluate_jsonl_complete_and_zero(files, capsys) -> None:
    q, r = files
    code = main(
        ["evaluate", str(q), str(r), "-c", "--format", "jsonl", "-m", "AP", "--ties", "doc_id"]
    )
    assert code == 0
    out, _ = capsys.readouterr()
    recs = [json.loads(x) for x in out.strip().splitlines()]
    # topics 1, 2 and (with -c) 3: AP 1/2*(1/2+... ) -> mean over three topics
    assert recs[-1]["query_id"] == "all" and recs[-1]["measure"] == "AP"
    ap1 = (1 / 2 + 0) / 2  # a (2) at rank 2; c (1) not retrieved
    assert recs[-1]["value"] == pytest.approx(ap1 / 3)


def test_evaluate_ties(files, capsys) -> None:
    q, r = files
    main(["evaluate", str(q), str(r), "-q", "-m", "RR", "--ties", "trec_eval"])
    out_te, _ = capsys.readouterr()
    main(["evaluate", str(q), str(r), "-q", "-m", "RR", "--ties", "doc_id"])
    out_id, _ = capsys.readouterr()
    main(["evaluate", str(q), str(r), "-q", "-m", "RR"])
    out_default, _ = capsys.readouterr()
    # a and d tie at 2.0 behind b: a at rank 2 (doc_id: a < d) or 3 (trec_eval: d > a)
    assert "RR\t1\t0.5000" in out_id
    assert "RR\t1\t0.3333" in out_te
    # issue 11: trec_eval's order is the default
    assert out_default == out_te


def test_evaluate_defaults_are_trec_eval_and_help_says_so(files, capsys) -> None:
    q, r = files
    assert main(["evaluate", str(q), str(r), "-q", "-m", "ndcg_cut.10", "-m", "map"]) == 0
    out, err = capsys.readouterr()
    # topic 2 has judgments but no relevant document: 0 and averaged, as trec_eval
    assert f"{'ndcg_cut_10':<22}\t2\t0.0000" in out and f"{'map':<22}\t2\t0.0000" in out
    assert "scored 0, as trec_eval" in err
    assert main(["evaluate", "--help"]) == 0
    help_text = " ".join(capsys.readouterr().out.split())
    assert "[default: trec_eval]" in help_text and "doc id descending" in help_text
    assert "[default: zero]" in help_text


def test_evaluate_bad_measure_exit_2(files, capsys) -> None:
    q, r = files
    assert main(["evaluate", str(q), str(r), "-m", "nDGC@10"]) == 2
    assert "unknown measure 'nDGC'" in capsys.readouterr().err


def test_measures_command_and_docs_in_sync(capsys) -> None:
    assert main(["measures"]) == 0
    out = capsys.readouterr().out
    assert "nDCG[@k]" in out and "reference:" in out
    assert main(["measures", "--format", "jsonl"]) == 0
    assert len(capsys.readouterr().out.strip().splitlines()) >= 16
    docs = Path(__file__).resolve().parents[2] / "docs" / "measures.md"
    assert docs.read_text(encoding="utf-8").strip() == measures_markdown().strip(), (
        "docs/measures.md is stale: regenerate with `sessionval measures --format markdown`"
    )


# issue 10: every reader problem a located error with exit 2, --encoding, all problems at once


def test_evaluate_non_utf8_exit_2_and_encoding(tmp_path: Path, capsys) -> None:
    q = tmp_path / "q.txt"
    r = tmp_path / "r.run"
    q.write_bytes("1 0 caf\xe9 1\n".encode("latin-1"))
    r.write_bytes("1 Q0 caf\xe9 1 1.0 t\n".encode("latin-1"))
    assert main(["evaluate", str(q), str(r), "-m", "AP"]) == 2
    err = capsys.readouterr().err
    assert "q.txt:1: byte offset 7: b'\\xe9' is not valid utf-8" in err
    assert "Traceback" not in err
    assert main(["evaluate", str(q), str(r), "-m", "AP", "--encoding", "latin-1"]) == 0
    assert capsys.readouterr().out.strip() == "AP\tall\t1.0000"
    assert main(["evaluate", str(q), str(r), "--encoding", "klingon"]) == 2
    assert "encoding 'klingon' is not known" in capsys.readouterr().err


def test_evaluate_vertical_tab_line_and_cr_only(tmp_path: Path, capsys) -> None:
    q = tmp_path / "q.txt"
    r = tmp_path / "vt.run"
    q.write_bytes(b"201_1 0 d1 1\r201_1 0 d2 0\r")  # CR-only line ends read as lines
    r.write_bytes(b"201_1 Q0 d1 1 1.0 r\n\x0b")
    assert main(["evaluate", str(q), str(r), "-m", "AP"]) == 2
    err = capsys.readouterr().err
    assert "vt.run:2: run line has 1 field, expected 6" in err and "(got '\\x0b')" in err
    r.write_bytes(b"201_1 Q0 d1 1 1.0 r\n")
    assert main(["evaluate", str(q), str(r), "-m", "AP"]) == 0
    assert capsys.readouterr().out.strip() == "AP\tall\t1.0000"


def test_evaluate_lists_every_problem_of_both_files(tmp_path: Path, capsys) -> None:
    q = tmp_path / "q.txt"
    r = tmp_path / "r.run"
    q.write_text("1 0 a 40000\n1 0 b 1 extra\n1 0 c 1\n")
    r.write_text("1 Q0 a 1 1.0 t\n")
    assert main(["evaluate", str(q), str(r)]) == 2
    err = capsys.readouterr().err
    assert "2 problems in the qrels file" in err
    assert "q.txt:1: grade: must be an integer from -32768 to 32767" in err
    assert "(got '40000')" in err
    assert "q.txt:2: qrels line has 5 fields, expected 4" in err


def test_evaluate_table_grades_beyond_int16(tmp_path: Path) -> None:
    import pandas as pd

    from sessionval.evaluation.lists import evaluate_run

    run = pd.DataFrame({"query_id": ["1"], "doc_id": ["a"], "score": [1.0]})
    qrels = pd.DataFrame({"query_id": ["1"], "doc_id": ["a"], "relevance": [65537]})
    with pytest.raises(
        JudgmentError, match=r"\(row 0\): relevance: must be an integer from -32768"
    ):
        evaluate_run(run, qrels, ["AP"])


def test_compare_reads_with_an_encoding(tmp_path: Path, capsys) -> None:
    q = tmp_path / "q.txt"
    q.write_bytes("1 0 caf\xe9 1\n2 0 x 1\n".encode("latin-1"))
    runs = []
    for name in ("a", "b"):
        r = tmp_path / f"{name}.run"
        r.write_bytes(f"1 Q0 caf\xe9 1 1.0 {name}\n2 Q0 x 1 1.0 {name}\n".encode("latin-1"))
        runs.append(str(r))
    assert main(["compare", str(q), *runs, "-m", "AP"]) == 2
    assert "not valid utf-8" in capsys.readouterr().err
    assert main(["compare", str(q), *runs, "-m", "AP", "--encoding", "latin-1"]) == 0


def test_evaluate_repeated_documents_name_file_and_lines(tmp_path: Path, capsys) -> None:
    q = tmp_path / "q.txt"
    r = tmp_path / "r.run"
    q.write_text("1 0 a 1\n2 0 b 1\n")
    r.write_text("1 Q0 a 1 1.0 t\n\n1 Q0 a 2 0.5 t\n2 Q0 b 1 1.0 t\n2 Q0 b 2 0.5 t\n")
    assert main(["evaluate", str(q), str(r), "-m", "AP"]) == 2
    err = capsys.readouterr().err
    assert "2 repeated document(s) in the run" in err
    assert "r.run:3: document 'a' appears again for query '1' (lines 1, 3)" in err
    assert "r.run:5: document 'b' appears again for query '2' (lines 4, 5)" in err


def test_evaluate_repeated_document_lists_a_few_lines(tmp_path: Path, capsys) -> None:
    """One document on every line of a long run: one short error line, the rest counted."""
    q = tmp_path / "q.txt"
    r = tmp_path / "r.run"
    q.write_text("1 0 a 1\n")
    r.write_text("".join(f"1 Q0 a {i} {-i} t\n" for i in range(1, 5001)))
    assert main(["evaluate", str(q), str(r), "-m", "AP"]) == 2
    err = capsys.readouterr().err
    assert "(lines 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 and 4,990 more)" in err
    assert len(err) < 400
    ok = tmp_path / "ok.run"
    ok.write_text("1 Q0 a 1 1.0 t\n2 Q0 b 1 1.0 t\n")
    assert main(["compare", str(q), str(ok), str(r), "-m", "AP"]) == 2
    assert "r.run: " in capsys.readouterr().err


def test_trec_eval_names_print_in_trec_eval_layout(files, capsys) -> None:
    """Issue 25: -m in trec_eval's names prints trec_eval's lines (%-22s\\t%s\\t%6.4f)."""
    q, r = files
    assert main(["evaluate", str(q), str(r), "-q", "-m", "runid", "-m", "num_q", "-m", "P.1,2",
                 "-m", "num_rel_ret", "-m", "gm_map"]) == 0  # fmt: skip
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"{'P_1':<22}\t1\t0.0000"
    # runid and num_q for all only, counts as integers, gm_map per query as its log
    assert not any(line.startswith(("runid", "num_q")) and "\tall\t" not in line for line in out)
    assert f"{'runid':<22}\tall\tt" in out
    assert f"{'num_q':<22}\tall\t2" in out
    assert f"{'num_rel_ret':<22}\tall\t1" in out
    assert f"{'gm_map':<22}\t2\t{np.log(1e-5):6.4f}" in out


def test_all_trec_lists_every_trec_eval_measure(files, capsys) -> None:
    from sessionval.measures.names import ALL_TREC

    q, r = files
    assert main(["evaluate", str(q), str(r), "-m", "all_trec"]) == 0
    names = [line.split("\t")[0].strip() for line in capsys.readouterr().out.splitlines()]
    assert len(names) == 94  # trec_eval 9.0.x: 33 names, lists at their default cut-offs
    roots = {n.rsplit("_", 1)[0] if n[-1].isdigit() else n for n in names}
    assert roots == set(ALL_TREC)


def test_other_tools_names_print_under_their_canonical_name(files, capsys) -> None:
    q, r = files
    argv = ["evaluate", str(q), str(r), "-m", "hit_rate@2", "-m", "ndcg_cut.2", "-m", "runid"]
    assert main(argv) == 0
    rows = [line.split("\t") for line in capsys.readouterr().out.splitlines()]
    # mixed: tab-separated, each under its name; runid is the run's tag
    assert [row[0] for row in rows] == ["Success@2", "ndcg_cut_2", "runid"]
    assert rows[-1] == ["runid", "all", "t"]

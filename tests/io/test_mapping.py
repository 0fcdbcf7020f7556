from __future__ import annotations

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sessionval.errors import InputFormatError, ValidationFailed
from sessionval.io.mapping import apply_mapping, load_mapped_table, parse_mapping, with_qrels_key

SPEC = (
    "session=SID,user=Who,topic=Task,query_pos=Qno,rank=Pos,doc=Doc,"
    "rating_satisfaction=Sat,system='lab'"
)


def test_mapped_csv(fx):
    m = load_mapped_table(fx / "mapped.csv", SPEC)
    f = m.frame
    assert f.sessions["session_id"].astype(str).tolist() == ["a", "b"]
    assert f.sessions["system_id"].astype(str).tolist() == ["lab", "lab"]
    assert f.sessions["rating_satisfaction"].tolist() == [3.0, 5.0]
    assert f.queries["n_results"].tolist() == [2, 1, 1]
    assert m.details["mapping"]["session_id"] == "SID"


def test_unknown_target_lists_allowed():
    with pytest.raises(
        InputFormatError, match=r"unknown target column 'sesion' \(allowed: session_id"
    ):
        parse_mapping("sesion=SID")


def test_missing_source_column(fx):
    with pytest.raises(
        InputFormatError,
        match=r"mapped source column\(s\) 'Nope' not in the table "
        r"\(columns: SID, Who, Task",
    ):
        load_mapped_table(fx / "mapped.csv", SPEC.replace("Doc", "Nope"))


def test_bad_pairs():
    with pytest.raises(InputFormatError, match="expected target=source"):
        parse_mapping("session")
    with pytest.raises(InputFormatError, match="given twice"):
        parse_mapping("session=A,session_id=B")
    with pytest.raises(InputFormatError, match="empty source"):
        parse_mapping("session=")


def test_mapped_rows_report_file_lines(fx, tmp_path):
    p = tmp_path / "t.csv"
    p.write_text((fx / "mapped.csv").read_text().replace("a,u1,T1,2,1,d3,3", "a,u1,T1,2,3,d3,3"))
    with pytest.raises(ValidationFailed, match=r"t\.csv:4: rank: rank 3 leaves a gap"):
        load_mapped_table(p, SPEC)


def test_qrels_id_column_is_applied(fx):
    t = pd.read_csv(fx / "mapped.csv", dtype=str)
    t["Key"] = ["k1", "k1", "k2", "k3"]
    f = load_mapped_table(t, SPEC + ",qrels_id=Key").frame
    assert f.queries["qrels_id"].astype(str).tolist() == ["k1", "k2", "k3"]


def test_with_qrels_key_options(fx):
    f = load_mapped_table(fx / "mapped.csv", SPEC).frame
    assert with_qrels_key(f, by="session").queries["qrels_id"].astype(str).tolist() == [
        "a",
        "a",
        "b",
    ]
    assert with_qrels_key(f, by="query_id").queries["qrels_id"].astype(str).tolist() == [
        "a:1",
        "a:2",
        "b:1",
    ]
    back = with_qrels_key(with_qrels_key(f, by="session"), by="topic")
    assert back.queries["qrels_id"].astype(str).tolist() == ["T1", "T1", "T2"]
    # the input frame is not modified
    assert f.queries["qrels_id"].astype(str).tolist() == ["T1", "T1", "T2"]
    with pytest.raises(InputFormatError, match="one per query row"):
        with_qrels_key(f, by=pd.Series(["x"]))


@settings(deadline=None, max_examples=25)
@given(
    st.permutations(["SID", "Who", "Task", "Qno", "Pos", "Doc", "Sat"]),
    st.text(alphabet="XYZ_", min_size=1, max_size=4),
)
def test_renaming_is_independent_of_column_order_and_names(order, prefix):
    base = pd.DataFrame(
        {
            "SID": ["a", "a", "b"],
            "Who": "u",
            "Task": "T",
            "Qno": [1, 1, 1],
            "Pos": [1, 2, 1],
            "Doc": ["d1", "d2", "d1"],
            "Sat": [1, 1, 2],
        }
    )
    renamed = base[order].rename(columns=lambda c: prefix + c)
    spec = ",".join(
        f"{t}={prefix}{s}"
        for t, s in [
            ("session", "SID"),
            ("user", "Who"),
            ("topic", "Task"),
            ("query_pos", "Qno"),
            ("rank", "Pos"),
            ("doc", "Doc"),
            ("rating_sat", "Sat"),
        ]
    )
    flat = apply_mapping(renamed, parse_mapping(spec + ",system='S'"))
    assert flat["session_id"].tolist() == ["a", "a", "b"]
    assert flat["rank"].tolist() == [1, 2, 1]
    assert flat["rating_sat"].tolist() == [1, 1, 2]
    assert flat["system_id"].tolist() == ["S", "S", "S"]


def test_every_flat_column_is_a_mapping_target():
    from sessionval.frame import FLAT_COLUMNS

    spec = ",".join(f"{c.name}={c.name.upper()}" for c in FLAT_COLUMNS)
    assert list(parse_mapping(spec)) == [c.name for c in FLAT_COLUMNS]


def test_mapped_table_with_judgments(fx):
    t = pd.read_csv(fx / "mapped.csv", dtype=str)
    q = fx / "qrels2013.txt"
    m = load_mapped_table(t, SPEC, qrels=q)
    assert m.judgments is not None and m.unjudged == ("T1", "T2")
    assert m.qrels_key == "topic" and m.study.name == "<table>"

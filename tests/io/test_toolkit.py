from __future__ import annotations

from pathlib import Path

import pytest

from sessionval.io.toolkit import load_sessions
from tests.builders import small_flat


@pytest.mark.parametrize("suffix", ["parquet", "csv"])
def test_max_rank_reads_only_the_top(tmp_path: Path, suffix: str):
    df = small_flat(rank=[1, 2, None, 1], doc_id=["a", "b", None, "a"])
    path = tmp_path / f"f.{suffix}"
    df.to_parquet(path, index=False) if suffix == "parquet" else df.to_csv(path, index=False)
    loaded = load_sessions(path, max_rank=1)
    frame, report = loaded.frame, loaded.report
    assert frame.results["rank"].tolist() == [1, 1]
    assert frame.queries["n_results"].tolist() == [1, 0, 1]  # the empty query is kept
    assert report.sessions_accepted == 2


def test_parquet_columns_subset_reads_only_required(tmp_path: Path):
    df = small_flat(clicks=[1, 0, None, 2], query_text=["x", "x", "y", "z"])
    df.to_parquet(tmp_path / "f.parquet", index=False)
    frame = load_sessions(tmp_path / "f.parquet", columns=()).frame
    assert frame.results["clicks"].tolist() == [0, 0, 0]  # not read: the documented default
    assert frame.queries["text"].tolist() == ["", "", ""]
    full = load_sessions(tmp_path / "f.parquet").frame
    assert full.results["clicks"].tolist() == [1, 0, 2]


def test_detection_of_the_toolkit_layout(fx, tmp_path):
    from sessionval.io.toolkit import is_flat_input, is_jsonl_input

    assert is_jsonl_input(fx / "study") and not is_flat_input(fx / "study")
    assert is_jsonl_input(Path("x.jsonl.gz")) and not is_flat_input(Path("x.jsonl.gz"))
    assert is_flat_input(Path("x.csv.gz")) and is_flat_input(Path("x.parquet"))
    small_flat().to_parquet(tmp_path / "sessions.parquet")
    assert is_flat_input(tmp_path) and not is_jsonl_input(tmp_path)


def test_read_flat_study_with_and_without_a_mapping(fx, tmp_path):
    from sessionval.errors import InputFormatError
    from sessionval.io.toolkit import load_flat_study

    spec = "session=SID,user=Who,topic=Task,query_pos=Qno,rank=Pos,doc=Doc,system='lab'"
    mapped = load_flat_study(fx / "mapped.csv", mapping=spec)
    assert mapped.details["mapping"]["session_id"] == "SID"
    small_flat().to_csv(tmp_path / "f.csv", index=False)
    plain = load_flat_study(tmp_path / "f.csv")
    assert plain.frame.n_sessions == 2 and plain.details == {}
    with pytest.raises(InputFormatError, match="not to a table read through a column mapping"):
        load_flat_study(fx / "mapped.csv", mapping=spec, max_rank=3)

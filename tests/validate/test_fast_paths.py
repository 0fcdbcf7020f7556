"""The validated load's fast paths give what the full checks give (frames and problems).

Each fast path is compared with the general path it skips (forced by patching the fast
path away) on Parquet files with several row groups, sessions crossing them, ids with
surrounding whitespace, and the problems each check reports.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from sessionval.errors import ValidationFailed
from sessionval.validate import list_rules, sources
from sessionval.validate.collect import ProblemCollector
from sessionval.validate.fields import parse_integers
from sessionval.validate.flat import frame_from_flat
from sessionval.validate.order import order_rows, read_ranks, read_sessions
from sessionval.validate.sources import ParquetColumns
from tests.builders import small_flat


def _write(table: pd.DataFrame, path: Path, *, row_group_size: int = 3) -> Path:
    """``table`` as Parquet with ids dictionary-encoded and small row groups."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    t = pa.Table.from_pandas(table, preserve_index=False)
    pq.write_table(t, path, row_group_size=row_group_size, use_dictionary=True)
    return path


def _load(path: Path, **kwargs: Any) -> tuple[Any, Any]:
    loaded = frame_from_flat(ParquetColumns(path), **kwargs)
    return loaded.frame, loaded.report


def _without_fast_paths(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sources.ParquetColumns, "entry_codes", lambda self, name: None)
    monkeypatch.setattr(list_rules, "ranks_in_order", lambda *a: False)
    monkeypatch.setattr(list_rules, "first_repeated_document", lambda *a: 0)


def _same(a: Any, b: Any) -> None:
    for name in ("sessions", "queries", "results", "users", "topics", "systems"):
        pd.testing.assert_frame_equal(getattr(a, name), getattr(b, name), check_exact=True)


def _study(users: list[str], topics: list[str] | None = None) -> pd.DataFrame:
    """Sessions s1..sN of two queries with three results each (six rows per session)."""
    rows = []
    for i, user in enumerate(users):
        topic = topics[i] if topics else "T"
        for q in (1, 2):
            for r in (1, 2, 3):
                rows.append((f"s{i + 1}", user, topic, "S", q, r, f"d{(i + q + r) % 7}"))
    cols = ["session_id", "user_id", "topic_id", "system_id", "query_pos", "rank", "doc_id"]
    df = pd.DataFrame(rows, columns=cols)
    df["clicks"] = pd.array([0, 1, None] * (len(df) // 3), dtype="Int16")
    df["user_grade"] = pd.array([None, 2, 3] * (len(df) // 3), dtype="Int16")
    return df


@pytest.mark.parametrize("row_group_size", [1, 4, 5, 100])
def test_fast_paths_give_the_full_checks_frame(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, row_group_size: int
):
    # whitespace variants of one id, listed in the dictionary before the plain value
    users = [" u2", "u1", "u2 ", "u3", "u2", "u1"]
    df = _study(users, topics=["B", "A", "B", "A", " B", "A"])
    path = _write(df, tmp_path / "f.parquet", row_group_size=row_group_size)
    fast, _ = _load(path)
    with monkeypatch.context() as m:
        _without_fast_paths(m)
        full, _ = _load(path)
    _same(fast, full)
    assert fast.sessions["user_id"].cat.categories.tolist() == ["u2", "u1", "u3"]


def test_entry_codes_are_equal_for_equal_entries_of_one_dictionary(tmp_path: Path):
    df = _study(["u1", "u2", "u1"])
    path = _write(df, tmp_path / "f.parquet", row_group_size=7)
    codes, dictionary = ParquetColumns(path).entry_codes("user_id")
    values = np.asarray(dictionary.to_pylist(), dtype=object)[codes]
    assert values.tolist() == df["user_id"].tolist()
    assert ParquetColumns(path).entry_codes("rank") is None  # not a text column


@pytest.mark.parametrize(
    ("column", "values", "message"),
    [
        ("user_id", ["u1"] * 5 + ["u2"], "differs from an earlier row of the same session"),
        ("topic_id", ["T"] * 5 + [None], "is required"),
        ("system_id", ["S"] * 5 + ["  "], "must not be empty"),
    ],
)
def test_a_value_that_differs_within_a_session_is_reported_as_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, column: str, values: list[Any], message: str
):
    df = _study(["u1", "u1"])
    df.loc[6:11, column] = values
    path = _write(df, tmp_path / "f.parquet")
    with pytest.raises(ValidationFailed) as fast:
        _load(path)
    with monkeypatch.context() as m:
        _without_fast_paths(m)
        with pytest.raises(ValidationFailed) as full:
            _load(path)
    assert message in str(fast.value)
    assert str(fast.value) == str(full.value)


@pytest.mark.parametrize(
    ("ranks", "docs"),
    [
        ([1, 2, 3, 1, 2, 3], ["a", "b", "a", "a", "b", "c"]),  # a document twice in a list
        ([1, 3, 4, 1, 2, 3], ["a", "b", "c", "a", "b", "c"]),  # a gap
        ([1, 2, 2, 1, 2, 3], ["a", "b", "c", "a", "b", "c"]),  # a rank twice
        ([0, 1, 2, 1, 2, 3], ["a", "b", "c", "a", "b", "c"]),  # a rank below 1
    ],
)
def test_rank_and_document_problems_are_those_of_the_full_checks(
    monkeypatch: pytest.MonkeyPatch, ranks: list[int], docs: list[str]
):
    flat = pd.DataFrame(
        {
            "session_id": ["s1"] * 3 + ["s2"] * 3,
            "user_id": "u",
            "topic_id": "T",
            "system_id": "S",
            "query_pos": 1,
            "rank": ranks,
            "doc_id": docs,
        }
    )
    fast_report = frame_from_flat(flat, mode="lenient").report
    with monkeypatch.context() as m:
        _without_fast_paths(m)
        full_report = frame_from_flat(flat, mode="lenient").report
    assert [str(p) for p in fast_report.problems] == [str(p) for p in full_report.problems]
    assert fast_report.repairs == full_report.repairs
    assert fast_report.problems or fast_report.repairs


def test_ranks_in_order_accepts_clean_lists_only():
    flat = small_flat()  # s1: ranks 1, 2 then an empty query; s2: rank 1
    rows = read_sessions(flat, source="t", location_kind="row", row_locations=None)
    ranks, keys = read_ranks(rows)
    order, bounds = order_rows(rows, ranks, keys)
    res = keys.rank_present & ~keys.empty_row
    rank_s, starts = ranks.ranks, bounds.query_start
    assert list_rules.ranks_in_order(res, rank_s, starts)
    q_of_row = order.query_of_row()
    assert list_rules.first_repeated_document(q_of_row[res], ranks.doc_codes[res]) == -1
    bad = rank_s.copy()
    bad[1] = 3
    assert not list_rules.ranks_in_order(res, bad, starts)
    docs = ranks.doc_codes.copy()
    docs[1] = docs[0]
    assert list_rules.first_repeated_document(q_of_row[res], docs[res]) == 1


def test_a_sparse_rank_table_goes_to_the_full_check(monkeypatch: pytest.MonkeyPatch):
    # one list 1..200 and many lists of one result: the dense table would be mostly padding
    n_short = 50
    flat = pd.DataFrame(
        {
            "session_id": ["s0"] * 200 + [f"s{i}" for i in range(1, n_short + 1)],
            "user_id": "u",
            "topic_id": "T",
            "system_id": "S",
            "query_pos": 1,
            "rank": list(range(1, 201)) + [1] * n_short,
            "doc_id": [f"d{i}" for i in range(200)] + ["d0"] * n_short,
        }
    )
    calls: list[int] = []
    original = list_rules.check_unique_within

    def spy(*args: Any, **kwargs: Any) -> Any:
        calls.append(len(args[0]))
        return original(*args, **kwargs)

    monkeypatch.setattr(list_rules, "check_unique_within", spy)
    loaded = frame_from_flat(flat)
    frame, report = loaded.frame, loaded.report
    assert calls == [200 + n_short]  # too sparse: the sort of keys decided, once
    assert not report.problems and frame.n_results == 200 + n_short


def test_parse_integers_keeps_narrow_storage_when_asked():
    coll = ProblemCollector("t", np.zeros(3, np.int32), pd.Index(["s"]), str)
    raw = pd.Series(pd.array([1, None, -2], dtype="Int16"))
    ints, missing = parse_integers(raw, "clicks", coll, fill=0, nullable_rows=None, dtype=np.int16)
    assert ints.dtype == np.int16 and ints.tolist() == [1, 0, -2]
    assert missing.tolist() == [False, True, False]
    assert [p.message for p in coll.problems] == ["is required"]
    wide = pd.Series(pd.array([1, None], dtype="Int32"))
    ints, _ = parse_integers(wide, "clicks", coll, fill=0, nullable_rows=None, dtype=np.int16)
    assert ints.dtype == np.int32  # does not fit: int32 as always


def test_masked_integer_columns_read_from_parquet(tmp_path: Path):
    df = small_flat(clicks=pd.array([1, None, None, 3], dtype="Int16"))
    path = _write(df, tmp_path / "f.parquet", row_group_size=2)
    col = ParquetColumns(path).column("clicks")
    assert str(col.dtype) == "Int16"
    assert col.tolist() == [1, pd.NA, pd.NA, 3]
    taken = ParquetColumns(path).take("clicks", np.array([0, 3, 1]))  # not ascending
    assert taken.iloc[:2].tolist() == [1, 3] and pd.isna(taken.iloc[2])
    taken = ParquetColumns(path).take("doc_id", np.array([0, 1, 3]))
    assert taken.astype(str).tolist() == ["a", "b", "a"]

"""Issue 10, item 5: the same sessions in any line order, file split, format, chunking or engine
give bit-identical tables (``check_exact``), rows in session-id order."""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from sessionval.evaluation.engine import LocalEngine
from sessionval.evaluation.session import evaluate
from sessionval.frame import id_order
from sessionval.frame.order import sorted_categories
from sessionval.io.formats import load_input
from sessionval.io.study import load_study
from sessionval.io.writers import write_flat
from sessionval.synth import write_study
from sessionval.validate.flat import frame_to_flat

MEASURES = [
    "nDCG@10", "AP", "RR", "ERR@10", "sDCG(b=2,bq=4)@10", "last(nDCG@10)", "mean(AP)",
    "esNDCG@10", "sRBP", "CT@10",
]  # fmt: skip


def tables(ev) -> list[pd.DataFrame]:
    return [ev.per_session(), ev.per_query(), ev.per_position()]


def assert_same_tables(a, b) -> None:
    for x, y in zip(tables(a), tables(b), strict=True):
        pd.testing.assert_frame_equal(x, y, check_exact=True)


@pytest.fixture(scope="module")
def study(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("study")
    write_study(root, n_sessions=60, seed=11, formats="jsonl")
    return root


@pytest.fixture(scope="module")
def reference(study):
    loaded = load_study(study, qrels=study / "qrels.txt")
    return loaded, evaluate(loaded.frame, loaded.judgments, measures=MEASURES)


def shuffled_copy(study: Path, dest: Path, seed: int) -> Path:
    """The study with its JSON lines (and its qrels lines) in another order."""
    shutil.copytree(study, dest)
    for name in ("sessions.jsonl", "qrels.txt"):
        lines = (study / name).read_text(encoding="utf-8").splitlines(keepends=True)
        random.Random(seed).shuffle(lines)
        (dest / name).write_text("".join(lines), encoding="utf-8")
    return dest


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_shuffled_lines_give_identical_tables(study, reference, tmp_path, seed):
    _, ref = reference
    copy = shuffled_copy(study, tmp_path / "s", seed)
    loaded = load_study(copy, qrels=copy / "qrels.txt")
    # the input order differs, the scored order does not
    assert loaded.frame.sessions["session_id"].tolist() != ref.frame.sessions["session_id"].tolist()
    ev = evaluate(loaded.frame, loaded.judgments, measures=MEASURES)
    assert_same_tables(ev, ref)


def test_rows_are_in_session_id_order(reference):
    _, ref = reference
    for table in tables(ref):
        ids = table["session_id"].astype(str)
        first = ids[~ids.duplicated()].tolist()
        assert first == sorted(first)
    assert list(ref.per_session()["session_id"].cat.categories) == sorted(
        ref.per_session()["session_id"].astype(str)
    )


@pytest.mark.parametrize("chunk_rows", [1, 97, 1_000])
def test_chunk_boundaries_change_no_bit(reference, chunk_rows):
    loaded, ref = reference
    ev = evaluate(
        loaded.frame, loaded.judgments, measures=MEASURES, engine=LocalEngine(chunk_rows=chunk_rows)
    )
    assert_same_tables(ev, ref)


def test_file_split_and_format_change_no_bit(reference, tmp_path):
    """Flat CSV and Parquet, and Parquet parts written in shuffled session order, three files."""
    loaded, ref = reference
    write_flat(loaded.frame, tmp_path / "flat.csv")
    write_flat(loaded.frame, tmp_path / "flat.parquet")
    flat = frame_to_flat(loaded.frame)
    ids = sorted(set(flat["session_id"].astype(str)))
    random.Random(5).shuffle(ids)
    parts = tmp_path / "parts"
    parts.mkdir()
    for k, chunk in enumerate(np.array_split(np.array(ids, dtype=object), 3)):
        rows = flat[flat["session_id"].astype(str).isin(set(chunk))]
        rows.sample(frac=1.0, random_state=k).to_parquet(parts / f"p{k}.parquet", index=False)
    inputs = [
        (tmp_path / "flat.csv", "flat"),
        (tmp_path / "flat.parquet", "flat"),
        (parts, "parquet-parts"),
    ]
    for path, fmt in inputs:
        other = load_input(path, fmt)
        ev = evaluate(other.frame, loaded.judgments, measures=MEASURES)
        for x, y in zip(tables(ev), tables(ref), strict=True):
            # the same values, bit for bit; the flat formats do not keep every dtype of JSON-lines
            pd.testing.assert_frame_equal(x, y, check_exact=True, check_dtype=False,
                                          check_categorical=False)  # fmt: skip


def test_dask_engine_gives_identical_tables(reference):
    pytest.importorskip("distributed")
    from sessionval.evaluation.dask_engine import dask_engine

    loaded, ref = reference
    with dask_engine(workers=2, processes=False, chunk_rows=123) as eng:
        ev = evaluate(loaded.frame, loaded.judgments, measures=MEASURES, engine=eng)
        assert_same_tables(ev, ref)


def test_in_id_order_is_a_no_op_on_a_canonical_frame(reference):
    _, ref = reference
    assert ref.frame.in_id_order() is ref.frame


def test_id_order_is_numeric_for_digit_ids_else_code_points():
    assert id_order(["10", "9", "007", "7", "0"]).tolist() == [4, 2, 3, 1, 0]
    assert id_order(["s10", "s9", "S1", "s1"]).tolist() == [2, 3, 0, 1]
    assert id_order([]).tolist() == []


def test_rating_columns_and_entity_categories_in_fixed_order(tmp_path):
    """The same sessions read with their ratings and entities in another order."""
    rows = []
    for sid, user, topic, system in [("s2", "u2", "T2", "B"), ("s1", "u1", "T1", "A")]:
        for rank in (1, 2):
            rows.append({"session_id": sid, "user_id": user, "topic_id": topic,
                         "system_id": system, "query_pos": 1, "rank": rank,
                         "doc_id": f"d{rank}", "rating_b": 1.0, "rating_a": 2.0})  # fmt: skip
    a = pd.DataFrame(rows)
    b = a.iloc[::-1][["rating_a", *[c for c in a.columns if c != "rating_a"]]]
    a.to_csv(tmp_path / "a.csv", index=False)
    b.to_csv(tmp_path / "b.csv", index=False)
    fa = load_input(tmp_path / "a.csv").frame.in_id_order()
    fb = load_input(tmp_path / "b.csv").frame.in_id_order()
    for t in ("sessions", "queries", "results"):
        pd.testing.assert_frame_equal(getattr(fa, t), getattr(fb, t), check_exact=True)
    assert [c for c in fa.sessions.columns if c.startswith("rating_")] == ["rating_a", "rating_b"]
    assert list(fa.sessions["system_id"].cat.categories) == ["A", "B"]
    assert fa.sessions["session_id"].astype(str).tolist() == ["s1", "s2"]


def test_categories_sorted_into_id_order_keep_every_value():
    """The NumPy recode gives pandas' reorder_categories, missing values and index included."""
    cats = ["d10", "d2", "a", "d1"]
    col = pd.Series(
        pd.Categorical(["a", None, "d2", "d10", "a", "d1"], categories=cats),
        index=[5, 4, 3, 2, 1, 0],
        name="doc_id",
    )
    got = sorted_categories(col)
    assert got is not None
    want = col.cat.reorder_categories([cats[i] for i in id_order(cats)])
    pd.testing.assert_series_equal(got, want)
    assert got.cat.codes.dtype == col.cat.codes.dtype
    assert sorted_categories(got) is None

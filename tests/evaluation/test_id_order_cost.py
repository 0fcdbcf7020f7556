"""What keeps the canonical id order cheap on studies of many documents (issue 26, item 3)."""

from __future__ import annotations

import pandas as pd
import pytest

import sessionval.validate.ids as ids_module
from sessionval.frame import order as frame_module
from sessionval.validate.ids import spelling_variants
from tests.builders import frame


def test_each_id_column_is_sorted_once_even_when_the_sessions_move(monkeypatch) -> None:
    # s10 sorts before s2: the sessions move, and the documents' categories must be put in
    # id order once, not again on the moved rows (943k ids took 2 s per sort)
    study = frame(
        [
            ("s2", "u", "T", "S", [["d9", "d1"], ["d5"]]),
            ("s10", "u", "T", "S", [["d3", "d9"]]),
        ]
    )
    sorted_sizes: list[int] = []
    original = frame_module.id_order

    def counting(ids):  # type: ignore[no-untyped-def]
        sorted_sizes.append(len(ids))
        return original(ids)

    monkeypatch.setattr(frame_module, "id_order", counting)
    ordered = study.in_id_order()
    assert ordered.sessions["session_id"].astype(str).tolist() == ["s10", "s2"]
    docs = ordered.results["doc_id"]
    assert docs.cat.categories.tolist() == sorted(docs.cat.categories.tolist())
    assert docs.astype(str).tolist() == ["d3", "d9", "d9", "d1", "d5"]
    # session ids, then user, topic, system, qrels id and documents: one sort each
    n_docs = len(study.results["doc_id"].cat.categories)
    assert sorted_sizes.count(n_docs) == 1


def test_ascii_ids_are_never_reduced_to_their_distinct_values(monkeypatch) -> None:
    def no_hash(ids):  # type: ignore[no-untyped-def]
        pytest.fail("the distinct ids were built for ASCII ids")

    monkeypatch.setattr(ids_module, "_distinct", no_hash)
    run = pd.Series([f"d{i}" for i in range(1000)], dtype="str")
    qrels = pd.Series([f"d{i}" for i in range(0, 2000, 2)], dtype=object)
    assert spelling_variants(qrels, run, pd.Series(run.astype("category"))) == []

"""The one detection of a document listed twice in one result list."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as hs

from sessionval.validate.list_rules import first_repeated_document, repeated_documents


def _brute_force(lists: list[int], docs: list[int]) -> int:
    seen: set[tuple[int, int]] = set()
    for i, key in enumerate(zip(lists, docs, strict=True)):
        if key in seen:
            return i
        seen.add(key)
    return -1


@settings(max_examples=300, deadline=None)
@given(hs.lists(hs.lists(hs.integers(0, 6), min_size=1, max_size=8), max_size=12))
def test_first_repeated_document_is_the_first_later_copy(lists_of_docs):
    lists = [i for i, docs in enumerate(lists_of_docs) for _ in docs]
    docs = [d for ds in lists_of_docs for d in ds]
    expected = _brute_force(lists, docs)
    q, d = np.array(lists, dtype=np.int32), np.array(docs, dtype=np.int32)
    assert first_repeated_document(q, d) == expected
    assert first_repeated_document(q, d, block=5) == expected  # in pieces of whole lists


def test_a_sparse_table_gives_the_same_row_as_a_dense_one():
    # one list of 300 documents among 400 lists of one: the dense table would be padding
    lists = np.concatenate([np.zeros(300), np.arange(1, 401)]).astype(np.int32)
    docs = np.concatenate([np.arange(300), np.zeros(400)]).astype(np.int32)
    assert first_repeated_document(lists, docs) == -1
    docs[250] = docs[7]
    assert first_repeated_document(lists, docs) == 250
    docs[120] = docs[7]
    assert first_repeated_document(lists, docs) == 120  # the first later copy, not the first key


def test_lists_need_not_start_at_zero_and_codes_may_be_wide():
    lists = np.array([5, 5, 9, 9, 9], dtype=np.int64)
    docs = np.array([7, 8, 8, 7, 8], dtype=np.int64)
    assert first_repeated_document(lists, docs) == 4
    assert first_repeated_document(lists[:1], docs[:1]) == -1


def test_repeated_documents_lists_every_later_copy():
    lists = np.array([0, 0, 0, 1, 1, 1])
    docs = np.array([4, 4, 4, 4, 5, 4])
    assert repeated_documents(lists, docs).tolist() == [1, 2, 5]
    assert repeated_documents(lists[:2], np.array([1, 2])).tolist() == []

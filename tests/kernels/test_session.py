"""The session kernels on a hand example: slots, duplicate policies, short lists, ideals.

One session of two queries, X = 3, gains 0-1-10-100 (z = 0, a = 100, b = 10, c = 1),
rank discount jk2008 with b = 2 (d = 1, 2, 1 + log2 3), query discount jk2008 with
bq = 4 (qd(2) = 2/3).  Query 1 shows (z, a, b), query 2 shows (a, c); the topic's
ideal gains are (100, 10, 1).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sessionval.errors import MeasureSpecError
from sessionval.kernels.session import SessionParams, session_vectors
from sessionval.kernels.slots import ShortLists, slot_lengths

D3 = 1 + math.log2(3)
Q2 = 2 / 3
ROWS = {
    "row_query": [0, 0, 0, 1, 1],
    "row_gain": [0, 100, 10, 100, 1.0],
    "row_doc": [0, 1, 2, 1, 3],  # z a b | a c
    "query_session": [0, 0],
    "query_pos": [1, 2],
    "query_cutoff": [3, 3],
    "query_ideal": [0, 0],
    "ideal_offsets": [0, 3],
    "ideal_values": [100, 10, 1.0],
    "n_sessions": 1,
}


def params(**kw: object) -> SessionParams:
    base: dict[str, object] = {
        "b": 2.0,
        "bq": 4.0,
        "discount": "jk2008",
        "query_discount": "jk2008",
        "duplicates": "every",
        "short_lists": ShortLists("pad"),
        "ideal": "repeat",
    }
    return SessionParams(**{**base, **kw})  # type: ignore[arg-type]


def vectors(**kw: object):
    return session_vectors(**ROWS, params=params(**kw))  # type: ignore[arg-type]


def test_every_pad_repeat_the_paper() -> None:
    v = vectors()
    s3 = 50 + 10 / D3
    np.testing.assert_allclose(v.sdcg, [0, 50, s3, s3 + Q2 * 100, s3 + Q2 * 100.5, s3 + Q2 * 100.5])
    i3 = 105 + 1 / D3
    np.testing.assert_allclose(v.ideal, [100, 105, i3, i3 + Q2 * 100, i3 + Q2 * 105, i3 + Q2 * i3])
    np.testing.assert_allclose(v.dcg, [s3, 100.5])
    np.testing.assert_allclose(v.final, [s3 + Q2 * 100.5])
    np.testing.assert_allclose(v.ideal_final, [i3 * (1 + Q2)])
    assert v.pos_row.tolist() == [0, 1, 2, 3, 4, -1]  # the last position is padding
    assert v.pos_slot.tolist() == [1, 2, 3, 1, 2, 3]
    assert v.n_repeats.tolist() == [0, 0]


def test_first_credits_a_repeat_nothing_but_keeps_its_rank() -> None:
    v = vectors(duplicates="first")
    np.testing.assert_allclose(v.dcg, [50 + 10 / D3, 0.5])  # a at q2 rank 1 earns 0
    assert v.n_repeats.tolist() == [0, 1]
    assert v.pos_row.tolist() == [0, 1, 2, 3, 4, -1]


def test_drop_removes_a_repeat_and_moves_the_list_up() -> None:
    v = vectors(duplicates="drop")
    np.testing.assert_allclose(v.dcg, [50 + 10 / D3, 1.0])  # c moves to rank 1
    assert v.pos_row.tolist() == [0, 1, 2, 4, -1, -1]
    assert v.n_available.tolist() == [3, 1]
    assert v.row_slot.tolist() == [1, 2, 3, 0, 1]


@pytest.mark.parametrize(("short", "n_pos"), [("pad", 6), ("none", 4), ("min:2", 5)])
def test_short_lists_set_the_slot_lengths(short: str, n_pos: int) -> None:
    v = vectors(duplicates="drop", short_lists=ShortLists.parse(short))
    assert int(v.session_offsets[-1]) == n_pos
    # padding never adds gain: the final value is the same for every policy
    np.testing.assert_allclose(v.final, [50 + 10 / D3 + Q2 * 1.0])


def test_ideal_no_repeat_uses_each_document_once_on_the_heaviest_positions() -> None:
    v = vectors(ideal="no-repeat")
    # weights qd/d: 1, 1/2, 1/D3 | 2/3, 1/3, 2/(3 D3): 100 -> p1, 10 -> p4, 1 -> p2
    np.testing.assert_allclose(
        v.ideal, [100, 100.5, 100.5, 100.5 + Q2 * 10, *([100.5 + 20 / 3] * 2)]
    )
    np.testing.assert_allclose(v.ideal_dcg, [100.5, 10])


def test_no_repeat_needs_one_key_per_session() -> None:
    rows = {**ROWS, "query_ideal": [0, 1], "ideal_offsets": [0, 3, 3]}
    with pytest.raises(MeasureSpecError, match="one judgment key per session"):
        session_vectors(**rows, params=params(ideal="no-repeat"))  # type: ignore[arg-type]


def test_slot_lengths_take_the_typed_policy() -> None:
    n, x = np.array([0, 3, 12]), np.array([10, 10, 10])
    assert slot_lengths(n, x, short_lists=ShortLists("pad")).tolist() == [10, 10, 10]
    assert slot_lengths(n, x, short_lists=ShortLists("none")).tolist() == [0, 3, 10]
    assert slot_lengths(n, x, short_lists=ShortLists("min", 5)).tolist() == [5, 5, 10]


@given(st.integers(0, 10_000))
def test_short_lists_text_round_trip(m: int) -> None:
    for text in ("pad", "none", f"min:{m}"):
        value = ShortLists.parse(text)
        assert str(value) == text and ShortLists.parse(value) is value


@pytest.mark.parametrize("bad", ["pad:3", "min", "min:-1", "all"])
def test_short_lists_errors_list_the_forms(bad: str) -> None:
    with pytest.raises(MeasureSpecError, match="'pad', 'none' or 'min:m'"):
        ShortLists.parse(bad)

"""The one discount table: closed forms of every kind, the 2008 appendix erratum, checks."""

from __future__ import annotations

import math
import typing

import numpy as np
import pytest

from sessionval.errors import MeasureSpecError
from sessionval.kernels.discounts import (
    QUERY_DISCOUNT_TABLE,
    QUERY_DISCOUNTS,
    RANK_DISCOUNT_TABLE,
    RANK_DISCOUNTS,
    QueryDiscount,
    RankDiscount,
    check_query_discount,
    check_rank_discount,
    query_discount,
    rank_discount,
)

RANKS = np.arange(1, 31)


def closed_rank(kind: str, i: int, b: float) -> float:
    """d(i) written out per kind (the papers' formulas)."""
    log_b = math.log(i) / math.log(b)
    return {
        "jk2008": 1 + log_b,  # Järvelin et al. 2008, appendix eq. 2
        "jk2002": 1.0 if i < b else log_b,  # TOIS 2002, sec. 2.1
        "jk2002rn": 1.0 if i == 1 else log_b,  # RN-2002-2
        "log2p1": math.log2(i + 1),  # Burges et al. 2005
        "shifted-log": math.log(i + b - 1) / math.log(b),  # Jiang & Allan 2016
        "none": 1.0,
    }[kind]


def closed_query(kind: str, q: int, bq: float) -> float:
    return {
        "jk2008": 1 / (1 + math.log(q) / math.log(bq)),  # Järvelin et al. 2008, eq. 1
        "shifted-log": math.log(bq) / math.log(q + bq - 1),  # Jiang & Allan 2016
        "none": 1.0,
    }[kind]


@pytest.mark.parametrize("kind", RANK_DISCOUNTS)
@pytest.mark.parametrize("b", [1.5, 2.0, 4.0, 10.0])
def test_rank_discounts_are_their_closed_forms(kind: RankDiscount, b: float) -> None:
    got = rank_discount(RANKS, b=b, kind=kind)
    np.testing.assert_allclose(got, [closed_rank(kind, int(i), b) for i in RANKS], rtol=1e-12)


@pytest.mark.parametrize("kind", QUERY_DISCOUNTS)
@pytest.mark.parametrize("bq", [1.5, 2.0, 4.0, 10.0])
def test_query_discounts_are_their_closed_forms(kind: QueryDiscount, bq: float) -> None:
    got = query_discount(RANKS, bq=bq, kind=kind)
    np.testing.assert_allclose(got, [closed_query(kind, int(q), bq) for q in RANKS], rtol=1e-12)
    assert got[0] == 1.0  # the first query is never discounted
    assert np.all(np.diff(got) <= 1e-15)  # later queries never weigh more


def test_infinite_query_base_turns_the_discount_off() -> None:
    for kind in QUERY_DISCOUNTS:
        np.testing.assert_array_equal(query_discount(RANKS, bq=math.inf, kind=kind), 1.0)


def test_2008_appendix_erratum() -> None:
    """Järvelin et al. (2008), appendix: jk2008, b = 4, G' = <3,2,3,0,0,1,2,2,3,0>."""
    g = np.array([3, 2, 3, 0, 0, 1, 2, 2, 3, 0.0])
    dcg = np.cumsum(g / rank_discount(np.arange(1, 11), b=4, kind="jk2008"))
    formula = [3, 4.33, 6.01, 6.01, 6.01, 6.44, 7.28, 8.08, 9.24, 9.24]
    printed = [3, 4, 5.67, 5.67, 5.67, 6.11, 6.94, 8.14, 9.30, 9.30]
    np.testing.assert_allclose(dcg.round(2), formula)
    # the paper's printed vector does not fit its formula: rank 2 (2/d(2) = 2/1.5) and
    # rank 8 are slips, and the later values carry the rank-2 slip forward
    assert dcg.round(2)[1] != printed[1] and dcg.round(2)[7] != printed[7]
    assert dcg[1] == pytest.approx(3 + 2 / 1.5)


def test_kinds_are_declared_once() -> None:
    assert tuple(RANK_DISCOUNT_TABLE) == RANK_DISCOUNTS == typing.get_args(RankDiscount)
    assert tuple(QUERY_DISCOUNT_TABLE) == QUERY_DISCOUNTS == typing.get_args(QueryDiscount)
    for table in (RANK_DISCOUNT_TABLE, QUERY_DISCOUNT_TABLE):
        for name, entry in table.items():
            assert entry.name == name and entry.formula
            assert entry.reference or name == "none"


@pytest.mark.parametrize("kind", RANK_DISCOUNTS)
def test_uses_base_says_whether_b_changes_the_discount(kind: RankDiscount) -> None:
    a = rank_discount(RANKS, b=2.0, kind=kind)
    z = rank_discount(RANKS, b=7.0, kind=kind)
    assert RANK_DISCOUNT_TABLE[kind].uses_base == (not np.array_equal(a, z))


def test_boundary_checks_name_the_choices() -> None:
    with pytest.raises(MeasureSpecError, match="valid discounts: jk2008, jk2002"):
        check_rank_discount("log10", 2)
    with pytest.raises(MeasureSpecError, match="b must be > 1"):
        check_rank_discount("jk2008", 1)
    check_rank_discount("log2p1", 1)  # no base: b is not used
    with pytest.raises(MeasureSpecError, match="valid discounts: jk2008, shifted-log, none"):
        check_query_discount("jk2002", 4)
    with pytest.raises(MeasureSpecError, match="bq must be > 1"):
        check_query_discount("jk2008", 0.5)

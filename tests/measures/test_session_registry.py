"""Session measures and aggregates in the registry: grammar, round trips, errors, defaults."""

from __future__ import annotations

import numpy as np
import pytest

from sessionval.errors import MeasureSpecError
from sessionval.evaluation.lists import evaluate_lists
from sessionval.judgments.gains import GAIN_SCHEMES
from sessionval.kernels.discounts import QUERY_DISCOUNTS, RANK_DISCOUNTS
from sessionval.kernels.session import IDEAL_RULES
from sessionval.kernels.slots import DUPLICATE_POLICIES, ShortLists
from sessionval.measures.cg import discounted_cumulated_gain, gain_scalar, gain_vectors
from sessionval.measures.lists import RankedLists
from sessionval.measures.registry import REGISTRY, describe_measures, parse_measure

# every session measure of the registry, as the parser's error lists them (issue 13 added some)
SESSION_NAMES = ", ".join(
    sorted((n for n, d in REGISTRY.items() if d.scope == "session"), key=str.lower)
)

SESSION = [
    "sDCG@10",
    "sDCG",
    "nsDCG(discount=shifted-log,query_discount=shifted-log,gain=exp)@5",
    "sDCG(query_discount=none)@10",
    "sDCG(duplicates=drop,short_lists=min:3,ideal=no-repeat,scan_depth=cap)@10",
    "best(DCG(discount=jk2008,gain=0-1-10-100)@10)",
    "last(AP)",
    "best(P(rel=2)@5)",
]


@pytest.mark.parametrize("spec", SESSION)
def test_session_names_are_canonical_and_session_scoped(spec: str) -> None:
    m = parse_measure(spec)
    assert (repr(m), m.scope) == (spec, "session")
    assert parse_measure(repr(m)) == m == spec


def test_session_parameters_are_typed_and_kept_when_given() -> None:
    m = parse_measure("sDCG(b=2,gain=0-1-10-100,short_lists=min:3)@10")
    assert m.value("gain") is GAIN_SCHEMES["0-1-10-100"]
    assert m.value("short_lists") == ShortLists("min", 3)
    assert m.value("bq") is None  # not given: the evaluation's configuration decides
    # explicit values are kept (they override the configuration), so these differ
    assert parse_measure("sDCG(b=2)@10") != parse_measure("sDCG@10")
    assert m.config_changes() == {
        "b": 2.0,
        "gains": GAIN_SCHEMES["0-1-10-100"],
        "short_lists": ShortLists("min", 3),
        "cutoff": 10,
    }
    # an aggregate canonicalises the measure inside
    assert repr(parse_measure("last( nDCG(discount=log2p1, b=2) @ 10 )")) == "last(nDCG@10)"


@pytest.mark.parametrize(
    ("spec", "fragments"),
    [
        ("sDCG(duplicates=some)", ["valid values: " + ", ".join(DUPLICATE_POLICIES)]),
        ("sDCG(ideal=best)", ["valid values: " + ", ".join(IDEAL_RULES)]),
        ("sDCG(discount=log10)", ["valid values: " + ", ".join(RANK_DISCOUNTS)]),
        ("nsDCG(query_discount=jk2002)", ["valid values: " + ", ".join(QUERY_DISCOUNTS)]),
        ("sDCG(short_lists=pad:3)", ["'pad', 'none' or 'min:m'"]),
        ("sDCG(gain=weird)", ["unknown gain scheme"]),
        ("sDCG(cutoff=3)", ["valid parameters: b, bq, discount, query_discount, gain"]),
        ("sDCG(bq=1)", ["log base must be > 1"]),
        ("sDCG(query_discount=none,bq=3)", ["bq is not used by query_discount=none"]),
        ("sDCG(discount=log2p1,b=3)@10", ["b is not used by discount=log2p1", "jk2008"]),
        ("nDCG(b=3)@10", ["b is not used by discount=log2p1", "jk2008, jk2002, jk2002rn"]),
        ("last(sDCG@10)", ["takes a single-query measure", "sDCG@10"]),
        ("last(nDCG@10)@5", ["takes no cut-off"]),
        ("last", ["takes a single-query measure"]),
        ("last(nDGC@10)", ["unknown measure 'nDGC'", "session measures: " + SESSION_NAMES]),
        ("sDGC@10", ["valid measures: AP, binG, Bpref", "session measures: " + SESSION_NAMES]),
    ],
)
def test_errors_list_the_valid_choices_from_the_registry(spec: str, fragments: list[str]) -> None:
    with pytest.raises(MeasureSpecError) as info:
        parse_measure(spec)
    for fragment in fragments:
        assert fragment in str(info.value)


def test_unused_base_is_refused_but_a_default_base_is_harmless() -> None:
    assert repr(parse_measure("nDCG(b=2)@10")) == "nDCG@10"
    assert repr(parse_measure("nDCG(discount=shifted-log,b=3)@10")) == (
        "nDCG(discount=shifted-log,b=3)@10"
    )
    with pytest.raises(MeasureSpecError, match="b is not used"):
        parse_measure("nDCG")(b=3)
    with pytest.raises(MeasureSpecError, match="unknown parameter 'b'; valid parameters: gain"):
        parse_measure("CG(gain=exp)")(b=3)  # CG has no discount, so no b
    # a single-query measure's discount is the shifted-log of the table: it parses now
    assert parse_measure("nDCG(discount=shifted-log,b=4)@10").value("discount") == "shifted-log"
    # ... but at the default b = 2 it is log2(i + 1), the default discount: no effect,
    # refused (issue 12: a parameter without effect is an error)
    with pytest.raises(MeasureSpecError, match="is the default discount log2p1"):
        parse_measure("nDCG(discount=shifted-log)@10")


def test_session_measures_need_sessions() -> None:
    lists = RankedLists.from_arrays(["q"], [0, 2], [1, 0])
    with pytest.raises(MeasureSpecError, match="session measure"):
        parse_measure("sDCG@10").compute(lists)
    with pytest.raises(MeasureSpecError, match="need sessions"):
        evaluate_lists(lists, ["nDCG@10", "last(nDCG@10)"])


def test_listing_and_docs_show_session_measures() -> None:
    rows = {r["name"]: r for r in describe_measures()}
    assert rows["sDCG[@k]"]["scope"] == "session"
    assert "evaluation's configuration" in rows["sDCG[@k]"]["params"]
    assert rows["last(M)"]["formula"] == "last(M) = M(q_n)"
    for name in ("sDCG", "nsDCG", "last", "best"):
        assert REGISTRY[name].reference and REGISTRY[name].formula
    assert "SDCG" not in REGISTRY


def test_scalar_and_vector_forms_agree_by_default() -> None:
    """Issue 9: gain_scalar and gain_vectors used to default to different discounts."""
    rng = np.random.default_rng(3)
    lens = rng.integers(0, 12, 30)
    grades = rng.integers(0, 4, lens.sum()).astype(float)
    lists = RankedLists.from_arrays([f"q{i}" for i in range(30)], np.r_[0, np.cumsum(lens)], grades)
    vec = gain_vectors(lists, kind="DCG", depth=8)
    for k in (1, 5, 8):
        np.testing.assert_allclose(
            gain_scalar(lists, kind="DCG", cutoff=k), vec[vec["rank"] == k]["value"], atol=1e-12
        )
    at5 = parse_measure("DCG@5").compute(lists)
    np.testing.assert_allclose(at5, vec[vec["rank"] == 5]["value"], atol=1e-12)
    g = [3, 2, 3, 0, 0, 1, 2, 2, 3, 0]
    one = RankedLists.from_arrays(["q"], [0, 10], g)
    np.testing.assert_allclose(
        discounted_cumulated_gain(g), gain_vectors(one, kind="DCG", depth=10)["value"], atol=1e-12
    )

"""The measure grammar and registry: canonical names, round trips, errors."""

from __future__ import annotations

import pytest

from sessionval.errors import MeasureSpecError
from sessionval.measures.registry import REGISTRY, describe_measures, parse_measure, parse_measures

ROUND_TRIP = [
    "nDCG@10",
    "nDCG(discount=jk2002,b=4)@10",
    "nDCG(discount=jk2008,b=10,gain=0-1-10-100)",
    "DCG(gain=exp)@5",
    "Q@1000",
    "Q(beta=0.5)",
    "Bpref",
    "infAP@100",
    "WRR(penalties=5-3-2)",
    "P(rel=2)@5",
    "R@10",
    "Pmeasure",
    "Pplus(beta=2)",
    # session measures and aggregates (issue 9): the same grammar
    "sDCG(b=2,bq=4)@10",
    "nsDCG@10",
    "last(nDCG@10)",
    "best(DCG(gain=exp)@5)",
]


@pytest.mark.parametrize("spec", ROUND_TRIP)
def test_canonical_round_trip(spec: str) -> None:
    m = parse_measure(spec)
    assert repr(m) == spec
    assert parse_measure(repr(m)) == m
    assert hash(parse_measure(repr(m))) == hash(m)


def test_defaults_are_dropped_and_spaces_ignored() -> None:
    assert repr(parse_measure(" nDCG ( discount = log2p1 , b = 2.0 ) @ 10 ")) == "nDCG@10"
    assert repr(parse_measure("nDCG(discount=jk2002,b=2)@10")) == "nDCG(discount=jk2002)@10"
    assert parse_measure("bpref") == parse_measure("Bpref")
    assert parse_measure("nDCG@10") == "nDCG(b=2)@10"


def test_gain_names_are_canonicalised() -> None:
    assert repr(parse_measure("nDCG(gain={0:0,1:1,2:10,3:100})")) == (
        "nDCG(gain={0:0,1:1,2:10,3:100})"
    )
    # parsed once into a typed GainScheme (issue 9); its text is the canonical name
    assert str(parse_measure("CG(gain=0-1-2-3)").value("gain")) == "0-1-2-3"


def test_python_api_call_and_matmul() -> None:
    nd = parse_measure("nDCG")
    assert repr(nd(discount="jk2002", b=4) @ 10) == "nDCG(discount=jk2002,b=4)@10"


@pytest.mark.parametrize(
    ("spec", "fragment"),
    [
        ("nDGC@10", "valid measures: AP, Bpref"),
        ("nDCG(foo=1)", "valid parameters: discount, b, gain"),
        (
            "nDCG(discount=log10)",
            "valid values: jk2008, jk2002, jk2002rn, log2p1, shifted-log, none",
        ),
        ("nDCG(b=1)", "log base must be > 1"),
        ("nDCG(b=x)", "not a valid float"),
        ("nDCG@0", "cut-off must be an integer >= 1"),
        ("nDCG@ten", "cut-off must be an integer >= 1"),
        ("P", "P needs a cut-off"),
        ("nDCG(gain=weird)", "unknown gain scheme"),
        ("AP(rel)", "must be written name=value"),
        ("AP(rel=1,rel=2)", "given twice"),
        ("WRR(penalties=1-2)", "penalties must be > 1"),
        ("nDCG(((", "cannot parse measure"),
    ],
)
def test_errors_name_the_problem_and_the_valid_choices(spec: str, fragment: str) -> None:
    with pytest.raises(MeasureSpecError, match=None) as info:
        parse_measure(spec)
    assert fragment in str(info.value)


def test_unknown_name_lists_every_registered_measure() -> None:
    with pytest.raises(MeasureSpecError) as info:
        parse_measure("Nope")
    for name in REGISTRY:
        assert name in str(info.value)


def test_never_sdcg_and_no_precision_clash() -> None:
    assert "SDCG" not in REGISTRY
    assert REGISTRY["P"].pretty == "Precision"
    assert REGISTRY["Pmeasure"].pretty == "P-measure"


def test_parse_measures_dedupes() -> None:
    ms = parse_measures(["nDCG@10", "nDCG(b=2)@10", "AP"])
    assert [repr(m) for m in ms] == ["nDCG@10", "AP"]


def test_every_measure_is_described_with_formula_and_reference() -> None:
    rows = describe_measures()
    assert {r["name"].split("[")[0].split("@")[0].split("(")[0] for r in rows} == set(REGISTRY)
    for r in rows:
        assert r["formula"] and r["reference"] and r["description"]

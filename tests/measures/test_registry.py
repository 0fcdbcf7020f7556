"""The measure grammar and registry: canonical names, round trips, errors."""

from __future__ import annotations

import numpy as np
import pytest

from sessionval.errors import MeasureSpecError
from sessionval.measures.lists import RankedLists
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
        ("nDGC@10", "valid measures: AP, binG, Bpref"),
        ("nDCG(foo=1)", "valid parameters: discount, b, gain"),
        (
            "nDCG(discount=log10)",
            "valid values: jk2008, jk2002, jk2002rn, log2p1, shifted-log, none",
        ),
        ("nDCG(b=1)", "log base must be > 1"),
        ("nDCG(b=x)", "not a valid float"),
        ("nDCG@0", "cut-off must be an integer >= 1"),
        ("nDCG@ten", "cut-off must be an integer >= 1"),
        ("P", "trec_eval's P is 9 measures (P_5, P_10"),
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


def _other_values(p) -> list[object]:
    """Valid values of parameter ``p`` other than its default (one or a few)."""
    if p.choices:
        return [c for c in p.choices if c != p.default]
    if p.name == "gain":
        return [g for g in ("exp", "0-1-10-100") if g != str(p.default)]
    if p.name == "penalties":
        return ["5-3-2"]
    if p.name == "effort":  # adaptive effort: a reading effort per grade instead of 1
        return ["1-2-3-4"]
    if p.kind == "int":
        return [int(p.default) + 1]
    if p.name == "p":
        return [0.5]
    other = float(p.default) * 1.5 + 0.5
    return [other if other != p.default else float(p.default) + 1]  # Utility's b=-1


def _probe_lists() -> RankedLists:
    rng = np.random.default_rng(7)
    grades, off, rbs = [], [0], []
    for _ in range(40):
        g = rng.choice([0.0, 0.0, 1.0, 2.0, 3.0, float("nan")], int(rng.integers(1, 15)))
        grades += g.tolist()
        off.append(len(grades))
        rbs.append([x for x in g if x == x and x > 0] + rng.integers(1, 4, 3).tolist())
    return RankedLists.from_arrays([f"q{i}" for i in range(40)], off, grades, recall_base=rbs)


@pytest.mark.parametrize(
    "name", sorted(n for n, d in REGISTRY.items() if d.scope == "query" and d.params)
)
def test_a_parameter_without_effect_is_refused(name: str) -> None:
    """Issue 12: every accepted non-default parameter value changes some value."""
    d = REGISTRY[name]
    lists = _probe_lists()
    cut = "@5" if d.cutoff == "required" else "@0.5" if d.at_param else ""
    base = parse_measure(name + cut).compute(lists)
    for p in (p for p in d.params if p.name != d.at_param):
        for v in _other_values(p):
            try:
                m = parse_measure(f"{name}({p.name}={v}){cut}")
            except MeasureSpecError:
                continue  # refused (e.g. nDCG(b=3): log2p1 has no base)
            got = m.compute(lists)
            assert not np.allclose(got, base, equal_nan=True), f"{m!r} equals {name}{cut}"


def test_b_without_a_base_is_refused() -> None:
    with pytest.raises(MeasureSpecError, match="b is not used by discount=log2p1"):
        parse_measure("nDCG(b=3)@10")
    assert repr(parse_measure("nDCG(discount=jk2002,b=3)@10")) == "nDCG(discount=jk2002,b=3)@10"


@pytest.mark.parametrize(
    ("typed", "canonical"),
    [
        ("map", "AP"),
        ("map_cut.10", "AP@10"),
        ("map_cut_100", "AP@100"),
        ("ndcg", "nDCG"),
        ("ndcg_cut.10", "nDCG@10"),
        ("ndcg_cut_10", "nDCG@10"),
        ("P.10", "P@10"),
        ("P_10", "P@10"),
        ("recip_rank", "RR"),
        ("bpref", "Bpref"),
        ("infAP", "infAP"),
        ("recall.100", "R@100"),
        ("ndcg@10", "nDCG@10"),
        ("ap", "AP"),
        ("rr", "RR"),
        ("p@5", "P@5"),
        ("ap(rel=2)", "AP(rel=2)"),
        ("err@20", "ERR@20"),
        ("judged@10", "Judged@10"),
        ("RBP(rel=1)", "RBP"),
        ("mrr@10", "RR@10"),
        ("precision@10", "P@10"),
        ("last(ndcg@10)", "last(nDCG@10)"),
    ],
)
def test_names_users_type(typed: str, canonical: str) -> None:
    assert repr(parse_measure(typed)) == canonical


@pytest.mark.parametrize(
    ("typed", "fragment"),
    [
        ("ndcg_cut", "name one cut-off here, e.g. ndcg_cut.10"),
        ("map.10", "map takes no cut-off; map_cut.10 is AP@10"),
        ("P_0", "cut-off must be an integer >= 1"),
        ("SDCG", "unknown measure 'SDCG'"),  # ir_measures' Scaled DCG is not sDCG
        ("sdcg@10", "unknown measure 'sdcg'"),
        ("Rprecision", "trec_eval names: ndcg, ndcg_cut.10, map"),
        ("nDCG(judged_only=True)@10", "--unjudged condense"),
        ("nDCG(dcg=exp)@10", "dcg=log2 or dcg=exp-log2"),
        ("IPrec", "IPrec needs its recall after @, e.g. IPrec@0.5"),
        ("IPrec@2", "recall='2': must be from 0 to 1"),
    ],
)
def test_names_that_mean_something_else_are_refused(typed: str, fragment: str) -> None:
    with pytest.raises(MeasureSpecError) as info:
        parse_measure(typed)
    assert fragment in str(info.value)

"""Hypothesis properties over every registered measure (spec sections 2-3)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sessionval.evaluation.lists import evaluate_lists
from sessionval.measures.lists import RankedLists
from sessionval.measures.registry import REGISTRY, parse_measure

# single-query measures: the properties are about ranked lists (session measures: tests/evaluation)
NAMES = sorted(n for n, d in REGISTRY.items() if d.scope == "query")
CUTOFF_REQUIRED = {n for n, d in REGISTRY.items() if d.cutoff == "required"}


def _spec(name: str, cutoff: int | None) -> str:
    d = REGISTRY[name]
    if d.at_param is not None:  # IPrec@x: a recall level, not a cut-off
        return f"{name}@0.5"
    if d.cutoff == "none":
        return name
    if name in CUTOFF_REQUIRED and cutoff is None:
        cutoff = 10
    return name + (f"@{cutoff}" if cutoff is not None else "")


grade = st.one_of(st.integers(0, 3).map(float), st.just(float("nan")))


@st.composite
def topic(draw):
    """A ranked list plus a recall base and judged count consistent with it."""
    ranked = draw(st.lists(grade, min_size=0, max_size=15))
    judged_rel = [g for g in ranked if g == g and g > 0]
    extra_rel = draw(st.lists(st.integers(1, 3).map(float), max_size=5))
    judged_nonrel = sum(1 for g in ranked if g == g and g == 0)
    extra_nonrel = draw(st.integers(0, 5))
    recall_base = judged_rel + extra_rel
    return ranked, recall_base, len(recall_base) + judged_nonrel + extra_nonrel


def _lists(topics, order=None) -> RankedLists:
    order = list(range(len(topics))) if order is None else order
    grades, rbs, nj, off = [], [], [], [0]
    for i in order:
        ranked, rb, n_j = topics[i]
        grades += ranked
        rbs.append(rb)
        nj.append(n_j)
        off.append(off[-1] + len(ranked))
    return RankedLists.from_arrays(
        [f"q{i}" for i in order], off, grades, recall_base=rbs, n_judged=nj
    )


@pytest.mark.parametrize("name", NAMES)
@settings(deadline=None, max_examples=40, suppress_health_check=[HealthCheck.too_slow])
@given(topics=st.lists(topic(), min_size=1, max_size=6), cutoff=st.sampled_from([None, 1, 3, 10]))
def test_bounds(name: str, topics, cutoff) -> None:
    d = REGISTRY[name]
    v = parse_measure(_spec(name, cutoff)).compute(_lists(topics))
    assert v.shape == (len(topics),)
    finite = v[~np.isnan(v)]
    if d.lower is not None:
        assert np.all(finite >= d.lower)
    if d.upper is not None:
        assert np.all(finite <= d.upper + 1e-12)
    # NaN only where a normalised measure meets an empty recall base
    empty = np.array([len(t[1]) == 0 for t in topics])
    if d.normalised:
        assert np.array_equal(np.isnan(v), empty)
    else:
        assert not np.isnan(v).any()


@pytest.mark.parametrize("name", [n for n in NAMES if REGISTRY[n].ideal_is_one])
@settings(deadline=None, max_examples=30)
@given(
    rb=st.lists(st.integers(1, 3).map(float), min_size=1, max_size=12), n_nonrel=st.integers(0, 5)
)
def test_ideal_ranking_scores_one(name: str, rb, n_nonrel) -> None:
    ideal = sorted(rb, reverse=True) + [0.0] * n_nonrel
    lists = RankedLists.from_arrays(
        ["q"], [0, len(ideal)], ideal, recall_base=[rb], n_judged=[len(rb) + n_nonrel]
    )
    v = parse_measure(_spec(name, None)).compute(lists)
    # infAP's epsilon smoothing (1e-5, trec_eval) keeps it a hair below 1
    assert v[0] == pytest.approx(1.0, abs=1e-4 if name == "infAP" else 1e-12)


# adaptive effort (Jiang & Allan 2016): reading a non-relevant result costs effort, by design;
# Judged@k is the share of judged documents, not a relevance measure: appending a judged
# document changes it by definition (ir_measures' Judged@k divides by min(k, n))
EFFORT_BASED = {n for n in NAMES if n.endswith("_AE")}
# measures of the retrieved set (trec_eval's num_ret, set_P, utility, ...) count every
# document retrieved by definition; RnDCG takes nDCG at the list's end too (trec_eval)
SET_BASED = {"NumRet", "NumNonRelJudgedRet", "SetP", "SetRelP", "SetAP", "F", "Utility", "RnDCG"}


@pytest.mark.parametrize("name", sorted(set(NAMES) - EFFORT_BASED - SET_BASED - {"Judged"}))
@settings(deadline=None, max_examples=30)
@given(
    t=topic(),
    tail=st.lists(st.sampled_from([0.0, float("nan")]), min_size=1, max_size=8),
    cutoff=st.sampled_from([None, 5, 20]),
)
def test_appending_non_relevant_changes_nothing(name: str, t, tail, cutoff) -> None:
    ranked, rb, n_j = t
    n_zero = sum(1 for g in tail if g == 0)
    # the appended judged non-relevant documents are part of the judgments all along
    before = RankedLists.from_arrays(
        ["q"], [0, len(ranked)], ranked, recall_base=[rb], n_judged=[n_j + n_zero]
    )
    longer = ranked + tail
    after = RankedLists.from_arrays(
        ["q"], [0, len(longer)], longer, recall_base=[rb], n_judged=[n_j + n_zero]
    )
    m = parse_measure(_spec(name, cutoff))
    np.testing.assert_array_equal(m.compute(before), m.compute(after))


@settings(deadline=None, max_examples=25)
@given(topics=st.lists(topic(), min_size=2, max_size=6), seed=st.integers(0, 2**16))
def test_query_order_invariance(topics, seed) -> None:
    order = list(np.random.default_rng(seed).permutation(len(topics)))
    specs = [_spec(n, None) for n in NAMES] + [_spec(n, 3) for n in NAMES]
    a = evaluate_lists(_lists(topics), specs).long()
    b = evaluate_lists(_lists(topics, order), specs).long()
    key = ["query_id", "measure"]
    a = a.sort_values(key).reset_index(drop=True)
    b = b.sort_values(key).reset_index(drop=True)
    np.testing.assert_array_equal(a["value"].to_numpy(), b["value"].to_numpy())


@settings(deadline=None, max_examples=25)
@given(topics=st.lists(topic(), min_size=1, max_size=5))
def test_vectorised_equals_one_list_at_a_time(topics) -> None:
    specs = [_spec(n, None) for n in NAMES] + [_spec(n, 4) for n in NAMES]
    together = evaluate_lists(_lists(topics), specs).per_query().set_index("query_id")
    for i in range(len(topics)):
        alone = evaluate_lists(_lists([topics[i]]), specs).per_query().set_index("query_id")
        np.testing.assert_allclose(
            together.loc[f"q{i}"].to_numpy(dtype=float),
            alone.iloc[0].to_numpy(dtype=float),
            rtol=0,
            atol=1e-12,
        )

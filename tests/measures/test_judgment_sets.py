"""Judgment sets sorted once per distinct set give exactly the plain sort of every row."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sessionval.evaluation.lists import evaluate_run, judgments_from_table
from sessionval.judgments.gains import GAIN_SCHEMES
from sessionval.judgments.ideal import ideal_from_codes
from sessionval.measures import judgment_sets as sets_module
from sessionval.measures import run_lists
from sessionval.measures.judgment_sets import JudgmentSets, judgment_sets
from sessionval.measures.key_join import JudgedKeys
from sessionval.measures.lists import RankedLists
from sessionval.measures.string_ids import IdKeys, KeyCollision, id_codes, id_keys


def _expanded(
    rng: np.random.Generator, n_queries: int, n_sets: int, doc: str
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Run and qrels where each query carries its topic's judgments (issue 26's shape).

    Some queries' copies are altered: one grade changed, one document dropped, the
    rows reversed (the same set in another order), so copies and near-copies mix.
    """
    sets = []
    for _ in range(n_sets):
        docs = rng.choice(60, int(rng.integers(1, 12)), replace=False)
        sets.append((docs, rng.integers(0, 4, docs.size)))
    run, qrels = [], []
    for q in range(n_queries):
        qid = f"q{q:04d}"
        docs, grades = sets[int(rng.integers(0, n_sets))]
        docs, grades = docs.copy(), grades.copy()
        change = int(rng.integers(0, 12))  # a quarter altered
        if change == 0:
            grades[int(rng.integers(0, grades.size))] += 1
        elif change == 1 and docs.size > 1:
            docs, grades = docs[1:], grades[1:]
        elif change == 2:
            docs, grades = docs[::-1], grades[::-1]
        qrels += [(qid, doc.format(d), int(g)) for d, g in zip(docs, grades, strict=True)]
        listed = rng.choice(60, int(rng.integers(1, 15)), replace=False)
        run += [(qid, doc.format(d), float(rng.integers(0, 3))) for d in listed]
    r = pd.DataFrame(run, columns=["query_id", "doc_id", "score"])
    j = pd.DataFrame(qrels, columns=["query_id", "doc_id", "relevance"])
    return r, j


def _keys(qrels: pd.DataFrame) -> tuple[np.ndarray, int, IdKeys, np.ndarray]:
    (docs,) = id_keys([qrels["doc_id"]])  # type: ignore[misc]
    # short runs of rows (one judgment per query): id_codes leaves them to a dictionary
    codes, cats = id_codes(qrels["query_id"]) or pd.factorize(qrels["query_id"])
    return codes.astype(np.int64), len(cats), docs, qrels["relevance"].to_numpy(np.float64)


def _assert_same(a: JudgedKeys, b: JudgedKeys) -> None:
    assert a.tbits == b.tbits
    np.testing.assert_array_equal(a.packed, b.packed)
    np.testing.assert_array_equal(a.rows, b.rows)
    np.testing.assert_array_equal(a.grades, b.grades)


DOCS = ["d{}", "clueweb12-0000tw-{:05d}-00"]  # exact keys; fingerprints confirmed on words


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**32 - 1),
    n_queries=st.integers(1, 40),
    n_sets=st.integers(1, 5),
    doc=st.sampled_from(DOCS),
)
def test_shared_sets_equal_the_plain_sort(seed: int, n_queries: int, n_sets: int, doc: str) -> None:
    qrels = _expanded(np.random.default_rng(seed), n_queries, n_sets, doc)[1]
    topic, n_topics, docs, grades = _keys(qrels)
    plain = JudgedKeys.build(topic, n_topics, docs, grades)
    sets = judgment_sets(topic, n_topics, docs, grades, min_share=0)
    assert plain is not None and sets is not None
    shared = sets.judged_keys(docs, grades)
    assert shared is not None
    _assert_same(shared, plain)
    # the recall bases and judged counts, from each set once
    topics = pd.Index([f"t{i}" for i in range(n_topics)])
    ideal, ref = (
        sets.ideal(topics, grades),
        ideal_from_codes(topics, topic, grades, GAIN_SCHEMES["grade"]),
    )
    np.testing.assert_array_equal(ideal.offsets, ref.offsets)
    np.testing.assert_array_equal(ideal.values, ref.values)
    assert ideal.keys.equals(ref.keys)
    np.testing.assert_array_equal(sets.n_judged(), np.bincount(topic, minlength=n_topics))
    # the join on the sets' keys grades every list as the plain join does
    join = sets.join(docs, grades)
    assert join is not None
    rng = np.random.default_rng(seed)
    # as a run's lists come: one per query (its own topic), in topic order
    lists_topic = np.sort(rng.choice(n_topics, int(rng.integers(1, n_topics + 1)), replace=False))
    counts = rng.integers(0, 8, lists_topic.size)
    pool = pd.concat(
        [pd.Series(qrels["doc_id"].unique()), pd.Series([doc.format(1000 + i) for i in range(40)])]
    )
    picks = [rng.choice(len(pool), int(c), replace=False) for c in counts]
    row_ids = pd.Series(pool.to_numpy()[np.concatenate(picks).astype(np.int64)], dtype="str")
    row_docs, _ = id_keys([row_ids, qrels["doc_id"]])  # type: ignore[misc]
    same_docs = id_keys([qrels["doc_id"], row_ids])[0]  # type: ignore[index]
    got = join.lists(lists_topic, counts, row_docs)
    ref = JudgedKeys.build(topic, n_topics, same_docs, grades)
    assert ref is not None
    np.testing.assert_array_equal(got, ref.lists(lists_topic, counts, row_docs))


def test_a_forged_fingerprint_does_not_make_two_sets_one(monkeypatch) -> None:
    # every topic gets the same fingerprint: only the row-by-row check tells them apart
    monkeypatch.setattr(
        sets_module,
        "_sequence_prints",
        lambda keys, grades, heads, lens: np.zeros(heads.size, np.uint64),
    )
    qrels = _expanded(np.random.default_rng(3), 30, 3, "d{}")[1]
    topic, n_topics, docs, grades = _keys(qrels)
    sets = judgment_sets(topic, n_topics, docs, grades, min_share=0)
    assert sets is not None
    shared = sets.judged_keys(docs, grades)
    assert shared is not None
    _assert_same(shared, JudgedKeys.build(topic, n_topics, docs, grades))  # type: ignore[arg-type]


def test_set_keys_find_repeats_within_a_list_not_across_lists() -> None:
    keys = IdKeys(np.array([7, 5, 7, 5], dtype=np.uint64), None)
    topic, grades = np.array([0, 0, 1, 1]), np.array([1.0, 0.0, 1.0, 0.0])
    sets = judgment_sets(topic, 2, keys, grades, min_share=1)
    assert sets is not None and sets.n_sets == 1
    join = sets.join(keys, grades)
    assert join is not None
    rows = IdKeys(np.array([7, 7, 5], dtype=np.uint64), None)
    # two neighbouring lists of one set, each listing document 7: no repeat
    np.testing.assert_array_equal(join.lists([0, 1, 1], [1, 1, 1], rows), [1.0, 1.0, 0.0])
    with pytest.raises(KeyCollision):  # one list listing it twice
        join.lists([0, 1], [2, 1], rows)


def test_no_shortcut_when_topics_are_scattered_or_unshared_or_judged_twice() -> None:
    keys = IdKeys(np.array([1, 2, 1, 2, 3], dtype=np.uint64), None)
    grades = np.ones(5)
    scattered = np.array([0, 1, 0, 1, 2])
    assert judgment_sets(scattered, 3, keys, grades, min_share=0) is None
    grouped = np.array([0, 0, 1, 1, 2])
    assert judgment_sets(grouped, 3, keys, grades) is None  # 2 sets for 3 topics
    sets = judgment_sets(grouped, 3, keys, grades, min_share=1)
    assert isinstance(sets, JudgmentSets) and sets.n_sets == 2
    twice = IdKeys(np.array([1, 1, 1, 1, 3], dtype=np.uint64), None)
    sets = judgment_sets(grouped, 3, twice, grades, min_share=0)
    assert sets is not None and sets.judged_keys(twice, grades) is None
    assert sets.join(twice, grades) is None
    assert JudgedKeys.build(grouped, 3, twice, grades) is None  # as the plain build


@pytest.mark.parametrize("doc", DOCS)
def test_expanded_qrels_give_the_dictionary_roads_lists(doc: str, monkeypatch) -> None:
    run, qrels = _expanded(np.random.default_rng(11), 200, 4, doc)
    taken = []

    def spy(*args, **kwargs):  # type: ignore[no-untyped-def]
        taken.append(judgment_sets(*args, **kwargs))
        return taken[-1]

    monkeypatch.setattr(run_lists, "judgment_sets", spy)
    fast = RankedLists.from_tables(run, qrels.rename(columns={"relevance": "grade"}))
    assert taken and taken[0] is not None  # the shared sets served the join
    ref = RankedLists.from_run(run, judgments_from_table(qrels))
    assert fast is not None
    assert fast.query_ids.tolist() == ref.query_ids.tolist()
    for name in ("offsets", "grades", "ideal_offsets", "ideal_grades", "n_judged"):
        np.testing.assert_array_equal(getattr(fast, name), getattr(ref, name))
    ev = evaluate_run(run, qrels, ["nDCG@10", "AP"])
    ref_ev = evaluate_run(run, judgments_from_table(qrels), ["nDCG@10", "AP"])
    pd.testing.assert_frame_equal(ev.per_query(), ref_ev.per_query())


def test_sets_that_cannot_repeat_are_refused_from_their_first_rows(monkeypatch) -> None:
    # every topic opens with another document: no set can repeat, and no row is read
    keys = IdKeys(np.array([1, 9, 2, 9, 3, 9, 1, 9], dtype=np.uint64), None)
    topic, grades = np.repeat(np.arange(4), 2), np.ones(8)

    def unread(*args: object) -> None:
        raise AssertionError("every row fingerprinted")

    monkeypatch.setattr(sets_module, "_sequence_prints", unread)
    assert judgment_sets(topic[:6], 3, keys.take(np.arange(6)), grades[:6]) is None
    # topics 0 and 3 open alike (key 1, two rows): the rows are read and compared
    with pytest.raises(AssertionError, match="fingerprinted"):
        judgment_sets(topic, 4, keys, grades, min_share=1)

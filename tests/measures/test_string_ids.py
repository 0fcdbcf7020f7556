"""The string-key road (``RankedLists.from_tables``) gives exactly the dictionary road's lists."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sessionval.errors import InputFormatError, ParseError
from sessionval.evaluation.lists import judgments_from_table
from sessionval.measures import key_join, string_ids
from sessionval.measures.key_join import JudgedKeys
from sessionval.measures.lists import RankedLists
from sessionval.measures.string_ids import IdKeys, id_codes, id_keys


def _data(seed: int, doc: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Run and qrels with ties, unjudged run topics, judged topics the run lacks."""
    rng = np.random.default_rng(seed)
    run, qrels = [], []
    for q in range(40):
        qid = f"topic-{q:03d}"
        docs = rng.choice(300, int(rng.integers(1, 60)), replace=False)
        run += [(qid, doc.format(d), float(rng.integers(0, 4))) for d in docs]
        if q % 9 == 0:
            continue  # a run topic without judgments
        judged = rng.choice(300, int(rng.integers(1, 50)), replace=False)
        qrels += [(qid, doc.format(d), int(rng.integers(-1, 4))) for d in judged]
    qrels += [("topic-999", doc.format(1), 2)]  # judged, not in the run
    r = pd.DataFrame(run, columns=["query_id", "doc_id", "score"])
    j = pd.DataFrame(qrels, columns=["query_id", "doc_id", "grade"])
    return r.sample(frac=1.0, random_state=seed).reset_index(drop=True), j


DOC_FORMATS = [
    "d{}",  # short: the key is the id (exact)
    "clueweb12-0000tw-{:05d}-00",  # longer than 8 bytes: fingerprints confirmed on words
    "{}",  # numbers as text, of different lengths
]


@pytest.mark.parametrize("doc", DOC_FORMATS)
@pytest.mark.parametrize("ties", ["trec_eval", "doc_id", "input"])
@pytest.mark.parametrize("missing", ["skip", "empty"])
def test_same_lists_as_the_dictionary_road(doc: str, ties: str, missing: str) -> None:
    run, qrels = _data(len(doc) + len(ties), doc)
    fast = RankedLists.from_tables(run, qrels, ties=ties, missing=missing)  # type: ignore[arg-type]
    assert fast is not None
    ref = RankedLists.from_run(run, judgments_from_table(qrels), ties=ties, missing=missing)  # type: ignore[arg-type]
    assert fast.query_ids.tolist() == ref.query_ids.tolist()
    np.testing.assert_array_equal(fast.offsets, ref.offsets)
    np.testing.assert_array_equal(fast.grades, ref.grades)
    np.testing.assert_array_equal(fast.ideal_offsets, ref.ideal_offsets)
    np.testing.assert_array_equal(fast.ideal_grades, ref.ideal_grades)
    np.testing.assert_array_equal(fast.n_judged, ref.n_judged)
    assert (fast.n_skipped, fast.n_unjudged, fast.n_negative) == (
        ref.n_skipped,
        ref.n_unjudged,
        ref.n_negative,
    )


def test_arrow_object_and_string_columns_take_the_string_road() -> None:
    run, qrels = _data(1, "d{}")
    for r in (run.astype({"doc_id": object}), run):
        assert RankedLists.from_tables(r, qrels) is not None
    arrow = pa.Table.from_pandas(run).to_pandas()
    assert RankedLists.from_tables(arrow, qrels) is not None


@pytest.mark.parametrize(
    "change",
    [
        lambda r: r.astype({"doc_id": "category"}),  # categorical: the dictionary road
        lambda r: r.assign(doc_id=r["doc_id"].where(r.index != 3, "dé")),  # non-ASCII
        lambda r: r.assign(doc_id=np.arange(len(r))),  # numbers
    ],
)
def test_other_ids_fall_back(change) -> None:
    run, qrels = _data(2, "d{}")
    assert RankedLists.from_tables(change(run), qrels) is None


def test_a_missing_run_id_is_refused_at_the_boundary() -> None:
    run, qrels = _data(2, "d{}")
    with pytest.raises(ParseError, match=r"run table \(row 3\): doc_id: is missing"):
        RankedLists.from_tables(run.assign(doc_id=run["doc_id"].where(run.index != 3, None)), qrels)


def test_repeats_are_errors_with_the_ids_and_judged_twice_falls_back() -> None:
    run, qrels = _data(3, "clueweb12-0000tw-{:05d}-00")
    dup_run = pd.concat([run, run.iloc[[5]]], ignore_index=True)
    doc, q = run["doc_id"].iloc[5], run["query_id"].iloc[5]
    with pytest.raises(InputFormatError, match=f"{doc!r} appears twice for query {q!r}"):
        RankedLists.from_tables(dup_run, qrels)
    # the join decides nothing about judgments: a repeat takes the dictionary road,
    # whose boundary (sessionval.validate.judgments) applies the rule
    dup_qrels = pd.concat([qrels, qrels.iloc[[7]].assign(grade=0)], ignore_index=True)
    assert RankedLists.from_tables(run, dup_qrels) is None


def test_keys_order_as_bytes_and_confirm_on_words() -> None:
    ids = pd.Series(["b", "a", "ab", "a\x7f", "abcdefghij", "abcdefghi"], dtype="str")
    (k,) = id_keys([ids])  # type: ignore[misc]
    assert not k.exact  # the longest id has 10 bytes: fingerprints
    ranks = k.order_ranks(np.arange(len(ids)))
    assert ranks.tolist() == [5, 0, 1, 4, 3, 2]  # strcmp order: a < ab < abcdefghi < ...
    # a forged fingerprint collision is not a match: the words differ
    forged = IdKeys(np.zeros(2, dtype=np.uint64), k.words[:2])  # type: ignore[index]
    assert not forged.same(np.array([0]), forged, np.array([1]))[0]


def test_judged_keys_find_every_judgment() -> None:
    ids = pd.Series([f"d{i}" for i in range(1000)], dtype="str")
    (k,) = id_keys([ids])  # type: ignore[misc]
    topic = np.repeat(np.arange(10), 100)
    judged = JudgedKeys.build(topic, 10, k, np.arange(1000.0))
    assert isinstance(judged, JudgedKeys)
    counts = np.full(10, 100)  # ten lists of 100 rows, one topic each
    got = judged.lists(np.arange(10), counts, k)
    np.testing.assert_array_equal(got, np.arange(1000.0))
    wrong_topic = (np.arange(10) + 1) % 10  # lists out of topic order: one sort of all keys
    assert np.isnan(judged.lists(wrong_topic, counts, k)).all()


def test_ids_with_a_nul_byte_fall_back() -> None:
    run, qrels = _data(4, "d{}")
    nul = run.assign(doc_id=run["doc_id"].where(run.index != 3, "d1\x00"))
    assert RankedLists.from_tables(nul, qrels) is None


@pytest.mark.parametrize("doc", DOC_FORMATS)
def test_sliced_arrow_ids_read_from_their_offsets(doc: str) -> None:
    ids = pa.array([doc.format(i) for i in range(50)]).slice(7, 30)
    (k,) = id_keys([ids])  # type: ignore[misc]
    (ref,) = id_keys([pa.array(ids.to_pylist())])  # type: ignore[misc]
    np.testing.assert_array_equal(k.keys, ref.keys)
    ranks = k.order_ranks(np.arange(30))
    assert ranks.tolist() == np.argsort(np.argsort(ids.to_pylist())).tolist()


def test_id_codes_rank_runs_of_ids_and_refuse_scattered_ones() -> None:
    col = pd.Series(["q2"] * 3 + ["q10"] * 2 + ["query-000000003"] * 4 + ["q2"], dtype="str")
    codes, cats = id_codes(col)  # type: ignore[misc]
    assert cats.tolist() == ["q10", "q2", "query-000000003"]
    assert codes.tolist() == [1, 1, 1, 0, 0, 2, 2, 2, 2, 1]
    scattered = pd.Series([f"q{i % 50}" for i in range(1000)], dtype="str")
    assert id_codes(scattered) is None
    assert id_codes(col.astype("category")) is None


@pytest.mark.parametrize("lengths", [[5, 5, 5, 5], [3, 0, 7, 1, 4]])
def test_sorted_in_lists_equals_one_sort(lengths: list[int], monkeypatch) -> None:
    monkeypatch.setattr(key_join, "_LIST_BLOCK_ROWS", 8)  # several blocks on the pool
    rng = np.random.default_rng(len(lengths))
    counts = np.array(lengths, dtype=np.int64)
    keys = rng.integers(0, 2**63, counts.sum(), dtype=np.uint64) * np.uint64(2)
    topic = np.arange(counts.size, dtype=np.int64) * 2
    topic[-1] = 15  # the largest topic of 4 bits, and a key that packs to the padding
    keys[-1] = ((2**64 - 1) * pow(int(string_ids.SPREAD), -1, 2**64)) % 2**64
    got = key_join.sorted_in_lists(keys, topic, 4, counts)
    assert got is not None
    packed = key_join.pack_keys(topic, keys, 4, counts)
    order = np.argsort(packed, kind="stable")
    np.testing.assert_array_equal(got[1], packed[order])
    np.testing.assert_array_equal(packed[got[0]], packed[order])
    assert got[1][-1] == np.iinfo(np.uint64).max


@pytest.mark.parametrize("doc", DOC_FORMATS)
@pytest.mark.parametrize("ties", ["trec_eval", "input"])
def test_grouped_runs_take_the_in_list_sort_with_the_same_lists(doc: str, ties: str) -> None:
    run, qrels = _data(7, doc)
    for grouped in (
        run.sort_values("query_id", kind="stable"),
        run.iloc[::-1].sort_values("query_id", kind="stable", ascending=False),
    ):
        assert string_ids.id_codes(grouped["query_id"]) is not None
        fast = RankedLists.from_tables(grouped, qrels, ties=ties)  # type: ignore[arg-type]
        ref = RankedLists.from_run(grouped, judgments_from_table(qrels), ties=ties)  # type: ignore[arg-type]
        assert fast is not None
        assert fast.query_ids.tolist() == ref.query_ids.tolist()
        np.testing.assert_array_equal(fast.offsets, ref.offsets)
        np.testing.assert_array_equal(fast.grades, ref.grades)


@settings(max_examples=60, deadline=None)
@given(
    sizes=st.lists(st.integers(1, 12), min_size=1, max_size=10),
    shuffle_topics=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_judgments_sorted_by_topic_runs_equal_one_sort(
    sizes: list[int], shuffle_topics: bool, seed: int
) -> None:
    # qrels list each topic's rows together, topics in any order: sorting each run of
    # rows on its own gives the one sort of every packed key, array for array
    rng = np.random.default_rng(seed)
    codes = rng.permutation(len(sizes)) if shuffle_topics else np.arange(len(sizes))
    topic = np.repeat(codes, sizes).astype(np.int64)
    keys = IdKeys(rng.integers(0, 2**64, topic.size, dtype=np.uint64), None)
    grades = rng.integers(0, 4, topic.size).astype(np.float64)
    got = JudgedKeys.build(topic, len(sizes), keys, grades)
    tbits = max(1, len(sizes).bit_length())
    packed = key_join.pack_keys(topic, keys.keys, tbits)
    order = np.argsort(packed)
    assert got is not None
    np.testing.assert_array_equal(got.packed, packed[order])
    np.testing.assert_array_equal(got.rows, order)
    np.testing.assert_array_equal(got.grades, grades[order])
    if sizes[-1] > 1:  # a document judged twice in the last topic: no join (the boundary decides)
        twice = IdKeys(keys.keys.copy(), None)
        twice.keys[-1] = twice.keys[-sizes[-1]]
        assert JudgedKeys.build(topic, len(sizes), twice, grades) is None


@pytest.mark.parametrize("threads", [1, 2])
def test_judgments_side_beside_the_run_or_inline_gives_the_same_lists(
    threads: int, monkeypatch
) -> None:
    # the qrels' side runs on a second thread with two cores, inline with one: same
    # lists, and its errors surface from the call either way
    from sessionval.errors import JudgmentError
    from sessionval.evaluation.lists import evaluate_run
    from sessionval.measures import run_lists

    run, qrels = _data(3, "d{}")
    want = evaluate_run(run, judgments_from_table(qrels), ["AP", "nDCG@10"]).per_query()
    monkeypatch.setattr(run_lists, "n_threads", lambda: threads)
    got = evaluate_run(run, qrels, ["AP", "nDCG@10"]).per_query()
    pd.testing.assert_frame_equal(got, want)
    with pytest.raises(JudgmentError, match="negative grade"):
        evaluate_run(run, qrels, ["AP"], negative="error")


@settings(max_examples=60, deadline=None)
@given(
    ids=st.lists(
        st.text(alphabet="ab9-_", min_size=0, max_size=12), min_size=1, max_size=8, unique=True
    ),
    runs=st.lists(st.tuples(st.integers(0, 7), st.integers(1, 9)), min_size=1, max_size=6),
)
def test_id_codes_are_the_byte_ranks_of_runs_of_ids(ids: list[str], runs: list) -> None:
    # runs of equal ids (short, long, empty): codes rank the ids in byte order
    rows = [ids[i % len(ids)] for i, n in runs for _ in range(n)]
    col = pd.Series(rows, dtype="str")
    got = id_codes(col)
    assert got is not None
    codes, cats = got
    want = sorted(set(rows), key=lambda s: s.encode())
    assert cats.tolist() == want
    assert [want[c] for c in codes] == rows


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    lengths=st.lists(st.integers(0, 9), min_size=1, max_size=8),
    in_topic_order=st.booleans(),
    long_ids=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_judged_keys_join_block_by_block_equals_a_dict_join(
    lengths: list[int], in_topic_order: bool, long_ids: bool, seed: int, monkeypatch
) -> None:
    # blocks of a few rows: each block searches the slice of judgments its keys span
    # (the patch is the same for every example)
    monkeypatch.setattr(key_join, "_LIST_BLOCK_ROWS", 10)
    rng = np.random.default_rng(seed)
    n_topics = 8
    fmt = "clueweb-doc-{:04d}" if long_ids else "d{}"
    j_topic = np.repeat(np.arange(n_topics), 5)
    j_doc = np.concatenate([rng.choice(12, 5, replace=False) for _ in range(n_topics)])
    grades = rng.integers(0, 4, j_topic.size).astype(np.float64)
    counts = np.array(lengths, dtype=np.int64)
    topics = rng.choice(n_topics, counts.size, replace=False)  # a run's lists: distinct topics
    if in_topic_order:
        topics.sort()  # else any order: the one sort of every packed key
    r_doc = np.concatenate(
        [rng.choice(12, c, replace=False) for c in counts] + [np.zeros(0, dtype=np.int64)]
    )
    ids = [pd.Series([fmt.format(d) for d in x], dtype="str") for x in (r_doc, j_doc)]
    run_keys, judged_keys = id_keys(ids)  # type: ignore[misc]
    judged = JudgedKeys.build(j_topic, n_topics, judged_keys, grades)
    assert judged is not None
    got = judged.lists(topics, counts, run_keys)
    table = {(int(t), int(d)): g for t, d, g in zip(j_topic, j_doc, grades, strict=True)}
    row_topic = np.repeat(topics, counts)
    want = [table.get((int(t), int(d)), np.nan) for t, d in zip(row_topic, r_doc, strict=True)]
    np.testing.assert_array_equal(got, np.array(want, dtype=np.float64))


@pytest.mark.parametrize("in_topic_order", [True, False])
def test_judged_keys_join_names_a_repeated_document(in_topic_order: bool, monkeypatch) -> None:
    monkeypatch.setattr(key_join, "_LIST_BLOCK_ROWS", 4)
    ids = pd.Series(["d1", "d2", "d3", "d4", "d5", "d4", "d9"], dtype="str")
    (k,) = id_keys([ids])  # type: ignore[misc]
    judged = JudgedKeys.build(np.zeros(2, dtype=np.int64), 3, k.take(np.array([0, 1])), np.ones(2))
    assert judged is not None
    topics = np.array([0, 1, 2] if in_topic_order else [2, 1, 0])
    with pytest.raises(string_ids.KeyCollision) as err:
        judged.lists(topics, np.array([2, 4, 1]), k)  # list 2 holds d4 twice
    assert sorted(err.value.rows) == [3, 5]


@pytest.mark.parametrize("threads", [1, 2])
def test_spelling_notes_beside_the_measures_or_inline(threads: int, monkeypatch) -> None:
    # the notes are made on the second thread while the measures are computed (two
    # cores) or when waited for (one): the same note either way, and none for ASCII ids
    from sessionval.evaluation.lists import evaluate_run
    from sessionval.measures import run_lists

    monkeypatch.setattr(run_lists, "n_threads", lambda: threads)
    run = pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["caf\u00e9", "b"], "score": [2.0, 1.0]})
    qrels = pd.DataFrame({"query_id": ["1"], "doc_id": ["cafe\u0301"], "relevance": [1]})
    (note,) = evaluate_run(run, qrels, ["AP"]).notes
    assert "Unicode normalisation" in note and "1 group" in note
    plain = qrels.assign(doc_id=["b"])
    assert evaluate_run(run.assign(doc_id=["a", "b"]), plain, ["AP"]).notes == ()


@settings(max_examples=80, deadline=None)
@given(
    ids=st.lists(st.text(alphabet="ab9-_xyz", max_size=20), min_size=1, max_size=40),
    cut=st.integers(0, 5),
    chunk=st.sampled_from([3, 1 << 20]),
)
def test_words_are_the_ids_bytes_zero_padded(ids: list[str], cut: int, chunk: int) -> None:
    # loads straight from Arrow's bytes, the last ids from a padded copy of the tail:
    # every id's words are its bytes, little-endian, zero-padded (sliced arrays too)
    arr = pa.array(["pad"] * cut + ids + ["end"] * cut).slice(cut, len(ids))
    read = string_ids._Bytes.read(arr)
    assert read is not None
    width8 = string_ids._width8(read.width)
    old = string_ids._CHUNK_ROWS
    string_ids._CHUNK_ROWS = chunk  # several chunks, on the pool
    try:
        got = read.words(width8)
    finally:
        string_ids._CHUNK_ROWS = old
    want = [
        [int.from_bytes(i.encode().ljust(width8, b"\0")[k : k + 8], "little") for k in
         range(0, width8, 8)]
        for i in ids
    ]  # fmt: skip
    np.testing.assert_array_equal(got, np.array(want, dtype=np.uint64).reshape(len(ids), -1))

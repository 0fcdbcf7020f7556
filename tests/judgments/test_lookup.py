"""The one grade join (GradeLookup) agrees with the four paths it replaced, on random data.

Before issue 9 the (judgment key, document) -> grade join was prepared four ways:
``JudgmentIndex.lookup_codes`` (rows; used by ``lookup_grades`` and
``result_grades``), ``JudgmentIndex.lookup_lists`` (``RankedLists.from_run``) and the
session evaluation's own key and document maps.  Small copies of the old code are the
references here.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from sessionval.judgments import lookup as lookup_module
from sessionval.judgments.lookup import (
    GradeLookup,
    JudgmentIndex,
    index_in,
    lookup_grades,
    result_grades,
)
from tests import builders


def old_lookup_codes(ix: JudgmentIndex, kc, kcats, dc, dcats) -> np.ndarray:
    """``JudgmentIndex.lookup_codes`` before issue 9 (rows with their own categories)."""
    kc, dc = np.asarray(kc), np.asarray(dc)
    nd = max(len(ix.docs), 1)
    kmap = index_in(pd.Index(kcats), ix.topics)
    kmap = np.append(np.where(kmap < 0, -1, kmap), -1)
    dmap = index_in(pd.Index(dcats), ix.docs)
    dmap = np.append(np.where(dmap < 0, -(2**60), dmap), -(2**60))
    q = kmap[kc] * nd + dmap[dc]
    if q.size > 1 and np.count_nonzero(kc[1:] != kc[:-1]) * 8 < q.size:
        pos = np.searchsorted(ix.keys, q)
        pos[pos == ix.keys.size] = 0
        hit = ix.keys[pos] == q if ix.keys.size else np.zeros(q.size, dtype=bool)
        pos[~hit] = -1
    else:
        pos = ix.key_index.get_indexer(pd.Index(q))
    return np.append(ix.grades, np.nan)[pos]


def old_lookup_lists(ix: JudgmentIndex, key_positions, counts, dc, dcats) -> np.ndarray:
    """``JudgmentIndex.lookup_lists`` before issue 9 (one key position per list)."""
    nd = max(len(ix.docs), 1)
    kmap = np.asarray(key_positions, dtype=np.int64)
    base = np.where(kmap < 0, -(2**61), kmap * nd)
    dmap = index_in(pd.Index(dcats), ix.docs)
    dmap = np.append(np.where(dmap < 0, -(2**60), dmap), -(2**60))
    q = dmap[np.asarray(dc)] + np.repeat(base, counts)
    out = np.full(q.size, np.nan)
    if ix.keys.size:
        pos = np.minimum(np.searchsorted(ix.keys, q), ix.keys.size - 1)
        hit = np.flatnonzero(ix.keys[pos] == q)
        out[hit] = ix.grades[pos[hit]]
    return out


def old_session_grades(ix: JudgmentIndex, frame) -> np.ndarray:
    """The session evaluation's join before issue 9 (its own key and document maps)."""
    qcat = frame.queries["qrels_id"].cat
    kmap = np.append(ix.topics.get_indexer(pd.Index(qcat.categories)), -1).astype(np.int64)
    q_key = kmap[qcat.codes.to_numpy().astype(np.int64)]
    res = frame.results
    dmap = np.append(ix.docs.get_indexer(pd.Index(res["doc_id"].cat.categories)), -1)
    kc = q_key[res["query_idx"].to_numpy()]
    dc = dmap.astype(np.int64)[res["doc_id"].cat.codes.to_numpy()]
    return old_lookup_codes(ix, kc, ix.topics, dc, ix.docs)


def random_case(seed: int):
    rng = np.random.default_rng(seed)
    topics = [f"t{i}" for i in range(int(rng.integers(1, 6)))]
    docs = [f"d{i}" for i in range(int(rng.integers(1, 30)))]
    rows = {
        (str(rng.choice(topics)), str(rng.choice(docs))): int(rng.integers(0, 4))
        for _ in range(int(rng.integers(1, 60)))
    }
    judg = builders.judgments([(t, d, g) for (t, d), g in rows.items()])
    # probes: keys and docs partly outside the judgments, some missing (-1)
    kcats = pd.Index([*topics, "zz"])
    dcats = pd.Index([*docs, "unjudged-1", "unjudged-2"])
    n = int(rng.integers(0, 200))
    kc = rng.integers(-1, len(kcats), n)
    if seed % 2:
        kc = np.sort(kc)  # grouped by key: the binary-search path
    dc = rng.integers(-1, len(dcats), n)
    return judg, kcats, dcats, kc, dc


@pytest.mark.parametrize("dense", [True, False])
@pytest.mark.parametrize("seed", range(60))
def test_rows_and_lists_agree_with_the_old_joins(
    seed: int, dense: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not dense:  # no dense table allowed: the sorted keys are searched
        monkeypatch.setattr(lookup_module, "_DENSE_MAX_CELLS", 0)
    judg, kcats, dcats, kc, dc = random_case(seed)
    ix = JudgmentIndex.build(judg)
    lookup = ix.prepare(kcats, dcats)
    assert isinstance(lookup, GradeLookup)
    assert (lookup.table is not None) == dense
    np.testing.assert_array_equal(lookup.rows(kc, dc), old_lookup_codes(ix, kc, kcats, dc, dcats))
    # lists: runs of equal key codes, one key per list
    starts = np.flatnonzero(np.r_[True, kc[1:] != kc[:-1]]) if kc.size else np.zeros(0, int)
    counts = np.diff(np.r_[starts, kc.size])
    keys = kc[starts]
    positions = np.append(index_in(kcats, ix.topics), -1)[keys]
    np.testing.assert_array_equal(
        lookup.lists(keys, counts, dc), old_lookup_lists(ix, positions, counts, dc, dcats)
    )
    # lookup_grades on plain arrays of ids
    k_ids = np.where(kc >= 0, kcats.to_numpy()[kc], "missing")
    d_ids = np.where(dc >= 0, dcats.to_numpy()[dc], "missing")
    old = (
        old_lookup_codes(ix, *pd.factorize(k_ids), *pd.factorize(d_ids)) if kc.size else np.zeros(0)
    )
    np.testing.assert_array_equal(lookup_grades(k_ids, d_ids, judg), old)


@pytest.mark.parametrize("seed", range(20))
def test_result_grades_agree_with_the_old_session_join(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    docs = [f"d{i}" for i in range(12)]
    sessions = [
        (
            f"s{s}",
            "u",
            str(rng.choice(["A", "B", "C"])),
            "S",
            [
                list(rng.choice(docs, size=int(rng.integers(0, 6)), replace=False))
                for _ in range(int(rng.integers(1, 4)))
            ],
        )
        for s in range(int(rng.integers(1, 8)))
    ]
    frame = builders.frame(sessions)
    judg = builders.judgments(
        [
            (t, d, int(rng.integers(0, 4)))
            for t in ("A", "B")
            for d in docs[: int(rng.integers(1, 12))]
        ]
    )
    ix = JudgmentIndex.build(judg)
    np.testing.assert_array_equal(result_grades(frame, judg), old_session_grades(ix, frame))
    np.testing.assert_array_equal(result_grades(frame, ix), old_session_grades(ix, frame))


def test_dense_table_only_for_few_topics_times_documents() -> None:
    """The dense table is the judgments' few topics × documents; a large set is searched."""
    assert lookup_module.dense_cells(4, 400, 436) == 5 * 401
    # a TREC-like set: 16 cells per judgment allowed, far more needed
    assert lookup_module.dense_cells(1000, 150_000, 150_000) is None
    assert lookup_module.dense_cells(2, 2, 0) == 9  # tiny sets always fit
    judg = builders.judgments([("A", "a", 2), ("B", "b", 1)])
    lookup = JudgmentIndex.build(judg).prepare(pd.Index(["A", "B", "C"]), pd.Index(["b", "a", "z"]))
    assert lookup.table is not None
    # key C and document z have no judgment; code -1 is missing
    got = lookup.lists([0, 1, 2, -1], [3, 2, 1, 1], [1, 0, 2, 0, 1, 1, 1])
    np.testing.assert_array_equal(got, [2.0, np.nan, np.nan, 1.0, np.nan, np.nan, np.nan])

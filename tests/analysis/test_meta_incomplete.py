"""f-qrels (Bompada et al. 2007, 003, section 4.1) and the agreement of significance decisions."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd

from sessionval.analysis.incomplete import decision_agreement, fqrels
from tests.builders import judgments


def _qrels():
    rows = []
    for t, (n_rel, n_non) in enumerate([(40, 200), (3, 12), (0, 5), (7, 60)]):
        rows += [(f"t{t}", f"r{t}_{i}", 1 + i % 3) for i in range(n_rel)]
        rows += [(f"t{t}", f"n{t}_{i}", 0) for i in range(n_non)]
    return judgments(rows)


def _key(frame):
    return set(zip(frame.table["topic_id"].astype(str), frame.table["doc_id"].astype(str),
                   strict=True))  # fmt: skip


def test_f_one_reproduces_the_full_qrels():
    q = _qrels()
    full = fqrels(q, [1.0], seed=3)[1.0]
    pd.testing.assert_frame_equal(full.table, q.table)
    assert full.scale == q.scale


def test_fqrels_are_nested_and_keep_the_floors():
    q = _qrels()
    subs = fqrels(q, [0.05, 0.1, 0.3, 0.5, 1.0], seed=7)
    keys = [_key(s) for s in subs.values()]
    assert all(a <= b for a, b in itertools.pairwise(keys))
    for f, s in subs.items():
        t = s.table.assign(topic=s.table.topic_id.astype(str), rel=s.table.grade > 0)
        counts = t.groupby(["topic", "rel"]).size()
        # topic t0: 40 relevant, 200 non-relevant -> max(1, f*40), max(10, f*200)
        assert counts[("t0", True)] == max(1, int(np.floor(f * 40 + 1e-9)))
        assert counts[("t0", False)] == max(10, int(np.floor(f * 200 + 1e-9)))
        # small topics keep what they have, never more
        assert counts[("t1", True)] == max(1, int(np.floor(f * 3 + 1e-9)))
        assert counts[("t1", False)] == min(12, max(10, int(np.floor(f * 12 + 1e-9))))
        assert ("t2", True) not in counts


def test_fqrels_fixed_seed_reproduces_and_seeds_differ():
    q = _qrels()
    a = fqrels(q, [0.3], seed=1)[0.3]
    b = fqrels(q, [0.3], seed=1)[0.3]
    c = fqrels(q, [0.3], seed=2)[0.3]
    pd.testing.assert_frame_equal(a.table, b.table)
    assert _key(a) != _key(c)


def test_decision_agreement_confusion_matrix():
    rng = np.random.default_rng(0)
    rows = []
    for j in range(4):
        v = rng.random(20) + 0.15 * j
        topics = [f"t{i}" for i in range(20)]
        rows.append(pd.DataFrame({"system": f"s{j}", "topic": topics, "measure": "AP", "value": v}))
    full = pd.concat(rows, ignore_index=True)
    same = decision_agreement(full, full)
    row = same.iloc[0]
    assert (row["c12"], row["c21"], row["accuracy"], row["n_pairs"]) == (0, 0, 1.0, 6)
    noisy = full.assign(value=full["value"] + rng.normal(0, 0.5, len(full)))
    r = decision_agreement(full, noisy).iloc[0]
    assert r["c11"] + r["c12"] + r["c21"] + r["c22"] == 6
    tp = r["c11"] / (r["c11"] + r["c12"]) if r["c11"] + r["c12"] else np.nan
    pp = r["c11"] / (r["c11"] + r["c21"]) if r["c11"] + r["c21"] else np.nan
    np.testing.assert_allclose(r["g_mean"], np.sqrt(tp * pp))
    assert r["accuracy"] == (r["c11"] + r["c22"]) / 6

"""One cumulated-gain-by-rank engine: Figure 1's query curves and 2002's CG curves.

The agreement tests compare the merged engine with the two implementations it
replaced (kept verbatim below as the reference) on the sample study and on random
studies under several configurations.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import numpy.typing as npt
import pandas as pd
import pytest

from sessionval.analysis.rank_curves import cg_curves, cumulate_by_rank, query_curves, rank_gains
from sessionval.errors import MeasureSpecError
from sessionval.evaluation.config import SessionConfig
from sessionval.evaluation.result import SessionEvaluation
from sessionval.evaluation.session import evaluate
from sessionval.io.study import load_study
from sessionval.kernels.discounts import rank_discount
from sessionval.kernels.segments import segment_sum
from sessionval.synth import generate_study
from sessionval.validate.flat import frame_from_flat
from tests import builders

SAMPLE = Path(__file__).resolve().parents[2] / "sample_logs"


# ---------------------------------------------------------------------------------------------
# the reference: the two engines before the merge (analysis/curves.py query_curves and
# analysis/cg_curves.py cg_curves at commit 5d7f58a), unchanged but for their names


def _old_groups(
    table: pd.DataFrame, by: list[str], mask: npt.NDArray[np.bool_]
) -> tuple[npt.NDArray[np.int64], pd.DataFrame]:
    if not by:
        codes = np.zeros(len(table), dtype=np.int64)
        labels = pd.DataFrame(index=range(1))
    else:
        sub = table.loc[mask, list(by)]
        labels = sub.drop_duplicates().sort_values(list(by)).reset_index(drop=True)
        key = pd.MultiIndex.from_frame(labels.astype(object))
        codes = np.asarray(
            key.get_indexer(pd.MultiIndex.from_frame(table[list(by)].astype(object))),
            dtype=np.int64,
        )
    return np.where(mask, codes, -1), labels


def _old_query_curves(ev, *, by=("system_id",), compare="last", depth=100):
    cfg = ev.config
    sessions = ev.frame.sessions
    mask = np.ones(len(sessions), dtype=bool)
    gcode, labels = _old_groups(sessions, list(by), mask)
    n_g = len(labels)
    nq = ev.query_session.size
    last, best = ev.last_and_best()
    chosen = last if compare == "last" else best
    is_sel = np.zeros(nq, dtype=bool)
    is_sel[chosen[chosen >= 0]] = True
    qclass = np.where(is_sel, 0, 1)
    qgroup = gcode[ev.query_session] * 2 + qclass
    n_cls = n_g * 2
    qidx, rank, gain = ev.ranked_gains()
    cut = rank <= depth
    inc = gain[cut] / rank_discount(rank[cut], b=cfg.b, kind=cfg.discount)
    cell = qgroup[qidx[cut]] * depth + rank[cut] - 1
    n_per = np.bincount(qgroup, minlength=n_cls).astype(np.int64)
    dcg = np.cumsum(segment_sum(inc, cell, n_cls * depth).reshape(n_cls, depth), axis=1)
    sdcg = np.cumsum(
        segment_sum(inc * ev.queries["qd"][qidx[cut]], cell, n_cls * depth).reshape(n_cls, depth),
        axis=1,
    )
    with np.errstate(divide="ignore", invalid="ignore"):
        dcg_m = dcg / n_per[:, None]
        sdcg_m = sdcg / n_per[:, None]
    names = ("last", "non-last") if compare == "last" else ("best", "other")
    ranks = np.arange(1, depth + 1)
    parts = []
    for measure, arr in (("sdcg_q", sdcg_m), ("dcg_q", dcg_m)):
        part = pd.DataFrame(
            {
                "group": np.tile(np.repeat(np.array(names, dtype=object), depth), n_g),
                "rank": np.tile(ranks, n_cls).astype(np.int32),
                "measure": measure,
                "value": arr.ravel(),
                "n_queries": np.repeat(n_per, depth),
            }
        )
        for c in reversed(list(by)):
            part.insert(0, c, np.repeat(labels[c].to_numpy(), 2 * depth))
        parts.append(part)
    out = pd.concat(parts, ignore_index=True)
    for c in by:
        out[c] = out[c].astype(sessions[c].dtype)
    return out[out["n_queries"] > 0].reset_index(drop=True)


def _old_cg_curves(ev, *, by="system_id", depth=100, ideal_label="ideal"):
    sessions = ev.frame.sessions
    cfg = ev.config
    labels = sessions[by].astype(str).to_numpy()
    names, gcode_s = np.unique(labels, return_inverse=True)
    n_g = names.size
    qsys = gcode_s[ev.query_session].astype(np.int64)
    ideal_source, query_ideal = ev.ideal_source, np.asarray(ev.query_ideal, dtype=np.int64)
    used, qtop = np.unique(query_ideal, return_inverse=True)
    n_t = used.size
    ideal_dense = ideal_source.dense(used, depth=depth)
    ranks = np.arange(1, depth + 1, dtype=np.int64)
    disc = rank_discount(ranks, b=cfg.b, kind=cfg.discount)
    icg = np.cumsum(ideal_dense, axis=1)
    idcg = np.cumsum(ideal_dense / disc, axis=1)
    qidx, rank, gain = ev.ranked_gains()
    cut = rank <= depth
    g = gain[cut]
    r0 = rank[cut] - 1
    q = qidx[cut]
    cell = (qsys[q] * n_t + qtop[q]) * depth + r0
    size = n_g * n_t * depth
    cg = np.cumsum(np.bincount(cell, weights=g, minlength=size).reshape(n_g, n_t, depth), axis=2)
    dcg = np.cumsum(
        np.bincount(cell, weights=g / disc[r0], minlength=size).reshape(n_g, n_t, depth), axis=2
    )
    count = np.bincount(qsys * n_t + qtop, minlength=n_g * n_t).reshape(n_g, n_t).astype(float)
    n_sys = count.sum(axis=1)
    defined = icg[:, 0] > 0
    n_norm = count[:, defined].sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = {
            "CG": cg.sum(axis=1) / n_sys[:, None],
            "DCG": dcg.sum(axis=1) / n_sys[:, None],
            "nCG": (cg[:, defined, :] / icg[None, defined, :]).sum(axis=1) / n_norm[:, None],
            "nDCG": (dcg[:, defined, :] / idcg[None, defined, :]).sum(axis=1) / n_norm[:, None],
        }
        weight = count.sum(axis=0)
        ideal = {
            "CG": weight @ icg / weight.sum(),
            "DCG": weight @ idcg / weight.sum(),
            "nCG": np.ones(depth),
            "nDCG": np.ones(depth),
        }
    parts = []
    for m in ("CG", "DCG", "nCG", "nDCG"):
        nqs = n_norm if m.startswith("n") else n_sys
        parts.append(
            pd.DataFrame(
                {
                    by: np.repeat(names.astype(object), depth),
                    "rank": np.tile(ranks, n_g).astype(np.int32),
                    "measure": m,
                    "value": mean[m].reshape(-1),
                    "n_queries": np.repeat(nqs.astype(np.int64), depth),
                }
            )
        )
        parts.append(
            pd.DataFrame(
                {
                    by: ideal_label,
                    "rank": ranks.astype(np.int32),
                    "measure": m,
                    "value": ideal[m],
                    "n_queries": int(weight[defined].sum() if m.startswith("n") else weight.sum()),
                }
            )
        )
    out = pd.concat(parts, ignore_index=True)
    return out[out["n_queries"] > 0].reset_index(drop=True)


# ---------------------------------------------------------------------------------------------
# studies


@pytest.fixture(scope="module")
def sample_ev() -> SessionEvaluation:
    loaded = load_study(SAMPLE, qrels=SAMPLE / "qrels.txt")
    return evaluate(loaded.frame, loaded.judgments, SessionConfig())


CONFIGS = [
    SessionConfig(),
    SessionConfig.preset("jiang-allan-2016"),
    SessionConfig(b=4, discount="jk2002", gains="0-1-2-3", unjudged="condense"),
    SessionConfig(b=10, discount="log2p1", best_by="sdcg", bq=1.5),
]


def _random_ev(seed: int, config: SessionConfig) -> SessionEvaluation:
    study = generate_study(n_sessions=12 + seed % 9, seed=seed, jsonl=False)
    frame = frame_from_flat(study.flat.to_pandas()).frame
    judgments = builders.judgments(study.judgments.itertuples(index=False, name=None))
    return evaluate(frame, judgments, config)


def _same(new: pd.DataFrame, old: pd.DataFrame) -> None:
    assert list(new.columns) == list(old.columns)
    pd.testing.assert_frame_equal(
        new.drop(columns="value"), old.drop(columns="value"), check_exact=True
    )
    np.testing.assert_allclose(new["value"], old["value"], rtol=1e-13, atol=0)


@pytest.mark.parametrize("compare", ["last", "best"])
@pytest.mark.parametrize("by", [("system_id",), ("system_id", "topic_id"), ()])
def test_query_curves_agree_with_the_previous_engine_on_the_sample(sample_ev, compare, by):
    new = query_curves(sample_ev, by=by, compare=compare, ranks=100)
    _same(new, _old_query_curves(sample_ev, by=by, compare=compare, depth=100))


@pytest.mark.parametrize("ranks", [1, 10, 100])
def test_cg_curves_agree_with_the_previous_engine_on_the_sample(sample_ev, ranks):
    _same(cg_curves(sample_ev, ranks=ranks), _old_cg_curves(sample_ev, depth=ranks))
    by_topic = cg_curves(sample_ev, by="topic_id", ranks=ranks, ideal_label="best")
    _same(by_topic, _old_cg_curves(sample_ev, by="topic_id", depth=ranks, ideal_label="best"))


@pytest.mark.parametrize("seed", [1, 7, 23])
@pytest.mark.parametrize("config", CONFIGS, ids=["default", "jiang-allan", "jk2002", "log2p1"])
def test_curves_agree_with_the_previous_engines_on_random_studies(seed, config):
    ev = _random_ev(seed, config)
    for compare in ("last", "best"):
        new = query_curves(ev, compare=compare, ranks=30)
        _same(new, _old_query_curves(ev, compare=compare, depth=30))
    _same(cg_curves(ev, ranks=30), _old_cg_curves(ev, depth=30))


def test_one_engine_behind_both_curves(sample_ev):
    """Figure 1's dcg_q over all queries and 2002's DCG are the same cumulated vectors."""
    fig1 = query_curves(sample_ev, by=(), compare="last", ranks=20)
    dcg = fig1[fig1["measure"] == "dcg_q"]
    total = (dcg["value"] * dcg["n_queries"]).to_numpy().reshape(2, 20).sum(axis=0)
    n_queries = dcg["n_queries"].to_numpy().reshape(2, 20)[:, 0].sum()
    cg = cg_curves(sample_ev, ranks=20)
    per_system = cg[(cg["measure"] == "DCG") & (cg["system_id"] != "ideal")]
    weighted = (per_system["value"] * per_system["n_queries"]).to_numpy().reshape(-1, 20)
    np.testing.assert_allclose(total, weighted.sum(axis=0), rtol=1e-12)
    assert n_queries == sample_ev.query_session.size


def test_rank_gains_and_cumulation():
    ev = evaluate(
        builders.frame([("s1", "u1", "A", "S1", [["d1", "d2", "d3"], ["d3"]])]),
        builders.judgments([("A", "d1", 3), ("A", "d3", 1)]),
        SessionConfig(),
    )
    rg = rank_gains(ev, 2)
    assert rg.query.tolist() == [0, 0, 1] and rg.rank.tolist() == [1, 2, 1]
    assert rg.gain.tolist() == [100.0, 0.0, 1.0]
    np.testing.assert_allclose(rg.discount, [1.0, 2.0])  # jk2008, b = 2: 1 + log2(i)
    curve = cumulate_by_rank(rg.query, rg.rank, rg.gain, n_cells=2, ranks=2)
    assert curve.tolist() == [[100.0, 100.0], [1.0, 1.0]]


def test_ranks_argument():
    ev = evaluate(
        builders.frame([("s1", "u1", "A", "S1", [["d1"]])]),
        builders.judgments([("A", "d1", 3)]),
        SessionConfig(),
    )
    with pytest.warns(DeprecationWarning, match="ranks="):
        old = query_curves(ev, depth=5)
    pd.testing.assert_frame_equal(old, query_curves(ev, ranks=5))
    with pytest.warns(DeprecationWarning, match="ranks="):
        assert cg_curves(ev, depth=3)["rank"].max() == 3
    with pytest.raises(MeasureSpecError, match="ranks must be >= 1"):
        cg_curves(ev, ranks=0)
    with pytest.raises(MeasureSpecError, match="compare"):
        query_curves(ev, compare="first")  # type: ignore[arg-type]


def test_the_kept_gains_are_joined_once_and_read_only(sample_ev):
    """The figures ask for the ranked gains three times: the grade join runs once."""
    _, rank, gain = sample_ev.ranked_gains()
    rows, again = sample_ev.row_gains()
    assert again is gain and not gain.flags.writeable and not rows.flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        gain[0] = 1.0
    np.testing.assert_array_equal(sample_ev.ranked_gains()[1], rank)

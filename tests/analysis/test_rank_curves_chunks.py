"""The run's curves sum their rows chunk by chunk of queries: bit for bit the one-call sums."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from sessionval.analysis import rank_sums
from sessionval.analysis.rank_curves import cg_curves, query_curves
from sessionval.evaluation.config import SessionConfig
from sessionval.evaluation.session import evaluate
from sessionval.kernels.cumulate import cumulate_by_rank
from sessionval.synth import generate_study
from sessionval.validate.flat import frame_from_flat
from tests import builders


def test_sums_added_chunk_by_chunk_are_the_one_call_sums() -> None:
    rng = np.random.default_rng(7)
    n = 5_000
    cells = np.sort(rng.integers(0, 6, n))
    rank = rng.integers(1, 11, n)
    values = rng.random(n) * 10.0 ** rng.integers(-8, 8, n)  # rounding depends on order
    whole = cumulate_by_rank(cells, rank, values, n_cells=6, ranks=10)
    sums = np.zeros((6, 10))
    for s in np.array_split(np.arange(n), 7):
        chunked = cumulate_by_rank(cells[s], rank[s], values[s], n_cells=6, ranks=10, sums=sums)
    np.testing.assert_array_equal(chunked, whole)


@pytest.mark.parametrize(
    "config",
    [SessionConfig(), SessionConfig(b=4, discount="jk2002", gains="0-1-2-3", unjudged="condense")],
    ids=["default", "jk2002-condense"],
)
def test_curves_in_many_chunks_are_the_curves_in_one(
    config: SessionConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    study = generate_study(n_sessions=20, seed=5, jsonl=False)
    frame = frame_from_flat(study.flat.to_pandas()).frame
    ev = evaluate(
        frame, builders.judgments(study.judgments.itertuples(index=False, name=None)), config
    )
    n_q = ev.query_session.size

    def tables() -> list[pd.DataFrame]:
        return [
            query_curves(ev, compare=c, ranks=8, confidence=conf)
            for c in ("last", "best")
            for conf in (None, 0.9)
        ] + [cg_curves(ev, ranks=8, confidence=conf) for conf in (None, 0.9)]

    assert n_q > 4 * 3  # several chunks of 3 queries, the last one short
    one = tables()  # one chunk
    monkeypatch.setattr(rank_sums, "QUERY_BLOCK", 3)
    bands = ["se", "ci_low", "ci_high"]
    for a, b in zip(one, tables(), strict=True):
        # the means are sums of rows: bit for bit whatever the chunks
        pd.testing.assert_frame_equal(
            a.drop(columns=bands, errors="ignore"),
            b.drop(columns=bands, errors="ignore"),
            check_exact=True,
        )
        # the bands sum squares of whole lists per chunk, as cumulated_squares per block:
        # the order of those sums follows the chunks (the run's chunk is one block: exact)
        for c in bands if "se" in a.columns else []:
            np.testing.assert_allclose(b[c], a[c], rtol=1e-12, atol=0)


@pytest.mark.parametrize("unjudged", ["zero", "condense"])
def test_a_chunk_looked_up_alone_is_the_chunk_of_every_row(unjudged: str) -> None:
    """``ranked_gains(queries=)`` joins a chunk's rows alone unless every row's join is cached."""
    study = generate_study(n_sessions=20, seed=3, jsonl=False)
    frame = frame_from_flat(study.flat.to_pandas()).frame
    judgments = builders.judgments(study.judgments.itertuples(index=False, name=None))
    ev = evaluate(frame, judgments, SessionConfig(unjudged=unjudged))  # type: ignore[arg-type]
    n_q = ev.query_session.size
    alone = [ev.ranked_gains(queries=(q0, q0 + 5)) for q0 in range(0, n_q + 5, 5)]
    assert "kept_gains" not in ev._cache  # the chunks did not cache every row's join
    q, r, g = ev.ranked_gains()
    # condensed lists leave unjudged rows out: the chunk's ranks must count them out too
    assert (g.size < frame.n_results) == (unjudged == "condense")
    for q0, (qa, ra, ga) in zip(range(0, n_q + 5, 5), alone, strict=True):
        rows = (q >= q0) & (q < q0 + 5)
        np.testing.assert_array_equal(qa, q[rows])
        np.testing.assert_array_equal(ra, r[rows])
        np.testing.assert_array_equal(ga, g[rows])


@pytest.mark.parametrize("squares", [False, True])
def test_one_pass_for_the_three_rank_sums_is_each_sum_alone(
    squares: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``rank_sums`` (Figure 1's last and best, the CG curves with their own gains) in one pass."""
    study = generate_study(n_sessions=20, seed=9, jsonl=False)
    frame = frame_from_flat(study.flat.to_pandas()).frame
    judgments = builders.judgments(study.judgments.itertuples(index=False, name=None))
    ev = evaluate(frame, judgments, SessionConfig())
    cg_ev = evaluate(frame, judgments, SessionConfig(gains="0-1-2-3", b=3))
    monkeypatch.setattr(rank_sums, "QUERY_BLOCK", 4)  # several chunks
    last, best, cg = rank_sums.rank_sums(ev, ranks=6, squares=squares, cg_ev=cg_ev)
    alone = (
        rank_sums.query_sums(ev, compare="last", ranks=6, squares=squares),
        rank_sums.query_sums(ev, compare="best", ranks=6, squares=squares),
        rank_sums.cg_sums(cg_ev, ranks=6, squares=squares),
    )
    for fused, single in zip((last, best, cg), alone, strict=True):
        assert fused.sums.keys() == single.sums.keys()
        for k in single.sums:
            np.testing.assert_array_equal(fused.sums[k], single.sums[k])
    np.testing.assert_array_equal(cg.count, alone[2].count)
    # the CG sums are cg_ev's own: its gains differ from ev's
    assert not np.array_equal(cg.sums["cg"], rank_sums.cg_sums(ev, ranks=6).sums["cg"])


@pytest.mark.parametrize("unjudged", ["zero", "condense"])
def test_the_pass_squares_are_cumulated_squares_of_the_engine(
    unjudged: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bands' dense vectors (put in place, cumulated, squared once) are the engine's.

    ``cumulated_squares`` cumulates through ``cumulate_by_rank`` and squares each gathered
    block; the pass must give the same bits, lists cut at ``ranks`` included.
    """
    from sessionval.analysis.curve_bands import cumulated_squares
    from sessionval.kernels.discounts import rank_discount

    study = generate_study(n_sessions=30, seed=11, jsonl=False)
    frame = frame_from_flat(study.flat.to_pandas()).frame
    judgments = builders.judgments(study.judgments.itertuples(index=False, name=None))
    ev = evaluate(frame, judgments, SessionConfig(unjudged=unjudged))  # type: ignore[arg-type]
    monkeypatch.setattr(rank_sums, "QUERY_BLOCK", 7)  # several chunks, the last one short
    ranks = 6
    assert int(frame.queries["n_results"].max()) > ranks  # some lists are cut
    cg = rank_sums.cg_sums(ev, ranks=ranks, squares=True)
    last = rank_sums.query_sums(ev, compare="last", ranks=ranks, squares=True)
    q, r, g = ev.ranked_gains()
    keep = r <= ranks
    q, r, g = q[keep], r[keep], g[keep]
    d = g / rank_discount(np.arange(1, ranks + 1), b=ev.config.b, kind=ev.config.discount)[r - 1]
    system = ev.frame.sessions["system_id"].astype(str).to_numpy()[ev.query_session]
    qsys = np.unique(system, return_inverse=True)[1]

    def engine(values: np.ndarray, cells: np.ndarray, n_cells: int) -> np.ndarray:
        return cumulated_squares(q, r, values, cells, n_cells=n_cells, ranks=ranks, block=7)

    n_sys = int(qsys.max()) + 1
    assert cg.sums["CG"].tobytes() == engine(g, qsys, n_sys).tobytes()
    assert cg.sums["DCG"].tobytes() == engine(d, qsys, n_sys).tobytes()
    dq = d * np.asarray(ev.queries["qd"], dtype=np.float64)[q]
    last_chosen = np.zeros(ev.query_session.size, dtype=bool)
    chosen = ev.last_and_best()[0]
    last_chosen[chosen[chosen >= 0]] = True
    qgroup = qsys * 2 + np.where(last_chosen, 0, 1)
    assert last.sums["sdcg_q2"].tobytes() == engine(dq, qgroup, 2 * n_sys).tobytes()
    assert last.sums["dcg_q2"].tobytes() == engine(d, qgroup, 2 * n_sys).tobytes()


@pytest.mark.parametrize("stopped", ["active", "hold"])
def test_session_sums_of_selected_sessions_are_the_sums_over_every_position_kept(
    stopped: str,
) -> None:
    """``session_sums`` reads the selected sessions' positions only: the same bits as
    keeping them out of every position's cells (the sums add the same rows in order)."""
    from sessionval.analysis.curves import session_sums
    from sessionval.measures.session import normalise

    study = generate_study(n_sessions=40, seed=12, jsonl=False)
    frame = frame_from_flat(study.flat.to_pandas()).frame
    judgments = builders.judgments(study.judgments.itertuples(index=False, name=None))
    ev = evaluate(frame, judgments, SessionConfig())
    where = np.random.default_rng(2).random(frame.n_sessions) < 0.5
    got = session_sums(ev, where=where, stopped=stopped)  # type: ignore[arg-type]
    full = session_sums(ev, where=np.ones(frame.n_sessions, bool), stopped=stopped)  # type: ignore[arg-type]
    assert got.n_sessions.sum() == where.sum() < full.n_sessions.sum()
    v = ev.positions()
    n_p = got.sums["s"].shape[1]
    ps = v.session
    keep = where[ps]
    j = np.arange(ps.size) - v.offsets[ps]
    sys_code = np.unique(frame.sessions["system_id"].astype(str), return_inverse=True)[1]
    assert len(got.labels) == sys_code.max() + 1
    cell = (sys_code[ps] * n_p + j)[keep]
    for key, values in (("s", v.sdcg), ("r", normalise(v.sdcg, v.ideal, "nan"))):
        kept = values[keep]
        ok = ~np.isnan(kept)
        total = np.bincount(cell[ok], kept[ok], minlength=got.sums[key].size)
        if stopped == "active":
            assert got.sums[key].tobytes() == total.tobytes()
        else:  # the held finals are added to these sums
            assert np.all(got.sums[key].reshape(-1) >= total)

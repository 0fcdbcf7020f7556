"""Confidence bands of the averaged curves: standard errors per point, by brute force."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import sessionval as sv
from sessionval.analysis.curve_bands import add_bands
from sessionval.analysis.curves import cg_curves, individual_curves, query_curves, session_curves
from sessionval.kernels.discounts import rank_discount


@pytest.fixture(scope="module")
def ev(tmp_path_factory):
    folder = tmp_path_factory.mktemp("study")
    sv.write_study(folder, n_sessions=40, seed=11, formats="jsonl")
    study = sv.load_study(folder, qrels=folder / "qrels.txt")
    return sv.evaluate(study.frame, study.judgments)


def _se(x: np.ndarray) -> float:
    return float(np.std(x, ddof=1) / np.sqrt(x.size))


def test_session_curve_bands_are_the_standard_error_over_held_sessions(ev):
    plain = session_curves(ev)
    banded = session_curves(ev, confidence=0.9)
    pd.testing.assert_frame_equal(banded[plain.columns], plain)  # only columns added
    ind = individual_curves(ev)
    for system in ("S1", "S2"):
        for pos in (1, 7, 25):
            for m in ("sdcg", "nsdcg"):
                vals = ind[(ind.system_id == system) & (ind.position == pos) & (ind.measure == m)]
                x = vals["value"].dropna().to_numpy()
                row = banded[
                    (banded.system_id == system) & (banded.position == pos) & (banded.measure == m)
                ].iloc[0]
                assert row["se"] == pytest.approx(_se(x))
                half = stats.t.ppf(0.95, x.size - 1) * _se(x)
                assert (row["ci_low"], row["ci_high"]) == pytest.approx(
                    (x.mean() - half, x.mean() + half)
                )


def test_of_averages_band_is_the_delta_method(ev):
    b = session_curves(ev, normalise="of-averages", confidence=0.95)
    ind = individual_curves(ev)
    sel = (ind.system_id == "S2") & (ind.position == 12)
    s = ind[sel & (ind.measure == "sdcg")]["value"].to_numpy()
    i = ind[sel & (ind.measure == "ideal")]["value"].to_numpy()
    r = s.mean() / i.mean()
    c = np.cov(s, i, ddof=1)
    se = np.sqrt((c[0, 0] - 2 * r * c[0, 1] + r**2 * c[1, 1]) / s.size) / i.mean()
    row = b[(b.system_id == "S2") & (b.position == 12) & (b.measure == "nsdcg")].iloc[0]
    assert row["value"] == pytest.approx(r)
    assert row["se"] == pytest.approx(se)


def _query_vectors(ev, ranks):
    """Each query's DCG vector to ``ranks``, by a loop over queries (the reference)."""
    qidx, rank, gain = ev.ranked_gains()
    # the discount itself is tested in tests/kernels; here the aggregation is under test
    disc = rank_discount(np.arange(1, ranks + 1), b=ev.config.b, kind=ev.config.discount)
    out = np.zeros((ev.query_session.size, ranks))
    for q, r, g in zip(qidx, rank, gain, strict=True):
        if r <= ranks:
            out[q, r - 1] += g / disc[r - 1]
    return np.cumsum(out, axis=1)


def test_query_curve_bands_match_a_loop_over_queries(ev):
    b = query_curves(ev, ranks=15, confidence=0.95)
    dcg = _query_vectors(ev, 15)
    last, _ = ev.last_and_best()
    is_last = np.zeros(ev.query_session.size, dtype=bool)
    is_last[last[last >= 0]] = True
    system = ev.frame.sessions["system_id"].astype(str).to_numpy()[ev.query_session]
    sel = (system == "S1") & ~is_last
    row = b[(b.system_id == "S1") & (b.group == "non-last") & (b.measure == "dcg_q")]
    row = row[row["rank"] == 10].iloc[0]
    assert row["value"] == pytest.approx(dcg[sel, 9].mean())
    assert row["se"] == pytest.approx(_se(dcg[sel, 9]))


def test_cg_curve_bands_match_a_loop_over_queries(ev):
    b = cg_curves(ev, ranks=10, confidence=0.95)
    assert b.loc[b.system_id == "ideal", "se"].isna().all()
    dcg = _query_vectors(ev, 10)
    system = ev.frame.sessions["system_id"].astype(str).to_numpy()[ev.query_session]
    row = b[(b.system_id == "S2") & (b.measure == "DCG") & (b["rank"] == 5)].iloc[0]
    assert row["se"] == pytest.approx(_se(dcg[system == "S2", 4]))
    assert row["ci_low"] < row["value"] < row["ci_high"]


def test_band_quantile_is_scipy_stats_t_ppf_bit_for_bit_without_importing_scipy_stats():
    n = np.array([0, 1, 2, 3, 7, 40, 1000, 123457])
    table = pd.DataFrame({"value": np.linspace(0.5, 3.0, n.size)})
    banded = add_bands(table, mean="value", sumsq=n * 9.0 + 5.0, n=n, confidence=0.95)
    half = stats.t.ppf(0.975, n - 1.0) * banded["se"].to_numpy()
    np.testing.assert_array_equal(banded["ci_high"].to_numpy(), table["value"].to_numpy() + half)
    # the figures' bands no longer import scipy.stats (0.8 s): a fresh interpreter shows it
    code = (
        "import sys, numpy as np, pandas as pd\n"
        "from sessionval.analysis.curve_bands import add_bands\n"
        "add_bands(pd.DataFrame({'value': [1.0, 2.0]}), mean='value',"
        " sumsq=np.array([3.0, 9.0]), n=[3, 3], confidence=0.9)\n"
        "print('scipy.stats' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"

"""Meta-evaluation: Kendall's tau and its Z0 test, tau_AP, the swap method, bootstrap
sensitivity (Sakai 2007, 004, sections 4.1-4.3), re-run literally and against scipy."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from sessionval.analysis.meta import (
    bootstrap_sensitivity,
    kendall_tau,
    rank_correlation,
    ranking_agreement,
    swap_method,
    tau_ap,
    tau_z0,
)
from sessionval.errors import StatisticsError


def _scores(n_topics=30, k=6, seed=2, measures=("nDCG", "AP")) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    base = rng.random(n_topics)
    rows = []
    for j in range(k):
        for mi, m in enumerate(measures):
            v = np.clip(base + 0.03 * j * (1 + mi) + rng.normal(0, 0.1, n_topics), 0, 1)
            topics = [f"t{i}" for i in range(n_topics)]
            rows.append(
                pd.DataFrame({"system": f"s{j}", "topic": topics, "measure": m, "value": v})
            )
    return pd.concat(rows, ignore_index=True)


def test_kendall_tau_is_sakai_eq_8_and_scipys_without_ties():
    rng = np.random.default_rng(0)
    x, y = rng.random(25), rng.random(25)
    assert kendall_tau(x, y) == pytest.approx(stats.kendalltau(x, y).statistic)
    # with ties: 2 (pos - neg) / (n (n - 1)), a tied pair counting in neither
    x = np.array([1, 2, 2, 3, 4.0])
    y = np.array([1, 3, 2, 2, 5.0])
    pos = neg = 0
    for i in range(5):
        for j in range(i + 1, 5):
            s = np.sign(x[i] - x[j]) * np.sign(y[i] - y[j])
            pos += s > 0
            neg += s < 0
    assert kendall_tau(x, y) == pytest.approx(2 * (pos - neg) / 20)


def test_tau_z0_is_sakai_eq_9_with_the_papers_threshold():
    z0, p = tau_z0(0.5, 30)
    assert z0 == pytest.approx(0.5 / np.sqrt((4 * 30 + 10) / (9 * 30 * 29)))
    assert p == pytest.approx(2 * stats.norm.sf(z0))
    # "with n_s = 30 runs, the rank correlation is significant at alpha = 0.01 if it is
    # over 0.34": 0.34 is, 0.33 is not
    assert tau_z0(0.34, 30)[1] < 0.01 < tau_z0(0.33, 30)[1]


def test_tau_ap_follows_its_definition():
    rng = np.random.default_rng(1)
    ref, oth = rng.random(12), rng.random(12)
    order = np.argsort(-oth)
    total = 0.0
    for i in range(1, 12):  # positions 2..n of the other ranking
        item = order[i]
        correct = sum(ref[order[j]] > ref[item] for j in range(i))
        total += correct / i
    assert tau_ap(ref, oth) == pytest.approx(2 / 11 * total - 1)
    assert tau_ap(ref, ref) == 1.0


def test_rank_correlation_of_a_measure_with_itself_is_one():
    s = _scores()
    twin = s[s.measure == "nDCG"].assign(measure="nDCG-copy")
    r = rank_correlation(pd.concat([s, twin]))
    same = r[(r.measure_a == "nDCG") & (r.measure_b == "nDCG-copy")].iloc[0]
    assert (same["tau"], same["tau_ap"], same["n_systems"]) == (1.0, 1.0, 6)
    assert list(r.columns) == ["measure_a", "measure_b", "n_systems", "tau", "z0", "p", "tau_ap"]
    assert len(r) == 3
    agree = ranking_agreement(s, s)
    assert (agree["tau"] == 1.0).all()


def test_swap_method_is_sakai_fig_4_literally():
    s = _scores(n_topics=15, k=4, measures=("nDCG",))
    b_res = 200
    res = swap_method(s, resamples=b_res, seed=4)
    x = s.pivot_table(index="topic", columns="system", values="value").to_numpy()
    rng = np.random.default_rng(4)
    q1 = rng.integers(0, 15, (b_res, 15))
    q2 = rng.integers(0, 15, (b_res, 15))
    count = np.zeros(21, int)
    swaps = np.zeros(21, int)
    for i in range(4):
        for j in range(i + 1, 4):
            for b in range(b_res):
                d = x[q1[b], i].mean() - x[q1[b], j].mean()
                d2 = x[q2[b], i].mean() - x[q2[b], j].mean()
                k = min(int(np.floor(abs(d) / 0.01 + 1e-9)), 20)
                count[k] += 1
                swaps[k] += np.sign(d) != np.sign(d2)
    assert res.bins["count"].tolist() == count.tolist()
    assert res.bins["swaps"].tolist() == swaps.tolist()
    rate = res.bins["swap_rate"].to_numpy()
    # the difference required: from its bin on, every swap rate is <= 5 %
    req = res.summary["required_diff"].iloc[0]
    first = round(req / 0.01)
    assert np.all(np.nan_to_num(rate[first:]) <= 0.05)
    assert first == 0 or rate[first - 1] > 0.05
    assert res.bins["high"].iloc[-1] == np.inf


def test_identical_systems_never_swap_and_are_never_significant():
    s = _scores(k=3, measures=("nDCG",))
    twin = s[s.system == "s0"].assign(system="s0-copy")
    both = pd.concat([s, twin])
    sw = swap_method(both, resamples=100)
    assert sw.bins.loc[0, "count"] > 0
    # only the identical pair has differences in bin 0 here; it never swaps
    sens = bootstrap_sensitivity(both, resamples=200)
    pair = sens.pairs[(sens.pairs.a == "s0") & (sens.pairs.b == "s0-copy")].iloc[0]
    assert pair["asl"] == 1.0
    twin_only = pd.concat([s[s.system == "s0"], twin])
    assert swap_method(twin_only, resamples=100).bins["swaps"].sum() == 0


def test_swap_method_does_not_count_identical_systems_as_told_apart():
    # issue 23 item 6: identical systems never swap, so the required difference is 0 and
    # their zero difference "reached" it: share_above 1.0
    s = _scores(k=3, measures=("nDCG",))
    copies = pd.concat([s[s.system == "s0"].assign(system=f"c{i}") for i in range(3)])
    summary = swap_method(copies, resamples=100).summary.iloc[0]
    assert (summary["pairs_above"], summary["share_above"]) == (0, 0.0)
    # two systems and a copy: the copy pair is never above, the other two may be
    mixed = pd.concat([s[s.system != "s2"], s[s.system == "s0"].assign(system="s0-copy")])
    assert swap_method(mixed, resamples=100).summary["pairs_above"].iloc[0] <= 2


def test_bootstrap_sensitivity_is_sakai_fig_7_literally():
    s = _scores(n_topics=20, k=3, measures=("AP",))
    b_res, alpha = 400, 0.05
    res = bootstrap_sensitivity(s, resamples=b_res, seed=8, alpha=alpha)
    x = s.pivot_table(index="topic", columns="system", values="value").to_numpy()
    draws = np.random.default_rng(8).integers(0, 20, (b_res, 20))
    diffs, asls = [], []
    for i, j in ((0, 1), (0, 2), (1, 2)):
        z = x[:, i] - x[:, j]
        t_z = z.mean() / (z.std(ddof=1) / np.sqrt(20))
        w = z - z.mean()
        t = np.array([w[q].mean() / (w[q].std(ddof=1) / np.sqrt(20)) for q in draws])
        m = np.array([w[q].mean() for q in draws])
        asls.append(np.mean(np.abs(t) >= abs(t_z)))
        k = np.argsort(-np.abs(t))[int(b_res * alpha) - 1]  # the B*alpha-th largest |t*|
        diffs.append(abs(m[k]))
    np.testing.assert_allclose(res.pairs["asl"], asls)
    np.testing.assert_allclose(res.pairs["required_diff"], diffs)
    summ = res.summary.iloc[0]
    assert summ["significant"] == sum(a < alpha for a in asls)
    assert summ["estimated_diff"] == float(f"{max(diffs):.2g}")


def test_discriminative_power_needs_a_complete_block():
    s = _scores(k=2, n_topics=3, measures=("AP",))
    s = s[~((s.system == "s1") & (s.topic != "t0"))]
    with pytest.raises(StatisticsError, match="scored for every system"):
        swap_method(s)


def test_fixed_seed_reproduces_exactly():
    s = _scores()
    a = swap_method(s, resamples=150, seed=3)
    b = swap_method(s, resamples=150, seed=3)
    pd.testing.assert_frame_equal(a.bins, b.bins)
    c = bootstrap_sensitivity(s, resamples=150, seed=3)
    d = bootstrap_sensitivity(s, resamples=150, seed=3)
    pd.testing.assert_frame_equal(c.pairs, d.pairs)


def _tau_ap_untied(ref, order):
    """tau_AP of the ranking ``order`` (indices, best first), straight from the formula."""
    n = len(order)
    total = 0.0
    for i in range(1, n):
        c = sum(
            1.0 if ref[order[j]] > ref[order[i]] else 0.5 if ref[order[j]] == ref[order[i]] else 0
            for j in range(i)
        )
        total += c / i
    return 2.0 / (n - 1) * total - 1.0


def test_tau_ap_ties_in_the_ranking_are_averaged_over_every_order():
    """Ties in `other`: the mean over all orders of each tied group, whatever the listing."""
    import itertools

    ref = [0.9, 0.3, 0.5, 0.7, 0.5, 0.1]
    other = [0.4, 0.8, 0.8, 0.4, 0.4, 0.2]  # groups {1, 2}, {0, 3, 4}, {5}
    groups = [[1, 2], [0, 3, 4], [5]]
    orders = [
        [i for part in parts for i in part]
        for parts in itertools.product(*(itertools.permutations(g) for g in groups))
    ]
    expected = np.mean([_tau_ap_untied(ref, o) for o in orders])
    assert tau_ap(ref, other) == pytest.approx(expected, abs=1e-12)
    perm = [5, 3, 1, 0, 4, 2]  # the same systems listed in another order
    assert tau_ap([ref[i] for i in perm], [other[i] for i in perm]) == pytest.approx(expected)
    # without ties it is the formula itself
    untied = [0.4, 0.8, 0.7, 0.3, 0.5, 0.2]
    order = list(np.argsort(-np.asarray(untied)))
    assert tau_ap(ref, untied) == pytest.approx(_tau_ap_untied(ref, order))

r"""Meta-evaluation: rank correlation between measures and the discriminative power of one.

Do two measures rank systems alike, and how discriminative is a measure?  Every
function takes the long score table of
:func:`sessionval.analysis.compare.compare_systems` (``system, topic, measure,
value``) and returns tidy tables.

:func:`rank_correlation` (Sakai 2007, section 4.1)
    Kendall's :math:`\tau = 2(pos - neg)/(n_s(n_s - 1))` between the system rankings
    (by mean score) of every pair of measures, its normal test
    :math:`Z_0 = |\tau| / \sqrt{(4n_s + 10)/(9 n_s (n_s - 1))}` and the AP rank
    correlation :math:`\tau_{AP}` of Yilmaz, Aslam & Robertson (2008), which weighs
    disagreements near the top of the ranking more.
:func:`swap_method` (Voorhees & Buckley 2002 as in Sakai 2007, section 4.2, Fig. 4)
    ``B`` pairs of bootstrap topic sets :math:`Q^{*b}, Q'^{*b}`; for every system pair
    the difference :math:`|D^{*b}|` on the first set is binned (21 bins of 0.01, the
    last :math:`\ge 0.20`) and counted as a swap when the second set disagrees: their
    signs differ.  (Fig. 4 tests :math:`D^{*b} D'^{*b} \le 0`, which also counts two
    exact ties as a swap, so that two identical systems would swap every time; here
    two ties agree.  On real scores the two rules differ only on exact ties.)  The
    swap rate per bin, the smallest difference from which every bin's swap rate is at
    most 5 %, and the share of system pairs whose observed difference reaches it.
:func:`bootstrap_sensitivity` (Sakai 2007, section 4.3, Fig. 7)
    Sakai's paired bootstrap test for every system pair: the discriminative power is
    the share of pairs with :math:`ASL < \alpha`; for each pair the difference
    :math:`|\bar w^{*b}|` of the resample whose :math:`|t(w^{*b})|` is the
    :math:`B\alpha`-th largest, and their maximum (two significant figures) is the
    difference required.

Both discriminative-power methods use the topics scored for every system (a complete
block), so every pair is measured on the same topic sets.

References
----------
Sakai (2007), IPSJ TOD 48(SIG9) [sakai2007]; Voorhees & Buckley (2002), SIGIR;
Yilmaz, Aslam & Robertson (2008), SIGIR [yilmaz2008].
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt
import pandas as pd

from .._types import FloatArray, IntArray
from ..errors import StatisticsError
from ..progress import ProgressLike, as_progress
from .multiple import ROUNDING, pair_indices
from .paired import bootstrap_counts, studentised_resamples
from .score_table import levels_in_order, score_matrix, system_means

__all__ = [
    "SensitivityResult",
    "SwapResult",
    "bootstrap_sensitivity",
    "kendall_tau",
    "rank_correlation",
    "ranking_agreement",
    "swap_method",
    "tau_ap",
    "tau_z0",
]

#: Sakai (2007) / Voorhees & Buckley (2002): 21 bins of 0.01, the last one open.
SWAP_BINS: Final = 21
SWAP_WIDTH: Final = 0.01


def kendall_tau(x: npt.ArrayLike, y: npt.ArrayLike) -> float:
    r"""Kendall's :math:`\tau = 2(pos - neg)/(n(n-1))` of two score vectors (Sakai 2007, eq. 8).

    ``pos`` counts the pairs of systems both vectors order alike, ``neg`` those they
    order oppositely; a pair tied in either vector counts in neither (this is
    :math:`\tau_a`; without ties it equals scipy's :math:`\tau_b`).

    Examples
    --------
    >>> kendall_tau([0.4, 0.3, 0.2, 0.1], [0.4, 0.2, 0.3, 0.1])
    0.666...
    """
    xv = np.asarray(x, dtype=np.float64)
    yv = np.asarray(y, dtype=np.float64)
    n = xv.size
    if n < 2 or yv.size != n:
        raise StatisticsError(
            f"Kendall's tau needs two vectors of >= 2 systems, got {n}, {yv.size}"
        )
    i, j = np.triu_indices(n, 1)
    s = np.sign(xv[i] - xv[j]) * np.sign(yv[i] - yv[j])
    return float(2.0 * s.sum() / (n * (n - 1)))


def tau_z0(tau: float, n: int) -> tuple[float, float]:
    r"""Sakai's (2007, eq. 9) normal test of a Kendall :math:`\tau` over ``n`` systems: ``(Z0, p)``.

    :math:`Z_0 = |\tau| / \sqrt{(4n + 10)/(9n(n-1))}`, two-sided p from the normal.

    Examples
    --------
    With 30 runs a correlation over 0.34 is significant at 0.01 (the paper's example):

    >>> z, p = tau_z0(0.34, 30)
    >>> round(z, 3), p < 0.01
    (2.639, True)
    """
    from scipy import stats

    if n < 2:
        return float("nan"), float("nan")
    z0 = abs(tau) / np.sqrt((4.0 * n + 10.0) / (9.0 * n * (n - 1.0)))
    return float(z0), float(2.0 * stats.norm.sf(z0))


def tau_ap(reference: npt.ArrayLike, other: npt.ArrayLike) -> float:
    r"""AP rank correlation of ``other``'s ranking against the ``reference`` ranking.

    :math:`\tau_{AP} = \frac{2}{n-1} \sum_{i=2}^{n} \frac{C(i)}{i - 1} - 1`, where the
    systems are taken in ``other``'s order (highest score first) and :math:`C(i)` counts
    the systems above position ``i`` that the reference also puts above it.  Yilmaz,
    Aslam & Robertson (2008); not symmetric.

    Ties (the paper defines :math:`\tau_{AP}` for rankings without ties):

    * in the **reference**, a system tied with the one at position ``i`` counts one half
      in :math:`C(i)` (neither agreement nor disagreement);
    * in ``other``, tied systems have no order, so :math:`\tau_{AP}` is its expectation
      over every order of each tied group (all equally likely): a system of a group of
      ``g`` systems starting at position ``p`` is at ``p + k`` with probability ``1/g``,
      with ``k`` of the other ``g - 1`` members above it, each one as likely as any
      other.  By linearity the expectation is exact, not sampled, and it does not
      depend on the order the systems are listed in (breaking the ties by that order
      gave -1 or 1 for a ranking that ties every system).

    Examples
    --------
    >>> tau_ap([4, 3, 2, 1], [4, 3, 2, 1]), tau_ap([4, 3, 2, 1], [1, 2, 3, 4])
    (1.0, -1.0)
    >>> round(tau_ap([4, 3, 2, 1], [3, 4, 2, 1]), 4)   # a swap at the top costs most
    0.3333
    >>> tau_ap([1, 2, 3], [5, 5, 5]), tau_ap([3, 2, 1], [5, 5, 5])  # no order: no agreement
    (0.0, 0.0)
    """
    ref = np.asarray(reference, dtype=np.float64)
    oth = np.asarray(other, dtype=np.float64)
    n = ref.size
    if n < 2 or oth.size != n:
        raise StatisticsError(f"tau_AP needs two vectors of >= 2 systems, got {n}, {oth.size}")
    order = np.argsort(-oth, kind="stable")
    r, o = ref[order], oth[order]
    # tied groups of `other`: start position and size of each system's group
    new_group = np.r_[True, o[1:] != o[:-1]]
    gid = np.cumsum(new_group) - 1
    starts = np.flatnonzero(new_group)
    sizes = np.diff(np.r_[starts, n])
    p, g = starts[gid], sizes[gid]
    # agree[i, j]: the reference puts j above i (a tie in the reference: one half)
    agree = (r[None, :] > r[:, None]).astype(np.float64) + 0.5 * (r[None, :] == r[:, None])
    same = gid[:, None] == gid[None, :]
    np.fill_diagonal(same, False)
    above_groups = (gid[None, :] < gid[:, None]).astype(np.float64)
    a_above = (agree * above_groups).sum(axis=1)
    a_mean = np.where(g > 1, (agree * same).sum(axis=1) / np.maximum(g - 1, 1), 0.0)
    expected = np.zeros(n)
    for k in range(int(g.max())):  # a system of a group of g is at p + k, k < g
        q = (p + k).astype(np.float64)
        live = (k < g) & (q >= 1)
        expected[live] += (a_above[live] + k * a_mean[live]) / q[live] / g[live]
    return float(2.0 / (n - 1) * expected.sum() - 1.0)


def _means_by_measure(scores: pd.DataFrame, measures: Sequence[str] | None) -> pd.DataFrame:
    """Systems × measures matrix of mean scores (each system's mean over its topics)."""
    means = system_means(scores)
    wide = means.pivot_table(index="system", columns="measure", values="mean", sort=False)
    wide = wide.reindex(index=levels_in_order(scores["system"]))
    wanted = list(measures) if measures is not None else levels_in_order(scores["measure"])
    missing = [m for m in wanted if m not in wide.columns]
    if missing:
        raise StatisticsError(f"no scores of measure(s) {missing}; measures: {list(wide.columns)}")
    return wide[wanted]


def rank_correlation(
    scores: pd.DataFrame, *, measures: Sequence[str] | None = None
) -> pd.DataFrame:
    """Kendall's tau, its Z0 test and tau_AP between the system rankings of every pair of measures.

    Systems are ranked by their mean score; a system without a mean on either measure
    is left out of that pair.

    Returns
    -------
    pandas.DataFrame
        ``measure_a, measure_b, n_systems, tau, z0, p, tau_ap`` (tau_AP of
        ``measure_b``'s ranking against ``measure_a``'s).
    """
    wide = _means_by_measure(scores, measures)
    cols = list(wide.columns)
    rows = []
    for i in range(len(cols)):
        for j in range(i + 1, len(cols)):
            pair = wide[[cols[i], cols[j]]].dropna()
            n = len(pair)
            if n < 2:
                rows.append((cols[i], cols[j], n, np.nan, np.nan, np.nan, np.nan))
                continue
            x, y = pair.iloc[:, 0].to_numpy(), pair.iloc[:, 1].to_numpy()
            tau = kendall_tau(x, y)
            z0, p = tau_z0(tau, n)
            rows.append((cols[i], cols[j], n, tau, z0, p, tau_ap(x, y)))
    return pd.DataFrame(
        rows, columns=["measure_a", "measure_b", "n_systems", "tau", "z0", "p", "tau_ap"]
    )


def ranking_agreement(
    reference: pd.DataFrame, other: pd.DataFrame, *, measures: Sequence[str] | None = None
) -> pd.DataFrame:
    """Kendall's tau and tau_AP of each measure's system ranking under ``other`` vs ``reference``.

    Returns
    -------
    pandas.DataFrame
        ``measure, n_systems, tau, z0, p, tau_ap`` (tau_AP against the reference).
    """
    ref = _means_by_measure(reference, measures)
    oth = _means_by_measure(other, list(ref.columns)).reindex(ref.index)
    rows = []
    for m in ref.columns:
        pair = pd.concat([ref[m], oth[m]], axis=1).dropna()
        n = len(pair)
        if n < 2:
            rows.append((m, n, np.nan, np.nan, np.nan, np.nan))
            continue
        x, y = pair.iloc[:, 0].to_numpy(), pair.iloc[:, 1].to_numpy()
        tau = kendall_tau(x, y)
        rows.append((m, n, tau, *tau_z0(tau, n), tau_ap(x, y)))
    return pd.DataFrame(rows, columns=["measure", "n_systems", "tau", "z0", "p", "tau_ap"])


def _blocks_by_measure(
    scores: pd.DataFrame,
    measures: Sequence[str] | None,
    resamples: int,
    progress: ProgressLike = None,
    phase: str = "",
) -> Iterator[tuple[str, FloatArray, list[str], IntArray, IntArray]]:
    """Per measure: the complete block (topics scored for every system), names and pairs.

    ``progress`` is started on ``phase`` at the first block, with every measure's pairs
    as its total (the caller advances it), and finished after the last.
    """
    if resamples < 1:
        raise StatisticsError(f"resamples must be >= 1, got {resamples}")
    wanted = list(measures) if measures is not None else levels_in_order(scores["measure"])
    shown = as_progress(progress)
    for i, m in enumerate(wanted):
        x, names, _ = score_matrix(scores, m)
        xb = x[~np.isnan(x).any(axis=1)]
        if xb.shape[0] < 2 or xb.shape[1] < 2:
            raise StatisticsError(
                f"{m}: discriminative power needs >= 2 systems and >= 2 topics scored for "
                f"every system, got {xb.shape[1]} systems and {xb.shape[0]} such topics"
            )
        a, b = pair_indices(xb.shape[1])
        if i == 0:  # every measure's block has the same systems, so the same pairs
            shown.start(phase, len(wanted) * a.size, "pairs")
        yield m, xb, names, a, b
    shown.finish()


@dataclass(frozen=True)
class SwapResult:
    """Result of :func:`swap_method`.

    Attributes
    ----------
    summary
        Per measure: ``measure, n_topics, n_systems, n_pairs, resamples,
        required_diff, pairs_above, share_above`` (the difference from which the swap
        rate stays at most ``max_swap_rate``, and the system pairs whose observed
        difference reaches it; a pair without a difference never does, even when the
        required difference is 0).
    bins
        Per measure and bin: ``measure, bin, low, high, count, swaps, swap_rate``
        (``high`` is infinite for the last bin): the swap-rate curve.
    """

    summary: pd.DataFrame
    bins: pd.DataFrame


def swap_method(
    scores: pd.DataFrame,
    *,
    measures: Sequence[str] | None = None,
    resamples: int = 1000,
    seed: int = 0,
    bins: int = SWAP_BINS,
    width: float = SWAP_WIDTH,
    max_swap_rate: float = 0.05,
    progress: ProgressLike = None,
) -> SwapResult:
    """The swap method of Voorhees & Buckley, sampling with replacement (Sakai 2007, Fig. 4).

    Parameters
    ----------
    scores
        Long score table.
    measures
        Measures to assess (default: all).
    resamples
        ``B`` pairs of bootstrap topic sets (the paper: 1000).
    seed
        Seed of the topic samples (the same for every measure).
    bins, width
        Difference bins: ``bins - 1`` of ``width``, the last one open (21 × 0.01).
    max_swap_rate
        The swap rate a difference must keep to (5 %).
    progress
        Told the system pairs done over every measure, each with its ``resamples``
        (:class:`~sessionval.progress.Progress`).

    Returns
    -------
    SwapResult
    """
    summaries, curves = [], []
    shown = as_progress(progress)
    phase = f"swap method ({resamples} resamples)"
    for m, x, _, a, b in _blocks_by_measure(scores, measures, resamples, shown, phase):
        n, k = x.shape
        rng = np.random.default_rng(seed)
        m1 = bootstrap_counts(n, resamples, rng) @ x / n  # M(X, Q*b) for every system
        m2 = bootstrap_counts(n, resamples, rng) @ x / n  # M(X, Q'*b)
        count = np.zeros(bins, dtype=np.int64)
        swaps = np.zeros(bins, dtype=np.int64)
        for s in range(0, a.size, 256):
            sa, sb = a[s : s + 256], b[s : s + 256]
            d1 = m1[:, sa] - m1[:, sb]
            d2 = m2[:, sa] - m2[:, sb]
            # bin of |D|; a hair of tolerance so 0.03 computed as 0.0299999 lands in bin 3
            which = np.minimum(np.floor(np.abs(d1) / width + 1e-9), bins - 1).astype(np.int64)
            count += np.bincount(which.ravel(), minlength=bins)
            # a swap: the two topic sets disagree (Fig. 4's D * D' <= 0, except that two
            # exact ties agree, so identical systems never swap)
            swaps += np.bincount(which[np.sign(d1) != np.sign(d2)], minlength=bins)
            shown.advance(sa.size)
        with np.errstate(invalid="ignore", divide="ignore"):
            rate = np.where(count > 0, swaps / np.maximum(count, 1), np.nan)
        low = np.arange(bins, dtype=np.float64) * width
        high = np.append(low[1:], np.inf)
        curves.append(
            pd.DataFrame(
                {
                    "measure": m,
                    "bin": np.arange(bins),
                    "low": low,
                    "high": high,
                    "count": count,
                    "swaps": swaps,
                    "swap_rate": rate,
                }
            )
        )
        required = _required_difference(low, rate, max_swap_rate)
        observed = np.abs(x.mean(axis=0)[a] - x.mean(axis=0)[b])
        # a pair without a difference (beyond rounding) is not told apart at any required
        # difference, not even 0 (identical systems never swap, so every bin passes)
        differs = observed > ROUNDING * float(np.abs(x).max())
        reached = differs & (observed >= required - 1e-12)
        above = int(np.count_nonzero(reached)) if np.isfinite(required) else 0
        summaries.append((m, n, k, a.size, resamples, required, above, above / a.size))
    summary = pd.DataFrame(
        summaries,
        columns=[
            "measure",
            "n_topics",
            "n_systems",
            "n_pairs",
            "resamples",
            "required_diff",
            "pairs_above",
            "share_above",
        ],
    )
    return SwapResult(summary=summary, bins=pd.concat(curves, ignore_index=True))


def _required_difference(low: FloatArray, rate: FloatArray, max_rate: float) -> float:
    """Lower edge of the first bin from which every (non-empty) bin's swap rate is <= max_rate."""
    bad = np.flatnonzero(~np.isnan(rate) & (rate > max_rate))
    first = 0 if bad.size == 0 else int(bad[-1]) + 1
    if first >= low.size:
        return float("nan")
    return float(np.round(low[first], 10))


@dataclass(frozen=True)
class SensitivityResult:
    """Result of :func:`bootstrap_sensitivity`.

    Attributes
    ----------
    summary
        Per measure: ``measure, n_topics, n_systems, n_pairs, resamples, alpha,
        significant, sensitivity, estimated_diff`` (pairs with ASL < α, their share,
        and the difference required, two significant figures).
    pairs
        Per measure and pair: ``measure, a, b, diff, asl, required_diff`` (the ASL
        curve is ``asl`` sorted).
    """

    summary: pd.DataFrame
    pairs: pd.DataFrame


def bootstrap_sensitivity(
    scores: pd.DataFrame,
    *,
    measures: Sequence[str] | None = None,
    resamples: int = 1000,
    seed: int = 0,
    alpha: float = 0.05,
    progress: ProgressLike = None,
) -> SensitivityResult:
    """Sakai's Bootstrap Sensitivity Method with the paired test (2007, section 4.3, Fig. 7).

    Parameters
    ----------
    scores
        Long score table.
    measures
        Measures to assess (default: all).
    resamples
        ``B`` (the paper: 1000).
    seed
        Seed of the topic samples (the same for every measure).
    alpha
        Significance level (the paper: 0.05).
    progress
        Told the system pairs done over every measure, each with its ``resamples``
        (:class:`~sessionval.progress.Progress`).

    Returns
    -------
    SensitivityResult
    """
    if not 0.0 < alpha < 1.0:
        raise StatisticsError(f"alpha must be in (0, 1), got {alpha}")
    k_th = round(resamples * alpha)  # the B*alpha-th largest |t*|
    summaries, tables = [], []
    shown = as_progress(progress)
    phase = f"bootstrap sensitivity ({resamples} resamples)"
    for m, x, names, a, b in _blocks_by_measure(scores, measures, resamples, shown, phase):
        n, k = x.shape
        counts = bootstrap_counts(n, resamples, np.random.default_rng(seed))
        z = x[:, a] - x[:, b]
        zbar = z.mean(axis=0)
        with np.errstate(invalid="ignore", divide="ignore"):
            t_obs = np.abs(zbar / (z.std(axis=0, ddof=1) / np.sqrt(n)))
        asl = np.full(a.size, np.nan)
        need = np.full(a.size, np.nan)
        for sl, t_star, mean_star in studentised_resamples(x, a, b, counts):
            t_abs = np.abs(t_star)
            asl[sl] = np.count_nonzero(t_abs >= t_obs[sl], axis=0) / resamples
            if k_th >= 1:
                ranked = np.where(np.isnan(t_abs), -np.inf, t_abs)
                at = np.argpartition(-ranked, k_th - 1, axis=0)[k_th - 1]
                need[sl] = np.abs(mean_star[at, np.arange(at.size)])
            shown.advance(t_abs.shape[1])
        # all-zero differences: no evidence against H0 (as in the paired test)
        asl[np.all(z == 0, axis=0)] = 1.0
        sig = int(np.count_nonzero(asl < alpha))
        top = float(np.nanmax(need)) if np.isfinite(need).any() else float("nan")
        summaries.append(
            (m, n, k, a.size, resamples, alpha, sig, sig / a.size, _two_significant(top))
        )
        tables.append(
            pd.DataFrame(
                {
                    "measure": m,
                    "a": [names[i] for i in a],
                    "b": [names[i] for i in b],
                    "diff": zbar,
                    "asl": asl,
                    "required_diff": need,
                }
            )
        )
    summary = pd.DataFrame(
        summaries,
        columns=[
            "measure",
            "n_topics",
            "n_systems",
            "n_pairs",
            "resamples",
            "alpha",
            "significant",
            "sensitivity",
            "estimated_diff",
        ],
    )
    return SensitivityResult(summary=summary, pairs=pd.concat(tables, ignore_index=True))


def _two_significant(v: float) -> float:
    """Round to two significant figures (Fig. 7: "rounded to two significant figures").

    Examples
    --------
    >>> _two_significant(0.18372), _two_significant(0.0)
    (0.18, 0.0)
    """
    if not np.isfinite(v) or v == 0:
        return v
    return float(round(v, 1 - int(np.floor(np.log10(abs(v))))))

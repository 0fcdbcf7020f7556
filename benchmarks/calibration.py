"""Calibration of the comparison of systems: simulated studies of known truth.

Not a test (``tests/analysis/test_calibration.py`` runs the same cells with 400
simulations).  For each design and test, draws ``--sims`` null studies (no system
effect) and ``--sims`` studies with a true difference ``--effect`` between the two
systems (:func:`sessionval.synth.simulate_scores`), analyses them with
:func:`sessionval.analysis.by_design.compare_per_session` as ``sessionval run`` does,
and prints the Markdown table of ``docs/statistics.md``: the type I error at alpha
with its 95 % Clopper-Pearson interval, whether the number of rejections lies in the
two-sided 99.9 % binomial interval of alpha, the power, and the mean estimate of the
difference (``a - b = S1 - S2``, so ``-effect`` is unbiased).

    python benchmarks/calibration.py --sims 2000 --seed 2026
    python benchmarks/calibration.py --sims 2000 --seed 2026 --topic-sd 0.2 --only Latin
"""

from __future__ import annotations

import argparse
import time
from typing import Any


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--sims", type=int, default=2000, help="simulations per cell and truth")
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--effect", type=float, default=0.1, help="true difference S2 - S1")
    ap.add_argument("--alpha", type=float, default=0.05)
    ap.add_argument("--searcher-sd", type=float, default=0.1)
    ap.add_argument("--topic-sd", type=float, default=0.1)
    ap.add_argument("--noise-sd", type=float, default=0.12)
    ap.add_argument("--period-sd", type=float, default=0.05, help="order effect, Latin squares")
    ap.add_argument("--only", default="", help="only the designs whose label contains this")
    args = ap.parse_args()

    from scipy.stats import binom, binomtest

    from sessionval.analysis.by_design import compare_per_session
    from sessionval.synth import simulate_scores

    sds = {"searcher_sd": args.searcher_sd, "topic_sd": args.topic_sd, "noise_sd": args.noise_sd}
    latin = {"n_searchers": 30, "n_topics": 4, "period_sd": args.period_sd}
    crossed = {"topics": "crossed", "n_searchers": 20, "n_topics": 4}
    between = {"design": "between", "n_searchers": 30, "n_topics": 4}
    by_topic = {"design": "by_topic", "n_topics": 30}
    # (design label, layout, analysis label, compare_per_session options)
    cells: list[tuple[str, dict[str, Any], str, dict[str, Any]]] = [
        ("Latin square, 30 searchers × 4 topics", latin, "blocks model (auto)", {}),
        (
            "Latin square, 30 searchers × 4 topics",
            latin,
            "paired t on searcher means (naive)",
            {"block": "searcher"},
        ),
        (
            "Latin square, 30 searchers × 4 topics",
            latin,
            "Wilcoxon on searcher means (naive)",
            {"block": "searcher", "test": "wilcoxon"},
        ),
        (
            "Latin square, 3 systems, 30 searchers × 6 topics",
            {**latin, "n_systems": 3, "n_topics": 6},
            "blocks model (auto), S1 vs S2",
            {"correction": "none"},
        ),
        ("within, crossed, 20 searchers × 4 topics × 2 systems", crossed, "paired t (auto)", {}),
        (
            "within, crossed, 20 searchers × 4 topics × 2 systems",
            crossed,
            "Wilcoxon",
            {"test": "wilcoxon"},
        ),
        ("between, 30 searchers (15 per system) × 4 topics", between, "Welch t (auto)", {}),
        ("by topic, 30 topics", by_topic, "paired t (auto)", {}),
        ("by topic, 30 topics", by_topic, "Wilcoxon", {"test": "wilcoxon"}),
        ("by topic, 30 topics", by_topic, "sign", {"test": "sign"}),
    ]
    cells = [c for c in cells if args.only in c[0]]
    low, high = binom.interval(0.999, args.sims, args.alpha)
    print(
        f"{args.sims} simulations per cell and truth, seed {args.seed}, alpha {args.alpha}; "
        f"SDs: searcher {args.searcher_sd}, topic {args.topic_sd}, noise {args.noise_sd}, "
        f"period {args.period_sd} (Latin squares); effect {args.effect}; 99.9 % binomial "
        f"bounds of alpha: {int(low)}..{int(high)} rejections\n"
    )
    print(
        "| design | analysis (test) | type I error [95 % CI] | within bounds | power "
        f"at {args.effect} | mean a − b |"
    )
    print("|---|---|---|---|---|---|")
    started = time.perf_counter()
    for k, (design, layout, label, options) in enumerate(cells):
        rates = []
        for truth, effect in enumerate((0.0, args.effect)):
            study = simulate_scores(
                **sds,
                **layout,
                system_effect=effect,
                replicates=args.sims,
                seed=args.seed + 100 * k + truth,
            )
            r = compare_per_session(study, measures=study.attrs["measures"], **options)
            r = r[(r["a"] == "S1") & (r["b"] == "S2")]
            rejected = int((r["p"] < args.alpha).sum())
            rates.append((rejected, r["diff"].mean(), r["test"].iloc[0]))
        (k0, _, test), (k1, diff, _) = rates
        ci = binomtest(k0, args.sims).proportion_ci(0.95)
        ok = "yes" if low <= k0 <= high else ("no (conservative)" if k0 < low else "no (liberal)")
        print(
            f"| {design} | {label} (`{test}`) | {k0 / args.sims:.3f} [{ci.low:.3f}, "
            f"{ci.high:.3f}] | {ok} | {k1 / args.sims:.3f} | {diff:+.4f} |"
        )
    print(f"\n{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()

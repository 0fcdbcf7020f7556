"""The mixed model's size threshold: statsmodels' dense REML fit against the fallback.

Not a test.  Simulates within-searcher studies (searcher and topic effects, two systems
alternating) of growing size and times :func:`sessionval.analysis.mixed.mixed_model`
with the REML fit forced (``max_cells`` unlimited) and with the ``ols-cluster``
fallback, with the peak memory Python allocated.  The threshold
``sessionval.analysis.mixed.MAX_DESIGN_CELLS`` was chosen from its output.

    python benchmarks/bench_mixed.py 100x20x10 300x50x10 1000x100x10

Each argument is ``searchers x topics x sessions per searcher``.
"""

from __future__ import annotations

import sys
import time
import tracemalloc

import numpy as np
import pandas as pd

from sessionval.analysis.mixed import mixed_model


def study(n_searchers: int, n_topics: int, per_searcher: int, seed: int = 0) -> pd.DataFrame:
    """A within-searcher study with a system effect of 0.05."""
    rng = np.random.default_rng(seed)
    u = np.repeat(np.arange(n_searchers), per_searcher)
    t = rng.integers(0, n_topics, u.size)
    s = (np.arange(u.size) + u) % 2
    y = (
        0.4
        + 0.05 * s
        + rng.normal(0, 0.15, n_searchers)[u]
        + rng.normal(0, 0.1, n_topics)[t]
        + rng.normal(0, 0.1, u.size)
    )
    return pd.DataFrame(
        {
            "user_id": u.astype(str),
            "topic_id": t.astype(str),
            "system_id": np.where(s == 1, "B", "A"),
            "nsdcg": y,
        }
    )


def main(sizes: list[str]) -> None:
    mixed_model(study(10, 2, 4), measures=["nsdcg"])  # imports out of the timings
    for size in sizes:
        n_u, n_t, per = (int(v) for v in size.split("x"))
        ps = study(n_u, n_t, per)
        cells = len(ps) * (n_u + n_t)
        for label, limit in (("reml", 10**12), ("ols-cluster", 0)):
            tracemalloc.start()
            t0 = time.perf_counter()
            mixed_model(ps, measures=["nsdcg"], max_cells=limit)
            seconds = time.perf_counter() - t0
            peak = tracemalloc.get_traced_memory()[1] / 1e6
            tracemalloc.stop()
            print(
                f"{n_u} searchers x {n_t} topics, {len(ps):,} sessions ({cells:,} cells), "
                f"{label}: {seconds:.2f} s, peak {peak:.0f} MB",
                flush=True,
            )


if __name__ == "__main__":
    main(sys.argv[1:] or ["100x20x10", "300x50x10"])

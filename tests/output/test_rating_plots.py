"""The rating scatter at scale: rasterised points above the threshold, vector below."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import numpy as np
import pandas as pd

from sessionval.output import plots, rating_plots


def _sessions(n: int, seed: int = 5) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "nsdcg": rng.random(n),
            "sdcg": rng.random(n) * 10,
            "rating_satisfaction": rng.integers(1, 6, n).astype(float),
            "rating_difficulty": rng.integers(1, 6, n).astype(float),
        }
    )


def _draw(n: int):
    return plots.plot_rating_scatter(
        _sessions(n),
        measures=["nsdcg", "sdcg"],
        ratings=["rating_satisfaction", "rating_difficulty"],
    )


def test_a_large_study_rasterises_the_points_and_keeps_the_files_small(tmp_path):
    n = 4 * rating_plots.RASTER_POINTS
    fig = _draw(n)
    points = [ax.collections[0] for ax in fig.axes]
    assert all(p.get_rasterized() for p in points)
    assert all(len(p.get_offsets()) == n for p in points)  # every session still drawn
    files = {p.suffix: p for p in plots.save_figure(fig, tmp_path / "rating_correlations")}
    svg = files[".svg"].read_text(encoding="utf-8")
    # one embedded image per panel instead of one element per session; text stays vector
    assert svg.count("<image") == 4
    assert svg.count("<use") < 200
    for path in files.values():
        assert path.stat().st_size < 2_000_000, path
    # the means stay a vector line
    assert all(not ax.get_lines()[0].get_rasterized() for ax in fig.axes)


def test_a_small_study_keeps_one_vector_point_per_session(tmp_path):
    n = 60
    fig = _draw(n)
    assert not any(ax.collections[0].get_rasterized() for ax in fig.axes)
    (svg,) = plots.save_figure(fig, tmp_path / "rating_correlations", formats=("svg",))
    text = svg.read_text(encoding="utf-8")
    assert "<image" not in text
    assert text.count("<use") >= 4 * n


def test_the_threshold_counts_the_points_a_panel_draws():
    # missing ratings are not drawn, so they do not count toward the threshold
    n = rating_plots.RASTER_POINTS + 10
    table = _sessions(n)
    table.loc[:20, "rating_difficulty"] = np.nan
    fig = plots.plot_rating_scatter(
        table, measures=["nsdcg"], ratings=["rating_satisfaction", "rating_difficulty"]
    )
    sat, diff = fig.axes
    assert sat.collections[0].get_rasterized() and not diff.collections[0].get_rasterized()

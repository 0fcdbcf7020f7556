"""The rating figure at scale: points below the threshold, a 2-D histogram per panel above it."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import numpy as np
import pandas as pd
import pytest
from matplotlib.collections import PathCollection, QuadMesh

from sessionval.errors import SessionvalError
from sessionval.output import plots, rating_plots

MEASURES = ["nsdcg", "sdcg"]
RATINGS = ["rating_satisfaction", "rating_difficulty"]


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


def _draw(n: int, **kw):
    return plots.plot_rating_scatter(_sessions(n), measures=MEASURES, ratings=RATINGS, **kw)


def _panels(fig):
    """The four panels (the colour bar, when there is one, is the last axes)."""
    return [ax for ax in fig.axes if ax.get_label() != "<colorbar>"]


def test_a_large_study_draws_a_histogram_per_panel_and_keeps_the_files_small(tmp_path):
    n = 4 * rating_plots.DENSITY_POINTS
    fig = _draw(n)
    panels = _panels(fig)
    assert len(panels) == 4 and len(fig.axes) == 5  # one colour bar for the figure
    for ax in panels:
        (mesh,) = [c for c in ax.collections if isinstance(c, QuadMesh)]
        assert not [c for c in ax.collections if isinstance(c, PathCollection)]
        assert int(mesh.get_array().sum()) == n  # every session in one cell
        assert mesh.get_array().shape[1] == 5  # a column per rating level
        assert not ax.get_lines()[0].get_rasterized()  # the means stay a vector line
    assert "2-D histograms" in fig.get_suptitle()
    files = {p.suffix: p for p in plots.save_figure(fig, tmp_path / "rating_correlations")}
    svg = files[".svg"].read_text(encoding="utf-8")
    # vector cells, no point per session; the one image is the colour bar's gradient
    assert svg.count("<image") == 1 and svg.count("<use") < 500  # glyphs, not sessions
    for path in files.values():
        assert path.stat().st_size < 500_000, path


def test_the_cost_of_a_dense_figure_does_not_grow_with_the_sessions(tmp_path):
    sizes = []
    for n in (2 * rating_plots.DENSITY_POINTS, 20 * rating_plots.DENSITY_POINTS):
        (svg,) = plots.save_figure(_draw(n), tmp_path / f"r{n}", formats=("svg",))
        sizes.append(svg.stat().st_size)
    assert sizes[1] < 1.2 * sizes[0]


def test_a_raised_threshold_draws_the_points_rasterised_above_raster_points(tmp_path):
    n = 4 * rating_plots.RASTER_POINTS
    fig = _draw(n, density_points=10 * n)
    points = [ax.collections[0] for ax in _panels(fig)]
    assert len(fig.axes) == 4  # no histogram, no colour bar
    assert all(p.get_rasterized() for p in points)
    assert all(len(p.get_offsets()) == n for p in points)  # every session still drawn
    files = {p.suffix: p for p in plots.save_figure(fig, tmp_path / "rating_correlations")}
    svg = files[".svg"].read_text(encoding="utf-8")
    # one embedded image per panel instead of one element per session; text stays vector
    assert svg.count("<image") == 4
    for path in files.values():
        assert path.stat().st_size < 2_000_000, path


def test_a_small_study_keeps_one_vector_point_per_session(tmp_path):
    n = 60
    fig = _draw(n)
    assert len(fig.axes) == 4
    assert not any(ax.collections[0].get_rasterized() for ax in fig.axes)
    assert "histogram" not in fig.get_suptitle()
    (svg,) = plots.save_figure(fig, tmp_path / "rating_correlations", formats=("svg",))
    text = svg.read_text(encoding="utf-8")
    assert "<image" not in text
    assert text.count("<use") >= 4 * n


def test_the_threshold_counts_the_points_a_panel_draws():
    # missing ratings are not drawn, so they do not count toward the threshold
    n = 110
    table = _sessions(n)
    table.loc[:20, "rating_difficulty"] = np.nan
    fig = plots.plot_rating_scatter(table, measures=["nsdcg"], ratings=RATINGS, density_points=100)
    sat, diff = _panels(fig)
    assert isinstance(sat.collections[0], QuadMesh)
    assert isinstance(diff.collections[0], PathCollection)
    assert len(diff.collections[0].get_offsets()) == n - 21
    sizes = rating_plots.panel_sizes(table, ["nsdcg"], RATINGS)
    assert sizes.tolist() == [[n, n - 21]]


def test_density_counts_bins_levels_apart_and_cuts_a_continuous_range():
    rng = np.random.default_rng(0)
    x = rng.integers(1, 8, 1000).astype(float)  # a 1-7 rating: a bin per level
    y = rng.normal(size=1000)  # a score: BINS equal bins over its range
    xe, ye, counts = rating_plots.density_counts(x, y)
    assert np.allclose((xe[1:] + xe[:-1]) / 2, np.arange(1, 8))
    assert ye.size == rating_plots.BINS + 1 and ye[0] == y.min() and ye[-1] == y.max()
    assert counts.shape == (7, rating_plots.BINS) and counts.sum() == 1000
    assert counts.sum(axis=1).tolist() == np.bincount(x.astype(int))[1:].tolist()
    # a constant variable is one bin around its value
    xe, ye, counts = rating_plots.density_counts(np.full(3, 2.0), np.array([0.0, 1.0, 2.0]))
    assert xe.tolist() == [1.5, 2.5] and counts.tolist() == [[1, 1, 1]]


def test_a_threshold_below_one_is_refused():
    with pytest.raises(SessionvalError, match="density_points must be >= 1, got 0"):
        _draw(10, density_points=0)

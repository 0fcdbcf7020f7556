"""Session measures against the searchers' ratings (Jiang & Allan 2016), one panel per pair.

Every session is a point, so the figure would grow with the study.  A panel of at most
``density_points`` sessions (:data:`DENSITY_POINTS`; ``[figures] density_points`` in a
run) draws each as a point, as a small study always has; a larger panel draws a 2-D
histogram of them instead (:func:`density_counts`: the sessions per cell of a grid,
coloured on a log scale shared by every panel, with one colour bar), so the figure costs
the same to draw and to store at any size.  A scatter of more than :data:`RASTER_POINTS`
points (``density_points`` raised above it) is drawn as one image inside the SVG and
PDF (matplotlib's ``rasterized``).  The axes, the text and the line of means stay vector.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Final

import numpy as np
import pandas as pd

from .._types import FloatArray, IntArray
from ..errors import SessionvalError
from .figure_style import FONT, PALETTE, notebook_display, plain_text, require_columns
from .parameters import params_text

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = [
    "DENSITY_POINTS",
    "RASTER_POINTS",
    "density_counts",
    "panel_sizes",
    "plot_rating_scatter",
]

#: Points of one panel above which the scatter is an image inside a vector file: below
#: it each point stays a vector element (editable, exact in print).
RASTER_POINTS: Final = 5_000
#: Sessions of one panel above which it draws a 2-D histogram instead of the points.
DENSITY_POINTS: Final = 5_000
#: Values of a variable up to which each distinct value gets its own bin (a Likert
#: rating, a count of queries); a variable of more values is cut into :data:`BINS`.
MAX_LEVELS: Final = 30
#: Equal-width bins of a variable of more than :data:`MAX_LEVELS` distinct values.
BINS: Final = 40
#: Opacity of a point: dense panels lighter, so where the sessions pile up shows.
_ALPHA: Final = {"vector": 0.45, "raster": 0.12}


def panel_sizes(
    per_session: pd.DataFrame, measures: Sequence[str], ratings: Sequence[str]
) -> IntArray:
    """Sessions drawn in each panel (both values present): ``len(measures) × len(ratings)``."""
    y = ~per_session.loc[:, list(measures)].isna().to_numpy()
    x = ~per_session.loc[:, list(ratings)].isna().to_numpy()
    return (y.astype(np.int64).T @ x.astype(np.int64)).astype(np.int64)


def _edges(values: FloatArray) -> FloatArray:
    """Bin edges of one variable: a bin per distinct value, or :data:`BINS` equal ones.

    With at most :data:`MAX_LEVELS` distinct values each is the centre of its own bin
    (edges halfway between neighbours, the outer ones as far out as the nearest gap),
    so a 1-5 rating draws five columns; otherwise the range is cut into equal bins.
    """
    levels = np.unique(values)
    if levels.size == 1:
        return np.array([levels[0] - 0.5, levels[0] + 0.5])
    if levels.size <= MAX_LEVELS:
        half = np.diff(levels).min() / 2
        mid = (levels[1:] + levels[:-1]) / 2
        return np.concatenate([[levels[0] - half], mid, [levels[-1] + half]])
    return np.linspace(levels[0], levels[-1], BINS + 1)


def density_counts(x: FloatArray, y: FloatArray) -> tuple[FloatArray, FloatArray, IntArray]:
    """The 2-D histogram of a dense panel: x edges, y edges and sessions per cell.

    Parameters
    ----------
    x, y
        The rating and the measure of each session (no NaN).

    Returns
    -------
    tuple
        ``(x_edges, y_edges, counts)``, ``counts[i, j]`` the sessions with ``x`` in the
        i-th and ``y`` in the j-th bin (:func:`_edges`; the last bin holds its upper edge).

    Examples
    --------
    >>> xe, ye, c = density_counts(np.array([1.0, 1, 2, 3]), np.array([0.0, 0, 1, 1]))
    >>> xe.tolist(), ye.tolist(), c.tolist()
    ([0.5, 1.5, 2.5, 3.5], [-0.5, 0.5, 1.5], [[2, 0], [0, 1], [0, 1]])
    """
    xe, ye = _edges(x), _edges(y)
    nx, ny = xe.size - 1, ye.size - 1
    ix = np.clip(np.searchsorted(xe, x, side="right") - 1, 0, nx - 1)
    iy = np.clip(np.searchsorted(ye, y, side="right") - 1, 0, ny - 1)
    counts = np.bincount(ix * ny + iy, minlength=nx * ny).reshape(nx, ny)
    return xe, ye, counts.astype(np.int64)


def plot_rating_scatter(
    per_session: pd.DataFrame,
    *,
    measures: Sequence[str],
    ratings: Sequence[str],
    correlations: pd.DataFrame | None = None,
    params: Mapping[str, object] | None = None,
    panel: tuple[float, float] = (1.9, 1.6),
    density_points: int = DENSITY_POINTS,
) -> Figure:
    """Each measure (rows) against each rating (columns), one panel per pair.

    A panel of at most ``density_points`` sessions draws each session as a point at
    (its rating, its score); a larger one draws their 2-D histogram
    (:func:`density_counts`; colour: sessions per cell, log scale, one colour bar for
    the figure), so the figure costs the same at any size.  A black line joins the
    mean score of each rating level.  A scatter of more than :data:`RASTER_POINTS`
    points is rasterised and lighter.  With ``correlations``
    (:func:`sessionval.analysis.correlations.rating_correlations`) each panel's title
    gives Spearman's rho and Kendall's tau.

    Parameters
    ----------
    per_session
        One row per session with the measure and rating columns.
    measures, ratings
        Columns to plot.
    correlations
        Optional tidy correlation table (``measure, rating, spearman_rho, kendall_tau``).
    params
        Parameters behind the numbers, shown in the figure's title.
    panel
        Size of one panel, in inches.
    density_points
        Sessions of a panel above which it draws the histogram instead of the points.

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    SessionvalError
        No measure or no rating, a column missing, or ``density_points`` below 1.
    """
    require_columns(per_session, [*measures, *ratings], "plot_rating_scatter")
    if not measures or not ratings:
        raise SessionvalError("plot_rating_scatter: give at least one measure and one rating")
    if density_points < 1:
        raise SessionvalError(
            f"plot_rating_scatter: density_points must be >= 1, got {density_points}"
        )
    from matplotlib.colors import LogNorm
    from matplotlib.figure import Figure

    notebook_display()
    fig = Figure(figsize=(panel[0] * len(ratings), panel[1] * len(measures)), layout="constrained")
    axes = fig.subplots(len(measures), len(ratings), squeeze=False)
    rho: dict[tuple[str, str], tuple[float, float]] = {}
    if correlations is not None:
        for row in correlations.itertuples(index=False):
            rho[(str(row.measure), str(row.rating))] = (
                float(row.spearman_rho),  # type: ignore[arg-type]
                float(row.kendall_tau),  # type: ignore[arg-type]
            )
    xs = {r: per_session[r].to_numpy(dtype=np.float64, na_value=np.nan) for r in ratings}
    ys = {m: per_session[m].to_numpy(dtype=np.float64, na_value=np.nan) for m in measures}
    dense: dict[tuple[int, int], tuple[FloatArray, FloatArray, IntArray]] = {}
    for i, m in enumerate(measures):
        for j, r in enumerate(ratings):
            x, y = xs[r], ys[m]
            ok = ~(np.isnan(x) | np.isnan(y))
            if int(ok.sum()) > density_points:
                dense[(i, j)] = density_counts(x[ok], y[ok])
            else:
                _scatter(axes[i, j], x[ok], y[ok])
            if ok.any():
                means = pd.Series(y[ok]).groupby(x[ok]).mean()
                axes[i, j].plot(means.index, means.to_numpy(), color=PALETTE[-1], linewidth=0.9)
    if dense:
        # one colour scale for every panel, so equal colours mean equal numbers of sessions
        norm = LogNorm(vmin=1, vmax=max(2, max(int(c.max()) for *_, c in dense.values())))
        for (i, j), (xe, ye, counts) in dense.items():
            shown = np.ma.masked_equal(counts.T, 0)  # an empty cell stays white
            mesh = axes[i, j].pcolormesh(xe, ye, shown, cmap="Blues", norm=norm, zorder=0)
        bar = fig.colorbar(mesh, ax=axes, shrink=0.6, aspect=30, pad=0.02)
        bar.set_label("sessions per cell", fontsize=FONT["tick"])
        bar.ax.tick_params(labelsize=FONT["tick"])
    for i, m in enumerate(measures):
        for j, r in enumerate(ratings):
            _label(axes[i, j], m, r, rho, last_row=i == len(measures) - 1, first_col=j == 0)
    text = params_text(params) if params else ""
    drawn = (
        f"\n2-D histograms of the sessions (panels of more than {density_points:,})"
        if dense
        else ""
    )
    fig.suptitle(
        "Session measures against the searchers' ratings" + (f"\n({text})" if text else "") + drawn,
        fontsize=FONT["label"],
    )
    return fig


def _scatter(ax: Axes, x: FloatArray, y: FloatArray) -> None:
    """One point per session; rasterised and lighter above :data:`RASTER_POINTS`."""
    raster = x.size > RASTER_POINTS
    ax.scatter(
        x,
        y,
        s=6,
        alpha=_ALPHA["raster" if raster else "vector"],
        color=PALETTE[0],
        linewidths=0,
        rasterized=raster,
    )


def _label(
    ax: Axes,
    measure: str,
    rating: str,
    rho: Mapping[tuple[str, str], tuple[float, float]],
    *,
    last_row: bool,
    first_col: bool,
) -> None:
    """A panel's ticks, grid, title (rho and tau) and, on the figure's edges, its labels."""
    ax.tick_params(labelsize=FONT["tick"])
    ax.grid(True, linewidth=0.3, alpha=0.5)
    if (measure, rating) in rho:
        spearman, kendall = rho[(measure, rating)]
        ax.set_title(f"rho={spearman:.3f}, tau={kendall:.3f}", fontsize=FONT["title"])
    # rating names come from the logs: drawn as written
    if last_row:
        plain_text(ax.set_xlabel(rating.removeprefix("rating_"), fontsize=FONT["label"]))
    if first_col:
        plain_text(ax.set_ylabel(measure, fontsize=FONT["legend"]))

"""Session measures against the searchers' ratings (Jiang & Allan 2016), one panel per pair.

Every session is a point, so the figure grows with the study: above
:data:`RASTER_POINTS` points in a panel the points are drawn as one image inside the
SVG and PDF (matplotlib's ``rasterized``), while the axes, the text and the line of
means stay vector.  A study of 200,000 sessions then writes an SVG of a few hundred
kB instead of one vector element per session (219 MB before).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Final

import numpy as np
import pandas as pd

from ..errors import SessionvalError
from .figure_style import FONT, PALETTE, notebook_display, plain_text, require_columns
from .parameters import params_text

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["RASTER_POINTS", "plot_rating_scatter"]

#: Points of one panel above which the scatter is an image inside a vector file: below
#: it each point stays a vector element (editable, exact in print).
RASTER_POINTS: Final = 5_000
#: Opacity of a point: dense panels lighter, so where the sessions pile up shows.
_ALPHA: Final = {"vector": 0.45, "raster": 0.12}


def plot_rating_scatter(
    per_session: pd.DataFrame,
    *,
    measures: Sequence[str],
    ratings: Sequence[str],
    correlations: pd.DataFrame | None = None,
    params: Mapping[str, object] | None = None,
    panel: tuple[float, float] = (1.9, 1.6),
) -> Figure:
    """Each measure (rows) against each rating (columns), one scatter panel per pair.

    Every session is one point at (its rating, its score); a black line joins the
    mean score of each rating level.  A panel of more than :data:`RASTER_POINTS`
    points draws them rasterised and lighter (the file stays small; the axes, text
    and means stay vector).  With ``correlations``
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

    Returns
    -------
    matplotlib.figure.Figure
    """
    require_columns(per_session, [*measures, *ratings], "plot_rating_scatter")
    if not measures or not ratings:
        raise SessionvalError("plot_rating_scatter: give at least one measure and one rating")
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
    for i, m in enumerate(measures):
        for j, r in enumerate(ratings):
            ax = axes[i, j]
            x = per_session[r].to_numpy(dtype=np.float64, na_value=np.nan)
            y = per_session[m].to_numpy(dtype=np.float64, na_value=np.nan)
            ok = ~(np.isnan(x) | np.isnan(y))
            dense = int(ok.sum()) > RASTER_POINTS
            ax.scatter(
                x[ok],
                y[ok],
                s=6,
                alpha=_ALPHA["raster" if dense else "vector"],
                color=PALETTE[0],
                linewidths=0,
                rasterized=dense,
            )
            if ok.any():
                means = pd.Series(y[ok]).groupby(x[ok]).mean()
                ax.plot(means.index, means.to_numpy(), color=PALETTE[-1], linewidth=0.9)
            ax.tick_params(labelsize=FONT["tick"])
            ax.grid(True, linewidth=0.3, alpha=0.5)
            if (m, r) in rho:
                ax.set_title(
                    f"rho={rho[(m, r)][0]:.3f}, tau={rho[(m, r)][1]:.3f}", fontsize=FONT["title"]
                )
            # rating names come from the logs: drawn as written
            if i == len(measures) - 1:
                plain_text(ax.set_xlabel(r.removeprefix("rating_"), fontsize=FONT["label"]))
            if j == 0:
                plain_text(ax.set_ylabel(m, fontsize=FONT["legend"]))
    text = params_text(params) if params else ""
    fig.suptitle(
        "Session measures against the searchers' ratings" + (f"\n({text})" if text else ""),
        fontsize=FONT["label"],
    )
    return fig

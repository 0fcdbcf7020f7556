"""Session measures against the searchers' ratings (Jiang & Allan 2016), one panel per pair."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ..errors import SessionvalError
from .figure_style import FONT, PALETTE, notebook_display, plain_text, require_columns
from .parameters import params_text

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["plot_rating_scatter"]


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
    mean score of each rating level.  With ``correlations``
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
            ax.scatter(x[ok], y[ok], s=6, alpha=0.45, color=PALETTE[0], linewidths=0)
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

"""Figures of the meta-evaluation (matplotlib; ax in, ax out), drawn from its tidy tables.

* :func:`plot_swap_rates`: swap rate by difference bin per measure (Sakai 2007, section
  4.2; Voorhees & Buckley 2002), with the 5 % line;
* :func:`plot_asl_curves`: each measure's achieved significance levels over the system
  pairs, sorted (Sakai's ASL curves; the further left a curve stays under α, the more
  discriminative the measure), with the α line;
* :func:`plot_tau_vs_fraction`: Kendall's tau of each measure's system ranking under
  f-qrels against the full judgments (Bompada et al. 2007, Figure 1), with Voorhees'
  0.9 and 0.8 lines;
* :func:`plot_sensitivity_heatmap`: Kendall's tau of the system and session rankings
  under each parameter setting against the default.

The styling (fonts, palette, one-column size) is that of :mod:`sessionval.output.figure_style`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from .figure_style import draw_lines, finish_axes, new_axes, plain_text, require_columns

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = [
    "plot_asl_curves",
    "plot_sensitivity_heatmap",
    "plot_swap_rates",
    "plot_tau_vs_fraction",
]


def _reference_line(ax: Axes, y: float, label: str) -> None:
    ax.axhline(y, color="0.4", linewidth=0.7, linestyle=":", label=label, zorder=0)


def plot_swap_rates(
    bins: pd.DataFrame, *, max_swap_rate: float = 0.05, ax: Axes | None = None
) -> Axes:
    """Swap rate against the difference bin, one line per measure (the swap method).

    Parameters
    ----------
    bins
        :attr:`sessionval.analysis.meta.SwapResult.bins` (``measure, low, swap_rate``).
    max_swap_rate
        Drawn as a dotted line.
    ax
        Axes to draw on (default: a new one-column figure).

    Returns
    -------
    matplotlib.axes.Axes
    """
    require_columns(bins, ["measure", "low", "swap_rate"], "plot_swap_rates")
    ax = new_axes(ax)
    draw_lines(ax, bins, x="low", y="swap_rate", hue="measure", style=None, label_fmt="{hue}")
    _reference_line(ax, max_swap_rate, f"{max_swap_rate:.0%} swap rate")
    return finish_axes(
        ax,
        xlabel="absolute difference (bins of 0.01)",
        ylabel="swap rate",
        params=None,
        title="Swap method (Voorhees & Buckley; Sakai 2007)",
    )


def plot_asl_curves(pairs: pd.DataFrame, *, alpha: float = 0.05, ax: Axes | None = None) -> Axes:
    """Achieved significance levels of all system pairs, sorted, one curve per measure.

    Parameters
    ----------
    pairs
        :attr:`sessionval.analysis.meta.SensitivityResult.pairs` (``measure, asl``).
    alpha
        Drawn as a dotted line.
    ax
        Axes to draw on.

    Returns
    -------
    matplotlib.axes.Axes
    """
    require_columns(pairs, ["measure", "asl"], "plot_asl_curves")
    sorted_asl = pairs[["measure", "asl"]].copy()
    sorted_asl = sorted_asl.sort_values(["measure", "asl"], kind="stable")
    sorted_asl["pair_rank"] = sorted_asl.groupby("measure", sort=False).cumcount() + 1
    ax = new_axes(ax)
    draw_lines(ax, sorted_asl, x="pair_rank", y="asl", hue="measure", style=None, label_fmt="{hue}")
    _reference_line(ax, alpha, f"α = {alpha:g}")
    return finish_axes(
        ax,
        xlabel="system pairs sorted by ASL",
        ylabel="achieved significance level",
        params=None,
        title="Bootstrap sensitivity: ASL curves (Sakai 2007)",
    )


def plot_tau_vs_fraction(table: pd.DataFrame, *, ax: Axes | None = None) -> Axes:
    """Kendall's tau against the fraction of judgments kept, one line per measure.

    Parameters
    ----------
    table
        ``measure, fraction, tau`` (the rows of ``sessionval meta incomplete-judgments``).
    ax
        Axes to draw on.

    Returns
    -------
    matplotlib.axes.Axes
    """
    require_columns(table, ["measure", "fraction", "tau"], "plot_tau_vs_fraction")
    ax = new_axes(ax)
    draw_lines(ax, table, x="fraction", y="tau", hue="measure", style=None, label_fmt="{hue}")
    _reference_line(ax, 0.9, "τ = 0.9 (equivalent rankings)")
    ax.axhline(0.8, color="0.6", linewidth=0.6, linestyle="--", label="τ = 0.8", zorder=0)
    return finish_axes(
        ax,
        xlabel="fraction of judgments kept (f)",
        ylabel="Kendall's τ with full judgments",
        params=None,
        title="Incomplete judgments (Bompada et al. 2007)",
    )


def plot_sensitivity_heatmap(
    table: pd.DataFrame,
    *,
    label: str = "setting",
    columns: tuple[str, ...] = ("tau_systems", "tau_sessions"),
    ax: Axes | None = None,
) -> Axes:
    """Heat map of Kendall's tau per parameter setting (rows) and ranking (columns).

    Parameters
    ----------
    table
        One row per setting with a ``label`` column and the tau ``columns``.
    label
        Column naming the setting.
    columns
        The tau columns drawn (default: system and session rankings).
    ax
        Axes to draw on (default: a figure tall enough for the rows).

    Returns
    -------
    matplotlib.axes.Axes
        The image's values are the table's (each cell annotated).
    """
    require_columns(table, [label, *columns], "plot_sensitivity_heatmap")
    values = table[list(columns)].to_numpy(dtype=np.float64)
    ax = new_axes(ax, figsize=(3.5, max(2.0, 0.22 * len(table) + 1.0)))
    image = ax.imshow(values, cmap="viridis", vmin=-1.0, vmax=1.0, aspect="auto")
    ax.set_xticks(range(len(columns)), labels=[c.replace("tau_", "") for c in columns])
    ax.set_yticks(range(len(table)), labels=table[label].astype(str).tolist())
    plain_text(*ax.get_yticklabels())  # setting names as written, no mathtext
    ax.tick_params(labelsize=6)
    for (i, j), v in np.ndenumerate(values):
        if np.isfinite(v):
            ax.text(j, i, f"{v:.2f}", ha="center", va="center", fontsize=5.5,
                    color="black" if v > 0.3 else "white")  # fmt: skip
    colorbar = ax.get_figure().colorbar(image, ax=ax, shrink=0.8)  # type: ignore[union-attr]
    colorbar.ax.tick_params(labelsize=6)
    colorbar.set_label("Kendall's τ with the default", fontsize=6)
    ax.set_title("Parameter sensitivity of the rankings", fontsize=6.5)
    return ax

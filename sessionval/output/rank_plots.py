"""Figures by rank: last vs non-last queries and the cumulated-gain curves.

* :func:`plot_query_curves`: Järvelin et al. (2008) Figure 1, mean query-discounted
  gain by rank of the last vs the non-last queries (or best vs other), per system;
* :func:`plot_cg_curves`: Järvelin & Kekäläinen (2002) Figures 1–4, CG / DCG / nCG /
  nDCG by rank per system against the ideal curve.

Both draw a table of means (one row per plotted point: a few hundred rows whatever
the size of the study), in the style of :mod:`sessionval.output.figure_style`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Final

import numpy as np
import pandas as pd

from .figure_style import (
    BAND_COLUMNS,
    PALETTE,
    LegendEntries,
    draw_lines,
    finish_axes,
    new_axes,
    require_columns,
    select_measure,
    system_colours,
)

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["CG_TITLES", "plot_cg_curves", "plot_query_curves"]

#: Titles of the cumulated-gain figures (Järvelin & Kekäläinen 2002, Figures 1-4).
CG_TITLES: Final[dict[str, str]] = {
    "CG": "Cumulated gain (CG)",
    "DCG": "Discounted cumulated gain (DCG)",
    "nCG": "Normalised cumulated gain (nCG)",
    "nDCG": "Normalised discounted cumulated gain (nDCG)",
}


def plot_query_curves(
    curves: pd.DataFrame,
    *,
    x: str = "rank",
    y: str = "value",
    hue: str = "system_id",
    style: str = "group",
    measure: str | None = "sdcg_q",
    params: Mapping[str, object] | None = None,
    ylabel: str = "mean query-discounted DCG (sDCG$_q$)",
    title: str | None = "Last vs non-last queries",
    ax: Axes | None = None,
    colours: Mapping[str, str] | None = None,
    bands: bool = False,
) -> Axes:
    """002 Figure 1: mean sDCG_q by rank of last vs non-last (or best vs other) queries.

    Parameters
    ----------
    curves
        One row per (system, group, rank): ``hue`` (system), ``style`` (e.g.
        ``"last"`` / ``"non-last"``), ``x`` (rank 1..100) and ``y`` (the mean);
        the layout of :func:`sessionval.analysis.curves.query_curves`.
    x, y, hue, style
        Column names.
    measure
        With a ``measure`` column, the rows drawn (``"sdcg_q"``; ``"dcg_q"``
        without the query discount); ignored without one.
    params
        Parameters shown under the title (b, bq, X, gains).
    ylabel, title
        Axis label and title (``None``: no title line).
    ax
        Axes to draw on (default: a new one-column figure).
    colours
        Colour per system (default: :func:`system_colours` of the table's systems).
    bands
        Shade each line's confidence band (``ci_low``, ``ci_high`` from
        ``query_curves(..., confidence=0.95)``).

    Returns
    -------
    matplotlib.axes.Axes
        One line per (system, group), labelled ``"<system> <group>"``, systems in
        sorted order.

    References
    ----------
    Järvelin, Price, Delcambre & Nielsen (2008), ECIR, Figure 1 (jarvelin2008).
    """
    require_columns(
        curves, [x, y, hue, style, *(BAND_COLUMNS if bands else ())], "plot_query_curves"
    )
    curves = select_measure(curves, measure, "plot_query_curves")
    ax = new_axes(ax)
    entries = draw_lines(ax, curves, x=x, y=y, hue=hue, style=style, colours=colours, bands=bands)
    return finish_axes(
        ax, xlabel="rank", ylabel=ylabel, params=params, title=title, entries=entries
    )


def plot_cg_curves(
    curves: pd.DataFrame,
    *,
    measure: str,
    x: str = "rank",
    y: str = "value",
    hue: str = "system_id",
    ideal: str = "ideal",
    params: Mapping[str, object] | None = None,
    title: str | None = None,
    ax: Axes | None = None,
    colours: Mapping[str, str] | None = None,
    bands: bool = False,
) -> Axes:
    """000 Figures 1–4: mean CG, DCG, nCG or nDCG by rank per system against the ideal.

    Parameters
    ----------
    curves
        One row per (system, rank) with the mean vector value; rows whose ``hue``
        equals ``ideal`` are the ideal curve (drawn black, dashed).
    measure
        ``"CG"``, ``"DCG"``, ``"nCG"`` or ``"nDCG"`` (the y label).
    x, y, hue
        Column names.
    ideal
        The ``hue`` value of the ideal curve.
    params
        Parameters shown under the title (b, gains).
    title
        Title line (default: the measure's name).
    ax
        Axes to draw on.
    colours
        Colour per system (default: :func:`system_colours` of the table's systems).
    bands
        Shade each line's confidence band (``ci_low``, ``ci_high`` from
        ``cg_curves(..., confidence=0.95)``); the ideal curve has none.

    Returns
    -------
    matplotlib.axes.Axes
        One line per system (sorted) plus the ideal (label ``ideal``), last.

    References
    ----------
    Järvelin & Kekäläinen (2002), ACM TOIS 20(4), Figures 1–4 (jarvelin2002).
    """
    require_columns(curves, [x, y, hue, *(BAND_COLUMNS if bands else ())], "plot_cg_curves")
    ax = new_axes(ax)
    is_ideal = curves[hue].astype(str) == ideal
    systems = curves[~is_ideal]
    if colours is None:  # the ideal curve is black, not a system
        column = systems[hue]
        levels = (
            column.cat.categories
            if isinstance(column.dtype, pd.CategoricalDtype)
            else column.drop_duplicates()
        )
        colours = system_colours([str(n) for n in levels if str(n) != ideal])
    entries: LegendEntries = []
    if len(systems):
        entries = draw_lines(
            ax,
            systems,
            x=x,
            y=y,
            hue=hue,
            style=None,
            label_fmt="{hue}",
            colours=colours,
            bands=bands,
        )
    if is_ideal.any():
        part = curves[is_ideal].sort_values(x)
        (line,) = ax.plot(
            part[x].to_numpy(dtype=np.float64),
            part[y].to_numpy(dtype=np.float64),
            color=PALETTE[-1],
            linestyle="--",
            linewidth=1.0,
            label=ideal,
        )
        entries.append((line, ideal))
    if title is None:
        title = CG_TITLES.get(measure, f"{measure} by rank")
    return finish_axes(
        ax, xlabel="rank", ylabel=f"mean {measure}", params=params, title=title, entries=entries
    )

"""Figures of the papers, drawn from tidy aggregation tables (matplotlib; ax in, ax out).

Every function takes a tidy DataFrame (one row per plotted point), draws it
exactly (no smoothing, no re-aggregation: the plotted y values *are* the
table's values), puts the parameters behind the numbers (b, bq, X, gains; rendered by
:func:`sessionval.output.parameters.params_text` from the configuration) in the
axes title, and returns the :class:`~matplotlib.axes.Axes`.  With ``ax=None`` a
new figure sized for one column of a two-column paper (3.5 × 2.6 in) is made.
Nothing here calls ``plt.show()``, and the figures made here are not pyplot's: a
notebook cell that ends with the figure (``ax.figure``) shows it once.
:func:`subplots` makes such a figure for several panels (``plt.subplots`` registers
its figure with pyplot, whose inline backend shows it at the end of the cell, so a
cell that also ends with it shows it twice).

Figures (Järvelin et al. 2008 = seed 002; Järvelin & Kekäläinen 2002 = seed 000):

* :func:`plot_query_curves`: 002 Figure 1, mean query-discounted gain by rank of
  the last vs the non-last queries (or best vs other), per system;
* :func:`plot_session_curves`: 002 Figures 2 and 3, mean (normalised or raw)
  session curves over concatenated top-X results, query boundaries marked
  Q1…Qn; a ``style`` column draws subsets (all vs at least k queries) dashed;
* :func:`plot_individual_sessions`: 002 Figure 4, every session held after the
  searcher stopped, with the stopping points marked;
* :func:`plot_cg_curves`: 000 Figures 1–4, CG / DCG / nCG / nDCG by rank per
  system against the ideal curve;
* :func:`plot_rating_scatter`: each session measure against each post-task rating
  (Jiang & Allan 2016), one panel per pair, with the mean per rating level.

Colours are the Okabe–Ito palette (safe for the common colour-vision
deficiencies) and each series also gets its own line style, so figures survive
grey-scale printing.  A system's colour and its place in the legend are a function
of the system ids (:func:`system_colours`: sorted ids), not of the order the data
list them, so the same system has the same colour in every figure.  Ids are drawn
as plain text: ``$x^2$`` stays ``$x^2$`` (no mathtext, no TeX), and an id starting
with ``_`` appears in the legend like any other.  With more than
:data:`LEGEND_INSIDE_MAX` legend entries the legend moves outside the axes (the
figure widens to hold it); query labels Q1…Qn thin out when they would overlap.
:func:`save_figure` writes PNG, SVG and PDF.

This module gathers the public names; each figure family lives in its own module:
:mod:`~sessionval.output.rank_plots` (Figure 1 of 2008, the CG curves of 2002),
:mod:`~sessionval.output.session_plots` (Figures 2–4 of 2008),
:mod:`~sessionval.output.rating_plots` (measures against ratings),
:mod:`~sessionval.output.figure_style` (the shared look) and
:mod:`~sessionval.output.figure_files` (PNG, SVG and PDF files).

matplotlib (extra ``plots``) is imported only when a figure is drawn.
"""

from __future__ import annotations

from .figure_files import ImageFormat, figure_bytes, reduced_png, save_figure
from .figure_style import (
    BAND_COLUMNS,
    COLUMN_FIGSIZE,
    LEGEND_INSIDE_MAX,
    LINESTYLES,
    PALETTE,
    subplots,
    system_colours,
)
from .parameters import params_text
from .rank_plots import CG_TITLES, plot_cg_curves, plot_query_curves
from .rating_plots import plot_rating_scatter
from .session_plots import plot_individual_sessions, plot_session_curves

__all__ = [
    "BAND_COLUMNS",
    "CG_TITLES",
    "COLUMN_FIGSIZE",
    "LEGEND_INSIDE_MAX",
    "LINESTYLES",
    "PALETTE",
    "ImageFormat",
    "figure_bytes",
    "params_text",
    "plot_cg_curves",
    "plot_individual_sessions",
    "plot_query_curves",
    "plot_rating_scatter",
    "plot_session_curves",
    "reduced_png",
    "save_figure",
    "subplots",
    "system_colours",
]

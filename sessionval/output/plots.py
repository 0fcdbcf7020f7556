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

matplotlib (extra ``plots``) is imported only when a figure is drawn.
"""

from __future__ import annotations

import io
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal, TypeAlias

import numpy as np
import pandas as pd

from ..errors import SessionvalError, writing
from .parameters import params_text

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = [
    "BAND_COLUMNS",
    "CG_TITLES",
    "COLUMN_FIGSIZE",
    "LEGEND_INSIDE_MAX",
    "LINESTYLES",
    "PALETTE",
    "ImageFormat",
    "draw_lines",
    "figure_bytes",
    "finish_axes",
    "new_axes",
    "params_text",
    "plain_text",
    "plot_cg_curves",
    "plot_individual_sessions",
    "plot_query_curves",
    "plot_rating_scatter",
    "plot_session_curves",
    "require_columns",
    "save_figure",
    "subplots",
    "system_colours",
]

#: Okabe & Ito (2008) colour-blind-safe palette, black last (used for ideal curves).
PALETTE: Final[tuple[str, ...]] = (
    "#0072B2",
    "#D55E00",
    "#009E73",
    "#CC79A7",
    "#E69F00",
    "#56B4E9",
    "#F0E442",
    "#000000",
)
LINESTYLES: Final[tuple[str, ...]] = ("-", "--", "-.", ":")
#: Columns of a curve table that bound its confidence band (``bands=True``).
BAND_COLUMNS: Final[tuple[str, str]] = ("ci_low", "ci_high")
#: One column of a two-column paper, in inches.
COLUMN_FIGSIZE: Final[tuple[float, float]] = (3.5, 2.6)
_FONT: Final = {"label": 8.0, "tick": 7.0, "legend": 6.5, "title": 6.5}
#: Titles of the cumulated-gain figures (Järvelin & Kekäläinen 2002, Figures 1-4).
CG_TITLES: Final[dict[str, str]] = {
    "CG": "Cumulated gain (CG)",
    "DCG": "Discounted cumulated gain (DCG)",
    "nCG": "Normalised cumulated gain (nCG)",
    "nDCG": "Normalised discounted cumulated gain (nDCG)",
}
#: Legends with more entries than this go outside the axes.
LEGEND_INSIDE_MAX: Final = 4
#: The label of a figure this module made (so it may widen it for an outside legend).
_OWN_FIGURE: Final = "sessionval-column-figure"
#: Width of a query label Q<n> at the tick font with its gap, in inches (for thinning).
_QUERY_LABEL_INCHES: Final = 0.26

ImageFormat = Literal["png", "svg", "pdf"]


def _notebook_display() -> None:
    """In IPython, make a figure that ends a cell show (once) even before pyplot's first figure.

    pyplot's inline backend registers IPython's figure formatter when it makes its first
    figure; the figures here are not pyplot's, so until then a cell ending with one
    would show nothing.  A formatter already registered (``%config InlineBackend``,
    retina) is left as it is.
    """
    ipython = sys.modules.get("IPython")
    shell: Any = ipython.get_ipython() if ipython is not None else None
    formatters = getattr(getattr(shell, "display_formatter", None), "formatters", None)
    if not formatters:
        return
    from matplotlib.figure import Figure

    for mime in ("image/png", "image/svg+xml", "application/pdf", "image/jpeg"):
        if mime in formatters and Figure in formatters[mime].type_printers:
            return
    from IPython.core import pylabtools

    select: Any = pylabtools.select_figure_formats  # untyped
    select(shell, {"png"})


def new_axes(ax: Axes | None, figsize: tuple[float, float] = COLUMN_FIGSIZE) -> Axes:
    """``ax``, or the axes of a new bare Figure (no pyplot state) of ``figsize``."""
    if ax is not None:
        return ax
    from matplotlib.figure import Figure

    # a bare Figure (no pyplot state): nothing global, nothing to close
    _notebook_display()
    fig = Figure(figsize=figsize, layout="constrained")
    fig.set_label(_OWN_FIGURE)
    return fig.add_subplot()


def subplots(
    nrows: int = 1,
    ncols: int = 1,
    *,
    figsize: tuple[float, float] = COLUMN_FIGSIZE,
    **kwargs: Any,
) -> tuple[Figure, Any]:
    """A figure of ``nrows`` × ``ncols`` axes that pyplot does not manage.

    ``plt.subplots``' arguments (``sharex``, ``sharey``, ``squeeze``, …) pass on to
    :meth:`matplotlib.figure.Figure.subplots`; the layout is constrained.  In a
    notebook, end the cell with the figure to show it, once; in a script, write it
    with :func:`save_figure` (``plt.show()`` does not know it).

    Returns
    -------
    (matplotlib.figure.Figure, Axes or array of Axes)

    Examples
    --------
    >>> fig, axes = subplots(1, 2, figsize=(6, 2.5), sharey=True)
    >>> len(axes), fig.get_layout_engine().__class__.__name__
    (2, 'ConstrainedLayoutEngine')
    """
    from matplotlib.figure import Figure

    _notebook_display()
    fig = Figure(figsize=figsize, layout="constrained")
    return fig, fig.subplots(nrows, ncols, **kwargs)


def require_columns(table: pd.DataFrame, columns: Sequence[str | None], what: str) -> None:
    """Raise :class:`SessionvalError` naming the columns of ``columns`` missing from ``table``."""
    missing = [c for c in columns if c is not None and c not in table.columns]
    if missing:
        raise SessionvalError(
            f"{what}: column(s) {missing} not in the table; columns are {list(table.columns)}"
        )
    if len(table) == 0:
        raise SessionvalError(f"{what}: the table is empty, nothing to plot")


def _select(table: pd.DataFrame, measure: str | None, what: str) -> pd.DataFrame:
    """Rows of one measure when the table is long (has a ``measure`` column)."""
    if measure is None or "measure" not in table.columns:
        return table
    keep = table["measure"].astype(str) == measure
    if not keep.any():
        found = sorted(set(table["measure"].astype(str)))
        raise SessionvalError(f"{what}: no rows with measure {measure!r}; measures are {found}")
    return table.loc[keep]


def system_colours(systems: Sequence[object] | pd.Series) -> dict[str, str]:
    """Colour of each system: the palette in the order of the sorted system ids.

    With a categorical column every category gets its colour, present or not, so a
    figure that shows some of the systems colours them as the others do.

    Examples
    --------
    >>> system_colours(["S2", "S1", "S2"])
    {'S1': '#0072B2', 'S2': '#D55E00'}
    """
    if isinstance(systems, pd.Series) and isinstance(systems.dtype, pd.CategoricalDtype):
        names = {str(c) for c in systems.cat.categories}
    else:
        names = {str(v) for v in pd.Series(list(systems)).dropna()}
    return {v: PALETTE[i % (len(PALETTE) - 1)] for i, v in enumerate(sorted(names))}


def plain_text(*texts: Any) -> None:
    """Draw texts as written: no mathtext, no TeX (ids like ``$x^2$`` are data)."""
    for t in texts:
        if t is not None:
            t.set_parse_math(False)
            t.set_usetex(False)


LegendEntries: TypeAlias = list[tuple[Any, str]]


def _legend(ax: Axes, entries: LegendEntries | None, title: str | None) -> None:
    """The legend from explicit entries (labels starting with ``_`` included), outside if long."""
    if entries is None:
        handles, labels = ax.get_legend_handles_labels()
    else:
        handles, labels = [h for h, _ in entries], [lab for _, lab in entries]
    if not handles:
        return
    kw: dict[str, Any] = {}
    if len(handles) > LEGEND_INSIDE_MAX:
        kw = {"loc": "upper left", "bbox_to_anchor": (1.02, 1.0), "borderaxespad": 0.0}
        fig = ax.get_figure(root=True)
        if fig is not None and fig.get_label() == _OWN_FIGURE:
            longest = max(len(lab) for lab in labels)
            w, h = COLUMN_FIGSIZE
            fig.set_size_inches(w + 0.55 + 0.6 * _FONT["legend"] / 72 * longest, h)
    leg = ax.legend(
        handles,
        labels,
        fontsize=_FONT["legend"],
        title=title,
        title_fontsize=_FONT["legend"],
        frameon=False,
        **kw,
    )
    plain_text(*leg.get_texts(), leg.get_title())


def finish_axes(
    ax: Axes,
    *,
    xlabel: str,
    ylabel: str,
    params: Mapping[str, object] | None,
    title: str | None,
    legend_title: str | None = None,
    legend: bool = True,
    entries: LegendEntries | None = None,
) -> Axes:
    """Label, title (with the parameters) and legend of a figure's axes, in the one style."""
    ax.set_xlabel(xlabel, fontsize=_FONT["label"])
    ax.set_ylabel(ylabel, fontsize=_FONT["label"])
    ax.tick_params(labelsize=_FONT["tick"])
    text = params_text(params) if params else ""
    heading = "\n".join(t for t in (title, f"({text})" if text else "") if t)
    plain_text(ax.set_title(heading, fontsize=_FONT["title"]))
    ax.grid(True, linewidth=0.3, alpha=0.5)
    if legend:
        _legend(ax, entries, legend_title)
    return ax


def _series(
    table: pd.DataFrame, keys: Sequence[str], *, by_id: Sequence[str] = ()
) -> list[tuple[tuple[str, ...], pd.DataFrame]]:
    """Split into groups: ``by_id`` keys in sorted id order, the others in categorical order."""
    if not keys:
        return [((), table)]
    grouped = table.groupby(list(keys), sort=True, observed=True, dropna=False)
    out = []
    for key, part in grouped:
        tup = key if isinstance(key, tuple) else (key,)
        out.append((tuple(str(k) for k in tup), part))
    positions = {k: i for i, k in enumerate(keys) if k in by_id}
    if positions:
        # sorted by the ids' text whatever the categories' order (first appearance in the data)
        out.sort(key=lambda item: tuple(item[0][i] for i in sorted(positions.values())))
    return out


def _style_maps(
    table: pd.DataFrame,
    hue: str | None,
    style: str | None,
    colours: Mapping[str, str] | None = None,
) -> tuple[dict[str, str], dict[str, str]]:
    hue_colours: dict[str, str] = {}
    styles: dict[str, str] = {}
    if hue is not None:
        hue_colours = dict(colours) if colours is not None else system_colours(table[hue])
    if style is not None:
        for i, v in enumerate(_levels(table[style])):
            styles[v] = LINESTYLES[i % len(LINESTYLES)]
    return hue_colours, styles


def _levels(s: pd.Series) -> list[str]:
    if isinstance(s.dtype, pd.CategoricalDtype):
        present = set(s.astype(str))
        return [str(c) for c in s.cat.categories if str(c) in present]
    return sorted({str(v) for v in s.dropna()})


def draw_lines(
    ax: Axes,
    table: pd.DataFrame,
    *,
    x: str,
    y: str,
    hue: str | None,
    style: str | None,
    label_fmt: str = "{hue} {style}",
    linewidth: float = 1.2,
    colours: Mapping[str, str] | None = None,
    bands: bool = False,
) -> LegendEntries:
    """One line per (hue, style) series (and its shaded band); the legend entries in order."""
    hue_colours, styles = _style_maps(table, hue, style, colours)
    keys = [k for k in (hue, style) if k is not None]
    n_colours = len(PALETTE) - 1
    hue_rank = {v: i for i, v in enumerate(sorted(hue_colours))}
    entries: LegendEntries = []
    for i, (key, part) in enumerate(_series(table, keys, by_id=[hue] if hue else [])):
        part = part.sort_values(x)
        h = key[0] if hue is not None else ""
        s = key[-1] if style is not None else ""
        label = label_fmt.format(hue=h, style=s).strip() or y
        if style is not None:
            linestyle = styles.get(s, LINESTYLES[0])
        elif hue is not None:  # beyond the palette, colours repeat with another line style
            linestyle = LINESTYLES[(hue_rank.get(h, i) // n_colours) % len(LINESTYLES)]
        else:
            linestyle = LINESTYLES[i % len(LINESTYLES)]
        colour = hue_colours.get(h, PALETTE[i % n_colours])
        (line,) = ax.plot(
            part[x].to_numpy(dtype=np.float64),
            part[y].to_numpy(dtype=np.float64),
            color=colour,
            linestyle=linestyle,
            linewidth=linewidth,
            label=label,
        )
        entries.append((line, label))
        if bands:
            # the confidence band of the mean in the line's colour, kept out of the legend
            ax.fill_between(
                part[x].to_numpy(dtype=np.float64),
                part[BAND_COLUMNS[0]].to_numpy(dtype=np.float64),
                part[BAND_COLUMNS[1]].to_numpy(dtype=np.float64),
                color=colour,
                alpha=0.18,
                linewidth=0,
                label=f"_band {label}",
            )
    return entries


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
    curves = _select(curves, measure, "plot_query_curves")
    ax = new_axes(ax)
    entries = draw_lines(ax, curves, x=x, y=y, hue=hue, style=style, colours=colours, bands=bands)
    return finish_axes(
        ax, xlabel="rank", ylabel=ylabel, params=params, title=title, entries=entries
    )


def _mark_queries(ax: Axes, cutoff: int, n_queries: int) -> None:
    """Dotted boundaries between queries and Q1..Qn labels on a top axis.

    Labels thin out to every k-th query (Q1, Q1+k, …) when all of them would not fit
    the axes' width.
    """
    for q in range(1, n_queries):
        ax.axvline(
            q * cutoff + 0.5,
            color="0.6",
            linewidth=0.5,
            linestyle=":",
            label="_query boundary",
            zorder=0,
        )
    top = ax.secondary_xaxis("top")
    fig = ax.get_figure(root=True)
    width = fig.get_size_inches()[0] * ax.get_position().width if fig is not None else 3.0
    fits = max(1, int(width / _QUERY_LABEL_INCHES))
    step = -(-n_queries // fits)
    shown = np.arange(1, n_queries + 1, step)
    top.set_xticks((shown - 0.5) * cutoff + 0.5, labels=[f"Q{q}" for q in shown])
    top.tick_params(labelsize=_FONT["tick"] - 1 if n_queries > 8 else _FONT["tick"], length=0)
    ax.set_xlim(0.5, n_queries * cutoff + 0.5)


def plot_session_curves(
    curves: pd.DataFrame,
    *,
    cutoff: int,
    x: str = "position",
    y: str = "value",
    hue: str = "system_id",
    style: str | None = None,
    params: Mapping[str, object] | None = None,
    normalised: bool = True,
    measure: str | None = None,
    title: str | None = None,
    ax: Axes | None = None,
    colours: Mapping[str, str] | None = None,
    bands: bool = False,
) -> Axes:
    """002 Figures 2 and 3: mean session curves over concatenated top-X results.

    Parameters
    ----------
    curves
        One row per (system[, subset], position): position ``1..n·X`` of the
        concatenated session vector and the mean (normalised or raw) sDCG there;
        the layout of :func:`sessionval.analysis.curves.session_curves`.
    cutoff
        X, the results each query contributes (marks query boundaries every X).
    x, y, hue
        Column names (position, value, system).
    style
        Optional subset column (Figure 3: ``"all"`` vs ``"≥ 4 queries"``),
        drawn with different line styles in the system's colour.
    params
        Parameters shown under the title.
    normalised
        Draw nsDCG (True, Figure 2) or sDCG (False, Figure 3).
    measure
        With a ``measure`` column, the rows drawn (default ``"nsdcg"`` when
        ``normalised`` else ``"sdcg"``).
    title
        Title line (default: which figure this is).
    ax
        Axes to draw on.
    colours
        Colour per system (default: :func:`system_colours` of the table's systems).
    bands
        Shade each line's confidence band (``ci_low``, ``ci_high`` from
        ``session_curves(..., confidence=0.95)``).

    Returns
    -------
    matplotlib.axes.Axes
        One line per (system[, subset]); dotted query boundaries (not in the
        legend) and Q1…Qn on the top axis.

    References
    ----------
    Järvelin et al. (2008), Figures 2 and 3 (jarvelin2008).
    """
    require_columns(
        curves, [x, y, hue, style, *(BAND_COLUMNS if bands else ())], "plot_session_curves"
    )
    what = "nsDCG" if normalised else "sDCG"
    curves = _select(curves, measure or what.lower(), "plot_session_curves")
    if cutoff < 1:
        raise SessionvalError(f"plot_session_curves: cutoff must be >= 1, got {cutoff}")
    ax = new_axes(ax)
    entries = draw_lines(ax, curves, x=x, y=y, hue=hue, style=style, colours=colours, bands=bands)
    n_q = int(np.ceil(float(curves[x].max()) / cutoff))
    _mark_queries(ax, cutoff, n_q)
    if title is None:
        title = "Mean normalised session DCG" if normalised else "Mean session DCG"
    return finish_axes(
        ax,
        xlabel=f"position in concatenated top-{cutoff} results",
        ylabel=f"mean {what}",
        params=params,
        title=title,
        entries=entries,
    )


def plot_individual_sessions(
    curves: pd.DataFrame,
    *,
    cutoff: int,
    x: str = "position",
    y: str = "value",
    unit: str = "session_id",
    held: str = "stopped",
    params: Mapping[str, object] | None = None,
    normalised: bool = False,
    measure: str | None = None,
    title: str | None = None,
    ax: Axes | None = None,
) -> Axes:
    """002 Figure 4: every session of one system × scenario, held after stopping.

    Parameters
    ----------
    curves
        One row per (session, position) up to the longest session: ``unit``,
        ``x``, ``y`` (held constant after the session's last query) and ``held``
        (bool, True on the positions after the searcher stopped); the layout of
        :func:`sessionval.analysis.curves.individual_curves`.  The stopping point of a
        session is its last position not held.
    cutoff
        X (query boundaries).
    x, y, unit, held
        Column names.
    params
        Parameters shown under the title.
    normalised
        Draw nsDCG (True) or sDCG (False, the paper's Figure 4).
    measure
        With a ``measure`` column, the rows drawn (default from ``normalised``).
    title
        Title line.
    ax
        Axes to draw on.

    Returns
    -------
    matplotlib.axes.Axes
        One grey-to-colour line per session (label ``_session <id>``, kept out
        of the legend) and one marker series ``"searcher stopped"`` with a point
        per session at its stopping position.

    References
    ----------
    Järvelin et al. (2008), Figure 4 (jarvelin2008); the paper could not mark
    the stopping points, the log gives them here.
    """
    require_columns(curves, [x, y, unit, held], "plot_individual_sessions")
    what = "nsDCG" if normalised else "sDCG"
    curves = _select(curves, measure or what.lower(), "plot_individual_sessions")
    ax = new_axes(ax)
    # colours follow the sorted session ids, not the order of the input
    groups = _series(curves, [unit], by_id=[unit])
    for i, (key, part) in enumerate(groups):
        part = part.sort_values(x)
        ax.plot(
            part[x].to_numpy(dtype=np.float64),
            part[y].to_numpy(dtype=np.float64),
            color=PALETTE[i % (len(PALETTE) - 1)],
            linestyle=LINESTYLES[(i // (len(PALETTE) - 1)) % len(LINESTYLES)],
            linewidth=0.9,
            alpha=0.9,
            label=f"_session {key[0]}",
        )
    live = curves[~curves[held].astype(bool)]
    last = live.groupby(live[unit].astype(str), sort=True, observed=True)[x].idxmax()
    stops = curves.loc[last.to_numpy()]
    ax.scatter(
        stops[x].to_numpy(dtype=np.float64),
        stops[y].to_numpy(dtype=np.float64),
        marker="o",
        s=14,
        facecolors="none",
        edgecolors="black",
        linewidths=0.8,
        zorder=3,
        label="searcher stopped",
    )
    n_q = int(np.ceil(float(curves[x].max()) / cutoff))
    _mark_queries(ax, cutoff, n_q)
    if title is None:
        title = f"Individual sessions (n={len(groups)})"
    return finish_axes(
        ax,
        xlabel=f"position in concatenated top-{cutoff} results",
        ylabel=what,
        params=params,
        title=title,
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

    _notebook_display()
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
            ax.tick_params(labelsize=_FONT["tick"])
            ax.grid(True, linewidth=0.3, alpha=0.5)
            if (m, r) in rho:
                ax.set_title(
                    f"rho={rho[(m, r)][0]:.3f}, tau={rho[(m, r)][1]:.3f}", fontsize=_FONT["title"]
                )
            # rating names come from the logs: drawn as written
            if i == len(measures) - 1:
                plain_text(ax.set_xlabel(r.removeprefix("rating_"), fontsize=_FONT["label"]))
            if j == 0:
                plain_text(ax.set_ylabel(m, fontsize=_FONT["legend"]))
    text = params_text(params) if params else ""
    fig.suptitle(
        "Session measures against the searchers' ratings" + (f"\n({text})" if text else ""),
        fontsize=_FONT["label"],
    )
    return fig


def _figure_of(obj: Axes | Figure) -> Figure:
    fig = obj.get_figure() if hasattr(obj, "get_figure") and not hasattr(obj, "savefig") else obj
    if fig is None or not hasattr(fig, "savefig"):
        raise SessionvalError("save_figure: the Axes is not attached to a Figure")
    return fig  # type: ignore[return-value]


def figure_bytes(obj: Axes | Figure, fmt: ImageFormat = "png", *, dpi: int = 200) -> bytes:
    """Render a figure (or the figure of an Axes) to PNG, SVG or PDF bytes.

    Metadata dates are left out so the same figure gives the same bytes.

    Parameters
    ----------
    obj
        The Axes or Figure.
    fmt
        ``"png"``, ``"svg"`` or ``"pdf"``.
    dpi
        Resolution of PNGs.

    Returns
    -------
    bytes
    """
    if fmt not in ("png", "svg", "pdf"):
        raise SessionvalError(f"unknown image format {fmt!r}; allowed: png, svg, pdf")
    fig = _figure_of(obj)
    buf = io.BytesIO()
    metadata: dict[str, Any] = {
        "svg": {"Date": None},
        "pdf": {"CreationDate": None},
        "png": {"Software": None},
    }[fmt]
    import matplotlib as mpl

    # a fixed salt makes SVG element ids (and so the bytes) reproducible
    with mpl.rc_context({"svg.hashsalt": "sessionval"}):
        fig.savefig(buf, format=fmt, dpi=dpi, metadata=metadata)
    return buf.getvalue()


def save_figure(
    obj: Axes | Figure,
    stem: str | Path,
    *,
    formats: Sequence[ImageFormat] = ("png", "svg", "pdf"),
    dpi: int = 300,
) -> list[Path]:
    """Write a figure as ``<stem>.png``, ``.svg`` and ``.pdf``.

    Parameters
    ----------
    obj
        The Axes (its figure is saved) or Figure.
    stem
        Path without suffix; the directory must exist.
    formats
        Which formats.
    dpi
        Resolution of the PNG (300: print quality at column width).

    Returns
    -------
    list of pathlib.Path
        Files written, in ``formats`` order (all with the same layout).
    """
    stem = Path(stem)
    fig = _figure_of(obj)
    # lay out once, then keep that layout for every format (and save the work of redoing it)
    engine = fig.get_layout_engine()
    fig.draw_without_rendering()
    fig.set_layout_engine("none")
    out = []
    try:
        for fmt in formats:
            path = stem.with_name(f"{stem.name}.{fmt}")
            data = figure_bytes(fig, fmt, dpi=dpi)
            with writing(path):
                path.write_bytes(data)
            out.append(path)
    finally:
        fig.set_layout_engine(engine)
    return out

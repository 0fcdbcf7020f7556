"""The look shared by every figure: palette, fonts, one-column axes, legends and lines.

The figure families (:mod:`~sessionval.output.rank_plots`,
:mod:`~sessionval.output.session_plots`, :mod:`~sessionval.output.rating_plots`,
:mod:`~sessionval.output.meta_plots`) draw with these helpers, so every figure of the
toolkit has the same fonts, colours and legend rules; :mod:`sessionval.output.plots`
gathers the public names.

Colours are the Okabe–Ito palette (safe for the common colour-vision deficiencies) and
each series also gets its own line style, so figures survive grey-scale printing.  A
system's colour and its place in the legend are a function of the system ids
(:func:`system_colours`: sorted ids), not of the order the data list them.  Ids are
drawn as plain text (:func:`plain_text`: no mathtext, no TeX).  With more than
:data:`LEGEND_INSIDE_MAX` legend entries the legend moves outside the axes (the
figure widens to hold it).

matplotlib (extra ``plots``) is imported only when a figure is drawn.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, TypeAlias

import numpy as np
import pandas as pd

from ..errors import SessionvalError
from .parameters import params_text

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = [
    "BAND_COLUMNS",
    "COLUMN_FIGSIZE",
    "FONT",
    "LEGEND_INSIDE_MAX",
    "LINESTYLES",
    "OWN_FIGURE",
    "PALETTE",
    "LegendEntries",
    "draw_lines",
    "finish_axes",
    "new_axes",
    "notebook_display",
    "plain_text",
    "require_columns",
    "select_measure",
    "split_series",
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
#: Font sizes in points: axis labels, tick labels, legend, title.
FONT: Final = {"label": 8.0, "tick": 7.0, "legend": 6.5, "title": 6.5}
#: Legends with more entries than this go outside the axes.
LEGEND_INSIDE_MAX: Final = 4
#: The label of a figure this module made (so it may widen it for an outside legend).
OWN_FIGURE: Final = "sessionval-column-figure"


def notebook_display() -> None:
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
    """``ax``, or the axes of a new one-column figure that pyplot does not manage."""
    if ax is not None:
        return ax
    from matplotlib.figure import Figure

    # a bare Figure (no pyplot state): nothing global, nothing to close
    notebook_display()
    fig = Figure(figsize=figsize, layout="constrained")
    fig.set_label(OWN_FIGURE)
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

    notebook_display()
    fig = Figure(figsize=figsize, layout="constrained")
    return fig, fig.subplots(nrows, ncols, **kwargs)


def require_columns(table: pd.DataFrame, columns: Sequence[str | None], what: str) -> None:
    """Refuse a table without the ``columns`` or without rows, naming the figure ``what``."""
    missing = [c for c in columns if c is not None and c not in table.columns]
    if missing:
        raise SessionvalError(
            f"{what}: column(s) {missing} not in the table; columns are {list(table.columns)}"
        )
    if len(table) == 0:
        raise SessionvalError(f"{what}: the table is empty, nothing to plot")


def select_measure(table: pd.DataFrame, measure: str | None, what: str) -> pd.DataFrame:
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
        if fig is not None and fig.get_label() == OWN_FIGURE:
            longest = max(len(lab) for lab in labels)
            w, h = COLUMN_FIGSIZE
            fig.set_size_inches(w + 0.55 + 0.6 * FONT["legend"] / 72 * longest, h)
    leg = ax.legend(
        handles,
        labels,
        fontsize=FONT["legend"],
        title=title,
        title_fontsize=FONT["legend"],
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
    """Labels, fonts, the title with the parameters behind the numbers, grid and legend."""
    ax.set_xlabel(xlabel, fontsize=FONT["label"])
    ax.set_ylabel(ylabel, fontsize=FONT["label"])
    ax.tick_params(labelsize=FONT["tick"])
    text = params_text(params) if params else ""
    heading = "\n".join(t for t in (title, f"({text})" if text else "") if t)
    plain_text(ax.set_title(heading, fontsize=FONT["title"]))
    ax.grid(True, linewidth=0.3, alpha=0.5)
    if legend:
        _legend(ax, entries, legend_title)
    return ax


def split_series(
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
    for i, (key, part) in enumerate(split_series(table, keys, by_id=[hue] if hue else [])):
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

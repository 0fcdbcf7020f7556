"""Session curves: Järvelin et al. (2008) Figures 2, 3 and 4.

* :func:`plot_session_curves`: Figures 2 and 3, mean (normalised or raw) session
  curves over concatenated top-X results, query boundaries marked Q1…Qn; a ``style``
  column draws subsets (all vs at least k queries) dashed;
* :func:`plot_individual_sessions`: Figure 4, every session held after the searcher
  stopped, with the stopping points marked (the run draws at most ``[figures]
  max_sessions`` of them).

Query labels Q1…Qn thin out when they would overlap.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

import numpy as np
import pandas as pd

from ..errors import SessionvalError
from .figure_style import (
    BAND_COLUMNS,
    FONT,
    LINESTYLES,
    PALETTE,
    draw_lines,
    finish_axes,
    new_axes,
    require_columns,
    select_measure,
    split_series,
)

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["plot_individual_sessions", "plot_session_curves"]

#: Width of a query label Q<n> at the tick font with its gap, in inches (for thinning).
_QUERY_LABEL_INCHES: Final = 0.26


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
    # named identity functions, not matplotlib's default lambdas: the figure pickles (it
    # is rendered in the run's background process)
    top = ax.secondary_xaxis("top", functions=(_same, _same))
    fig = ax.get_figure(root=True)
    width = fig.get_size_inches()[0] * ax.get_position().width if fig is not None else 3.0
    fits = max(1, int(width / _QUERY_LABEL_INCHES))
    step = -(-n_queries // fits)
    shown = np.arange(1, n_queries + 1, step)
    top.set_xticks((shown - 0.5) * cutoff + 0.5, labels=[f"Q{q}" for q in shown])
    top.tick_params(labelsize=FONT["tick"] - 1 if n_queries > 8 else FONT["tick"], length=0)
    ax.set_xlim(0.5, n_queries * cutoff + 0.5)


def _same(x: Any) -> Any:
    """The secondary axis' scale: the same as the main axis'."""
    return x


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
    curves = select_measure(curves, measure or what.lower(), "plot_session_curves")
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
    curves = select_measure(curves, measure or what.lower(), "plot_individual_sessions")
    ax = new_axes(ax)
    # colours follow the sorted session ids, not the order of the input
    groups = split_series(curves, [unit], by_id=[unit])
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

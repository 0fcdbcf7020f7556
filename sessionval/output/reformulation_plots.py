"""Figures of the reformulations: gain per type or group with intervals, the transition heatmap.

Both take the tidy tables of :mod:`sessionval.analysis.reformulation_effects` and draw
exactly their numbers (Axes in, Axes out, as :mod:`sessionval.output.plots`):

* :func:`plot_reformulation_gains`: one row per category (type or group), one point per
  system at its mean outcome with the confidence interval as a bar;
* :func:`plot_transition_heatmap`: the share of each row of the transition matrix
  (which type follows which; ``end``: the session stopped), with the shares printed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ..errors import SessionvalError
from .figure_style import finish_axes, new_axes, plain_text, require_columns, system_colours

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = [
    "plot_reformulation_gains",
    "plot_transition_heatmap",
]

_OUTCOME_LABELS = {
    "delta_dcg": "change of DCG@X from the earlier query",
    "new_relevant": "new relevant documents in the top X",
}


def plot_reformulation_gains(
    effects: pd.DataFrame,
    *,
    level: str = "group",
    outcome: str = "delta_dcg",
    params: Mapping[str, object] | None = None,
    title: str | None = None,
    ax: Axes | None = None,
) -> Axes:
    """Mean ``outcome`` per category of ``level`` and system, with the confidence intervals.

    Parameters
    ----------
    effects
        :func:`~sessionval.analysis.reformulation_effects.reformulation_effects`.
    level
        ``"group"`` or ``"type"``.
    outcome
        ``"delta_dcg"`` or ``"new_relevant"``.
    params, title, ax
        Parameters shown in the title, a title, an Axes to draw into.

    Returns
    -------
    matplotlib.axes.Axes
    """
    require_columns(effects, ["level", "category", "system_id", "outcome", "mean"], "gain figure")
    part = effects[(effects["level"] == level) & (effects["outcome"] == outcome)]
    if part.empty:
        raise SessionvalError(f"gain figure: no rows of level {level!r} and outcome {outcome!r}")
    categories = list(dict.fromkeys(part["category"].astype(str)))
    systems = sorted(set(part["system_id"].astype(str)))
    colours = system_colours(systems)
    height = max(2.0, 0.3 * len(categories) + 1.2)
    ax = new_axes(ax, (3.5, height))
    y_of = {c: i for i, c in enumerate(categories)}
    step = 0.7 / max(len(systems), 1)
    for k, system in enumerate(systems):
        rows = part[part["system_id"].astype(str) == system]
        y = np.array([y_of[c] for c in rows["category"].astype(str)], dtype=float)
        y += (k - (len(systems) - 1) / 2) * step
        mean = rows["mean"].to_numpy(dtype=float)
        low = mean - rows["ci_low"].to_numpy(dtype=float)
        high = rows["ci_high"].to_numpy(dtype=float) - mean
        ax.errorbar(
            mean,
            y,
            xerr=np.vstack([np.nan_to_num(low), np.nan_to_num(high)]),
            fmt="o",
            markersize=3,
            linewidth=0.8,
            capsize=1.5,
            color=colours[system],
            label=system,
        )
    ax.axvline(0.0, color="black", linewidth=0.6)
    ax.set_yticks(range(len(categories)), [c.replace("_", " ") for c in categories])
    ax.invert_yaxis()
    plain_text(*ax.get_yticklabels())
    return finish_axes(
        ax,
        xlabel=_OUTCOME_LABELS.get(outcome, outcome),
        ylabel="",
        params=params,
        title=title,
        legend_title="system",
    )


def plot_transition_heatmap(
    transitions: pd.DataFrame,
    *,
    title: str | None = None,
    ax: Axes | None = None,
) -> Axes:
    """The transition matrix as a heatmap: share of each row, printed in the cells.

    Parameters
    ----------
    transitions
        :func:`~sessionval.analysis.reformulation_effects.reformulation_transitions`.
    title, ax
        A title, an Axes to draw into.

    Returns
    -------
    matplotlib.axes.Axes
    """
    require_columns(transitions, ["from_type", "to_type", "share"], "transition heatmap")
    rows = list(dict.fromkeys(transitions["from_type"].astype(str)))
    # the row types head the columns too, so the diagonal is "the same move again"
    seen = [c for c in dict.fromkeys(transitions["to_type"].astype(str)) if c != "end"]
    cols = [*rows, *(c for c in seen if c not in rows), "end"]
    matrix = (
        transitions.pivot_table(
            index="from_type", columns="to_type", values="share", aggfunc="sum", fill_value=0.0
        )
        .reindex(index=rows, columns=cols, fill_value=0.0)
        .to_numpy(dtype=float)
    )
    size = 0.32
    ax = new_axes(ax, (1.6 + size * len(cols), 1.2 + size * len(rows)))
    ax.imshow(matrix, cmap="Blues", vmin=0.0, vmax=1.0, aspect="auto")
    for (i, j), v in np.ndenumerate(matrix):
        if v > 0:
            colour = "white" if v > 0.6 else "black"
            ax.text(j, i, f"{v:.2f}", ha="center", va="center", fontsize=5, color=colour)
    ax.set_xticks(range(len(cols)), [c.replace("_", " ") for c in cols], rotation=60, ha="right")
    ax.set_yticks(range(len(rows)), [c.replace("_", " ") for c in rows])
    plain_text(*ax.get_xticklabels(), *ax.get_yticklabels())
    ax = finish_axes(
        ax, xlabel="next reformulation", ylabel="reformulation", params=None, title=title
    )
    ax.grid(False)
    return ax

"""The run's reformulation figures: gain per group with intervals, the transition heatmap.

Each figure is written in the ``[figures] formats`` with the table behind it (``.csv``),
as the run's other figures are, and returned for the report.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from ..output import plots
from ..output.reformulation_plots import plot_reformulation_gains, plot_transition_heatmap
from ..output.report import ReportFigure
from .outputs import RunOutputs

__all__ = ["reformulation_figures"]


def reformulation_figures(
    outputs: RunOutputs,
    effects: pd.DataFrame,
    transitions: pd.DataFrame,
    *,
    params: Mapping[str, Any],
    formats: Sequence[plots.ImageFormat] = ("png", "svg", "pdf"),
) -> tuple[ReportFigure, ...]:
    """Draw and write ``figures/reformulation_gains`` and ``figures/reformulation_transitions``.

    ``formats`` are the image formats written (``[figures] formats``); the report embeds
    the PNG written, reduced to 150 dpi (drawn at 150 dpi when no PNG is written), and
    offers the SVG when one was written.
    """
    (outputs.root / "figures").mkdir(parents=True, exist_ok=True)
    gains = effects[(effects["level"] == "group") & (effects["outcome"] == "delta_dcg")]
    drawn = [
        (
            "reformulation_gains",
            "Change of DCG by reformulation group and system",
            plot_reformulation_gains(effects, params=params),
            gains,
            "Mean change of DCG@X from the earlier to the later query per group of "
            "reformulation, with the confidence interval of tables/reformulation_effects.csv. ",
        ),
        (
            "reformulation_transitions",
            "Which reformulation follows which",
            plot_transition_heatmap(transitions),
            transitions,
            "Share of each row: the type of the next reformulation in the session, or "
            "'end' when the searcher issued no further query. ",
        ),
    ]
    out = []
    for name, title, ax, table, caption in drawn:
        outputs.write_frame(f"figures/{name}.csv", table)
        files = outputs.figures.write(ax, outputs.root / "figures" / name, formats=formats)
        outputs.add(*files.paths)
        out.append(
            ReportFigure(
                title,
                files.report_png,
                caption=caption + plots.params_text(params),
                svg=files.svg,
            )
        )
    return tuple(out)

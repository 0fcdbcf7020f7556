"""The figure steps of ``sessionval run``: which cell to show, the tables, the drawings.

:func:`figure_cell` picks the scenario of Figures 3 and 4 and the system of Figure 4
among the cells that have sessions (:mod:`~sessionval.workflow.figure_cell`);
:func:`figure_data` computes the table behind every figure and notes a figure that
cannot be drawn (no session in the cell, no position, no judged relevant document),
:func:`write_figure_tables` writes them (:mod:`~sessionval.workflow.figure_tables`);
:func:`draw_figures` draws the others (:mod:`~sessionval.workflow.figure_drawing`).
A figure that cannot be drawn is skipped with a note in the report, never fatal.
This module gathers their public names.

Headings name the papers: Järvelin et al. 2008 (Figures 1–4, sDCG) and Järvelin &
Kekäläinen 2002 (Figures 1–4, the CG family).
"""

from __future__ import annotations

from typing import Final

from .figure_cell import FigureCell, figure_cell, figure_cell_from_partial
from .figure_drawing import draw_figures
from .figure_tables import (
    CG_MEASURES,
    JARVELIN_2008,
    JK_2002,
    FigureData,
    figure_data,
    figure_data_from_partial,
    figure_partial_of,
    write_figure_tables,
)

__all__ = [
    "CG_MEASURES",
    "JARVELIN_2008",
    "JK_2002",
    "NO_FIGURES",
    "FigureCell",
    "FigureData",
    "draw_figures",
    "figure_cell",
    "figure_cell_from_partial",
    "figure_data",
    "figure_data_from_partial",
    "figure_partial_of",
    "write_figure_tables",
]

#: The run's note when the figures are left out (``--no-figures``).
NO_FIGURES: Final = (
    "figures not drawn (--no-figures): the report and tables/ have every score; "
    "figures/ is not written"
)

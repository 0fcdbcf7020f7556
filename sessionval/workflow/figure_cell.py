"""The cell of Figures 3 and 4 of ``sessionval run``: the scenario and the system shown.

:func:`figure_cell` checks ``[figures] scenario`` and ``system`` against the study or
picks them from its cells (Järvelin et al. 2008, Figures 3 and 4 show one scenario, and
Figure 4 one system in it); :func:`figure_cell_from_partial` does the same from the
combined partials of a distributed run.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..analysis.curve_partials import FigurePartial, cell_counts
from ..errors import InputFormatError
from ..frame import LoadedStudy
from .settings import FigureSettings

__all__ = ["FigureCell", "figure_cell", "figure_cell_from_partial"]


@dataclass(frozen=True)
class FigureCell:
    """The scenario of Figures 3 and 4 and the system of Figure 4.

    ``n_sessions`` is the number of sessions in the cell (0: Figure 4 is skipped);
    ``note`` says how the cell was chosen when the user did not name it.
    """

    scenario: str
    system: str
    n_sessions: int = 0
    note: str = ""


def _best(names: np.ndarray, *keys: np.ndarray) -> str:
    """The name with the largest keys (lexicographic), ties to the first name in sorted order."""
    order = np.lexsort((*(-k for k in reversed(keys)),))  # stable: names arrive sorted
    return str(names[order[0]])


def figure_cell(loaded: LoadedStudy, figures: FigureSettings) -> FigureCell:
    """Check ``[figures] scenario`` / ``system`` against the study, or pick them from its cells.

    The default scenario is the topic with the most sessions of at least
    ``min_queries`` queries (then the most sessions; ties: first by name), among the
    sessions of ``[figures] system`` when it is given; the default system the one
    with the most sessions in that scenario (ties: first by name).  So a default
    cell always has sessions; a cell the user names may have none (Figure 4 is then
    skipped with a note).

    Raises
    ------
    InputFormatError
        The scenario is not a topic, or the system not a system, of the study.
    """
    return _pick_cell(cell_counts(loaded.frame.sessions, figures.min_queries), figures)


def figure_cell_from_partial(partial: FigurePartial, figures: FigureSettings) -> FigureCell:
    """:func:`figure_cell` of the whole study, from the combined partials of its partitions.

    Raises
    ------
    InputFormatError
        As :func:`figure_cell`.
    """
    return _pick_cell(partial.cells, figures)


def _pick_cell(cells: pd.DataFrame, figures: FigureSettings) -> FigureCell:
    """:func:`figure_cell` on the cell counts of a study (:func:`cell_counts`)."""
    topic = cells["topic_id"].to_numpy(dtype=str)
    system = cells["system_id"].to_numpy(dtype=str)
    n = cells["n_sessions"].to_numpy(dtype=np.int64)
    long_enough = cells["n_long"].to_numpy(dtype=float)
    for key, given, values in (
        ("scenario", figures.scenario, topic),
        ("system", figures.system, system),
    ):
        if given is not None and given not in set(values):
            kind = "topic" if key == "scenario" else "system"
            raise InputFormatError(
                f"[figures] {key} {given!r} is not a {kind} of the study; "
                f"{kind}s: {sorted(set(values))}"
            )
    scenario = figures.scenario
    if scenario is None:
        pool = system == figures.system if figures.system is not None else np.ones(n.size, bool)
        names, codes = np.unique(topic[pool], return_inverse=True)
        n_long = np.bincount(codes, weights=long_enough[pool], minlength=names.size)
        scenario = _best(names, n_long, np.bincount(codes, weights=n[pool], minlength=names.size))
    in_scenario = topic == scenario
    fig_system = figures.system
    if fig_system is None:
        names, codes = np.unique(system[in_scenario], return_inverse=True)
        fig_system = _best(names, np.bincount(codes, weights=n[in_scenario], minlength=names.size))
    n_cell = int(n[in_scenario & (system == fig_system)].sum())
    picked = [
        f"{key} {value!r}"
        for key, value, given in (
            ("scenario", scenario, figures.scenario),
            ("system", fig_system, figures.system),
        )
        if given is None
    ]
    note = ""
    if picked:
        note = (
            f"Figures 3 and 4 show {' and '.join(picked)}: the scenario with the most sessions "
            f"of at least {figures.min_queries} queries and the system with the most sessions "
            "in it ([figures] scenario and system choose others)."
        )
    return FigureCell(scenario=scenario, system=fig_system, n_sessions=n_cell, note=note)

"""The run's last stage, shared by the local and the distributed run: ``report.html``.

Both runs write the same report from their state; they differ only in where the
per-system scores come from (the per-session table, or the design cells' sums folded
from the workers) and in their notes on the run, which the caller passes.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from ..errors import phase
from ..output.report import ReportSection
from .run_state import RunState, need
from .steps import write_report_step

__all__ = ["write_run_report"]


def write_run_report(
    state: RunState,
    *,
    scores: pd.DataFrame,
    score_notes: Sequence[str],
    notes: Sequence[str],
    reformulations: ReportSection | None,
) -> None:
    """Write ``report.html`` from a run's state; set ``state.scores``.

    Parameters
    ----------
    state
        The run's state after every other stage (settled, validated, drawn, statistics,
        correlations).
    scores, score_notes
        The per-system score table of the report and its notes (``report_scores`` or
        ``report_scores_from_cells``).
    notes
        The stages' notes on the run (figures and exports skipped, results not made).
    reformulations
        The reformulations' report section, if the run made one.
    """
    plan, validated = need(state.settled, "settled"), need(state.validated, "validated")
    statistics = need(state.statistics, "statistics")
    correlations = state.correlations  # None: no session has a rating
    with phase("writing the report of", validated.n_sessions, "sessions"):
        state.scores = write_report_step(
            state.outputs,
            report=validated.report,
            name=validated.name,
            summary=validated.summary,
            scores=scores,
            score_notes=score_notes,
            settings=plan.settings,
            figures=list(need(state.drawn, "drawn").figures),
            source=plan.request.logs,
            notes=notes,
            sections=[
                *statistics.sections,
                *([correlations] if correlations is not None else []),
                *([reformulations] if reformulations is not None else []),
            ],
        )

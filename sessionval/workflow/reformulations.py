"""The run's reformulation step: what each query change did to the session.

:func:`reformulation_step` writes, in the run's table formats:

``tables/reformulations``
    one row per consecutive query pair
    (:func:`sessionval.analysis.reformulations.reformulations`);
``tables/reformulation_effects``
    mean change of DCG and of new relevant documents per type and group and system,
    t intervals over the design's independent units
    (:func:`~sessionval.analysis.reformulation_effects.reformulation_effects`);
``tables/reformulation_comparisons``
    with two systems or more, the systems compared on each session's mean outcome per
    group and type as the design asks
    (:func:`~sessionval.analysis.reformulation_effects.compare_reformulation_levels`:
    both levels in one comparison);
``tables/reformulation_transitions``
    which type follows which, and the share ending the session;
``tables/reformulation_strategies``
    the OLS of nsDCG on the groups a session used, with the design's blocks;

draws ``figures/reformulation_gains`` and ``figures/reformulation_transitions`` (unless
``figure=False``) and returns the report's section.  A study kept on a cluster's
workers has no result rows on the client, so its reformulations are not computed (the
run notes :data:`NO_RESULT_ROWS`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import pandas as pd

from ..analysis.design import detect_design
from ..analysis.reformulation_effects import (
    compare_reformulation_levels,
    reformulation_effects,
    reformulation_transitions,
)
from ..analysis.reformulation_partials import (
    ReformulationPartial,
    distribution_of,
    effects_of,
    transitions_of,
)
from ..analysis.reformulation_strategies import strategy_model
from ..analysis.reformulation_types import TYPES
from ..analysis.reformulations import reformulations
from ..evaluation.result import SessionEvaluation
from ..frame import JudgmentFrame
from ..output.plots import ImageFormat
from ..output.report import ReportFigure, ReportSection, ReportTable
from .outputs import RunOutputs
from .reformulation_figures import reformulation_figures
from .settings import StatisticsSettings

__all__ = [
    "NOT_FROM_PARTIALS",
    "NO_RESULT_ROWS",
    "ReformulationResult",
    "reformulation_step",
    "reformulation_step_from_partial",
]

#: The run's note when the result rows stay on the workers (a partitioned study on Dask).
NO_RESULT_ROWS: Final = (
    "reformulations not computed: the result rows stayed on the cluster's workers "
    "(partitioned input on Dask); run on one machine for tables/reformulations.csv"
)


@dataclass(frozen=True)
class ReformulationResult:
    """The reformulation tables the run wrote and the report's section (``None``: no pair)."""

    table: pd.DataFrame
    effects: pd.DataFrame
    comparisons: pd.DataFrame
    transitions: pd.DataFrame
    strategies: pd.DataFrame
    section: ReportSection | None


def reformulation_step(
    outputs: RunOutputs,
    ev: SessionEvaluation,
    judgments: JudgmentFrame | None,
    per_session: pd.DataFrame,
    statistics: StatisticsSettings,
    *,
    formats: Sequence[str] = ("csv", "parquet"),
    figure: bool = True,
    params: Mapping[str, Any] | None = None,
    figure_formats: Sequence[ImageFormat] = ("png", "svg", "pdf"),
) -> ReformulationResult:
    """Compute and write the reformulation tables (module docstring); the report's section.

    ``formats`` are the table formats, ``figure_formats`` the image formats, ``params``
    the session parameters the figures print.
    """
    table = reformulations(ev, judgments)
    design = detect_design(per_session, design=statistics.design, block=statistics.block)
    unit = "user_id" if design.design in ("within", "between") else "session_id"
    effects = reformulation_effects(table, unit=unit, confidence=statistics.confidence)
    options: dict[str, Any] = {
        "design": statistics.design,
        "block": statistics.block,
        "confidence": statistics.confidence,
        "alpha": statistics.alpha,
        "correction": statistics.correction,
    }
    comparisons = compare_reformulation_levels(
        table, per_session, levels=("group", "type"), options=options
    )
    transitions = reformulation_transitions(table)
    strategies = strategy_model(table, per_session, confidence=statistics.confidence)
    written = {
        "reformulations": table,
        "reformulation_effects": effects,
        "reformulation_transitions": transitions,
        "reformulation_strategies": strategies,
    }
    if len(comparisons):
        written["reformulation_comparisons"] = comparisons
    for name, frame in written.items():
        for ext in formats:  # encoded on the run's writer thread while the figures are drawn
            outputs.write_frame(f"tables/{name}.{ext}", frame, background=outputs.writes)
    figures: tuple[ReportFigure, ...] = ()
    if figure and len(table):
        figures = reformulation_figures(
            outputs, effects, transitions, params=params or {}, formats=figure_formats
        )
    section = (
        _section(
            _distribution(table),
            (len(table), int(table["session_id"].nunique())),
            effects,
            comparisons,
            transitions,
            strategies,
            unit,
            figures,
        )
        if len(table)
        else None
    )
    return ReformulationResult(table, effects, comparisons, transitions, strategies, section)


#: The note of a distributed run on the analyses that need every reformulation row.
NOT_FROM_PARTIALS: Final = (
    "reformulations of a distributed run: the pairs are in tables/reformulations/ (one part "
    "per partition) and the types, transitions and effects come from the partitions' sums; "
    "the comparison of the systems per group and the strategy model need every session's "
    "row and were not made: run them on the parts "
    "(sessionval.stats.compare_reformulation_effects, strategy_model)"
)


def reformulation_step_from_partial(
    outputs: RunOutputs,
    partial: ReformulationPartial,
    design: str,
    statistics: StatisticsSettings,
    *,
    formats: Sequence[str] = ("parquet",),
    figure: bool = True,
    params: Mapping[str, Any] | None = None,
    figure_formats: Sequence[ImageFormat] = ("png", "svg", "pdf"),
) -> ReportSection | None:
    """The reformulation tables, figures and section of a distributed run, from its partials.

    ``design`` is the study's (:class:`~sessionval.analysis.design.Design`'s ``design``):
    a user study averages each searcher first, a log each session, as
    :func:`reformulation_step` does.  ``None`` when the study has no query pair.
    """
    if partial.n_pairs == 0:
        return None
    unit = "user_id" if design in ("within", "between") else "session_id"
    effects = effects_of(partial, unit=unit, confidence=statistics.confidence)
    transitions = transitions_of(partial)
    for name, frame in (
        ("reformulation_effects", effects),
        ("reformulation_transitions", transitions),
    ):
        for ext in formats:
            outputs.write_frame(f"tables/{name}.{ext}", frame)
    figures: tuple[ReportFigure, ...] = ()
    if figure:
        figures = reformulation_figures(
            outputs, effects, transitions, params=params or {}, formats=figure_formats
        )
    return _section(
        distribution_of(partial),
        (partial.n_pairs, partial.n_sessions),
        effects,
        pd.DataFrame(),
        transitions,
        None,
        unit,
        figures,
        notes=(NOT_FROM_PARTIALS,),
    )


def _distribution(table: pd.DataFrame) -> pd.DataFrame:
    """Count and share of each type (with its group), in the taxonomy's order."""
    counts = table.groupby(["type", "group"], observed=True).size().rename("n").reset_index()
    counts["share"] = counts["n"] / counts["n"].sum()
    return counts.astype({"type": str, "group": str})


def _section(
    distribution: pd.DataFrame,
    counts: tuple[int, int],
    effects: pd.DataFrame,
    comparisons: pd.DataFrame,
    transitions: pd.DataFrame,
    strategies: pd.DataFrame | None,
    unit: str,
    figures: tuple[ReportFigure, ...],
    notes: tuple[str, ...] = (),
) -> ReportSection:
    """The report's section on the reformulations.

    ``counts`` are the pairs and the sessions they lie in; ``strategies`` ``None``
    when the strategy model was not fitted (a distributed run: ``notes`` say why).
    """
    units = {"user_id": "searcher", "session_id": "session"}[unit]
    groups = effects[effects["level"] == "group"].drop(columns=["level", "unit"])
    matrix = transitions.pivot_table(
        index="from_type", columns="to_type", values="share", aggfunc="sum", fill_value=0.0
    )
    order = [c for c in (*TYPES, "end") if c in matrix.columns]
    rows = [c for c in TYPES if c in matrix.index]
    matrix = matrix.loc[rows, order].reset_index()
    tables = [
        ReportTable(
            "Types of reformulation (tables/reformulations.csv)",
            distribution,
            note="share: of all consecutive query pairs of the study.",
            digits=3,
        ),
        ReportTable(
            "Effect per group and system (tables/reformulation_effects.csv)",
            groups,
            note=f"mean of the {units} means; ci: t interval over the {units}s (NaN with "
            "fewer than two); the types are in the CSV.",
            digits=3,
        ),
    ]
    if len(comparisons):
        shown = comparisons[comparisons["level"] == "group"]
        cols = ["measure", "a", "b", "n", "diff", "ci_low", "ci_high", "p_adjusted", "test"]
        tables.append(
            ReportTable(
                "Systems compared per group (tables/reformulation_comparisons.csv)",
                shown.loc[:, [*cols, "note"]],
                note="each session's mean outcome per group compared between the systems as "
                "the study's design asks (the statistics section's method); the types are "
                "in the CSV.",
                digits=3,
            )
        )
    tables.append(
        ReportTable(
            "Which type follows which (tables/reformulation_transitions.csv)",
            matrix,
            note="share of each row; 'end': the searcher issued no further query.",
            digits=2,
        )
    )
    if strategies is not None:
        tables.append(
            ReportTable(
                "Strategies used and nsDCG (tables/reformulation_strategies.csv)",
                strategies.drop(columns=["formula"]),
                note=(strategies["formula"].iloc[0] if len(strategies) else "")
                + ": ordinary least squares with the design's blocks as fixed effects; "
                "associations, not causal effects.",
                digits=3,
            )
        )
        notes = (*notes, *strategies.attrs.get("notes", ()))
    n_pairs, n_sessions = counts
    return ReportSection(
        id="reformulations",
        title="Reformulations: what each query change did",
        intro=(
            f"{n_pairs} reformulations (consecutive query pairs) in {n_sessions} "
            "sessions, each typed by the rules of Huang & Efthimiadis (CIKM 2009) and "
            "grouped after Boldi et al. (2009): specialisation, generalisation, parallel, "
            "repeat, new (docs/reformulations.md).",
            "delta_dcg: the later query's DCG@X minus the earlier's; new_relevant: documents "
            "of the later query's top X not shown before in the session with a reference "
            "grade of 1 or more.",
        ),
        tables=tuple(tables),
        figures=figures,
        notes=tuple(notes),
    )

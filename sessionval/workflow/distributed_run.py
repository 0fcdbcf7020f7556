"""``sessionval run --engine dask`` with the results left where they are computed.

The stages of a run whose placement is ``distributed``
(:data:`~sessionval.workflow.plan.Placement`): the partitions are validated, scored
and written by the workers (:func:`~sessionval.workflow.distributed.run_partitions`),
and the client finishes the run from the partials they return, never holding a
session's row: the study summary from the counts, the report's scores and the
design-aware comparisons from the sums per design cell
(:mod:`sessionval.analysis.cell_sums`), the figures from the sums by rank
(:mod:`sessionval.analysis.curve_partials`).  Their tables equal the local run's on
a study that fits one machine (``tests/workflow/test_distributed_run.py``).

The reformulations are written as parts too, and their types, transitions and
effects come from sums (:mod:`sessionval.analysis.reformulation_partials`).  What
needs every session at once is not made here, and the report says so: the mixed
model, the rank correlations with the ratings and their scatter, the reformulation
comparisons and strategy model, and the exports (the tables are Parquet parts: R's
``arrow::open_dataset``, pandas and DuckDB read a folder of them as one table).
"""

from __future__ import annotations

from functools import partial
from typing import Any, Final

from ..analysis.cell_sums import design_from_cells
from ..analysis.curve_partials import FigurePartial, combine_figure_partials
from ..analysis.reformulation_partials import ReformulationPartial, reformulation_partial
from ..analysis.reformulations import reformulations
from ..analysis.summary import summary_from_counts
from ..errors import InputFormatError, SessionvalError, ValidationFailed, phase
from ..evaluation.dask_engine import DaskEngine
from ..io.partitioned import PartitionSetup, prepare_partitions
from .correlations import correlation_from_sums
from .distributed import PartitionJob, Reduction, ScoredPartition, run_partitions
from .figures import (
    NO_FIGURES,
    draw_figures,
    figure_cell_from_partial,
    figure_data_from_partial,
    figure_partial_of,
    write_figure_tables,
)
from .plan import RunPlan
from .reformulations import reformulation_step_from_partial
from .run_report import write_run_report
from .run_state import Drawn, RunState, Stage, Validated, need
from .settings import NO_JUDGMENTS, FigureSettings, RunSettings
from .statistics import (
    StatisticsPartial,
    report_scores_from_cells,
    statistics_from_cells,
    statistics_partial,
)
from .steps import (
    peak_memory_mb,
    write_config_json,
    write_config_toml,
    write_summary,
    write_validation_failure,
)

__all__ = [
    "DISTRIBUTED_RESULT_READS",
    "DISTRIBUTED_STAGES",
    "NO_DISTRIBUTED_EXPORTS",
    "distributed_notes",
]

#: The run's note on the exports of a distributed run.
NO_DISTRIBUTED_EXPORTS: Final = (
    "exports not written: the tables stayed on the cluster as Parquet parts "
    "(tables/per_session/ and the others; arrow::open_dataset in R, pandas.read_parquet, "
    "DuckDB read each folder as one table); --results client gathers them and writes exports/"
)

#: The run's note on the tables of a distributed run.
PARTS_NOTE: Final = (
    "tables/ holds one Parquet part per input partition of each table (written by the "
    "workers; each part's sessions in session-id order): read a folder as one table"
)

#: The run's note when a searcher's sessions are in several partitions.
SPAN_NOTE: Final = (
    "some searchers' sessions are in more than one partition: session_order counts each "
    "searcher's sessions within its partition (partition the log by searcher for the "
    "study-wide order, which the Latin-square period effect uses)"
)

STATISTICS: Final = "statistics"
FIGURES: Final = "figures"
REFORMULATIONS: Final = "reformulations"


def _statistics_of(part: ScoredPartition, settings: RunSettings) -> StatisticsPartial:
    """On a worker: the partition's per-session scores summed per design cell, and ratings."""
    return statistics_partial(part.per_session, settings)


def _figures_of(part: ScoredPartition, figures: FigureSettings, bands: bool) -> FigurePartial:
    """On a worker: the sums behind the figures of the partition's sessions."""
    cg_ev = None if part.cg_ev is part.ev else part.cg_ev
    return figure_partial_of(part.ev, figures, cg_ev=cg_ev, bands=bands)


def _reformulations_of(part: ScoredPartition) -> ReformulationPartial:
    """On a worker: the partition's query pairs written as its part, and their sums."""
    table = reformulations(part.ev, part.judgments)
    part.write("reformulations", table)
    return reformulation_partial(table)


def _combine(a: Any, b: Any) -> Any:
    """Two partials of one kind added (each kind has its ``combine``)."""
    return a.combine(b)


def _reductions(settled: RunPlan) -> tuple[Reduction[Any], ...]:
    """The partials the workers return for this run's report, figures and statistics."""
    settings = settled.settings
    reductions: list[Reduction[Any]] = [
        Reduction(STATISTICS, partial(_statistics_of, settings=settings), _combine),
        Reduction(REFORMULATIONS, _reformulations_of, _combine),
    ]
    if settled.request.figures:
        bands = settings.statistics.bands
        figures = partial(_figures_of, figures=settings.figures, bands=bands)
        reductions.append(Reduction(FIGURES, figures, combine_figure_partials))
    return tuple(reductions)


def score_stage(state: RunState) -> None:
    """Validate, score and write every partition on the workers; fold their partials."""
    plan, outputs = state.plan, state.outputs
    request = plan.request
    engine = request.engine
    if not isinstance(engine, DaskEngine):  # resolve() places on workers only with Dask
        raise SessionvalError(f"placement {plan.placement!r} needs a Dask engine")
    logs = request.logs
    options = dict(plan.load_options)
    given: PartitionSetup | None = options.pop("partitions", None)
    setup = given or prepare_partitions(logs, qrels=request.qrels, mode=plan.mode, **options)
    if setup.judgments is None and plan.settings.config.judgments == "reference":
        raise InputFormatError(f"{logs}: {NO_JUDGMENTS}")
    settled = plan.settled(setup.judgments)
    write_config_toml(outputs, settled.settings)
    settings = settled.settings
    job = PartitionJob(
        load=setup.load,
        study=setup.study,
        judgments=setup.judgments,
        config=settings.config,
        cg_config=settings.cg_config,
        measures=tuple(settings.measures.all),
        tables=outputs.root / "tables",
        per_position=request.per_position,
        reductions=_reductions(settled),
    )
    bar = state.bar

    def tick(done: int, total: int) -> None:
        bar.phase(f"validating, scoring and writing {total} partitions: {done}/{total}")

    try:
        with phase(
            f"validating and scoring {logs} on the workers", advice=state.advice.for_loading
        ):
            scores = run_partitions(
                setup.files,
                job,
                engine,
                source=setup.path,
                max_problems=setup.max_problems,
                progress=tick,
            )
    except ValidationFailed as exc:
        where = write_validation_failure(outputs, logs, exc)
        exc.add_note(f"the problems are also in {where}; other files in {request.out} unchanged")
        raise
    if scores.counts is None or scores.counts.n_sessions == 0:
        raise InputFormatError(f"{logs}: no session left to evaluate")
    outputs.add(*scores.files)
    summary = summary_from_counts(scores.counts, setup.judgments, scores.report.summary_line())
    write_summary(outputs, summary, scores.report, peak_memory=peak_memory_mb())
    write_config_json(outputs, settings, scores.evaluation)
    state.settled = settled
    state.scored = scores
    state.validated = Validated(summary, scores.report, setup.study.name, scores.counts.n_sessions)


def statistics_stage(state: RunState) -> None:
    """The comparison of the systems as the design asks, from the sums per design cell."""
    plan, scores = need(state.settled, "settled"), need(state.scored, "scored")
    with phase("comparing the systems", advice=state.advice.for_statistics):
        state.statistics = statistics_from_cells(
            state.outputs, scores.partials[STATISTICS].cells, plan.settings.statistics
        )


def reformulations_stage(state: RunState) -> None:
    """The reformulation tables, figures and section from the partitions' sums."""
    plan, scores = need(state.settled, "settled"), need(state.scored, "scored")
    settings = plan.settings
    stats = settings.statistics
    design = design_from_cells(
        scores.partials[STATISTICS].cells, design=stats.design, block=stats.block
    )
    with phase("summing the reformulations", advice=state.advice.for_reformulations):
        state.reformulation_section = reformulation_step_from_partial(
            state.outputs,
            scores.partials[REFORMULATIONS],
            design.design,
            stats,
            figure=plan.request.figures,
            params=settings.config.model_dump(mode="json"),
            figure_formats=settings.figures.formats,
        )


def figures_stage(state: RunState) -> None:
    """The figures' tables and images, from the partitions' sums."""
    plan, scores = need(state.settled, "settled"), need(state.scored, "scored")
    if not plan.request.figures:
        state.drawn = Drawn((), (NO_FIGURES,))
        return
    settings = plan.settings
    combined = scores.partials[FIGURES]
    cell = figure_cell_from_partial(combined, settings.figures)
    stats = settings.statistics
    data = figure_data_from_partial(
        combined, cell, settings.figures, confidence=stats.confidence if stats.bands else None
    )
    write_figure_tables(state.outputs, data)
    n = need(state.validated, "validated").n_sessions
    with phase("drawing the figures of", n, "sessions", advice=state.advice.for_figures):
        drawn = draw_figures(state.outputs, data, settings)
    state.drawn = Drawn(tuple(drawn), data.notes)


def correlations_stage(state: RunState) -> None:
    """Pearson's correlations of the measures with the ratings, from the partitions' sums."""
    scores = need(state.scored, "scored")
    state.correlations = correlation_from_sums(state.outputs, scores.partials[STATISTICS].ratings)


def exports_stage(state: RunState) -> None:
    """The exports of a distributed run: not written (the note says why and what to use)."""
    state.exported = (NO_DISTRIBUTED_EXPORTS,)


def distributed_notes(state: RunState) -> tuple[str, ...]:
    """The notes of a distributed run: the parts, the searchers across files, what is not made."""
    scores = need(state.scored, "scored")
    return (
        PARTS_NOTE,
        *((SPAN_NOTE,) if scores.searchers_span_files else ()),
        *need(state.drawn, "drawn").notes,
        *need(state.exported, "exported"),
    )


def report_stage(state: RunState) -> None:
    """``report.html`` from the folded partials."""
    settings = need(state.settled, "settled").settings
    scores = need(state.scored, "scored").partials[STATISTICS].cells
    table, score_notes = report_scores_from_cells(scores, settings)
    write_run_report(
        state,
        scores=table,
        score_notes=score_notes,
        notes=distributed_notes(state),
        reformulations=state.reformulation_section,
    )


#: The stages of a distributed run (placement ``distributed``), in order.
DISTRIBUTED_STAGES: Final[tuple[Stage, ...]] = (
    Stage(
        "validate, score and write on the workers",
        score_stage,
        (),
        ("settled", "scored", "validated"),
    ),
    Stage(
        "reformulations", reformulations_stage, ("settled", "scored"), ("reformulation_section",)
    ),
    Stage("figures", figures_stage, ("settled", "scored", "validated"), ("drawn",)),
    Stage("statistics", statistics_stage, ("settled", "scored"), ("statistics",)),
    Stage("correlations", correlations_stage, ("scored",), ("correlations",)),
    Stage("exports", exports_stage, (), ("exported",)),
    Stage(
        "report",
        report_stage,
        (
            "settled",
            "validated",
            "scored",
            "drawn",
            "statistics",
            "correlations",
            "reformulation_section",
            "exported",
        ),
        ("scores",),
    ),
)

#: The fields :func:`~sessionval.workflow.job.run` reads after a distributed run's last stage.
DISTRIBUTED_RESULT_READS: Final = frozenset(
    {"settled", "scores", "validated", "drawn", "exported", "scored"}
)

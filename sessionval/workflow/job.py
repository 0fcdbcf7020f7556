"""The run job: :data:`STAGES`, named stages executed in order on one :class:`RunState`.

:func:`run` resolves the request into a :class:`~sessionval.workflow.plan.RunPlan`
(every option decided before a session is read), then executes each :class:`Stage`
of :data:`STAGES` in order on a :class:`RunState`.  A stage reads the fields that
earlier stages wrote and writes its own, each once (:attr:`Stage.reads`,
:attr:`Stage.writes`, checked by ``tests/workflow/test_stages.py``); a field is dropped
as soon as no later stage and not the result reads it, so the study's per-result frame
and the evaluation do not outlive the stages that need them.  Each stage is a
:func:`~sessionval.errors.phase` naming its rows, with the advice of
:class:`~sessionval.workflow.advice.MemoryAdvice`, and a step of the progress bar.
The mechanism (:class:`Stage`, :class:`RunState`, :func:`execute`) is
:mod:`sessionval.workflow.run_state`.

Every stage writes into the run's staging folder (:class:`~sessionval.workflow.outputs.RunOutputs`);
only a run that went through every stage swaps its files into ``--out``, so a failed
or interrupted run leaves the previous outputs as they were.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Final

import pandas as pd

from ..errors import InputFormatError, SessionvalError, ValidationFailed, phase
from ..evaluation.dask_engine import DaskEngine
from ..evaluation.engine import Engine, LocalEngine
from ..evaluation.remote import RemoteStudy, load_remote, score_partitions
from ..frame import LoadedStudy
from ..io.partitioned import prepare_partitions
from ..output.figure_writer import PRELOAD
from ..progress import Stages, stages
from .advice import MemoryAdvice
from .correlations import correlation_step
from .distributed_run import DISTRIBUTED_RESULT_READS, DISTRIBUTED_STAGES, distributed_notes
from .figures import NO_FIGURES, draw_figures, figure_cell, figure_data, write_figure_tables
from .outputs import RunOutputs
from .plan import TABLE_FORMATS, Results, RunPlan, RunRequest, resolve
from .reformulations import NO_RESULT_ROWS, reformulation_step
from .run_report import write_run_report
from .run_state import (
    STATE_FIELDS,
    Drawn,
    OnePass,
    RunState,
    Stage,
    StageProfile,
    Validated,
    execute,
    need,
)
from .settings import NO_JUDGMENTS
from .statistics import statistics_step
from .steps import (
    evaluate_step,
    load_step,
    peak_memory_mb,
    report_scores,
    write_config_json,
    write_config_toml,
    write_exports_step,
    write_tables,
    write_validation,
    write_validation_failure,
)

__all__ = [
    "NO_EXPORTS",
    "NO_FIGURES",
    "RESULT_READS",
    "STAGES",
    "STATE_FIELDS",
    "RunResult",
    "RunState",
    "Stage",
    "StageProfile",
    "execute",
    "input_files",
    "run",
]

#: The run's note when the exports are left out (``--no-exports``).
NO_EXPORTS: Final = (
    "exports not written (--no-exports or [run] exports = false): tables/ has every score; "
    "exports/ is not written"
)


@dataclass
class RunResult:
    """What :func:`run` wrote and found.

    ``rejected`` counts the sessions lenient mode rejected (listed in
    ``out/rejects.csv`` and ``out/validation.txt``); ``notes`` are the run's notes
    (gain scheme chosen, figures skipped, …) as the report lists them; ``stages``
    the wall time and memory of each stage (``benchmarks/bench_run_outputs.py``).
    ``per_session`` is the per-session table, empty when the workers wrote it
    (a distributed run: ``tables/per_session/``).
    """

    out: Path
    files: list[str]
    removed: list[str]
    per_session: pd.DataFrame
    score_table: pd.DataFrame
    rejected: int = 0
    notes: tuple[str, ...] = field(default_factory=tuple)
    stages: tuple[StageProfile, ...] = field(default_factory=tuple)


def input_files(
    logs: Path,
    qrels: Path | None,
    config_path: Path | None,
    input_options: Mapping[str, Any] | None,
) -> list[Path]:
    """Every file or folder a run reads: the logs, the qrels, the config, the format options'.

    No output of the run may be, contain or lie inside one of them
    (:func:`~sessionval.workflow.overlap.refuse_overlap`).
    """
    paths = [logs, qrels, config_path]
    paths += [v for v in (input_options or {}).values() if isinstance(v, Path)]
    return [p for p in paths if p is not None]


def run(
    logs: Path,
    *,
    qrels: Path | None,
    out: Path,
    config_path: Path | None = None,
    lenient: bool | None = None,
    progress: bool | None = None,
    input_options: Mapping[str, Any] | None = None,
    overrides: Mapping[str, Any] | None = None,
    force: bool = False,
    csv_safe: bool | None = None,
    engine: Engine | None = None,
    per_position: bool = True,
    table_formats: Sequence[str] = TABLE_FORMATS,
    figures: bool = True,
    exports: bool | None = None,
    results: Results = "workers",
) -> RunResult:
    """Validate, evaluate and write every output (the body of ``sessionval run``).

    Parameters
    ----------
    logs
        Study folder or session file.
    qrels
        Reference judgments (required unless the configuration uses ``judgments = "searcher"``).
    out
        Output folder (created).  The outputs are swapped in only when the run
        succeeds; the previous run's files that this run does not write again are
        removed; nothing else is touched (:mod:`sessionval.workflow.outputs`).
    config_path
        TOML configuration (``None``: the paper's defaults; ``docs/configuration.md``).
    lenient
        Reject bad sessions instead of failing (default: the configuration's ``[run]``).
    progress
        Show the progress bar (``None``: only on a terminal).
    input_options
        ``fmt`` (default ``"auto"``: recognised by its files) and the input format's
        options (``docs/formats.md``), so ``run`` reads every format ``validate`` reads.
    overrides
        Session parameters given as flags (``cutoff``, ``b``, ``bq``, ``gains``,
        ``preset``); they win over the configuration file.
    force
        Overwrite files in ``out`` that no earlier run wrote (never an input).
    csv_safe
        Neutralise spreadsheet formulas in CSV cells (default: the configuration's ``[run]``).
    engine
        Where the sessions are scored (default: :class:`LocalEngine`, this process);
        a :class:`~sessionval.evaluation.dask_engine.DaskEngine` also loads the files
        of a partitioned input on its workers.  The tables are the same.
    per_position, table_formats
        Large studies: leave out ``tables/per_position`` and write the tables in
        these formats only (``("parquet",)``); see :func:`write_tables`.
    figures
        Draw the figures (and write the tables behind them).  Without them and
        without the per-position table, a partitioned input on a Dask cluster is
        scored in one pass, each partition as soon as it is validated, and the
        workers keep no result row
        (:func:`~sessionval.evaluation.remote.score_partitions`): what a study
        larger than the cluster's memory needs.
    exports
        Write ``exports/`` (``None``: the configuration's ``[run] exports``, default
        true); without them the report and ``config.toml`` say they were skipped.
    results
        Where the results of a partitioned study scored on a Dask engine go:
        ``"workers"`` (the default) leaves them there (each worker writes its
        partitions' tables as Parquet parts and the client builds the summary,
        figures, statistics and report from their partial sums,
        :mod:`sessionval.workflow.distributed_run`); ``"client"`` gathers the tables
        into this process (every output of a local run).  Other inputs and engines
        ignore it.

    Returns
    -------
    RunResult

    Raises
    ------
    ValidationFailed
        The input has problems (strict mode); the previous outputs stay and the
        problems are written beside them (its first note names the file).
    SessionvalError
        Bad configuration, unreadable input, or files in ``out`` that must not be
        overwritten.
    """
    request = RunRequest(
        logs=logs,
        qrels=qrels,
        out=out,
        config_path=config_path,
        lenient=lenient,
        progress=progress,
        input_options=dict(input_options or {}),
        overrides=dict(overrides or {}),
        force=force,
        csv_safe=csv_safe,
        engine=engine,
        per_position=per_position,
        table_formats=tuple(table_formats),
        figures=figures,
        exports=exports,
        results=results,
    )
    plan = resolve(request)  # every option decided before a session is read
    distributed = plan.placement == "distributed"
    todo, keep = (
        (DISTRIBUTED_STAGES, DISTRIBUTED_RESULT_READS) if distributed else (STAGES, RESULT_READS)
    )
    with (
        RunOutputs(
            out,
            force=force,
            inputs=input_files(logs, qrels, config_path, input_options),
            csv_safe=plan.settings.csv_safe,
        ) as outputs,
        stages(
            [stage.name for stage in todo], disable=None if progress is None else not progress
        ) as bar,
    ):
        state = RunState(plan, outputs, bar, MemoryAdvice(plan), _with_progress(engine, bar))
        execute(state, todo, keep=keep)
        removed = outputs.finish()
    settled = need(state.settled, "settled")
    return RunResult(
        out=out,
        files=outputs.written,
        removed=removed,
        # a distributed run's per-session table is tables/per_session/, on disk
        per_session=pd.DataFrame() if distributed else need(state.tables, "tables").per_session,
        score_table=need(state.scores, "scores"),
        rejected=need(state.validated, "validated").report.sessions_rejected,
        notes=(
            *settled.settings.notes,
            *(distributed_notes(state) if distributed else _run_notes(state)),
        ),
        stages=tuple(state.profile),
    )


def _with_progress(engine: Engine | None, bar: Stages) -> Engine:
    """The engine reporting its chunks to the bar (``evaluate: 3/25 chunks``)."""

    def tick(done: int, total: int) -> None:
        bar.phase(f"{bar.names[min(bar.bar.n, len(bar.names) - 1)]}: {done}/{total} chunks")

    if engine is None:
        return LocalEngine(progress=tick)
    if isinstance(engine, LocalEngine | DaskEngine):
        return replace(engine, progress=tick)
    return engine


# ---------------------------------------------------------------------------------------------
# the stages


def load_stage(state: RunState) -> None:
    """Read and validate the study where the plan places it; ``validation.txt``, ``rejects.csv``.

    A one-pass load (no row-level output asked, a partitioned input on Dask) also
    scores each partition as it is validated.
    """
    plan, outputs = state.plan, state.outputs
    logs = plan.request.logs
    try:
        with phase(f"loading and validating {logs}", advice=state.advice.for_loading):
            loaded, one_pass = _load(plan, state.bar)
    except ValidationFailed as exc:
        where = write_validation_failure(outputs, logs, exc)
        out = plan.request.out
        exc.add_note(f"the problems are also in {where}; other files in {out} unchanged")
        raise
    summary = write_validation(outputs, loaded, peak_memory=peak_memory_mb())
    if loaded.judgments is None and plan.settings.config.judgments == "reference":
        raise InputFormatError(f"{logs}: {NO_JUDGMENTS}")
    if loaded.frame.n_sessions == 0:
        raise InputFormatError(f"{logs}: no session left to evaluate")
    state.loaded = loaded
    state.one_pass = one_pass
    state.validated = Validated(
        summary,
        loaded.report,
        loaded.study.name,
        loaded.frame.n_sessions,
    )


def _load(plan: RunPlan, bar: Stages) -> tuple[LoadedStudy, OnePass | None]:
    """Read and validate the study where the plan places it; a one-pass load also scores."""
    request = plan.request
    options = dict(plan.load_options)
    if plan.placement == "local":
        loaded = load_step(
            request.logs,
            qrels=request.qrels,
            mode=plan.mode,
            input_options={**options, "progress": bar.phase},
        )
        return loaded, None
    engine = request.engine
    if not isinstance(engine, DaskEngine):  # resolve() places on workers only with Dask
        raise SessionvalError(f"placement {plan.placement!r} needs a Dask engine")
    if plan.placement == "workers":
        loaded = load_remote(
            request.logs, engine, qrels=request.qrels, mode=plan.mode, progress=bar.phase,
            **options,
        )  # fmt: skip
        return loaded, None
    # one pass: no row-level output, so each partition is scored as it is validated
    setup = prepare_partitions(request.logs, qrels=request.qrels, mode=plan.mode, **options)
    plan = plan.settled(setup.judgments)
    loaded, scored = score_partitions(
        setup, engine, plan.settings.config,
        measures=plan.settings.measures.all, progress=bar.phase,
    )  # fmt: skip
    return loaded, OnePass(plan, scored)


def settle_stage(state: RunState) -> None:
    """The one change after :func:`resolve`: ``gains = "auto"`` fitted to the data; ``config.toml``.

    A no-op for the gains when a one-pass load fitted them from the judgments already;
    ``config.toml`` is written from the settled plan, before any scoring.  A large
    study's figures and Stata/SPSS exports are made by a second process from here on
    (``[run] background_process``).
    """
    loaded = need(state.loaded, "loaded")
    plan = state.one_pass.plan if state.one_pass is not None else state.plan
    settled = plan.settled(loaded.judgments, loaded.frame, user_scale=loaded.study.user_grade_scale)
    write_config_toml(state.outputs, settled.settings)
    if settled.background:  # started now, it has imported matplotlib by the first figure
        state.outputs.background.start(PRELOAD)
    state.settled = settled
    state.cell = figure_cell(loaded, settled.settings.figures) if settled.request.figures else None


def evaluate_stage(state: RunState) -> None:
    """Score every session (a one-pass load scored them already)."""
    loaded, plan = need(state.loaded, "loaded"), need(state.settled, "settled")
    settings = plan.settings
    with phase(
        "evaluating", loaded.frame.n_results, "result rows", advice=state.advice.for_evaluating
    ):
        state.evaluation = (
            state.one_pass.evaluation
            if state.one_pass is not None
            else evaluate_step(
                loaded,
                settings.config,
                measures=settings.measures.all,
                engine=state.engine,
                # the per-position table and the figures read them: kept from this pass
                keep_positions=plan.request.per_position or plan.request.figures,
            )
        )


def tables_stage(state: RunState) -> None:
    """``tables/`` (per position, query, session) and ``config.json`` (with the counts)."""
    ev, plan = need(state.evaluation, "evaluation"), need(state.settled, "settled")
    with phase(
        "writing the tables of", ev.frame.n_results, "result rows", advice=state.advice.for_tables
    ):
        run = plan.settings.file.run
        state.tables = write_tables(
            state.outputs,
            ev,
            per_position=plan.request.per_position,
            formats=plan.table_formats,
            large_rows=None if run.all_formats else run.large_export_rows,
        )
        write_config_json(state.outputs, plan.settings, ev.counts())


def figures_stage(state: RunState) -> None:
    """The figures' tables and images (the CG curves evaluated with their own gains)."""
    plan = need(state.settled, "settled")
    if state.cell is None:
        state.drawn = Drawn((), (NO_FIGURES,))
        return
    loaded, ev = need(state.loaded, "loaded"), need(state.evaluation, "evaluation")
    settings, advice = plan.settings, state.advice
    n = loaded.frame.n_results
    with phase(
        "evaluating the cumulated-gain figures of", n, "result rows", advice=advice.for_figures
    ):
        cg_ev = (
            ev
            if settings.cg_config is None
            else evaluate_step(loaded, settings.cg_config, engine=state.engine)
        )
    stats = settings.statistics
    data = figure_data(
        ev,
        state.cell,
        settings.figures,
        cg_ev=cg_ev,
        confidence=stats.confidence if stats.bands else None,
    )
    del cg_ev
    write_figure_tables(state.outputs, data)
    n_sessions = loaded.frame.n_sessions
    with phase("drawing the figures of", n_sessions, "sessions", advice=advice.for_figures):
        drawn = draw_figures(state.outputs, data, settings)
    state.drawn = Drawn(tuple(drawn), data.notes)


def reformulations_stage(state: RunState) -> None:
    """The reformulation tables, figures and report section (a study gathered in this process)."""
    loaded, ev = need(state.loaded, "loaded"), need(state.evaluation, "evaluation")
    plan, tables = need(state.settled, "settled"), need(state.tables, "tables")
    if isinstance(loaded, RemoteStudy):  # no result row in this process
        state.reformulations = None
        return
    settings = plan.settings
    with phase(
        "comparing the reformulations of",
        ev.frame.n_queries,
        "queries",
        advice=state.advice.for_reformulations,
    ):
        state.reformulations = reformulation_step(
            state.outputs,
            ev,
            loaded.judgments,
            tables.per_session,
            settings.statistics,
            formats=plan.table_formats,
            figure=plan.request.figures,
            params=settings.config.model_dump(mode="json"),
            figure_formats=settings.figures.formats,
        )


def statistics_stage(state: RunState) -> None:
    """The comparison of the systems as the design asks, and the mixed model."""
    plan, tables = need(state.settled, "settled"), need(state.tables, "tables")
    with phase(
        "comparing the systems over",
        len(tables.per_session),
        "sessions",
        advice=state.advice.for_statistics,
    ):
        state.statistics = statistics_step(
            state.outputs, tables.per_session, plan.settings.statistics
        )


def correlations_stage(state: RunState) -> None:
    """The measures against the searchers' ratings (``None``: no session has a rating)."""
    plan, tables = need(state.settled, "settled"), need(state.tables, "tables")
    with phase(
        "correlating the ratings of",
        len(tables.per_session),
        "sessions",
        advice=state.advice.for_correlations,
    ):
        state.correlations = correlation_step(
            state.outputs, tables.per_session, plan.settings, figure=plan.request.figures
        )


def exports_stage(state: RunState) -> None:
    """``exports/`` for R, SPSS and Stata (large tables in the compact formats only)."""
    plan, tables = need(state.settled, "settled"), need(state.tables, "tables")
    validated = need(state.validated, "validated")
    if not plan.settings.exports:
        state.exported = (NO_EXPORTS,)
        return
    with phase(
        "writing the exports of",
        validated.n_sessions,
        "sessions",
        advice=state.advice.for_exports,
    ):
        title = validated.name or "sessionval scores"
        res = write_exports_step(state.outputs, tables, plan.settings, title=title)
    state.exported = res.notes


def report_stage(state: RunState) -> None:
    """``report.html``: the scores, the sections of the stages before, the run's notes."""
    plan, reform = need(state.settled, "settled"), state.reformulations
    scores, score_notes = report_scores(need(state.tables, "tables").per_session, plan.settings)
    write_run_report(
        state,
        scores=scores,
        score_notes=score_notes,
        notes=_run_notes(state),
        reformulations=reform.section if reform else None,
    )


def _run_notes(state: RunState) -> tuple[str, ...]:
    """The stages' notes on the run: figures and exports skipped, reformulations not made."""
    reform = () if state.reformulations is not None else (NO_RESULT_ROWS,)
    return (
        *need(state.tables, "tables").notes,
        *need(state.drawn, "drawn").notes,
        *need(state.exported, "exported"),
        *reform,
    )


#: The stages of ``sessionval run``, in order (the progress bar shows their names).
STAGES: Final[tuple[Stage, ...]] = (
    Stage("load and validate", load_stage, (), ("loaded", "one_pass", "validated")),
    Stage("settle parameters", settle_stage, ("loaded", "one_pass"), ("settled", "cell")),
    Stage("evaluate", evaluate_stage, ("loaded", "one_pass", "settled"), ("evaluation",)),
    Stage("tables", tables_stage, ("evaluation", "settled"), ("tables",)),
    # the correlations right after the tables: the second process renders the rating figure
    # (its costliest) while this one computes the figures, instead of the report waiting for it
    Stage("correlations", correlations_stage, ("settled", "tables"), ("correlations",)),
    Stage("figures", figures_stage, ("loaded", "evaluation", "settled", "cell"), ("drawn",)),
    # before the statistics: the last stage that needs the result rows, which are then dropped
    Stage(
        "reformulations",
        reformulations_stage,
        ("loaded", "evaluation", "settled", "tables"),
        ("reformulations",),
    ),
    # the exports before the comparisons: their Stata and SPSS files go to the background
    # process (a large study's) as early as memory allows, after the result rows are dropped
    Stage("exports", exports_stage, ("settled", "tables", "validated"), ("exported",)),
    Stage("statistics", statistics_stage, ("settled", "tables"), ("statistics",)),
    Stage(
        "report",
        report_stage,
        (
            "settled",
            "validated",
            "tables",
            "drawn",
            "statistics",
            "correlations",
            "reformulations",
            "exported",
        ),
        ("scores",),
    ),
)

#: The fields :func:`run`'s result and notes read after the last stage: never released.
RESULT_READS: Final = frozenset(
    {"settled", "tables", "scores", "validated", "drawn", "exported", "reformulations"}
)

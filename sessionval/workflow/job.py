"""The run job: the named steps of :mod:`sessionval.workflow.steps` chained, with a progress bar.

Every step writes into the run's staging folder (:class:`~sessionval.workflow.outputs.RunOutputs`);
only a run that went through every step swaps its files into ``--out``, so a failed
or interrupted run leaves the previous outputs as they were.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Final

import pandas as pd

from ..errors import InputFormatError, SessionvalError, ValidationFailed, memory_advice, phase
from ..evaluation.dask_engine import DaskEngine
from ..evaluation.engine import Engine, LocalEngine
from ..evaluation.remote import RemoteStudy, load_remote, score_partitions
from ..evaluation.result import SessionEvaluation
from ..frame import LoadedStudy
from ..io.partitioned import prepare_partitions
from ..output.report import ReportFigure
from ..progress import Stages, stages
from .correlations import correlation_step
from .figures import FigureCell, draw_figures, figure_cell, figure_data, write_figure_tables
from .outputs import RunOutputs
from .plan import TABLE_FORMATS, RunPlan, RunRequest, resolve
from .reformulations import NO_RESULT_ROWS, reformulation_step
from .settings import NO_JUDGMENTS, RunSettings
from .statistics import statistics_step
from .steps import (
    evaluate_step,
    load_step,
    peak_memory_mb,
    write_configuration,
    write_exports_step,
    write_report_step,
    write_tables,
    write_validation,
    write_validation_failure,
)

__all__ = [
    "STAGES",
    "RunResult",
    "input_files",
    "run",
]

#: The stages the progress bar shows.
STAGES: Final = (
    "load and validate",
    "evaluate",
    "tables",
    "aggregate",
    "figures",
    "exports",
    "report",
)


def _with_progress(engine: Engine | None, bar: Stages) -> Engine:
    """The engine reporting its chunks to the bar (``stage: 3/25``)."""

    def tick(done: int, total: int) -> None:
        bar.phase(f"{bar.names[min(bar.bar.n, len(bar.names) - 1)]}: {done}/{total}")

    if engine is None:
        return LocalEngine(progress=tick)
    if isinstance(engine, LocalEngine | DaskEngine):
        return replace(engine, progress=tick)
    return engine


@dataclass
class RunResult:
    """What :func:`run` wrote and found.

    ``rejected`` counts the sessions lenient mode rejected (listed in
    ``out/rejects.csv`` and ``out/validation.txt``); ``notes`` are the run's notes
    (gain scheme chosen, figures skipped, …) as the report lists them.
    """

    out: Path
    files: list[str]
    removed: list[str]
    per_session: pd.DataFrame
    score_table: pd.DataFrame
    rejected: int = 0
    notes: tuple[str, ...] = field(default_factory=tuple)


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
    )
    plan = resolve(request)  # every option decided before a session is read
    with RunOutputs(
        out,
        force=force,
        inputs=input_files(logs, qrels, config_path, input_options),
        csv_safe=plan.settings.csv_safe,
    ) as outputs:
        advice = _MemoryAdvice(plan.settings, engine, per_position, figures, table_formats)
        with stages(STAGES, disable=None if progress is None else not progress) as bar:
            try:
                with phase(f"loading and validating {logs}", advice=advice.for_loading):
                    loaded, plan, scored = _load(plan, bar)
            except ValidationFailed as exc:
                where = write_validation_failure(outputs, logs, exc)
                exc.add_note(f"the problems are also in {where}; other files in {out} unchanged")
                raise
            summary = write_validation(outputs, loaded, peak_memory=peak_memory_mb())
            if loaded.judgments is None and plan.settings.config.judgments == "reference":
                raise InputFormatError(f"{logs}: {NO_JUDGMENTS}")
            if loaded.frame.n_sessions == 0:
                raise InputFormatError(f"{logs}: no session left to evaluate")
            # the one change after resolve(): gains = "auto" fitted to the data (a no-op when
            # a one-pass load fitted it from the judgments already)
            plan = plan.settled(
                loaded.judgments, loaded.frame, user_scale=loaded.study.user_grade_scale
            )
            settings = plan.settings
            cell = figure_cell(loaded, settings.figures) if figures else None
            bar.update()

            eng = _with_progress(engine, bar)
            n = loaded.frame.n_results
            with phase("evaluating", n, "result rows", advice=advice.for_evaluating):
                ev = (
                    scored
                    if scored is not None
                    else evaluate_step(
                        loaded, settings.config, measures=settings.measures.all, engine=eng
                    )
                )
            bar.update()

            with phase("writing the tables of", n, "result rows", advice=advice.for_tables):
                tables = write_tables(
                    outputs, ev, per_position=per_position, formats=plan.table_formats
                )
                write_configuration(outputs, settings, ev)
                correlations = correlation_step(
                    outputs, tables.per_session, settings, figure=figures
                )
                reform = (
                    None
                    if isinstance(loaded, RemoteStudy)
                    else reformulation_step(
                        outputs,
                        ev,
                        loaded.judgments,
                        tables.per_session,
                        settings.statistics,
                        formats=plan.table_formats,
                        figure=figures,
                        params=settings.config.model_dump(mode="json"),
                        figure_formats=settings.figures.formats,
                    )
                )
            bar.update()

            figure_notes: tuple[str, ...] = (NO_FIGURES,)
            drawn: list[ReportFigure] = []
            if cell is not None:
                figure_notes, drawn = _figures(outputs, loaded, ev, cell, settings, eng, advice)
            bar.update(2)

            export_notes: tuple[str, ...] = (NO_EXPORTS,)
            if settings.exports:
                n_sessions = loaded.frame.n_sessions
                with phase(
                    "writing the exports of", n_sessions, "sessions", advice=advice.for_exports
                ):
                    title = loaded.study.name or "sessionval scores"
                    export_notes = write_exports_step(outputs, tables, settings, title=title).notes
            bar.update()

            with phase(
                "comparing the systems over",
                loaded.frame.n_sessions,
                "sessions",
                advice=advice.for_statistics,
            ):
                statistics = statistics_step(outputs, tables.per_session, settings.statistics)
            notes = (*figure_notes, *export_notes, *(() if reform else (NO_RESULT_ROWS,)))
            scores = write_report_step(
                outputs,
                loaded=loaded,
                summary=summary,
                tables=tables,
                settings=settings,
                figures=drawn,
                source=logs,
                notes=notes,
                sections=[
                    *statistics.sections,
                    *([correlations] if correlations is not None else []),
                    *([reform.section] if reform and reform.section else []),
                ],
            )
            bar.update()
        removed = outputs.finish()
    return RunResult(
        out=out,
        files=outputs.written,
        removed=removed,
        per_session=tables.per_session,
        score_table=scores,
        rejected=loaded.report.sessions_rejected,
        notes=(*settings.notes, *notes),
    )


def _load(plan: RunPlan, bar: Stages) -> tuple[LoadedStudy, RunPlan, SessionEvaluation | None]:
    """Read and validate the study where the plan places it; a one-pass load also scores.

    Returns the study, the plan (settled from the judgments before the first
    partition, when each partition is scored as it is validated) and those scores.
    """
    request = plan.request
    options = dict(plan.load_options)
    if plan.placement == "local":
        loaded = load_step(
            request.logs,
            qrels=request.qrels,
            mode=plan.mode,
            input_options={**options, "progress": bar.phase},
        )
        return loaded, plan, None
    engine = request.engine
    if not isinstance(engine, DaskEngine):  # resolve() places on workers only with Dask
        raise SessionvalError(f"placement {plan.placement!r} needs a Dask engine")
    if plan.placement == "workers":
        loaded = load_remote(
            request.logs, engine, qrels=request.qrels, mode=plan.mode, progress=bar.phase,
            **options,
        )  # fmt: skip
        return loaded, plan, None
    # one pass: no row-level output, so each partition is scored as it is validated
    setup = prepare_partitions(request.logs, qrels=request.qrels, mode=plan.mode, **options)
    plan = plan.settled(setup.judgments)
    loaded, scored = score_partitions(
        setup, engine, plan.settings.config,
        measures=plan.settings.measures.all, progress=bar.phase,
    )  # fmt: skip
    return loaded, plan, scored


#: The run's note when the exports are left out (``--no-exports``).
NO_EXPORTS: Final = (
    "exports not written (--no-exports or [run] exports = false): tables/ has every score; "
    "exports/ is not written"
)


@dataclass(frozen=True)
class _MemoryAdvice:
    """What would help each phase of a run that runs out of memory, from the options in force.

    Each phase names only the options that lighten it and that this run does not
    already use (``--no-exports`` is not suggested to a run that gave it).
    """

    settings: RunSettings
    engine: Engine | None
    per_position: bool
    figures: bool
    table_formats: Sequence[str]

    @property
    def _dask(self) -> bool:
        return isinstance(self.engine, DaskEngine)

    @property
    def for_loading(self) -> str:
        if self._dask:
            return memory_advice()
        return memory_advice("run --engine dask with a partitioned input (docs/scale-out.md)")

    @property
    def for_evaluating(self) -> str:
        if not self._dask:
            return memory_advice("run --engine dask to spread the sessions", _FEWER_MEASURES)
        flags = (("--no-figures", self.figures), ("--no-per-position", self.per_position))
        one_pass = " ".join(flag for flag, on in flags if on)
        hint = f"run {one_pass} (a partitioned input is then scored in one pass)"
        return memory_advice(*([hint] if one_pass else []), _FEWER_MEASURES)

    @property
    def for_tables(self) -> str:
        hints = ["run --no-per-position"] if self.per_position else []
        if "csv" in self.table_formats:
            hints.append("run --tables parquet")
        return memory_advice(*hints, _FEWER_MEASURES)

    @property
    def for_figures(self) -> str:
        return memory_advice("run --no-figures")

    @property
    def for_statistics(self) -> str:
        # the blocked models grow with the searchers (a column per searcher); the paired
        # means by searcher do not (200k sessions of 50k searchers: 5.5 s)
        searcher = self.settings.statistics.block == "searcher"
        return memory_advice(*([] if searcher else ['[statistics] block = "searcher"']))

    @property
    def for_exports(self) -> str:
        hints = ["run --no-exports"]
        if self.settings.file.run.all_formats:  # large tables were to be written in every format
            hints.append("[run] all_formats = false in the configuration")
        if len(self.settings.formats) > 1:
            hints.append("fewer [run] formats in the configuration")
        return memory_advice(*hints)


_FEWER_MEASURES: Final = "fewer measures ([measures] in the configuration)"


#: The run's note when the figures are left out (``--no-figures``).
NO_FIGURES: Final = (
    "figures not drawn (--no-figures): the report and tables/ have every score; "
    "figures/ is not written"
)


def _figures(
    outputs: RunOutputs,
    loaded: LoadedStudy,
    ev: SessionEvaluation,
    cell: FigureCell,
    settings: RunSettings,
    engine: Engine,
    advice: _MemoryAdvice,
) -> tuple[tuple[str, ...], list[ReportFigure]]:
    """The figures' tables and images written; the notes on the figures skipped, the drawn ones."""
    n = loaded.frame.n_results
    with phase(
        "evaluating the cumulated-gain figures of", n, "result rows", advice=advice.for_figures
    ):
        cg_ev = (
            ev
            if settings.cg_config is None
            else evaluate_step(loaded, settings.cg_config, engine=engine)
        )
    stats = settings.statistics
    data = figure_data(
        ev,
        cell,
        settings.figures,
        cg_ev=cg_ev,
        confidence=stats.confidence if stats.bands else None,
    )
    write_figure_tables(outputs, data)
    n_sessions = loaded.frame.n_sessions
    with phase("drawing the figures of", n_sessions, "sessions", advice=advice.for_figures):
        drawn = draw_figures(outputs, data, settings)
    return data.notes, drawn

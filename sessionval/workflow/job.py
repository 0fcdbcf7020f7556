"""The run job: the named steps of :mod:`sessionval.workflow.steps` chained, with a progress bar."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Final

import pandas as pd

from ..errors import InputFormatError, SessionvalError, ValidationFailed
from ..evaluation.dask_engine import DaskEngine
from ..evaluation.engine import Engine, LocalEngine
from ..io.formats import detect_format
from ..io.partitioned import PARTITIONED
from ..progress import Stages, stages
from .correlations import correlation_step
from .outputs import RunOutputs
from .settings import NO_JUDGMENTS, run_settings
from .steps import (
    draw_figures,
    evaluate_step,
    figure_cell,
    figure_data,
    load_step,
    peak_memory_mb,
    write_configuration,
    write_exports_step,
    write_figure_tables,
    write_report_step,
    write_tables,
    write_validation,
    write_validation_failure,
)

__all__ = [
    "STAGES",
    "RunResult",
    "run",
]

#: Formats the tables may be written in (``table_formats``).
TABLE_FORMATS: Final = ("csv", "parquet")


def _with_progress(engine: Engine | None, bar: Stages) -> Engine:
    """The engine reporting its chunks to the bar (``stage: 3/25``)."""

    def tick(done: int, total: int) -> None:
        bar.phase(f"{bar.names[min(bar.bar.n, len(bar.names) - 1)]}: {done}/{total}")

    if engine is None:
        return LocalEngine(progress=tick)
    if isinstance(engine, LocalEngine | DaskEngine):
        return replace(engine, progress=tick)
    return engine


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


@dataclass
class RunResult:
    """What :func:`run` wrote and found."""

    out: Path
    files: list[str]
    removed: list[str]
    per_session: pd.DataFrame
    score_table: pd.DataFrame


def run(
    logs: Path,
    *,
    qrels: Path | None,
    out: Path,
    config_path: Path | None = None,
    lenient: bool | None = None,
    progress: bool | None = None,
    input_options: Mapping[str, Any] | None = None,
    engine: Engine | None = None,
    per_position: bool = True,
    table_formats: Sequence[str] = TABLE_FORMATS,
) -> RunResult:
    """Validate, evaluate and write every output (the body of ``sessionval run``).

    Parameters
    ----------
    logs
        Study folder or session file.
    qrels
        Reference judgments (required unless the configuration uses ``judgments = "searcher"``).
    out
        Output folder (created; the previous run's files are replaced).
    config_path
        TOML configuration (``None``: the paper's defaults).
    lenient
        Reject bad sessions instead of failing (default: the configuration's ``[run]``).
    progress
        Show the progress bar (``None``: only on a terminal).
    input_options
        ``fmt`` (default ``"auto"``: recognised by its files) and the input format's
        options (``docs/formats.md``), so ``run`` reads every format ``validate`` reads.
    engine
        Where the sessions are scored (default: :class:`LocalEngine`, this process);
        a :class:`~sessionval.evaluation.dask_engine.DaskEngine` also loads the files
        of a partitioned input on its workers.  The tables are the same.
    per_position, table_formats
        Large studies: leave out ``tables/per_position`` and write the tables in
        these formats only (``("parquet",)``); see :func:`write_tables`.

    Returns
    -------
    RunResult

    Raises
    ------
    ValidationFailed
        The input has problems (strict mode); ``out/validation.txt`` lists them.
    SessionvalError
        Bad configuration or unreadable input.
    """
    # a lab-tables folder brings its own judgments; other inputs need --qrels (checked up front)
    fmt = str((input_options or {}).get("fmt", "auto"))
    fmt_name = detect_format(logs) if fmt == "auto" else fmt
    own_judgments = fmt_name == "lab-tables"
    bad = sorted(set(table_formats) - set(TABLE_FORMATS))
    if bad or not table_formats:
        raise SessionvalError(f"table formats {bad or []} unknown; allowed: {list(TABLE_FORMATS)}")
    load_options = dict(input_options or {})
    if fmt_name == PARTITIONED and isinstance(engine, DaskEngine):
        load_options["mapper"] = engine.map_items  # the partitions load on the workers
    settings = run_settings(
        config_path, lenient=lenient, has_qrels=qrels is not None or own_judgments
    )
    out.mkdir(parents=True, exist_ok=True)
    outputs = RunOutputs(out)
    with stages(STAGES, disable=None if progress is None else not progress) as bar:
        try:
            loaded = load_step(
                logs,
                qrels=qrels,
                mode="lenient" if settings.lenient else "strict",
                input_options={**load_options, "progress": bar.phase},
            )
        except ValidationFailed as exc:
            write_validation_failure(outputs, logs, exc)
            raise
        summary = write_validation(outputs, loaded, peak_memory=peak_memory_mb())
        if loaded.judgments is None and settings.config.judgments == "reference":
            raise InputFormatError(f"{logs}: {NO_JUDGMENTS}")
        if loaded.frame.n_sessions == 0:
            raise InputFormatError(f"{logs}: no session left to evaluate")
        cell = figure_cell(loaded, settings.figures)
        bar.update()

        eng = _with_progress(engine, bar)
        ev = evaluate_step(loaded, settings.config, settings.measures.all, engine=eng)
        bar.update()

        tables = write_tables(outputs, ev, per_position=per_position, formats=table_formats)
        write_configuration(outputs, settings, ev)
        correlations = correlation_step(outputs, tables.per_session, settings)
        bar.update()

        cg_ev = (
            ev
            if settings.cg_config is None
            else evaluate_step(loaded, settings.cg_config, engine=eng)
        )
        data = figure_data(ev, cell, settings.figures, cg_ev=cg_ev)
        write_figure_tables(outputs, data)
        bar.update()

        figures = draw_figures(outputs, data, settings)
        bar.update()

        write_exports_step(
            outputs, tables, settings, title=loaded.study.name or "sessionval scores"
        )
        bar.update()

        scores = write_report_step(
            outputs,
            loaded=loaded,
            summary=summary,
            tables=tables,
            settings=settings,
            figures=figures,
            source=logs,
            sections=[correlations] if correlations is not None else [],
        )
        bar.update()
    removed = outputs.finish()
    return RunResult(
        out=out,
        files=outputs.written,
        removed=removed,
        per_session=tables.per_session,
        score_table=scores,
    )

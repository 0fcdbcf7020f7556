"""The run job: the named steps of :mod:`sessionval.workflow.steps` chained, with a progress bar."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import pandas as pd

from ..errors import InputFormatError, ValidationFailed
from ..io.formats import detect_format
from ..progress import stages
from .outputs import RunOutputs
from .settings import NO_JUDGMENTS, run_settings
from .statistics import statistics_step
from .steps import (
    draw_figures,
    evaluate_step,
    figure_cell,
    figure_data,
    load_step,
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
    own_judgments = (detect_format(logs) if fmt == "auto" else fmt) == "lab-tables"
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
                input_options=input_options,
            )
        except ValidationFailed as exc:
            write_validation_failure(outputs, logs, exc)
            raise
        summary = write_validation(outputs, loaded)
        if loaded.judgments is None and settings.config.judgments == "reference":
            raise InputFormatError(f"{logs}: {NO_JUDGMENTS}")
        if loaded.frame.n_sessions == 0:
            raise InputFormatError(f"{logs}: no session left to evaluate")
        cell = figure_cell(loaded, settings.figures)
        bar.update()

        ev = evaluate_step(loaded, settings.config)
        bar.update()

        tables = write_tables(outputs, ev)
        write_configuration(outputs, settings, ev)
        bar.update()

        cg_ev = ev if settings.cg_config is None else evaluate_step(loaded, settings.cg_config)
        stats = settings.statistics
        data = figure_data(
            ev,
            cell,
            settings.figures,
            cg_ev=cg_ev,
            confidence=stats.confidence if stats.bands else None,
        )
        write_figure_tables(outputs, data)
        bar.update()

        figures = draw_figures(outputs, data, settings)
        bar.update()

        write_exports_step(
            outputs, tables, settings, title=loaded.study.name or "sessionval scores"
        )
        bar.update()

        statistics = statistics_step(outputs, tables.per_session, stats)

        scores = write_report_step(
            outputs,
            loaded=loaded,
            summary=summary,
            tables=tables,
            settings=settings,
            figures=figures,
            source=logs,
            sections=statistics.sections,
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

"""The run job: the named steps of :mod:`sessionval.workflow.steps` chained, with a progress bar."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Final

import pandas as pd

from ..errors import InputFormatError, ValidationFailed
from ..progress import stages
from .outputs import RunOutputs
from .settings import run_settings
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
    settings = run_settings(config_path, lenient=lenient, has_qrels=qrels is not None)
    out.mkdir(parents=True, exist_ok=True)
    outputs = RunOutputs(out)
    with stages(STAGES, disable=None if progress is None else not progress) as bar:
        try:
            loaded = load_step(logs, qrels=qrels, mode="lenient" if settings.lenient else "strict")
        except ValidationFailed as exc:
            write_validation_failure(outputs, logs, exc)
            raise
        summary = write_validation(outputs, loaded)
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

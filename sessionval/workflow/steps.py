"""The named steps of ``sessionval run``, each a function with a clear input and output.

In order: :func:`load_step` (read and validate the study), :func:`write_validation`
(``validation.txt``, ``rejects.csv``), the gains fitted to the data's grade scale
(:meth:`~sessionval.workflow.settings.RunSettings.settled`, the decision of
:func:`~sessionval.evaluation.gain_fit.fit_gains` that ``evaluate`` makes too),
:func:`~sessionval.workflow.figures.figure_cell` (which
scenario and system Figures 3 and 4 show), :func:`evaluate_step`, :func:`write_tables`
(``tables/``) and :func:`write_configuration` (``config.toml``, ``config.json``), the
figure steps of :mod:`sessionval.workflow.figures`, :func:`write_exports_step`
(``exports/``) and :func:`write_report_step` (``report.html``).  Every step writes into
the run's staging folder; :meth:`~sessionval.workflow.outputs.RunOutputs.finish` then
moves the files into place and writes the manifest.  :func:`sessionval.workflow.run`
chains them.

**Adding a step** (a statistic, a report section): a function from the evaluation's
tidy tables to a tidy table or a :class:`~sessionval.output.report.ReportSection`,
called in :func:`sessionval.workflow.job.run` and passed to :func:`write_report_step`
(``sections=``); its settings are a table of the configuration file
(:mod:`sessionval.workflow.settings`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, cast

import pandas as pd

from ..analysis.covariates import with_covariates
from ..analysis.stats import score_table
from ..analysis.summary import StudySummary, summarize
from ..errors import ValidationFailed
from ..evaluation.config import SessionConfig
from ..evaluation.engine import Engine
from ..evaluation.remote import RemoteStudy, evaluate_remote
from ..evaluation.result import SessionEvaluation
from ..evaluation.session import evaluate
from ..frame import LoadedStudy
from ..io.study import load_study
from ..output.export import ExportResult, Format, export_formats, write_exports
from ..output.report import (
    ReportFigure,
    ReportSection,
    render_report,
    unequal_counts,
    unjudged_sessions,
)
from ..output.write_thread import BackgroundWrites
from ..problems import LoadReport, Mode
from .config_text import config_tables, to_toml
from .outputs import PARQUET_ROW_GROUP, RunOutputs
from .settings import RunSettings

__all__ = [
    "REPORT_MEASURES",
    "ScoreTables",
    "evaluate_step",
    "load_step",
    "peak_memory_mb",
    "report_measures",
    "report_scores",
    "write_config_json",
    "write_config_toml",
    "write_configuration",
    "write_exports_step",
    "write_report_step",
    "write_summary",
    "write_tables",
    "write_validation",
    "write_validation_failure",
]

#: Per-session scores of the report's per-system table (those the evaluation has).
REPORT_MEASURES: Final = ("nsdcg", "sdcg", "avg_pos_nsdcg", "n_queries", "n_relevant_found")


# ---------------------------------------------------------------------------------------------
# load and validate


def load_step(
    logs: Path,
    *,
    qrels: Path | None,
    mode: Mode,
    input_options: Mapping[str, Any] | None = None,
) -> LoadedStudy:
    """Read and validate the study: the run's only read of its input.

    Parameters
    ----------
    logs
        Study folder or file, in any format of :data:`sessionval.io.formats.FORMATS`.
    qrels
        Reference judgments, or None.
    mode
        ``"strict"`` (fail on any problem) or ``"lenient"`` (reject bad sessions).
    input_options
        ``fmt`` (default ``"auto"``) and the format's options, as
        :func:`sessionval.io.formats.load_input` takes them.

    Returns
    -------
    LoadedStudy

    Raises
    ------
    ValidationFailed
        Strict mode and the input has problems.
    """
    return load_study(logs, qrels=qrels, mode=mode, **dict(input_options or {}))


def write_validation_failure(outputs: RunOutputs, logs: Path, error: ValidationFailed) -> Path:
    """Write the problems of a failed load, keeping the previous run's outputs.

    Returns
    -------
    pathlib.Path
        The file the problems went to (``validation.txt`` in a folder without an
        earlier run, else ``validation-failed.txt``:
        :meth:`~sessionval.workflow.outputs.RunOutputs.finish_failed`).
    """
    return outputs.finish_failed(f"VALIDATION FAILED for {logs}\n\n{error}\n")


def peak_memory_mb() -> float:
    """Peak resident memory of this process so far, in MB (``ru_maxrss``).

    Workers of a Dask cluster are other processes: their memory is not in it.
    """
    import resource
    import sys

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return float(peak) / (2**20 if sys.platform == "darwin" else 2**10)  # bytes on macOS


def write_validation(
    outputs: RunOutputs, loaded: LoadedStudy, *, peak_memory: float | None = None
) -> StudySummary:
    """Write the study summary and problems (``validation.txt``) and the rejects (``rejects.csv``).

    ``peak_memory`` (MB; :func:`peak_memory_mb` after the load) adds a last line
    with the peak memory of the load, what a large study needs to plan for.

    Returns
    -------
    StudySummary
        The summary written (the report shows it too).
    """
    summary = summarize(loaded)
    write_summary(outputs, summary, loaded.report, peak_memory=peak_memory)
    return summary


def write_summary(
    outputs: RunOutputs,
    summary: StudySummary,
    report: LoadReport,
    *,
    peak_memory: float | None = None,
) -> None:
    """Write ``validation.txt`` (the summary, the problems) and ``rejects.csv`` of a load's books.

    :func:`write_validation` of a study in this process; a study scored where it lies
    (``workflow/distributed.py``) has its summary from counts added up.
    """
    lines = [summary.to_text()]
    if report.problems:
        lines += [
            "",
            f"{len(report.problems)} problem(s) in {report.sessions_rejected} rejected record(s):",
            *(f"  {q}" for q in report.problems),
        ]
    if peak_memory is not None:
        lines += ["", f"peak memory of this process after loading: {peak_memory:,.0f} MB"]
    outputs.write_text("validation.txt", "\n".join(lines) + "\n")
    outputs.write_frame("rejects.csv", report.rejects)


# ---------------------------------------------------------------------------------------------
# evaluate and write the tables


def evaluate_step(
    loaded: LoadedStudy,
    config: SessionConfig,
    *,
    measures: Sequence[str] = (),
    engine: Engine | None = None,
    keep_positions: bool = False,
) -> SessionEvaluation:
    """Evaluate every session under ``config``, with the ``[measures]`` chosen, on ``engine``.

    ``keep_positions``: keep the scoring pass's per-position vectors (a local study's;
    :func:`~sessionval.evaluation.session.evaluate`).
    """
    if isinstance(loaded, RemoteStudy):  # partitions kept on a cluster's workers: scored there
        return evaluate_remote(loaded, config, measures=measures)
    return evaluate(
        loaded.frame,
        loaded.judgments,
        config,
        measures=measures,
        engine=engine,
        keep_positions=keep_positions,
    )


@dataclass(frozen=True)
class ScoreTables:
    """The per-query and per-session tables of the evaluation (the exports and report use them).

    ``per_session`` carries the covariates of each session (times, order, searcher
    attributes: :func:`~sessionval.analysis.covariates.with_covariates`) after the scores.
    ``files`` are the files written, by table name and format (the exports copy those
    they would write again byte for byte); ``notes`` say which large table was written
    in fewer formats.
    """

    per_query: pd.DataFrame
    per_session: pd.DataFrame
    files: Mapping[str, Mapping[str, Path]] = field(default_factory=dict)
    notes: tuple[str, ...] = ()


def write_tables(
    outputs: RunOutputs,
    ev: SessionEvaluation,
    *,
    per_position: bool = True,
    formats: Sequence[str] = ("csv", "parquet"),
    large_rows: int | None = None,
) -> ScoreTables:
    """Write ``tables/per_position``, ``per_query`` and ``per_session`` as CSV and Parquet.

    A large study may leave out the per-position table (``per_position=False``: one
    row per position of every session grows to billions of rows) and write Parquet
    only (``formats=("parquet",)``: CSV of hundreds of millions of rows is slow and
    large).  A per-position table of more than ``large_rows`` rows (``[run]
    large_export_rows``, unless ``[run] all_formats``) is written in one format, Parquet
    when asked for (:func:`~sessionval.output.export.export_formats`' rule for a long
    table: its CSV is the largest file of a run), and the result's notes say so;
    ``None`` writes every format.  Written as Parquet alone, it is built and written one
    row group at a time (:meth:`~sessionval.workflow.outputs.RunOutputs.write_parquet_blocks`:
    the same file, one block's memory).  The per-query and per-session files are handed
    to the run's writer thread (:attr:`~sessionval.workflow.outputs.RunOutputs.writes`):
    complete once it is waited for or closed
    (:meth:`~sessionval.workflow.outputs.RunOutputs.finish`).
    """
    per_session = with_covariates(ev.per_session(), ev.frame)
    per_session.attrs = dict(ev.per_session().attrs)
    per_query = ev.per_query()
    files: dict[str, dict[str, Path]] = {}
    notes: list[str] = []
    # the per-query and per-session files are encoded on the run's writer thread while
    # this one builds the per-position table and the next stages run (the same bytes;
    # the exports copy them on that thread, after them)
    for name, table in (("per_query", per_query), ("per_session", per_session)):
        files[name] = _write(outputs, name, table, formats, background=outputs.writes, record=False)
    if per_position:
        files = {"per_position": _write_positions(outputs, ev, formats, large_rows, notes)} | files
    # recorded in the tables' order (per position first), as when written one by one
    outputs.add(*(path for name in ("per_query", "per_session") for path in files[name].values()))
    return ScoreTables(per_query, per_session, files, tuple(notes))


def _write_positions(
    outputs: RunOutputs,
    ev: SessionEvaluation,
    formats: Sequence[str],
    large_rows: int | None,
    notes: list[str],
) -> dict[str, Path]:
    """``tables/per_position`` in the formats its size allows (:func:`write_tables`)."""
    n_rows = int(ev.sessions["n_positions"].sum())
    chosen = export_formats("per_position_long", n_rows, _formats(formats), large_rows)
    if tuple(chosen) != _formats(formats):
        notes.append(_one_format_note(n_rows, chosen, large_rows))
    if tuple(chosen) == ("parquet",):  # a large table: one block of rows at a time
        blocks = (
            ev.per_position(rows=(lo, min(lo + PARQUET_ROW_GROUP, n_rows)))
            for lo in range(0, max(n_rows, 1), PARQUET_ROW_GROUP)
        )
        files = {"parquet": outputs.write_parquet_blocks("tables/per_position.parquet", blocks)}
    else:
        files = _write(outputs, "per_position", ev.per_position(), chosen)
    ev.forget_per_position()  # built for this file only: the largest table, not kept
    return files


def _formats(formats: Sequence[str]) -> tuple[Format, ...]:
    return tuple(cast("Format", f) for f in formats)


def _write(
    outputs: RunOutputs,
    name: str,
    table: pd.DataFrame,
    formats: Sequence[str],
    *,
    background: BackgroundWrites | None = None,
    record: bool = True,
) -> dict[str, Path]:
    return {
        ext: outputs.write_frame(
            f"tables/{name}.{ext}", table, background=background, record=record
        )
        for ext in formats
    }


def _one_format_note(n_rows: int, chosen: Sequence[str], large_rows: int | None) -> str:
    """The note on a per-position table written in fewer formats, and how to ask for all."""
    listed = ", ".join("." + f for f in chosen)
    return (
        f"tables/per_position has {n_rows:,} rows (more than [run] large_export_rows = "
        f"{large_rows:,}): written as {listed} only; [run] all_formats = true writes every "
        "format of --tables"
    )


def write_configuration(outputs: RunOutputs, settings: RunSettings, ev: SessionEvaluation) -> None:
    """Write the configuration actually used: ``config.toml`` (re-runnable) and ``config.json``.

    :func:`write_config_toml` and :func:`write_config_json` together (the run writes the
    first from its settled plan before scoring, the second with the evaluation's counts).
    """
    write_config_toml(outputs, settings)
    write_config_json(outputs, settings, ev.counts())


def write_config_toml(outputs: RunOutputs, settings: RunSettings) -> None:
    """Write ``config.toml``, the re-runnable configuration of the settled plan.

    What the run decided on the user's behalf (``settings.notes``, e.g. the gain scheme
    fitted to the data's grade scale) heads it as comments.
    """
    header = [
        "sessionval run: the configuration actually used.",
        "Re-run with: sessionval run LOGS --qrels QRELS --out DIR --config config.toml",
        *(f"Note: {note}" for note in settings.notes),
    ]
    outputs.write_text("config.toml", to_toml(config_tables(settings), header="\n".join(header)))


def write_config_json(
    outputs: RunOutputs, settings: RunSettings, counts: Mapping[str, int]
) -> None:
    """Write ``config.json``: the configuration, the run's notes and the evaluation's counts.

    ``counts`` are :meth:`~sessionval.evaluation.result.SessionEvaluation.counts`
    (added up over partitions when they were scored where they lie).
    """
    tables = config_tables(settings)
    document = {
        "session": settings.config.model_dump(mode="json"),
        **{name: table for name, table in tables.items() if name},
        "notes": list(settings.notes),
        "evaluation": dict(counts),
    }
    outputs.write_text("config.json", json.dumps(document, indent=2) + "\n")


# ---------------------------------------------------------------------------------------------
# exports and report


def write_exports_step(
    outputs: RunOutputs, tables: ScoreTables, settings: RunSettings, *, title: str
) -> ExportResult:
    """Write the scores for R, SPSS and Stata with the codebook into ``exports/``.

    A large table is written in the compact formats only unless ``[run] all_formats``
    (:func:`~sessionval.output.export.export_formats`; the result's notes say which).
    """
    run = settings.file.run
    res = write_exports(
        outputs.root / "exports",
        per_session=tables.per_session,
        per_query=tables.per_query,
        parameters=settings.config.model_dump(mode="json"),
        formats=cast("tuple[Format, ...]", settings.formats),
        title=title,
        csv_safe=settings.csv_safe,
        large_rows=None if run.all_formats else run.large_export_rows,
        # the wide tables are tables/' own files, written with the same csv_safe: copied
        copies={
            f"{name}_wide": files for name, files in tables.files.items() if name != "per_position"
        },
        # Stata's and SPSS's per-cell loops in the run's background process, when it has one
        stats_files=outputs.background,
        # CSV and Parquet on the run's writer thread, after tables/' files they copy
        writes=outputs.writes,
    )
    outputs.add(*res.files)
    return res


def report_measures(columns: Iterable[object], settings: RunSettings) -> list[str]:
    """The report's measures: :data:`REPORT_MEASURES`, then ``[measures] session`` (those given)."""
    wanted = dict.fromkeys((*REPORT_MEASURES, *settings.measures.session))
    present = {str(c) for c in columns}
    return [m for m in wanted if m in present]


def report_scores(
    per_session: pd.DataFrame, settings: RunSettings
) -> tuple[pd.DataFrame, tuple[str, ...]]:
    """The report's per-system score table of a per-session table, and its notes."""
    scores = score_table(per_session, measures=report_measures(per_session.columns, settings))
    return scores, (*unjudged_sessions(per_session), *unequal_counts(scores))


def write_report_step(
    outputs: RunOutputs,
    *,
    report: LoadReport,
    name: str | None,
    summary: StudySummary,
    scores: pd.DataFrame,
    score_notes: Sequence[str],
    settings: RunSettings,
    figures: list[ReportFigure],
    source: Path,
    sections: Sequence[ReportSection] = (),
    notes: Sequence[str] = (),
) -> pd.DataFrame:
    """Write ``report.html`` with its per-system score table (:func:`report_scores`).

    ``report`` is the load's (records read, rejected, problems), ``name`` the study's
    (the title; ``None``: the source's file name).

    The report shows the per-system scores of :data:`REPORT_MEASURES` and of the
    ``[measures] session`` measures (``score_notes``: when scores are averaged over
    different numbers of sessions, sessions without judgments); ``sections``
    (statistics: the one comparison of the systems, as the design asks; correlations)
    follow the scores, then a section of ``notes`` on the
    run (what it chose, the figures it skipped) when there are any.
    """
    run_notes = [*settings.notes, *notes]
    all_sections = list(sections)
    if run_notes:
        all_sections.append(
            ReportSection("run-notes", "Notes on this run", notes=tuple(dict.fromkeys(run_notes)))
        )
    html = render_report(
        scores=scores,
        parameters=settings.config.model_dump(mode="json"),
        figures=figures,
        summary=summary,
        validation_line=report.summary_line(),
        validation_ok=not report.problems,
        rejects=report.rejects,
        title=f"sessionval report: {name or Path(source).name}",
        source=str(source),
        sections=all_sections,
        score_notes=tuple(score_notes),
    )
    outputs.write_text("report.html", html)
    return scores

"""``sessionval validate LOGS [--from FORMAT] [--qrels QRELS]``: validate, print a summary."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ..analysis.summary import StudySummary, summarize, summary_from_counts
from ..errors import InputFormatError, ValidationFailed, phase
from ..frame import LoadedStudy
from ..io.formats import load_input
from ..problems import LoadReport
from ..progress import counted, progress_bar
from ._options import (
    engine_options,
    input_format_options,
    keeps_partitions,
    load_input_kwargs,
    logs_argument,
    open_engine,
    partition_mapper,
    progress_option,
    qrels_option,
    read_paths,
    strictness_option,
)

__all__ = [
    "command",
]


@click.command("validate")
@logs_argument
@input_format_options
@qrels_option
@strictness_option
@click.option(
    "--max-problems",
    default=50,
    show_default=True,
    type=click.IntRange(min=1),
    help="Problems listed before a strict run stops.",
)
@click.option(
    "--rejects",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write every rejected session with its reasons to this CSV (lenient mode).",
)
@progress_option
@engine_options
def command(
    logs: Path,
    qrels: Path | None,
    lenient: bool | None,
    max_problems: int,
    rejects: Path | None,
    progress: bool | None,
    engine: str,
    scheduler: str | None,
    workers: int | None,
    **input_options: Any,
) -> None:
    """Validate LOGS in any supported format and print the study summary.

    LOGS is a study folder (sessions.jsonl/.parquet/.csv and study.json), one
    session file, or an input of another format (--from; auto recognises it).
    Prints the study summary: searchers, sessions per system x topic, queries per
    session (Table 2 of Jarvelin et al. 2008) and judgment coverage. Exit code 1
    when the input has problems (strict, or --lenient rejecting every session), 2 on a
    usage or input error, 3 out of memory, 0 otherwise. With --engine dask the
    files of a partitioned input are validated on the cluster's workers.
    """
    kwargs = load_input_kwargs(input_options)
    if rejects is not None:  # refused before the read, not after it
        from ..workflow.overlap import refuse_overlap

        refuse_overlap([rejects], read_paths(logs, qrels, options=kwargs), label="--rejects")
    with (
        open_engine(engine, scheduler, workers) as eng,
        progress_bar(progress) as bar,
    ):
        with phase(f"loading and validating {logs}"):
            options: dict[str, Any] = {
                "qrels": qrels,
                "mode": "lenient" if lenient else "strict",
                "max_problems": max_problems,
                "progress": bar,
            }
            loaded: LoadedStudy | None = None
            if keeps_partitions(logs, eng, kwargs):  # validated and counted on the workers
                kwargs.pop("fmt", None)
                summary, report = _count_on_workers(logs, eng, bar, options, kwargs)
            else:
                loaded = load_input(
                    logs,
                    **options,
                    **kwargs,
                    **partition_mapper(logs, str(kwargs.get("fmt", "auto")), eng),
                )
        if loaded is not None:
            report = loaded.report
        if report.sessions_rejected and not report.sessions_accepted:
            # every session rejected: the input fails validation (exit 1), as the JSON-lines,
            # XML and lab-table readers already decide when no valid session is left
            _write_rejects(report, rejects)
            raise ValidationFailed(
                report.problems[:max_problems], truncated=len(report.problems) > max_problems
            )
        if loaded is not None:
            n = loaded.frame.n_results
            with phase("summarising", n, "result rows"), counted(bar, "summarising", n) as shown:
                summary = summarize(loaded)
                shown.advance(n)
    click.echo(summary.to_text())
    if loaded is not None and loaded.notes:
        click.echo(f"\n{len(loaded.notes)} repair(s) or note(s):", err=True)
        for p in loaded.notes[:max_problems]:
            click.echo(f"  {p}", err=True)
        _more(len(loaded.notes), max_problems)
    if report.problems:
        click.echo(
            f"\n{len(report.problems)} problem(s) in {report.sessions_rejected} rejected "
            "record(s):",
            err=True,
        )
        for p in report.problems[:max_problems]:
            click.echo(f"  {p}", err=True)
        _more(len(report.problems), max_problems)
        _write_rejects(report, rejects)


def _count_on_workers(
    logs: Path,
    engine: Any,
    bar: Any,
    options: dict[str, Any],
    kwargs: dict[str, Any],
) -> tuple[StudySummary, LoadReport]:
    """The summary and books of a partitioned study validated and counted on the workers.

    Each partition's rows are dropped on its worker once counted; the client folds
    the counts (:func:`~sessionval.workflow.distributed.count_partitions`), so its
    memory does not grow with the sessions.
    """
    from ..io.partitioned import prepare_partitions
    from ..progress import engine_ticks
    from ..workflow.distributed import count_partitions

    setup = prepare_partitions(
        logs,
        qrels=options["qrels"],
        mode=options["mode"],
        max_problems=options["max_problems"],
        **kwargs,
    )
    ticks = engine_ticks(bar, f"validating {len(setup.files)} partitions", "files")
    scores = count_partitions(setup, engine, progress=ticks)
    if scores.counts is None:
        raise InputFormatError(f"{logs}: no partition to combine")
    line = scores.report.summary_line()
    return summary_from_counts(scores.counts, setup.judgments, line), scores.report


def _write_rejects(report: LoadReport, rejects: Path | None) -> None:
    """Every rejected session with its reasons, to the ``--rejects`` CSV when one is given."""
    if rejects is not None:
        from ..errors import writing
        from ..workflow.outputs import staged_file

        ctx = click.get_current_context()
        params = ctx.params
        inputs = read_paths(params["logs"], params["qrels"], options=load_input_kwargs(params))
        # staged beside it and renamed; never over what validate read
        with staged_file(rejects, inputs=inputs, label="--rejects") as target, writing(rejects):
            report.rejects.to_csv(target, index=False)
        click.echo(f"rejects written to {rejects}", err=True)


def _more(n: int, shown: int) -> None:
    """Say how many were not printed, so none vanishes without a word."""
    if n > shown:
        click.echo(
            f"  ... and {n - shown} more (all of them with --max-problems {n}, "
            "or in a file with --rejects)",
            err=True,
        )

"""``sessionval run LOGS --qrels QRELS --out DIR [--config FILE.toml]``: the whole analysis.

What a researcher with a finished user study runs first: validate, evaluate, and
write tables, figures, exports for R/SPSS/Stata and ``report.html`` into ``DIR``.
The job (what it writes, its named steps and the configuration file) is
:mod:`sessionval.workflow`; this module is its command line.

Exit codes: 0 success; 1 the input failed validation (the problems are in
``DIR/validation.txt`` and on stderr); 2 usage or input error (missing file, bad
configuration).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from ..workflow import run
from ._options import (
    engine_options,
    input_format_options,
    load_input_kwargs,
    logs_argument,
    open_engine,
    qrels_option,
)

__all__ = [
    "command",
]


@click.command("run")
@logs_argument
@qrels_option
@input_format_options
@click.option(
    "--out",
    "out",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Output folder (created; files of a previous run are replaced).",
)
@click.option(
    "--config",
    "config_path",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="TOML configuration (default: the paper's b=2, bq=4, X=10, gains 0-1-10-100).",
)
@click.option(
    "--lenient/--strict",
    default=None,
    help="Reject bad sessions and go on, or fail on any problem (default: strict, "
    "or [run] lenient of the configuration).",
)
@click.option(
    "--progress/--no-progress",
    default=None,
    help="Progress bar on stderr (default: only on a terminal).",
)
@click.option(
    "--per-position/--no-per-position",
    default=True,
    show_default=True,
    help="Write tables/per_position (one row per position of every session: billions of "
    "rows in a large study).",
)
@click.option(
    "--tables",
    "table_formats",
    type=click.Choice(["both", "csv", "parquet"]),
    default="both",
    show_default=True,
    help="Formats of tables/ (parquet alone at scale: CSV of millions of rows is slow).",
)
@engine_options
def command(
    logs: Path,
    qrels: Path | None,
    out: Path,
    config_path: Path | None,
    lenient: bool | None,
    progress: bool | None,
    per_position: bool,
    table_formats: str,
    engine: str,
    scheduler: str | None,
    workers: int | None,
    **input_options: Any,
) -> None:
    """Validate, evaluate and write tables, figures, exports and report.html to --out.

    Exit code 0 on success, 1 if the input fails validation, 2 on a usage or input
    error.  With --engine dask the sessions are scored on a Dask cluster (and the
    files of a partitioned input validated there); the tables are the same.
    """
    with open_engine(engine, scheduler, workers) as eng:
        result = run(
            logs,
            qrels=qrels,
            out=out,
            config_path=config_path,
            lenient=lenient,
            progress=progress,
            input_options=load_input_kwargs(input_options),
            engine=eng,
            per_position=per_position,
            table_formats=("csv", "parquet") if table_formats == "both" else (table_formats,),
        )
    table = result.score_table
    show = table[table["measure"].isin(["nsdcg", "sdcg"])]
    click.echo(show.to_string(index=False, float_format=lambda x: f"{x:.4f}"))
    click.echo(
        f"\nwrote {len(result.files)} files to {result.out}"
        + (f" (removed {len(result.removed)} stale)" if result.removed else "")
    )
    click.echo(f"open {result.out / 'report.html'} in a browser")
    sys.stdout.flush()

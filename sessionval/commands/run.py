"""``sessionval run LOGS --qrels QRELS --out DIR [--config FILE.toml]``: the whole analysis.

What a researcher with a finished user study runs first: validate, evaluate, and
write tables, figures, exports for R/SPSS/Stata and ``report.html`` into ``DIR``.
The job (what it writes, its named steps and the configuration file) is
:mod:`sessionval.workflow`; this module is its command line.

Exit codes: 0 success; 1 the input failed validation (the problems are on stderr
and in ``DIR/validation.txt``, or ``DIR/validation-failed.txt`` beside a previous
run's outputs, which stay); 2 usage or input error (missing file, bad configuration,
files in ``DIR`` that must not be overwritten); 3 out of memory (one line naming the
phase and its rows); 70 internal error (a bug; ``--debug`` shows the traceback).  The
whole contract is in ``docs/reliability.md``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, cast

import click

from ..cli import CommandFailed
from ..errors import ValidationFailed
from ..evaluation.config import PRESETS
from ..workflow import run
from ..workflow.plan import Results
from ._options import (
    engine_options,
    input_format_options,
    load_input_kwargs,
    logs_argument,
    open_engine,
    qrels_option,
    strictness_option,
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
    help="Output folder (created). The outputs are swapped in when the run succeeds; "
    "files of a previous run are replaced, other files kept.",
)
@click.option(
    "--config",
    "config_path",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="TOML configuration, every key in docs/configuration.md (default: the paper's "
    "b=2, bq=4, X=10, gains auto: 0-1-10-100 when it covers the data's grades, else exp).",
)
@click.option(
    "--preset",
    default=None,
    help="A published variant's parameters (docs/sessions.md): "
    + ", ".join(PRESETS)
    + "; other flags and keys override it.",
)
@click.option("--cutoff", type=int, default=None, help="X: the top X ranks of each query.")
@click.option("--b", "b", type=float, default=None, help="Log base of the rank discount, > 1.")
@click.option(
    "--bq", "bq", type=float, default=None, help="Log base of the query discount, > 1 (inf: none)."
)
@click.option(
    "--gains",
    default=None,
    help="Gain scheme: a name (0-1-10-100, exp, grade, ...), a dash list (0-1-3-7-15) or "
    "auto (the default: fitted to the data's grades).",
)
@strictness_option
@click.option(
    "--force",
    is_flag=True,
    default=False,
    help="Overwrite files in --out that no earlier sessionval run wrote (inputs never).",
)
@click.option(
    "--csv-safe",
    "csv_safe",
    flag_value=True,
    default=None,
    help="Prefix text cells starting with =, +, - or @ with ' in every CSV, for "
    "spreadsheets (off by default: R and Stata need the raw values).",
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
    "--figures/--no-figures",
    default=True,
    show_default=True,
    help="Draw the figures. With --no-figures --no-per-position --engine dask a "
    "partitioned study is scored in one pass and the workers keep no result row.",
)
@click.option(
    "--exports/--no-exports",
    default=None,
    help="Write exports/ for R, SPSS and Stata (default: the configuration's [run] exports, "
    "true). --no-exports skips them: the tables and the report have every score.",
)
@click.option(
    "--tables",
    "table_formats",
    type=click.Choice(["both", "csv", "parquet"]),
    default="both",
    show_default=True,
    help="Formats of tables/ (parquet alone at scale: CSV of millions of rows is slow).",
)
@click.option(
    "--results",
    type=click.Choice(["workers", "client"]),
    default="workers",
    show_default=True,
    help="With --engine dask and a partitioned study: leave the results on the workers "
    "(they write tables/ as Parquet parts; the report, figures and statistics come from "
    "their partial sums, the client's memory does not grow with the sessions) or gather "
    "them to the client (every output of a local run).",
)
@engine_options
def command(
    logs: Path,
    qrels: Path | None,
    out: Path,
    config_path: Path | None,
    preset: str | None,
    cutoff: int | None,
    b: float | None,
    bq: float | None,
    gains: str | None,
    lenient: bool | None,
    force: bool,
    csv_safe: bool | None,
    progress: bool | None,
    per_position: bool,
    figures: bool,
    exports: bool | None,
    table_formats: str,
    results: str,
    engine: str,
    scheduler: str | None,
    workers: int | None,
    **input_options: Any,
) -> None:
    """Validate, evaluate and write tables, figures, exports and report.html to --out.

    Exit code 0 on success, 1 if the input fails validation, 2 on a usage or input
    error, 3 out of memory, 70 internal error.  With --engine dask the sessions are
    scored on a Dask cluster (and the files of a partitioned input validated there);
    the tables are the same.
    """
    given = {"preset": preset, "cutoff": cutoff, "b": b, "bq": bq, "gains": gains}
    try:
        with open_engine(engine, scheduler, workers) as eng:
            result = run(
                logs,
                qrels=qrels,
                out=out,
                config_path=config_path,
                lenient=lenient,
                progress=progress,
                input_options=load_input_kwargs(input_options),
                overrides={k: v for k, v in given.items() if v is not None},
                force=force,
                csv_safe=csv_safe,
                engine=eng,
                per_position=per_position,
                figures=figures,
                exports=exports,
                results=cast("Results", results),
                table_formats=("csv", "parquet") if table_formats == "both" else (table_formats,),
            )
    except ValidationFailed as exc:
        click.echo(f"error: {exc}", err=True)
        for note in getattr(exc, "__notes__", ()):
            click.echo(note, err=True)
        raise CommandFailed(1) from None
    table = result.score_table
    show = table[table["measure"].isin(["nsdcg", "sdcg"])]
    click.echo(show.to_string(index=False, float_format=lambda x: f"{x:.4f}"))
    if result.rejected:
        click.echo(
            f"\nlenient mode rejected {result.rejected} session(s): the list is in "
            f"{result.out / 'rejects.csv'}, the problems in {result.out / 'validation.txt'}",
            err=True,
        )
    for note in result.notes:
        click.echo(f"note: {note}", err=True)
    click.echo(
        f"\nwrote {len(result.files)} files to {result.out}"
        + (f" (removed {len(result.removed)} stale)" if result.removed else "")
    )
    click.echo(f"open {result.out / 'report.html'} in a browser")
    sys.stdout.flush()

"""``sessionval run LOGS --qrels QRELS --out DIR [--config FILE.toml]``: the whole analysis.

What a researcher with a finished user study runs first.  It validates the logs
and judgments, evaluates every session with the paper's defaults (Järvelin et
al. 2008: b = 2, bq = 4, X = 10, gains 0-1-10-100) or a TOML configuration, and
writes into ``DIR``:

``tables/``     per_position, per_query, per_session (CSV and Parquet)
``figures/``    every figure (PNG, SVG, PDF) and the table behind it (CSV)
``exports/``    per-session / per-query scores for R, SPSS, Stata + codebook
``config.toml`` / ``config.json``   the configuration actually used
``validation.txt`` / ``rejects.csv`` the study summary and what was rejected
``report.html`` one self-contained report (open it in a browser)

Re-running overwrites cleanly: the files of the previous run (listed in
``DIR/.sessionval-run.json``) that this run does not write again are removed;
nothing else in ``DIR`` is touched.

Exit codes: 0 success; 1 the input failed validation (the problems are in
``DIR/validation.txt`` and on stderr); 2 usage or input error (missing file, bad
configuration).

Configuration file (TOML): top-level keys are :class:`~sessionval.evaluation.config.SessionConfig`
fields (``preset``, ``b``, ``bq``, ``cutoff``, ``gains``, ``duplicates``, …); an
optional ``[figures]`` table sets ``depth`` (ranks of Figure 1 and of the CG
curves, default 100), ``scenario`` (topic of Figures 3 and 4), ``system``
(Figure 4), ``max_sessions`` (sessions drawn in Figure 4, default 30),
``min_queries`` (Figure 3's subset, default 4) and ``cg_gains`` (gain scheme of the
CG/DCG curves, default the session gains); ``[run]`` sets
``lenient`` (bool) and ``formats`` (export formats).
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ..workflow import run
from ._options import logs_argument, qrels_option

__all__ = [
    "command",
]


# ---------------------------------------------------------------------------------------------
# output directory bookkeeping


# ---------------------------------------------------------------------------------------------
# the run


@click.command("run")
@logs_argument
@qrels_option
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
def command(
    logs: Path,
    qrels: Path | None,
    out: Path,
    config_path: Path | None,
    lenient: bool | None,
    progress: bool | None,
) -> None:
    """Validate, evaluate and write tables, figures, exports and report.html to --out.

    Exit code 0 on success, 1 if the input fails validation, 2 on a usage or input
    error.
    """
    result = run(
        logs, qrels=qrels, out=out, config_path=config_path, lenient=lenient, progress=progress
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

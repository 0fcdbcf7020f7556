"""``sessionval compare QRELS RUN RUN [RUN ...] -m MEASURE ...``: are the differences real.

Scores every run as ``sessionval evaluate`` does (same list options), pairs the runs
by topic and prints one row per measure × pair: ``measure, a, b, n, mean_a, mean_b,
diff, ci_low, ci_high, effect_size, statistic, p, p_adjusted, test, correction,
effect_size_kind, ci_method, significant``.  Run names are the file names without
``.run``.  ``--omnibus`` prints the Friedman test and the two-way ANOVA over all runs
instead.  The statistics are described in ``docs/statistics.md``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ._options import (
    encoding_option,
    format_option,
    progress_option,
    qrels_map_option,
    read_judgments_file,
    run_scoring,
    run_scoring_options,
    statistics_options,
)

if TYPE_CHECKING:
    import pandas as pd

    from ..progress import Progress

__all__ = [
    "DEFAULT_MEASURES",
    "command",
]

DEFAULT_MEASURES: tuple[str, ...] = ("nDCG@10", "AP")


@click.command("compare")
@click.argument("qrels", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.argument("runs", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False))
@click.option(
    "-m",
    "--measure",
    "measures",
    multiple=True,
    help=f"Measure (grammar Name(param=value)@k), repeatable (default: "
    f"{' '.join(DEFAULT_MEASURES)}).",
)
@statistics_options
@click.option("--baseline", help="Compare every run with this one only (a run name).")
@format_option("table", "tsv", "jsonl", "latex", "markdown")
@click.option(
    "--omnibus",
    is_flag=True,
    help="Print the Friedman test and two-way ANOVA over all runs instead of the pairs.",
)
@run_scoring_options
@encoding_option
@qrels_map_option
@progress_option
def command(
    qrels: Path,
    runs: tuple[str, ...],
    measures: tuple[str, ...],
    baseline: str | None,
    fmt: str,
    omnibus: bool,
    progress: bool | None,
    **options: Any,
) -> None:
    """Compare RUNs on QRELS: paired tests with multiplicity correction, effect sizes, CIs.

    At least two runs. On a terminal it prints runs x measures: the mean of each,
    the best in bold, and superscript letters marking the runs a mean is
    significantly better than (a legend names the test and the correction); piped, or
    with --format tsv or jsonl, one row per measure x pair with every statistic.
    Diagnostics (topics per run, the omnibus tests) go to stderr.
    """
    from ..analysis.compare import compare_systems, omnibus_tests, system_means
    from ..errors import InputFormatError
    from ..output.comparison import comparison_latex
    from ..output.pvalues import format_p
    from ..output.terminal import comparison_table, table_text
    from ..progress import progress_bar

    if len(runs) < 2:
        raise InputFormatError(f"compare needs at least two runs, got {len(runs)}")
    if omnibus and fmt == "latex":
        raise click.UsageError("--omnibus prints table, tsv, jsonl or markdown, not latex")
    with progress_bar(progress) as bar:
        n_runs, scores = _scores(qrels, runs, measures, options, bar)
        if omnibus:
            click.echo(table_text(omnibus_tests(scores), fmt))
            return
        result = compare_systems(
            scores,
            test=options["test"],
            correction=options["correction"],
            baseline=baseline,
            alpha=options["alpha"],
            confidence=options["confidence"],
            resamples=options["resamples"],
            seed=options["seed"],
            effect_size=options["effect_size"],
            progress=bar,
        )
    stats = {"test": options["test"], "correction": options["correction"]}
    if fmt == "latex":
        click.echo(comparison_latex(result, system_means(scores), **stats, alpha=options["alpha"]))
    elif fmt in ("table", "markdown"):
        click.echo(
            comparison_table(
                result,
                system_means(scores),
                **stats,
                alpha=options["alpha"],
                markdown=fmt == "markdown",
            )
        )
    else:
        click.echo(table_text(result, fmt))
    for note in result.attrs.get("notes", []):
        click.echo(f"note: {note}", err=True)
    per_run = scores.groupby("system", observed=True)["topic"].nunique()
    click.echo(
        "topics scored per run: " + ", ".join(f"{k} {v}" for k, v in per_run.items()),
        err=True,
    )
    if n_runs >= 3:
        om = omnibus_tests(scores)
        for r, p in zip(om.itertuples(index=False), om["p"].to_numpy(float), strict=True):
            note = f" ({r.note!s})" if r.note else ""
            click.echo(
                f"{r.measure}: {r.test} over {r.n_systems} runs x {r.n_topics} topics: "
                f"statistic {r.statistic:.4g}, {format_p(float(p), prefix=True)}{note}",
                err=True,
            )
    sys.stderr.flush()


def _scores(
    qrels: Path, runs: tuple[str, ...], measures: tuple[str, ...], options: Any, bar: Progress
) -> tuple[int, pd.DataFrame]:
    """The runs read and scored, as ``sessionval evaluate`` scores them: (runs, score table)."""
    from ..workflow.runs import load_runs, score_runs

    tables = load_runs(runs, encoding=options.get("encoding"), progress=bar)
    scores = score_runs(
        tables,
        read_judgments_file(qrels, options),
        list(measures) or list(DEFAULT_MEASURES),
        scoring=run_scoring(options),
        progress=bar,
    )
    return len(tables), scores

"""``sessionval meta SUBCOMMAND ...``: can the measure be trusted? (meta-evaluation).

``rank-correlation QRELS RUN RUN ... -m M -m M ...``
    Kendall's tau, its Z0 test and tau_AP between the system rankings of every pair
    of measures (Sakai 2007, section 4.1).
``discriminative-power QRELS RUN RUN ... -m M --method swap|bootstrap``
    The swap method (Fig. 4) or bootstrap sensitivity (Fig. 7).
``incomplete-judgments QRELS RUN RUN ... -m M --fractions 0.1,0.3,0.5,1.0 --seed S``
    f-qrels (Bompada et al. 2007): rankings and significance decisions vs full qrels.
``sensitivity LOGS --qrels Q --grid b=2,4,10 bq=1.5,4,10 cutoff=5,10,20``
    How much the session parameters change the system and session rankings.
``topic-set-size QRELS RUN RUN ... -m M --min-diff 0.02,0.05,0.1``
    Topics needed to detect a difference (Sakai's topic set size design), the
    variance estimated from the runs.

Each prints its summary table (an aligned table on a terminal, tsv when piped; jsonl
and markdown on request); ``--out DIR`` also writes the detail
tables (TSV) and the figure (PNG, SVG, PDF) there.  Details: ``docs/statistics.md``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ..progress import progress_bar
from ._options import (
    encoding_option,
    format_option,
    input_format_options,
    load_input_kwargs,
    progress_option,
    qrels_map_option,
    read_judgments_file,
    read_paths,
    run_scoring,
    run_scoring_options,
)

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.axes import Axes

    from ..progress import Progress

__all__ = [
    "command",
]

_DEFAULT_MEASURES = ("nDCG@10", "AP", "P@10", "RR")


def _runs_command(func: Any) -> Any:
    """The arguments every run-based subcommand shares."""
    decorators: list[Callable[[Any], Any]] = [
        click.argument("qrels", type=click.Path(exists=True, dir_okay=False, path_type=Path)),
        click.argument(
            "runs", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False)
        ),
        click.option(
            "-m",
            "--measure",
            "measures",
            multiple=True,
            help=f"Measure, repeatable (default: {' '.join(_DEFAULT_MEASURES)}).",
        ),
        _format_option,
        _out_option,
        run_scoring_options,
        encoding_option,
        qrels_map_option,
        progress_option,
    ]
    for deco in reversed(decorators):
        func = deco(func)
    return func


_format_option = format_option("table", "tsv", "jsonl", "markdown")
_out_path = click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder for the detail tables (TSV) and the figure (PNG, SVG, PDF).",
)


def _remember_force(ctx: click.Context, param: click.Parameter, value: bool) -> bool:
    ctx.meta["sessionval_force"] = value
    return value


_force = click.option(
    "--force",
    is_flag=True,
    default=False,
    expose_value=False,
    callback=_remember_force,
    help="Overwrite files in --out that no earlier sessionval meta wrote (inputs never).",
)


def _out_option(f: Callable[..., Any]) -> Callable[..., Any]:
    """``--out DIR`` and ``--force`` (the folder's files are staged, then swapped in)."""
    return _out_path(_force(f))


def _emit(table: pd.DataFrame, fmt: str) -> None:
    from ..output.terminal import table_text

    click.echo(table_text(table, fmt))


def _write(out: Path | None, name: str, tables: dict[str, pd.DataFrame], ax: Axes | None) -> None:
    """Write ``<name>_<table>.tsv`` for each table and ``<name>.png/.svg/.pdf`` of ``ax``."""
    if out is None:
        return
    from ..errors import writing
    from ..output.comparison import tsv_text
    from ..output.plots import save_figure
    from ..workflow.outputs import staged_outputs

    ctx = click.get_current_context()
    # staged and swapped in: each subcommand adds its files, none removes another's
    with staged_outputs(
        out,
        command="meta",
        force=bool(ctx.meta.get("sessionval_force", False)),
        inputs=_inputs(ctx),
        remove_stale=False,
    ) as staged:
        for key, table in tables.items():
            text = tsv_text(table, digits=None) + "\n"  # the printed summary's escaping
            path = staged.root / f"{name}_{key}.tsv"
            with writing(path):
                path.write_text(text, encoding="utf-8")
        paths = save_figure(ax, staged.root / name) if ax is not None else []
    for path in paths:
        click.echo(f"wrote {out / path.name}", err=True)


def _inputs(ctx: click.Context) -> list[Path]:
    """What the subcommand reads (logs or qrels and runs, format options' files)."""
    params = ctx.params
    return read_paths(
        params.get("logs"),
        params.get("qrels"),
        *params.get("runs", ()),
        options=load_input_kwargs(params),
    )


def _scores(
    qrels: Path, runs: tuple[str, ...], measures: tuple[str, ...], options: Any, bar: Progress
) -> Any:
    """The runs read and scored as ``sessionval evaluate`` scores them, reported to ``bar``."""
    from ..errors import InputFormatError
    from ..workflow.runs import load_runs, score_runs

    if len(runs) < 2:
        raise InputFormatError(f"meta-evaluation needs at least two runs, got {len(runs)}")
    return score_runs(
        load_runs(runs, encoding=options.get("encoding"), progress=bar),
        read_judgments_file(qrels, options),
        list(measures) or list(_DEFAULT_MEASURES),
        scoring=run_scoring(options),
        progress=bar,
    )


@click.group("meta")
def command() -> None:
    """Meta-evaluation: can the measure be trusted.

    Rank correlation between measures, discriminative power, incomplete judgments and
    parameter sensitivity.
    """


@command.command("rank-correlation")
@_runs_command
def rank_correlation_command(
    qrels: Path,
    runs: tuple[str, ...],
    measures: tuple[str, ...],
    fmt: str,
    out: Path | None,
    **options: Any,
) -> None:
    """Kendall's tau (Z0 test) and tau_AP between the system rankings of every pair of measures."""
    from ..analysis.meta import rank_correlation

    with progress_bar(options["progress"]) as bar:
        table = rank_correlation(_scores(qrels, runs, measures, options, bar))
    _emit(table, fmt)
    _write(out, "rank_correlation", {"summary": table}, None)


@command.command("discriminative-power")
@_runs_command
@click.option(
    "--method",
    type=click.Choice(["swap", "bootstrap"]),
    default="bootstrap",
    show_default=True,
    help="Swap method (Voorhees & Buckley) or bootstrap sensitivity (Sakai).",
)
@click.option("--resamples", type=click.IntRange(min=1), default=1000, show_default=True)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option(
    "--alpha",
    type=click.FloatRange(0, 1, min_open=True, max_open=True),
    default=0.05,
    show_default=True,
    help="Significance level (bootstrap) or the swap rate allowed (swap).",
)
def discriminative_power_command(
    qrels: Path,
    runs: tuple[str, ...],
    measures: tuple[str, ...],
    fmt: str,
    out: Path | None,
    method: str,
    resamples: int,
    seed: int,
    alpha: float,
    **options: Any,
) -> None:
    """How many system pairs a measure tells apart, and the difference it needs."""
    from ..analysis.meta import bootstrap_sensitivity, swap_method

    with progress_bar(options["progress"]) as bar:
        scores = _scores(qrels, runs, measures, options, bar)
        if method == "swap":
            sw = swap_method(
                scores, resamples=resamples, seed=seed, max_swap_rate=alpha, progress=bar
            )
        else:
            bs = bootstrap_sensitivity(
                scores, resamples=resamples, seed=seed, alpha=alpha, progress=bar
            )
    ax = None
    if method == "swap":
        _emit(sw.summary, fmt)
        if out is not None:
            from ..output.meta_plots import plot_swap_rates

            ax = plot_swap_rates(sw.bins, max_swap_rate=alpha)
        _write(out, "swap", {"summary": sw.summary, "bins": sw.bins}, ax)
    else:
        _emit(bs.summary, fmt)
        if out is not None:
            from ..output.meta_plots import plot_asl_curves

            ax = plot_asl_curves(bs.pairs, alpha=alpha)
        _write(out, "bootstrap", {"summary": bs.summary, "pairs": bs.pairs}, ax)


def _fractions(value: str, *, allow_above_one: bool = False) -> list[float]:
    """Comma-separated positive numbers (fractions in (0, 1] unless ``allow_above_one``)."""
    try:
        out = [float(v) for v in value.split(",") if v.strip()]
    except ValueError as exc:
        raise click.BadParameter(f"{value!r}: give numbers like 0.1,0.3,0.5,1.0") from exc
    if not out or any(v <= 0 or (v > 1 and not allow_above_one) for v in out):
        raise click.BadParameter(f"{value!r}: give numbers in (0, 1], comma-separated")
    return out


@command.command("incomplete-judgments")
@_runs_command
@click.option(
    "--fractions",
    default="0.1,0.3,0.5,1.0",
    show_default=True,
    help="Fractions of the judgments kept (comma-separated, in (0, 1]).",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the samples.")
@click.option(
    "--alpha",
    type=click.FloatRange(0, 1, min_open=True, max_open=True),
    default=0.05,
    show_default=True,
    help="Level of the Wilcoxon decisions.",
)
@click.option(
    "--write-qrels",
    type=click.Path(file_okay=False, path_type=Path),
    help="Write each sampled qrels as fqrels_{f:.2f}.txt into this folder.",
)
def incomplete_judgments_command(
    qrels: Path,
    runs: tuple[str, ...],
    measures: tuple[str, ...],
    fmt: str,
    out: Path | None,
    fractions: str,
    seed: int,
    alpha: float,
    write_qrels: Path | None,
    **options: Any,
) -> None:
    """Rankings and Wilcoxon decisions under f-qrels vs the full judgments (Bompada et al.)."""
    from ..errors import InputFormatError
    from ..io.writers import write_qrels as write_trec_qrels
    from ..workflow.meta import incomplete_judgments
    from ..workflow.runs import load_runs

    if len(runs) < 2:
        raise InputFormatError(f"meta-evaluation needs at least two runs, got {len(runs)}")
    with progress_bar(options["progress"]) as bar:
        res = incomplete_judgments(
            load_runs(runs, encoding=options.get("encoding"), progress=bar),
            read_judgments_file(qrels, options),
            list(measures) or list(_DEFAULT_MEASURES),
            fractions=_fractions(fractions),
            seed=seed,
            scoring=run_scoring(options),
            alpha=alpha,
            progress=bar,
        )
    _emit(res.summary, fmt)
    if write_qrels is not None:
        from ..workflow.outputs import staged_outputs

        ctx = click.get_current_context()
        force = bool(ctx.meta.get("sessionval_force", False))
        with staged_outputs(
            write_qrels,
            command="meta",
            force=force,
            inputs=_inputs(ctx),
            remove_stale=False,
            label="--write-qrels",
        ) as staged:
            for f, sub in res.qrels.items():
                write_trec_qrels(sub, staged.root / f"fqrels_{f:.2f}.txt")
    ax = None
    if out is not None:
        from ..output.meta_plots import plot_tau_vs_fraction

        ax = plot_tau_vs_fraction(res.summary)
    _write(out, "incomplete_judgments", {"summary": res.summary}, ax)


@command.command("sensitivity")
@click.argument("logs", type=click.Path(exists=True, path_type=Path))
@click.argument("specs", nargs=-1)
@click.option(
    "--qrels",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Reference judgments (TREC qrels or CSV).",
)
@click.option(
    "--grid",
    multiple=True,
    help="name=v1,v2,... (repeatable; also accepted as further arguments). Default: "
    "b=2,4,10 bq=1.5,4,10 cutoff=5,10,20.",
)
@click.option(
    "--measure",
    default="nsdcg",
    show_default=True,
    help="Per-session score that ranks systems and sessions.",
)
@input_format_options
@_format_option
@_out_option
@progress_option
def sensitivity_command(
    logs: Path,
    specs: tuple[str, ...],
    qrels: Path | None,
    grid: tuple[str, ...],
    measure: str,
    fmt: str,
    out: Path | None,
    progress: bool | None,
    **input_options: Any,
) -> None:
    """Kendall's tau of the system and session rankings under each parameter setting."""
    from ..evaluation.config import SessionConfig
    from ..evaluation.gain_fit import fit_gains
    from ..io.formats import load_input
    from ..workflow.meta import DEFAULT_GRID, parameter_grid, parameter_sensitivity

    given = [*grid, *specs]
    values = parameter_grid(given) if given else {k: list(v) for k, v in DEFAULT_GRID.items()}
    with progress_bar(progress) as bar:
        loaded = load_input(logs, qrels=qrels, progress=bar, **load_input_kwargs(input_options))
        table = parameter_sensitivity(loaded, values, measure=measure, progress=bar)
    _emit(table, fmt)
    _, notes = fit_gains(
        SessionConfig(), loaded.judgments, loaded.frame, user_scale=loaded.study.user_grade_scale
    )
    for note in notes:  # the default's gains, fitted to the data as run and evaluate fit them
        click.echo(f"note: {note}", err=True)
    ax = None
    if out is not None:
        from ..output.meta_plots import plot_sensitivity_heatmap

        ax = plot_sensitivity_heatmap(table)
    _write(out, "sensitivity", {"summary": table}, ax)


@command.command("topic-set-size")
@_runs_command
@click.option(
    "--min-diff",
    default="0.02,0.05,0.1",
    show_default=True,
    help="Differences to detect (comma-separated); for --method ci the largest CI width.",
)
@click.option(
    "--method",
    type=click.Choice(["paired-t", "anova", "ci"]),
    default="paired-t",
    show_default=True,
    help="Power of a paired t test, of a one-way ANOVA over the runs, or a CI width cap.",
)
@click.option(
    "--alpha",
    type=click.FloatRange(0, 1, min_open=True, max_open=True),
    default=0.05,
    show_default=True,
)
@click.option(
    "--power",
    "power_target",
    type=click.FloatRange(0, 1, min_open=True, max_open=True),
    default=0.8,
    show_default=True,
)
def topic_set_size_command(
    qrels: Path,
    runs: tuple[str, ...],
    measures: tuple[str, ...],
    fmt: str,
    out: Path | None,
    min_diff: str,
    method: str,
    alpha: float,
    power_target: float,
    **options: Any,
) -> None:
    """How many topics a test collection needs (Sakai's topic set size design)."""
    from ..analysis.planning import topic_set_table

    with progress_bar(options["progress"]) as bar:
        scores = _scores(qrels, runs, measures, options, bar)
    table = topic_set_table(
        scores,
        _fractions(min_diff, allow_above_one=True),
        alpha=alpha,
        power_target=power_target,
        method=method,  # type: ignore[arg-type]
    )
    _emit(table, fmt)
    _write(out, "topic_set_size", {"summary": table}, None)

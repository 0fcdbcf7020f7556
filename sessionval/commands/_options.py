"""Click options shared by several commands (one definition, one help text).

The input options (``--from`` and every format's own options) are generated from
the format registry :data:`sessionval.io.formats.FORMATS`, so a new format's
options reach ``validate``, ``convert`` and ``run`` without touching them.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from ..errors import ParseError
from ..io.formats import (
    ENCODING_OPTION,
    FORMATS,
    QRELS_MAP_OPTION,
    FormatOption,
    detect_format,
    format_options,
)
from ..io.partitioned import PARTITIONED, has_glob, partition_files

if TYPE_CHECKING:
    from ..evaluation.engine import ItemMapper

__all__ = [
    "encoding_option",
    "engine_options",
    "format_option",
    "input_format_options",
    "keeps_partitions",
    "load_input_kwargs",
    "logs_argument",
    "open_engine",
    "partition_mapper",
    "progress_option",
    "qrels_map_option",
    "qrels_option",
    "read_judgments_file",
    "read_paths",
    "run_scoring",
    "run_scoring_options",
    "statistics_options",
    "stdout_is_terminal",
    "strictness_option",
]

F = TypeVar("F", bound=Callable[..., Any])

#: The one ``--format`` vocabulary of the commands that print tables: value -> what it prints.
#: Each command accepts the ones that make sense for its output (:func:`format_option`).
OUTPUT_FORMATS: dict[str, str] = {
    "table": "an aligned table to read (the default on a terminal)",
    "tsv": "tab-separated, a header line and one line per row",
    "jsonl": "one JSON object per line",
    "markdown": "a Markdown table",
    "latex": "a LaTeX table (booktabs)",
}
#: Older spellings still accepted: alias -> value of :data:`OUTPUT_FORMATS`.
FORMAT_ALIASES: dict[str, str] = {"text": "table"}


def stdout_is_terminal() -> bool:
    """Whether standard output is a terminal (the human table) or a pipe or file (machine)."""
    isatty = getattr(sys.stdout, "isatty", None)
    return bool(callable(isatty) and isatty())


class _FormatChoice(click.Choice):  # type: ignore[type-arg]
    """A value of :data:`OUTPUT_FORMATS` that the command accepts; aliases mapped first."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str):
            value = FORMAT_ALIASES.get(value.lower(), value.lower())
        return super().convert(value, param, ctx)


def format_option(*allowed: str, piped: str = "tsv", note: str = "") -> Callable[[F], F]:
    """``--format`` with the values of :data:`OUTPUT_FORMATS` the command accepts.

    Not given, it is ``table`` when standard output is a terminal
    (:func:`stdout_is_terminal`) and ``piped`` otherwise, so a pipe or a file gets the
    machine format and a person the aligned table.  A value the command does not
    accept is a usage error that lists the allowed ones.  ``note`` ends the help.
    """
    unknown = [f for f in (*allowed, piped) if f not in OUTPUT_FORMATS]
    if unknown:
        raise ValueError(f"unknown output formats {unknown}")

    def choose(ctx: click.Context, param: click.Parameter, value: str | None) -> str:
        if value is not None:
            return value
        return "table" if stdout_is_terminal() else piped

    text = "; ".join(f"{f}: {OUTPUT_FORMATS[f]}" for f in allowed)
    default = (
        "table" if piped == "table" else f"table on a terminal, {piped} when piped or redirected"
    )
    return click.option(
        "--format",
        "fmt",
        type=_FormatChoice(list(allowed)),
        default=None,
        callback=choose,
        help=f"{text}. Default: {default}.{' ' + note if note else ''}",
    )


#: Help of --progress/--no-progress, the same in every command with long phases.
PROGRESS_HELP = (
    "Progress on stderr: each long phase with its rows, sessions or pairs done and the "
    "time left (default: only when stderr is a terminal)."
)


def progress_option(command: F) -> F:
    """``--progress/--no-progress`` (``progress``: ``True``, ``False``, or ``None`` when not given).

    ``None`` draws the bars only when stderr is a terminal
    (:func:`sessionval.progress.progress_bar`).
    """
    return click.option("--progress/--no-progress", "progress", default=None, help=PROGRESS_HELP)(
        command
    )


#: Help of --lenient/--strict, the same in every command that validates input.
STRICTNESS_HELP = (
    "--strict: fail on any problem of the input, listing the problems (the default); "
    "--lenient: reject the bad records, report them and go on with the rest. "
    "run: the default is [run] lenient of the configuration file, when set."
)


def strictness_option(command: F) -> F:
    """``--lenient/--strict`` (``lenient``: ``True``, ``False``, or ``None`` when not given).

    ``None`` means strict, except where ``run``'s configuration file says lenient.
    """
    return click.option("--lenient/--strict", "lenient", default=None, help=STRICTNESS_HELP)(
        command
    )


class _LogsPath(click.Path):
    """An existing file or folder, or a glob pattern matching at least one file."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and has_glob(value) and not Path(value).exists():
            try:
                partition_files(value)
            except ParseError as exc:
                self.fail(str(exc), param, ctx)
            return Path(value)
        return super().convert(value, param, ctx)


#: LOGS: a study folder (sessions.jsonl/.parquet/.csv and study.json), one session file, an
#: input of another format (--from), or a folder or glob of Parquet partitions
logs_argument = click.argument("logs", type=_LogsPath(exists=True, path_type=Path))

#: --qrels: reference judgments, TREC qrels or CSV
qrels_option = click.option(
    "--qrels",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Reference judgments: TREC qrels or CSV (topic_id,doc_id,grade[,assessor]); "
    "for lab-tables the per-session qrels table (default: the folder's qrels).",
)


#: --encoding for the commands that read qrels and runs without an input format (evaluate,
#: compare, meta's run commands); the commands with input_format_options get it from there
encoding_option = click.option(
    ENCODING_OPTION.flag,
    ENCODING_OPTION.name,
    default=None,
    metavar="CODEC",
    help="Text encoding of the qrels and run files (default utf-8; a byte-order mark wins; "
    "gzip is read whatever the name).",
)


#: --qrels-map for the commands that read a QRELS argument (evaluate, compare, meta's run
#: commands); the commands with input_format_options get it from there for --qrels
qrels_map_option = click.option(
    QRELS_MAP_OPTION.flag,
    QRELS_MAP_OPTION.name,
    default=None,
    metavar="MAP",
    help=f"QRELS as CSV/TSV: {QRELS_MAP_OPTION.help}",
)


def read_judgments_file(qrels: str | Path, values: Mapping[str, Any]) -> Any:
    """The QRELS argument read (TREC qrels, or CSV/TSV through ``--qrels-map``).

    ``values`` are the command's click values (``encoding``, ``qrels_map``).
    """
    from ..io.trec import read_judgments

    return read_judgments(
        qrels, encoding=values.get("encoding"), columns=values.get("qrels_map") or None
    )


def _click_type(opt: FormatOption) -> Any:
    if opt.kind == "file":
        return click.Path(exists=True, dir_okay=False, path_type=Path)
    if opt.kind == "int":
        return click.IntRange(min=opt.low, max=opt.high)
    if opt.kind == "choice":
        return click.Choice(opt.choices)
    return str


def input_format_options(command: F) -> F:
    """Add ``--from FORMAT`` (default ``auto``) and every format's options to a command.

    Each option is declared once in :data:`~sessionval.io.formats.FORMATS`; its help
    names the formats that take it.  A format option the user does not give
    arrives as ``None`` (the reader's default then applies).  The command receives
    them as keyword arguments: collect them with ``**input_options`` and pass
    :func:`load_input_kwargs` of them to :func:`~sessionval.io.formats.load_input`.
    """
    for name, (opt, formats) in reversed(format_options().items()):
        if not opt.cli:
            continue
        command = click.option(
            opt.flag,
            name,
            type=_click_type(opt),
            default=None,
            help=f"{', '.join(formats)}: {opt.help}",
        )(command)
    return click.option(
        "--from",
        "fmt",
        type=click.Choice(["auto", *FORMATS]),
        default="auto",
        show_default=True,
        help="Input format (described in docs/formats.md); auto recognises it by its files.",
    )(command)


def load_input_kwargs(values: Mapping[str, Any]) -> dict[str, Any]:
    """The ``fmt`` and format options among a command's click values, for ``load_input``.

    Options not given (``None``) are left out; other keys of ``values`` are ignored.

    Examples
    --------
    >>> load_input_kwargs({"fmt": "cast", "depth": 5, "topics": None, "out": "x"})
    {'fmt': 'cast', 'depth': 5}
    """
    keys = {"fmt", *(name for name, (opt, _) in format_options().items() if opt.cli)}
    return {k: v for k, v in values.items() if k in keys and v is not None}


def read_paths(*paths: str | Path | None, options: Mapping[str, Any] | None = None) -> list[Path]:
    """Every file or folder a command reads: its path arguments and its format options' files.

    What :func:`~sessionval.workflow.overlap.refuse_overlap` keeps the outputs away from.

    Examples
    --------
    >>> read_paths("logs", None, Path("q.txt"), options={"topics": Path("t.xml"), "depth": 5})
    [PosixPath('logs'), PosixPath('q.txt'), PosixPath('t.xml')]
    """
    given = [*paths, *(v for v in (options or {}).values() if isinstance(v, Path))]
    return [Path(p) for p in given if p is not None]


def engine_options(command: F) -> F:
    """Add ``--engine local|dask``, ``--scheduler ADDRESS`` and ``--workers N`` to a command.

    The command receives ``engine``, ``scheduler`` and ``workers``; :func:`open_engine`
    turns them into an engine for the duration of the command.
    """
    command = click.option(
        "--workers",
        type=click.IntRange(min=1),
        default=None,
        help="--engine dask: start a local cluster of N worker processes (default 2).",
    )(command)
    command = click.option(
        "--scheduler",
        metavar="ADDRESS",
        default=None,
        help="--engine dask: the scheduler of a running cluster (tcp://host:8786).",
    )(command)
    return click.option(
        "--engine",
        type=click.Choice(["local", "dask"]),
        default="local",
        show_default=True,
        help="Where the work runs: this process, or a Dask cluster (partitions loaded and "
        'sessions scored on its workers; pip install "sessionval[dask]"; docs/scale-out.md).',
    )(command)


@contextmanager
def open_engine(engine: str, scheduler: str | None, workers: int | None) -> Iterator[Any]:
    """The engine the options ask for, open while the command runs (``None``: the local one).

    Yields a :class:`~sessionval.evaluation.dask_engine.DaskEngine` for ``dask``.

    Raises
    ------
    click.UsageError
        ``--scheduler`` or ``--workers`` without ``--engine dask``, or both given.
    """
    if engine != "dask":
        if scheduler is not None or workers is not None:
            raise click.UsageError("--scheduler and --workers need --engine dask")
        yield None
        return
    if scheduler is not None and workers is not None:
        raise click.UsageError("give --scheduler (a running cluster) or --workers, not both")
    from ..evaluation.dask_engine import dask_engine

    with dask_engine(scheduler=scheduler, workers=workers) as eng:
        yield eng


def partition_mapper(logs: Path, fmt: str, engine: ItemMapper | None) -> dict[str, Any]:
    """``{"mapper": engine.map_items}`` when ``logs`` is a partitioned input, else ``{}``.

    The partitions of a folder or glob of Parquet files are then loaded and
    validated where the engine runs; other inputs are read in this process.
    """
    if engine is None:
        return {}
    name = detect_format(logs) if fmt == "auto" else fmt
    return {"mapper": engine.map_items} if name == PARTITIONED else {}


def keeps_partitions(logs: Path, engine: ItemMapper | None, options: Mapping[str, Any]) -> bool:
    """Whether ``logs`` is a partitioned input that stays on the engine's workers.

    :func:`sessionval.evaluation.remote.keeps_partitions` for the format ``options``
    name (``fmt``, or recognised from ``logs``).
    """
    from ..evaluation import remote

    fmt = str(options.get("fmt", "auto"))
    return remote.keeps_partitions(detect_format(logs) if fmt == "auto" else fmt, engine, options)


def run_scoring_options(command: F) -> F:
    """Add the list options of the commands that score TREC runs (evaluate, compare, meta).

    ``-c``, ``--ties``, ``--empty``, ``--negative`` and ``--unjudged``, with the defaults
    of :data:`~sessionval.evaluation.lists.RUN_SCORING` (trec_eval's); collect them with
    :func:`run_scoring`.
    """
    from ..evaluation.lists import RUN_SCORING as d
    from ..measures.lists import TIE_BREAKS

    options = [
        click.option(
            "-c",
            "--complete",
            is_flag=True,
            default=d.complete,
            help="Judged topics a run lacks count as empty lists (trec_eval -c); "
            "default: left out.",
        ),
        click.option(
            "--ties",
            type=click.Choice(list(TIE_BREAKS)),
            default=d.ties,
            show_default=True,
            help="Order of tied scores within a list: doc id descending, as trec_eval, "
            "ir_measures and pytrec_eval (trec_eval); doc id ascending (doc_id); or file "
            "order (input).",
        ),
        click.option(
            "--empty",
            type=click.Choice(["zero", "nan"]),
            default=d.empty,
            show_default=True,
            help="Normalised measures on a judged topic without relevant documents: 0 and "
            "averaged, as trec_eval (zero), or NaN, left out of the mean (nan).",
        ),
        click.option(
            "--negative",
            type=click.Choice(["clip", "keep", "error"]),
            default=d.negative,
            show_default=True,
            help="Negative grades: as 0, through the gain function, or error.",
        ),
        click.option(
            "--unjudged",
            type=click.Choice(["zero", "condense", "error"]),
            default=d.unjudged,
            show_default=True,
            help="Unjudged documents: gain 0, removed from the list, or error.",
        ),
    ]
    for opt in reversed(options):
        command = opt(command)
    return command


def run_scoring(values: Mapping[str, Any]) -> Any:
    """The :class:`~sessionval.evaluation.lists.RunScoring` of the :func:`run_scoring_options`."""
    from ..evaluation.lists import RunScoring

    return RunScoring(
        ties=values["ties"],
        complete=bool(values["complete"]),
        empty=values["empty"],
        negative=values["negative"],
        unjudged=values["unjudged"],
    )


def statistics_options(command: F) -> F:
    """Add the test, correction and resampling options of ``compare`` and ``meta``."""
    from ..analysis.compare import EFFECT_SIZES
    from ..analysis.multiple import CORRECTIONS
    from ..analysis.paired import TESTS

    options = [
        click.option(
            "--test",
            type=click.Choice(TESTS),
            default="paired-t",
            show_default=True,
            help="Paired test of each pair (docs/statistics.md).",
        ),
        click.option(
            "--correction",
            type=click.Choice(CORRECTIONS),
            default="holm",
            show_default=True,
            help="Multiplicity correction over the pairs of each measure; tukey-hsd with "
            "paired-t (Tukey HSD, two-way ANOVA) or randomisation (randomised Tukey HSD).",
        ),
        click.option(
            "--seed", type=int, default=0, show_default=True, help="Seed of the resampling."
        ),
        click.option(
            "--resamples",
            type=click.IntRange(min=1),
            default=10_000,
            show_default=True,
            help="Resamples of the randomisation and bootstrap tests (B).",
        ),
        click.option(
            "--alpha",
            type=click.FloatRange(0, 1, min_open=True, max_open=True),
            default=0.05,
            show_default=True,
            help="Significance level.",
        ),
        click.option(
            "--confidence",
            type=click.FloatRange(0, 1, min_open=True, max_open=True),
            default=0.95,
            show_default=True,
            help="Level of the confidence intervals.",
        ),
        click.option(
            "--effect-size",
            type=click.Choice(EFFECT_SIZES),
            default="sakai",
            show_default=True,
            help="Effect size: Sakai's (d_z, or ES_E2 under Tukey HSD), Cohen's d_z or "
            "Hedges' g_z.",
        ),
    ]
    for opt in reversed(options):
        command = opt(command)
    return command

"""Click options shared by several commands (one definition, one help text).

The input options (``--from`` and every format's own options) are generated from
the format registry :data:`sessionval.io.formats.FORMATS`, so a new format's
options reach ``validate``, ``convert`` and ``run`` without touching them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import click

from ..io.formats import FORMATS, FormatOption, format_options

__all__ = [
    "input_format_options",
    "load_input_kwargs",
    "logs_argument",
    "qrels_option",
]

F = TypeVar("F", bound=Callable[..., Any])

#: LOGS: a study folder (sessions.jsonl/.parquet/.csv and study.json), one session file, or an
#: input of another format (--from)
logs_argument = click.argument("logs", type=click.Path(exists=True, path_type=Path))

#: --qrels: reference judgments, TREC qrels or CSV
qrels_option = click.option(
    "--qrels",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Reference judgments: TREC qrels or CSV (topic_id,doc_id,grade[,assessor]); "
    "for lab-tables the per-session qrels table (default: the folder's qrels).",
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

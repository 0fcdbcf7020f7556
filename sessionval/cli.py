"""Command-line interface: ``sessionval COMMAND ...``.

Each subcommand lives in its own module under :mod:`sessionval.commands` and
is imported only when it runs, so ``sessionval --help`` stays fast and a
missing optional extra only affects the command that needs it.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence

import click

__all__ = [
    "COMMANDS",
    "CommandFailed",
    "cli",
    "entry_point",
    "main",
]

#: subcommand name -> (module, one-line help). Each module defines ``command: click.Command``.
COMMANDS: dict[str, tuple[str, str]] = {
    "validate": (
        "sessionval.commands.validate",
        "Validate logs and judgments; print a study summary.",
    ),
    "schema": ("sessionval.commands.schema", "Write or check the JSON Schemas in schemas/."),
    "synth": ("sessionval.commands.synth", "Generate a synthetic study of any size."),
    "run": (
        "sessionval.commands.run",
        "Validate, evaluate; write tables, figures, exports, report.",
    ),
    "evaluate": (
        "sessionval.commands.evaluate",
        "Evaluate a TREC run against qrels (trec_eval style).",
    ),
    "measures": ("sessionval.commands.measures", "List the measures with formulas and references."),
    "compare": (
        "sessionval.commands.compare",
        "Compare TREC runs: paired tests, corrections, effect sizes, CIs, LaTeX.",
    ),
    "meta": (
        "sessionval.commands.meta",
        "Meta-evaluation: rank correlation, discriminative power, f-qrels, sensitivity.",
    ),
    "convert": (
        "sessionval.commands.convert",
        "Convert TREC Session XML, lab tables, runs, mapped tables to JSONL/Parquet.",
    ),
}


class _LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in COMMANDS:
            return None
        module = importlib.import_module(COMMANDS[cmd_name][0])
        command: click.Command = module.command
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, COMMANDS[name][1]) for name in sorted(COMMANDS)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="sessionval")
def cli() -> None:
    """Session-based evaluation of interactive search (sDCG and the cumulated-gain family)."""


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI with ``argv`` (default: ``sys.argv[1:]``) and return the exit code.

    Exit codes: 0 success, 1 the input has problems (validation failed), 2 usage
    error (bad options, unreadable file).
    """
    from .errors import SessionvalError, ValidationFailed

    args = list(sys.argv[1:] if argv is None else argv)
    try:
        cli.main(args=args, prog_name="sessionval", standalone_mode=False)
    except click.exceptions.Exit as exc:
        return int(exc.exit_code)
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        return 130
    except ValidationFailed as exc:
        click.echo(f"error: {exc}", err=True)
        return 1
    except SessionvalError as exc:
        click.echo(f"error: {exc}", err=True)
        return 2
    except CommandFailed as exc:
        return exc.code
    return 0


class CommandFailed(Exception):
    """Raised by a command that already reported its failure and wants exit ``code``."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


def entry_point() -> None:
    """Console-script entry point."""
    sys.exit(main())

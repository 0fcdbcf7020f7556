"""Command-line interface: ``sessionval COMMAND ...``.

Each subcommand lives in its own module under :mod:`sessionval.commands` and
is imported only when it runs, so ``sessionval --help`` stays fast and a
missing optional extra only affects the command that needs it.
"""

from __future__ import annotations

import importlib
import os
import sys
import traceback
from collections.abc import Sequence
from typing import Final

import click

__all__ = [
    "COMMANDS",
    "EXIT_INTERNAL",
    "EXIT_INVALID",
    "EXIT_MEMORY",
    "EXIT_OK",
    "EXIT_PIPE",
    "EXIT_USAGE",
    "CommandFailed",
    "cli",
    "entry_point",
    "main",
]

#: Exit codes (docs/reliability.md, "Exit codes and outputs").
EXIT_OK: Final = 0
#: The input has problems (strict validation failed); they are listed.
EXIT_INVALID: Final = 1
#: Bad input or usage: every located error (file, line, field, value, what is allowed).
EXIT_USAGE: Final = 2
#: Out of memory: one line naming the phase and its row count.
EXIT_MEMORY: Final = 3
#: An unexpected exception: a bug in sessionval (EX_SOFTWARE of sysexits.h).
EXIT_INTERNAL: Final = 70
#: Ctrl-C (128 + SIGINT).
EXIT_INTERRUPTED: Final = 130
#: The reader of the output went away (``| head``): 128 + SIGPIPE, silently.
EXIT_PIPE: Final = 141

#: Environment variable that shows the traceback of an internal error, like ``--debug``.
DEBUG_ENV: Final = "SESSIONVAL_DEBUG"

_REPORT: Final = (
    "this is a bug in sessionval: please report it to the sessionval developers' issue "
    "tracker with the command, `sessionval --version` and the traceback (rerun with "
    f"--debug or {DEBUG_ENV}=1 to see it)"
)

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
@click.option(
    "--debug",
    is_flag=True,
    default=False,
    help=f"Show the full traceback of an internal error (also {DEBUG_ENV}=1); "
    "may be given anywhere on the line.",
)
def cli(debug: bool) -> None:
    """Session-based evaluation of interactive search (sDCG and the cumulated-gain family).

    Exit codes: 0 success, 1 validation failed, 2 bad input or usage, 3 out of
    memory, 70 internal error (a bug: please report it), 130 interrupted.
    """


def _take_debug(args: list[str]) -> tuple[list[str], bool]:
    """``args`` without ``--debug`` (anywhere before ``--``), and whether it was there."""
    end = args.index("--") if "--" in args else len(args)
    kept = [a for a in args[:end] if a != "--debug"] + args[end:]
    return kept, len(kept) != len(args)


def _command_of(args: Sequence[str]) -> str:
    """``"sessionval CMD: "`` for the subcommand in ``args`` (``""`` when there is none)."""
    # the group has only flags (--debug, --version): its first other argument is the command
    name = next((a for a in args if not a.startswith("-")), None)
    return f"sessionval {name}: " if name in COMMANDS else ""


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI with ``argv`` (default: ``sys.argv[1:]``) and return the exit code.

    Exit codes: 0 success, 1 the input has problems (validation failed), 2 bad
    input or usage (every located error: bad options, unreadable or malformed
    file, a file the system refuses to read or write), 3 out of memory (one line
    naming the phase and its row count), 70 an unexpected exception (one line; the
    traceback with ``--debug`` or ``SESSIONVAL_DEBUG=1``), 130 interrupted (Ctrl-C),
    141 the reader of the output went away (``| head``).
    """
    from .errors import OutOfMemory, SessionvalError, ValidationFailed, memory_advice

    args, debug = _take_debug(list(sys.argv[1:] if argv is None else argv))
    debug = debug or os.environ.get(DEBUG_ENV, "").strip() not in ("", "0")
    try:
        cli.main(args=args, prog_name="sessionval", standalone_mode=False)
    except click.exceptions.Exit as exc:
        return int(exc.exit_code)
    except SystemExit as exc:
        # click ends a write to a closed pipe (``| head``) with exit(1) after wrapping
        # stdout; 1 means "validation failed" here, so say 141 like a shell would
        if type(sys.stdout).__name__ == "_PacifyFlushWrapper":
            return EXIT_PIPE
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
    except (click.exceptions.Abort, KeyboardInterrupt):
        click.echo("aborted", err=True)
        return EXIT_INTERRUPTED
    except ValidationFailed as exc:
        click.echo(f"error: {exc}", err=True)
        return EXIT_INVALID
    except SessionvalError as exc:
        click.echo(f"error: {exc}", err=True)
        return EXIT_USAGE
    except CommandFailed as exc:
        return exc.code
    except OSError as exc:
        # the system refused a file (permissions, disk full, a folder gone): not a bug
        where = f"{exc.filename}: " if exc.filename is not None else ""
        click.echo(f"error: {where}{exc.strerror or exc}", err=True)
        return EXIT_USAGE
    except MemoryError as exc:
        if debug:
            traceback.print_exc()
        # the phase that failed says what would help it; elsewhere only the general advice
        what = str(exc) if isinstance(exc, OutOfMemory) else "out of memory"
        advice = exc.advice if isinstance(exc, OutOfMemory) and exc.advice else memory_advice()
        click.echo(f"error: {_command_of(args)}{what}; {advice}", err=True)
        return EXIT_MEMORY
    except Exception as exc:  # the last resort: one line, not a traceback
        if debug:
            traceback.print_exc()
        message = " ".join(str(exc).split()) or "(no message)"
        click.echo(f"internal error: {type(exc).__name__}: {message}", err=True)
        click.echo(_REPORT, err=True)
        return EXIT_INTERNAL
    return EXIT_OK


class CommandFailed(Exception):
    """Raised by a command that already reported its failure and wants exit ``code``."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


def entry_point() -> None:
    """Console-script entry point."""
    sys.exit(main())

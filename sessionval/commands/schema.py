"""``sessionval schema [--check] [--dir schemas]``: write or check the JSON Schemas."""

from __future__ import annotations

from pathlib import Path

import click

from ..cli import CommandFailed
from ..schema import check_schemas, write_schemas

__all__ = [
    "command",
]


@click.command("schema")
@click.option(
    "--dir",
    "directory",
    default="schemas",
    show_default=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder of the schema files.",
)
@click.option("--check", is_flag=True, help="Do not write; exit 1 if the files are stale.")
def command(directory: Path, check: bool) -> None:
    """Generate the JSON Schemas of the models into schemas/ (or check they are current)."""
    if check:
        stale = check_schemas(directory)
        if stale:
            click.echo(
                f"stale schema file(s) in {directory}: {', '.join(stale)}; "
                "run `sessionval schema` and commit the result",
                err=True,
            )
            raise CommandFailed(1)
        click.echo(f"schemas in {directory} are current")
        return
    for path in write_schemas(directory):
        click.echo(f"wrote {path}")

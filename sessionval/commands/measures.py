"""``sessionval measures``: list the registered measures with formulas and references."""

from __future__ import annotations

import json

import click

from ._options import format_option

__all__ = [
    "command",
]


@click.command("measures")
@format_option(
    "table", "markdown", "jsonl", piped="table", note="markdown is docs/measures.md; text is table."
)
def command(fmt: str) -> None:
    """List every measure: name, parameters with defaults, formula, reference."""
    from ..measures.registry import describe_measures, measures_markdown

    if fmt == "markdown":
        click.echo(measures_markdown())
        return
    rows = describe_measures()
    if fmt == "jsonl":
        click.echo("\n".join(json.dumps(r, ensure_ascii=False) for r in rows))
        return
    out: list[str] = []
    for r in rows:
        out.append(f"{r['name']}  —  {r['pretty']}: {r['description']}")
        out.append(f"    formula:    {r['formula']}")
        if r["params"]:
            for p in r["params"].split(" | "):
                out.append(f"    param:      {p}")
        if r["aliases"]:
            out.append(f"    aliases:    {r['aliases']}")
        out.append(f"    reference:  {r['reference']}")
    click.echo("\n".join(out))

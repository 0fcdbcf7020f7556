"""``sessionval synth``: generate a synthetic study of any size (see :mod:`sessionval.synth`)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import cast

import click

__all__ = [
    "command",
]


@click.command(name="synth")
@click.option(
    "--sessions",
    "n_sessions",
    type=click.IntRange(min=1),
    default=120,
    show_default=True,
    help="Number of sessions (120 = the design of Järvelin et al. 2008 exactly).",
)
@click.option(
    "--seed", type=click.IntRange(min=0), default=2008, show_default=True, help="Seed of the study."
)
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    required=True,
    help="Folder to write study.json, qrels.txt, judgments.csv and the sessions to.",
)
@click.option(
    "--format",
    "formats",
    type=click.Choice(["jsonl", "parquet", "both"]),
    default="both",
    show_default=True,
    help="Write sessions.jsonl, sessions.parquet or both.",
)
@click.option(
    "--progress/--no-progress",
    default=None,
    help="Show a progress bar on stderr (default: for large studies on a terminal).",
)
def command(n_sessions: int, seed: int, out_dir: Path, formats: str, progress: bool | None) -> None:
    """Generate a synthetic session study (searchers, scenarios, systems, logs, judgments).

    The committed sample is reproduced by ``sessionval synth --sessions 120 --seed 2008
    --out sample_logs``.
    """
    from ..synth import OutputFormat, write_study

    if progress is None:
        progress = n_sessions > 50_000 and sys.stderr.isatty()
    summary = write_study(
        out_dir,
        n_sessions=n_sessions,
        seed=seed,
        formats=cast(OutputFormat, formats),
        progress=progress,
    )
    click.echo(
        f"wrote {summary.n_sessions:,} sessions, {summary.n_queries:,} queries, "
        f"{summary.n_results:,} results ({summary.n_rows:,} flat rows) "
        f"in {summary.seconds:.1f} s to {out_dir}"
    )
    for path in summary.files:
        click.echo(f"  {path.name:18s} {path.stat().st_size:>14,} bytes")

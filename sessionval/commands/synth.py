"""``sessionval synth``: generate a synthetic study of any size (see :mod:`sessionval.synth`).

``--systems K`` makes the systems ``S1``…``SK`` of graded, known quality (``SK`` the
best); ``--runs`` writes a test collection instead of a session study: ``qrels.txt``,
``runs/<name>.run`` for ``K`` systems over ``--topics`` topics, and ``systems.tsv``
with each system's true quality (:mod:`sessionval.synth.runs`).  Both are meant for
trying the meta-evaluation (``sessionval meta``) on systems whose order is known.
``--design``, ``--crossed``, ``--sessions-per-searcher`` and ``--system-effect`` set the
assignment of a session study (:class:`sessionval.synth.Assignment`), e.g. a null
between-searchers study: ``--design between --system-effect 0``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, cast

import click

from ..errors import phase
from ..workflow.outputs import staged_outputs

if TYPE_CHECKING:
    from ..synth.assignment import StudyDesign

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
    "--systems",
    "n_systems",
    type=click.IntRange(min=2),
    default=2,
    show_default=True,
    help="Systems of graded, known quality (2: the paper's two systems).",
)
@click.option(
    "--design",
    type=click.Choice(["within", "between", "by_topic"]),
    default="within",
    show_default=True,
    help="Who uses which system: within (each searcher every system; a Latin square), "
    "between (each searcher one system) or by_topic (one searcher per system).",
)
@click.option(
    "--crossed",
    is_flag=True,
    help="With --design within: each searcher searches every scenario with every system "
    "(default: each scenario once, a Latin square).",
)
@click.option(
    "--sessions-per-searcher",
    type=click.IntRange(min=1),
    default=None,
    help="Sessions of each searcher (default 4, the scenarios; 4 × systems with --crossed).",
)
@click.option(
    "--system-effect",
    type=click.FloatRange(0.0, 1.0),
    default=1.0,
    show_default=True,
    help="How much better each system is: 1 the paper's S2 over S1, 0 equal systems "
    "(a null study); scales the systems' strengths (docs/statistics.md, calibration).",
)
@click.option(
    "--runs",
    is_flag=True,
    help="Write a test collection (qrels, one TREC run per system, systems.tsv) instead "
    "of a session study.",
)
@click.option(
    "--topics",
    "n_topics",
    type=click.IntRange(min=1),
    default=50,
    show_default=True,
    help="With --runs: number of topics.",
)
@click.option(
    "--progress/--no-progress",
    default=None,
    help="Show a progress bar on stderr (default: for large studies on a terminal).",
)
@click.option(
    "--force",
    is_flag=True,
    default=False,
    help="Overwrite files in --out that no earlier synth wrote.",
)
def command(
    n_sessions: int,
    seed: int,
    out_dir: Path,
    formats: str,
    n_systems: int,
    design: str,
    crossed: bool,
    sessions_per_searcher: int | None,
    system_effect: float,
    runs: bool,
    n_topics: int,
    progress: bool | None,
    force: bool,
) -> None:
    """Generate a synthetic session study (searchers, scenarios, systems, logs, judgments).

    The committed sample is reproduced by 'sessionval synth --sessions 120 --seed 2008
    --out sample_logs'.
    """
    # written into a staging folder and renamed into place when complete (docs/reliability.md)
    if runs:
        from ..synth.runs import write_runs

        with staged_outputs(out_dir, command="synth", force=force) as staged:
            files = write_runs(staged.root, n_systems=n_systems, n_topics=n_topics, seed=seed)
        click.echo(f"wrote {n_systems} runs over {n_topics} topics to {out_dir}")
        for path in files:
            click.echo(f"  {path.relative_to(staged.root)}")
        return

    from ..synth import Assignment, OutputFormat, write_study

    assignment = Assignment(
        design=cast("StudyDesign", design),
        topics="crossed" if crossed else "nested",
        sessions_per_searcher=sessions_per_searcher,
        system_effect=system_effect,
    )

    if progress is None:
        progress = n_sessions > 50_000 and sys.stderr.isatty()
    with (
        staged_outputs(out_dir, command="synth", force=force) as staged,
        phase("generating", n_sessions, "sessions"),
    ):
        summary = write_study(
            staged.root,
            n_sessions=n_sessions,
            seed=seed,
            formats=cast(OutputFormat, formats),
            progress=progress,
            n_systems=n_systems,
            assignment=assignment,
        )
    click.echo(
        f"wrote {summary.n_sessions:,} sessions, {summary.n_queries:,} queries, "
        f"{summary.n_results:,} results ({summary.n_rows:,} flat rows) "
        f"in {summary.seconds:.1f} s to {out_dir}"
    )
    for path in summary.files:
        final = out_dir / path.relative_to(staged.root)
        click.echo(f"  {final.name:18s} {final.stat().st_size:>14,} bytes")

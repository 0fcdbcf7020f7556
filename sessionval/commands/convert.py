"""``sessionval convert INPUT [--from FORMAT] --out OUT --to {jsonl,parquet,csv}``.

Reads any supported input (:data:`sessionval.io.formats.FORMATS`: the toolkit's
JSON-lines or flat tables, a flat table through a column mapping, TREC Session
Track XML, per-session lab tables, TREC runs over ``topic_turn`` ids) and writes
it in the toolkit's JSON-lines (a folder with ``sessions.jsonl``, ``study.json``
and ``qrels.txt``) or as one flat Parquet/CSV table (with a ``qrels_id`` column
and a ``.qrels`` file beside it).  The study header read (name, description,
grade scales, users, topics, systems, qrels key) is kept by every output: in
``study.json``, a Parquet file's metadata or a CSV table's ``<stem>.study.json``.
Parquet may be written top ranks first (``--top-first X``) and as a folder of
files of whole sessions (``--partition-rows N``; :func:`sessionval.io.writers.write_partitions`).

The files are written under temporary names and renamed when complete
(:func:`sessionval.workflow.outputs.staged_outputs`): an interrupted or failed
convert leaves ``OUT`` as it was, an ``OUT`` that is, holds or lies inside an input
(the study folder, the qrels, ...) is refused even with ``--force``, in both forms
(:func:`sessionval.workflow.overlap.refuse_overlap`), and a folder that no earlier
``convert`` wrote is not overwritten without ``--force``.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, Literal, cast

import click

from ..errors import phase
from ..io.formats import load_input
from ..progress import progress_bar
from ..workflow.outputs import staged_file, staged_outputs
from ..workflow.overlap import refuse_overlap
from ._options import (
    input_format_options,
    load_input_kwargs,
    progress_option,
    qrels_option,
    read_paths,
    strictness_option,
)

__all__ = [
    "command",
]

#: lines of repairs and rejections echoed (the rest are counted)
_SHOWN = 20


@click.command("convert")
@click.argument("input_path", metavar="INPUT", type=click.Path(exists=True, path_type=Path))
@input_format_options
@click.option(
    "--out",
    "out",
    required=True,
    type=click.Path(path_type=Path),
    help="Output folder (--to jsonl, --partition-rows) or file named .parquet/.csv "
    "(--to parquet/csv).",
)
@click.option(
    "--to",
    "to",
    default="jsonl",
    show_default=True,
    type=click.Choice(["jsonl", "parquet", "csv"]),
    help="Output format.",
)
@click.option(
    "--partition-rows",
    "partition_rows",
    type=click.IntRange(min=1),
    default=None,
    metavar="N",
    help="--to parquet: write --out as a folder of Parquet files of whole sessions, "
    "about N result rows each (part-00000.parquet, ..., study.json, qrels.txt).",
)
@click.option(
    "--top-first",
    "top_first",
    type=click.IntRange(min=1),
    default=None,
    metavar="X",
    help="--to parquet: write the rows of rank <= X first, in row groups of their own, "
    "so a top-X read (run, evaluate) skips the deeper rows.",
)
@qrels_option
@strictness_option
@click.option(
    "--force",
    is_flag=True,
    default=False,
    help="Overwrite files in the --out folder that no earlier convert wrote (inputs never).",
)
@progress_option
def command(
    input_path: Path,
    out: Path,
    to: str,
    partition_rows: int | None,
    top_first: int | None,
    qrels: Path | None,
    lenient: bool | None,
    force: bool,
    progress: bool | None,
    **input_options: Any,
) -> None:
    """Convert INPUT to the toolkit's JSON-lines (folder) or a flat Parquet/CSV table."""
    # the bars last as long as the command (closed when click tears its context down)
    bar = click.get_current_context().with_resource(progress_bar(progress))
    from ..errors import InputFormatError
    from ..io.writers import (
        flat_outputs,
        jsonl_outputs,
        write_flat,
        write_jsonl,
        write_partitions,
    )

    for name, value in (("--partition-rows", partition_rows), ("--top-first", top_first)):
        if value is not None and to != "parquet":
            raise click.UsageError(f"{name} writes Parquet: use it with --to parquet, not {to}")
    if to != "jsonl" and partition_rows is None and out.suffix.lower() != f".{to}":
        # the readers choose a table's format by its suffix: any other name would not read back
        raise click.UsageError(
            f"--out {out}: --to {to} writes one file; name it with the .{to} suffix "
            f"(for example {out.with_suffix(f'.{to}').name}) so that it reads back"
        )
    # refused before the (maybe long) read; the files beside a named one are checked when staged
    refuse_overlap([out], read_paths(input_path, qrels, options=input_options))
    with phase(f"loading and validating {input_path}"):
        loaded = load_input(
            input_path,
            qrels=qrels,
            mode="lenient" if lenient else "strict",
            progress=bar,
            **load_input_kwargs(input_options),
        )
    frame, judgments, report = loaded.frame, loaded.judgments, loaded.report
    click.echo(f"{report.summary_line()}; {frame.n_queries} queries, {frame.n_results} results")
    for p in loaded.notes[:_SHOWN]:
        click.echo(f"  repaired: {p}", err=True)
    if len(loaded.notes) > _SHOWN:
        click.echo(f"  ... and {len(loaded.notes) - _SHOWN} more repairs", err=True)
    for p in report.problems[:_SHOWN]:
        click.echo(f"  rejected: {p}", err=True)
    if len(report.problems) > _SHOWN:
        click.echo(f"  ... and {len(report.problems) - _SHOWN} more rejections", err=True)
    if frame.n_sessions == 0:
        # nothing valid to write is a problem of the input (exit 2); no file is created
        raise InputFormatError(
            f"{input_path}: no session to convert"
            + (" (every session was rejected)" if report.problems else "")
            + f"; nothing written to {out}"
        )
    folder = to == "jsonl" or partition_rows is not None
    planned = jsonl_outputs(out, judgments) if folder else flat_outputs(out, judgments)
    if judgments is not None and planned[-1] is not None and planned[-1].suffix == ".csv":
        click.echo(
            f"note: an id contains whitespace, which TREC qrels cannot carry: "
            f"the judgments are written as CSV ({planned[-1].name})",
            err=True,
        )
    inputs = read_paths(input_path, qrels, options=input_options)
    # staged, then renamed into place: never an input, never outside --out
    writing = phase(f"writing {out} from", frame.n_results, "result rows")
    if to == "jsonl":
        with (
            staged_outputs(out, command="convert", force=force, inputs=inputs) as staged,
            writing,
        ):
            written = write_jsonl(
                frame, staged.root, judgments=judgments, header=loaded.study, progress=bar
            )
        root, final = staged.root, out
    elif partition_rows is not None:
        with (
            staged_outputs(out, command="convert", force=force, inputs=inputs) as staged,
            writing,
        ):
            written = write_partitions(
                frame,
                staged.root,
                partition_rows=partition_rows,
                top_first=top_first,
                judgments=judgments,
                header=loaded.study,
                progress=bar,
            )
        root, final = staged.root, out
    else:
        with staged_file(out, inputs=inputs, beside=planned[1:]) as target, writing:
            written = write_flat(
                frame,
                target,
                to=cast('Literal["parquet", "csv"]', to),
                judgments=judgments,
                header=loaded.study,
                top_first=top_first,
                progress=bar,
            )
        root, final = target.parent, out.parent
    # the paths the writer returned, where the files now are
    moved: dict[str, Any] = {
        k: final / v.relative_to(root)
        for k, v in dataclasses.asdict(written).items()
        if isinstance(v, Path)
    }
    written = dataclasses.replace(written, **moved)
    click.echo(
        f"wrote {written.sessions}"
        + (f", {written.study}" if written.study else "")
        + (f", {written.qrels}" if written.qrels else "")
    )
    key = loaded.qrels_key
    if key != "topic":
        where = "each query's qrels_id" if to == "jsonl" else "the qrels_id column"
        click.echo(f"judgments are keyed per {key.replace('_id', '')}: the keys are in {where}")

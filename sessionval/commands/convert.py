"""``sessionval convert INPUT --from FORMAT --out OUT --to {jsonl,parquet,csv}``.

Reads any supported input (the toolkit's JSON-lines or flat tables, a flat table
through a column mapping, TREC Session Track XML, per-session lab tables, TREC runs
over ``topic_turn`` ids) and writes it in the toolkit's JSON-lines (a folder with
``sessions.jsonl``, ``study.json`` and ``qrels.txt``) or as one flat Parquet/CSV
table (with a ``qrels_id`` column and a ``.qrels`` file beside it).
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal, cast

import click

from ..errors import InputFormatError
from ..frame import JudgmentFrame, SessionFrame
from ..problems import LoadReport, Mode, Problem

__all__ = [
    "FORMATS",
    "InputFormat",
    "command",
    "load_input",
]

InputFormat = Literal["jsonl", "flat", "trec-session", "lab-tables", "cast"]
FORMATS: tuple[str, ...] = ("jsonl", "flat", "trec-session", "lab-tables", "cast")


def _find(folder: Path, stem: str) -> Path:
    for name in (stem, f"{stem}.tsv", f"{stem}.txt", f"{stem}.csv"):
        if (folder / name).exists():
            return folder / name
    raise InputFormatError(
        f"{folder}: no {stem!r} table (looked for {stem}, {stem}.tsv, {stem}.txt)"
    )


def load_input(
    path: Path,
    *,
    fmt: InputFormat,
    qrels: Path | None = None,
    topic_map: Path | None = None,
    topics: Path | None = None,
    mapping: str | None = None,
    year: int | None = None,
    depth: int | None = 10,
    text: Literal["raw", "manual", "automatic"] = "raw",
    mode: Mode = "strict",
) -> tuple[SessionFrame, JudgmentFrame | None, LoadReport, list[Problem], str]:
    """Load ``path`` in format ``fmt``; returns frame, judgments, report, repairs, qrels key.

    The qrels key (``"topic"``, ``"session"`` or ``"query_id"``) says which id the
    judgments are keyed by, i.e. how to restore ``qrels_id`` after a JSON-lines round trip.
    """
    if fmt in ("jsonl", "flat") and mapping is None:
        from ..io.study import load_study

        loaded = load_study(path, qrels=qrels, mode=mode)
        return loaded.frame, loaded.judgments, loaded.report, [], "topic"
    if fmt == "flat":
        from ..io.mapping import load_mapped_table
        from ..io.study import load_judgments

        m = load_mapped_table(path, mapping or "", mode=mode)
        j = load_judgments(qrels) if qrels is not None else None
        return m.frame, j, m.report, [], "topic"
    if fmt == "trec-session":
        from ..io.trec_session import load_trec_session

        t = load_trec_session(path, qrels=qrels, topic_map=topic_map, year=year, mode=mode)
        return t.frame, t.judgments, t.report, list(t.repairs), "topic"
    if fmt == "lab-tables":
        from ..io.lab_tables import load_lab_tables

        folder = path if path.is_dir() else path.parent
        session = path if path.is_file() else _find(folder, "session")
        q = qrels or (
            _find(folder, "qrels")
            if any((folder / n).exists() for n in ("qrels", "qrels.tsv", "qrels.txt"))
            else None
        )
        lab = load_lab_tables(session, _find(folder, "results"), q, mode=mode)
        return lab.frame, lab.judgments, lab.report, list(lab.notes), "session"
    if fmt == "cast":
        from ..io.cast import load_runs_as_sessions

        runs = sorted(path.glob("*.run")) if path.is_dir() else [path]
        if not runs:
            raise InputFormatError(f"{path}: no *.run file in the folder")
        r = load_runs_as_sessions(
            runs, qrels=qrels, topics=topics, depth=depth, text=text, mode=mode
        )
        return r.frame, r.judgments, r.report, list(r.notes), "query_id"
    raise InputFormatError(f"unknown input format {fmt!r} (allowed: {', '.join(FORMATS)})")


@click.command("convert")
@click.argument("input_path", metavar="INPUT", type=click.Path(exists=True, path_type=Path))
@click.option(
    "--from",
    "fmt",
    required=True,
    type=click.Choice(FORMATS),
    help="Input format: jsonl / flat (toolkit formats), trec-session (Session Track "
    "XML), lab-tables (folder with session, results, qrels), cast (run file(s)).",
)
@click.option(
    "--out",
    "out",
    required=True,
    type=click.Path(path_type=Path),
    help="Output folder (--to jsonl) or file (--to parquet/csv).",
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
    "--qrels",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Judgments (TREC qrels; for lab-tables the per-session qrels table).",
)
@click.option(
    "--topic-map",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="trec-session: sessiontopicmap.txt.",
)
@click.option(
    "--year",
    type=click.IntRange(2011, 2014),
    help="trec-session: track year (default: from the root tag).",
)
@click.option(
    "--topics",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="cast: topics JSON (turn texts and order).",
)
@click.option(
    "--text",
    type=click.Choice(["raw", "manual", "automatic"]),
    default="raw",
    show_default=True,
    help="cast: utterance used as query text.",
)
@click.option(
    "--depth",
    type=click.IntRange(min=1),
    default=10,
    show_default=True,
    help="cast: documents kept per turn.",
)
@click.option(
    "--map", "mapping", help="flat: column mapping, e.g. session=SessionID,query_pos=Qno,doc=URL."
)
@click.option(
    "--lenient", is_flag=True, help="Repair or reject bad records and go on (default: strict)."
)
def command(
    input_path: Path,
    fmt: str,
    out: Path,
    to: str,
    qrels: Path | None,
    topic_map: Path | None,
    year: int | None,
    topics: Path | None,
    text: str,
    depth: int,
    mapping: str | None,
    lenient: bool,
) -> None:
    """Convert INPUT to the toolkit's JSON-lines (folder) or a flat Parquet/CSV table."""
    from ..io.writers import write_flat, write_jsonl

    frame, judgments, report, repairs, key = load_input(
        input_path,
        fmt=cast("InputFormat", fmt),
        qrels=qrels,
        topic_map=topic_map,
        topics=topics,
        mapping=mapping,
        year=year,
        depth=depth,
        text=cast('Literal["raw", "manual", "automatic"]', text),
        mode="lenient" if lenient else "strict",
    )
    if to == "jsonl":
        written = write_jsonl(frame, out, judgments=judgments, name=input_path.stem)
    else:
        written = write_flat(
            frame, out, to=cast('Literal["parquet", "csv"]', to), judgments=judgments
        )
    click.echo(f"{report.summary_line()}; {frame.n_queries} queries, {frame.n_results} results")
    click.echo(
        f"wrote {written.sessions}"
        + (f", {written.study}" if written.study else "")
        + (f", {written.qrels}" if written.qrels else "")
    )
    if key != "topic":
        where = "each query's qrels_id" if to == "jsonl" else "the qrels_id column"
        click.echo(f"judgments are keyed per {key.replace('_id', '')}: the keys are in {where}")
    for p in repairs[:20]:
        click.echo(f"  repaired: {p}", err=True)
    if len(repairs) > 20:
        click.echo(f"  ... and {len(repairs) - 20} more repairs", err=True)
    for p in report.problems[:20]:
        click.echo(f"  rejected: {p}", err=True)

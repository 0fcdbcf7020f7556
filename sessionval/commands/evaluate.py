"""``sessionval evaluate QRELS RUN -m MEASURE ...``: trec_eval-style single-query evaluation."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import TYPE_CHECKING, cast

import click

from ._options import engine_options, open_engine

if TYPE_CHECKING:
    from ..judgments.gains import NegativePolicy
    from ..judgments.unjudged import UnjudgedPolicy
    from ..measures.lists import EmptyPolicy, TieBreak

__all__ = [
    "DEFAULT_MEASURES",
    "command",
]

DEFAULT_MEASURES: tuple[str, ...] = ("AP", "nDCG", "nDCG@10", "P@10", "RR", "Bpref")


def _fmt(v: float) -> str:
    return "NaN" if math.isnan(v) else f"{v:.4f}"


@click.command("evaluate")
@click.argument("qrels", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.argument("run", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "-m",
    "--measure",
    "measures",
    multiple=True,
    help="Measure in the grammar Name(param=value)@k, repeatable "
    f"(default: {' '.join(DEFAULT_MEASURES)}). See `sessionval measures`.",
)
@click.option("-q", "--per-query", is_flag=True, help="Print one row per query before the means.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["tsv", "jsonl"]),
    default="tsv",
    show_default=True,
    help="tsv: measure<TAB>query<TAB>value (trec_eval); jsonl.",
)
@click.option(
    "-c",
    "--complete",
    is_flag=True,
    help="Judged topics the run lacks count as empty lists (trec_eval -c); default: left out.",
)
@click.option(
    "--ties",
    type=click.Choice(["doc_id", "trec_eval", "input"]),
    default="doc_id",
    show_default=True,
    help="Order within a list: score descending, then doc id ascending (doc_id), "
    "doc id descending as trec_eval (trec_eval), or file order (input).",
)
@click.option(
    "--empty",
    type=click.Choice(["nan", "zero"]),
    default="nan",
    show_default=True,
    help="Normalised measures on a topic without relevant documents: NaN (left out "
    "of the mean and counted) or 0 (trec_eval).",
)
@click.option(
    "--negative",
    type=click.Choice(["clip", "keep", "error"]),
    default="clip",
    show_default=True,
    help="Negative grades: as 0, through the gain function, or error.",
)
@click.option(
    "--unjudged",
    type=click.Choice(["zero", "condense", "error"]),
    default="zero",
    show_default=True,
    help="Unjudged documents: gain 0, removed from the list, or error.",
)
@engine_options
def command(
    qrels: Path,
    run: Path,
    measures: tuple[str, ...],
    per_query: bool,
    fmt: str,
    complete: bool,
    ties: str,
    empty: str,
    negative: str,
    unjudged: str,
    engine: str,
    scheduler: str | None,
    workers: int | None,
) -> None:
    """Evaluate a TREC RUN against QRELS (trec_eval / ir_measures style).

    Prints per-query rows (with -q) and the mean of every measure over the queries
    with a defined value (query id "all"); diagnostics go to stderr. With --engine
    dask the measures are computed on the cluster's workers, one task each.
    """
    from ..evaluation.lists import evaluate_lists
    from ..io.trec import read_qrels, read_run
    from ..measures.lists import RankedLists
    from ..measures.registry import parse_measures

    ms = parse_measures(list(measures) or list(DEFAULT_MEASURES))
    judgments = read_qrels(qrels)
    table = read_run(run)
    lists = RankedLists.from_run(
        table,
        judgments,
        ties=cast("TieBreak", ties),
        missing="empty" if complete else "skip",
        negative=cast("NegativePolicy", negative),
        unjudged=cast("UnjudgedPolicy", unjudged),
    )
    with open_engine(engine, scheduler, workers) as eng:
        ev = evaluate_lists(lists, ms, empty=cast("EmptyPolicy", empty), mapper=eng)
    rows: list[tuple[str, str, float]] = []
    if per_query:
        pq = ev.per_query
        rows += list(zip(pq["measure"], pq["query_id"], pq["value"].astype(float), strict=True))
    summ = ev.summary()
    rows += [(m, "all", float(v)) for m, v in zip(summ["measure"], summ["value"], strict=True)]
    if fmt == "tsv":
        click.echo("\n".join(f"{m}\t{q}\t{_fmt(v)}" for m, q, v in rows))
    else:
        click.echo(
            "\n".join(
                json.dumps({"query_id": q, "measure": m, "value": None if math.isnan(v) else v})
                for m, q, v in rows
            )
        )
    notes = [f"{ev.n_queries} queries evaluated"]
    if ev.n_skipped:
        notes.append(f"{ev.n_skipped} run queries without judgments skipped")
    if ev.n_empty_recall_base:
        notes.append(
            f"{ev.n_empty_recall_base} queries with an empty recall base "
            f"({'NaN, left out of means' if empty == 'nan' else 'scored 0'})"
        )
    if ev.n_negative:
        notes.append(f"{ev.n_negative} retrieved documents with a negative grade ({negative})")
    if ev.n_unjudged:
        notes.append(f"{ev.n_unjudged} retrieved documents unjudged ({unjudged})")
    click.echo("; ".join(notes), err=True)

"""``sessionval evaluate QRELS RUN -m MEASURE ...``: trec_eval-style single-query evaluation."""

from __future__ import annotations

import json
import math
from dataclasses import asdict
from pathlib import Path
from typing import Any

import click

from ..errors import memory_advice, phase
from ._options import (
    encoding_option,
    engine_options,
    format_option,
    open_engine,
    qrels_map_option,
    read_judgments_file,
    run_scoring,
    run_scoring_options,
)

__all__ = [
    "DEFAULT_MEASURES",
    "command",
]

#: the measures printed when none is named (those of ``evaluate_run``)
DEFAULT_MEASURES: tuple[str, ...] = ("AP", "nDCG", "nDCG@10", "P@10", "RR", "Bpref")


def _fmt(v: float) -> str:
    return "NaN" if math.isnan(v) else f"{v:.4f}"


def _wide_text(rows: list[tuple[str, str, float]], fmt: str) -> str:
    """The (measure, query, value) rows as queries x measures, "all" last (table, markdown)."""
    import pandas as pd

    from ..output.terminal import table_text

    long = pd.DataFrame(rows, columns=["measure", "query", "value"])
    wide = long.pivot_table(
        index="query", columns="measure", values="value", sort=False, dropna=False
    )
    wide = wide[list(dict.fromkeys(long["measure"]))].reset_index()
    wide.columns.name = None
    return table_text(wide, fmt)


@click.command("evaluate")
@click.argument("qrels", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.argument("run", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "-m",
    "--measure",
    "measures",
    multiple=True,
    help="Measure in the grammar Name(param=value)@k, or trec_eval's name (map, "
    "ndcg_cut.10, P_10, recip_rank), repeatable "
    f"(default: {' '.join(DEFAULT_MEASURES)}). See 'sessionval measures'.",
)
@click.option("-q", "--per-query", is_flag=True, help="Print one row per query before the means.")
@format_option("table", "tsv", "jsonl", "markdown")
@run_scoring_options
@engine_options
@encoding_option
@qrels_map_option
def command(
    qrels: Path,
    run: Path,
    measures: tuple[str, ...],
    per_query: bool,
    fmt: str,
    engine: str,
    scheduler: str | None,
    workers: int | None,
    encoding: str | None,
    qrels_map: str | None,
    **options: Any,
) -> None:
    """Evaluate a TREC RUN against QRELS (trec_eval / ir_measures style).

    The defaults are trec_eval's, so the numbers are trec_eval's: score ties broken
    by doc id descending, topics without relevant documents scored 0, run topics
    without judgments skipped. Measure names may be trec_eval's (map, ndcg_cut.10,
    P_10, recip_rank) or ir_measures' (nDCG@10, AP, RR). Prints per-query rows (with
    -q) and the mean of every measure (query id "all"): on a terminal as a table of
    queries x measures, piped (or --format tsv) as trec_eval's lines measure<TAB>query<TAB>value;
    diagnostics go to stderr. With
    --engine dask the measures are computed on the cluster's workers, one task each.
    """
    from ..evaluation.lists import evaluate_run

    scoring = run_scoring(options)

    # the reads are phases of their own (evaluate_run): this one is the evaluation
    many = len(measures) != 1
    advice = memory_advice("fewer measures at once (-m)") if many else memory_advice()
    with (
        open_engine(engine, scheduler, workers) as eng,
        phase(f"evaluating {run} against {qrels}", advice=advice),
    ):
        ev = evaluate_run(
            run,
            # a mapped CSV is read here; a file otherwise by evaluate_run (its own reader)
            read_judgments_file(qrels, {"encoding": encoding, "qrels_map": qrels_map})
            if qrels_map
            else qrels,
            list(measures) or list(DEFAULT_MEASURES),
            **asdict(scoring),
            mapper=eng,
            encoding=encoding,
        )
    rows: list[tuple[str, str, float]] = []
    if per_query:
        pq = ev.per_query
        rows += list(zip(pq["measure"], pq["query_id"], pq["value"].astype(float), strict=True))
    summ = ev.summary()
    rows += [(m, "all", float(v)) for m, v in zip(summ["measure"], summ["value"], strict=True)]
    if fmt in ("table", "markdown"):
        click.echo(_wide_text(rows, fmt))
    elif fmt == "tsv":
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
            + (
                "(NaN, left out of the means)"
                if scoring.empty == "nan"
                else "(scored 0, as trec_eval; --empty nan leaves them out of the means)"
            )
        )
    if ev.n_negative:
        notes.append(
            f"{ev.n_negative} retrieved documents with a negative grade ({scoring.negative})"
        )
    if ev.n_unjudged:
        notes.append(f"{ev.n_unjudged} retrieved documents unjudged ({scoring.unjudged})")
    click.echo("; ".join(notes), err=True)
    for note in ev.notes:  # the Unicode policy of ids (docs/formats.md)
        click.echo(f"note: {note}", err=True)

"""``sessionval evaluate QRELS RUN -m MEASURE ...``: trec_eval-style single-query evaluation."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ..errors import memory_advice, phase
from ..progress import progress_bar
from ._options import (
    encoding_option,
    engine_options,
    format_option,
    open_engine,
    progress_option,
    qrels_map_option,
    read_judgments_file,
    run_scoring,
    run_scoring_options,
)

if TYPE_CHECKING:
    from ..evaluation.lists import SingleEvaluation
    from ..measures.names import Named

__all__ = [
    "DEFAULT_MEASURES",
    "command",
]

#: the measures printed when none is named (those of ``evaluate_run``)
DEFAULT_MEASURES: tuple[str, ...] = ("AP", "nDCG", "nDCG@10", "P@10", "RR", "Bpref")


def _fmt(v: float) -> str:
    return "NaN" if math.isnan(v) else f"{v:.4f}"


def _at_level(named: list[Named], level: int | None) -> list[Named]:
    """The measures with ``rel=level`` where they take ``rel`` and do not give it (``-l``)."""
    if level is None:
        return named
    out = []
    for n in named:
        m = n.measure
        if (
            m is not None
            and "rel" not in m.given()
            and any(p.name == "rel" for p in m.definition.params)
        ):
            n = replace(n, measure=m(rel=level))
        out.append(n)
    return out


def _rows(
    ev: SingleEvaluation, named: list[Named], per_query: bool
) -> list[tuple[Named, str, float]]:
    """(measure, query, value) rows: each query's (with ``-q``), then ``all``.

    trec_eval prints ``runid`` and ``num_q`` for ``all`` only.
    """
    by_repr: dict[str, list[Named]] = {}
    for n in named:
        if n.measure is not None:
            by_repr.setdefault(repr(n.measure), []).append(n)
    rows: list[tuple[Named, str, float]] = []
    if per_query:
        pq = ev.long()
        for q, m, v in zip(pq["query_id"], pq["measure"], pq["value"].astype(float), strict=True):
            rows += [(n, q, v) for n in by_repr[m] if not (n.trec_eval and n.label == "num_q")]
    summary = ev.summary()
    summ = dict(zip(summary["measure"], summary["value"].astype(float), strict=True))
    rows += [(n, "all", summ[repr(n.measure)] if n.measure else math.nan) for n in named]
    return rows


@contextmanager
def _per_query_folder(out: Path | None, force: bool, inputs: list[Path]) -> Iterator[Path | None]:
    """The staging folder of ``--per-query-out`` (``None``: not asked), moved in on success.

    The files go through the commands' staging (a manifest of what evaluate wrote, the
    previous run's parts replaced, never an input): the workers write into the staging
    folder, inside ``out``.
    """
    if out is None:
        yield None
        return
    from ..workflow.outputs import staged_outputs
    from ..workflow.overlap import refuse_overlap

    refuse_overlap([out], inputs, label="--per-query-out")
    with staged_outputs(
        out, command="evaluate", force=force, inputs=inputs, label="--per-query-out"
    ) as staged:
        yield staged.root


def _trec_eval_line(n: Named, query: str, value: float, tag: str) -> str:
    r"""One line as trec_eval prints it: ``%-22s\\t%s\\t%6.4f`` (counts as integers)."""
    if n.measure is None:
        text = tag
    elif n.measure.definition.aggregate == "sum":
        text = str(round(value))
    else:
        text = "nan" if math.isnan(value) else f"{value:6.4f}"
    return f"{n.label:<22}\t{query}\t{text}"


def _wide_text(rows: list[tuple[Named, str, float]], fmt: str) -> str:
    """The (measure, query, value) rows as queries x measures, "all" last (table, markdown)."""
    import pandas as pd

    from ..output.terminal import table_text

    long = pd.DataFrame(
        [(n.label, q, v) for n, q, v in rows if n.measure is not None],
        columns=["measure", "query", "value"],
    )
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
    help="Measure in the grammar Name(param=value)@k, ir_measures' or ranx's name, or "
    "trec_eval's (map, ndcg_cut.10, P.5,10, P: its default cut-offs, all_trec), printed "
    "under trec_eval's name; repeatable "
    f"(default: {' '.join(DEFAULT_MEASURES)}). See `sessionval measures`.",
)
@click.option("-q", "--per-query", is_flag=True, help="Print one row per query before the means.")
@click.option(
    "-l",
    "--level",
    type=click.IntRange(min=1),
    default=None,
    help="Relevance level: a grade >= LEVEL is relevant, for every measure with a rel "
    "parameter that does not give it (trec_eval -l; default: each measure's rel, 1).",
)
@format_option(
    "table",
    "tsv",
    "jsonl",
    "markdown",
    note="tsv is measure<TAB>query<TAB>value, in trec_eval's layout when every measure "
    "is named as trec_eval names it.",
)
@click.option(
    "--per-query-out",
    "per_query_out",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Also write the per-query values as Parquet files into this folder (query_id, "
    "one column per measure): part-00000.parquet, or with --engine dask one file per "
    "part of the run, written by the workers (the folder must be reachable by them).",
)
@click.option(
    "--force",
    is_flag=True,
    default=False,
    help="Overwrite files in --per-query-out that no earlier evaluate wrote (inputs never).",
)
@run_scoring_options
@engine_options
@encoding_option
@qrels_map_option
@progress_option
def command(
    qrels: Path,
    run: Path,
    measures: tuple[str, ...],
    per_query: bool,
    level: int | None,
    fmt: str,
    engine: str,
    scheduler: str | None,
    workers: int | None,
    encoding: str | None,
    qrels_map: str | None,
    progress: bool | None,
    per_query_out: Path | None,
    force: bool,
    **options: Any,
) -> None:
    """Evaluate a TREC RUN against QRELS (trec_eval / ir_measures style).

    The defaults are trec_eval's, so the numbers are trec_eval's: score ties broken
    by doc id descending, topics without relevant documents scored 0, run topics
    without judgments skipped. Measure names may be trec_eval's (map, ndcg_cut.10,
    P_10, recip_rank; P, all_trec: the lists trec_eval prints) or ir_measures' and
    ranx's (nDCG@10, AP, RR, SetP, hit_rate@5). Prints per-query rows (with -q) and
    each measure over the queries (query id "all": the mean; counts summed, gm_map
    geometric): on a terminal as a table of queries x measures; piped (or --format
    tsv) as lines measure<TAB>query<TAB>value, under trec_eval's names and in its
    layout when every measure is named as trec_eval names it. Diagnostics go to
    stderr. With --engine dask a run file of 256 MB or more (plain UTF-8, without
    -c) is read, checked and scored on the cluster's workers in byte ranges (a run
    whose queries' lines are not together is shuffled by query first); only the
    sums and counts of the means (and with -q the per-query values) come back. A
    smaller run is read here and its measures computed on the workers, one task each.
    """
    from ..evaluation.distributed_runs import evaluate_run_on
    from ..io.trec import run_tag
    from ..measures.registry import named_measures

    scoring = run_scoring(options)
    named = _at_level(named_measures(list(measures) or list(DEFAULT_MEASURES)), level)
    wanted = [n.measure for n in named if n.measure is not None]

    # the reads are phases of their own (evaluate_run): this one is the evaluation
    many = len(measures) != 1
    advice = memory_advice("fewer measures at once (-m)") if many else memory_advice()
    with (
        _per_query_folder(per_query_out, force, [qrels, run]) as folder,
        open_engine(engine, scheduler, workers) as eng,
        phase(f"evaluating {run} against {qrels}", advice=advice),
        progress_bar(progress) as bar,
    ):
        ev = evaluate_run_on(
            eng,
            run,
            # a mapped CSV is read here; a file otherwise by evaluate_run (its own reader)
            read_judgments_file(qrels, {"encoding": encoding, "qrels_map": qrels_map})
            if qrels_map
            else qrels,
            wanted,
            scoring,
            per_query=per_query,  # values of a run read on the workers come back only for -q
            encoding=encoding,
            progress=bar,
            per_query_dir=folder,
        )
    rows = _rows(ev, named, per_query)
    trec_layout = fmt == "tsv" and all(n.trec_eval for n in named)
    tag = run_tag(run) if any(n.measure is None for n in named) else ""
    if fmt in ("table", "markdown"):
        click.echo(_wide_text(rows, fmt))
    elif trec_layout:
        click.echo("\n".join(_trec_eval_line(n, q, v, tag) for n, q, v in rows))
    elif fmt == "tsv":
        click.echo(
            "\n".join(f"{n.label}\t{q}\t{_fmt(v) if n.measure else tag}" for n, q, v in rows)
        )
    else:
        click.echo(
            "\n".join(
                json.dumps(
                    {"query_id": q, "measure": n.label, "value": None if math.isnan(v) else v}
                )
                for n, q, v in rows
                if n.measure is not None
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

r"""A TREC run scored on a Dask cluster in byte ranges: ``sessionval evaluate --engine dask``.

A run of a billion lines fits neither the client nor one worker.  Here the client
reads only the qrels; the run is cut into byte ranges of whole lines, each read on a
worker by Dask's own block reader (``fsspec.utils.read_block(..., delimiter=b"\n")``,
what ``dask.bytes.read_bytes`` reads with; :func:`read_range`), parsed and
checked on a worker by the same reader as the whole file
(:func:`~sessionval.io.trec.read_run_range`: a bad line names the file and its line).
A query's rows may lie in several ranges (a range ends at a line, not at a query).  In
a run grouped by query (each query's lines together, the usual layout) only the first
and last queries of a range can: each range is scored where it is read but for those two,
whose rows are scored together on the client (:func:`_grouped_ranges`).  Otherwise the
rows are shuffled by query id with Dask (``DataFrame.shuffle``) so that each partition
holds whole queries.  Either way a range or partition is scored against the qrels
(broadcast once) by the kernels of the local evaluation
(:func:`~sessionval.evaluation.lists.evaluate_table`).  Each partition returns the
sums and counts of its values per measure
(:func:`~sessionval.evaluation.protocol.summary_parts`) and its counts; the client
adds them and finishes the ``all`` rows as the measures declare
(:func:`~sessionval.evaluation.protocol.finish_summary`: means, ``gm_map``'s
geometric mean, ``num_*`` sums).  The per-query values travel to the client only
when they are printed (``-q``), then in trec_eval's query order.  The notes of the
Unicode policy of ids (:func:`~sessionval.validate.ids.spelling_notes`) are each
partition's, each note once: spellings of a document that differ only by Unicode
normalisation are noted when they meet in one partition.

:func:`evaluate_run_on` is the one choice between this road and the local one
(:func:`~sessionval.evaluation.lists.evaluate_run`, the measures mapped over the
engine), by the run's size (:data:`RANGES_FROM_BYTES`) and kind.
"""

from __future__ import annotations

import importlib
import logging
import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Final

import numpy as np
import numpy.typing as npt
import pandas as pd

from ..errors import MeasureSpecError, ParseError, SessionvalError, writing
from ..io.text import splittable
from ..io.trec import read_run_range
from ..io.whitespace_table import PIECE_BYTES
from ..measures.registry import Measure, parse_measures
from ..progress import ProgressLike, as_progress, counted
from ..validate.ranking import string_ranks
from .engine import ItemMapper
from .lists import (
    RUN_SCORING,
    QrelsInput,
    ReadQrels,
    RunInput,
    RunScoring,
    evaluate_run,
    evaluate_table,
    load_qrels,
    located_run_error,
)
from .protocol import add_summary_parts, summary_parts
from .single import SingleEvaluation

__all__ = [
    "BLOCK_BYTES",
    "RANGES_FROM_BYTES",
    "evaluate_run_on",
    "evaluate_run_ranges",
    "reads_in_ranges",
    "write_per_query",
]

#: bytes of run text per range read and parsed on a worker (about 1.8M lines of 35 bytes)
BLOCK_BYTES: Final = PIECE_BYTES
#: a run file at least this large is read in byte ranges on the workers; a smaller one by
#: the client, the measures mapped over the workers (faster there: docs/scale-out.md)
RANGES_FROM_BYTES: Final = 256 << 20

_COUNTS: Final = ("n_queries", "n_empty_recall_base", "n_negative", "n_unjudged", "n_skipped")


def reads_in_ranges(
    run: RunInput,
    engine: object,
    scoring: RunScoring = RUN_SCORING,
    encoding: str | None = None,
    from_bytes: int | None = None,
) -> bool:
    """Whether :func:`evaluate_run_on` reads ``run`` in byte ranges on the engine's workers.

    A plain UTF-8 run file (:func:`~sessionval.io.text.splittable`) of at least
    ``from_bytes`` bytes (default :data:`RANGES_FROM_BYTES`), on an engine with a
    Dask client, without ``complete`` (trec_eval's ``-c`` adds the judged topics no
    partition has: the local road).
    """
    if getattr(engine, "client", None) is None or scoring.complete:
        return False
    if not isinstance(run, str | os.PathLike):
        return False
    least = RANGES_FROM_BYTES if from_bytes is None else from_bytes
    path = Path(run)
    return path.is_file() and path.stat().st_size >= least and splittable(path, encoding)


def evaluate_run_on(
    engine: ItemMapper | None,
    run: RunInput,
    qrels: QrelsInput,
    measures: Sequence[str | Measure],
    scoring: RunScoring = RUN_SCORING,
    *,
    per_query: bool = True,
    encoding: str | None = None,
    progress: ProgressLike = None,
    from_bytes: int | None = None,
    block_bytes: int | None = None,
    per_query_dir: Path | None = None,
) -> SingleEvaluation:
    """``evaluate_run`` where ``engine`` runs: a large run in byte ranges on the workers.

    The one choice of the road (:func:`reads_in_ranges`): in byte ranges
    (:func:`evaluate_run_ranges`), or read here with the measures mapped over the
    engine (``mapper=``).  The output is the same either way.

    Parameters
    ----------
    engine
        ``None`` (here), or an engine (a
        :class:`~sessionval.evaluation.dask_engine.DaskEngine` reads large runs in ranges).
    run, qrels, measures, scoring, encoding, progress
        As :func:`~sessionval.evaluation.lists.evaluate_run`.
    per_query
        Whether the per-query values are wanted; without them, a run read in ranges
        gives only the summary (``long()`` empty, ``summary()`` combined).
    from_bytes, block_bytes
        The size from which a run is read in ranges, and the size of a range (default
        :data:`RANGES_FROM_BYTES`, :data:`BLOCK_BYTES`).
    per_query_dir
        A folder (existing, reachable by the workers) to write the per-query table into
        as Parquet (``sessionval evaluate --per-query-out``): ``part-00000.parquet``
        here; on the workers one ``part-NNNNN.parquet`` per range with a scored query
        and ``part-edges.parquet`` (a run grouped by query), or one
        ``part-sNNNNN.parquet`` per partition of the shuffle, each in trec_eval's query
        order.
    """
    if reads_in_ranges(run, engine, scoring, encoding, from_bytes):
        return evaluate_run_ranges(
            engine,
            Path(run),  # type: ignore[arg-type]
            qrels,
            measures,
            scoring,
            per_query=per_query,
            encoding=encoding,
            progress=progress,
            block_bytes=block_bytes,
            per_query_dir=per_query_dir,
        )
    ev = evaluate_run(
        run,
        qrels,
        measures,
        **asdict(scoring),
        mapper=engine,
        encoding=encoding,
        progress=progress,
    )
    if per_query_dir is not None and ev.n_queries:
        write_per_query(ev, per_query_dir / "part-00000.parquet")
    return ev


@dataclass(frozen=True)
class _Partial:
    """What a partition of whole queries sends back: sums and counts, values when asked."""

    parts: pd.DataFrame
    counts: dict[str, int]
    rows: int
    notes: tuple[str, ...] = ()
    long: pd.DataFrame | None = None


@dataclass(frozen=True)
class _How:
    """How each range or partition is scored, and what it keeps (sent with each task)."""

    ms: tuple[Measure, ...]
    scoring: RunScoring
    per_query: bool
    path: str
    block_bytes: int
    out: Path | None = None


def evaluate_run_ranges(
    engine: Any,
    run: Path,
    qrels: QrelsInput,
    measures: Sequence[str | Measure],
    scoring: RunScoring = RUN_SCORING,
    *,
    per_query: bool = True,
    encoding: str | None = None,
    progress: ProgressLike = None,
    block_bytes: int | None = None,
    per_query_dir: Path | None = None,
) -> SingleEvaluation:
    """Score a run file read in byte ranges on a Dask engine's workers (module docstring).

    Parameters
    ----------
    engine
        A :class:`~sessionval.evaluation.dask_engine.DaskEngine`.
    run
        A plain UTF-8 TREC run file (:func:`~sessionval.io.text.splittable`).
    qrels, measures, scoring, encoding, progress
        As :func:`~sessionval.evaluation.lists.evaluate_run`; the qrels are read here
        and sent to each worker once.
    per_query
        Gather the per-query values (``long()``, in trec_eval's query order);
        otherwise only each partition's sums and counts come back.
    block_bytes
        Bytes of the file per range, each parsed on a worker (default :data:`BLOCK_BYTES`).
    per_query_dir
        Where the workers write each partition's per-query table (:func:`evaluate_run_on`).

    Raises
    ------
    ParseError
        A line of the run that does not parse, located by file and line.
    InputFormatError, JudgmentError, MeasureSpecError
        As :func:`~sessionval.evaluation.lists.evaluate_run`.
    """
    import dask.dataframe as dd
    from dask.delayed import delayed

    if scoring.complete:
        raise MeasureSpecError(
            "complete=True (trec_eval -c) needs the whole run's topics: use evaluate_run"
        )
    ms = tuple(parse_measures(list(measures)))
    sessions = [repr(m) for m in ms if m.scope != "query"]
    if sessions:  # as evaluate_lists says it, before the run is read
        raise MeasureSpecError(
            f"{', '.join(sessions)}: session measure(s) need sessions; a run takes "
            "single-query measures"
        )
    block_bytes = int(BLOCK_BYTES if block_bytes is None else block_bytes)
    shown = as_progress(progress)
    judged = load_qrels(qrels, encoding, shown)
    n = len(range(0, max(run.stat().st_size, 1), block_bytes))  # the ranges
    shared = engine.broadcast(judged)
    how = _How(ms, scoring, per_query, str(run), block_bytes, per_query_dir)
    with counted(shown, f"scoring {run.name} in {n} ranges", n, "ranges") as bar:
        grouped = _grouped_ranges(engine, n, shared, judged, how, bar.advance)
    if grouped is not None:
        return _combined(grouped, ms, run, per_query)
    # a query's rows lie in several ranges: shuffled by query id, partitions of whole queries
    # (one task per range, read on a worker as Dask's read_bytes reads its blocks)
    ranges = [delayed(_range_table)(str(run), k, block_bytes) for k in range(n)]
    table = dd.from_delayed(ranges, meta=_range_table(str(run), -1, block_bytes), verify_meta=False)
    table = table.shuffle("query_id", npartitions=n)
    tasks = [
        delayed(_score_partition)(part, shared, how, f"s{i:05d}")
        for i, part in enumerate(table.to_delayed())
    ]
    with (
        counted(
            shown, f"scoring {run.name} in {len(tasks)} partitions", len(tasks), "partitions"
        ) as bar,
        _quiet_shuffle(),
    ):
        futures = engine.client.compute(tasks)
        partials: list[_Partial] = engine.collect(futures, lambda done, _: bar.advance())
    if per_query_dir is not None:
        # the parts of the ranges scored before the run was found not grouped: every task of
        # that pass has ended (the shuffle's tasks ran after them on the same workers)
        for stale in per_query_dir.glob("part-[0-9]*.parquet"):
            stale.unlink()
    return _combined(partials, ms, run, per_query)


@dataclass(frozen=True)
class _Range:
    """What a range of a run grouped by query sends back (``partial`` None: not grouped)."""

    partial: _Partial | None
    edges: pd.DataFrame | None = None
    inner: npt.NDArray[np.uint64] | None = None


def _score_range(k: int, judged: ReadQrels, how: _How, alone: bool) -> _Range:
    """On a worker: range ``k`` scored but its first and last queries, if its queries are grouped.

    Those two may continue in the neighbouring ranges: their rows (``edges``) go back
    to the client with the keys of the other queries (``inner``), by which it checks
    that no query lies in two ranges.  A query whose lines are apart in the range: the
    run is not grouped (``partial`` None).  The ``alone`` range of a run is scored whole.
    """
    table = _range_table(how.path, k, how.block_bytes)
    codes, ids = pd.factorize(table["query_id"])
    if alone:  # the whole run: nothing to check, no edge
        partial = _score_partition(table, judged, how, f"{k:05d}")
        return _Range(partial, table.iloc[:0], _id_keys(ids[:0]))
    if len(codes) and np.count_nonzero(codes[1:] != codes[:-1]) + 1 != len(ids):
        return _Range(None)
    edge = (codes == codes[0]) | (codes == codes[-1]) if len(codes) else codes.astype(bool)
    inner = np.setdiff1d(np.arange(len(ids)), codes[[0, -1]] if len(codes) else codes)
    partial = _score_partition(table[~edge], judged, how, f"{k:05d}")
    return _Range(partial, table[edge], _id_keys(ids[inner]))


def _id_keys(ids: Any) -> npt.NDArray[np.uint64]:
    """64-bit hashes of query ids (a collision only sends a run to the shuffle)."""
    keys: npt.NDArray[np.uint64] = pd.util.hash_array(np.asarray(ids, dtype=object))
    return keys


def _grouped_ranges(
    engine: Any,
    n: int,
    shared: Any,
    judged: ReadQrels,
    how: _How,
    advance: Callable[[], None],
) -> list[_Partial] | None:
    """The ranges scored where they are read, if the run is grouped by query; else ``None``.

    The usual layout of a run, each query's lines together, needs no shuffle: each
    range scores its inner queries (:func:`_score_range`), and the rows of the
    queries at the ranges' edges are scored together here.  The first range that
    finds a query's lines apart stops the others.
    """
    futures = [
        engine.client.submit(_score_range, k, shared, how, n == 1, pure=False) for k in range(n)
    ]
    at = {f.key: k for k, f in enumerate(futures)}
    got: list[_Range | None] = [None] * n
    arriving = importlib.import_module("distributed").as_completed(futures, with_results=True)
    for future, value in arriving:
        if value.partial is None:
            engine.client.cancel(futures)
            return None
        got[at[future.key]] = value
        advance()
    del futures, arriving
    ranges = [r for r in got if r is not None]
    inner = np.concatenate([r.inner for r in ranges if r.inner is not None])
    edges = pd.concat([r.edges for r in ranges if r.edges is not None], ignore_index=True)
    if len(np.unique(inner)) != len(inner) or np.isin(_id_keys(edges["query_id"]), inner).any():
        return None  # a query in two ranges, not at their edges
    partials = [r.partial for r in ranges if r.partial is not None]
    return [*partials, _score_partition(edges, judged, how, "edges")]


@contextmanager
def _quiet_shuffle() -> Iterator[None]:
    """The shuffle's scheduler notes (a warning as each starts and ends) not on the terminal."""
    log = logging.getLogger("distributed.shuffle._scheduler_plugin")
    level = log.level
    log.setLevel(logging.ERROR)
    try:
        yield
    finally:
        log.setLevel(level)


def read_range(path: str, k: int, block_bytes: int) -> bytes:
    r"""Range ``k`` of a file: the lines that start in bytes ``[k, k + 1) * block_bytes``.

    Read by ``fsspec.utils.read_block`` (what ``dask.bytes.read_bytes`` reads each
    block with, ``delimiter=b"\n"``): each range starts after the first line end at
    or after its offset, so every line is in exactly one range.
    """
    import importlib

    read_block = importlib.import_module("fsspec.utils").read_block  # untyped
    with Path(path).open("rb") as f:
        data: bytes = read_block(f, k * block_bytes, block_bytes, delimiter=b"\n")
    return data


def _range_table(path: str, k: int, block_bytes: int) -> pd.DataFrame:
    """On a worker: the rows of range ``k`` (-1: none), ids as Arrow strings, and where each was."""
    data = read_range(path, k, block_bytes) if k >= 0 else b""
    run, _ = read_run_range(data, path, k * block_bytes) if data else (None, None)
    if run is None:
        return pd.DataFrame(
            {
                "query_id": pd.Series([], dtype="string[pyarrow]"),
                "doc_id": pd.Series([], dtype="string[pyarrow]"),
                "score": pd.Series([], dtype=np.float64),
                "block": pd.Series([], dtype=np.int32),
                "row": pd.Series([], dtype=np.int32),
            }
        )
    n = len(run)
    return pd.DataFrame(
        {
            # the ids' text (a categorical's categories differ between ranges)
            "query_id": run["query_id"].astype("string[pyarrow]"),
            "doc_id": run["doc_id"].astype("string[pyarrow]"),
            "score": run["score"].to_numpy(),
            # the range and row of each line: its line is found again for a message
            "block": np.full(n, k, dtype=np.int32),
            "row": np.arange(n, dtype=np.int32),
        }
    )


def _score_partition(part: pd.DataFrame, judged: ReadQrels, how: _How, name: str) -> _Partial:
    """On a worker: one partition of whole queries scored by ``evaluate_run``'s kernels.

    With ``how.out``, its per-query table is written there as ``part-<name>.parquet``.
    """
    order = [repr(m) for m in how.ms]
    if len(part) == 0:
        empty = pd.DataFrame({"measure": order, "value": np.full(len(order), np.nan)})
        return _Partial(summary_parts(empty, order), dict.fromkeys(_COUNTS, 0), 0)
    part = part.reset_index(drop=True)
    table = part[["query_id", "doc_id", "score"]]

    def locate(exc: SessionvalError) -> SessionvalError:
        lines = partial_lines(how.path, how.block_bytes, part["block"], part["row"])
        return located_run_error(exc, Path(how.path), table, lines, judged.source)

    ev = evaluate_table(table, judged, how.ms, how.scoring, locate=locate)
    if how.out is not None and ev.n_queries:
        write_per_query(ev, Path(how.out) / f"part-{name}.parquet")
    counts = {k: v for k, v in ev.counts().items() if k in _COUNTS}
    return _Partial(
        summary_parts(ev.values, order),
        counts,
        len(part),
        ev.notes,
        ev.long() if how.per_query else None,
    )


def write_per_query(ev: SingleEvaluation, path: Path) -> None:
    """``ev.per_query()`` as Parquet (``--per-query-out``): ``query_id``, a column per measure."""
    with writing(path):
        ev.per_query().to_parquet(path, index=False)


def partial_lines(
    path: str, block_bytes: int, block: pd.Series, row: pd.Series
) -> Callable[[npt.NDArray[np.intp]], npt.NDArray[np.int64]]:
    """The file's line of rows of a partition, from the range and row each came from.

    Each range that holds an asked row is read and numbered again (error path).
    """

    def lines(rows: npt.NDArray[np.intp]) -> npt.NDArray[np.int64]:
        b = block.to_numpy()[rows]
        r = row.to_numpy()[rows]
        out = np.zeros(len(rows), dtype=np.int64)
        for k in np.unique(b):  # the few ranges of the repeated documents
            data = read_range(path, int(k), block_bytes)
            _, line_at = read_run_range(data, path, int(k) * block_bytes)
            at = b == k
            out[at] = line_at()[r[at]]
        return out

    return lines


def _combined(
    partials: list[_Partial], ms: tuple[Measure, ...], run: Path, per_query: bool
) -> SingleEvaluation:
    """The partitions' sums and counts added (and values in trec_eval's order, when asked)."""
    if not any(p.rows for p in partials):
        raise ParseError(f"{run}: file is empty (expected run lines)")
    order = [repr(m) for m in ms]
    parts = add_summary_parts([p.parts for p in partials], order)
    counts = {k: sum(p.counts[k] for p in partials) for k in _COUNTS}
    notes = tuple(dict.fromkeys(n for p in partials for n in p.notes))
    values = pd.DataFrame(
        {"query_id": pd.Series([], dtype=object), "measure": [], "value": []}
    ).astype({"value": np.float64})
    longs = [p.long for p in partials if p.long is not None]
    if per_query and longs:
        # a partition without a judged query has an empty table of plain objects: left out,
        # so the ids keep the dtype of the others (as the local table's)
        values = _in_query_order(
            pd.concat([t for t in longs if len(t)] or longs[:1], ignore_index=True)
        )
    return SingleEvaluation(
        values,
        ms,
        counts["n_queries"],
        counts["n_empty_recall_base"],
        counts["n_negative"],
        counts["n_unjudged"],
        counts["n_skipped"],
        notes,
        parts=None if per_query else parts,
    )


def _in_query_order(values: pd.DataFrame) -> pd.DataFrame:
    """The long table with its queries in byte order of their ids, as the local road orders them.

    Each query's rows keep their (measure) order: a stable sort on the query's rank.
    """
    codes, ids = pd.factorize(values["query_id"])
    ranks = string_ranks(pd.Index(ids))
    order = np.argsort(ranks[codes], kind="stable")
    return values.iloc[order].reset_index(drop=True)

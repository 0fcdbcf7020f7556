"""A partitioned study validated and scored on the workers of a Dask cluster.

:func:`load_remote` validates each partition file on a worker (the same loader
as :func:`~sessionval.io.partitioned.load_partitioned_study`) and keeps the
validated frame there.  The client gathers only the books, the problems and each
partition's sessions and queries (its result rows stay on the worker), and
combines them into the study's frame without results: a :class:`RemoteStudy`.

:func:`evaluate_remote` scores each partition on its worker with
:func:`~sessionval.evaluation.session.evaluate` (the same pure kernels, the
judgments broadcast once), keeps the evaluation there and gathers the per-query
and per-session arrays, which :func:`~sessionval.evaluation.remote_scores.assemble`
puts in the study's session order: the local engine's tables, bit for bit.
Per-position arrays, the kept result rows' gains (the figures) and the
per-position table are computed on the workers and gathered only when asked for.

:func:`score_remote` does both in one pass and keeps nothing on the workers:
each partition is scored as soon as it is validated and its rows are dropped, so
a worker's memory is bounded by the partitions it works on, not by the study.

The client's memory grows with the sessions and queries (their tables), not
with the result rows.  With the searchers' own grades (``judgments =
"searcher"``) the ideal session pools the grades of the whole study, so
:func:`evaluate_remote` gathers the frames and scores them as one study.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Final

import pandas as pd

from ..errors import SessionvalError
from ..frame import JudgmentFrame, LoadedStudy, SessionFrame
from ..io.partitioned import (
    PARTITIONED,
    PartitionLoad,
    PartitionSetup,
    combine_frames,
    combine_partitions,
    prepare_partitions,
    without_results,
)
from ..judgments.coverage import coverage_counts, sum_counts
from ..problems import Mode
from ..progress import as_progress, engine_ticks
from ..validate.references import attach_entities
from .config import SessionConfig
from .dask_engine import DaskEngine, apply_on_worker
from .gain_fit import fit_gains, warn_notes
from .remote_scores import PartScores, RemoteEvaluation, assemble, score_partition, scores_of
from .result import SessionEvaluation
from .session import evaluate

__all__ = [
    "REMOTE_OPTIONS",
    "RemoteEvaluation",
    "RemoteStudy",
    "evaluate_remote",
    "keeps_partitions",
    "load_remote",
    "score_partitions",
    "score_remote",
]


@dataclass(frozen=True)
class RemoteStudy(LoadedStudy):
    """A validated partitioned study whose result rows stay on the workers.

    ``frame`` holds the sessions and queries of every partition (in file order,
    as :func:`~sessionval.io.partitioned.load_partitioned_study` combines them)
    and no result rows (the results table keeps its columns and categories);
    ``parts`` are the futures of the partitions' frames on the workers, in file
    order (empty when they were not kept); ``part_sessions`` their numbers of
    sessions; ``n_results`` the result rows kept over all partitions; ``coverage``
    their judgment coverage counts added up
    (:func:`~sessionval.judgments.coverage.coverage_counts`, counted on the workers);
    ``shared_judgments`` the future of the judgments already on every worker.
    """

    engine: DaskEngine | None = field(default=None, compare=False, repr=False)
    parts: tuple[Any, ...] = field(default=(), compare=False, repr=False)
    part_sessions: tuple[int, ...] = ()
    n_results: int = 0
    coverage: pd.DataFrame = field(default_factory=pd.DataFrame, compare=False, repr=False)
    shared_judgments: Any = field(default=None, compare=False, repr=False)

    def _engine(self) -> DaskEngine:
        if self.engine is None:  # pragma: no cover - load_remote always sets it
            raise SessionvalError("a remote study needs its engine")
        return self.engine

    def kept_parts(self) -> tuple[Any, ...]:
        """The futures of the partitions' frames on the workers.

        Raises
        ------
        SessionvalError
            The partitions were not kept (``load_remote(..., keep=False)``, :func:`score_remote`).
        """
        if self.part_sessions and not self.parts:
            raise SessionvalError(
                "the partitions of this study were not kept on the workers "
                "(load_remote(..., keep=False) or score_remote); load it with keep=True"
            )
        return self.parts

    def map_parts(self, fn: Callable[..., Any], *args: Any) -> list[Any]:
        """``[fn(frame, *args) for frame in partitions]`` run on the workers, in file order."""
        return self._engine().map_futures(fn, self.kept_parts(), *args)

    def gathered(self) -> LoadedStudy:
        """The study with every result row, gathered on the client (what the local engine reads)."""
        frames = self.map_parts(_identity)
        frame = attach_entities(combine_frames(frames, source=self.frame.source), self.study)
        return LoadedStudy(
            study=self.study,
            frame=frame,
            judgments=self.judgments,
            report=self.report,
            notes=self.notes,
            qrels_key=self.qrels_key,
            unjudged=self.unjudged,
            details=self.details,
        )


def _identity(x: Any) -> Any:
    return x


def _frame_of(part: PartitionLoad) -> SessionFrame:
    if part.frame is None:  # pragma: no cover - failed partitions are raised before
        raise SessionvalError(f"{part.path}: the partition failed validation")
    return part.frame


REMOTE_OPTIONS: Final = frozenset(
    {
        "qrels", "header", "mode", "max_problems", "progress", "max_rank", "columns",
        "qrels_map", "partitions",
    }
)  # fmt: skip
"""The options :func:`load_remote` takes (any other is left to the partitioned reader's checks)."""


def keeps_partitions(fmt: str, engine: object, options: Collection[str]) -> bool:
    """Whether an input of format ``fmt`` stays on ``engine``'s workers (:func:`load_remote`).

    With a :class:`DaskEngine` and a folder or glob of Parquet partitions, each file
    is validated on a worker and stays there: the client receives the books, the
    problems and the sessions and queries, never the result rows.  ``options`` are
    the names of the load options (``fmt`` and the format's); one that
    :func:`load_remote` does not take leaves the input to the partitioned reader.
    """
    return (
        isinstance(engine, DaskEngine)
        and fmt == PARTITIONED
        and set(options) - {"fmt"} <= REMOTE_OPTIONS
    )


def load_remote(
    path: str | os.PathLike[str],
    engine: DaskEngine,
    *,
    qrels: str | os.PathLike[str] | None = None,
    header: str | os.PathLike[str] | None = None,
    mode: Mode = "strict",
    max_problems: int = 50,
    progress: Callable[[str], None] | None = None,
    max_rank: int | None = None,
    columns: Sequence[str] | None = None,
    keep: bool = True,
    qrels_map: str | Mapping[str, str] | None = None,
) -> RemoteStudy:
    """Validate the partitions of ``path`` on the workers and keep them there.

    Parameters are those of :func:`~sessionval.io.partitioned.load_partitioned_study`
    (a folder or glob of Parquet files partitioned by session), and ``keep``:
    ``False`` drops each partition's rows once its books are counted (what
    ``validate`` needs; such a study cannot be scored, :func:`score_remote` can).

    Raises
    ------
    ValidationFailed
        Strict mode and a problem in any partition (each problem names its file).
    InputFormatError
        A session split across files.
    """
    setup = prepare_partitions(
        path,
        qrels=qrels,
        header=header,
        mode=mode,
        max_problems=max_problems,
        max_rank=max_rank,
        columns=columns,
        qrels_map=qrels_map,
    )
    return _load(setup, engine, keep=keep, tick=progress or (lambda _msg: None))


def _load(
    setup: PartitionSetup, engine: DaskEngine, *, keep: bool, tick: Callable[[str], None]
) -> RemoteStudy:
    loads, judgments = _submit_loads(setup, engine, tick)
    # a file's books before the next file is read, fetched as they come: without ``keep``
    # its rows go as soon as they are counted
    light = engine.submit_items(_light, loads, judgments, priority=1)
    parts = tuple(engine.submit_items(_frame_of, loads)) if keep else ()
    del loads  # the frames stay on the workers through ``parts``, if kept
    shown = as_progress(tick)
    # a bar counts the partitions validated; a phase-name callback heard the loading phase
    done = engine_ticks(shown, f"validating {len(light)} partitions", "files")
    gathered = engine.collect(light, progress=done if shown.counting else None)
    return _remote_study(setup, engine, parts, gathered, tick, judgments)


def _submit_loads(
    setup: PartitionSetup, engine: DaskEngine, tick: Callable[[str], None]
) -> tuple[list[Any], Any]:
    """The futures of the partitions validated on the workers, in file order; the judgments'."""
    tick(f"loading {len(setup.files)} partitions")
    # the loader carries the header and the judgments (a large study's header lists every
    # searcher): sent to each worker once, not pickled into every task
    load = engine.broadcast(setup.load)
    judgments = engine.broadcast(setup.judgments) if setup.judgments is not None else None
    return engine.submit_items(apply_on_worker, setup.files, load), judgments


#: what the client gathers of a validated partition: no result row
_Light = tuple[PartitionLoad, int, pd.DataFrame | None]


def _light(part: PartitionLoad, judgments: JudgmentFrame | None) -> _Light:
    """On a worker: the partition without its result rows, their number and coverage counts."""
    bare, n = without_results(part)
    counts = coverage_counts(part.frame, judgments) if part.frame is not None else None
    return bare, n, counts


def _remote_study(
    setup: PartitionSetup,
    engine: DaskEngine,
    parts: tuple[Any, ...],
    light: Sequence[_Light],
    tick: Callable[[str], None],
    judgments: Any,
) -> RemoteStudy:
    """The study from its partitions' light parts (problems of every file raised at once)."""
    loaded = combine_partitions([p for p, _, _ in light], setup, progress=tick)
    return RemoteStudy(
        study=loaded.study,
        frame=loaded.frame,
        judgments=loaded.judgments,
        report=loaded.report,
        notes=loaded.notes,
        qrels_key=loaded.qrels_key,
        unjudged=loaded.unjudged,
        engine=engine,
        parts=parts,
        part_sessions=tuple(p.frame.n_sessions for p, _, _ in light if p.frame is not None),
        n_results=sum(n for _, n, _ in light),
        coverage=sum_counts([c for _, _, c in light if c is not None]),
        shared_judgments=judgments,
    )


def evaluate_remote(
    study: RemoteStudy,
    config: SessionConfig | None = None,
    *,
    measures: Sequence[str] = (),
) -> SessionEvaluation:
    """Score a :class:`RemoteStudy` on its workers: :func:`evaluate`'s tables, bit for bit.

    Each partition is evaluated on its worker and kept there; the client gathers
    the per-query and per-session arrays and puts them in session-id order.

    Parameters
    ----------
    study
        A study loaded by :func:`load_remote` (with ``keep=True``).
    config, measures
        As :func:`~sessionval.evaluation.session.evaluate`.

    Raises
    ------
    SessionvalError
        The study's partitions were not kept on the workers.
    """
    # gains fitted once on the client (the broadcast judgments), not per partition
    cfg, notes = fit_gains(config or SessionConfig(), study.judgments)
    warn_notes(notes)
    engine = study._engine()
    parts = study.kept_parts()
    if cfg.judgments == "searcher":  # the ideal pools the grades of every partition
        whole = study.gathered()
        return evaluate(whole.frame, whole.judgments, cfg, measures=measures, engine=engine)
    judgments = study.shared_judgments  # broadcast when the partitions were loaded
    evs = engine.submit_items(score_partition, list(parts), judgments, cfg, list(measures))
    scores = engine.map_futures(scores_of, evs)
    return assemble(study.frame, study.part_sessions, scores, study.judgments, cfg, engine, evs=evs)


def _scores_of_load(
    part: PartitionLoad,
    judgments: JudgmentFrame | None,
    config: SessionConfig,
    measures: Sequence[str],
) -> PartScores | None:
    """On a worker: a validated partition's scores; its rows and evaluation are not kept."""
    if part.frame is None:  # failed validation: combine_partitions raises its problems
        return None
    return scores_of(score_partition(part.frame, judgments, config, measures))


def score_remote(
    path: str | os.PathLike[str],
    engine: DaskEngine,
    config: SessionConfig | None = None,
    *,
    measures: Sequence[str] = (),
    qrels: str | os.PathLike[str] | None = None,
    header: str | os.PathLike[str] | None = None,
    mode: Mode = "strict",
    max_problems: int = 50,
    progress: Callable[[str], None] | None = None,
    max_rank: int | None = None,
    columns: Sequence[str] | None = None,
) -> tuple[RemoteStudy, SessionEvaluation]:
    """Validate and score the partitions of ``path`` in one pass, keeping nothing on the workers.

    Each partition is scored on its worker as soon as it is validated (those tasks
    run before the next file is read), and its rows and evaluation are then
    dropped: a worker holds the partition it works on and the scores not yet
    gathered, whatever the size of the study.  The tables are
    :func:`evaluate_remote`'s (the local engine's, bit for bit); the per-position
    arrays, the rows' gains (the figures) and the per-position table are not
    available (they need the rows: :func:`load_remote` and :func:`evaluate_remote`).

    Parameters
    ----------
    path, engine, qrels, header, mode, max_problems, progress, max_rank, columns
        As :func:`load_remote`.
    config, measures
        As :func:`~sessionval.evaluation.session.evaluate`.  With the searchers'
        own grades (``judgments = "searcher"``) the ideal pools every partition,
        so the study is loaded, kept and gathered (:func:`evaluate_remote`).

    Returns
    -------
    tuple of RemoteStudy and SessionEvaluation
        The validated study (books, problems, sessions and queries in session-id
        order, the evaluation's frame; no partition kept) and its evaluation.

    Raises
    ------
    ValidationFailed
        Strict mode and a problem in any partition (each problem names its file).
    InputFormatError
        A session split across files.
    """
    setup = prepare_partitions(
        path,
        qrels=qrels,
        header=header,
        mode=mode,
        max_problems=max_problems,
        max_rank=max_rank,
        columns=columns,
    )
    return score_partitions(setup, engine, config, measures=measures, progress=progress)


def score_partitions(
    setup: PartitionSetup,
    engine: DaskEngine,
    config: SessionConfig | None = None,
    *,
    measures: Sequence[str] = (),
    progress: Callable[[str], None] | None = None,
) -> tuple[RemoteStudy, SessionEvaluation]:
    """:func:`score_remote` of partitions already found, with their header and judgments read.

    ``setup`` is :func:`~sessionval.io.partitioned.prepare_partitions`'s: a caller
    that chooses the parameters from the judgments (``run`` picks the gains for
    their grade scale) reads them once, before any partition.
    """
    cfg, notes = fit_gains(config or SessionConfig(), setup.judgments)
    warn_notes(notes)
    tick = progress or (lambda _msg: None)
    if cfg.judgments == "searcher":
        kept = _load(setup, engine, keep=True, tick=tick)
        return kept, evaluate_remote(kept, cfg, measures=measures)
    loads, judgments = _submit_loads(setup, engine, tick)
    # a validated partition's books and scores before the next file: its rows go early
    # (and gathered as they come: the workers do not hold them till the end)
    n = len(loads)
    both = [
        *engine.submit_items(_light, loads, judgments, priority=1),
        *engine.submit_items(_scores_of_load, loads, judgments, cfg, list(measures), priority=1),
    ]
    del loads

    def done(k: int, total: int) -> None:
        tick(f"validating and scoring {n} partitions: {k}/{total} tasks done")

    values = engine.collect(both, progress=done)
    light, scores = values[:n], [s for s in values[n:] if s is not None]
    del values
    study = _remote_study(setup, engine, (), light, tick, judgments)
    del light  # the partitions' sessions and queries: the study's frame has them now
    ev = assemble(study.frame, study.part_sessions, scores, study.judgments, cfg, engine, evs=())
    # one frame of the study on the client, in session-id order (the tables' order)
    return replace(study, frame=ev.frame), ev

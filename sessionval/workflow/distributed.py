"""A partitioned study scored where it lies: the workers write the tables, the client reduces.

``sessionval run --engine dask`` on a partitioned study (``docs/scale-out.md``) runs
one task per partition on the workers (:func:`score_and_write`): validate the file
(the partitioned reader's own loader), score it with the local engine's kernels
(:func:`~sessionval.evaluation.session.evaluate` on the partition alone), write its
per-session, per-query and per-position tables as one Parquet part each
(``tables/per_session/part-00003.parquet``: the local tables' columns and values,
the partition's sessions in session-id order), and reduce it to *partials*: the
summary's counts (:class:`~sessionval.analysis.summary.SummaryCounts`), the
evaluation's counts, and whatever each :class:`Reduction` asks (the figures'
sums by rank, the statistics' sums by design cell).  Only the partials travel to
the client, which folds them as they arrive (:func:`run_partitions`): its memory
grows with the systems, topics, searchers and ranks of the study, never with its
sessions or result rows.

Each session must sit whole in one partition.  That is checked without gathering
the session ids: each task also cuts its ids into buckets by hash, the buckets stay
on the workers, and one task per bucket finds an id in two partitions
(:func:`_split_sessions`); the client receives the few it finds.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Generic, TypeVar

import numpy as np
import numpy.typing as npt
import pandas as pd
import pyarrow as pa

from ..analysis.covariates import with_covariates
from ..analysis.summary import SummaryCounts, summary_counts
from ..errors import InputFormatError, ValidationFailed
from ..evaluation.config import SessionConfig
from ..evaluation.dask_engine import DaskEngine
from ..evaluation.engine import LocalEngine
from ..evaluation.result import SessionEvaluation
from ..evaluation.session import evaluate
from ..frame import JudgmentFrame, SessionFrame
from ..io.partitioned import PartitionLoad, PartitionSetup
from ..models.study import Study
from ..problems import LoadReport, Problem
from ..validate.references import attach_entities

__all__ = [
    "DistributedScores",
    "PartitionJob",
    "PartitionOutcome",
    "Reduction",
    "ScoredPartition",
    "count_partitions",
    "part_name",
    "run_partitions",
    "score_and_write",
]

P = TypeVar("P")

#: Buckets of session ids for the split-session check: each bucket task holds ~1/N of them
#: (a few tasks per partition: the scheduler keeps every task of the run until the check).
ID_BUCKETS: Final = 8


def part_name(index: int) -> str:
    """The file name of partition ``index``'s part of each table.

    Examples
    --------
    >>> part_name(3)
    'part-00003.parquet'
    """
    return f"part-{index:05d}.parquet"


@dataclass(frozen=True)
class ScoredPartition:
    """One partition scored on its worker: what a :class:`Reduction` reads.

    ``ev`` is the partition's evaluation (its sessions in session-id order),
    ``cg_ev`` the evaluation behind the cumulated-gain figures (``ev`` itself unless
    ``[figures] cg_gains`` asks for other gains), ``per_session`` the per-session
    table as written (scores, then covariates).
    """

    index: int
    ev: SessionEvaluation
    cg_ev: SessionEvaluation
    per_session: pd.DataFrame
    judgments: JudgmentFrame | None = None
    tables: Path = Path()
    written: dict[str, tuple[Path, int]] = field(default_factory=dict)

    def write(self, name: str, table: pd.DataFrame) -> Path:
        """Write ``table`` as this partition's part of ``tables/<name>/`` (and record it)."""
        path = self.tables / name / part_name(self.index)
        path.parent.mkdir(parents=True, exist_ok=True)
        table.to_parquet(path, index=False)
        self.written[name] = (path, len(table))
        return path


@dataclass(frozen=True)
class Reduction(Generic[P]):
    """A summary of the study computed per partition and combined on the client.

    ``compute`` runs on the worker, on each :class:`ScoredPartition` (it may write a
    table of its own there, :meth:`ScoredPartition.write`); ``combine`` adds two
    partials (associative: the client folds them in the order they arrive).  A
    partial's size must not grow with the sessions.
    """

    name: str
    compute: Callable[[ScoredPartition], P]
    combine: Callable[[P, P], P]


@dataclass(frozen=True)
class PartitionJob:
    """What every partition task shares (broadcast to the workers once).

    Attributes
    ----------
    load
        The partition's loader: an item (a file, or what a generator takes) to a
        validated :class:`~sessionval.io.partitioned.PartitionLoad`.
    study
        The header the partitions' searchers, topics and systems are described by.
    judgments
        The reference judgments (broadcast with the job).
    config, cg_config
        The session parameters; those of the CG figures (``None``: the same).
    measures
        The measures of the tables.
    tables
        The folder the parts are written under (``tables/`` of the run's staging).
    per_position
        Write the per-position table too.
    reductions
        The partials each task returns.
    score
        Score and write each partition (``False``: validate and count only, what
        ``validate --engine dask`` needs).
    """

    load: Callable[[Any], PartitionLoad]
    study: Study
    judgments: JudgmentFrame | None
    config: SessionConfig
    cg_config: SessionConfig | None
    measures: tuple[str, ...]
    tables: Path
    per_position: bool = True
    reductions: tuple[Reduction[Any], ...] = ()
    score: bool = True


@dataclass(frozen=True)
class PartitionOutcome:
    """What the client receives of one partition: its books, counts, parts written and partials.

    ``problems`` is what failed the partition (strict mode: nothing was scored nor
    written); otherwise ``report`` holds its books (rejects and problems of lenient
    mode included).
    """

    index: int
    source: str
    report: LoadReport | None
    problems: tuple[Problem, ...] = ()
    truncated: bool = False
    counts: SummaryCounts | None = None
    evaluation: dict[str, int] = field(default_factory=dict)
    files: dict[str, Path] = field(default_factory=dict)
    rows: dict[str, int] = field(default_factory=dict)
    partials: dict[str, Any] = field(default_factory=dict)
    span: dict[str, int] = field(default_factory=dict)


_IdBuckets = tuple[npt.NDArray[np.bytes_], ...]


def _id_buckets(ids: pd.Series, n: int) -> _IdBuckets:
    """The session ids as UTF-8 bytes in ``n`` buckets, by a hash every process shares."""
    if len(ids) == 0:
        return tuple(np.zeros(0, dtype="S1") for _ in range(n))
    text = ids.astype(str).to_numpy(dtype=object)
    which = pd.util.hash_array(text) % np.uint64(n)
    # UTF-8 bytes by Arrow's cast, fixed-width for the sort of the check
    raw = pa.array(text, pa.string()).cast(pa.binary()).to_numpy(zero_copy_only=False)
    packed = raw.astype(np.bytes_)
    return tuple(packed[which == b] for b in range(n))


def score_and_write(
    item: tuple[int, Any], job: PartitionJob
) -> tuple[PartitionOutcome, _IdBuckets]:
    """On a worker: validate, score and write one partition; its outcome and its ids' buckets.

    The parts are written straight into the run's staging folder; a partition that
    fails validation writes nothing (strict mode raises for the study on the client).
    """
    index, source = item
    part = job.load(source)
    where = str(part.path)
    if part.frame is None or part.report is None:
        return PartitionOutcome(index, where, None, part.problems, part.truncated), ()
    frame = attach_entities(part.frame, job.study)
    ids = _id_buckets(frame.sessions["session_id"], ID_BUCKETS)
    if not job.score:
        counted = summary_counts(frame, job.judgments)
        return PartitionOutcome(index, where, part.report, counts=counted, span=_span(frame)), ids
    ev = evaluate(frame, job.judgments, job.config, measures=job.measures, engine=LocalEngine())
    cg_ev = (
        ev
        if job.cg_config is None
        else evaluate(frame, job.judgments, job.cg_config, engine=LocalEngine())
    )
    per_session = with_covariates(ev.per_session(), ev.frame)
    per_session.attrs = {}
    scored = ScoredPartition(index, ev, cg_ev, per_session, job.judgments, job.tables)
    scored.write("per_session", per_session)
    scored.write("per_query", ev.per_query())
    if job.per_position:
        scored.write("per_position", ev.per_position())
        ev.forget_per_position()  # built for its part only: the largest table, not kept
    partials = {r.name: r.compute(scored) for r in job.reductions}
    files = {name: path for name, (path, _) in scored.written.items()}
    rows = {name: n for name, (_, n) in scored.written.items()}
    outcome = PartitionOutcome(
        index,
        where,
        part.report,
        counts=summary_counts(frame, job.judgments),
        evaluation=ev.counts(),
        files=files,
        rows=rows,
        partials=partials,
        span=_span(frame),
    )
    return outcome, ids


def _span(frame: SessionFrame) -> dict[str, int]:
    """The partition's distinct searchers (their sum exceeds the study's: one spans files)."""
    return {"searchers": int(frame.sessions["user_id"].nunique())}


def _split_sessions(*pieces: npt.NDArray[np.bytes_]) -> tuple[int, list[tuple[bytes, list[int]]]]:
    """On a worker: the ids of one bucket found in more than one partition, and their number.

    ``pieces`` are the bucket's ids of each partition, in partition order; the
    result lists up to three ids with the partitions (their places in ``pieces``)
    that hold each.
    """
    sizes = [p.size for p in pieces]
    if sum(sizes) == 0:
        return 0, []
    ids = np.concatenate([p.astype(np.bytes_) for p in pieces if p.size])
    owner = np.repeat(np.arange(len(pieces)), sizes)
    order = np.argsort(ids, kind="stable")
    ids, owner = ids[order], owner[order]
    same = ids[1:] == ids[:-1]
    if not same.any():
        return 0, []
    dup = np.zeros(ids.size, dtype=bool)
    dup[1:] |= same
    dup[:-1] |= same
    names = np.unique(ids[dup])
    shown = [(bytes(n), sorted(set(owner[dup][ids[dup] == n].tolist()))) for n in names[:3]]
    return int(names.size), shown


@dataclass
class DistributedScores:
    """The partitions' outcomes folded on the client: the books, counts, files and partials."""

    source: str
    report: LoadReport
    counts: SummaryCounts | None = None
    evaluation: dict[str, int] = field(default_factory=dict)
    files: list[Path] = field(default_factory=list)
    rows: dict[str, int] = field(default_factory=dict)
    partials: dict[str, Any] = field(default_factory=dict)
    n_partitions: int = 0
    searchers_per_part: int = 0
    sources: dict[int, str] = field(default_factory=dict)  # each partition's file, by index

    @property
    def searchers_span_files(self) -> bool:
        """Whether some searcher's sessions are in more than one partition."""
        return self.counts is not None and self.searchers_per_part > len(self.counts.users)

    def fold(self, outcome: PartitionOutcome, reductions: Sequence[Reduction[Any]]) -> None:
        """Add one scored partition's outcome."""
        if outcome.report is None:  # a failed partition: raised with the others at the end
            return
        self.report.merge(outcome.report)
        if outcome.counts is not None:
            self.counts = (
                outcome.counts if self.counts is None else self.counts.combine(outcome.counts)
            )
        for k, v in outcome.evaluation.items():
            self.evaluation[k] = self.evaluation.get(k, 0) + v
        self.files += outcome.files.values()
        for k, n in outcome.rows.items():
            self.rows[k] = self.rows.get(k, 0) + n
        for r in reductions:
            new = outcome.partials[r.name]
            old = self.partials.get(r.name)
            self.partials[r.name] = new if old is None else r.combine(old, new)
        self.n_partitions += 1
        self.sources[outcome.index] = outcome.source
        self.searchers_per_part += outcome.span.get("searchers", 0)


def run_partitions(
    items: Sequence[Any],
    job: PartitionJob,
    engine: DaskEngine,
    *,
    source: str,
    max_problems: int = 50,
    progress: Callable[[int, int], None] | None = None,
) -> DistributedScores:
    """Score every partition on the workers and fold their outcomes on the client.

    Parameters
    ----------
    items
        What ``job.load`` takes, one per partition (the files, in name order).
    job
        The shared parameters (sent to each worker once).
    engine
        The Dask engine.
    source
        The study's name in the books (the input path).
    max_problems
        Problems kept when partitions fail validation.
    progress
        Called with ``(done, total)`` as partitions finish.

    Raises
    ------
    ValidationFailed
        Strict mode and a problem in any partition: the problems of every file.
    InputFormatError
        A session found in two partitions.
    """
    client = engine.client
    shared = engine.broadcast(job)
    tasks = engine.submit_items(score_and_write, list(enumerate(items)), shared)
    outcomes = [client.submit(operator.getitem, t, 0, pure=False) for t in tasks]
    buckets = [[client.submit(_bucket, t, b, pure=False) for b in range(ID_BUCKETS)] for t in tasks]
    del tasks  # each task's result goes once its outcome and buckets are taken
    scores = DistributedScores(source, LoadReport(source))
    failed: list[PartitionOutcome] = []
    for _, outcome in engine.arriving(outcomes, progress):
        if outcome.report is None:
            failed.append(outcome)
        else:
            scores.fold(outcome, job.reductions)
    if failed:
        problems = [q for p in sorted(failed, key=lambda p: p.index) for q in p.problems]
        raise ValidationFailed(
            problems[:max_problems],
            truncated=len(problems) > max_problems or any(p.truncated for p in failed),
        )
    checks = [
        client.submit(_split_sessions, *[buckets[p][b] for p in range(len(items))], pure=False)
        for b in range(ID_BUCKETS)
    ]
    del buckets
    found = client.gather(checks)
    n_split = sum(n for n, _ in found)
    if n_split:
        name, parts = next(shown[0] for n, shown in found if n)
        files = " and ".join(scores.sources[i] for i in parts)
        raise InputFormatError(
            f"session {name.decode('utf-8')!r} is in {files}: a partitioned log must hold "
            f"each session whole in one file (partition by session); {n_split} session(s) "
            "are split"
        )
    return scores


def _bucket(result: tuple[PartitionOutcome, _IdBuckets], b: int) -> npt.NDArray[np.bytes_]:
    ids = result[1]
    return ids[b] if ids else np.zeros(0, dtype="S1")


def count_partitions(
    setup: PartitionSetup,
    engine: DaskEngine,
    *,
    progress: Callable[[int, int], None] | None = None,
) -> DistributedScores:
    """Validate every partition on the workers and fold their books and summary counts.

    What ``validate --engine dask`` prints, in client memory that does not grow with
    the sessions: the partitions are not scored, and their rows are dropped once
    counted.

    Raises
    ------
    ValidationFailed, InputFormatError
        As :func:`run_partitions`.
    """
    job = PartitionJob(
        load=setup.load,
        study=setup.study,
        judgments=setup.judgments,
        config=SessionConfig(),
        cg_config=None,
        measures=(),
        tables=Path(),
        score=False,
    )
    return run_partitions(
        setup.files,
        job,
        engine,
        source=setup.path,
        max_problems=setup.max_problems,
        progress=progress,
    )

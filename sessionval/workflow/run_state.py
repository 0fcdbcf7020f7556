"""The run's stages as data: :class:`Stage`, the :class:`RunState` they share, :func:`execute`.

A stage is a name (the progress bar's), a function of the :class:`RunState`, the fields
it reads and the fields it writes.  :func:`execute` runs stages in order: each field of
the state is written by one stage, once (a second write raises: a bug, not a user
error), and dropped after the last stage that reads it, so large intermediates (the
study's per-result frame, the evaluation) live exactly as long as a stage needs them.
Each stage's wall time and memory are recorded (:class:`StageProfile`).  The stages of
``sessionval run`` are :data:`sessionval.workflow.job.STAGES`.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, fields
from typing import Final, TypeVar

import pandas as pd

from ..analysis.summary import StudySummary
from ..evaluation.engine import Engine
from ..evaluation.result import SessionEvaluation
from ..frame import LoadedStudy
from ..output.report import ReportFigure, ReportSection
from ..problems import LoadReport
from ..progress import Stages
from ..validate.memory import release_free_memory
from .advice import MemoryAdvice
from .distributed import DistributedScores
from .figures import FigureCell
from .outputs import RunOutputs
from .plan import RunPlan
from .reformulations import ReformulationResult
from .statistics import StatisticsResult
from .steps import ScoreTables, peak_memory_mb

__all__ = [
    "STATE_FIELDS",
    "Drawn",
    "OnePass",
    "RunState",
    "Stage",
    "StageProfile",
    "Validated",
    "execute",
    "need",
]

_T = TypeVar("_T")


@dataclass(frozen=True)
class Validated:
    """What the report keeps of the load: the summary written, the load report, the title."""

    summary: StudySummary
    report: LoadReport
    name: str | None
    n_sessions: int


@dataclass(frozen=True)
class OnePass:
    """A one-pass load's scores and the plan they were scored on (settled from the judgments)."""

    plan: RunPlan
    evaluation: SessionEvaluation


@dataclass(frozen=True)
class Drawn:
    """The figures drawn for the report and the notes on those skipped."""

    figures: tuple[ReportFigure, ...]
    notes: tuple[str, ...]


@dataclass(frozen=True)
class StageProfile:
    """One stage's wall time (s), the process's peak and current resident memory (MB) after it."""

    name: str
    seconds: float
    peak_mb: float
    rss_mb: float


@dataclass(eq=False)
class RunState:
    """The run in progress: the plan and the outputs given, then what each stage wrote.

    The fields after ``advice`` are the stages' (:data:`STATE_FIELDS`): each is written
    by one stage, once (a second write is a bug and raises), and released (set to
    ``None``, listed in ``released``) when no later stage and not the result reads it.
    """

    plan: RunPlan
    outputs: RunOutputs
    bar: Stages
    advice: MemoryAdvice
    engine: Engine
    # written by the stages
    loaded: LoadedStudy | None = None
    one_pass: OnePass | None = None
    validated: Validated | None = None
    settled: RunPlan | None = None
    cell: FigureCell | None = None
    evaluation: SessionEvaluation | None = None
    tables: ScoreTables | None = None
    drawn: Drawn | None = None
    reformulations: ReformulationResult | None = None
    statistics: StatisticsResult | None = None
    correlations: ReportSection | None = None
    reformulation_section: ReportSection | None = None  # a distributed run's, from partials
    exported: tuple[str, ...] | None = None
    scores: pd.DataFrame | None = None
    scored: DistributedScores | None = None  # a distributed run's partials, folded
    # the runner's bookkeeping
    stage: str = ""
    written: dict[str, str] = field(default_factory=dict)
    released: list[str] = field(default_factory=list)
    profile: list[StageProfile] = field(default_factory=list)

    def __setattr__(self, name: str, value: object) -> None:
        if name in STATE_FIELDS and self.__dict__.get("stage"):
            if name in self.written:  # a bug in a stage, not a user error
                raise RuntimeError(
                    f"stage {self.stage!r} wrote {name!r}, already written by "
                    f"stage {self.written[name]!r}"
                )
            self.written[name] = self.stage
        super().__setattr__(name, value)

    def release(self, name: str) -> None:
        """Drop a field no later stage reads (its memory goes back once unreferenced)."""
        object.__setattr__(self, name, None)
        self.released.append(name)


def need(value: _T | None, name: str) -> _T:
    """A field an earlier stage wrote (``None`` here is a bug in :data:`STAGES`' order)."""
    if value is None:
        raise RuntimeError(f"the run read {name!r} before a stage wrote it")
    return value


@dataclass(frozen=True)
class Stage:
    """One stage of the run: its name on the progress bar, its function, what it reads and writes.

    ``reads`` and ``writes`` name fields of :class:`RunState`; ``reads`` decides how
    long each field lives (``tests/workflow/test_stages.py`` checks both against what
    the function does).
    """

    name: str
    run: Callable[[RunState], None]
    reads: tuple[str, ...] = ()
    writes: tuple[str, ...] = ()


#: The stages' fields of :class:`RunState`.
STATE_FIELDS: Final = frozenset(
    f.name
    for f in fields(RunState)
    if f.name not in ("plan", "outputs", "bar", "advice", "engine")
    and f.name not in ("stage", "written", "released", "profile")
)


def execute(state: RunState, stages: Sequence[Stage], *, keep: Iterable[str] = ()) -> None:
    """Run each stage in order, one step of the bar each; drop what no later stage reads.

    A field is dropped after the last stage that reads it, unless it is in ``keep``
    (what the caller reads after the last stage).  After each stage,
    :func:`~sessionval.validate.memory.release_free_memory` gives the memory of the
    dropped fields back, and its wall time and memory join ``state.profile``.
    """
    todo, kept = tuple(stages), frozenset(keep)
    # what exists before the run (the modules imported, the caller's objects) is left out of
    # the run's collections: each full collection traversed it again (~0.1 s a time)
    gc.freeze()
    try:
        _execute(state, todo, kept)
    finally:
        gc.unfreeze()
    state.stage = ""


def _execute(state: RunState, todo: tuple[Stage, ...], kept: frozenset[str]) -> None:
    for i, stage in enumerate(todo):
        t0 = time.perf_counter()
        state.stage = stage.name
        state.bar.phase(stage.name)
        stage.run(state)
        later = {name for s in todo[i + 1 :] for name in s.reads}
        dropped = [
            name
            for name in state.written
            if name not in later and name not in kept and name not in state.released
        ]
        for name in dropped:
            state.release(name)
        if dropped:
            gc.collect()  # the frame's tables hold reference cycles (attrs, caches)
            release_free_memory()
        state.profile.append(
            StageProfile(stage.name, time.perf_counter() - t0, peak_memory_mb(), _rss_mb())
        )
        state.bar.update()


def _rss_mb() -> float:
    """Resident memory of this process now, in MB (``/proc``; NaN where there is none)."""
    import os

    try:
        with open("/proc/self/statm", encoding="ascii") as f:
            pages = int(f.read().split()[1])
    except (OSError, ValueError, IndexError):
        return float("nan")
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20

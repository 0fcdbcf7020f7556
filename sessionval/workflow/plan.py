"""Resolve once, then run a plan: what the user asked (:class:`RunRequest`) decided up front.

:func:`resolve` is the only reader of the configuration file and the flags of a run.
It decides, before a session is read, everything that can be decided then: the
input format (detected once), whether the input brings its own judgments, the
session parameters (preset, file, flags: parsed once), the measures, the table
formats, the figures and exports, and where the sessions are loaded and scored
(:data:`Placement`).  The one parameter it cannot decide is the gain scheme of
``gains = "auto"``, which needs the data's grade scale: :meth:`RunPlan.settled`
fits it once, through :func:`~sessionval.evaluation.gain_fit.fit_gains`, the same
decision :func:`~sessionval.evaluation.session.evaluate` makes from Python.
:func:`sessionval.workflow.job.run` executes its stages on the plan, and
``config.toml`` is written from the settled plan.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Final, Literal, TypeAlias

from ..errors import SessionvalError
from ..evaluation.dask_engine import DaskEngine
from ..evaluation.engine import Engine
from ..evaluation.remote import keeps_partitions
from ..frame import JudgmentFrame, SessionFrame
from ..io.formats import detect_format
from ..io.partitioned import PARTITIONED
from ..models.judgments import GradeScale
from ..problems import Mode
from .config_file import BACKGROUND_SESSIONS
from .settings import RunSettings, run_settings

__all__ = [
    "RESULTS",
    "TABLE_FORMATS",
    "Placement",
    "Results",
    "RunPlan",
    "RunRequest",
    "resolve",
    "use_background",
]

#: Formats the tables may be written in (``table_formats``).
TABLE_FORMATS: Final = ("csv", "parquet")

Placement: TypeAlias = Literal["local", "workers", "one-pass", "distributed"]
"""Where a run loads and scores its sessions, and where its results go.

``local``: loaded into this process (a partitioned input on a Dask cluster is
validated on the workers and gathered) and scored on the engine; ``workers``: the
partitions stay on the workers that validated them and are scored there
(:func:`~sessionval.evaluation.remote.load_remote`), the tables gathered;
``one-pass``: each partition is scored as soon as it is validated and dropped, when
no row-level output is asked (:func:`~sessionval.evaluation.remote.score_partitions`),
the tables gathered; ``distributed`` (the default on Dask): each partition is
validated, scored and written as Parquet parts by its worker, and the client folds
the partitions' partial sums into the summary, figures, statistics and report
(:mod:`sessionval.workflow.distributed`), in memory that does not grow with the sessions.
"""

#: Where the results of a partitioned study on Dask go (``--results``).
Results: TypeAlias = Literal["workers", "client"]
RESULTS: Final = ("workers", "client")


@dataclass(frozen=True)
class RunRequest:
    """What the user asked of ``sessionval run``: paths, flags and options, nothing decided.

    The fields are :func:`sessionval.workflow.job.run`'s parameters; :func:`resolve`
    turns a request into a :class:`RunPlan`.
    """

    logs: Path
    qrels: Path | None
    out: Path
    config_path: Path | None = None
    lenient: bool | None = None
    progress: bool | None = None
    input_options: Mapping[str, Any] = field(default_factory=dict)
    overrides: Mapping[str, Any] = field(default_factory=dict)
    force: bool = False
    csv_safe: bool | None = None
    engine: Engine | None = None
    per_position: bool = True
    table_formats: Sequence[str] = TABLE_FORMATS
    figures: bool = True
    exports: bool | None = None
    results: Results = "workers"


@dataclass(frozen=True)
class RunPlan:
    """A run decided: every parameter, stage option and the placement, validated.

    Attributes
    ----------
    request
        What was asked (paths, engine, progress).
    fmt
        The input format, detected once (``validate``'s names).
    settings
        The configuration file and flags, parsed once; ``gains = "auto"`` is fitted
        to the data by :meth:`settled` (the only change after :func:`resolve`).
    placement
        Where the sessions are loaded and scored.
    load_options
        The input format's options as the loader takes them (``fmt`` only for a
        local load; the engine's mapper when the partitions are validated on the
        workers and gathered).
    table_formats
        Formats of ``tables/``.
    background
        Whether the figures and the Stata/SPSS exports are made by a second process
        (``[run] background_process``, decided by :meth:`settled` from the study's size).
    """

    request: RunRequest
    fmt: str
    settings: RunSettings
    placement: Placement
    load_options: Mapping[str, Any]
    table_formats: tuple[str, ...]
    background: bool = False

    @property
    def mode(self) -> Mode:
        """``"lenient"`` (reject bad sessions and go on) or ``"strict"``."""
        return "lenient" if self.settings.lenient else "strict"

    @property
    def own_judgments(self) -> bool:
        """Whether the input brings its own judgments (a lab-tables folder)."""
        return self.fmt == "lab-tables"

    def settled(
        self,
        judgments: JudgmentFrame | None,
        frame: SessionFrame | None = None,
        *,
        user_scale: GradeScale | None = None,
    ) -> RunPlan:
        """The plan fitted to the data: the gain scheme, the second process.

        The gain scheme by :meth:`RunSettings.settled`; whether the figures and the
        Stata/SPSS exports are made by a second process by :func:`use_background`.
        """
        settings = self.settings.settled(judgments, frame, user_scale=user_scale)
        stats_files = settings.exports and bool({"dta", "sav"} & set(settings.formats))
        background = use_background(
            self.settings.file.run.background_process,
            frame.n_sessions if frame is not None else 0,
            work=self.request.figures or stats_files,
        )
        if settings is self.settings and background == self.background:
            return self
        return replace(self, settings=settings, background=background)


def use_background(
    option: bool | Literal["auto"], n_sessions: int, *, work: bool, cpus: int | None = None
) -> bool:
    """``[run] background_process`` decided: ``"auto"`` from the study's size and the CPUs.

    ``work``: whether the run has work for it (figures, or Stata/SPSS exports).  A
    second process pays for itself when that work takes seconds (a study of
    :data:`~sessionval.workflow.config_file.BACKGROUND_SESSIONS` sessions or more) and
    a second CPU can do it (``cpus``: this process's, by default).

    >>> use_background("auto", 200_000, work=True, cpus=2)
    True
    >>> use_background("auto", 200_000, work=True, cpus=1)
    False
    >>> use_background(True, 10, work=True)
    True
    """
    if not work or option is False:
        return False
    if option is True:
        return True
    if cpus is None:
        cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return n_sessions >= BACKGROUND_SESSIONS and (cpus or 1) > 1


def _placement(request: RunRequest, fmt: str, settings: RunSettings) -> Placement:
    """Keep a partitioned input on a Dask cluster's workers, unless the searchers grade.

    The searchers' grades pool over the whole study (the ideal), so such a study is
    gathered.  Its results stay on the workers (``results="workers"``, the default)
    or are gathered to the client (``"client"``): then, without figures and the
    per-position table nothing needs the rows after scoring, so each partition is
    scored as it is validated.
    """
    options = {**request.input_options, "fmt": fmt}
    configs = (settings.config, settings.cg_config)
    remote = keeps_partitions(fmt, request.engine, options) and all(
        c.judgments == "reference" for c in configs if c is not None
    )
    if not remote:
        return "local"
    if request.results == "workers":
        return "distributed"
    return "workers" if request.figures or request.per_position else "one-pass"


def _brings_judgments(request: RunRequest) -> bool:
    """Whether partitions the caller prepared (``input_options["partitions"]``) bring judgments."""
    given = request.input_options.get("partitions")
    return getattr(given, "judgments", None) is not None


def resolve(request: RunRequest) -> RunPlan:
    """Decide a run before reading a session: the only reader of the TOML file and flags.

    Raises
    ------
    ConfigFileError
        The configuration file or a flag is not valid.
    InputFormatError
        Reference judgments are needed but not given.
    SessionvalError
        An unknown table format.
    """
    asked = str(request.input_options.get("fmt", "auto"))
    fmt = detect_format(request.logs) if asked == "auto" else asked
    if request.results not in RESULTS:
        raise SessionvalError(f"results {request.results!r} unknown; allowed: {list(RESULTS)}")
    bad = sorted(set(request.table_formats) - set(TABLE_FORMATS))
    if bad or not request.table_formats:
        raise SessionvalError(f"table formats {bad or []} unknown; allowed: {list(TABLE_FORMATS)}")
    settings = run_settings(
        request.config_path,
        lenient=request.lenient,
        has_qrels=request.qrels is not None or fmt == "lab-tables" or _brings_judgments(request),
        overrides=request.overrides,
        csv_safe=request.csv_safe,
        exports=request.exports,
    )
    placement = _placement(request, fmt, settings)
    load_options = dict(request.input_options)
    if placement != "local":  # the partitioned reader on the workers: no format to choose
        load_options.pop("fmt", None)
    elif fmt == PARTITIONED and isinstance(request.engine, DaskEngine):
        load_options["mapper"] = request.engine.map_items  # validated on the workers
    return RunPlan(
        request=request,
        fmt=fmt,
        settings=settings,
        placement=placement,
        load_options=load_options,
        table_formats=tuple(request.table_formats),
    )

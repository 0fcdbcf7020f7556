"""The run's configuration file: session parameters, figure settings and run options (TOML).

Top-level keys are :class:`~sessionval.evaluation.config.SessionConfig` fields
(``preset``, ``b``, ``bq``, ``cutoff``, ``gains``, ``duplicates``, …); an optional
``[figures]`` table sets ``ranks`` (the last rank of Figure 1 and of the CG curves,
default 100; ``depth`` is accepted as its former name), ``scenario`` (topic of
Figures 3 and 4), ``system`` (Figure 4), ``max_sessions`` (sessions drawn in
Figure 4, default 30), ``min_queries`` (Figure 3's subset, default 4) and
``cg_gains`` (gain scheme of the CG/DCG curves, default the session gains);
``[run]`` sets ``lenient`` (bool) and ``formats`` (export formats);
``[statistics]`` sets the tests, corrections, bands and mixed model of the report
(:class:`~sessionval.workflow.statistics.StatisticsSettings`).

Everything is validated when the file is read, before any output is written.
"""

from __future__ import annotations

import json
import math
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from ..errors import InputFormatError, MeasureSpecError, SessionvalError
from ..evaluation.config import SessionConfig, config_from_mapping
from .statistics import StatisticsSettings, statistics_settings

__all__ = [
    "FigureSettings",
    "RunConfig",
    "RunSettings",
    "figure_table",
    "load_run_config",
    "run_settings",
    "to_toml",
]

_FIGURE_KEYS: Final = frozenset(
    {"ranks", "depth", "scenario", "system", "min_queries", "cg_gains", "max_sessions"}
)
_RUN_KEYS: Final = frozenset({"lenient", "formats"})


#: Why a run without judgments stops (the configuration asks for reference judgments).
NO_JUDGMENTS: Final = (
    'reference judgments are needed (give --qrels, or set judgments = "searcher" in the '
    "configuration to use the searchers' own grades)"
)


@dataclass(frozen=True)
class FigureSettings:
    """What the figures show beyond the session configuration.

    ``ranks`` is the last rank of Figure 1 and of the CG curves (the papers: 100),
    not the cut-off X of the session measures (``SessionConfig.cutoff``).
    """

    ranks: int = 100
    scenario: str | None = None
    system: str | None = None
    min_queries: int = 4
    max_sessions: int = 30
    cg_gains: str | dict[int, float] | None = None


@dataclass(frozen=True)
class RunConfig:
    """A parsed configuration file: session parameters, figure settings, run options."""

    session: dict[str, Any] = field(default_factory=dict)
    figures: FigureSettings = field(default_factory=FigureSettings)
    lenient: bool = False
    formats: tuple[str, ...] = ("csv", "parquet", "dta", "sav")
    statistics: StatisticsSettings = field(default_factory=StatisticsSettings)


def load_run_config(path: Path | None) -> RunConfig:
    """Read a TOML configuration (``None``: the paper's defaults).

    Raises
    ------
    InputFormatError
        The file is not valid TOML, or a ``[figures]``/``[run]`` key is unknown or
        out of range.
    """
    if path is None:
        return RunConfig()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise InputFormatError(f"{path}: not valid TOML: {exc}") from exc
    except OSError as exc:
        raise InputFormatError(f"{path}: cannot read: {exc}") from exc
    figures = data.pop("figures", {})
    run_opts = data.pop("run", {})
    statistics = statistics_settings(data.pop("statistics", {}), source=str(path))
    for name, table, allowed in (("figures", figures, _FIGURE_KEYS), ("run", run_opts, _RUN_KEYS)):
        if not isinstance(table, dict):
            raise InputFormatError(f"{path}: [{name}] must be a table")
        bad = sorted(set(table) - allowed)
        if bad:
            raise InputFormatError(
                f"{path}: unknown key(s) {bad} in [{name}]; allowed: {sorted(allowed)}"
            )
    if "depth" in figures:  # the former name of ranks: configurations written before keep working
        if "ranks" in figures:
            raise InputFormatError(
                f"{path}: [figures] has both ranks and depth (its former name); keep ranks"
            )
        figures["ranks"] = figures.pop("depth")
    try:
        fs = FigureSettings(**figures)
        if fs.ranks < 1 or fs.min_queries < 1 or fs.max_sessions < 1:
            raise InputFormatError(
                f"{path}: [figures] ranks, min_queries and max_sessions must be >= 1"
            )
    except TypeError as exc:
        raise InputFormatError(f"{path}: [figures]: {exc}") from exc
    formats = tuple(run_opts.get("formats", RunConfig().formats))
    return RunConfig(
        session=data,
        figures=fs,
        lenient=bool(run_opts.get("lenient", False)),
        formats=formats,
        statistics=statistics,
    )


@dataclass(frozen=True)
class RunSettings:
    """Everything a run needs to know before it reads the study, validated.

    Attributes
    ----------
    config
        The session configuration.
    cg_config
        The configuration of the CG/DCG curves: ``config`` with the ``[figures]
        cg_gains`` scheme, or None when the curves use ``config`` itself.
    figures
        The figure settings.
    lenient
        Reject bad sessions instead of failing.
    formats
        Export formats.
    statistics
        The ``[statistics]`` settings.
    """

    config: SessionConfig
    cg_config: SessionConfig | None
    figures: FigureSettings
    lenient: bool
    formats: tuple[str, ...]
    statistics: StatisticsSettings = field(default_factory=StatisticsSettings)


def run_settings(config_path: Path | None, *, lenient: bool | None, has_qrels: bool) -> RunSettings:
    """Read and validate the run's configuration (the first step of a run).

    Parameters
    ----------
    config_path
        TOML configuration (``None``: the paper's defaults).
    lenient
        ``--lenient``/``--strict`` (``None``: the configuration's ``[run] lenient``).
    has_qrels
        Whether reference judgments were given.

    Raises
    ------
    InputFormatError
        Unreadable file, unknown key, or reference judgments needed but not given.
    MeasureSpecError
        An invalid session parameter or ``[figures] cg_gains``.
    """
    rc = load_run_config(config_path)
    try:
        config = config_from_mapping(rc.session) if rc.session else SessionConfig()
        cg = rc.figures.cg_gains
        cg_config = config.replace(gains=cg) if cg is not None else None
        if cg_config is not None and cg_config.gains == config.gains:
            cg_config = None
    except SessionvalError:
        raise
    except ValueError as exc:  # pydantic.ValidationError
        raise MeasureSpecError(f"{config_path}: invalid configuration: {exc}") from exc
    if not has_qrels and config.judgments == "reference":
        raise InputFormatError(f"no --qrels given: {NO_JUDGMENTS}")
    return RunSettings(
        config=config,
        cg_config=cg_config,
        figures=rc.figures,
        lenient=rc.lenient if lenient is None else lenient,
        formats=rc.formats,
        statistics=rc.statistics,
    )


def figure_table(fs: FigureSettings) -> dict[str, Any]:
    """The ``[figures]`` table of a written configuration."""
    return {
        "ranks": fs.ranks,
        "scenario": fs.scenario,
        "system": fs.system,
        "min_queries": fs.min_queries,
        "max_sessions": fs.max_sessions,
        "cg_gains": fs.cg_gains,
    }


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, Mapping):
        return (
            "{ "
            + ", ".join(f"{json.dumps(str(k))} = {_toml_value(x)}" for k, x in v.items())
            + " }"
        )
    if isinstance(v, list | tuple):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    raise SessionvalError(f"cannot write {v!r} ({type(v).__name__}) to TOML")


def to_toml(tables: Mapping[str, Mapping[str, Any]], *, header: str = "") -> str:
    """Write ``{"": top-level, "figures": {...}}`` as TOML (``None`` values are left out).

    Examples
    --------
    >>> t = {"": {"b": 2.0, "gains": "0-1-10-100", "x": None}, "figures": {"ranks": 100}}
    >>> print(to_toml(t))
    b = 2.0
    gains = "0-1-10-100"
    <BLANKLINE>
    [figures]
    ranks = 100
    <BLANKLINE>
    """
    lines = [f"# {line}" for line in header.splitlines()]
    for name, table in tables.items():
        if name:
            lines += ["", f"[{name}]"]
        lines += [f"{k} = {_toml_value(v)}" for k, v in table.items() if v is not None]
    return "\n".join(lines) + "\n"

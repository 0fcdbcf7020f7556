"""The run's configuration file (TOML): its schema, reading it and merging the flags.

:class:`RunConfig` is the file.  Its top-level keys are the session parameters
(:class:`~sessionval.evaluation.config.SessionConfig`'s fields, ``b``, ``bq``, ``cutoff``,
``gains``, …) and ``preset`` (a named published variant whose parameters the other keys
override); each table is one sub-model: ``[figures]`` (:class:`FigureSettings`), ``[run]``
(:class:`RunOptions`), ``[measures]`` (:class:`MeasureSelection`) and ``[statistics]``
(:class:`StatisticsSettings`).  Every table
forbids unknown keys and every value is strict: ``lenient = "false"`` is an error (a
string is not a boolean), ``cutoff = 10.5`` too.  A bad file raises one
:class:`ConfigFileError` listing every problem with the allowed keys or values, in
the toolkit's words (:mod:`sessionval.models.messages`).  ``docs/configuration.md`` is
generated from these models (:func:`sessionval.workflow.config_text.config_markdown`).
What a run makes of the file is :mod:`sessionval.workflow.settings`.

**Adding a table** is one sub-model: a :class:`Section` subclass with its keys
(``Field(default, description=...)``) and one field of :class:`RunConfig` named after
the table; the docs, the written ``config.toml`` and the error messages follow.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from ..errors import InputFormatError, MeasureSpecError
from ..evaluation.config import GainsField, SessionConfig, resolve_preset
from ..measures.registry import parse_measure
from ..models.messages import Loc, explain
from ..output.export import LARGE_ROWS
from ..output.rating_plots import DENSITY_POINTS

__all__ = [
    "EXPORT_FORMATS",
    "ConfigFileError",
    "ExportFormat",
    "FigureSettings",
    "ImageFormat",
    "MeasureSelection",
    "RunConfig",
    "RunOptions",
    "Section",
    "StatisticsSettings",
    "StrictSessionConfig",
    "figure_table",
    "load_run_config",
    "parse_run_config",
]

ExportFormat = Literal["csv", "parquet", "dta", "sav"]

#: Sessions from which ``[run] background_process = "auto"`` renders the figures in a
#: second process (below it, starting the process costs more than it saves).
BACKGROUND_SESSIONS: Final = 20_000
ImageFormat = Literal["png", "svg", "pdf"]
#: The export formats, in the order they are written.
EXPORT_FORMATS: Final[tuple[ExportFormat, ...]] = ("csv", "parquet", "dta", "sav")


class ConfigFileError(InputFormatError, MeasureSpecError):
    """The configuration file (or a parameter flag of ``run``) is not valid.

    Both an input-format error (the file) and a measure-specification error (a
    parameter value), so callers catching either see it.
    """


def _listed_once(values: tuple[str, ...]) -> tuple[str, ...]:
    """A list of formats names each once."""
    repeated = sorted({f for f in values if values.count(f) > 1})
    if repeated:
        raise ValueError(f"format(s) {repeated} listed twice")
    return values


class Section(BaseModel):
    """A table of the configuration file: strict values, no unknown keys, immutable."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True, str_strip_whitespace=True)


class StrictSessionConfig(SessionConfig):
    """The session parameters as the file gives them: strict values (``b = "2"`` is an error)."""

    model_config = ConfigDict(**SessionConfig.model_config, strict=True)


class FigureSettings(Section):
    """``[figures]``: what the figures show beyond the session parameters.

    ``ranks`` is the last rank of Figure 1 and of the CG curves (the papers: 100),
    not the cut-off X of the session measures (``cutoff``); ``depth`` is accepted as
    its former name.
    """

    ranks: int = Field(
        100,
        ge=1,
        description="last rank of Figure 1 and of the CG/DCG curves (the papers: 100); "
        "curves stop at the deepest logged list when that is shorter",
    )
    scenario: str | None = Field(
        None,
        description="topic of Figures 3 and 4 (default: the topic with the most sessions of "
        "at least min_queries queries)",
    )
    system: str | None = Field(
        None,
        description="system of Figure 4 (default: the system with the most sessions in the "
        "scenario)",
    )
    min_queries: int = Field(
        4, ge=1, description="Figure 3's subset: sessions with at least this many queries"
    )
    max_sessions: int = Field(
        30, ge=1, description="sessions drawn in Figure 4 (the first ones by session id)"
    )
    cg_gains: GainsField | None = Field(
        None,
        description="gain scheme of the CG/DCG curves (default: the session gains)",
        json_schema_extra={"type": "string"},
    )
    formats: tuple[ImageFormat, ...] = Field(
        ("png", "svg", "pdf"),
        min_length=1,
        strict=False,
        description="image files written per figure (the report embeds a PNG in any case)",
    )
    density_points: int = Field(
        DENSITY_POINTS,
        ge=1,
        description="sessions of one panel of figures/rating_correlations above which the "
        "panel draws a 2-D histogram of them (sessions per cell) instead of one point each",
    )

    @field_validator("formats")
    @classmethod
    def _unique(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        return _listed_once(v)

    @model_validator(mode="before")
    @classmethod
    def _former_names(cls, data: Any) -> Any:
        """``depth`` is the former name of ``ranks``: configurations written before keep working."""
        if isinstance(data, Mapping) and "depth" in data:
            if "ranks" in data:
                raise ValueError("both ranks and depth (its former name) are given; keep ranks")
            data = {("ranks" if k == "depth" else k): v for k, v in data.items()}
        return data


class RunOptions(Section):
    """``[run]``: how the run reads its input and what it writes."""

    lenient: bool = Field(
        False,
        description="reject bad sessions (listed in rejects.csv) and go on, instead of "
        "failing on any problem; --lenient/--strict override it",
    )
    exports: bool = Field(
        True,
        description="write exports/ (the scores for R, SPSS and Stata); false skips them, "
        "as --no-exports does; --exports/--no-exports override it",
    )
    formats: tuple[ExportFormat, ...] = Field(
        EXPORT_FORMATS,
        min_length=1,
        strict=False,
        description="export formats written to exports/",
    )
    all_formats: bool = Field(
        False,
        description="write every export in every one of formats whatever its size; false: "
        "a table of more than large_export_rows rows is written as Parquet and CSV (long "
        "form and tables/per_position: Parquet) only, and the report says so",
    )
    large_export_rows: int = Field(
        LARGE_ROWS,
        ge=1,
        description="rows above which an export or tables/per_position is large (see all_formats)",
    )
    background_process: bool | Literal["auto"] = Field(
        "auto",
        description="render the figures and write the Stata and SPSS exports in a second "
        "process while the run goes on (the same files): auto for a study of at least "
        f"{BACKGROUND_SESSIONS:,} sessions on a machine with more than one CPU, true "
        "always, false never",
    )
    csv_safe: bool = Field(
        False,
        description="prefix text cells starting with =, +, - or @ with ' in every CSV "
        "(spreadsheet formula injection); off: R and Stata read raw values; --csv-safe sets it",
    )

    @field_validator("formats")
    @classmethod
    def _unique(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        return _listed_once(v)


def _canonical(specs: tuple[str, ...], scope: str) -> tuple[str, ...]:
    """Measure names parsed once, canonical, without repeats; each of the given scope."""
    out = []
    for spec in specs:
        measure = parse_measure(spec)
        if measure.scope != scope:
            kind, other = (
                ("session", "query") if measure.scope == "session" else ("single-query", "session")
            )
            raise ValueError(
                f"{spec!r} is a {kind} measure; list it under [measures] "
                f"{'session' if other == 'query' else 'query'}"
            )
        out.append(repr(measure))
    return tuple(dict.fromkeys(out))


class MeasureSelection(Section):
    """``[measures]``: measures computed beyond the session scores."""

    session: tuple[str, ...] | None = Field(
        None,
        strict=False,
        description='session measures, e.g. ["nsDCG@10", "esNDCG@9", "mean(nDCG@10)"]: one '
        "per_session column each, in the exports, the report's score table and the rating "
        "correlations (default: the preset's own measures, if any; `sessionval measures` "
        "lists the names)",
    )
    query: tuple[str, ...] = Field(
        (),
        strict=False,
        description='single-query measures computed for every query, e.g. ["nDCG@10", "P@10", '
        '"AP"] (per_query columns; names as `sessionval measures` lists them)',
    )

    @field_validator("session")
    @classmethod
    def _session(cls, v: tuple[str, ...] | None) -> tuple[str, ...] | None:
        return None if v is None else _canonical(v, "session")

    @field_validator("query")
    @classmethod
    def _single_query(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        return _canonical(v, "query")


class StatisticsSettings(Section):
    """``[statistics]``: the tests, corrections, intervals and mixed model of the report.

    The statistics step (:mod:`sessionval.workflow.statistics`) detects the study's
    design, compares every pair of systems as it asks and fits the mixed model;
    ``docs/statistics.md`` says how.
    """

    test: Literal["paired-t", "wilcoxon", "sign", "randomisation", "bootstrap"] = Field(
        "paired-t", description="paired test of each pair of systems (within searchers)"
    )
    correction: Literal["holm", "bonferroni", "bh", "tukey-hsd", "none"] = Field(
        "holm", description="correction for comparing several pairs of systems"
    )
    measures: tuple[str, ...] = Field(
        ("nsdcg", "sdcg"),
        strict=False,
        description="per-session scores compared (columns of per_session)",
    )
    alpha: float = Field(0.05, gt=0, lt=1, description="significance level of the decisions")
    confidence: float = Field(
        0.95, gt=0, lt=1, description="level of the intervals and of the figures' bands"
    )
    resamples: int = Field(
        10_000, ge=1, description="resamples of the randomisation and bootstrap tests"
    )
    seed: int = Field(0, description="seed of the resampling (fixed: the report reproduces)")
    effect_size: Literal["sakai", "cohen-d", "hedges-g"] = Field(
        "sakai", description="effect size reported with each pair"
    )
    bands: bool = Field(True, description="confidence bands on the averaged curves of the figures")
    mixed_model: bool = Field(
        True, description="fit the linear mixed model (system fixed; searcher, topic random)"
    )
    design: Literal["auto", "within", "between", "by_topic", "log"] = Field(
        "auto", description="design of the comparison (auto: detected from the sessions)"
    )
    block: Literal["auto", "searcher", "searcher+topic", "topic", "none"] = Field(
        "auto", description="what pairs or blocks the comparison (auto: the design's own)"
    )


class RunConfig(Section):
    """The whole configuration file: the session parameters at the top level, one table each.

    Examples
    --------
    >>> rc = parse_run_config({"preset": "jiang-allan-2016", "b": 3, "run": {"lenient": True}})
    >>> rc.session.b, rc.session.discount, rc.run.lenient, "gains" in rc.explicit
    (3.0, 'shifted-log', True, True)
    """

    session: StrictSessionConfig = Field(default_factory=StrictSessionConfig)
    figures: FigureSettings = Field(default_factory=FigureSettings)
    run: RunOptions = Field(default_factory=RunOptions)
    measures: MeasureSelection = Field(default_factory=MeasureSelection)
    statistics: StatisticsSettings = Field(default_factory=StatisticsSettings)

    #: Keys of the file that are not session parameters: ``preset`` and the tables.
    TABLES: ClassVar[tuple[str, ...]] = ("figures", "run", "measures", "statistics")

    @model_validator(mode="before")
    @classmethod
    def _gather_session(cls, data: Any) -> Any:
        """Move the top-level session keys into ``session``, the preset's under them."""
        if not isinstance(data, Mapping):
            return data
        tables = {k: v for k, v in data.items() if k in cls.TABLES}
        top = {k: v for k, v in data.items() if k not in cls.TABLES}
        name = top.pop("preset", None)
        if name is not None:
            try:
                params = resolve_preset(name).params
            except MeasureSpecError as exc:  # the same message as SessionConfig.preset's
                raise ValueError(str(exc)) from None
            top = {**params, "preset_name": name, **top}
        return {**tables, "session": top}

    @property
    def explicit(self) -> frozenset[str]:
        """Session parameters the file (or a preset it names) sets."""
        return frozenset(self.session.model_fields_set)

    def session_config(self) -> SessionConfig:
        """The session parameters as a plain :class:`SessionConfig`."""
        return SessionConfig.model_validate(self.session.model_dump())


def parse_run_config(
    data: Mapping[str, Any],
    *,
    source: str = "configuration",
    flags: Mapping[str, str] | None = None,
) -> RunConfig:
    """Validate a configuration mapping (a parsed TOML file with the flags applied).

    Parameters
    ----------
    data
        Top-level keys and tables.
    source
        Where it came from, for messages (the file name).
    flags
        Top-level keys given on the command line -> the flag (``{"b": "--b"}``), so a
        message names the flag rather than the file.

    Raises
    ------
    ConfigFileError
        Every problem, each with the key, the value given and what is allowed.
    """
    try:
        return RunConfig.model_validate(dict(data))
    except ValidationError as exc:
        lines = explain(exc, _FileLocator(flags or {}))
        raise ConfigFileError(
            f"{source}: invalid configuration (docs/configuration.md lists every key):\n"
            + "\n".join(f"  {line}" for line in dict.fromkeys(lines))
        ) from None


def load_run_config(path: Path | None, *, overrides: Mapping[str, Any] | None = None) -> RunConfig:
    """Read and validate a TOML configuration (``None``: the paper's defaults).

    Parameters
    ----------
    path
        The TOML file, or None.
    overrides
        Top-level keys given as flags of ``run`` (``cutoff``, ``b``, ``bq``, ``gains``,
        ``preset``); they win over the file.

    Raises
    ------
    ConfigFileError
        The file is unreadable or not TOML, a key is unknown or a value not allowed.
    """
    data: dict[str, Any] = {}
    if path is not None:
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as exc:
            raise ConfigFileError(f"{path}: not valid TOML: {exc}") from exc
        except RecursionError:  # tomllib parses nested arrays and inline tables recursively
            raise ConfigFileError(
                f"{path}: not valid as a configuration: arrays or inline tables nested too "
                "deeply for the TOML reader; no key takes more than a list of values or "
                "of tables, check the brackets"
            ) from None
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigFileError(f"{path}: cannot read: {exc}") from exc
    given = dict(overrides or {})
    if "preset" in given:  # a --preset replaces the file's; the file's own keys still apply
        data.pop("preset_name", None)
    data.update(given)
    flags = {k: f"--{k}" for k in given}
    return parse_run_config(data, source=str(path or "command line"), flags=flags)


@dataclass(frozen=True)
class _FileLocator:
    """Keys of the file as the user wrote them: ``[run] lenient``, ``b`` or the flag ``--b``."""

    flags: Mapping[str, str]

    def where(self, loc: Loc) -> str:
        """``[run] lenient``, ``b`` or ``--b``: the key as the user wrote it."""
        parts = [str(p) for p in loc]
        if not parts:
            return "the file"
        if parts[0] == "session":
            parts = parts[1:]
            if parts and parts[0] in self.flags:
                return self.flags[parts[0]]
            return parts[0] if parts else "the top level"
        if len(parts) == 1:
            return f"[{parts[0]}]"
        return f"[{parts[0]}] " + ".".join(parts[1:])

    def allowed(self, loc: Loc) -> str:
        """The keys a table (or the top level) takes, for an unknown key's message."""
        table = str(loc[0]) if loc else ""
        if table == "session":
            session = ", ".join(sorted(k for k in SessionConfig.model_fields if k != "preset_name"))
            tables = ", ".join(f"[{t}]" for t in RunConfig.TABLES)
            return f"preset, the session parameters {session}, and the tables {tables}"
        fields = RunConfig.model_fields
        model = fields[table].annotation if table in fields else None
        if isinstance(model, type) and issubclass(model, BaseModel):
            return ", ".join(sorted(model.model_fields))
        return ""

    def is_top(self, loc: Loc) -> bool:
        """The top-level keys are gathered under ``session``."""
        return loc == ("session",)


def figure_table(fs: FigureSettings) -> dict[str, Any]:
    """The ``[figures]`` table of a written configuration (unset keys left out)."""
    return {k: v for k, v in fs.model_dump(mode="json").items() if v is not None}

"""The run's configuration file (TOML): one typed model for the whole file, validated up front.

:class:`RunConfig` is the file.  Its top-level keys are the session parameters
(:class:`~sessionval.evaluation.config.SessionConfig`'s fields, ``b``, ``bq``, ``cutoff``,
``gains``, …) and ``preset`` (a named published variant whose parameters the other keys
override); each table is one sub-model: ``[figures]`` (:class:`FigureSettings`), ``[run]``
(:class:`RunOptions`), ``[measures]`` (:class:`MeasureSelection`) and ``[statistics]``
(:class:`StatisticsSettings`).  Every table
forbids unknown keys and every value is strict: ``lenient = "false"`` is an error (a
string is not a boolean), ``cutoff = 10.5`` too.  A bad file raises one
:class:`ConfigFileError` listing every problem with the allowed keys or values, in
the toolkit's words.  ``docs/configuration.md`` is generated from these models
(:func:`sessionval.workflow.config_text.config_markdown`).

**Adding a table** is one sub-model: a :class:`Section` subclass with its keys
(``Field(default, description=...)``) and one field of :class:`RunConfig` named after
the table; the docs, the written ``config.toml`` and the error messages follow.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, ClassVar, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator
from pydantic_core import ErrorDetails

from ..errors import InputFormatError, MeasureSpecError
from ..evaluation.config import GainsField, SessionConfig, resolve_preset
from ..evaluation.gain_fit import fit_gains
from ..frame import JudgmentFrame, SessionFrame
from ..measures.registry import parse_measure
from ..models.judgments import GradeScale
from ..output.export import LARGE_ROWS

__all__ = [
    "EXPORT_FORMATS",
    "NO_JUDGMENTS",
    "ConfigFileError",
    "FigureSettings",
    "MeasureSelection",
    "MeasureSettings",
    "RunConfig",
    "RunOptions",
    "RunSettings",
    "Section",
    "StatisticsSettings",
    "StrictSessionConfig",
    "figure_table",
    "load_run_config",
    "measure_settings",
    "parse_run_config",
    "run_settings",
]

#: Why a run without judgments stops (the configuration asks for reference judgments).
NO_JUDGMENTS: Final = (
    'reference judgments are needed (give --qrels, or set judgments = "searcher" in the '
    "configuration to use the searchers' own grades)"
)

ExportFormat = Literal["csv", "parquet", "dta", "sav"]
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


@dataclass(frozen=True)
class MeasureSettings:
    """The measures a run computes beyond sDCG's summaries, resolved (canonical names).

    ``session``: the ``[measures] session`` list, or the preset's own measures when
    the file gives none; ``query``: single-query measures, one ``per_query`` column each.
    """

    session: tuple[str, ...] = ()
    query: tuple[str, ...] = ()

    @property
    def all(self) -> tuple[str, ...]:
        """Every measure, session measures first."""
        return (*self.session, *self.query)


def measure_settings(selection: MeasureSelection, *, preset: str | None) -> MeasureSettings:
    """The ``[measures]`` a run uses: without a ``session`` list, the preset's own measures.

    Examples
    --------
    >>> measure_settings(MeasureSelection(query=("nDCG@10",)), preset=None).all
    ('nDCG@10',)
    """
    session = selection.session
    if session is None:
        own = resolve_preset(preset).measures if preset else ()
        session = tuple(repr(parse_measure(m)) for m in own)
    return MeasureSettings(session=session, query=selection.query)


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
        lines = _explain(exc, flags or {})
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


# ---------------------------------------------------------------------------------------------
# messages in the toolkit's words

_TYPE_TEXT: Final = {
    "bool_type": "must be true or false (a TOML boolean, without quotes)",
    "int_type": "must be a whole number (without quotes)",
    "float_type": "must be a number (without quotes)",
    "string_type": "must be text in quotes",
    "tuple_type": 'must be a list, e.g. ["a", "b"]',
    "list_type": 'must be a list, e.g. ["a", "b"]',
    "model_type": "must be a table",
    "dict_type": "must be a table",
    "too_short": "must not be empty",
}


def _where(loc: tuple[int | str, ...], flags: Mapping[str, str]) -> str:
    """``[run] lenient``, ``b`` or ``--b``: the key as the user wrote it."""
    parts = [str(p) for p in loc]
    if not parts:
        return "the file"
    if parts[0] == "session":
        parts = parts[1:]
        if parts and parts[0] in flags:
            return flags[parts[0]]
        return parts[0] if parts else "the top level"
    if len(parts) == 1:
        return f"[{parts[0]}]"
    return f"[{parts[0]}] " + ".".join(parts[1:])


def _allowed_keys(loc: tuple[int | str, ...]) -> str:
    """The keys a table (or the top level) takes, for an unknown key's message."""
    table = str(loc[0]) if loc else ""
    if table == "session":
        session = ", ".join(sorted(k for k in SessionConfig.model_fields if k != "preset_name"))
        tables = ", ".join(f"[{t}]" for t in RunConfig.TABLES)
        return f"preset, the session parameters {session}, and the tables {tables}"
    model = RunConfig.model_fields[table].annotation if table in RunConfig.model_fields else None
    if isinstance(model, type) and issubclass(model, BaseModel):
        return ", ".join(sorted(model.model_fields))
    return ""


def _explain(exc: ValidationError, flags: Mapping[str, str]) -> list[str]:
    """One line per problem: where, the value given, what is allowed (no pydantic URLs)."""
    unknown: dict[tuple[int | str, ...], list[str]] = {}
    lines: list[str] = []
    for err in exc.errors(include_url=False):
        loc = tuple(err["loc"])
        if err["type"] == "extra_forbidden":
            unknown.setdefault(loc[:-1], []).append(str(loc[-1]))
            continue
        lines.append(_problem(err, loc, flags))
    for table, keys in unknown.items():
        where = "at the top level" if table == ("session",) else f"in {_where(table, flags)}"
        lines.append(f"unknown key(s) {sorted(keys)} {where}; allowed: {_allowed_keys(table)}")
    return lines


def _problem(err: ErrorDetails, loc: tuple[int | str, ...], flags: Mapping[str, str]) -> str:
    kind = err["type"]
    if kind in ("literal_error", "enum") and err.get("ctx"):
        reason = f"must be one of {err['ctx']['expected']}"
    elif kind in _TYPE_TEXT:
        reason = _TYPE_TEXT[kind]
    else:
        reason = err["msg"].removeprefix("Value error, ").replace("Input should be", "must be")
    if not loc:  # a problem of the file as a whole (an unknown preset, ...)
        return reason
    item = ""
    if isinstance(loc[-1], int):  # an item of a list: name the list and the item
        item = f" item {loc[-1] + 1}"
        loc = loc[:-1]
    where = _where(loc, flags) + item
    value = err.get("input")
    if kind in ("model_type", "dict_type") or isinstance(value, Mapping):
        return f"{where}: {reason}"
    return f"{where} = {value!r}: {reason}"


# ---------------------------------------------------------------------------------------------
# the settings of one run


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
    exports
        Write ``exports/`` (``False``: skipped, the report says so).
    file
        The whole validated configuration (a later step reads its own table here).
    csv_safe
        Neutralise spreadsheet formulas in CSV cells.
    measures
        Session and single-query measures computed beyond sDCG's summaries.
    statistics
        The ``[statistics]`` table.
    notes
        What the run decided on the user's behalf (e.g. the gain scheme fitted to
        the data's grade scale, :meth:`settled`), for the report and ``config.toml``.
    """

    config: SessionConfig
    cg_config: SessionConfig | None
    figures: FigureSettings
    lenient: bool
    formats: tuple[str, ...]
    exports: bool = True
    file: RunConfig = field(default_factory=RunConfig)
    csv_safe: bool = False
    measures: MeasureSettings = field(default_factory=MeasureSettings)
    notes: tuple[str, ...] = ()
    statistics: StatisticsSettings = field(default_factory=StatisticsSettings)

    def with_config(self, config: SessionConfig, *, notes: tuple[str, ...] = ()) -> RunSettings:
        """A copy with another session configuration (the CG curves follow its gains)."""
        cg = self.file.figures.cg_gains
        cg_config = config.replace(gains=cg) if cg is not None else None
        if cg_config is not None and cg_config.gains == config.gains:
            cg_config = None
        return replace(self, config=config, cg_config=cg_config, notes=(*self.notes, *notes))

    def settled(
        self,
        judgments: JudgmentFrame | None,
        frame: SessionFrame | None = None,
        *,
        user_scale: GradeScale | None = None,
    ) -> RunSettings:
        """The settings with ``gains = "auto"`` fitted to the data (once; a no-op after).

        The decision is :func:`~sessionval.evaluation.gain_fit.fit_gains`'s, the same
        that :func:`~sessionval.evaluation.session.evaluate` makes from Python; its
        note joins the run's notes.  With reference judgments the data's grades are
        known before any session is read (a one-pass run settles then).

        Raises
        ------
        JudgmentError
            A scheme the user chose has no gain for a grade of the data.
        """
        config, notes = fit_gains(self.config, judgments, frame, user_scale=user_scale)
        out = self.with_config(config, notes=notes) if config is not self.config else self
        cg = out.cg_config
        if cg is not None and not cg.gains_fitted:  # [figures] cg_gains = "auto"
            cg, _ = fit_gains(cg, judgments, frame, user_scale=user_scale)
            out = replace(out, cg_config=None if cg.gains == config.gains else cg)
        return out


def run_settings(
    config_path: Path | None,
    *,
    lenient: bool | None,
    has_qrels: bool,
    overrides: Mapping[str, Any] | None = None,
    csv_safe: bool | None = None,
    exports: bool | None = None,
) -> RunSettings:
    """Read and validate the run's configuration (the first step of a run).

    Parameters
    ----------
    config_path
        TOML configuration (``None``: the paper's defaults).
    lenient
        ``--lenient``/``--strict`` (``None``: the configuration's ``[run] lenient``).
    has_qrels
        Whether reference judgments were given.
    overrides
        Session parameters given as flags (``--cutoff``, ``--b``, ``--bq``, ``--gains``,
        ``--preset``): they win over the file.
    csv_safe
        ``--csv-safe`` (``None``: the configuration's ``[run] csv_safe``).
    exports
        ``--exports/--no-exports`` (``None``: the configuration's ``[run] exports``).

    Raises
    ------
    ConfigFileError
        Unreadable file, unknown key or value not allowed.
    InputFormatError
        Reference judgments needed but not given.
    """
    rc = load_run_config(config_path, overrides=overrides)
    config = rc.session_config()
    if not has_qrels and config.judgments == "reference":
        raise InputFormatError(f"no --qrels given: {NO_JUDGMENTS}")
    base = RunSettings(
        config=config,
        cg_config=None,
        figures=rc.figures,
        lenient=rc.run.lenient if lenient is None else lenient,
        formats=rc.run.formats,
        exports=rc.run.exports if exports is None else exports,
        file=rc,
        csv_safe=rc.run.csv_safe if csv_safe is None else csv_safe,
        measures=measure_settings(rc.measures, preset=config.preset_name),
        statistics=rc.statistics,
    )
    return base.with_config(config)


def figure_table(fs: FigureSettings) -> dict[str, Any]:
    """The ``[figures]`` table of a written configuration (unset keys left out)."""
    return {k: v for k, v in fs.model_dump(mode="json").items() if v is not None}

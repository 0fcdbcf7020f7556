"""What a run makes of its configuration: the settings validated before it reads a session.

The file itself (its TOML schema, reading it, merging the flags, the messages) is
:mod:`sessionval.workflow.config_file`; its names are re-exported here, where the run's
steps have always imported them.  :class:`RunSettings` is the run's validated settings
(:func:`run_settings`), :class:`MeasureSettings` the measures it computes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Final

from ..errors import InputFormatError
from ..evaluation.config import SessionConfig, resolve_preset
from ..evaluation.gain_fit import fit_gains
from ..frame import JudgmentFrame, SessionFrame
from ..measures.registry import parse_measure
from ..models.judgments import GradeScale
from .config_file import (
    EXPORT_FORMATS,
    ConfigFileError,
    FigureSettings,
    MeasureSelection,
    RunConfig,
    RunOptions,
    Section,
    StatisticsSettings,
    StrictSessionConfig,
    figure_table,
    load_run_config,
    parse_run_config,
)

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

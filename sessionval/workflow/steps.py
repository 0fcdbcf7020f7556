"""The named steps of ``sessionval run``, each a function with a clear input and output.

In order: :func:`load_step` (read and validate the study), :func:`write_validation`
(``validation.txt``, ``rejects.csv``), :func:`figure_cell` (which scenario and system
Figures 3 and 4 show), :func:`evaluate_step`, :func:`write_tables` (``tables/``) and
:func:`write_configuration` (``config.toml``, ``config.json``), :func:`figure_data`
(the tables behind the figures) and :func:`write_figure_tables`, :func:`draw_figures`
(``figures/``), :func:`write_exports_step` (``exports/``) and :func:`write_report_step`
(``report.html``); :meth:`~sessionval.workflow.outputs.RunOutputs.finish` then writes the
manifest.  :func:`sessionval.workflow.run` chains them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, cast

import numpy as np
import numpy.typing as npt
import pandas as pd

from ..analysis import curves
from ..analysis.stats import paired_comparison, score_table
from ..analysis.summary import StudySummary, summarize
from ..errors import InputFormatError, ValidationFailed
from ..evaluation.config import SessionConfig
from ..evaluation.result import SessionEvaluation
from ..evaluation.session import evaluate
from ..frame import LoadedStudy
from ..io.study import load_study
from ..output import plots
from ..output.export import ExportResult, Format, write_exports
from ..output.report import ReportFigure, ReportSection, render_report
from ..problems import Mode
from .outputs import RunOutputs
from .settings import FigureSettings, RunSettings, figure_table, to_toml

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = [
    "REPORT_MEASURES",
    "FigureCell",
    "FigureData",
    "ScoreTables",
    "draw_figures",
    "evaluate_step",
    "figure_cell",
    "figure_data",
    "load_step",
    "write_configuration",
    "write_exports_step",
    "write_figure_tables",
    "write_report_step",
    "write_tables",
    "write_validation",
    "write_validation_failure",
]

#: Per-session scores of the report's per-system table (those the evaluation has).
REPORT_MEASURES: Final = ("nsdcg", "sdcg", "avg_pos_nsdcg", "n_queries", "n_relevant_found")
#: Scores of the report's paired comparison when the study has two systems.
_PAIRED_MEASURES: Final = ("nsdcg", "sdcg")
_CG_MEASURES: Final = ("CG", "DCG", "nCG", "nDCG")


# ---------------------------------------------------------------------------------------------
# load and validate


def load_step(
    logs: Path,
    *,
    qrels: Path | None,
    mode: Mode,
    input_options: Mapping[str, Any] | None = None,
) -> LoadedStudy:
    """Read and validate the study: the run's only read of its input.

    Parameters
    ----------
    logs
        Study folder or file, in any format of :data:`sessionval.io.formats.FORMATS`.
    qrels
        Reference judgments, or None.
    mode
        ``"strict"`` (fail on any problem) or ``"lenient"`` (reject bad sessions).
    input_options
        ``fmt`` (default ``"auto"``) and the format's options, as
        :func:`sessionval.io.formats.load_input` takes them.

    Returns
    -------
    LoadedStudy

    Raises
    ------
    ValidationFailed
        Strict mode and the input has problems.
    """
    return load_study(logs, qrels=qrels, mode=mode, **dict(input_options or {}))


def write_validation_failure(outputs: RunOutputs, logs: Path, error: ValidationFailed) -> None:
    """Write ``validation.txt`` with the problems of a failed load and finish the manifest."""
    outputs.write_text("validation.txt", f"VALIDATION FAILED for {logs}\n\n{error}\n")
    outputs.finish()


def write_validation(outputs: RunOutputs, loaded: LoadedStudy) -> StudySummary:
    """Write the study summary and problems (``validation.txt``) and the rejects (``rejects.csv``).

    Returns
    -------
    StudySummary
        The summary written (the report shows it too).
    """
    summary = summarize(loaded)
    report = loaded.report
    lines = [summary.to_text()]
    if report.problems:
        lines += [
            "",
            f"{len(report.problems)} problem(s) in {report.sessions_rejected} rejected session(s):",
            *(f"  {q}" for q in report.problems),
        ]
    outputs.write_text("validation.txt", "\n".join(lines) + "\n")
    outputs.write_frame("rejects.csv", report.rejects)
    return summary


@dataclass(frozen=True)
class FigureCell:
    """The scenario of Figures 3 and 4 and the system of Figure 4."""

    scenario: str
    system: str


def _default_scenario(topic: npt.NDArray[Any], nq: npt.NDArray[np.integer[Any]], k: int) -> str:
    """Pick the topic with the most sessions of at least ``k`` queries (ties: first by name)."""
    names, codes = np.unique(topic, return_inverse=True)
    counts = np.bincount(codes, weights=(nq >= k).astype(float), minlength=names.size)
    return str(names[int(np.argmax(counts))])


def figure_cell(loaded: LoadedStudy, figures: FigureSettings) -> FigureCell:
    """Check ``[figures] scenario`` / ``system`` against the study, or pick them.

    The default scenario is the topic with the most sessions of at least
    ``min_queries`` queries; the default system the first by name.

    Raises
    ------
    InputFormatError
        The scenario is not a topic, or the system not a system, of the study.
    """
    sessions = loaded.frame.sessions
    topic = sessions["topic_id"].astype(str).to_numpy()
    system = sessions["system_id"].astype(str).to_numpy()
    nq = sessions["n_queries"].to_numpy()
    scenario = figures.scenario or _default_scenario(topic, nq, figures.min_queries)
    if scenario not in set(topic):
        raise InputFormatError(
            f"[figures] scenario {scenario!r} is not a topic of the study; "
            f"topics: {sorted(set(topic))}"
        )
    fig_system = figures.system or sorted(set(system))[0]
    if fig_system not in set(system):
        raise InputFormatError(
            f"[figures] system {fig_system!r} is not a system of the study; "
            f"systems: {sorted(set(system))}"
        )
    return FigureCell(scenario=scenario, system=fig_system)


# ---------------------------------------------------------------------------------------------
# evaluate and write the tables


def evaluate_step(loaded: LoadedStudy, config: SessionConfig) -> SessionEvaluation:
    """Evaluate every session of the study under ``config``."""
    return evaluate(loaded.frame, loaded.judgments, config)


@dataclass(frozen=True)
class ScoreTables:
    """The per-query and per-session tables of the evaluation (the exports and report use them)."""

    per_query: pd.DataFrame
    per_session: pd.DataFrame


def write_tables(outputs: RunOutputs, ev: SessionEvaluation) -> ScoreTables:
    """Write ``tables/per_position``, ``per_query`` and ``per_session`` as CSV and Parquet."""
    tables = ScoreTables(per_query=ev.per_query(), per_session=ev.per_session())
    for name, table in (
        ("per_position", ev.per_position()),
        ("per_query", tables.per_query),
        ("per_session", tables.per_session),
    ):
        for ext in ("csv", "parquet"):
            outputs.write_frame(f"tables/{name}.{ext}", table)
    return tables


def write_configuration(outputs: RunOutputs, settings: RunSettings, ev: SessionEvaluation) -> None:
    """Write the configuration actually used: ``config.toml`` (re-runnable) and ``config.json``."""
    params = settings.config.model_dump(mode="json")
    figures = figure_table(settings.figures)
    statistics = settings.statistics.model_dump(mode="json")
    outputs.write_text(
        "config.toml",
        to_toml(
            {"": params, "figures": figures, "statistics": statistics},
            header="sessionval run: the configuration actually used.\n"
            "Re-run with: sessionval run LOGS --qrels QRELS --out DIR --config config.toml",
        ),
    )
    evaluation = {k: v for k, v in ev.summary().items() if k != "config"}
    outputs.write_text(
        "config.json",
        json.dumps(
            {
                "session": params,
                "figures": figures,
                "statistics": statistics,
                "evaluation": evaluation,
            },
            indent=2,
        )
        + "\n",
    )


# ---------------------------------------------------------------------------------------------
# figures


@dataclass(frozen=True)
class FigureData:
    """The tables behind the figures, by figure name, and what Figure 4 shows."""

    tables: dict[str, pd.DataFrame]
    cell: FigureCell
    n_cell: int
    n_shown: int
    confidence: float | None = None


def figure_data(
    ev: SessionEvaluation,
    cell: FigureCell,
    figures: FigureSettings,
    *,
    cg_ev: SessionEvaluation | None = None,
    confidence: float | None = None,
) -> FigureData:
    """Compute the tables behind every figure.

    Parameters
    ----------
    ev
        The evaluation.
    cell
        Scenario and system of Figures 3 and 4.
    figures
        Figure settings (``ranks``, ``min_queries``, ``max_sessions``).
    cg_ev
        The evaluation behind the CG curves (``[figures] cg_gains``; default ``ev``).
    confidence
        Level of the confidence bands added to the averaged curves (Figure 1, Figure 2
        and the CG curves: ``se``, ``ci_low``, ``ci_high``); ``None``: no bands.

    Returns
    -------
    FigureData
        Tables ``fig1_last_vs_nonlast``, ``fig1b_best_vs_other``,
        ``fig2_session_nsdcg``, ``fig3_scenario_sdcg``, ``fig4_individual_sessions``
        and ``cg_CG`` … ``cg_nDCG``.
    """
    sessions = ev.frame.sessions
    topic = sessions["topic_id"].astype(str).to_numpy()
    system = sessions["system_id"].astype(str).to_numpy()
    nq = sessions["n_queries"].to_numpy()
    in_scen = topic == cell.scenario
    subsets = ["all sessions", f">= {figures.min_queries} queries"]
    all_s = curves.session_curves(ev, where=in_scen)
    all_s["subset"] = pd.Categorical(["all sessions"] * len(all_s), categories=subsets)
    data: dict[str, pd.DataFrame] = {
        "fig1_last_vs_nonlast": curves.query_curves(
            ev, compare="last", ranks=figures.ranks, confidence=confidence
        ),
        "fig1b_best_vs_other": curves.query_curves(
            ev, compare="best", ranks=figures.ranks, confidence=confidence
        ),
        "fig2_session_nsdcg": curves.session_curves(ev, confidence=confidence),
    }
    if (nq[in_scen] >= figures.min_queries).any():
        sub = curves.session_curves(ev, where=in_scen, min_queries=figures.min_queries)
        sub["subset"] = pd.Categorical([subsets[1]] * len(sub), categories=subsets)
        data["fig3_scenario_sdcg"] = pd.concat([all_s, sub], ignore_index=True)
    else:
        data["fig3_scenario_sdcg"] = all_s
    # Figure 4 draws one line per session: the first max_sessions of the cell, in study order
    in_cell = np.flatnonzero(in_scen & (system == cell.system))
    shown = np.zeros(len(system), dtype=bool)
    shown[in_cell[: figures.max_sessions]] = True
    data["fig4_individual_sessions"] = curves.individual_curves(ev, where=shown)
    cg = curves.cg_curves(
        cg_ev if cg_ev is not None else ev, ranks=figures.ranks, confidence=confidence
    )
    for m in _CG_MEASURES:
        data[f"cg_{m}"] = cg[cg["measure"] == m].reset_index(drop=True)
    return FigureData(
        tables=data,
        cell=cell,
        n_cell=in_cell.size,
        n_shown=int(shown.sum()),
        confidence=confidence,
    )


def write_figure_tables(outputs: RunOutputs, data: FigureData) -> None:
    """Write the table behind each figure as ``figures/<name>.csv``."""
    for name, table in data.tables.items():
        outputs.write_frame(f"figures/{name}.csv", table)


def draw_figures(
    outputs: RunOutputs, data: FigureData, settings: RunSettings
) -> list[ReportFigure]:
    """Draw every figure, write it as PNG, SVG and PDF, and return the report's figures."""
    config = settings.config
    params = config.model_dump(mode="json")
    # the CG curves run to the figures' ranks with their own gains, not to X or bq
    cg_params = (settings.cg_config or config).model_dump(mode="json")
    cg_params.pop("bq", None)
    cg_params.pop("cutoff", None)
    cutoff, scenario, fig_system = config.cutoff, data.cell.scenario, data.cell.system
    tables = data.tables
    # bands where the tables carry them (figure_data with a confidence level)
    bands = {name: "ci_low" in t.columns for name, t in tables.items()}
    cut = (
        f" (the first {data.n_shown} of {data.n_cell} sessions; [figures] max_sessions)."
        if data.n_shown < data.n_cell
        else "."
    )
    drawn: list[tuple[str, str, str, Axes]] = [
        (
            "fig1_last_vs_nonlast",
            "Last vs non-last queries (002, Figure 1)",
            "Mean query-discounted DCG by rank of each session's last query and of its "
            "earlier queries, per system.",
            plots.plot_query_curves(
                tables["fig1_last_vs_nonlast"],
                params=params,
                bands=bands["fig1_last_vs_nonlast"],
            ),
        ),
        (
            "fig1b_best_vs_other",
            "Best vs other queries (002, Figure 1 variant)",
            f"As Figure 1 with the best query (highest {config.best_by.upper()}) "
            "instead of the last.",
            plots.plot_query_curves(
                tables["fig1b_best_vs_other"],
                params=params,
                title="Best vs other queries",
                bands=bands["fig1b_best_vs_other"],
            ),
        ),
        (
            "fig2_session_nsdcg",
            "Mean normalised session DCG (002, Figure 2)",
            f"nsDCG over concatenated top-{cutoff} results averaged over all sessions per "
            f"system; sessions held after they stop ({config.stopped}).",
            plots.plot_session_curves(
                tables["fig2_session_nsdcg"],
                cutoff=cutoff,
                params=params,
                bands=bands["fig2_session_nsdcg"],
            ),
        ),
        (
            "fig3_scenario_sdcg",
            f"Scenario {scenario}: raw session DCG (002, Figure 3)",
            f"sDCG averaged over the sessions of scenario {scenario}, all of them and those "
            f"with at least {settings.figures.min_queries} queries.",
            plots.plot_session_curves(
                tables["fig3_scenario_sdcg"],
                cutoff=cutoff,
                params=params,
                normalised=False,
                style="subset",
                title=f"Scenario {scenario}: mean session DCG",
            ),
        ),
        (
            "fig4_individual_sessions",
            f"Individual sessions, {fig_system} × scenario {scenario} (002, Figure 4)",
            "Every session held constant after the searcher stopped; circles mark where "
            "each searcher stopped" + cut,
            plots.plot_individual_sessions(
                tables["fig4_individual_sessions"],
                cutoff=cutoff,
                params=params,
                title=f"{fig_system}, scenario {scenario}: individual sessions",
            ),
        ),
    ]
    for i, m in enumerate(_CG_MEASURES, start=1):
        drawn.append(
            (
                f"cg_{m}",
                f"{m} by rank per system (000, Figure {i})",
                f"Mean {m} vector over all queries of each system against the ideal vector.",
                plots.plot_cg_curves(
                    tables[f"cg_{m}"], measure=m, params=cg_params, bands=bands[f"cg_{m}"]
                ),
            )
        )
    figures: list[ReportFigure] = []
    for name, title, caption, ax in drawn:
        if bands.get(name):
            caption += f" {_band_caption(data.confidence, name)}"
        written = plots.save_figure(ax, outputs.root / "figures" / name)
        outputs.add(*written)
        figures.append(
            ReportFigure(
                title,
                plots.figure_bytes(ax, "png", dpi=150),
                caption=caption + " " + plots.params_text(params),
                svg=written[1].read_bytes(),
            )
        )
    return figures


def _band_caption(confidence: float | None, name: str) -> str:
    """How a figure's shaded bands were computed (the report says how every CI was)."""
    unit = "sessions" if name.startswith("fig2") else "queries"
    pct = f"{100 * confidence:g} % " if confidence is not None else ""
    return (
        f"Shaded: the {pct}confidence band of each mean, Student t over the {unit} "
        "(mean ± t × standard error)."
    )


# ---------------------------------------------------------------------------------------------
# exports and report


def write_exports_step(
    outputs: RunOutputs, tables: ScoreTables, settings: RunSettings, *, title: str
) -> ExportResult:
    """Write the scores for R, SPSS and Stata with the codebook into ``exports/``."""
    res = write_exports(
        outputs.root / "exports",
        per_session=tables.per_session,
        per_query=tables.per_query,
        parameters=settings.config.model_dump(mode="json"),
        formats=cast("tuple[Format, ...]", settings.formats),
        title=title,
    )
    outputs.add(*res.files)
    return res


def write_report_step(
    outputs: RunOutputs,
    *,
    loaded: LoadedStudy,
    summary: StudySummary,
    tables: ScoreTables,
    settings: RunSettings,
    figures: list[ReportFigure],
    source: Path,
    sections: Sequence[ReportSection] = (),
) -> pd.DataFrame:
    """Write ``report.html`` and return its per-system score table.

    The report shows the per-system scores of :data:`REPORT_MEASURES` and, in a
    study of two systems with searchers, their paired comparison by searcher;
    ``sections`` (statistics, correlations, notes) follow the scores.
    """
    per_session = tables.per_session
    measures = [m for m in REPORT_MEASURES if m in per_session.columns]
    scores = score_table(per_session, measures=measures)
    systems = sorted(set(loaded.frame.sessions["system_id"].astype(str)))
    paired = None
    if len(systems) == 2 and "user_id" in per_session.columns:
        paired = paired_comparison(
            per_session, measures=list(_PAIRED_MEASURES), a=systems[0], b=systems[1]
        )
    html = render_report(
        scores=scores,
        parameters=settings.config.model_dump(mode="json"),
        figures=figures,
        summary=summary,
        validation_line=loaded.report.summary_line(),
        validation_ok=not loaded.report.problems,
        rejects=loaded.report.rejects,
        paired=paired,
        title=f"sessionval report: {loaded.study.name or Path(source).name}",
        source=str(source),
        sections=sections,
    )
    outputs.write_text("report.html", html)
    return scores

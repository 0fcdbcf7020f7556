"""The drawing of the figures of ``sessionval run``: each table to PNG, SVG and PDF.

:func:`draw_figures` draws every figure :func:`~sessionval.workflow.figure_tables.figure_data`
found drawable, writes it in the ``[figures] formats`` and returns the report's figures
(a figure whose drawing fails on the data is noted, never fatal).  Headings and
captions name the papers: Järvelin et al. 2008 (Figures 1–4) and Järvelin & Kekäläinen
2002 (Figures 1–4).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

import pandas as pd

from ..errors import SessionvalError
from ..output import plots
from ..output.report import ReportFigure
from .figure_tables import CG_MEASURES, TITLES, FigureData
from .outputs import RunOutputs
from .settings import RunSettings

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["draw_figures"]


@dataclass(frozen=True)
class _Figure:
    """One figure to draw: its report heading, caption and drawing function."""

    title: str
    caption: str
    draw: Callable[[pd.DataFrame], Axes]


def _specs(data: FigureData, settings: RunSettings) -> dict[str, _Figure]:
    config = settings.config
    params = config.model_dump(mode="json")
    # the CG curves run to the figures' ranks with their own gains, not to X or bq
    cg_params = (settings.cg_config or config).model_dump(mode="json")
    cg_params.pop("bq", None)
    cg_params.pop("cutoff", None)
    cutoff, scenario, fig_system = config.cutoff, data.cell.scenario, data.cell.system
    colours = plots.system_colours(data.tables["fig2_session_nsdcg"]["system_id"])
    # bands where the tables carry them (figure_data with a confidence level)
    bands = {name: "ci_low" in t.columns for name, t in data.tables.items()}
    ranks = data.ranks
    depth = f", ranks 1–{ranks}"
    deeper = (
        f" The lists stop at rank {ranks} ([figures] ranks = {settings.figures.ranks})."
        if ranks < settings.figures.ranks
        else ""
    )
    cut = (
        f" (the first {data.n_shown} of {data.n_cell} sessions by session id; "
        "[figures] max_sessions)."
        if data.n_shown < data.n_cell
        else "."
    )

    def query_figure(name: str, caption: str, title: str) -> _Figure:
        """Figure 1 and 1b: one query of each session against the others, by rank."""
        return _Figure(
            TITLES[name],
            caption + deeper,
            lambda t: plots.plot_query_curves(
                t, params=params, title=title + depth, colours=colours, bands=bands[name]
            ),
        )

    specs = {
        "fig1_last_vs_nonlast": query_figure(
            "fig1_last_vs_nonlast",
            "Mean query-discounted DCG by rank of each session's last query and of its "
            "earlier queries, per system.",
            "Last vs non-last queries",
        ),
        "fig1b_best_vs_other": query_figure(
            "fig1b_best_vs_other",
            f"As Figure 1 with the best query (highest {config.best_by.upper()}) "
            "instead of the last.",
            "Best vs other queries",
        ),
        "fig2_session_nsdcg": _Figure(
            TITLES["fig2_session_nsdcg"],
            f"nsDCG over concatenated top-{cutoff} results averaged over all sessions per "
            f"system; sessions held after they stop ({config.stopped}).",
            lambda t: plots.plot_session_curves(
                t, cutoff=cutoff, params=params, colours=colours, bands=bands["fig2_session_nsdcg"]
            ),
        ),
        "fig3_scenario_sdcg": _Figure(
            TITLES["fig3_scenario_sdcg"].replace("One scenario", f"Scenario {scenario}"),
            f"sDCG averaged over the sessions of scenario {scenario}, all of them and those "
            f"with at least {settings.figures.min_queries} queries. {data.cell.note}".strip(),
            lambda t: plots.plot_session_curves(
                t,
                cutoff=cutoff,
                params=params,
                normalised=False,
                style="subset",
                title=f"Scenario {scenario}: mean session DCG",
                colours=colours,
            ),
        ),
        "fig4_individual_sessions": _Figure(
            TITLES["fig4_individual_sessions"].replace(
                "Individual sessions", f"Individual sessions, {fig_system} × scenario {scenario}"
            ),
            "Every session held constant after the searcher stopped; circles mark where "
            f"each searcher stopped{cut} {data.cell.note}".strip(),
            lambda t: plots.plot_individual_sessions(
                t,
                cutoff=cutoff,
                params=params,
                title=f"{fig_system}, scenario {scenario}: individual sessions",
            ),
        ),
    }
    for m in CG_MEASURES:
        specs[f"cg_{m}"] = _Figure(
            TITLES[f"cg_{m}"],
            f"Mean {m} vector over all queries of each system against the ideal vector." + deeper,
            _cg_drawing(m, cg_params, colours, plots.CG_TITLES[m] + depth, bands[f"cg_{m}"]),
        )
    return specs


def _cg_drawing(
    measure: str, params: dict[str, object], colours: dict[str, str], title: str, bands: bool
) -> Callable[[pd.DataFrame], Axes]:
    """The drawing of one CG figure (a function per measure, not a late-binding lambda)."""

    def draw(table: pd.DataFrame) -> Axes:
        return plots.plot_cg_curves(
            table, measure=measure, params=params, colours=colours, title=title, bands=bands
        )

    return draw


def _drawn_part(name: str, table: pd.DataFrame, ranks: int) -> pd.DataFrame:
    """The rows a figure draws: the rank curves stop at the deepest list."""
    if "rank" in table.columns and (name.startswith("cg_") or name.startswith("fig1")):
        return table[table["rank"] <= ranks]
    return table


def draw_figures(
    outputs: RunOutputs, data: FigureData, settings: RunSettings
) -> list[ReportFigure]:
    """Draw every figure that can be drawn, write it in ``[figures] formats``; the report's figures.

    The files are written at :data:`FILE_DPI` (PNG, SVG and PDF by default); the report
    shows the PNG written reduced to
    :data:`~sessionval.output.figure_writer.REPORT_DPI` (drawn at it when no PNG is
    written).  ``outputs.figures`` renders them, here or in the run's background
    process (:class:`~sessionval.output.figure_writer.FigureWriter`).  A figure whose
    drawing fails on the data (a
    :class:`~sessionval.errors.SessionvalError` of the plot functions) is added to
    ``data.skipped`` with the reason, like the figures :func:`figure_data` already found
    empty.
    """
    params = settings.config.model_dump(mode="json")
    figures: list[ReportFigure] = []
    for name, spec in _specs(data, settings).items():
        if name in data.skipped or name not in data.tables:
            continue
        try:
            ax = spec.draw(_drawn_part(name, data.tables[name], data.ranks))
        except SessionvalError as exc:
            data.skipped[name] = str(exc)
            continue
        files = outputs.figures.write(
            ax, outputs.path(f"figures/{name}"), formats=settings.figures.formats, dpi=FILE_DPI
        )
        outputs.add(*files.paths)
        caption = spec.caption
        if "ci_low" in data.tables[name].columns:
            caption += f" {_band_caption(data.confidence, name)}"
        figures.append(
            ReportFigure(
                spec.title,
                files.report_png,
                caption=caption + " " + plots.params_text(params),
                svg=files.svg,
            )
        )
    return figures


#: Resolution of the figures written (``save_figure``'s); the report's PNG is this one
#: reduced to :data:`~sessionval.output.figure_writer.REPORT_DPI`.
FILE_DPI: Final = 300


def _band_caption(confidence: float | None, name: str) -> str:
    """How a figure's shaded bands were computed (the report says how every CI was)."""
    unit = "sessions" if name.startswith("fig2") else "queries"
    pct = f"{100 * confidence:g} % " if confidence is not None else ""
    return (
        f"Shaded: the {pct}confidence band of each mean, Student t over the {unit} "
        "(mean ± t × standard error)."
    )

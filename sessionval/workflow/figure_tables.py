"""The tables behind the figures of ``sessionval run``: computed, checked, written.

:func:`figure_data` computes the table behind every figure and notes a figure that
cannot be drawn (no session in the cell, no position, no judged relevant document);
:func:`figure_data_from_partial` gives the same tables from the combined partials of a
distributed run; :func:`write_figure_tables` writes them as ``figures/<name>.csv``.
Headings name the papers: Järvelin et al. 2008 (Figures 1–4, sDCG) and Järvelin &
Kekäläinen 2002 (Figures 1–4, the CG family).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

import numpy as np
import pandas as pd

from ..analysis import curves
from ..analysis.curve_partials import CATEGORIES, FigurePartial, figure_partial, in_study_order
from ..analysis.curves import SessionSums, individual_table, session_table
from ..analysis.rank_curves import cg_table, query_table, rank_sums
from ..errors import MeasureSpecError
from ..evaluation.result import SessionEvaluation
from ..frame.order import id_order
from ..kernels.segments import offsets_from_counts
from .figure_cell import FigureCell
from .outputs import RunOutputs
from .settings import FigureSettings

__all__ = [
    "CG_MEASURES",
    "JARVELIN_2008",
    "JK_2002",
    "TITLES",
    "FigureData",
    "figure_data",
    "figure_data_from_partial",
    "figure_partial_of",
    "write_figure_tables",
]

#: How the report names the papers whose figures it redraws.
JARVELIN_2008: Final = "Järvelin et al. 2008"
JK_2002: Final = "Järvelin & Kekäläinen 2002"
CG_MEASURES: Final = ("CG", "DCG", "nCG", "nDCG")

#: Report headings: the paper and figure each one redraws.
TITLES: Final[dict[str, str]] = {
    "fig1_last_vs_nonlast": f"Last vs non-last queries ({JARVELIN_2008}, Figure 1)",
    "fig1b_best_vs_other": f"Best vs other queries ({JARVELIN_2008}, Figure 1 variant)",
    "fig2_session_nsdcg": f"Mean normalised session DCG ({JARVELIN_2008}, Figure 2)",
    "fig3_scenario_sdcg": f"One scenario: raw session DCG ({JARVELIN_2008}, Figure 3)",
    "fig4_individual_sessions": f"Individual sessions ({JARVELIN_2008}, Figure 4)",
    **{
        f"cg_{m}": f"{m} by rank per system ({JK_2002}, Figure {i})"
        for i, m in enumerate(CG_MEASURES, start=1)
    },
}


@dataclass(frozen=True)
class FigureData:
    """The tables behind the figures, by figure name, and what the figures show.

    ``ranks`` is the last rank drawn in Figure 1 and the CG curves: ``[figures] ranks``,
    or the deepest logged list when that is shorter (the tables keep ``[figures]
    ranks``).  ``skipped`` holds the figures that cannot be drawn, with the reason.
    """

    tables: dict[str, pd.DataFrame]
    cell: FigureCell
    n_cell: int
    n_shown: int
    ranks: int = 100
    skipped: dict[str, str] = field(default_factory=dict)
    confidence: float | None = None

    @property
    def notes(self) -> tuple[str, ...]:
        """The report's notes on the figures: those not drawn, and why."""
        return tuple(f"{TITLES.get(k, k)} is not drawn: {why}" for k, why in self.skipped.items())


def _empty_reason(name: str, table: pd.DataFrame) -> str | None:
    """Why the table behind a figure cannot be drawn, or None."""
    if len(table) == 0:
        return "its table is empty (no session or query to average)"
    if "value" in table.columns and not np.isfinite(table["value"].to_numpy(float)).any():
        if name.startswith("cg_n"):
            return "no query has a judged relevant document, so the normalised curve is undefined"
        return "every value is undefined"
    return None


def figure_data(
    ev: SessionEvaluation,
    cell: FigureCell,
    figures: FigureSettings,
    *,
    cg_ev: SessionEvaluation | None = None,
    confidence: float | None = None,
) -> FigureData:
    """Compute the tables behind every figure (and say which cannot be drawn).

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
        (when the cell has sessions) and ``cg_CG`` … ``cg_nDCG``.
    """
    sessions = ev.frame.sessions
    topic = sessions["topic_id"].astype(str).to_numpy()
    system = sessions["system_id"].astype(str).to_numpy()
    nq = sessions["n_queries"].to_numpy()
    in_scen = topic == cell.scenario
    # Figure 1 (last, best) and the CG curves: one pass over the result rows for the three
    cg_source = cg_ev if cg_ev is not None else ev
    last, best, cg_sums = rank_sums(
        ev, ranks=figures.ranks, squares=confidence is not None, cg_ev=cg_source
    )
    dtypes = {"system_id": sessions["system_id"].dtype}
    data: dict[str, pd.DataFrame] = {
        "fig1_last_vs_nonlast": query_table(last, ev.config, dtypes=dtypes, confidence=confidence),
        "fig1b_best_vs_other": query_table(best, ev.config, dtypes=dtypes, confidence=confidence),
        "fig2_session_nsdcg": curves.session_curves(ev, confidence=confidence),
    }
    del last, best
    long_ones = None
    if (nq[in_scen] >= figures.min_queries).any():
        long_ones = curves.session_curves(ev, where=in_scen, min_queries=figures.min_queries)
    data["fig3_scenario_sdcg"] = _scenario_table(
        curves.session_curves(ev, where=in_scen), long_ones, figures
    )
    # Figure 4 draws one line per session: the first max_sessions of the cell by session id,
    # so the figure does not depend on the order of the input
    in_cell = np.flatnonzero(in_scen & (system == cell.system))
    ids = sessions["session_id"].astype(str).to_numpy()[in_cell]
    in_cell = in_cell[np.argsort(ids, kind="stable")]
    shown = np.zeros(len(system), dtype=bool)
    shown[in_cell[: figures.max_sessions]] = True
    if in_cell.size:
        fig4 = curves.individual_curves(ev, where=shown)
        # the shown sessions' ids only: the table does not carry every session id of the study
        fig4["session_id"] = fig4["session_id"].cat.remove_unused_categories()
        data["fig4_individual_sessions"] = fig4
    cg = cg_table(cg_sums, cg_source.config, confidence=confidence)
    deepest = int(ev.frame.queries["n_results"].max()) if ev.frame.n_queries else 0
    return _finished(data, cg, cell, figures, in_cell.size, deepest, confidence)


def _scenario_table(
    all_sessions: pd.DataFrame, long_ones: pd.DataFrame | None, figures: FigureSettings
) -> pd.DataFrame:
    """Figure 3's table: the scenario's curves, all sessions and (when some) the long ones."""
    subsets = ["all sessions", f">= {figures.min_queries} queries"]
    all_sessions["subset"] = pd.Categorical([subsets[0]] * len(all_sessions), categories=subsets)
    if long_ones is None:
        return all_sessions
    long_ones["subset"] = pd.Categorical([subsets[1]] * len(long_ones), categories=subsets)
    return pd.concat([all_sessions, long_ones], ignore_index=True)


def _finished(
    data: dict[str, pd.DataFrame],
    cg: pd.DataFrame,
    cell: FigureCell,
    figures: FigureSettings,
    n_cell: int,
    deepest: int,
    confidence: float | None,
) -> FigureData:
    """The :class:`FigureData` of the tables (the CG curves split by measure); the empty noted."""
    skipped: dict[str, str] = {}
    if "fig4_individual_sessions" not in data:
        skipped["fig4_individual_sessions"] = (
            f"system {cell.system!r} has no session in scenario {cell.scenario!r}"
        )
    for m in CG_MEASURES:
        data[f"cg_{m}"] = cg[cg["measure"] == m].reset_index(drop=True)
    for name, table in data.items():
        reason = _empty_reason(name, table)
        if reason is not None:
            skipped[name] = reason
    return FigureData(
        tables=data,
        cell=cell,
        n_cell=n_cell,
        n_shown=min(n_cell, figures.max_sessions),
        ranks=max(1, min(figures.ranks, deepest)),
        skipped=skipped,
        confidence=confidence,
    )


def figure_partial_of(
    ev: SessionEvaluation,
    figures: FigureSettings,
    *,
    cg_ev: SessionEvaluation | None = None,
    bands: bool = False,
) -> FigurePartial:
    """The :class:`~sessionval.analysis.curve_partials.FigurePartial` of a partition's evaluation.

    ``bands``: keep the sums of squares of the confidence bands (``[statistics] bands``);
    ``cg_ev``: the partition's evaluation with ``[figures] cg_gains`` when they differ.
    """
    return figure_partial(
        ev,
        ranks=figures.ranks,
        min_queries=figures.min_queries,
        max_sessions=figures.max_sessions,
        squares=bands,
        cg_ev=cg_ev,
    )


def figure_data_from_partial(
    partial: FigurePartial,
    cell: FigureCell,
    figures: FigureSettings,
    *,
    confidence: float | None = None,
) -> FigureData:
    """:func:`figure_data` of the whole study from the combined partials of its partitions.

    The same tables (columns, dtypes, row order; values to the last bits of the sums'
    order, :mod:`sessionval.analysis.curve_partials`), from the same table functions.

    Raises
    ------
    MeasureSpecError
        ``figures`` differs from the settings the partials were taken with, or bands are
        asked of partials taken without their squares.
    """
    taken = (partial.ranks, partial.min_queries, partial.max_sessions)
    if taken != (figures.ranks, figures.min_queries, figures.max_sessions):
        raise MeasureSpecError(
            f"the figure partials were taken with [figures] ranks, min_queries, max_sessions "
            f"= {taken}, not {(figures.ranks, figures.min_queries, figures.max_sessions)}"
        )
    if confidence is not None and not partial.squares:
        raise MeasureSpecError(
            "confidence bands need figure partials taken with their squares (bands=True)"
        )
    p = in_study_order(partial)
    config = p.config
    dtypes = {c: pd.CategoricalDtype(p.categories[c]) for c in CATEGORIES}
    data: dict[str, pd.DataFrame] = {
        "fig1_last_vs_nonlast": query_table(p.last, config, dtypes=dtypes, confidence=confidence),
        "fig1b_best_vs_other": query_table(p.best, config, dtypes=dtypes, confidence=confidence),
        "fig2_session_nsdcg": session_table(
            p.sessions, config, dtypes=dtypes, confidence=confidence
        ),
    }

    def scenario(sums: SessionSums) -> pd.DataFrame | None:
        """The scenario's curves per system; None when it has no session of ``sums``."""
        rows = np.flatnonzero(sums.labels["topic_id"].to_numpy() == cell.scenario)
        if not rows.size and sums is p.scenario_long:
            return None
        return session_table(sums.take(rows, ["system_id"]), config, dtypes=dtypes)

    all_sessions = scenario(p.scenario_all)
    if all_sessions is not None:
        long_ones = scenario(p.scenario_long)
        data["fig3_scenario_sdcg"] = _scenario_table(all_sessions, long_ones, figures)
    cand = p.candidates
    in_cell = np.flatnonzero(
        (cand.ids["topic_id"].to_numpy() == cell.scenario)
        & (cand.ids["system_id"].to_numpy() == cell.system)
    )
    if in_cell.size:
        in_cell = in_cell[np.argsort(cand.ids["session_id"].to_numpy(dtype=str)[in_cell])]
        shown = cand.take(in_cell[: figures.max_sessions])
        # the sessions in the study's order, which is their id order
        shown = shown.take(id_order(shown.ids["session_id"]))
        empty = p.categories["session_id"]
        sids = pd.Index(shown.ids["session_id"].to_numpy(), dtype=empty.dtype, name=empty.name)
        ids = shown.ids.astype(dtypes | {"session_id": pd.CategoricalDtype(sids)})
        data["fig4_individual_sessions"] = individual_table(
            ids,
            offsets_from_counts(shown.plen)[:-1],
            shown.plen,
            shown.vectors,
            config,
            n_p=int(shown.plen.max()),
        )
    cg = cg_table(p.cg, p.cg_config, confidence=confidence)
    n_cell = int(
        p.cells.loc[
            (p.cells["topic_id"] == cell.scenario) & (p.cells["system_id"] == cell.system),
            "n_sessions",
        ].sum()
    )
    return _finished(data, cg, cell, figures, n_cell, p.deepest, confidence)


def write_figure_tables(outputs: RunOutputs, data: FigureData) -> None:
    """Write the table behind each figure as ``figures/<name>.csv``, rows in id order.

    The rows are sorted by session and system id (stable: the curve's own order within
    an id), so the file does not depend on the order of the sessions in the input.
    """
    for name, table in data.tables.items():
        ids = [c for c in ("system_id", "session_id") if c in table.columns]
        if ids:
            table = table.sort_values(ids, key=lambda s: s.astype(str), kind="stable")
        outputs.write_frame(f"figures/{name}.csv", table.reset_index(drop=True))

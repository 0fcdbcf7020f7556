"""The run's correlation step: session measures against the searchers' post-task ratings.

:func:`correlation_step` runs when the study's sessions carry ``rating_*`` columns: it
writes ``tables/rating_correlations.csv`` (:func:`sessionval.analysis.correlations.
rating_correlations`), draws ``figures/rating_correlations`` (each measure against each
rating: one point per session, or a 2-D histogram of a panel of more than ``[figures]
density_points`` sessions; the points in ``figures/rating_correlations.csv``, Parquet for
a large study) and returns the report's section; without ratings it writes nothing.
"""

from __future__ import annotations

from typing import Final

import numpy as np
import pandas as pd

from ..analysis.correlations import rating_columns, rating_correlations
from ..analysis.rating_sums import RatingSums, pearson_from_sums, rating_sums
from ..output import plots
from ..output.rating_plots import RASTER_POINTS, panel_sizes
from ..output.report import ReportFigure, ReportSection, ReportTable
from .outputs import RunOutputs
from .settings import RunSettings

__all__ = [
    "CORRELATED_SCORES",
    "correlated_measures",
    "correlation_from_sums",
    "correlation_step",
    "rating_partial",
]

#: sDCG's own per-session scores correlated with the ratings (those the table has).
CORRELATED_SCORES: Final = ("n_queries", "sdcg", "nsdcg", "sdcg_per_query", "avg_pos_nsdcg")


def correlated_measures(per_session: pd.DataFrame, settings: RunSettings) -> list[str]:
    """The measures to correlate: sDCG's summaries, then the ``[measures] session`` ones."""
    wanted = [*CORRELATED_SCORES, *settings.measures.session]
    return [m for m in dict.fromkeys(wanted) if m in per_session.columns]


def _points(per_session: pd.DataFrame, measures: list[str], ratings: list[str]) -> pd.DataFrame:
    """The figure's points, one row per (session, measure, rating): the table behind it.

    Panel by panel (each measure with each rating), the sessions in the table's order.
    """
    ids = per_session["session_id"].astype(str).array
    n, pairs = len(ids), [(m, r) for m in measures for r in ratings]
    values = {
        c: per_session[c].to_numpy(dtype="float64", na_value=float("nan"))
        for c in dict.fromkeys([*measures, *ratings])
    }
    # the text columns as takes of their distinct values: no Python string per row
    panel = np.repeat(np.arange(len(pairs)), n)
    names = {k: pd.Series([p[k] for p in pairs], dtype=ids.dtype).array for k in (0, 1)}
    return pd.DataFrame(
        {
            "session_id": ids.take(np.tile(np.arange(n), len(pairs))),
            "measure": names[0].take(panel),
            "value": np.concatenate([values[m] for m, _ in pairs] or [np.zeros(0)]),
            "rating": names[1].take(panel),
            "rating_value": np.concatenate([values[r] for _, r in pairs] or [np.zeros(0)]),
        }
    )


def correlation_step(
    outputs: RunOutputs, per_session: pd.DataFrame, settings: RunSettings, *, figure: bool = True
) -> ReportSection | None:
    """Correlate the measures with the ratings; write the table and figure; the report section.

    ``figure=False`` (``run --no-figures``) writes and reports the table alone.

    Returns
    -------
    ReportSection or None
        ``None`` (and nothing written) when no session carries a rating.
    """
    ratings = rating_columns(per_session)
    if not ratings:
        return None
    measures = correlated_measures(per_session, settings)
    table = rating_correlations(per_session, measures=measures, ratings=ratings)
    figures = _figure(outputs, per_session, settings, measures, ratings, table) if figure else ()
    return _section(outputs, table, figures)


def rating_partial(per_session: pd.DataFrame, settings: RunSettings) -> RatingSums:
    """One partition's sums for :func:`correlation_from_sums` (a worker of a distributed run).

    Every ``rating_*`` column of the table, with a value in this partition or not.
    """
    ratings = [str(c) for c in per_session.columns if str(c).startswith("rating_")]
    return rating_sums(per_session, correlated_measures(per_session, settings), ratings)


def correlation_from_sums(outputs: RunOutputs, sums: RatingSums) -> ReportSection | None:
    """:func:`correlation_step` of a distributed run, from the partitions' combined sums.

    Writes ``tables/rating_correlations`` with ``n`` and Pearson's r and p equal to the
    local table's (:func:`~sessionval.analysis.rating_sums.pearson_from_sums`);
    Spearman's and Kendall's columns are NaN and the figure is not drawn (both need
    every session), and the section says how to compute them.

    Returns
    -------
    ReportSection or None
        ``None`` (and nothing written) when no session carries a rating.
    """
    if not any(sums.rated > 0):
        return None
    return _section(outputs, pearson_from_sums(sums), (), distributed=True)


#: What a distributed run leaves out of the correlations, and how to get it.
_DISTRIBUTED_NOTE = (
    "This run kept its sessions on the workers: Pearson's r is computed from sums over "
    "the partitions, but Spearman's rho and Kendall's tau rank every session of the study "
    "and are left out (NaN), as is the figure of every session's point. Compute them on the "
    "per-session parts the workers wrote: sessionval.analysis.correlations."
    "rating_correlations(pd.read_parquet('tables/per_session/'))."
)


def _section(
    outputs: RunOutputs,
    table: pd.DataFrame,
    figures: tuple[ReportFigure, ...],
    *,
    distributed: bool = False,
) -> ReportSection:
    """Write the correlation table; the report section showing it."""
    for ext in ("csv", "parquet"):
        outputs.write_frame(f"tables/rating_correlations.{ext}", table, background=outputs.writes)
    n = int(table["n"].max()) if len(table) else 0
    return ReportSection(
        id="rating-correlations",
        title="Measures against the searchers' ratings",
        intro=(
            f"Correlation of each per-session measure with each post-task rating over the "
            f"{n} sessions with both values (Jiang & Allan, CHIIR 2016): Pearson's r, "
            "Spearman's rho and Kendall's tau-b with their two-sided p-values (scipy). "
            "A rating where higher means worse (difficulty) correlates negatively with a "
            "good measure.",
        ),
        tables=(
            ReportTable(
                "Correlations (tables/rating_correlations.csv)",
                table,
                note="n: sessions with both values; NaN with fewer than 3 sessions or a "
                "constant column.",
                digits=3,
            ),
        ),
        figures=figures,
        notes=(_DISTRIBUTED_NOTE,) if distributed else (),
    )


def _figure(
    outputs: RunOutputs,
    per_session: pd.DataFrame,
    settings: RunSettings,
    measures: list[str],
    ratings: list[str],
    table: pd.DataFrame,
) -> tuple[ReportFigure, ...]:
    """Draw and write each measure against each rating (and the points behind it)."""
    params = settings.config.model_dump(mode="json")
    threshold = settings.figures.density_points
    fig = plots.plot_rating_scatter(
        per_session,
        measures=measures,
        ratings=ratings,
        correlations=table,
        params=params,
        density_points=threshold,
    )
    (outputs.root / "figures").mkdir(parents=True, exist_ok=True)
    # the points repeat each session once per panel: as CSV 114 MB at 200k sessions, so a
    # study whose figure is rasterised gets them in Parquet
    ext = "parquet" if len(per_session) > RASTER_POINTS else "csv"
    points = f"figures/rating_correlations.{ext}"
    # encoded on the run's writer thread while the figure is laid out
    outputs.write_frame(points, _points(per_session, measures, ratings), background=outputs.writes)
    files = outputs.figures.write(
        fig, outputs.root / "figures" / "rating_correlations", formats=settings.figures.formats
    )
    outputs.add(*files.paths)
    dense = bool((panel_sizes(per_session, measures, ratings) > threshold).any())
    drawn = (
        f"A panel of more than {threshold:,} sessions ([figures] density_points) is a 2-D "
        "histogram of them: the colour of a cell is the number of sessions in it (log "
        "scale); a smaller panel draws one point per session"
        if dense
        else "One point per session"
    )
    return (
        ReportFigure(
            "Each measure against each rating",
            files.report_png,
            caption=f"{drawn}; the black line joins the mean per rating level (the "
            f"points: {points}). " + plots.params_text(params),
            svg=files.svg,
        ),
    )

"""The statistics of ``sessionval run``: its ``[statistics]`` settings and its report sections.

A user study compares systems within searchers.  :func:`statistics_step` builds, from
the per-session table:

* every pair of systems compared by searcher (each searcher's sessions averaged per
  system, searchers who used both systems paired) with the configured test and
  multiplicity correction, effect sizes and confidence intervals
  (:func:`sessionval.analysis.compare.compare_systems`), and the Friedman test and
  two-way ANOVA over searchers when there are three systems or more;
* the linear mixed model of each score, system fixed, searcher and topic random
  (:func:`sessionval.analysis.mixed.mixed_model`);

writes them as ``tables/comparisons.csv`` and ``tables/mixed_model.csv``, and returns
the report sections that show them, each saying how its numbers were computed.

The ``[statistics]`` table of the configuration is
:class:`~sessionval.workflow.settings.StatisticsSettings` (``docs/configuration.md``).
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from ..analysis.compare import blocked_scores, compare_systems, omnibus_tests
from ..analysis.mixed import mixed_model
from ..errors import StatisticsError
from ..output.report import ReportSection, ReportTable
from .outputs import RunOutputs
from .settings import StatisticsSettings

__all__ = [
    "StatisticsResult",
    "statistics_step",
]


@dataclass(frozen=True)
class StatisticsResult:
    """What :func:`statistics_step` computed and the report sections showing it."""

    comparisons: pd.DataFrame
    omnibus: pd.DataFrame
    mixed: pd.DataFrame
    sections: tuple[ReportSection, ...]


_SHOWN = ["a", "b", "n", "mean_a", "mean_b", "diff", "ci_low", "ci_high", "effect_size",
          "statistic", "p", "p_adjusted", "significant"]  # fmt: skip
_TESTS = {
    "paired-t": "the paired t test",
    "wilcoxon": "the Wilcoxon signed-rank test",
    "sign": "the sign test",
    "randomisation": "Fisher's paired randomisation test (exact for up to 16 searchers, "
    "otherwise {B} random sign vectors with the +1 correction)",
    "bootstrap": "Sakai's (2007) paired bootstrap test with the studentised statistic "
    "({B} resamples)",
}
_CORRECTIONS = {
    "holm": "Holm's step-down correction over the pairs of each score",
    "bonferroni": "the Bonferroni correction over the pairs of each score",
    "bh": "the Benjamini-Hochberg correction (false discovery rate) over the pairs",
    "tukey-hsd": "Tukey's HSD, blocked by searcher (on the searchers who used every system)",
    "none": "no correction for multiple comparisons",
}
_CI = {
    "t": "Student t intervals of the mean difference (n - 1 degrees of freedom)",
    "bootstrap-t": "studentised bootstrap (bootstrap-t) intervals from the test's resamples",
    "tukey-hsd": "simultaneous Tukey intervals (studentised range, two-way ANOVA residual)",
    "randomised-tukey-hsd": "simultaneous intervals from the randomised range distribution",
}


def statistics_step(
    outputs: RunOutputs, per_session: pd.DataFrame, settings: StatisticsSettings
) -> StatisticsResult:
    """Compare the systems by searcher and fit the mixed model; write the tables.

    Parameters
    ----------
    outputs
        The run's output folder.
    per_session
        The per-session table (``user_id``, ``topic_id``, ``system_id`` and the scores).
    settings
        The ``[statistics]`` settings.

    Returns
    -------
    StatisticsResult
        Empty tables and an explanatory note when the study has one system or no
        searcher used two systems.
    """
    measures = [m for m in settings.measures if m in per_session.columns]
    notes: list[str] = [
        f"{m}: not a per-session score of this run, left out"
        for m in settings.measures
        if m not in per_session.columns
    ]
    systems = sorted(set(per_session["system_id"].astype(str)))
    empty = pd.DataFrame()
    comparisons, omnibus, mixed = empty, empty, empty
    if len(systems) < 2:
        notes.append("The study has one system: there is nothing to compare.")
    elif not measures:
        notes.append("No score of [statistics] measures to compare.")
    else:
        long = blocked_scores(per_session, measures=measures)
        try:
            comparisons = compare_systems(
                long,
                test=settings.test,
                correction=settings.correction,
                alpha=settings.alpha,
                confidence=settings.confidence,
                resamples=settings.resamples,
                seed=settings.seed,
                effect_size=settings.effect_size,
            )
            notes += comparisons.attrs.get("notes", [])
        except StatisticsError as exc:
            notes.append(f"The pairwise comparison could not be made: {exc}")
        if len(systems) >= 3:
            try:
                omnibus = omnibus_tests(long)
            except StatisticsError as exc:
                notes.append(f"The tests over all systems could not be made: {exc}")
        if settings.mixed_model:
            try:
                mixed = mixed_model(per_session, measures=measures, confidence=settings.confidence)
            except StatisticsError as exc:
                notes.append(f"The mixed model was not fitted: {exc}")
    for name, table in (("comparisons", comparisons), ("mixed_model", mixed)):
        if not table.empty:
            outputs.write_frame(f"tables/{name}.csv", table)
    return StatisticsResult(
        comparisons=comparisons,
        omnibus=omnibus,
        mixed=mixed,
        sections=_sections(comparisons, omnibus, mixed, settings, tuple(notes)),
    )


def _sections(
    comparisons: pd.DataFrame,
    omnibus: pd.DataFrame,
    mixed: pd.DataFrame,
    settings: StatisticsSettings,
    notes: tuple[str, ...],
) -> tuple[ReportSection, ...]:
    """The report sections: the comparison of systems and the mixed model."""
    pct = f"{100 * settings.confidence:g}"
    tables = []
    intro = [
        "Every pair of systems, compared within searchers: each searcher's sessions are "
        "averaged per system and the searchers who used both systems form the pairs "
        "(n). Test: " + _TESTS[settings.test].format(B=settings.resamples) + "; p_adjusted: "
        f"{_CORRECTIONS[settings.correction]}; significant: p_adjusted < {settings.alpha:g}.",
    ]
    if not comparisons.empty:
        method = str(comparisons["ci_method"].iloc[0])
        kind = str(comparisons["effect_size_kind"].iloc[0])
        intro.append(
            f"Intervals ({pct} %): {_CI.get(method, method)}. Effect size: {kind} "
            "(d_z: mean difference / SD of the differences; ES_E2: mean difference / "
            "square root of the two-way ANOVA residual variance; g_z: d_z with Hedges' "
            "small-sample correction). Written to tables/comparisons.csv."
        )
        for m, part in comparisons.groupby("measure", sort=False):
            tables.append(ReportTable(f"{m}: pairs of systems", part[_SHOWN].copy()))
    if not omnibus.empty:
        tables.append(
            ReportTable(
                "All systems at once (Friedman test, two-way ANOVA searcher × system)",
                omnibus,
                note="On the searchers who used every system.",
            )
        )
    sections = [
        ReportSection(
            id="comparison",
            title="Comparison of systems",
            intro=tuple(intro),
            tables=tuple(tables),
            notes=notes,
        )
    ]
    if not mixed.empty:
        sections.append(
            ReportSection(
                id="mixed-model",
                title="Linear mixed model",
                intro=(
                    "Each session score modelled as score = system + searcher + topic + "
                    "error, with system a fixed effect and searcher and topic crossed "
                    "random intercepts (statsmodels MixedLM, REML): the analysis a "
                    "Latin-square design asks for. Fixed effects are contrasts with the "
                    f"first system; {pct} % Wald confidence intervals (estimate ± z × "
                    "standard error). Variances of the random effects and the residual "
                    "are estimates only. Written to tables/mixed_model.csv.",
                ),
                tables=tuple(
                    ReportTable(f"{m}", part.drop(columns=["measure"]))
                    for m, part in mixed.groupby("measure", sort=False)
                ),
            )
        )
    return tuple(sections)

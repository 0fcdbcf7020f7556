"""The statistics of ``sessionval run``: its ``[statistics]`` settings and its report sections.

:func:`statistics_step` detects the study's design from the per-session table
(:func:`sessionval.analysis.design.detect_design`, overridden by ``[statistics] design``
and ``block``) and builds:

* every pair of systems compared as the design asks
  (:func:`sessionval.analysis.by_design.compare_per_session`: by topic for runs, by
  searcher or with searcher and topic blocks within searchers, Welch between
  searchers) with the multiplicity correction, effect sizes and confidence intervals,
  and the Friedman test and two-way ANOVA over the blocks when there are three systems
  or more and the comparison is paired;
* the linear mixed model of each score, system fixed, searcher and topic random
  (:func:`sessionval.analysis.mixed.mixed_model`: crossed within searchers, searchers
  nested in systems between searchers, cluster-robust OLS above its size threshold;
  the ``estimator`` column says which), not for runs (their searcher is the system and
  the pairs by topic are the test) nor for one system;

writes them as ``tables/comparisons.csv`` and ``tables/mixed_model.csv``, and returns
the report sections that show them, each saying how its numbers were computed.

The ``[statistics]`` table of the configuration is
:class:`~sessionval.workflow.settings.StatisticsSettings` (``docs/configuration.md``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..analysis.by_design import compare_cells, compare_per_session
from ..analysis.cell_sums import (
    CellSums,
    blocked_scores_from_cells,
    cell_sums,
    combine,
    design_from_cells,
    score_measures,
    score_table_from_cells,
    unjudged_from_cells,
)
from ..analysis.compare import blocked_scores, omnibus_tests
from ..analysis.design import Design, detect_design
from ..analysis.mixed import mixed_model
from ..analysis.rating_sums import RatingSums, combine_ratings
from ..errors import StatisticsError
from ..output.pvalues import format_p
from ..output.report import ReportSection, ReportTable, unequal_counts, unjudged_note
from .correlations import rating_partial
from .outputs import RunOutputs
from .settings import RunSettings, StatisticsSettings
from .steps import REPORT_MEASURES

__all__ = [
    "StatisticsPartial",
    "StatisticsResult",
    "report_scores_from_cells",
    "results_text",
    "statistics_from_cells",
    "statistics_partial",
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
          "statistic", "p", "p_adjusted", "significant", "test", "note"]  # fmt: skip
#: The report's headers of the comparison table: the sign convention is named.
_HEADERS = {"diff": "diff (a − b)", "effect_size": "effect size (a − b)"}
#: The symbol of each effect size in the results sentences.
_ES_SYMBOL = {
    "sakai_dz": "d_z",
    "cohen_dz": "d_z",
    "hedges_gz": "g_z",
    "sakai_es_e2": "ES_E2",
    "cohen_d": "d",
}
#: The name of each test in the results sentences.
_TEST_LABEL = {
    "paired-t": "paired t test",
    "wilcoxon": "Wilcoxon signed-rank test",
    "sign": "sign test",
    "randomisation": "paired randomisation test",
    "bootstrap": "paired bootstrap test",
    "ols-blocks": "t test of the blocks model",
    "ols-blocks+period": "t test of the blocks model with period",
    "welch-t": "Welch's t test",
}
#: The symbol of each test's statistic in the results sentences.
_STAT_SYMBOL = {"wilcoxon": "W", "sign": "S", "randomisation": "mean diff", "bootstrap": "t"}
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
    "tukey-hsd": "Tukey's HSD, blocked (on the blocks scored for every system)",
    "none": "no correction for multiple comparisons",
}
_CI = {
    "t": "Student t intervals of the mean difference (n - 1 degrees of freedom)",
    "bootstrap-t": "studentised bootstrap (bootstrap-t) intervals from the test's resamples",
    "tukey-hsd": "simultaneous Tukey intervals (studentised range, two-way ANOVA residual)",
    "randomised-tukey-hsd": "simultaneous intervals from the randomised range distribution",
    "ols-t": "t intervals of the system contrast of the blocks model (residual degrees of freedom)",
    "welch-t": "Welch t intervals of the difference of the searcher means "
    "(Welch-Satterthwaite degrees of freedom)",
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
    design = detect_design(per_session, design=settings.design, block=settings.block)
    return _statistics(
        outputs,
        settings,
        design,
        [str(c) for c in per_session.columns],
        compare=lambda measures, **kw: compare_per_session(per_session, measures=measures, **kw),
        blocked=lambda measures, column: blocked_scores(
            per_session, measures=measures, block=column
        ),
        mixed=lambda measures, notes: _mixed(per_session, measures, design, settings, notes),
    )


def statistics_from_cells(
    outputs: RunOutputs, cells: CellSums, settings: StatisticsSettings
) -> StatisticsResult:
    """:func:`statistics_step` of a distributed run: from the partitions' combined cell sums.

    The same comparisons (every pair as the design asks,
    :func:`~sessionval.analysis.by_design.compare_cells`), the same omnibus tests and
    the same sections and files as :func:`statistics_step` on the whole per-session
    table, to about 1e-14 relative (:mod:`sessionval.analysis.cell_sums`).  The linear
    mixed model is not fitted: its REML fit runs on the session rows, which stay on
    the workers; the statistics section says so and how to fit it on the per-session
    parts the workers wrote.

    Parameters
    ----------
    outputs
        The run's output folder.
    cells
        The combined :class:`~sessionval.analysis.cell_sums.CellSums` of every partition.
    settings
        The ``[statistics]`` settings.
    """
    design = design_from_cells(cells, design=settings.design, block=settings.block)
    return _statistics(
        outputs,
        settings,
        design,
        list(cells.measures),
        compare=lambda measures, **kw: compare_cells(cells, measures=measures, **kw),
        blocked=lambda measures, column: blocked_scores_from_cells(
            cells, measures=measures, block=column
        ),
        mixed=lambda measures, notes: _mixed_not_distributed(measures, design, settings, notes),
    )


def _statistics(
    outputs: RunOutputs,
    settings: StatisticsSettings,
    design: Design,
    columns: list[str],
    *,
    compare: Callable[..., pd.DataFrame],
    blocked: Callable[[list[str], str], pd.DataFrame],
    mixed: Callable[[list[str], list[str]], pd.DataFrame],
) -> StatisticsResult:
    """The statistics of the run, from a per-session table or cell sums (the callables)."""
    measures = [m for m in settings.measures if m in columns]
    notes: list[str] = [
        f"{m}: not a per-session score of this run, left out"
        for m in settings.measures
        if m not in columns
    ]
    empty = pd.DataFrame()
    comparisons, omnibus, fitted = empty, empty, empty
    if design.design == "log":
        notes.append("The study has one system: there is nothing to compare.")
    elif not measures:
        notes.append("No score of [statistics] measures to compare.")
    else:
        try:
            comparisons = compare(
                measures,
                design=settings.design,
                block=settings.block,
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
        omnibus = _omnibus(blocked, measures, design, notes)
        fitted = mixed(measures, notes)
    for name, table in (("comparisons", comparisons), ("mixed_model", fitted)):
        if not table.empty:
            outputs.write_frame(f"tables/{name}.csv", table)
    return StatisticsResult(
        comparisons=comparisons,
        omnibus=omnibus,
        mixed=fitted,
        sections=_sections(comparisons, omnibus, fitted, settings, design, tuple(notes)),
    )


@dataclass(frozen=True)
class StatisticsPartial:
    """What one partition of a distributed run gives the statistics, scores and correlations.

    A worker builds it from its per-session table (:func:`statistics_partial`); the
    client folds the partials as they arrive (:meth:`combine`) and finishes them with
    :func:`statistics_from_cells`, :func:`report_scores_from_cells` (``cells``) and
    :func:`~sessionval.workflow.correlations.correlation_from_sums` (``ratings``).
    Picklable; its size grows with the design cells and the measures, never with the
    sessions of a cell.
    """

    cells: CellSums
    ratings: RatingSums

    def combine(self, *others: StatisticsPartial) -> StatisticsPartial:
        """Fold ``others`` into this partial: a new one (associative and commutative)."""
        return StatisticsPartial(
            combine(self.cells, *(o.cells for o in others)),
            combine_ratings(self.ratings, *(o.ratings for o in others)),
        )


def statistics_partial(
    per_session: pd.DataFrame, settings: RunSettings, *, by_order: bool = True
) -> StatisticsPartial:
    """One partition's :class:`StatisticsPartial` (a worker's call).

    ``per_session`` is the partition's per-session table with its covariates
    (``with_covariates(ev.per_session(), ev.frame)``); ``by_order`` as
    :func:`~sessionval.analysis.cell_sums.cell_sums` (``False`` for a log of many
    sessions per searcher, unless its Latin square needs the period effect).
    ``session_order`` must be the searcher's place in the whole study, not in the
    partition, when a searcher's sessions span partitions.
    """
    # only the scores the statistics and the report's table use: a cell costs 32 bytes
    # per measure summed
    wanted = dict.fromkeys(
        (*settings.statistics.measures, *REPORT_MEASURES, *settings.measures.session, "sdcg")
    )
    measures = [m for m in wanted if m in score_measures(per_session)]
    return StatisticsPartial(
        cell_sums(per_session, measures, by_order=by_order), rating_partial(per_session, settings)
    )


def report_scores_from_cells(
    cells: CellSums, settings: RunSettings
) -> tuple[pd.DataFrame, tuple[str, ...]]:
    """The report's per-system score table and its notes, from the combined cell sums.

    What :func:`~sessionval.workflow.steps.write_report_step` computes from the whole
    per-session table: :func:`~sessionval.analysis.stats.score_table` of
    :data:`~sessionval.workflow.steps.REPORT_MEASURES` and the ``[measures] session``
    ones (:func:`~sessionval.analysis.cell_sums.score_table_from_cells`), and the notes
    on sessions without judgments and on unequal counts.

    Returns
    -------
    scores, score_notes
        For ``render_report(scores=..., score_notes=...)``.
    """
    wanted = dict.fromkeys((*REPORT_MEASURES, *settings.measures.session))
    measures = [m for m in wanted if m in cells.measures]
    scores = score_table_from_cells(cells, measures=measures)
    return scores, (*unjudged_note(*unjudged_from_cells(cells)), *unequal_counts(scores))


def _omnibus(
    blocked: Callable[[list[str], str], pd.DataFrame],
    measures: list[str],
    design: Design,
    notes: list[str],
) -> pd.DataFrame:
    """Friedman and the two-way ANOVA over the design's paired blocks (three systems or more)."""
    column = {"topic": "topic_id", "searcher": "user_id"}.get(design.block)
    if design.n_systems < 3 or column is None:
        return pd.DataFrame()
    try:
        return omnibus_tests(blocked(measures, column))
    except StatisticsError as exc:
        notes.append(f"The tests over all systems could not be made: {exc}")
        return pd.DataFrame()


def _mixed(
    per_session: pd.DataFrame,
    measures: list[str],
    design: Design,
    settings: StatisticsSettings,
    notes: list[str],
) -> pd.DataFrame:
    """The mixed model, unless the design makes its searcher effect the system's."""
    if not settings.mixed_model:
        return pd.DataFrame()
    if design.design == "by_topic":
        notes.append(_RUNS_NOTE)
        return pd.DataFrame()
    try:
        fitted = mixed_model(per_session, measures=measures, confidence=settings.confidence)
        notes += fitted.attrs.get("notes", [])
        return fitted
    except StatisticsError as exc:
        notes.append(f"The mixed model was not fitted: {exc}")
        return pd.DataFrame()


#: Why runs get no mixed model.
_RUNS_NOTE = (
    "The mixed model was not fitted: the searcher is the system here (runs), so a "
    "searcher random effect would be the fixed system effect; the systems are "
    "compared by topic instead."
)


def _mixed_not_distributed(
    measures: list[str], design: Design, settings: StatisticsSettings, notes: list[str]
) -> pd.DataFrame:
    """The note of a distributed run: the mixed model needs the session rows."""
    if not settings.mixed_model:
        return pd.DataFrame()
    if design.design == "by_topic":
        notes.append(_RUNS_NOTE)
    else:
        listed = ", ".join(repr(m) for m in measures)
        notes.append(
            "The mixed model was not fitted: this run kept its sessions on the workers, and "
            "the REML fit of the mixed model runs on the session rows, which are not in the "
            "sums per cell the statistics come from. Fit it on the per-session parts the "
            "workers wrote: sessionval.stats.mixed_model(pd.read_parquet('tables/per_session/'), "
            f"measures=[{listed}])."
        )
    return pd.DataFrame()


def _sections(
    comparisons: pd.DataFrame,
    omnibus: pd.DataFrame,
    mixed: pd.DataFrame,
    settings: StatisticsSettings,
    design: Design,
    notes: tuple[str, ...],
) -> tuple[ReportSection, ...]:
    """The report sections: the comparison of systems and the mixed model."""
    pct = f"{100 * settings.confidence:g}"
    tables = []
    unit = {"topic": "topic", "searcher": "searcher"}.get(design.block)
    correction = settings.correction
    if unit is not None:
        how = (
            f"paired by {unit}: each system's sessions are averaged per {unit} and the "
            f"{unit}s scored for both systems form the pairs (n). Test: "
            + _TESTS[settings.test].format(B=settings.resamples).replace("searchers", f"{unit}s")
        )
    else:
        correction = "holm" if correction == "tukey-hsd" else correction
        how = (
            "with the ordinary least-squares model score ~ system + searcher + topic"
            + (" + order of the session (a period effect)" if design.latin_square else "")
            + " on each pair's sessions, the t test of the system contrast on the residual "
            "degrees of freedom (n: searchers who used both systems)"
            if design.block == "searcher+topic"
            else "unpaired: Welch's unequal-variance t test of the searchers' mean scores "
            "(n: searchers of the two systems)"
        )
    intro = [
        f"Design: {design.description}; every pair of systems compared {how}; p_adjusted: "
        f"{_CORRECTIONS[correction]}; significant: p_adjusted < {settings.alpha:g}. "
        "Sign convention: every difference, interval, statistic and effect size is a − b "
        "(diff = mean_a − mean_b). p-values as p < .001 / p = .023 (APA).",
    ]
    if design.design == "log":  # no pair: no method to describe
        intro = [f"Design: {design.description}."]
    if not comparisons.empty:
        method = str(comparisons["ci_method"].iloc[0])
        kind = str(comparisons["effect_size_kind"].iloc[0])
        intro.append(
            f"Intervals ({pct} %): {_CI.get(method, method)}. Effect size: {kind} "
            "(d_z: mean difference / SD of the differences; ES_E2: mean difference / "
            "square root of the two-way ANOVA (or the blocks model's) residual variance; "
            "cohen_d: Welch's difference / pooled SD of the searcher means; g_z: d_z with Hedges' "
            "small-sample correction). Written to tables/comparisons.csv."
        )
        for m, part in comparisons.groupby("measure", sort=False):
            tables.append(
                ReportTable(
                    f"{m}: pairs of systems",
                    part[_SHOWN].rename(columns=_HEADERS),
                    note=results_text(
                        part, design=design, confidence=settings.confidence, alpha=settings.alpha
                    ),
                    alpha=settings.alpha,
                )
            )
    if not omnibus.empty:
        tables.append(
            ReportTable(
                f"All systems at once (Friedman test, two-way ANOVA {unit} × system)",
                # degrees of freedom are whole numbers (Friedman has no df2)
                omnibus.assign(
                    **{
                        c: [f"{v:.0f}" if pd.notna(v) else "" for v in omnibus[c]]
                        for c in ("df1", "df2")
                    }
                ),
                note=f"On the {unit}s scored for every system.",
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
                    "How much of the variation is the searchers', the topics' and the "
                    "sessions' own: each session score modelled as score = system + "
                    "searcher + topic + error, system a fixed effect. Its system contrasts "
                    "estimate the same differences as the comparison of systems above, "
                    "whose tests and corrections are the ones to report. The estimator "
                    "column names the fit: "
                    + "; ".join(_ESTIMATORS[e] for e in dict.fromkeys(mixed["estimator"]))
                    + ". Fixed effects are contrasts of the first system with each other "
                    "one, written first − other (a − b, as the pairs above); "
                    f"{pct} % confidence intervals (estimate ± z × standard error; t on "
                    "G − 1 degrees of freedom for ols-cluster). Variances of the random "
                    "effects and the residual are estimates only. Written to "
                    "tables/mixed_model.csv.",
                ),
                tables=tuple(
                    ReportTable(f"{m}", part.drop(columns=["measure"]))
                    for m, part in mixed.groupby("measure", sort=False)
                ),
            )
        )
    return tuple(sections)


#: The report's description of each estimator of the mixed model.
_ESTIMATORS = {
    "reml-crossed": "reml-crossed, searcher and topic crossed random intercepts "
    "(statsmodels MixedLM, REML), the analysis a Latin-square design asks for",
    "reml-nested": "reml-nested, a searcher random intercept nested in the systems (each "
    "searcher used one system) and a topic random intercept (statsmodels MixedLM, REML)",
    "reml-topic": "reml-topic, a topic random intercept only (the searcher is the system, "
    "so no searcher effect is fitted)",
    "ols-cluster": "ols-cluster, a study too large for statsmodels' dense REML fit: OLS with "
    "topic fixed effects and cluster-robust (CR1) standard errors by searcher",
}


def _num(value: object, digits: int) -> str:
    """A number of a results sentence; ``n/a`` where it is undefined (NaN)."""
    v = float(value)  # type: ignore[arg-type]
    return "n/a" if np.isnan(v) else f"{v:.{digits}f}"


def results_text(pairs: pd.DataFrame, *, design: Design, confidence: float, alpha: float) -> str:
    """One sentence per pair of a measure, as a paper's results section writes it.

    Each sentence states the difference ``a − b`` with its interval, the test and its
    statistic, the p-value and the corrected one (:func:`format_p`), the effect size
    and n with its unit; a pair that was not compared gives its reason.

    Examples
    --------
    >>> from sessionval.analysis.design import detect_design
    >>> ps = pd.DataFrame({"system_id": ["A", "B"], "topic_id": ["1", "1"]})
    >>> row = pd.DataFrame({"a": ["A"], "b": ["B"], "n": [19], "diff": [0.131],
    ...     "ci_low": [0.08], "ci_high": [0.18], "statistic": [5.9], "p": [1.5e-5],
    ...     "p_adjusted": [1.5e-4], "correction": ["holm"], "test": ["paired-t"],
    ...     "effect_size": [1.35], "effect_size_kind": ["sakai_dz"], "note": [""]})
    >>> print(results_text(row, design=detect_design(ps), confidence=0.95, alpha=0.05))
    A − B = 0.131, 95 % CI [0.080, 0.180], t = 5.90 (paired t test), p < .001,
    holm-adjusted p < .001, d_z = 1.35, n = 19 topics.
    """
    unit = {"topic": "topics", "none": "searchers"}.get(design.block, "searchers")
    pct = f"{100 * confidence:g}"
    sentences = []
    for r in pairs.to_dict("records"):
        pair = f"{r['a']} − {r['b']}"
        if r["note"]:
            sentences.append(f"{pair}: {r['note']}.")
            continue
        kind, test = str(r["effect_size_kind"]), str(r["test"])
        adjusted = format_p(float(r["p_adjusted"]), alpha=alpha, prefix=True)
        sentences.append(
            f"{pair} = {_num(r['diff'], 3)}, {pct} % CI [{_num(r['ci_low'], 3)}, "
            f"{_num(r['ci_high'], 3)}], {_STAT_SYMBOL.get(test, 't')} = "
            f"{_num(r['statistic'], 2)} ({_TEST_LABEL.get(test, test)}), "
            f"{format_p(float(r['p']), prefix=True)}, "
            + (f"{r['correction']}-adjusted {adjusted}, " if r["correction"] != "none" else "")
            + f"{_ES_SYMBOL.get(kind, kind)} = {_num(r['effect_size'], 2)}, "
            f"n = {int(r['n'])} {unit}."
        )
    return " ".join(sentences)

"""The statistics users call, from one place: ``from sessionval import stats``.

A namespace, not new code: every name is the function of the module that implements it
(and documents its formula and paper), gathered so a notebook imports one module instead
of ten deep ones.  Every function takes a tidy table and returns one
(``docs/statistics.md``).

Scores
    :func:`score_runs` (runs and qrels to the long ``system, topic_id, measure, value``
    table), :func:`blocked_scores` (sessions averaged per block), :func:`system_means`,
    :func:`score_matrix`.
Comparing systems
    :func:`compare_systems` (every pair: paired t, Wilcoxon, sign, randomisation,
    bootstrap; corrections), :func:`compare_per_session` and :func:`detect_design` (the
    analysis a study's design asks for), :func:`omnibus_tests` (ANOVA, Friedman),
    :func:`mixed_model`, :func:`paired_tests`, :func:`adjust_p`, :func:`two_way_anova`,
    :func:`friedman`, :func:`tukey_hsd`, :func:`randomised_tukey_hsd`.
Meta-evaluation
    :func:`kendall_tau`, :func:`tau_ap`, :func:`rank_correlation`, :func:`swap_method`,
    :func:`bootstrap_sensitivity`, :func:`incomplete_judgments`,
    :func:`parameter_sensitivity`.
Planning
    :func:`topic_set_size`, :func:`topic_set_table`, :func:`power`.
Ratings
    :func:`rating_correlations`.

Examples
--------
>>> from sessionval import stats
>>> round(stats.kendall_tau([1, 2, 3, 4], [1, 2, 4, 3]), 4)
0.6667
"""

from __future__ import annotations

from .analysis.by_design import compare_per_session
from .analysis.compare import blocked_scores, compare_systems, omnibus_tests
from .analysis.correlations import rating_correlations
from .analysis.design import detect_design
from .analysis.meta import (
    SensitivityResult,
    SwapResult,
    bootstrap_sensitivity,
    kendall_tau,
    rank_correlation,
    swap_method,
    tau_ap,
)
from .analysis.mixed import mixed_model
from .analysis.multiple import (
    CORRECTIONS,
    adjust_p,
    friedman,
    randomised_tukey_hsd,
    tukey_hsd,
    two_way_anova,
)
from .analysis.paired import paired_tests
from .analysis.planning import power, topic_set_size, topic_set_table
from .analysis.score_table import score_matrix, system_means
from .evaluation.runs import score_runs
from .workflow.meta import incomplete_judgments, parameter_sensitivity

__all__ = [
    "CORRECTIONS",
    "SensitivityResult",
    "SwapResult",
    "adjust_p",
    "blocked_scores",
    "bootstrap_sensitivity",
    "compare_per_session",
    "compare_systems",
    "detect_design",
    "friedman",
    "incomplete_judgments",
    "kendall_tau",
    "mixed_model",
    "omnibus_tests",
    "paired_tests",
    "parameter_sensitivity",
    "power",
    "randomised_tukey_hsd",
    "rank_correlation",
    "rating_correlations",
    "score_matrix",
    "score_runs",
    "swap_method",
    "system_means",
    "tau_ap",
    "topic_set_size",
    "topic_set_table",
    "tukey_hsd",
    "two_way_anova",
]

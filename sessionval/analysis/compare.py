r"""Comparing systems: every pair (or every system against a baseline) on every measure.

:func:`compare_systems` is the one entry point behind ``sessionval compare`` and the
user-study statistics of ``sessionval run``: it takes a tidy table of scores (one row
per system × topic × measure; for a user study the topic is the searcher) and returns
one row per measure × pair with the test, the multiplicity correction, an effect size
and a confidence interval.  :func:`omnibus_tests` gives the Friedman test and the
two-way ANOVA over all systems (Järvelin & Kekäläinen 2002, Table 2).

Effect sizes (``effect_size``):

``"sakai"`` (default)
    Sakai's (2018) standardised mean difference for the procedure used: for a
    pairwise test :math:`\bar z / s_z` (the paired :math:`d_z`), under Tukey HSD
    :math:`ES_{E2} = (\bar x_a - \bar x_b)/\sqrt{V_E}` with :math:`V_E` the residual
    variance of the two-way ANOVA.
``"cohen-d"``
    Paired Cohen's :math:`d_z = \bar z / s_z`.
``"hedges-g"``
    Hedges' bias-corrected :math:`g_z = J(n-1)\, d_z`,
    :math:`J(\nu) = \Gamma(\nu/2) / (\sqrt{\nu/2}\,\Gamma((\nu-1)/2))`.

The column ``effect_size_kind`` says which one a row holds.

References
----------
Sakai (2007), IPSJ TOD [sakai2007]; Sakai (2018), *Laboratory Experiments in
Information Retrieval* [sakai2018]; Carterette (2012), TOIS [carterette2012];
Hedges (1981), J. Educ. Stat. 6(2).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, Literal, TypeAlias

import numpy as np
import pandas as pd

from .._types import FloatArray
from ..errors import StatisticsError
from ..progress import ProgressLike, as_progress
from .multiple import (
    CORRECTIONS,
    Correction,
    adjust_p,
    all_tied,
    friedman,
    pair_indices,
    randomised_tukey_hsd,
    tukey_hsd,
    two_way_anova,
)
from .paired import TESTS, PairedTest, paired_tests
from .score_table import levels_in_order, score_matrix, system_means, with_measures

if TYPE_CHECKING:
    from ..evaluation.lists import RunScoring

__all__ = [
    "COMPARISON_COLUMNS",
    "EFFECT_SIZES",
    "OMNIBUS_COLUMNS",
    "EffectSize",
    "blocked_scores",
    "compare_systems",
    "hedges_correction",
    "omnibus_tests",
    "score_matrix",
    "system_means",
]

EffectSize: TypeAlias = Literal["sakai", "cohen-d", "hedges-g"]
EFFECT_SIZES: Final[tuple[EffectSize, ...]] = ("sakai", "cohen-d", "hedges-g")

#: The columns of :func:`compare_systems`, in order.
COMPARISON_COLUMNS: Final[tuple[str, ...]] = (
    "measure",
    "a",
    "b",
    "n",
    "mean_a",
    "mean_b",
    "diff",
    "ci_low",
    "ci_high",
    "effect_size",
    "statistic",
    "p",
    "p_adjusted",
    "test",
    "correction",
    "effect_size_kind",
    "ci_method",
    "significant",
)


#: The columns of :func:`omnibus_tests`, in order.
OMNIBUS_COLUMNS: Final[tuple[str, ...]] = (
    "measure",
    "test",
    "n_topics",
    "n_systems",
    "statistic",
    "df1",
    "df2",
    "p",
    "note",
)


def hedges_correction(df: FloatArray) -> FloatArray:
    r"""Hedges' small-sample factor of a standardised mean difference with ``df`` degrees.

    :math:`J(\nu) = \Gamma(\nu/2)/(\sqrt{\nu/2}\,\Gamma((\nu-1)/2))`.

    Examples
    --------
    >>> round(float(hedges_correction(np.array([9.0]))[0]), 4)   # about 1 - 3/(4*9 - 1)
    0.9139
    """
    from scipy.special import gammaln

    nu = np.asarray(df, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        out: FloatArray = np.where(
            nu > 1,
            np.exp(gammaln(nu / 2.0) - 0.5 * np.log(nu / 2.0) - gammaln((nu - 1.0) / 2.0)),
            np.nan,
        )
    return out


def compare_systems(
    scores: pd.DataFrame | Any,
    runs: Mapping[str, Any] | None = None,
    measures: Sequence[str] | None = None,
    *,
    scoring: RunScoring | None = None,
    test: PairedTest = "paired-t",
    correction: Correction = "holm",
    baseline: str | None = None,
    alpha: float = 0.05,
    confidence: float = 0.95,
    resamples: int = 10_000,
    seed: int = 0,
    effect_size: EffectSize = "sakai",
    systems: Sequence[str] | None = None,
    system: str = "system",
    topic: str = "topic",
    value: str = "value",
    measure_column: str = "measure",
    design: str | None = None,
    block: str | None = None,
    unit: str = "topic",
    progress: ProgressLike = None,
) -> pd.DataFrame:
    """Compare every pair of systems (or every system with a baseline) on each measure.

    ``compare_systems(scores, measures=[...])`` compares the systems of a table of
    scores; ``compare_systems(qrels, runs, measures)``, as ranx's ``compare(qrels,
    runs, metrics)``, first scores each run as ``sessionval evaluate`` does
    (:func:`sessionval.evaluation.runs.score_runs`: trec_eval's defaults).

    Parameters
    ----------
    scores
        Long table: ``system, topic, measure, value`` (names configurable), one row per
        system × topic × measure.  A pair is compared over the topics scored for both.
        Or the per-session table as ``run`` writes it (``session_id``, ``system_id``,
        ``user_id``, ``topic_id`` and the scores): its design is detected and the pairs
        compared as it asks (:func:`sessionval.analysis.by_design.compare_per_session`),
        with ``design``, ``block`` and ``note`` columns.  With ``runs``: the qrels, in
        any shape :func:`sessionval.evaluation.runs.as_judgments` reads (a TREC file, a
        DataFrame with ``query_id, doc_id, relevance``, ``{query: {doc: grade}}``,
        ir_datasets' ``qrels_iter()``).
    runs
        Runs by name, in display order: DataFrames with ``query_id, doc_id, score``,
        TREC run files, ``{query: {doc: score}}`` (pytrec_eval, ranx).
    measures
        Measures to compare (default: every measure of the table, in order; for a
        per-session table ``nsdcg`` and ``sdcg``; with ``runs`` ``nDCG@10`` and ``AP``).
    scoring
        With ``runs``: tie-break, ``-c``, empty recall bases, negative grades and
        unjudged documents (default trec_eval's, as ``sessionval evaluate``).
    test
        Paired test (:data:`sessionval.analysis.paired.TESTS`).
    correction
        ``"holm"`` (default), ``"bonferroni"``, ``"bh"``, ``"tukey-hsd"`` or ``"none"``;
        the family is every pair of one measure.  ``"tukey-hsd"`` is Tukey's HSD from
        the two-way ANOVA with ``test="paired-t"`` and the randomised Tukey HSD
        (Carterette 2012) with ``test="randomisation"``; both need a complete block
        (the topics every system was scored on).
    baseline
        Compare each other system with this one only (``a`` = the system, ``b`` =
        the baseline).
    alpha
        Level of ``significant`` (``p_adjusted < alpha``).
    confidence
        Level of the intervals (simultaneous under ``tukey-hsd``).
    resamples, seed
        Resampling tests: number of resamples and the seed (same seed, same result).
    effect_size
        ``"sakai"``, ``"cohen-d"`` or ``"hedges-g"`` (module docstring).
    systems
        Order of the systems (default: first appearance).
    system, topic, value, measure_column
        Column names of ``scores``.
    design, block
        Per-session table only: override the detected design and block
        (:func:`sessionval.analysis.design.detect_design`).
    unit
        What the ``topic`` column's blocks are, as the notes name them (``"searcher"``
        when a user study's sessions are paired by searcher).
    progress
        Told the pairs compared over every measure, a block of pairs at a time in the
        resampling tests (:class:`~sessionval.progress.Progress`; long score table only).

    Returns
    -------
    pandas.DataFrame
        :data:`COMPARISON_COLUMNS`: ``measure, a, b, n, mean_a, mean_b, diff, ci_low,
        ci_high, effect_size, statistic, p, p_adjusted, test, correction,
        effect_size_kind, ci_method, significant``.

    Raises
    ------
    StatisticsError
        Unknown option, a baseline not among the systems, fewer than two systems, or
        ``tukey-hsd`` with a test it does not correct.

    Examples
    --------
    >>> t = pd.DataFrame({
    ...     "system": ["A"] * 4 + ["B"] * 4,
    ...     "topic": ["1", "2", "3", "4"] * 2,
    ...     "measure": "nDCG",
    ...     "value": [0.5, 0.6, 0.2, 0.9, 0.4, 0.3, 0.2, 0.5]})
    >>> r = compare_systems(t)
    >>> r[["a", "b", "n", "diff"]].to_numpy().tolist()
    [['A', 'B', 4, 0.2]]

    Qrels and runs as pytrec_eval's and ranx's dicts:

    >>> qrels = {"q1": {"d1": 1}, "q2": {"d2": 1}, "q3": {"d3": 1}}
    >>> good = {q: {"x": 0.5} | {d: 1.0 for d in docs} for q, docs in qrels.items()}
    >>> bad = {q: {"x": 1.0} | {d: 0.5 for d in docs} for q, docs in qrels.items()}
    >>> compare_systems(qrels, {"good": good, "bad": bad}, ["P@1"])[["a", "b", "diff"]]
          a    b  diff
    0  good  bad   1.0
    """
    _check_options(test, correction, effect_size, alpha, confidence)
    if runs is not None:
        if not isinstance(runs, Mapping):
            raise StatisticsError(
                f"compare_systems: runs must map names to runs ({{'bm25': run, ...}}), "
                f"got {type(runs).__name__}"
            )
        from ..evaluation.runs import DEFAULT_COMPARE_MEASURES, as_judgments, score_runs

        wanted = list(measures or DEFAULT_COMPARE_MEASURES)
        scores = score_runs(runs, as_judgments(scores), wanted, scoring=scoring)
        measures = None
    from .by_design import compare_per_session, is_per_session

    if is_per_session(scores):
        if baseline is not None or systems is not None:
            raise StatisticsError(
                "compare_systems: baseline= and systems= apply to the long score table, "
                "not to a per-session table"
            )
        return compare_per_session(
            scores,
            measures=[m for m in ("nsdcg", "sdcg") if m in scores]
            if measures is None
            else measures,
            design=design,
            block=block,
            test=test,
            correction=correction,
            alpha=alpha,
            confidence=confidence,
            resamples=resamples,
            seed=seed,
            effect_size=effect_size,
        )
    if design is not None or block is not None:
        raise StatisticsError(
            "compare_systems: design= and block= apply to a per-session table (session_id, "
            "system_id, ...), not to the long system, topic, measure, value table"
        )
    # how each measure summarises (score_runs records it): GMAP's means are geometric
    aggregate = dict(scores.attrs.get("aggregate", {}))
    scores, wanted = with_measures(scores, measures, measure_column, value)
    names = levels_in_order(scores[system]) if systems is None else [str(s) for s in systems]
    if len(names) < 2:
        raise StatisticsError(f"need at least two systems to compare, got {names}")
    base = None
    if baseline is not None:
        if baseline not in names:
            raise StatisticsError(f"baseline {baseline!r} is not a system; systems: {names}")
        base = names.index(baseline)
    ia, ib = pair_indices(len(names), base)
    parts = []
    notes: list[str] = []
    shown = as_progress(progress)
    shown.start(f"comparing {len(names)} systems", len(wanted) * ia.size, "pairs")
    for m in wanted:
        x, _, _ = score_matrix(
            scores,
            m,
            systems=names,
            system=system,
            topic=topic,
            value=value,
            measure_column=measure_column,
        )
        table, note = _compare_matrix(
            x,
            ia,
            ib,
            names=names,
            measure=m,
            test=test,
            correction=correction,
            alpha=alpha,
            confidence=confidence,
            resamples=resamples,
            seed=seed,
            effect_size=effect_size,
            unit=unit,
            aggregate=aggregate.get(m, "mean"),
            progress=shown,
        )
        parts.append(table)
        notes += note
    shown.finish()
    out = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=COMPARISON_COLUMNS)
    out.attrs.update(
        test=test,
        correction=correction,
        alpha=alpha,
        confidence=confidence,
        resamples=resamples,
        seed=seed,
        effect_size=effect_size,
        baseline=baseline,
        systems=names,
        notes=notes,
    )
    return out


def _check_options(
    test: str, correction: str, effect_size: str, alpha: float, confidence: float
) -> None:
    if test not in TESTS:
        raise StatisticsError(f"unknown test {test!r}; allowed: {', '.join(TESTS)}")
    if correction not in CORRECTIONS:
        raise StatisticsError(
            f"unknown correction {correction!r}; allowed: {', '.join(CORRECTIONS)}"
        )
    if effect_size not in EFFECT_SIZES:
        raise StatisticsError(
            f"unknown effect size {effect_size!r}; allowed: {', '.join(EFFECT_SIZES)}"
        )
    if correction == "tukey-hsd" and test not in ("paired-t", "randomisation"):
        raise StatisticsError(
            f"tukey-hsd corrects the paired t test (Tukey HSD from the two-way ANOVA) or the "
            f"randomisation test (randomised Tukey HSD), not {test}; use holm, bonferroni, "
            "bh or none with it"
        )
    for name, v in (("alpha", alpha), ("confidence", confidence)):
        if not 0.0 < v < 1.0:
            raise StatisticsError(f"{name} must be in (0, 1), got {v}")


def _compare_matrix(
    x: FloatArray,
    ia: np.ndarray,
    ib: np.ndarray,
    *,
    names: list[str],
    measure: str,
    test: PairedTest,
    correction: Correction,
    alpha: float,
    confidence: float,
    resamples: int,
    seed: int,
    effect_size: EffectSize,
    unit: str = "topic",
    aggregate: str = "mean",
    progress: ProgressLike = None,
) -> tuple[pd.DataFrame, list[str]]:
    """One measure's rows of :func:`compare_systems`, and remarks on them (``unit``: a block).

    ``aggregate`` is how the measure summarises (``MeasureDef.aggregate``): for
    ``exp_mean`` (GMAP, whose per-topic values are logs) ``mean_a`` and ``mean_b`` are
    the geometric means over the pair's topics, while ``diff``, the interval, the test
    and the effect size stay on the per-topic logs, where the test is valid.
    ``progress`` is advanced by the pairs tested (:func:`~sessionval.analysis.paired.paired_tests`).

    Under ``tukey-hsd`` every column of a row is computed on the complete block (the
    blocks scored for every system): ``n``, the means, ``diff``, the unadjusted test,
    the interval, the adjusted p and the effect size describe one set of topics.
    """
    notes: list[str] = []
    if correction == "tukey-hsd":
        complete = ~np.isnan(x).any(axis=1)
        scored = ~np.isnan(x).all(axis=1)
        dropped = int(np.count_nonzero(scored & ~complete))
        if dropped:
            notes.append(
                f"{measure}: Tukey HSD uses the {int(complete.sum())} {unit}s scored for "
                f"every system; {dropped} {unit}(s) scored for some systems only are left "
                "out of every column of its rows (n, means, diff, test, interval, effect size)"
            )
        x = x[complete]
    res = paired_tests(
        x,
        ia,
        ib,
        test=test,
        confidence=confidence,
        resamples=resamples,
        seed=seed,
        progress=progress,
    )
    ci_low, ci_high, ci_method = res.ci_low, res.ci_high, res.ci_method
    with np.errstate(invalid="ignore", divide="ignore"):
        d_z = np.where(res.sd > 0, res.diff / res.sd, np.where(res.diff == 0, 0.0, np.nan))
    if effect_size == "hedges-g":
        es, kind = hedges_correction(res.n.astype(np.float64) - 1.0) * d_z, "hedges_gz"
    else:
        es, kind = d_z, "cohen_dz" if effect_size == "cohen-d" else "sakai_dz"
    if correction == "tukey-hsd":
        block = ~np.isnan(x).any(axis=1)
        xb = x[block]
        if xb.shape[0] < 2:
            raise StatisticsError(
                f"{measure}: Tukey HSD needs at least two {unit}s scored for every system "
                f"(a complete block), found {xb.shape[0]}"
            )
        anova = two_way_anova(xb)
        if test == "paired-t":
            _, p_adj, half, _ = tukey_hsd(xb, ia, ib, confidence=confidence)
            ci_method = "tukey-hsd"
        else:
            rt = randomised_tukey_hsd(
                xb, ia, ib, resamples=resamples, seed=seed, confidence=confidence
            )
            p_adj, half = rt.p_adjusted, rt.half_width
            ci_method = "randomised-tukey-hsd"
        block_diff = anova.system_means[ia] - anova.system_means[ib]
        ci_low, ci_high = block_diff - half, block_diff + half
        if effect_size == "sakai":
            # as d_z: no difference is an effect of 0 even without residual variation
            v_e = anova.ms_residual
            es = block_diff / np.sqrt(v_e) if v_e > 0 else np.where(block_diff == 0, 0.0, np.nan)
            kind = "sakai_es_e2"
    else:
        p_adj = adjust_p(res.p, correction)
    notes += _small_sample_notes(
        res.n, res.ci_low, res.ci_high, res.diff, ci_method, measure, unit=unit
    )
    constant = (res.n >= 2) & (res.sd == 0) & (res.diff != 0)
    if constant.any():
        notes.append(
            f"{measure}: {int(constant.sum())} pair(s) differ by the same amount on every "
            f"{unit} (SD of the differences 0, up to rounding): "
            + ("t = ±inf, p = 0, and " if test == "paired-t" else "")
            + "no standardised effect size (NaN)"
        )
    if (
        test == "randomisation"
        and correction in ("holm", "bonferroni")
        and not res.exact.all()
        and ia.size / (resamples + 1.0) >= alpha
    ):
        # the Monte Carlo p-value cannot go below 1 / (B + 1): say so rather than
        # let a user read "nothing significant" as "no difference"
        need = int(np.ceil(ia.size / alpha))
        notes.append(
            f"{measure}: with {resamples} random sign vectors the smallest p-value is "
            f"1/(B+1) = {1 / (resamples + 1):.2g}, and {correction} over {ia.size} pairs "
            f"scales it by up to {ia.size}, so no pair can reach alpha = {alpha:g}; use "
            f"--resamples {need} or more, --correction tukey-hsd (randomised Tukey HSD), "
            "or the paired t test"
        )
    mean_a, mean_b = res.mean_a, res.mean_b
    if aggregate == "exp_mean":
        mean_a, mean_b = np.exp(mean_a), np.exp(mean_b)
        notes.append(
            f"{measure}: mean_a and mean_b are geometric means (exp of the mean per-{unit} "
            f"log); diff, its interval, the test and the effect size are on the logs"
        )
    table = pd.DataFrame(
        {
            "measure": measure,
            "a": [names[i] for i in ia],
            "b": [names[i] for i in ib],
            "n": res.n,
            "mean_a": mean_a,
            "mean_b": mean_b,
            "diff": res.diff,
            "ci_low": ci_low,
            "ci_high": ci_high,
            "effect_size": es,
            "statistic": res.statistic,
            "p": res.p,
            "p_adjusted": p_adj,
            "test": test,
            "correction": correction,
            "effect_size_kind": kind,
            "ci_method": ci_method,
            "significant": np.asarray(p_adj < alpha),
        },
        columns=list(COMPARISON_COLUMNS),
    )
    return table, notes


def _small_sample_notes(
    n: np.ndarray,
    low: FloatArray,
    high: FloatArray,
    diff: FloatArray,
    ci_method: str,
    measure: str,
    *,
    unit: str = "topic",
) -> list[str]:
    """Why some rows hold NaN: pairs on fewer than two blocks, undefined bootstrap-t intervals."""
    notes = []
    few = int(np.count_nonzero(n < 2))
    if few:
        notes.append(
            f"{measure}: {few} pair(s) share fewer than 2 scored {unit}s: no interval, and "
            "no t or bootstrap test (NaN)"
        )
    if ci_method == "bootstrap-t":
        undefined = (n >= 2) & (np.isnan(low) | np.isnan(high)) & (diff != 0)
        if undefined.any():
            notes.append(
                f"{measure}: the bootstrap-t interval of {int(undefined.sum())} pair(s) is "
                f"undefined (NaN): with {int(n[undefined].min())} {unit}s too many resamples "
                f"repeat one {unit} and have no spread; use more {unit}s or a test with the t "
                "interval"
            )
    return notes


def omnibus_tests(
    scores: pd.DataFrame,
    *,
    measures: Sequence[str] | None = None,
    systems: Sequence[str] | None = None,
    system: str = "system",
    topic: str = "topic",
    value: str = "value",
    measure_column: str = "measure",
) -> pd.DataFrame:
    """Friedman's test and the two-way ANOVA (topic × system) over all systems, per measure.

    Both run on the complete block: the topics scored for every system.  Friedman
    needs at least three systems (its row is left out below that).  Systems that do
    not differ give statistic 0 and p 1, with the reason in ``note``
    (:func:`~sessionval.analysis.multiple.two_way_anova`,
    :func:`~sessionval.analysis.multiple.friedman`).

    Returns
    -------
    pandas.DataFrame
        ``measure, test, n_topics, n_systems, statistic, df1, df2, p, note`` with
        ``test`` ``"friedman"`` (chi-squared, ``df1 = m - 1``) and ``"anova"`` (F of
        the system factor, ``df1 = m - 1``, ``df2 = (m - 1)(n - 1)``); ``note`` is
        empty unless the statistic is degenerate.
    """
    scores, wanted = with_measures(scores, measures, measure_column, value)
    rows: list[tuple[str, str, int, int, float, float, float, float, str]] = []
    for m in wanted:
        x, _, _ = score_matrix(
            scores,
            m,
            systems=systems,
            system=system,
            topic=topic,
            value=value,
            measure_column=measure_column,
        )
        xb = x[~np.isnan(x).any(axis=1)]
        n, k = xb.shape
        if n < 2 or k < 2:
            continue
        an = two_way_anova(xb)
        note = ""
        if an.ss_system == 0.0:
            note = "the systems' means do not differ (within rounding): F = 0, p = 1"
        elif an.ss_residual == 0.0:
            note = "no residual variation: every topic shows the same differences, F = inf"
        rows.append(
            (m, "anova", n, k, an.f_system, an.df_system, an.df_residual, an.p_system, note)
        )
        if k >= 3:
            chi2, p = friedman(xb)
            note = "every topic ties all the systems: no evidence of a difference, p = 1"
            rows.append((m, "friedman", n, k, chi2, k - 1, np.nan, p, note if all_tied(xb) else ""))
    return pd.DataFrame(rows, columns=list(OMNIBUS_COLUMNS))


def blocked_scores(
    per_session: pd.DataFrame,
    *,
    measures: Sequence[str],
    block: str = "user_id",
    system: str = "system_id",
) -> pd.DataFrame:
    """Per-session scores averaged per block (searcher) and system, as the long table.

    A within-subject study pairs systems by searcher: each searcher's sessions with a
    system are averaged (NaN scores left out), giving the ``system, topic, measure,
    value`` table of :func:`compare_systems` with the searcher as ``topic``.

    Examples
    --------
    >>> ps = pd.DataFrame({"user_id": ["u1", "u1", "u1"], "system_id": ["A", "A", "B"],
    ...                    "x": [0.2, 0.4, 0.5]})
    >>> blocked_scores(ps, measures=["x"]).to_numpy().tolist()
    [['A', 'u1', 'x', 0.3...], ['B', 'u1', 'x', 0.5]]
    """
    missing = [c for c in (block, system, *measures) if c not in per_session.columns]
    if missing:
        raise StatisticsError(
            f"per-session table: column(s) {missing} missing; columns are "
            f"{list(per_session.columns)}"
        )
    keys = [per_session[system].astype(str), per_session[block].astype(str)]
    means = per_session.loc[:, list(measures)].astype("float64").groupby(keys, sort=True).mean()
    means.index.names = ["system", "topic"]
    long = means.reset_index().melt(
        id_vars=["system", "topic"], var_name="measure", value_name="value"
    )
    long = long.dropna(subset=["value"]).reset_index(drop=True)
    order = levels_in_order(per_session[system])
    long["system"] = pd.Categorical(long["system"], categories=order)
    return long

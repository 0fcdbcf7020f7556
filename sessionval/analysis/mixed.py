r"""A linear mixed model of session scores: system fixed, searcher and topic random.

In a user study every searcher works on several topics with several systems (a Latin
square in Järvelin et al. 2008): sessions of one searcher, and sessions of one topic,
are not independent.  :func:`mixed_model` fits, for each per-session score,

.. math::

    y_{s} = \mu + \beta_{system(s)} + u_{searcher(s)} + v_{topic(s)} + \varepsilon_s,
    \quad u \sim N(0, \sigma_u^2),\ v \sim N(0, \sigma_v^2),\ \varepsilon \sim N(0, \sigma^2)

with random intercepts for searcher and topic (``statsmodels`` ``MixedLM``, REML,
variance components over one all-embracing group), so the system effects are
estimated as the design demands.  The random-effect structure follows the design
(:func:`~sessionval.analysis.design.detect_design`), and the ``estimator`` column names it:

``reml-crossed``
    within searchers: searcher and topic crossed random intercepts;
``reml-nested``
    between searchers (each searcher one system): the searcher random intercept is
    nested in the fixed system effect (it is not the system: every system has several
    searchers), topics crossed;
``reml-topic``
    the searcher is absent or identical to the system (runs, ``by_topic``): a searcher
    random effect would *be* the fixed system effect, so it is never fitted; topic
    random only;
``ols-cluster``
    a design too large for statsmodels' dense fit (more than :data:`MAX_DESIGN_CELLS`
    session × random-level cells): ordinary least squares with the topics as fixed
    effects (absorbed by demeaning within topic, exact by the Frisch-Waugh-Lovell
    theorem) and cluster-robust (CR1) standard errors by searcher, with t tests on
    G − 1 degrees of freedom (Cameron & Miller 2015).  The residual variance and a
    method-of-moments searcher variance (the mean cross-product of residuals of two
    sessions of one searcher) are given; the topic variance is not (topics are fixed).

The fixed effects are contrasts of the first system against each other one (first −
other: the a − b of the pairwise comparisons), with Wald standard errors, z tests and
confidence intervals.

Why the threshold: statsmodels builds the random-effect design as a dense sessions ×
levels matrix and its REML iterations cost 40-60 µs per cell on this project's 2-core
machine shared with other work (``python benchmarks/bench_mixed.py 100x20x10 300x50x10``):
1,000 sessions of 100 searchers × 20 topics (120,000 cells) 4-8 s; 3,000 sessions of
300 × 50 (1.05 million cells) 41-66 s and 81 MB; 10,000 sessions of 1,000 × 100
(11 million cells) 465 s and 860 MB, per score.  Above 1 million cells the fit falls back
to ``ols-cluster`` (0.1-2 s for up to 100,000 sessions of 10,000 searchers) and a note
says so; ``max_cells=`` moves the threshold.

References
----------
Baayen, Davidson & Bates (2008), J. Memory and Language 59(4) (crossed random effects
of subjects and items); Carterette, Kanoulas & Yilmaz (2011), "Simulating simple user
behavior for system effectiveness evaluation", CIKM (mixed models in IR evaluation);
Cameron & Miller (2015), "A practitioner's guide to cluster-robust inference", J. Human
Resources 50(2); Seabold & Perktold (2010), statsmodels.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Final

import numpy as np
import pandas as pd

from ..errors import StatisticsError
from .design import detect_design
from .model_rows import text_levels

__all__ = [
    "MAX_DESIGN_CELLS",
    "MIXED_COLUMNS",
    "mixed_model",
]

#: Above this many session × random-level cells the REML fit falls back to ``ols-cluster``
#: (module docstring: 40-65 s of statsmodels' dense fit per score on 2 shared cores).
MAX_DESIGN_CELLS: Final = 1_000_000

#: Columns of :func:`mixed_model`.
MIXED_COLUMNS = (
    "measure",
    "term",
    "kind",
    "estimate",
    "se",
    "z",
    "p",
    "ci_low",
    "ci_high",
    "n_sessions",
    "n_searchers",
    "n_topics",
    "converged",
    "estimator",
)


def _levels_text(data: pd.DataFrame, components: Sequence[str]) -> str:
    """``"30 searcher + 4 topic"``: the levels of the random effects."""
    return " + ".join(f"{data[n].nunique()} {n}" for n in components) or "no"


def mixed_model(
    per_session: pd.DataFrame,
    *,
    measures: Sequence[str],
    system: str = "system_id",
    searcher: str = "user_id",
    topic: str = "topic_id",
    confidence: float = 0.95,
    max_cells: int = MAX_DESIGN_CELLS,
) -> pd.DataFrame:
    """Fit the model of the module docstring to each score and tidy its estimates.

    Parameters
    ----------
    per_session
        One row per session with the score columns and the three factors.
    measures
        Score columns to model (sessions with a NaN score are left out).
    system, searcher, topic
        Factor columns.  A random effect with a single level is left out of the model
        (it has no ``var(...)`` row then); so is a searcher identical to the system.
    confidence
        Level of the Wald intervals of the fixed effects.
    max_cells
        Sessions × random-effect levels above which the fit is ``ols-cluster``.

    Returns
    -------
    pandas.DataFrame
        :data:`MIXED_COLUMNS`.  ``kind`` is ``"fixed"`` for ``Intercept (<first
        system>)`` and ``<first system> − <system>`` (a − b, the sign of the pairwise
        comparisons), ``"variance"`` for the variance of each random effect and of the
        residual (estimate only); ``estimator`` names the fit (module docstring).
        ``attrs["notes"]``: the estimator chosen when it is not the crossed REML fit,
        the library's warnings and non-converged or singular fits, one line each.

    Raises
    ------
    StatisticsError
        A column is missing, there are fewer than two systems, or the design leaves
        the fixed effects undefined.
    """
    missing = [c for c in (system, searcher, topic, *measures) if c not in per_session.columns]
    if missing:
        raise StatisticsError(
            f"mixed model: column(s) {missing} missing; columns are {list(per_session.columns)}"
        )
    rows: list[dict[str, object]] = []
    notes: list[str] = []
    # the factors as their text, coded once for every measure (no string per session)
    keys = {
        name: text_levels(per_session[col])
        for name, col in (("system", system), ("searcher", searcher), ("topic", topic))
    }
    for m in measures:
        data = pd.DataFrame({"y": per_session[m].astype("float64").to_numpy(), **keys}).dropna(
            subset=["y"]
        )
        systems = sorted(set(data["system"].unique()))
        if len(systems) < 2:
            raise StatisticsError(f"mixed model of {m}: needs two systems, got {systems}")
        design = detect_design(data, system="system", searcher="searcher", topic="topic")
        varies = {n: bool((data[n] != data[n].iloc[0]).any()) for n in ("searcher", "topic")}
        components = [
            name
            for name in ("searcher", "topic")
            if varies[name] and not (name == "searcher" and design.n_searchers == 0)
        ]
        if "searcher" not in components and varies["searcher"]:
            notes.append(
                f"mixed model of {m}: the searcher is the system here, so no searcher random "
                "effect is fitted (it would be the fixed system effect); topic random only"
            )
        counts = {
            "n_sessions": len(data),
            "n_searchers": design.n_searchers,
            "n_topics": data["topic"].nunique(),
        }
        size = len(data) * sum(data[name].nunique() for name in components)
        if size > max_cells:
            notes.append(
                f"mixed model of {m}: {len(data):,} sessions with "
                f"{_levels_text(data, components)} random-effect levels ({size:,} cells) "
                f"are more than statsmodels' dense REML fit takes in reasonable time "
                f"({max_cells:,} cells); estimated instead by ols-cluster: OLS with topic "
                "fixed effects and cluster-robust standard errors by searcher"
            )
            fitted = _cluster_ols(
                data, m, systems, confidence, by_searcher="searcher" in components
            )
        else:
            label = (
                "reml-topic"
                if "searcher" not in components
                else "reml-nested"
                if design.design == "between"
                else "reml-crossed"
            )
            fitted = _reml(data, m, systems, components, confidence, label)
        part, part_notes = fitted
        notes += part_notes
        rows += [{"measure": m, **r, **counts} for r in part]
    out = pd.DataFrame(rows, columns=list(MIXED_COLUMNS))
    out.attrs["notes"] = notes
    return out


def _fixed_row(
    term: str, sign: float, estimate: float, se: float, z: float, p: float, ci: tuple[float, float]
) -> dict[str, object]:
    """A fixed-effect row, a contrast turned to first − other by ``sign``."""
    low, high = sorted((sign * ci[0], sign * ci[1]))
    return {
        "term": term,
        "kind": "fixed",
        "estimate": sign * estimate,
        "se": se,
        "z": sign * z,
        "p": p,
        "ci_low": low,
        "ci_high": high,
    }


def _variance_row(name: str, value: float) -> dict[str, object]:
    nan = float("nan")
    return {
        "term": f"var({name})",
        "kind": "variance",
        "estimate": value,
        **dict.fromkeys(("se", "z", "p", "ci_low", "ci_high"), nan),
    }


def _reml(
    data: pd.DataFrame,
    m: str,
    systems: list[str],
    components: list[str],
    confidence: float,
    label: str,
) -> tuple[list[dict[str, object]], list[str]]:
    """The REML fit of statsmodels' MixedLM, variance components over one group."""
    import statsmodels.formula.api as smf

    # the factors as text for the formula (a categorical would keep levels absent here)
    data = data.assign(group=1, **{c: data[c].astype(str) for c in ("system", "searcher", "topic")})
    # fit on the score in units of its SD (the optimiser converges far more often on
    # raw sDCG in the hundreds that way), then scale the estimates back
    unit = float(data["y"].std()) or 1.0
    data["y"] = data["y"] / unit
    vc = {name: f"0 + C({name})" for name in components}
    model = smf.mixedlm("y ~ C(system)", data, groups="group", re_formula="0", vc_formula=vc)
    with warnings.catch_warnings(record=True) as caught:
        # every warning of the library becomes a note, never a line on stderr; Powell's
        # derivative-free search copes with variances on the boundary (0), where the
        # gradient methods stall; L-BFGS is the fallback
        warnings.simplefilter("always")
        try:
            fit = model.fit(reml=True, method=["powell", "lbfgs"])
        except (np.linalg.LinAlgError, ValueError) as exc:
            raise StatisticsError(
                f"mixed model of {m}: the fit failed on this design ({exc}); with "
                f"{_levels_text(data, components)} random-effect levels for "
                f"{len(data)} sessions the effects cannot be separated"
            ) from None
        converged = bool(fit.converged)
        bse_fe = fit.bse_fe
        bse = np.asarray(bse_fe, dtype=np.float64)
        pvalues, tvalues = fit.pvalues, fit.tvalues
        ci = fit.conf_int(alpha=1.0 - confidence)
    if not np.isfinite(bse).all():
        raise StatisticsError(
            f"mixed model of {m}: the fit is degenerate on this design (standard errors "
            f"undefined); {_levels_text(data, components)} random-effect levels for "
            f"{len(data)} sessions"
        )
    notes = sorted(
        {
            f"mixed model of {m}: {str(w.message).splitlines()[0]}"
            for w in caught
            # numpy's divide-by-zero on the way: the outcome is checked above
            if not issubclass(w.category, RuntimeWarning)
        }
    )
    if not converged:
        notes.append(f"mixed model of {m}: the fit did not converge; read it with care")
    variances = dict(zip(model.exog_vc.names, np.atleast_1d(fit.vcomp), strict=True))
    singular = [name for name, v in variances.items() if float(v) <= 1e-8]
    if singular:
        notes.append(
            f"mixed model of {m}: singular fit, the variance of {', '.join(singular)} is "
            "estimated at 0 (on the boundary): the model is the one without that effect"
        )
    rows = []
    for term in fit.fe_params.index:
        intercept = term == "Intercept"
        name = term.split("[T.", 1)[-1].rstrip("]")
        rows.append(
            _fixed_row(
                f"Intercept ({systems[0]})" if intercept else f"{systems[0]} − {name}",
                1.0 if intercept else -1.0,
                unit * float(fit.fe_params[term]),
                unit * float(bse_fe[term]),
                float(tvalues[term]),
                float(pvalues[term]),
                (unit * float(ci.loc[term, 0]), unit * float(ci.loc[term, 1])),
            )
        )
    variances["residual"] = float(fit.scale)
    rows += [_variance_row(name, unit**2 * float(v)) for name, v in variances.items()]
    return [{**r, "converged": converged, "estimator": label} for r in rows], notes


def _cluster_ols(
    data: pd.DataFrame, m: str, systems: list[str], confidence: float, *, by_searcher: bool
) -> tuple[list[dict[str, object]], list[str]]:
    r"""OLS with topic fixed effects, CR1 cluster-robust errors by searcher (module docstring).

    The topic dummies are absorbed by demeaning ``y`` and the system indicators within
    topic (exact for one set of dummies); the sandwich
    :math:`(X'X)^{-1} \big(\sum_g u_g u_g'\big) (X'X)^{-1}`, :math:`u_g = X_g' e_g`,
    is scaled by :math:`\frac{G}{G-1}\frac{N-1}{N-K}` (Stata's CR1) and the t tests
    have :math:`G - 1` degrees of freedom.  Clusters are the searchers, or the topics
    when the searcher is the system.
    """
    from scipy import stats

    cluster = data["searcher"] if by_searcher else data["topic"]
    codes = pd.Categorical(data["system"], categories=systems).codes
    x = (codes[:, None] == np.arange(1, len(systems))[None, :]).astype(np.float64)
    y = data["y"].to_numpy(dtype=np.float64)
    topic = pd.factorize(data["topic"])[0]
    n_topics = int(topic.max()) + 1

    def within(v: np.ndarray) -> np.ndarray:
        sums = np.zeros((n_topics, v.shape[1]))
        np.add.at(sums, topic, v)
        return v - (sums / np.bincount(topic, minlength=n_topics)[:, None])[topic]

    xd, yd = within(x), within(y[:, None])[:, 0]
    beta, *_ = np.linalg.lstsq(xd, yd, rcond=None)
    e = yd - xd @ beta
    g_codes = pd.factorize(cluster)[0]
    n_g = int(g_codes.max()) + 1
    n, k = len(y), x.shape[1] + n_topics  # the absorbed topic dummies count in K
    if n_g < 2 or n <= k:
        raise StatisticsError(
            f"mixed model of {m}: the ols-cluster fallback needs two clusters and more "
            f"sessions than parameters; got {n_g} clusters, {n} sessions, {k} parameters"
        )
    scores = np.zeros((n_g, x.shape[1]))
    np.add.at(scores, g_codes, xd * e[:, None])
    bread = np.linalg.pinv(xd.T @ xd)
    cov = bread @ (scores.T @ scores) @ bread * (n_g / (n_g - 1)) * ((n - 1) / (n - k))
    se = np.sqrt(np.diag(cov))
    tq = float(stats.t.ppf(0.5 + confidence / 2.0, n_g - 1))
    rows = [
        _fixed_row(f"Intercept ({systems[0]})", 1.0, float(np.mean(y - x @ beta)), np.nan,
                   np.nan, np.nan, (np.nan, np.nan))
    ]  # fmt: skip
    for j, name in enumerate(systems[1:]):
        z = float(beta[j] / se[j]) if se[j] > 0 else np.nan
        rows.append(
            _fixed_row(
                f"{systems[0]} − {name}",
                -1.0,
                float(beta[j]),
                float(se[j]),
                z,
                float(2.0 * stats.t.sf(abs(z), n_g - 1)),
                (float(beta[j] - tq * se[j]), float(beta[j] + tq * se[j])),
            )
        )
    # method of moments: the mean cross-product of two residuals of one searcher
    sums = np.bincount(g_codes, weights=e, minlength=n_g)
    sq = np.bincount(g_codes, weights=e**2, minlength=n_g)
    sizes = np.bincount(g_codes, minlength=n_g).astype(np.float64)
    pairs = float(np.sum(sizes * (sizes - 1)))
    cross = float(np.sum(sums**2 - sq)) / pairs if pairs > 0 else np.nan
    if by_searcher:
        rows.append(_variance_row("searcher", max(cross, 0.0)))
    rows.append(_variance_row("residual", float(e @ e) / (n - k)))
    return [{**r, "converged": True, "estimator": "ols-cluster"} for r in rows], []

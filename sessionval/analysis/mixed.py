r"""A linear mixed model of session scores: system fixed, searcher and topic random.

In a user study every searcher works on several topics with several systems (a Latin
square in Järvelin et al. 2008): sessions of one searcher, and sessions of one topic,
are not independent.  :func:`mixed_model` fits, for each per-session score,

.. math::

    y_{s} = \mu + \beta_{system(s)} + u_{searcher(s)} + v_{topic(s)} + \varepsilon_s,
    \quad u \sim N(0, \sigma_u^2),\ v \sim N(0, \sigma_v^2),\ \varepsilon \sim N(0, \sigma^2)

with crossed random intercepts for searcher and topic (``statsmodels`` ``MixedLM``,
REML, variance components over one all-embracing group), so the system effects are
estimated as the design demands.  The fixed effects are contrasts of the first system
against each other one (first − other: the a − b of the pairwise comparisons),
with Wald standard errors, z tests and confidence intervals.

References
----------
Baayen, Davidson & Bates (2008), J. Memory and Language 59(4) (crossed random effects
of subjects and items); Carterette, Kanoulas & Yilmaz (2011), "Simulating simple user
behavior for system effectiveness evaluation", CIKM (mixed models in IR evaluation);
Seabold & Perktold (2010), statsmodels.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd

from ..errors import StatisticsError

__all__ = [
    "MIXED_COLUMNS",
    "mixed_model",
]

#: statsmodels builds the crossed random effects as dense matrices (sessions × levels).
_MAX_DESIGN_CELLS = 50_000_000


def _levels_text(data: pd.DataFrame, components: dict[str, str]) -> str:
    """``"30 searcher + 4 topic"``: the levels of the random effects."""
    return " + ".join(f"{data[n].nunique()} {n}" for n in components) or "no"


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
)


def mixed_model(
    per_session: pd.DataFrame,
    *,
    measures: Sequence[str],
    system: str = "system_id",
    searcher: str = "user_id",
    topic: str = "topic_id",
    confidence: float = 0.95,
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
        (it has no ``var(...)`` row then).
    confidence
        Level of the Wald intervals of the fixed effects.

    Returns
    -------
    pandas.DataFrame
        :data:`MIXED_COLUMNS`.  ``kind`` is ``"fixed"`` for ``Intercept (<first
        system>)`` and ``<first system> − <system>`` (a − b, the sign of the pairwise
        comparisons), ``"variance"`` for the variance
        of each random effect and of the residual (estimate only).  ``attrs["notes"]``:
        the library's warnings on the estimates and non-converged fits, one line each.

    Raises
    ------
    StatisticsError
        A column is missing, there are fewer than two systems, or the design is too
        large for statsmodels' dense crossed-effects matrices.
    """
    import statsmodels.formula.api as smf
    from statsmodels.tools.sm_exceptions import ConvergenceWarning

    missing = [c for c in (system, searcher, topic, *measures) if c not in per_session.columns]
    if missing:
        raise StatisticsError(
            f"mixed model: column(s) {missing} missing; columns are {list(per_session.columns)}"
        )
    rows: list[dict[str, object]] = []
    notes: list[str] = []
    for m in measures:
        data = pd.DataFrame(
            {
                "y": per_session[m].astype("float64").to_numpy(),
                "system": per_session[system].astype(str).to_numpy(),
                "searcher": per_session[searcher].astype(str).to_numpy(),
                "topic": per_session[topic].astype(str).to_numpy(),
            }
        ).dropna(subset=["y"])
        systems = sorted(set(data["system"]))
        if len(systems) < 2:
            raise StatisticsError(f"mixed model of {m}: needs two systems, got {systems}")
        components = {
            name: f"0 + C({name})"
            for name in ("searcher", "topic")
            if (data[name] != data[name].iloc[0]).any()
        }
        size = len(data) * sum(data[name].nunique() for name in components)
        if size > _MAX_DESIGN_CELLS:
            raise StatisticsError(
                f"mixed model of {m}: {len(data)} sessions with "
                f"{_levels_text(data, components)} random-effect levels is too large for the "
                f"crossed-effects fit (dense design of {size:,} cells, at most "
                f"{_MAX_DESIGN_CELLS:,}); fit it on a sample of searchers"
            )
        counts = {
            "n_sessions": len(data),
            "n_searchers": data["searcher"].nunique(),
            "n_topics": data["topic"].nunique(),
        }
        data["group"] = 1
        # fit on the score in units of its SD (the optimiser converges far more often on
        # raw sDCG in the hundreds that way), then scale the estimates back
        unit = float(data["y"].std()) or 1.0
        data["y"] = data["y"] / unit
        model = smf.mixedlm(
            "y ~ C(system)", data, groups="group", re_formula="0", vc_formula=components
        )
        with warnings.catch_warnings():
            # Powell's derivative-free search copes with variances on the boundary (0),
            # where the gradient methods stall; L-BFGS is the fallback.  statsmodels warns
            # on the way; whether the final fit converged is reported
            warnings.simplefilter("ignore", ConvergenceWarning)
            # degenerate designs make statsmodels divide by zero on the way; the outcome
            # is checked below, so its numpy warnings would only clutter the console
            warnings.simplefilter("ignore", RuntimeWarning)
            try:
                fit = model.fit(reml=True, method=["powell", "lbfgs"])
            except (np.linalg.LinAlgError, ValueError) as exc:
                # a design the model cannot separate (e.g. each searcher used one system
                # on one topic): say so instead of failing the run
                raise StatisticsError(
                    f"mixed model of {m}: the fit failed on this design ({exc}); with "
                    f"{_levels_text(data, components)} random-effect levels for "
                    f"{len(data)} sessions the effects cannot be separated"
                ) from None
        converged = bool(fit.converged)
        with warnings.catch_warnings(record=True) as caught:
            # the standard errors of a singular fit warn (sqrt of a negative variance):
            # a note of the report, not a raw warning on stderr
            warnings.simplefilter("always")
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
        notes += sorted({f"mixed model of {m}: {str(w.message).splitlines()[0]}" for w in caught})
        if not converged:
            notes.append(f"mixed model of {m}: the fit did not converge; read it with care")
        for term in fit.fe_params.index:
            # contrasts written as first system − other (a − b, the comparisons' sign)
            sign = 1.0 if term == "Intercept" else -1.0
            label = (
                f"Intercept ({systems[0]})"
                if term == "Intercept"
                else f"{systems[0]} − {term.split('[T.', 1)[1].rstrip(']')}"
            )
            low, high = sorted((sign * float(ci.loc[term, 0]), sign * float(ci.loc[term, 1])))
            rows.append(
                {
                    "measure": m,
                    "term": label,
                    "kind": "fixed",
                    "estimate": unit * sign * float(fit.fe_params[term]),
                    "se": unit * float(bse_fe[term]),
                    "z": sign * float(tvalues[term]),
                    "p": float(pvalues[term]),
                    "ci_low": unit * low,
                    "ci_high": unit * high,
                    **counts,
                    "converged": converged,
                }
            )
        variances = dict(zip(model.exog_vc.names, np.atleast_1d(fit.vcomp), strict=True))
        variances["residual"] = float(fit.scale)
        for name, value in variances.items():
            rows.append(
                {
                    "measure": m,
                    "term": f"var({name})",
                    "kind": "variance",
                    "estimate": unit**2 * float(value),
                    "se": np.nan,
                    "z": np.nan,
                    "p": np.nan,
                    "ci_low": np.nan,
                    "ci_high": np.nan,
                    **counts,
                    "converged": converged,
                }
            )
    out = pd.DataFrame(rows, columns=list(MIXED_COLUMNS))
    out.attrs["notes"] = notes
    return out

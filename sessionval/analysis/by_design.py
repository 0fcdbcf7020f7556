"""Compare the systems of a per-session table with the analysis its design asks for.

:func:`compare_per_session` detects the design (:func:`~sessionval.analysis.design.detect_design`)
and compares every pair of systems on each score:

``by_topic`` (runs; searcher absent or the system)
    each system's sessions averaged per topic, the systems paired by topic: exactly
    :func:`~sessionval.analysis.compare.compare_systems` on the long table, as
    ``sessionval compare`` does for runs.
``within``, block ``searcher``
    each searcher's sessions averaged per system, paired by searcher.
``within``, block ``searcher+topic``
    (topics nested in searcher × system, e.g. a Latin square) per pair, the ordinary
    least-squares model ``score ~ system + searcher + topic`` (+ ``session_order`` as a
    period effect in a Latin square) on the two systems' sessions: the system contrast,
    its t test on the residual degrees of freedom, and ``effect_size`` = contrast / root
    residual mean square.  A paired t test on searcher means would ignore the topics.
``between``
    each searcher's sessions averaged, Welch's unequal-variance t test of the searcher
    means of the two systems (no pairing unit exists).
``log``
    one system: no row, a note says so.

Every row gains ``design``, ``block`` and ``note`` (why a pair could not be compared);
``n`` is the number of blocks used (topics, searchers; searchers of both systems for
``between``).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd

from ..errors import StatisticsError
from .compare import COMPARISON_COLUMNS, blocked_scores, compare_systems
from .design import Design, detect_design
from .multiple import ROUNDING, adjust_p, pair_indices
from .score_table import levels_in_order

__all__ = [
    "DESIGN_COLUMNS",
    "compare_per_session",
    "is_per_session",
]

#: The columns of :func:`compare_per_session`: the comparison's, then the design's.
DESIGN_COLUMNS: tuple[str, ...] = (*COMPARISON_COLUMNS, "design", "block", "note")
_UNIT = {
    "topic": "topic(s)",
    "searcher": "searcher(s)",
    "searcher+topic": "searcher(s)",
    "none": "",
}


def is_per_session(table: pd.DataFrame) -> bool:
    """``table`` is a per-session table as ``run`` writes it (``session_id``, ``system_id``)."""
    return {"session_id", "system_id"} <= {str(c) for c in table.columns}


def compare_per_session(
    per_session: pd.DataFrame,
    *,
    measures: Sequence[str],
    design: str | None = None,
    block: str | None = None,
    test: str = "paired-t",
    correction: str = "holm",
    alpha: float = 0.05,
    confidence: float = 0.95,
    resamples: int = 10_000,
    seed: int = 0,
    effect_size: str = "sakai",
) -> pd.DataFrame:
    """Compare every pair of systems of ``per_session`` as its design asks (module docstring).

    Parameters
    ----------
    per_session
        One row per session: ``system_id``, ``topic_id``, ``user_id`` (optional),
        ``session_order`` (optional) and the score columns.
    measures
        Score columns to compare.
    design, block
        Override of the detected design (:data:`~sessionval.analysis.design.DESIGNS`,
        :data:`~sessionval.analysis.design.BLOCKS`).
    test, correction, alpha, confidence, resamples, seed, effect_size
        As :func:`~sessionval.analysis.compare.compare_systems`; ``test`` applies to the
        paired designs (``by_topic``, ``within`` by searcher), the others have their own.

    Returns
    -------
    pandas.DataFrame
        :data:`DESIGN_COLUMNS`; ``attrs["design"]`` is the
        :class:`~sessionval.analysis.design.Design`, ``attrs["notes"]`` the remarks.
    """
    d = detect_design(per_session, design=design, block=block)
    missing = [m for m in measures if m not in per_session.columns]
    if missing:
        raise StatisticsError(
            f"per-session table: score column(s) {missing} missing; columns are "
            f"{list(per_session.columns)}"
        )
    notes: list[str] = []
    if d.design == "log":
        out = pd.DataFrame(columns=list(DESIGN_COLUMNS))
        notes.append(f"Design: {d.description}.")
    elif d.block in ("topic", "searcher"):
        column = "topic_id" if d.block == "topic" else "user_id"
        long = blocked_scores(per_session, measures=measures, block=column)
        out = compare_systems(
            long,
            test=test,  # type: ignore[arg-type]
            correction=correction,  # type: ignore[arg-type]
            alpha=alpha,
            confidence=confidence,
            systems=levels_in_order(per_session["system_id"]),
            resamples=resamples,
            seed=seed,
            effect_size=effect_size,  # type: ignore[arg-type]
            unit=d.block,  # the notes name the block: "3 searchers", not "3 topics"
        )
        notes += out.attrs.get("notes", [])
    else:
        if correction == "tukey-hsd":
            notes.append(
                "Tukey's HSD needs paired blocks; this design's p-values are corrected with "
                "Holm's method instead"
            )
            correction = "holm"
        rows = [
            _model_rows(
                per_session, m, d, alpha=alpha, confidence=confidence, correction=correction
            )
            for m in measures
        ]
        for part in rows:
            notes += part.attrs["notes"]
        out = pd.concat(rows, ignore_index=True)
    out["design"] = d.design
    out["block"] = d.block
    if "note" not in out.columns:
        out["note"] = ""
    n = out["n"].to_numpy(dtype=np.float64) if len(out) else np.zeros(0)
    short = (out["note"] == "") & (~np.isfinite(out["p"].to_numpy(dtype=np.float64)))
    out.loc[short, "note"] = [
        f"not compared: {int(k)} {_UNIT[d.block] or 'searchers'} scored for both systems (need 2)"
        if k < 2
        else "not compared: the scores do not vary"
        for k in n[short.to_numpy()]
    ]
    out = out.loc[:, list(DESIGN_COLUMNS)]
    out.attrs.update(design=d, notes=notes)
    return out


def _model_rows(
    per_session: pd.DataFrame,
    measure: str,
    d: Design,
    *,
    alpha: float,
    confidence: float,
    correction: str,
) -> pd.DataFrame:
    """One measure's rows for the ``between`` design and the ``searcher+topic`` block."""
    names = levels_in_order(per_session["system_id"])
    ia, ib = pair_indices(len(names))
    data = pd.DataFrame(
        {
            "y": per_session[measure].astype("float64").to_numpy(),
            "system": per_session["system_id"].astype(str).to_numpy(),
            "searcher": per_session["user_id"].astype(str).to_numpy(),
            "topic": per_session["topic_id"].astype(str).to_numpy(),
        }
    ).dropna(subset=["y"])
    period = d.latin_square and "session_order" in per_session.columns
    if period:
        data["order"] = per_session.loc[data.index, "session_order"].astype(str).to_numpy()
    results = []
    notes: list[str] = []
    for i, j in zip(ia, ib, strict=True):
        a, b = names[i], names[j]
        pair = data[data["system"].isin([a, b])]
        if d.design == "between":
            res, note = _welch(pair, a, b, confidence)
        else:
            res, note = _blocked_ols(pair, a, b, confidence, period)
        notes += [f"{a} vs {b}: {n}" for n in note]
        results.append(res)
    table = pd.DataFrame(results)
    p = table["p"].to_numpy(dtype=np.float64)
    p_adj = adjust_p(p, correction)  # type: ignore[arg-type]
    table.insert(0, "measure", measure)
    table.insert(1, "a", [names[i] for i in ia])
    table.insert(2, "b", [names[i] for i in ib])
    table["p_adjusted"] = p_adj
    table["correction"] = correction
    table["significant"] = np.asarray(p_adj < alpha)
    table.attrs["notes"] = [f"{measure}: {n}" for n in notes]
    return table


def _welch(
    pair: pd.DataFrame, a: str, b: str, confidence: float
) -> tuple[dict[str, object], list[str]]:
    """Welch's t test of the searcher means of ``a`` against ``b``."""
    from scipy import stats as st

    means = pair.groupby(["system", "searcher"])["y"].mean()
    xa = means.get(a, pd.Series(dtype="float64")).to_numpy()
    xb = means.get(b, pd.Series(dtype="float64")).to_numpy()
    row: dict[str, object] = {
        "n": int(xa.size + xb.size),
        "mean_a": float(xa.mean()) if xa.size else np.nan,
        "mean_b": float(xb.mean()) if xb.size else np.nan,
        "test": "welch-t",
        "effect_size_kind": "cohen_d",
        "ci_method": "welch-t",
        "note": "",
    }
    row["diff"] = float(row["mean_a"]) - float(row["mean_b"])  # type: ignore[arg-type]
    nan = dict.fromkeys(("ci_low", "ci_high", "effect_size", "statistic", "p"), np.nan)
    if xa.size < 2 or xb.size < 2:
        row["note"] = (
            f"not compared: {xa.size} searchers with {a} and {xb.size} with {b} (need 2 each)"
        )
        return {**row, **nan}, []
    va, vb = xa.var(ddof=1), xb.var(ddof=1)
    noise = ROUNDING * float(max(np.abs(xa).max(), np.abs(xb).max()))
    if np.sqrt(va + vb) <= noise:  # rounding noise of equal means counts as no variation
        row["note"] = "not compared: the searcher means do not vary within either system"
        return {**row, **nan}, []
    res = st.ttest_ind(xa, xb, equal_var=False)
    ci = res.confidence_interval(confidence)
    pooled = np.sqrt(((xa.size - 1) * va + (xb.size - 1) * vb) / (xa.size + xb.size - 2))
    row.update(
        ci_low=float(ci.low),
        ci_high=float(ci.high),
        effect_size=float(row["diff"]) / pooled if pooled > 0 else np.nan,  # type: ignore[arg-type]
        statistic=float(res.statistic),
        p=float(res.pvalue),
    )
    return row, []


def _blocked_ols(
    pair: pd.DataFrame, a: str, b: str, confidence: float, period: bool
) -> tuple[dict[str, object], list[str]]:
    """OLS ``y ~ system + searcher + topic (+ order)`` on one pair's sessions: a − b."""
    import statsmodels.formula.api as smf

    both = pair.groupby("searcher")["system"].nunique()
    kept = pair[pair["searcher"].isin(both.index[both == 2])]
    row: dict[str, object] = {
        "n": int(kept["searcher"].nunique()),
        "mean_a": float(kept.loc[kept["system"] == a, "y"].mean()),
        "mean_b": float(kept.loc[kept["system"] == b, "y"].mean()),
        "test": "ols-blocks" + ("+period" if period else ""),
        "effect_size_kind": "sakai_es_e2",
        "ci_method": "ols-t",
        "note": "",
    }
    nan = dict.fromkeys(("diff", "ci_low", "ci_high", "effect_size", "statistic", "p"), np.nan)
    if row["n"] < 2:  # type: ignore[operator]
        row["note"] = f"not compared: {row['n']} searchers used both {a} and {b} (need 2)"
        return {**row, **nan}, []
    kept = kept.assign(system=pd.Categorical(kept["system"], categories=[b, a]))
    terms = ["C(system)", "C(searcher)"]
    terms += [
        f"C({c})" for c in ("topic", "order") if c in kept and (kept[c] != kept[c].iloc[0]).any()
    ]
    formula = "y ~ " + " + ".join(terms)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit = smf.ols(formula, kept).fit()
    notes = sorted({str(w.message).splitlines()[0] for w in caught})
    key = f"C(system)[T.{a}]"
    if fit.df_resid < 1 or not np.isfinite(fit.bse[key]):
        row["note"] = "not compared: no residual degrees of freedom left by the blocks"
        return {**row, **nan}, notes
    ci = fit.conf_int(alpha=1.0 - confidence).loc[key]
    diff = float(fit.params[key])
    rmse = float(np.sqrt(fit.mse_resid))
    if rmse <= ROUNDING * float(kept["y"].abs().max()):
        # the blocks explain every score: the residual is rounding noise (a t of ~1e16
        # otherwise), counted as 0 as the two-way ANOVA counts its sums of squares
        zero = diff == 0 or abs(diff) <= ROUNDING * float(kept["y"].abs().max())
        row.update(
            diff=0.0 if zero else diff,
            ci_low=0.0 if zero else diff,
            ci_high=0.0 if zero else diff,
            effect_size=0.0 if zero else np.nan,
            statistic=0.0 if zero else float(np.sign(diff) * np.inf),
            p=1.0 if zero else 0.0,
        )
        notes.append(
            "no residual variation: the blocks explain every session, so "
            + ("the systems do not differ (t = 0, p = 1)" if zero else "t = ±inf, p = 0")
            + " and the effect size is "
            + ("0" if zero else "undefined (NaN)")
        )
        return row, notes
    row.update(
        diff=diff,
        ci_low=float(ci[0]),
        ci_high=float(ci[1]),
        effect_size=diff / rmse,
        statistic=float(fit.tvalues[key]),
        p=float(fit.pvalues[key]),
    )
    return row, notes

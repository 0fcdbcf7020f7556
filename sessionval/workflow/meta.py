"""Meta-evaluation jobs that re-evaluate: runs under f-qrels, a study under a parameter grid.

The statistics are in :mod:`sessionval.analysis.meta` and
:mod:`sessionval.analysis.incomplete` (tidy tables in, tidy tables out); these jobs
produce their inputs by evaluating again, which the analysis stage never does.

:func:`incomplete_judgments`
    Bompada et al. (2007): score the runs under nested f-qrels and compare each
    measure's system ranking (Kendall's tau, tau_AP) and pairwise significance
    decisions (Wilcoxon, confusion matrix, accuracy, g-mean) with the full judgments.
:func:`parameter_sensitivity`
    For a session study: evaluate under every setting of a grid of session parameters
    (b, bq, X, gains, …) and give Kendall's tau of the system ranking and of the
    session ranking against the default configuration.
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..analysis.incomplete import decision_agreement, fqrels
from ..analysis.meta import kendall_tau, ranking_agreement, tau_z0
from ..errors import MeasureSpecError, SessionvalError, StatisticsError
from ..evaluation.config import SessionConfig
from ..evaluation.gain_fit import ConfigNote
from ..evaluation.session import evaluate
from ..frame import JudgmentFrame, LoadedStudy
from ..progress import ProgressLike, as_progress
from .runs import RunScoring, score_runs

__all__ = [
    "DEFAULT_GRID",
    "IncompleteJudgments",
    "incomplete_judgments",
    "parameter_grid",
    "parameter_sensitivity",
]

#: The grid of ``sessionval meta sensitivity`` when none is given.
DEFAULT_GRID: Mapping[str, tuple[str, ...]] = {
    "b": ("2", "4", "10"),
    "bq": ("1.5", "4", "10"),
    "cutoff": ("5", "10", "20"),
}
#: At most this many settings (each is a full evaluation of the study).
_MAX_SETTINGS = 500


@dataclass(frozen=True)
class IncompleteJudgments:
    """Result of :func:`incomplete_judgments`.

    Attributes
    ----------
    summary
        One row per measure × fraction: ``measure, fraction, n_judgments, n_systems,
        tau, z0, p, tau_ap, n_pairs, c11, c12, c21, c22, accuracy, g_mean``.
    qrels
        The f-qrels by fraction.
    """

    summary: pd.DataFrame
    qrels: dict[float, JudgmentFrame]


def incomplete_judgments(
    runs: Mapping[str, pd.DataFrame],
    judgments: JudgmentFrame,
    measures: Sequence[str],
    *,
    fractions: Sequence[float] = (0.1, 0.3, 0.5, 1.0),
    seed: int = 0,
    scoring: RunScoring | None = None,
    alpha: float = 0.05,
    test: str = "wilcoxon",
    progress: ProgressLike = None,
) -> IncompleteJudgments:
    """Rankings and significance decisions of the runs under f-qrels vs the full judgments.

    Parameters
    ----------
    runs
        Run tables by name.
    judgments
        The complete judgments.
    measures
        Single-query measures.
    fractions
        Fractions of judgments kept (nested samples,
        :func:`~sessionval.analysis.incomplete.fqrels`).
    seed
        Seed of the samples.
    scoring
        How runs are scored (``sessionval evaluate``'s options).
    alpha, test
        Level and paired test of the significance decisions (the paper: Wilcoxon).
    progress
        Told the runs scored under the full judgments and each sample
        (:class:`~sessionval.progress.Progress`).

    Returns
    -------
    IncompleteJudgments
    """
    shown = as_progress(progress)
    # one run's scoring is the unit: the full judgments' and each sample's
    shown.start("scoring runs on f-qrels", (len(fractions) + 1) * len(runs), "runs")
    full = score_runs(runs, judgments, measures, scoring=scoring)
    shown.advance(len(runs))
    names = list(full["measure"].cat.categories)
    samples = fqrels(judgments, fractions, seed=seed)
    parts = []
    for f, sub in samples.items():
        partial = score_runs(runs, sub, measures, scoring=scoring)
        shown.advance(len(runs))
        agree = ranking_agreement(full, partial, measures=names)
        decide = decision_agreement(full, partial, measures=names, alpha=alpha, test=test)
        row = agree.merge(decide, on="measure")
        row.insert(1, "fraction", f)
        row.insert(2, "n_judgments", len(sub.table))
        parts.append(row)
    shown.finish()
    return IncompleteJudgments(summary=pd.concat(parts, ignore_index=True), qrels=samples)


def parameter_grid(specs: Sequence[str]) -> dict[str, list[str]]:
    """Parse ``name=v1,v2,...`` specifications (``sessionval meta sensitivity --grid``).

    Examples
    --------
    >>> parameter_grid(["b=2,4", "gains=0-1-2-3,0-1-10-100"])
    {'b': ['2', '4'], 'gains': ['0-1-2-3', '0-1-10-100']}
    """
    known = set(SessionConfig.model_fields)
    grid: dict[str, list[str]] = {}
    for spec in specs:
        name, sep, values = spec.partition("=")
        name = name.strip()
        if not sep or not name or not values.strip():
            raise MeasureSpecError(f"grid {spec!r}: write name=value1,value2,...")
        if name not in known:
            raise MeasureSpecError(
                f"grid {spec!r}: {name!r} is not a session parameter; parameters: "
                f"{', '.join(sorted(known - {'preset_name'}))}"
            )
        if name in grid:
            raise MeasureSpecError(f"grid: parameter {name!r} given twice")
        grid[name] = [v.strip() for v in values.split(",") if v.strip()]
    return grid


def parameter_sensitivity(
    loaded: LoadedStudy,
    grid: Mapping[str, Sequence[Any]],
    *,
    base: SessionConfig | None = None,
    measure: str = "nsdcg",
    progress: ProgressLike = None,
) -> pd.DataFrame:
    """Kendall's tau of the system and session rankings under each setting vs the default.

    Parameters
    ----------
    loaded
        The study (frame and judgments).
    grid
        Parameter values to try (every combination is evaluated).
    base
        The default configuration (default: the paper's, :class:`SessionConfig`).
        Its ``gains = "auto"`` is fitted to the study's grades in every setting, as
        :func:`~sessionval.evaluation.session.evaluate` fits it (the
        :class:`~sessionval.evaluation.gain_fit.ConfigNote` of the choice is not
        repeated per setting: :func:`~sessionval.evaluation.gain_fit.fit_gains` says it).
    measure
        Per-session score that ranks (``nsdcg``, ``sdcg``, ``avg_pos_nsdcg``, …).
    progress
        Told the settings evaluated, the default's first
        (:class:`~sessionval.progress.Progress`).

    Returns
    -------
    pandas.DataFrame
        One row per setting: ``setting`` (a label), one column per grid parameter,
        ``n_systems, tau_systems, z0_systems, p_systems, n_sessions, tau_sessions,
        mean`` (tau_sessions is scipy's tau-b: sessions tie often).

    Raises
    ------
    MeasureSpecError
        A value is not valid for its parameter, or the grid is too large.
    """
    from scipy import stats

    cfg = base or SessionConfig()
    combos = list(itertools.product(*grid.values()))
    if len(combos) > _MAX_SETTINGS:
        raise MeasureSpecError(
            f"the grid has {len(combos)} settings (each a full evaluation); at most {_MAX_SETTINGS}"
        )
    shown = as_progress(progress)
    shown.start(f"evaluating {len(combos) + 1} settings", len(combos) + 1, "settings")
    reference = _scores(loaded, cfg, measure)
    shown.advance()
    rows = []
    for combo in combos:
        changes = dict(zip(grid.keys(), combo, strict=True))
        try:
            config = cfg.replace(**changes)
        except SessionvalError:
            raise
        except ValueError as exc:  # pydantic.ValidationError
            raise MeasureSpecError(f"grid setting {changes}: {exc}") from exc
        per_session = _scores(loaded, config, measure)
        both = pd.concat([reference, per_session], axis=1, keys=["ref", "new"]).dropna()
        sys_ref = both["ref"].groupby(both["ref"]["system"], observed=True)["value"].mean()
        sys_new = both["new"].groupby(both["new"]["system"], observed=True)["value"].mean()
        n_sys = len(sys_ref)
        tau_sys = kendall_tau(sys_ref.to_numpy(), sys_new.to_numpy()) if n_sys >= 2 else np.nan
        z0, p = tau_z0(tau_sys, n_sys) if n_sys >= 2 else (np.nan, np.nan)
        tau_ses = (
            float(stats.kendalltau(both["ref"]["value"], both["new"]["value"]).statistic)
            if len(both) >= 2
            else np.nan
        )
        label = " ".join(f"{k}={v}" for k, v in changes.items())
        rows.append(
            {
                "setting": label,
                **{k: str(v) for k, v in changes.items()},
                "n_systems": n_sys,
                "tau_systems": tau_sys,
                "z0_systems": z0,
                "p_systems": p,
                "n_sessions": len(both),
                "tau_sessions": tau_ses,
                "mean": float(per_session["value"].mean()),
            }
        )
        shown.advance()
    shown.finish()
    return pd.DataFrame(rows)


def _scores(loaded: LoadedStudy, config: SessionConfig, measure: str) -> pd.DataFrame:
    """Per-session ``system`` and ``value`` (the measure) under ``config``, by session id."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConfigNote)  # once per setting would drown the table
        ps = evaluate(loaded.frame, loaded.judgments, config).per_session()
    if measure not in ps.columns:
        raise StatisticsError(
            f"{measure!r} is not a per-session score; scores: "
            f"{', '.join(c for c in ps.columns if ps[c].dtype.kind == 'f')}"
        )
    return pd.DataFrame(
        {"system": ps["system_id"].astype(str).to_numpy(), "value": ps[measure].to_numpy()},
        index=ps["session_id"].astype(str).to_numpy(),
    )

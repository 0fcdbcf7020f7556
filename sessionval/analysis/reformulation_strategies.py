r"""The strategies a session used and its score: a linear model with the design's blocks.

:func:`strategy_model` fits, on the sessions with at least one reformulation,

.. math::

    y_s = \sum_g \beta_g\, \mathrm{used}_{g}(s) + \gamma\, n_s
        + \alpha_{system(s)} + u_{searcher(s)} + v_{topic(s)} + \varepsilon_s

by ordinary least squares, with ``used_g`` = 1 when session *s* made at least one
reformulation of group *g* (:data:`~sessionval.analysis.reformulation_types.GROUP_ORDER`),
:math:`n_s` its number of reformulations, and system, searcher and topic as fixed
blocks (each only when it varies).  The block with the most levels is absorbed by
demeaning every column within it (Frisch-Waugh-Lovell: the same estimates and standard
errors as its dummy columns, without an n × levels matrix: a log of 100,000 sessions
by 25,000 searchers stays a few arrays); the other blocks enter as dummy columns.  The
residual degrees of freedom are n minus the rank of the columns minus the absorbed
levels; intervals and p-values are t-based.  Coefficients are associations, not
effects: searchers choose their moves.

References
----------
Frisch, R., Waugh, F. V. (1933). Partial time regressions as compared with individual
trends. Econometrica 1(4); Lovell, M. C. (1963), JASA 58(304).
"""

from __future__ import annotations

from typing import Final

import numpy as np
import pandas as pd

from .._types import FloatArray
from ..errors import StatisticsError
from .absorb import demean_within, indicator_columns
from .model_rows import text_levels
from .reformulation_effects import session_rows
from .reformulation_types import GROUP_ORDER

__all__ = [
    "STRATEGY_COLUMNS",
    "strategy_model",
]

#: Columns of :func:`strategy_model`.
STRATEGY_COLUMNS: Final = (
    "term",
    "estimate",
    "se",
    "t",
    "p",
    "ci_low",
    "ci_high",
    "n_sessions",
    "formula",
)

#: Dummy cells (sessions × levels of the blocks not absorbed) the fit builds at most.
MAX_DUMMY_CELLS: Final = 50_000_000

_BLOCKS: Final = (("system_id", "system"), ("user_id", "searcher"), ("topic_id", "topic"))


def _sessions(table: pd.DataFrame, per_session: pd.DataFrame, outcome: str) -> pd.DataFrame:
    """One row per session with a reformulation: y, the indicators, the count and the blocks.

    The sessions in the per-session table's order; ``used_<group>`` for each group the
    table has (1.0 when the session made one), counted on integer codes of the session
    ids and groups (one ``bincount``, not a table pivoted by id).
    """
    at = session_rows(table, per_session)
    if at is None:  # a repeated or missing session id: one code per id's text
        codes, uniques = pd.factorize(
            pd.concat(
                [table["session_id"].astype(str), per_session["session_id"].astype(str)],
                ignore_index=True,
            )
        )
        k, pair_id, row_id = len(uniques), codes[: len(table)], codes[len(table) :]
    else:  # each pair's per-session row: only the distinct ids became text
        k, pair_id, row_id = len(per_session), at, np.arange(len(per_session))
    # the groups in the order of their text (factorize(astype(str), sort=True))
    group = text_levels(table["group"])
    group_code, groups = np.asarray(group.codes, dtype=np.intp), group.categories
    # a pair without a group marks no strategy (crosstab's rule); nor one of no session
    grouped = (group_code >= 0) & (pair_id >= 0)
    n_groups = len(groups)
    used = np.bincount(
        pair_id[grouped] * n_groups + group_code[grouped], minlength=k * n_groups
    ).reshape(k, n_groups)
    n_pairs = np.bincount(pair_id[pair_id >= 0], minlength=k)
    rows = np.flatnonzero(used[row_id].any(axis=1))  # the sessions with a (grouped) pair
    data = pd.DataFrame({"session_id": per_session["session_id"].iloc[rows].astype(str).array})
    data["y"] = per_session[outcome].astype("float64").to_numpy()[rows]
    for col, name in _BLOCKS:
        if col in per_session.columns:
            data[name] = per_session[col].iloc[rows].astype(str).array
    picked = used[row_id[rows]] > 0
    for j, g in enumerate(groups):
        data[f"used_{g}"] = picked[:, j].astype(np.float64)
    data["n_reformulations"] = n_pairs[row_id[rows]].astype(np.float64)
    return data.dropna(subset=["y"]).reset_index(drop=True)


def _varies(column: pd.Series) -> bool:
    return len(column) > 0 and not column.eq(column.iloc[0]).all()


def _independent(x: FloatArray, names: list[str]) -> tuple[list[int], list[str]]:
    """Columns that each add a dimension to the ones before; the names of the others."""
    kept: list[int] = []
    for j in range(x.shape[1]):
        if np.linalg.matrix_rank(x[:, [*kept, j]]) > len(kept):
            kept.append(j)
    return kept, [n for j, n in enumerate(names) if j not in kept]


def strategy_model(
    table: pd.DataFrame,
    per_session: pd.DataFrame,
    *,
    outcome: str = "nsdcg",
    confidence: float = 0.95,
) -> pd.DataFrame:
    """OLS of a session score on the groups of reformulation used, with the design's blocks.

    Parameters
    ----------
    table
        The reformulation table (``session_id``, ``group``).
    per_session
        The per-session table with ``outcome`` and ``system_id``, ``user_id``,
        ``topic_id`` where the study has them.
    outcome
        The session score (default nsDCG).
    confidence
        Level of the intervals.

    Returns
    -------
    pandas.DataFrame
        :data:`STRATEGY_COLUMNS`, one row per ``used_<group>`` and for
        ``n_reformulations``; the blocks' coefficients are not listed.  A group every or
        no session used is left out, and so is one the earlier columns and the blocks
        determine (``attrs["notes"]`` says which).  Empty, with a note, when too few
        sessions are left or the blocks not absorbed are too large.

    Examples
    --------
    >>> table = pd.DataFrame({"session_id": ["a", "b", "c", "d", "d", "e", "e", "f"],
    ...     "group": ["specialisation", "new", "specialisation", "new", "new",
    ...               "specialisation", "new", "new"]})
    >>> ps = pd.DataFrame({"session_id": list("abcdef"),
    ...                    "nsdcg": [0.6, 0.2, 0.7, 0.25, 0.5, 0.3]})
    >>> fit = strategy_model(table, ps)
    >>> fit[["term", "estimate"]].round(2).to_numpy().tolist()
    [['used_specialisation', 0.25], ['used_new', -0.15], ['n_reformulations', 0.0]]
    """
    from scipy import stats as st

    for name, frame, needed in (
        ("reformulation table", table, ("session_id", "group")),
        ("per-session table", per_session, ("session_id", outcome)),
    ):
        missing = [c for c in needed if c not in frame.columns]
        if missing:
            raise StatisticsError(
                f"strategy model: {name} lacks column(s) {missing}; columns are "
                f"{list(frame.columns)}"
            )
    data = _sessions(table, per_session, outcome)
    wanted = [*(f"used_{g}" for g in GROUP_ORDER), "n_reformulations"]
    terms = [c for c in wanted if c in data and _varies(data[c])]
    blocks = [b for _, b in _BLOCKS if b in data and _varies(data[b])]
    formula = f"{outcome} ~ " + " + ".join([*terms, *(f"C({b})" for b in blocks)] or ["1"])
    empty = pd.DataFrame(columns=list(STRATEGY_COLUMNS))
    codes = {b: pd.factorize(data[b])[0] for b in blocks}
    absorbed = max(blocks, key=lambda b: int(codes[b].max()) + 1) if blocks else None
    others = [b for b in blocks if b != absorbed]
    n_dummies = sum(int(codes[b].max()) for b in others)
    if n_dummies * len(data) > MAX_DUMMY_CELLS:
        empty.attrs["notes"] = [
            f"strategy model not fitted: blocks {others} have {n_dummies} levels besides "
            f"the absorbed {absorbed} (more than {MAX_DUMMY_CELLS:,} dummy cells)"
        ]
        return empty
    dummies = [
        indicator_columns(codes[b], int(codes[b].max()) + 1) for b in others if codes[b].max() > 0
    ]
    x = np.column_stack([data[terms].to_numpy(np.float64), *dummies]) if terms else None
    y = data["y"].to_numpy(np.float64)
    if absorbed is None:
        levels = 1
        group = np.zeros(len(data), dtype=np.int64)
    else:
        levels = int(codes[absorbed].max()) + 1
        group = codes[absorbed]
    if x is None or len(data) <= len(terms) + levels:
        empty.attrs["notes"] = [
            f"strategy model not fitted: {len(data)} sessions with a reformulation and "
            f"{len(terms)} varying strategies"
        ]
        return empty
    xd = demean_within(x, group, levels)  # the intercept/block out
    yd = demean_within(y[:, None], group, levels)[:, 0]
    names = [*terms, *(f"dummy{j}" for j in range(x.shape[1] - len(terms)))]
    cols, dropped = _independent(xd, names)
    dropped = [d for d in dropped if not d.startswith("dummy")]
    xd = xd[:, cols]
    kept = [names[j] for j in cols if not names[j].startswith("dummy")]
    df = len(data) - len(cols) - levels
    notes = [f"strategy model: {', '.join(dropped)} left out (collinear with the others)"]
    notes = notes if dropped else []
    if df < 1 or not kept:
        empty.attrs["notes"] = [*notes, "strategy model not fitted: no residual degrees of freedom"]
        return empty
    beta, *_ = np.linalg.lstsq(xd, yd, rcond=None)
    resid = yd - xd @ beta
    sigma2 = float(resid @ resid) / df
    se = np.sqrt(np.diag(np.linalg.inv(xd.T @ xd)) * sigma2)
    k = len(kept)
    est, err = beta[:k], se[:k]
    with np.errstate(divide="ignore", invalid="ignore"):
        t = est / err
    half = st.t.ppf(0.5 + confidence / 2, df) * err
    out = pd.DataFrame(
        {
            "term": kept,
            "estimate": est,
            "se": err,
            "t": t,
            "p": 2 * st.t.sf(np.abs(t), df),
            "ci_low": est - half,
            "ci_high": est + half,
            "n_sessions": len(data),
            "formula": formula,
        }
    )
    out.attrs["notes"] = notes
    return out

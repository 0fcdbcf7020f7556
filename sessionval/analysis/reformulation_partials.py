r"""The reformulation analyses of a study split in partitions, from sums each partition makes.

A distributed run writes each partition's reformulation table where it is computed
(a query pair lies in one session, so a partition's pairs are the study's) and
reduces it to a :class:`ReformulationPartial`: the counts of each type, the counts of
each transition, and, per level, category and system, what the effects need.  Its
size grows with the types, systems and searchers, never with the pairs or sessions.
:meth:`ReformulationPartial.combine` adds two partials; :func:`distribution_of`,
:func:`transitions_of` and :func:`effects_of` finish them into the tables the local
functions give on the whole table (:func:`~sessionval.analysis.reformulation_effects.
reformulation_transitions`, :func:`~sessionval.analysis.reformulation_effects.
reformulation_effects`).

The effects average each unit first.  With the session as the unit (a log), each
session lies in one partition: a partition gives, per category, system and outcome,
the number of its session means, their mean and their sum of squared deviations,
and two partials are merged exactly in real arithmetic (Chan, Golub & LeVeque 1983,
*The American Statistician* 37(3), 242-247):

.. math::

    n = n_a + n_b, \quad \bar x = \bar x_a + (\bar x_b - \bar x_a) n_b / n, \quad
    M = M_a + M_b + (\bar x_b - \bar x_a)^2 n_a n_b / n.

With the searcher as the unit (a user study), a searcher's sessions may lie in
several partitions, so a partition gives each searcher's count and sum per category,
system and outcome, which add up.  Floating-point sums depend on their order, so
the effects agree with the local function's to about 1e-15 relative, not bit for bit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .reformulation_effects import (
    EFFECT_COLUMNS,
    LEVELS,
    OUTCOMES,
    TRANSITION_COLUMNS,
)
from .reformulation_types import GROUP_ORDER, TYPES

__all__ = [
    "ReformulationPartial",
    "distribution_of",
    "effects_of",
    "reformulation_partial",
    "transitions_of",
]

#: the local tables' orders (a name in both lists takes its place in the second, as there)
_RANK = {c: i for i, c in enumerate((*TYPES, *GROUP_ORDER))}
_MOVE_RANK = {c: i for i, c in enumerate((*TYPES, "end"))}


@dataclass(frozen=True)
class ReformulationPartial:
    """What a partition's reformulation table adds to the study's analyses (module docstring).

    Attributes
    ----------
    n_pairs, n_sessions
        Query pairs, and sessions with at least one pair.
    types
        Pairs per (``type``, ``group``).
    transitions
        Pairs per (``from_type``, ``to_type``), ``end`` after a session's last pair.
    pairs
        Pairs per (``level``, ``category``, ``system_id``).
    sessions
        Per (``level``, ``category``, ``system_id``, ``outcome``): ``k`` session means,
        their ``mean`` and sum of squared deviations ``m2``.
    searchers
        Per (``level``, ``category``, ``system_id``, ``user_id``, ``outcome``): ``count``
        values and their ``sum``.
    """

    n_pairs: int
    n_sessions: int
    types: pd.Series
    transitions: pd.Series
    pairs: pd.Series
    sessions: pd.DataFrame
    searchers: pd.DataFrame

    def combine(self, other: ReformulationPartial) -> ReformulationPartial:
        """The partial of both parts of a study (sessions in one part only)."""

        def add(a: pd.Series, b: pd.Series) -> pd.Series:
            return a.add(b, fill_value=0).astype(np.int64)

        searchers = pd.concat([self.searchers, other.searchers])
        searchers = searchers.groupby(level=list(range(searchers.index.nlevels))).sum()
        return ReformulationPartial(
            n_pairs=self.n_pairs + other.n_pairs,
            n_sessions=self.n_sessions + other.n_sessions,
            types=add(self.types, other.types),
            transitions=add(self.transitions, other.transitions),
            pairs=add(self.pairs, other.pairs),
            sessions=_merge_moments(self.sessions, other.sessions),
            searchers=searchers,
        )


def _merge_moments(a: pd.DataFrame, b: pd.DataFrame) -> pd.DataFrame:
    """Chan et al.'s merge of ``(k, mean, m2)`` per index entry (module docstring)."""
    both = a.add_suffix("_a").join(b.add_suffix("_b"), how="outer")
    ka, kb = both["k_a"].fillna(0).to_numpy(), both["k_b"].fillna(0).to_numpy()
    ma, mb = both["mean_a"].fillna(0).to_numpy(), both["mean_b"].fillna(0).to_numpy()
    k = ka + kb
    with np.errstate(invalid="ignore", divide="ignore"):
        delta = mb - ma
        mean = np.where(kb == 0, ma, np.where(ka == 0, mb, ma + delta * kb / k))
        m2 = both["m2_a"].fillna(0).to_numpy() + both["m2_b"].fillna(0).to_numpy()
        m2 = m2 + np.where((ka > 0) & (kb > 0), delta**2 * ka * kb / k, 0.0)
    return pd.DataFrame({"k": k.astype(np.int64), "mean": mean, "m2": m2}, index=both.index)


def _counts(frame: pd.DataFrame, keys: list[str]) -> pd.Series:
    return frame.groupby(keys, observed=True, sort=False).size().astype(np.int64)


def reformulation_partial(
    table: pd.DataFrame, *, outcomes: Sequence[str] = OUTCOMES
) -> ReformulationPartial:
    """A partition's reformulation table reduced to what the study's analyses add up."""
    data = pd.DataFrame(
        {
            "session_id": table["session_id"].astype(str).to_numpy(),
            "user_id": table["user_id"].astype(str).to_numpy(),
            "system_id": table["system_id"].astype(str).to_numpy(),
            "from_pos": table["from_pos"].to_numpy(),
            "type": table["type"].astype(str).to_numpy(),
            "group": table["group"].astype(str).to_numpy(),
            **{o: table[o].astype("float64").to_numpy() for o in outcomes},
        }
    ).sort_values(["session_id", "from_pos"], kind="stable")
    nxt = data["type"].shift(-1)
    same = data["session_id"].eq(data["session_id"].shift(-1))
    moves = pd.DataFrame({"from_type": data["type"], "to_type": nxt.where(same, "end")})
    pairs, sessions, searchers = [], [], []
    for level in LEVELS:
        keyed = data.assign(level=level, category=data[level])
        keys = ["level", "category", "system_id"]
        pairs.append(_counts(keyed, keys))
        long = keyed.melt(
            id_vars=[*keys, "session_id", "user_id"], value_vars=list(outcomes), var_name="outcome"
        )
        per_session = long.groupby([*keys, "outcome", "session_id"], sort=False)["value"].mean()
        grouped = per_session.dropna().groupby(level=[0, 1, 2, 3], sort=False)
        moments = grouped.agg(["count", "mean", "var"])
        sessions.append(
            pd.DataFrame(
                {
                    "k": moments["count"].astype(np.int64),
                    "mean": moments["mean"],
                    "m2": moments["var"].fillna(0.0) * (moments["count"] - 1),
                }
            )
        )
        by_user = long.groupby([*keys, "user_id", "outcome"], sort=False)["value"]
        searchers.append(pd.DataFrame({"count": by_user.count(), "sum": by_user.sum()}))
    return ReformulationPartial(
        n_pairs=len(data),
        n_sessions=int(data["session_id"].nunique()),
        types=_counts(data, ["type", "group"]),
        transitions=_counts(moves, ["from_type", "to_type"]),
        pairs=pd.concat(pairs),
        sessions=pd.concat(sessions),
        searchers=pd.concat(searchers),
    )


def distribution_of(partial: ReformulationPartial) -> pd.DataFrame:
    """Count and share of each type (with its group), in the taxonomy's order."""
    counts = partial.types.rename("n").reset_index()
    counts = counts.sort_values("type", key=lambda s: s.map(_MOVE_RANK), kind="stable")
    counts["share"] = counts["n"] / counts["n"].sum()
    return counts.reset_index(drop=True).astype({"type": str, "group": str})


def transitions_of(partial: ReformulationPartial) -> pd.DataFrame:
    """:func:`~sessionval.analysis.reformulation_effects.reformulation_transitions`' table."""
    counts = partial.transitions.rename("n").reset_index()
    counts["share"] = counts["n"] / counts.groupby("from_type")["n"].transform("sum")
    counts = counts.sort_values(
        ["from_type", "to_type"], key=lambda s: s.map(_MOVE_RANK), kind="stable"
    ).reset_index(drop=True)
    return counts.loc[:, list(TRANSITION_COLUMNS)]


def effects_of(
    partial: ReformulationPartial,
    *,
    unit: str = "session_id",
    outcomes: Sequence[str] = OUTCOMES,
    confidence: float = 0.95,
) -> pd.DataFrame:
    """:func:`~sessionval.analysis.reformulation_effects.reformulation_effects`' table."""
    from scipy import stats as st

    if unit == "session_id":
        cells = partial.sessions
        k = cells["k"].to_numpy(dtype=np.float64)
        mean = cells["mean"].to_numpy(dtype=np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            sd = np.sqrt(cells["m2"].to_numpy() / (k - 1))
        index = cells.index
    else:
        s = partial.searchers
        units = (s["sum"] / s["count"].where(s["count"] > 0)).dropna()
        # per (level, category, system, outcome): the searchers' means
        units = units.reorder_levels([0, 1, 2, 4, 3])
        grouped = units.groupby(level=[0, 1, 2, 3], sort=False).agg(["mean", "std", "count"])
        k = grouped["count"].to_numpy(dtype=np.float64)
        mean, sd = grouped["mean"].to_numpy(), grouped["std"].to_numpy()
        index = grouped.index
    with np.errstate(invalid="ignore", divide="ignore"):
        half = st.t.ppf(0.5 + confidence / 2, k - 1) * sd / np.sqrt(k)
    half = np.where(k >= 2, half, np.nan)
    keys = index.to_frame(index=False)
    keys.columns = ["level", "category", "system_id", "outcome"]
    n_pairs = partial.pairs.reindex(pd.MultiIndex.from_frame(keys.iloc[:, :3]))
    out = pd.DataFrame(
        {
            "level": keys["level"].to_numpy(),
            "category": keys["category"].astype(str).to_numpy(),
            "system_id": keys["system_id"].to_numpy(),
            "outcome": keys["outcome"].to_numpy(),
            "n_pairs": n_pairs.to_numpy(dtype=np.int64),
            "n_units": k.astype(np.int64),
            "unit": unit,
            "mean": mean,
            "ci_low": mean - half,
            "ci_high": mean + half,
        }
    )
    out = out[out["outcome"].isin(list(outcomes))]
    # the local table's order: level (type, group), category (taxonomy), outcome, system
    order = np.lexsort(
        (
            out["system_id"].to_numpy(dtype=str),
            out["outcome"].to_numpy(dtype=str),
            out["category"].map(_RANK).to_numpy(),
            out["level"].map({"type": 0, "group": 1}).to_numpy(),
        )
    )
    return out.iloc[order].reset_index(drop=True).loc[:, list(EFFECT_COLUMNS)]

r"""What reformulations did: effects per type and system, transitions, strategies and nsDCG.

Three analyses of the reformulation table
(:func:`~sessionval.analysis.reformulations.reformulations`), each a tidy table:

:func:`reformulation_effects`
    for each type and each group (``level``), each system and each outcome
    (``delta_dcg``, ``new_relevant``): the mean and a t confidence interval.  The pairs
    of one session (and the sessions of one searcher) are not independent, so each
    *unit* (``unit``: the session, or the searcher in a user study) is averaged first
    and the interval is the t interval of the unit means,
    :math:`\bar u \pm t_{1-\alpha/2,\,k-1}\, s_u/\sqrt{k}` over the :math:`k` units
    (NaN with fewer than two).  This compares types with each other inside a system;
    the systems are compared by :func:`compare_reformulation_effects`.
:func:`compare_reformulation_effects`
    each session's mean outcome per type or group becomes a per-session score
    (``<outcome>|<category>``, NaN when the session has no such pair), and the systems
    are compared on it by :func:`~sessionval.analysis.by_design.compare_per_session`,
    so the interval respects the design (searcher blocks, searcher and topic blocks in
    a Latin square, Welch between searchers, by topic for runs).
:func:`reformulation_transitions`
    which type follows which along the sessions, and ``end`` when the session stopped
    after it: ``n`` and ``share`` of the row (the ``end`` share of a type is the share of
    its reformulations after which the searcher issued no further query).
:func:`~sessionval.analysis.reformulation_strategies.strategy_model`
    (its own module) relates the groups of reformulation a session used to its nsDCG.

References
----------
Huang, J., Efthimiadis, E. N. (2009). Analyzing and evaluating query reformulation
strategies in web search logs. CIKM 2009 (effects of each type on the next query's
clicks, their Table 5).  Järvelin, K., Price, S. L., Delcambre, L. M. L., Nielsen, M. L.
(2008). Discounted cumulated gain based evaluation of multiple-query IR sessions. ECIR
2008 (sDCG, nsDCG).

Examples
--------
>>> pairs = pd.DataFrame({"session_id": ["s1", "s1", "s2"], "system_id": "A",
...     "type": ["add_words", "same", "add_words"], "group": ["specialisation", "repeat",
...     "specialisation"], "from_pos": [1, 2, 1], "delta_dcg": [2.0, 0.0, 4.0],
...     "new_relevant": [1, 0, 3]})
>>> eff = reformulation_effects(pairs)
>>> eff.query("category == 'add_words' and outcome == 'delta_dcg'")[["n_pairs", "mean"]].to_numpy()
array([[2., 3.]])
>>> reformulation_transitions(pairs)[["from_type", "to_type", "n", "share"]]
   from_type to_type  n  share
0       same     end  1    1.0
1  add_words    same  1    0.5
2  add_words     end  1    0.5
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

import numpy as np
import numpy.typing as npt
import pandas as pd

from ..errors import StatisticsError
from .by_design import compare_per_session
from .design import factorized
from .model_rows import text_levels
from .reformulation_types import GROUP_ORDER, TYPES

__all__ = [
    "EFFECT_COLUMNS",
    "LEVELS",
    "OUTCOMES",
    "TRANSITION_COLUMNS",
    "compare_reformulation_effects",
    "compare_reformulation_levels",
    "reformulation_effects",
    "reformulation_transitions",
    "session_outcomes",
]

#: The outcomes of a reformulation the effects are computed for.
OUTCOMES: Final = ("delta_dcg", "new_relevant")

#: Columns of :func:`reformulation_effects`.
EFFECT_COLUMNS: Final = (
    "level",
    "category",
    "system_id",
    "outcome",
    "n_pairs",
    "n_units",
    "unit",
    "mean",
    "ci_low",
    "ci_high",
)

#: Columns of :func:`reformulation_transitions`.
TRANSITION_COLUMNS: Final = ("from_type", "to_type", "n", "share")

#: The levels of the reformulation analyses and their categories, in the taxonomy's order.
LEVELS: Final = {"type": TYPES, "group": GROUP_ORDER}


def _check(table: pd.DataFrame, columns: Sequence[str], what: str) -> None:
    missing = [c for c in columns if c not in table.columns]
    if missing:
        raise StatisticsError(
            f"{what}: reformulation table lacks column(s) {missing}; pass the table of "
            f"sessionval.reformulations (columns are {list(table.columns)})"
        )


def _ordered(values: pd.Series, level: str) -> pd.Series:
    """``values`` as a categorical in the taxonomy's order (only the categories present)."""
    labels, uniques = pd.factorize(values)  # string work on the distinct values only
    names = [str(u) for u in uniques]
    known = [c for c in LEVELS[level] if c in set(names)]
    where = {c: i for i, c in enumerate(known)}
    recode = np.array([where.get(n, -1) for n in names] + [-1], dtype=np.int64)
    codes = recode[labels]  # label -1 (missing) picks the trailing -1
    dtype = pd.CategoricalDtype(known)
    return pd.Series(pd.Categorical.from_codes(codes, dtype=dtype), index=values.index)


def reformulation_effects(
    table: pd.DataFrame,
    *,
    unit: str = "session_id",
    outcomes: Sequence[str] = OUTCOMES,
    confidence: float = 0.95,
) -> pd.DataFrame:
    """Mean outcome per type and group, per system, with t intervals over units (module docstring).

    Parameters
    ----------
    table
        The reformulation table (``system_id``, ``type``, ``group``, ``unit`` and the
        ``outcomes`` columns).
    unit
        The independent unit averaged first: ``session_id`` (a log) or ``user_id``
        (a user study: the searcher).
    outcomes
        Outcome columns.
    confidence
        Level of the intervals.

    Returns
    -------
    pandas.DataFrame
        :data:`EFFECT_COLUMNS`: levels ``type`` then ``group``, categories in the order
        of the taxonomy, systems in order of appearance.
    """
    from scipy import stats as st

    _check(table, ["system_id", "type", "group", unit, *outcomes], "reformulation effects")
    parts = []
    # the systems as their text, coded (grouped and sorted as the text; no string per pair)
    system = text_levels(table["system_id"])
    for level in LEVELS:
        data = table.loc[:, list(outcomes)].astype("float64")
        data["category"] = _ordered(table[level], level)
        data["system_id"] = system
        data[unit] = pd.factorize(table[unit])[0]  # integer codes group faster than ids
        keys = ["category", "system_id"]
        n_pairs = data.groupby(keys, observed=True, sort=True).size()
        means = data.groupby([*keys, unit], observed=True, sort=True)[list(outcomes)].mean()
        for outcome in outcomes:
            units = means[outcome]
            cell = units.groupby(level=keys, observed=True, sort=True).agg(["mean", "std", "count"])
            k = cell["count"].to_numpy(dtype=np.float64)
            with np.errstate(invalid="ignore", divide="ignore"):
                half = st.t.ppf(0.5 + confidence / 2, k - 1) * cell["std"].to_numpy() / np.sqrt(k)
            half = np.where(k >= 2, half, np.nan)
            part = cell.reset_index()
            parts.append(
                pd.DataFrame(
                    {
                        "level": level,
                        "category": part["category"].astype(str),
                        "system_id": part["system_id"].astype(str),
                        "outcome": outcome,
                        "n_pairs": n_pairs.reindex(cell.index).to_numpy(dtype=np.int64),
                        "n_units": k.astype(np.int64),
                        "unit": unit,
                        "mean": part["mean"].to_numpy(dtype=np.float64),
                        "ci_low": part["mean"].to_numpy(dtype=np.float64) - half,
                        "ci_high": part["mean"].to_numpy(dtype=np.float64) + half,
                    }
                )
            )
    if not parts:
        return pd.DataFrame(columns=list(EFFECT_COLUMNS))
    out = pd.concat(parts, ignore_index=True)
    order = {"type": 0, "group": 1}
    rank = {c: i for i, c in enumerate((*TYPES, *GROUP_ORDER))}
    out = out.sort_values(
        ["level", "category", "outcome"],
        key=lambda s: (
            s.map(order) if s.name == "level" else s.map(rank) if s.name == "category" else s
        ),
        kind="stable",
    )
    return out.reset_index(drop=True).loc[:, list(EFFECT_COLUMNS)]


def session_outcomes(
    table: pd.DataFrame, *, level: str = "group", outcomes: Sequence[str] = OUTCOMES
) -> pd.DataFrame:
    """Each session's mean outcome per category of ``level``: columns ``<outcome>|<category>``."""
    _check(table, ["session_id", level, *outcomes], "session outcomes")
    return _outcomes_by(table, table["session_id"].astype(str), level, outcomes)


def _outcomes_by(
    table: pd.DataFrame, key: pd.Series | npt.NDArray[np.intp], level: str, outcomes: Sequence[str]
) -> pd.DataFrame:
    """:func:`session_outcomes` indexed by ``key`` (a session's text, or its code)."""
    data = table.loc[:, list(outcomes)].astype("float64")
    data["session_id"] = np.asarray(key) if isinstance(key, np.ndarray) else key.to_numpy()
    data["category"] = _ordered(table[level], level)
    wide: pd.DataFrame = data.pivot_table(
        index="session_id", columns="category", values=list(outcomes), aggfunc="mean", observed=True
    )
    wide.columns = [f"{key[0]}|{key[1]}" for key in wide.columns]
    return wide


def session_rows(table: pd.DataFrame, per_session: pd.DataFrame) -> npt.NDArray[np.intp] | None:
    """The row of ``per_session`` of each pair's session (-1: none), matched by text.

    Only the distinct ids become text (a categorical's categories): the 372k pairs of
    200k sessions joined through ``astype(str)`` of every row cost 0.3 s.  ``None``
    when ``per_session`` has a missing or repeated id (the join on the text then).
    """
    rows, ids = factorized(per_session["session_id"])  # a categorical's own codes
    text = pd.Index(ids.astype(str))
    repeated = bool(np.bincount(rows[rows >= 0], minlength=len(ids)).max(initial=0) > 1)
    if (rows < 0).any() or repeated or not text.is_unique:
        return None
    codes, pair_ids = factorized(table["session_id"])
    found = text.get_indexer(pd.Index(pair_ids.astype(str)))
    row_of = np.full(len(ids) + 1, -1, dtype=np.intp)  # each id's row; the last: none
    row_of[rows] = np.arange(len(rows))
    at = np.r_[row_of[found], -1]  # each pair id's row (found -1: none); the last: none
    return np.asarray(at[codes], dtype=np.intp)


def compare_reformulation_effects(
    table: pd.DataFrame,
    per_session: pd.DataFrame,
    *,
    level: str = "group",
    outcomes: Sequence[str] = OUTCOMES,
    options: Mapping[str, Any] | None = None,
) -> pd.DataFrame:
    """Compare the systems on each session's mean outcome per category (module docstring).

    Parameters
    ----------
    table
        The reformulation table.
    per_session
        The per-session table of the same evaluation (``session_id``, ``system_id``,
        ``user_id``, ``topic_id``, optional ``session_order``).
    level
        ``"group"`` or ``"type"``.
    outcomes
        Outcome columns.
    options
        Passed to :func:`~sessionval.analysis.by_design.compare_per_session`
        (``confidence``, ``correction``, ``test``, ...).

    Returns
    -------
    pandas.DataFrame
        The comparison's columns (``measure`` is ``<outcome>|<category>``); empty when
        the study has one system or no reformulation.  ``attrs``: ``design`` (its
        description) and ``notes``.
    """
    out = compare_reformulation_levels(
        table, per_session, levels=(level,), outcomes=outcomes, options=options
    )
    return out.drop(columns=["level"]) if len(out) else out


def compare_reformulation_levels(
    table: pd.DataFrame,
    per_session: pd.DataFrame,
    *,
    levels: Sequence[str] = ("group", "type"),
    outcomes: Sequence[str] = OUTCOMES,
    options: Mapping[str, Any] | None = None,
) -> pd.DataFrame:
    """:func:`compare_reformulation_effects` of several levels at once, with a ``level`` column.

    One comparison of every level's scores: the design, the systems and the rows of
    the models are made once (a category of two levels, ``new``, is told apart inside
    it), and each score's rows are those the one-level comparison gives, the levels in
    the order of ``levels``.

    Returns
    -------
    pandas.DataFrame
        The comparison's columns, then ``level``; empty when the study has one system or
        no reformulation.  ``attrs``: ``design`` (its description) and ``notes``.
    """
    unknown = [lv for lv in levels if lv not in LEVELS]
    if unknown or not levels:
        raise StatisticsError(
            f"reformulation level(s) {unknown or list(levels)} unknown; allowed: type, group"
        )
    # each level's scores named "<level>:<outcome>|<category>" inside the one comparison
    _check(table, ["session_id", *levels, *outcomes], "session outcomes")
    # each pair's session as its row of per_session: the outcomes line up without a join
    # on the ids as text
    at = session_rows(table, per_session)
    key = table["session_id"].astype(str) if at is None else at
    wide = pd.concat(
        [_outcomes_by(table, key, lv, outcomes).add_prefix(f"{lv}:") for lv in levels], axis=1
    )
    ids = per_session.drop(columns=[c for c in per_session.columns if "|" in str(c)])
    if at is None:
        scores = ids.assign(_sid=ids["session_id"].astype(str)).merge(
            wide, left_on="_sid", right_index=True, how="left"
        )
    else:
        wide = wide.drop(index=-1, errors="ignore").reindex(np.arange(len(per_session)))
        scores = pd.concat([ids.reset_index(drop=True), wide.reset_index(drop=True)], axis=1)
    measures = [str(c) for c in wide.columns]
    if not measures or scores["system_id"].astype(str).nunique() < 2:
        return pd.DataFrame()
    out = compare_per_session(scores, measures=measures, **dict(options or {}))
    named = out["measure"].str.split(":", n=1)
    out["measure"] = named.str[1].to_numpy()
    out["level"] = named.str[0].to_numpy()  # last, as the run's table has it
    prefixes = tuple(f"{lv}:" for lv in levels)
    # plain attrs (the design as its description): the table is written to Parquet
    out.attrs = {
        "design": out.attrs["design"].description,
        "notes": [_unprefixed(n, prefixes) for n in out.attrs.get("notes", [])],
    }
    return out


def _unprefixed(note: str, prefixes: tuple[str, ...]) -> str:
    """A note of the comparison with the scores' level prefixes taken out."""
    for prefix in prefixes:
        note = note.replace(prefix, "")
    return note


def reformulation_transitions(table: pd.DataFrame) -> pd.DataFrame:
    """Which type follows which along each session, and ``end`` after the last one.

    Returns
    -------
    pandas.DataFrame
        :data:`TRANSITION_COLUMNS`, one row per observed (from, to) pair; ``share`` is
        ``n`` over the row's total, so each ``from_type``'s shares add up to 1.
    """
    _check(table, ["session_id", "from_pos", "type"], "reformulation transitions")
    # each session's pairs in order: sorted on integer codes of the ids (the counts do not
    # depend on the order of the sessions, only on that of the pairs within each)
    session = pd.factorize(table["session_id"])[0]
    order = np.lexsort((table["from_pos"].to_numpy(), session))
    session = session[order]
    data = pd.DataFrame({"type": table["type"].astype(str).to_numpy()[order]})
    nxt = data["type"].shift(-1)
    same = np.zeros(session.size, dtype=bool)  # the next pair is of the same session
    same[:-1] = session[1:] == session[:-1]
    pairs = pd.DataFrame({"from_type": data["type"], "to_type": nxt.where(same, "end")})
    counts = pairs.value_counts(["from_type", "to_type"]).rename("n").reset_index()
    counts["share"] = counts["n"] / counts.groupby("from_type")["n"].transform("sum")
    rank = {c: i for i, c in enumerate((*TYPES, "end"))}
    counts = counts.sort_values(
        ["from_type", "to_type"], key=lambda s: s.map(rank), kind="stable"
    ).reset_index(drop=True)
    return counts.loc[:, list(TRANSITION_COLUMNS)]

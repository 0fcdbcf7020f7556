"""Covariates of a session for mixed models: when it ran, its place in the sequence, who ran it.

A user study's per-session scores are analysed with searcher and topic effects and
covariates (experience, age, the order of the task: learning and fatigue).  This
module gives, per session of a :class:`~sessionval.frame.SessionFrame`, in session
order:

``session_start``, ``session_end``
    as logged (UTC; missing when the log has no time);
``duration_s``
    ``session_end − session_start`` in seconds (missing when either is unknown);
``session_order``
    the session's place in its searcher's sequence (1 = the searcher's first session),
    by start time, sessions without a start time after the timed ones in input order;
``user_<attribute>``
    every searcher attribute of the study header (``study.json`` ``users[].attributes``).

All vectorised: one sort for the order, one join for the attributes.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

import numpy as np
import pandas as pd

from ..frame import SessionFrame

__all__ = [
    "ATTRIBUTE_PREFIX",
    "COVARIATES",
    "attribute_columns",
    "covariate_columns",
    "session_covariates",
    "with_covariates",
]

#: Prefix of the searcher-attribute columns (``user_age``, ``user_search_years``).
ATTRIBUTE_PREFIX: Final = "user_"
#: The time and order columns, in the order they are added.
COVARIATES: Final[tuple[str, ...]] = ("session_start", "session_end", "duration_s", "session_order")


def attribute_columns(columns: Iterable[object]) -> list[str]:
    """The searcher-attribute columns among ``columns`` (``user_<attribute>``, not ``user_id``).

    Examples
    --------
    >>> attribute_columns(["user_id", "user_age", "nsdcg", "session_order"])
    ['user_age']
    """
    return [str(c) for c in columns if str(c).startswith(ATTRIBUTE_PREFIX) and str(c) != "user_id"]


def covariate_columns(columns: Iterable[object]) -> list[str]:
    """The covariate columns among ``columns``: times, order and searcher attributes.

    Examples
    --------
    >>> covariate_columns(["session_id", "user_id", "nsdcg", "duration_s", "user_age"])
    ['duration_s', 'user_age']
    """
    attributes = set(attribute_columns(columns))
    return [str(c) for c in columns if str(c) in COVARIATES or str(c) in attributes]


def _session_order(user_codes: np.ndarray, start: pd.Series) -> np.ndarray:
    """1-based place of each session among its searcher's sessions (by start, then input order).

    Examples
    --------
    >>> start = pd.Series(pd.to_datetime(["2008-03-02", "2008-03-01", None, "2008-03-01"]))
    >>> _session_order(np.array([0, 0, 0, 1]), start).tolist()
    [2, 1, 3, 1]
    """
    n = user_codes.size
    known = start.notna().to_numpy()
    when = np.where(known, start.to_numpy(dtype="datetime64[ns]").astype(np.int64), 0)
    order = np.lexsort((np.arange(n), when, ~known, user_codes))
    sorted_users = user_codes[order]
    first = np.r_[True, sorted_users[1:] != sorted_users[:-1]]
    group_start = np.maximum.accumulate(np.where(first, np.arange(n), 0))
    rank = np.empty(n, dtype=np.int32)
    rank[order] = np.arange(n) - group_start + 1
    return rank


def _attribute_column(values: pd.Series) -> pd.Series:
    """Numbers stay numbers (mixed int/float become float), everything else text."""
    if pd.api.types.is_bool_dtype(values) or pd.api.types.is_numeric_dtype(values):
        return values
    numeric = pd.to_numeric(values, errors="coerce")
    is_bool = values.map(lambda v: isinstance(v, bool | np.bool_))
    if numeric.notna().sum() == values.notna().sum() and not is_bool.any():
        return numeric
    return values.astype("string")


def session_covariates(frame: SessionFrame) -> pd.DataFrame:
    """The covariates of every session (module docstring), one row per session in frame order.

    Parameters
    ----------
    frame
        The study.

    Returns
    -------
    pandas.DataFrame
        ``session_start, session_end, duration_s, session_order`` and one
        ``user_<attribute>`` column per searcher attribute, on a default index.
    """
    s = frame.sessions
    start, end = s["start_time"].reset_index(drop=True), s["end_time"].reset_index(drop=True)
    duration = (end - start).dt.total_seconds().astype("float64")
    out = pd.DataFrame(
        {
            "session_start": start,
            "session_end": end,
            "duration_s": duration,
            "session_order": _session_order(
                s["user_id"].cat.codes.to_numpy().astype(np.int64), start
            ),
        }
    )
    users = frame.users.drop_duplicates("user_id").reset_index(drop=True)
    attributes = sorted((c for c in users.columns if c != "user_id"), key=str)
    if attributes and len(users):
        keys = pd.Index(users["user_id"].astype(str))
        at = keys.get_indexer(pd.Index(s["user_id"].astype(str)))
        known = pd.Series(at >= 0)
        for col in attributes:
            typed = _attribute_column(users[col])  # once per searcher, not per session
            picked = typed.iloc[np.maximum(at, 0)].reset_index(drop=True).where(known)
            out[f"{ATTRIBUTE_PREFIX}{col}"] = picked
    return out


def with_covariates(per_session: pd.DataFrame, frame: SessionFrame) -> pd.DataFrame:
    """``per_session`` (in frame order) with the covariates appended, rating columns sorted.

    The evaluation's columns keep their places; its ``rating_*`` columns are sorted by
    name within the places they hold (whatever order the input format gave them),
    then the covariates follow.  A covariate whose name the table already has is not
    added again.
    """
    columns = [str(c) for c in per_session.columns]
    slots = [i for i, c in enumerate(columns) if c.startswith("rating_")]
    for i, name in zip(slots, sorted(columns[i] for i in slots), strict=True):
        columns[i] = name
    table = per_session.loc[:, columns].copy()
    extra = session_covariates(frame).set_axis(table.index)
    for col in extra.columns:
        if col not in table.columns:
            table[col] = extra[col]
    return table

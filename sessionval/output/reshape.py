"""Score tables reshaped for statistics: long form and the paired by-system layout.

* **wide** form: one row per session (or query), one column per score: the
  evaluation's own tables;
* **long** form: one row per (session, score) with ``measure`` and ``value``
  columns (:func:`long_form`), the layout of mixed models and ggplot;
* **by system**: one row per searcher, one column per (score, system), each the
  mean of that searcher's sessions with that system (:func:`wide_by_system`), the
  layout a paired test needs in a within-subject (Latin-square) design.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ..errors import SessionvalError

__all__ = [
    "long_form",
    "score_columns",
    "wide_by_system",
]


def score_columns(table: pd.DataFrame, ids: Sequence[str] = ()) -> list[str]:
    """The numeric, non-boolean columns of ``table`` outside ``ids``: its scores.

    Examples
    --------
    >>> score_columns(pd.DataFrame({"s": ["a"], "x": [1.0], "ok": [True]}), ["s"])
    ['x']
    """
    return [
        str(c)
        for c in table.columns
        if c not in ids
        and pd.api.types.is_numeric_dtype(table[c])
        and not pd.api.types.is_bool_dtype(table[c])
    ]


def long_form(
    table: pd.DataFrame,
    *,
    id_columns: Sequence[str],
    value_columns: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Melt a wide score table to one row per (record, measure).

    Parameters
    ----------
    table
        Wide table (one row per session or query). Not modified.
    id_columns
        Columns that identify a row and are repeated on every output row.
    value_columns
        Score columns to melt (default: every numeric column not in ``id_columns``,
        booleans excluded).

    Returns
    -------
    pandas.DataFrame
        ``id_columns`` + ``measure`` (categorical, in ``value_columns`` order) +
        ``value`` (float64); rows ordered by record, then measure.

    Examples
    --------
    >>> wide = pd.DataFrame({"session_id": ["s1", "s2"], "sdcg": [1.0, 2.0], "nsdcg": [0.1, 0.2]})
    >>> long_form(wide, id_columns=["session_id"]).to_numpy().tolist()
    [['s1', 'sdcg', 1.0], ['s1', 'nsdcg', 0.1], ['s2', 'sdcg', 2.0], ['s2', 'nsdcg', 0.2]]
    """
    missing = [c for c in id_columns if c not in table.columns]
    if missing:
        raise SessionvalError(
            f"long_form: id column(s) {missing} not in the table; columns are {list(table.columns)}"
        )
    if value_columns is None:
        value_columns = score_columns(table, id_columns)
    n, m = len(table), len(value_columns)
    out = table.loc[:, list(id_columns)].iloc[np.repeat(np.arange(n), m)].reset_index(drop=True)
    # codes, not names: a Categorical of n * m strings hashes every one of them (8x slower)
    out["measure"] = pd.Categorical.from_codes(
        np.tile(np.arange(m), n), dtype=pd.CategoricalDtype(list(value_columns))
    )
    values = table.loc[:, list(value_columns)].to_numpy(dtype=np.float64, na_value=np.nan)
    out["value"] = values.reshape(-1)
    return out


def wide_by_system(
    per_session: pd.DataFrame,
    *,
    measures: Sequence[str],
    subject: str = "user_id",
    system: str = "system_id",
) -> pd.DataFrame:
    """One row per searcher, one column per (measure, system): the paired-test layout.

    In a within-subject design (each searcher used every system, e.g. a Latin
    square over topics) a paired comparison pairs a searcher's scores on the two
    systems; a searcher with several sessions per system contributes the mean.

    Parameters
    ----------
    per_session
        Per-session table with ``subject``, ``system`` and the ``measures``. Not modified.
    measures
        Score columns to spread.
    subject, system
        The pairing unit and the condition column.

    Returns
    -------
    pandas.DataFrame
        ``subject``, ``n_sessions__<system>`` and ``<measure>__<system>`` (means), the
        full system names (``.dta``/``.sav`` files shorten them:
        :func:`~sessionval.output.labels.stats_names`); a searcher who never used a
        system has NaN there.

    Examples
    --------
    >>> ps = pd.DataFrame({"user_id": ["u1", "u1", "u1", "u2"], "system_id": ["A", "B", "B", "A"],
    ...                    "nsdcg": [0.5, 0.2, 0.4, 0.7]})
    >>> wide_by_system(ps, measures=["nsdcg"]).round(2).to_dict("list")
    {'user_id': ['u1', 'u2'], 'n_sessions__A': [1, 1], 'n_sessions__B': [2, 0],
     'nsdcg__A': [0.5, 0.7], 'nsdcg__B': [0.3, nan]}
    """
    for col in (subject, system, *measures):
        if col not in per_session.columns:
            raise SessionvalError(
                f"wide_by_system: column {col!r} not in the per-session table; "
                f"columns are {list(per_session.columns)}"
            )
    # one grouped mean over every measure, keyed by the (subject, system) cell's code:
    # pandas' own mean, so each value is the one a pivot table per measure gives
    s_codes, subjects = pd.factorize(per_session[subject].astype(str), sort=True)
    k_codes, systems = pd.factorize(per_session[system].astype(str), sort=True)
    n_k, cells = len(systems), len(subjects) * len(systems)
    key = s_codes.astype(np.int64) * n_k + k_codes
    count = np.bincount(key, minlength=cells).reshape(len(subjects), n_k)
    spread = list(dict.fromkeys(measures))
    means = per_session.loc[:, spread].astype("float64").groupby(key, sort=True).mean()
    at = means.index.to_numpy()
    columns: dict[str, np.ndarray] = {subject: np.asarray(subjects, dtype=object)}
    for j, s in enumerate(systems):
        columns[f"n_sessions__{s}"] = count[:, j]
    for measure in measures:
        grid = np.full(cells, np.nan)
        grid[at] = means[measure].to_numpy(dtype=np.float64)
        for j, s in enumerate(systems):
            columns[f"{measure}__{s}"] = grid.reshape(len(subjects), n_k)[:, j]
    return pd.DataFrame(columns)

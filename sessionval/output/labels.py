"""What Stata and SPSS can hold: valid variable names, coded identifiers and their labels.

Stata and SPSS restrict names (Stata: letters, digits, ``_``, at most 32
characters), so the columns of ``.dta``/``.sav`` files get names from
:func:`stats_names`: a valid name stays, a ``<measure>__<system>`` column of the
by-system layout becomes ``<measure>_s<k>`` (``k`` the system's code, its value-label
number), anything else is made valid by :func:`stats_name`; the full name goes into
the variable label and the codebook.  CSV and Parquet keep the full names.  Every
identifier column with few distinct values (systems, topics, searchers, measures)
becomes an integer code whose **value labels** carry the names, so ``system_id``
reads as 1 = "A", 2 = "B"; booleans become 0/1 labelled no/yes; every column
carries a **variable label** from the data dictionary
(:func:`~sessionval.output.columns.describe_column`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

import numpy as np
import pandas as pd

from ..errors import SessionvalError
from .columns import Level, describe_column

__all__ = [
    "STRING_IDS",
    "StatsFrame",
    "sanitise_names",
    "shared_label_maps",
    "stats_name",
    "stats_names",
    "to_stats_frame",
    "value_labels",
]

#: Identifier columns that stay strings in ``.dta``/``.sav`` (too many values to label).
STRING_IDS: Final[frozenset[str]] = frozenset({"session_id", "query_id", "text", "query_text"})

_NAME_BAD = re.compile(r"[^A-Za-z0-9_]")


def stats_name(name: str, *, taken: Iterable[str] = ()) -> str:
    """Make ``name`` a valid Stata/SPSS variable name, unique among ``taken``.

    Letters, digits and ``_`` only, not starting with a digit, at most 32
    characters (Stata's limit; SPSS allows 64).

    Parameters
    ----------
    name
        Proposed name.
    taken
        Names already in use (case-insensitive, as Stata and SPSS compare them).

    Returns
    -------
    str

    Examples
    --------
    >>> stats_name("nsdcg__System A")
    'nsdcg__System_A'
    >>> stats_name("2nd query", taken=["v2nd_query"])
    'v2nd_query_2'
    """
    out = _NAME_BAD.sub("_", name) or "v"
    if out[0].isdigit():
        out = "v" + out
    out = out[:32]
    used = {t.lower() for t in taken}
    base, k = out, 2
    while out.lower() in used:
        suffix = f"_{k}"
        out = base[: 32 - len(suffix)] + suffix
        k += 1
    return out


def stats_names(columns: Iterable[object], *, systems: Sequence[str] = ()) -> dict[str, str]:
    """Short, valid, unique Stata/SPSS names for the given columns (full name -> name).

    A ``<measure>__<system>`` column (the by-system layout) whose system is in
    ``systems`` becomes ``<measure>_s<k>`` with ``k`` the system's 1-based code in
    ``systems`` (its value label), so ``nsdcg__org_manual_ance_bert`` is ``nsdcg_s4``
    whatever the length of the system's name; every other name goes through
    :func:`stats_name`.  Names are unique case-insensitively, in column order.

    Examples
    --------
    >>> stats_names(["user_id", "nsdcg__org_convdr", "nsdcg__org_manual_ance_bert", "nDCG@10"],
    ...             systems=["org_convdr", "org_manual_ance_bert"])
    {'user_id': 'user_id', 'nsdcg__org_convdr': 'nsdcg_s1',
     'nsdcg__org_manual_ance_bert': 'nsdcg_s2', 'nDCG@10': 'nDCG_10'}
    """
    code = {str(s): k for k, s in enumerate(systems, start=1)}
    out: dict[str, str] = {}
    for col in columns:
        full = str(col)
        base, sep, system = full.partition("__")
        proposed = f"{base}_s{code[system]}" if sep and system in code else full
        out[full] = stats_name(proposed, taken=out.values())
    return out


def sanitise_names(table: pd.DataFrame) -> pd.DataFrame:
    """The table with every column name made valid and unique (:func:`stats_name`).

    Returns the table itself when every name is already valid; otherwise the copy
    records each renamed column's name as written in ``attrs["source_names"]`` (new ->
    old), so the codebook describes ``esNDCG_9`` as the measure ``esNDCG@9``.
    """
    taken: list[str] = []
    for c in table.columns:
        taken.append(stats_name(str(c), taken=taken))
    if taken == [str(c) for c in table.columns]:
        return table
    out = table.set_axis(taken, axis=1)
    out.attrs["source_names"] = {
        new: str(old) for new, old in zip(taken, table.columns, strict=True) if new != str(old)
    }
    return out


def value_labels(series: pd.Series) -> list[str] | None:
    """Categories to code (1..k) in .dta/.sav, or None when the column stays as is."""
    if pd.api.types.is_bool_dtype(series):
        return None
    if isinstance(series.dtype, pd.CategoricalDtype):
        # the values in one call: iterating an Arrow-backed index makes a scalar per value
        # (0.56 s for the 200k study's session ids)
        return [c if isinstance(c, str) else str(c) for c in series.cat.categories.tolist()]
    if pd.api.types.is_string_dtype(series) or series.dtype == object:
        # the distinct values first, then their text: a long table repeats each id on many
        # rows (the text of every row: 0.42 -> 0.25 s CPU for the 200k study's label maps)
        distinct = pd.unique(series.dropna())
        return sorted(set(pd.Series(distinct, dtype=object).astype(str)))
    return None


def shared_label_maps(tables: Mapping[str, pd.DataFrame]) -> dict[str, list[str]]:
    """Per coded column, the sorted union of its values over all tables (stable codes).

    Codes are shared by all files written together, so per-session and per-query
    files merge on them.
    """
    maps: dict[str, set[str]] = {}
    # the tables of one run share their id columns' categories (a session id's: one per
    # session): the same categories are made text and added once
    seen: set[tuple[str, int]] = set()
    for table in tables.values():
        for col in table.columns:
            if col in STRING_IDS:
                continue
            dtype = table[col].dtype
            if isinstance(dtype, pd.CategoricalDtype):
                if (col, id(dtype.categories)) in seen:
                    continue
                seen.add((col, id(dtype.categories)))
            labels = value_labels(table[col])
            if labels is not None:
                maps.setdefault(col, set()).update(labels)
    return {col: sorted(vals) for col, vals in maps.items()}


def _label_codes(s: pd.Series, labels: Sequence[str]) -> np.ndarray:
    """Each value's position among ``labels`` (-1: missing, or a value without a label).

    A categorical column looks up each category once and takes the rows' codes, rather
    than hashing the text of every row.
    """
    index = pd.Index(labels)
    if isinstance(s.dtype, pd.CategoricalDtype):
        at = index.get_indexer(pd.Index(s.cat.categories.astype("string").astype(object)))
        return np.append(at, -1)[s.cat.codes.to_numpy()]  # code -1 (missing) takes the -1
    return index.get_indexer(pd.Index(s.astype("string").astype(object)))


@dataclass(frozen=True)
class StatsFrame:
    """A table ready for pyreadstat: coded columns, variable labels, value labels."""

    data: pd.DataFrame
    column_labels: dict[str, str | None]
    value_labels: dict[str, dict[int | float, str]]
    measure: dict[str, str] = field(default_factory=dict)


def to_stats_frame(
    table: pd.DataFrame,
    *,
    label_maps: Mapping[str, Sequence[str]] | None = None,
    level: Level = "session",
    full_names: Mapping[str, str] | None = None,
) -> StatsFrame:
    """Convert a table to what Stata/SPSS can hold, with labels.

    Coded columns (categorical or string identifiers outside :data:`STRING_IDS`)
    become integers 1..k whose value labels are the names; booleans become 0/1
    labelled no/yes; nullable integers become float (missing = system missing);
    time zones are dropped (times are UTC); strings stay strings (missing = "").

    Parameters
    ----------
    table
        The table (not modified); column names must already be valid
        (:func:`stats_name`).
    label_maps
        Labels in code order per coded column (default: from this table alone).
    level
        Table the columns belong to (their variable labels; see
        :func:`~sessionval.output.columns.describe_column`).
    full_names
        The full name of a renamed column (:func:`stats_names`): its variable label
        describes the full name.

    Returns
    -------
    StatsFrame

    Examples
    --------
    >>> sf = to_stats_frame(pd.DataFrame({"system_id": ["B", "A", "B"], "x": [1.0, 2.0, 3.0]}))
    >>> sf.data["system_id"].tolist(), sf.value_labels["system_id"]
    ([2, 1, 2], {1: 'A', 2: 'B'})
    """
    maps = shared_label_maps({"t": table}) if label_maps is None else label_maps
    data: dict[str, pd.Series | np.ndarray] = {}
    labels: dict[str, str | None] = {}
    coded_labels: dict[str, dict[int | float, str]] = {}
    measure: dict[str, str] = {}
    for col in table.columns:
        name = str(col)
        if name != stats_name(name):
            raise SessionvalError(
                f"column {name!r} is not a valid Stata/SPSS variable name "
                f"(letters, digits, _; at most 32 characters); use {stats_name(name)!r}"
            )
        s = table[col]
        labels[name] = describe_column((full_names or {}).get(name, name), level=level).label
        if name in maps and name not in STRING_IDS:
            cats = list(maps[name])
            codes = _label_codes(s, cats)
            unknown = (codes < 0) & s.notna().to_numpy()
            if unknown.any():
                bad = s[unknown].iloc[0]
                raise SessionvalError(
                    f"column {name!r}: value {bad!r} has no label; labels are {cats}"
                )
            coded = codes.astype(np.float64) + 1.0
            coded[codes < 0] = np.nan
            data[name] = coded if (codes < 0).any() else codes.astype(np.int32) + 1
            coded_labels[name] = {i: v for i, v in enumerate(cats, start=1)}
            measure[name] = "nominal"
        elif pd.api.types.is_bool_dtype(s):
            if s.isna().any():
                data[name] = s.astype("float64").to_numpy()
            else:
                data[name] = s.to_numpy(dtype=np.int8)
            coded_labels[name] = {0: "no", 1: "yes"}
            measure[name] = "nominal"
        elif pd.api.types.is_integer_dtype(s):
            if s.isna().any() or isinstance(s.dtype, pd.api.extensions.ExtensionDtype):
                data[name] = s.to_numpy(dtype=np.float64, na_value=np.nan)
            else:
                data[name] = s.to_numpy()
            measure[name] = "scale"
        elif pd.api.types.is_float_dtype(s):
            data[name] = s.to_numpy(dtype=np.float64, na_value=np.nan)
            measure[name] = "scale"
        elif pd.api.types.is_datetime64_any_dtype(s):
            dt = s.dt.tz_convert("UTC").dt.tz_localize(None) if s.dt.tz is not None else s
            data[name] = dt.astype("datetime64[ns]").to_numpy()
            measure[name] = "scale"
        else:
            # object, not pandas' Arrow strings: pyreadstat iterates every cell of the
            # table, and an Arrow string column makes a Python object per cell (about a
            # fifth of a .dta/.sav write of the per-session table)
            text = s.astype("string").fillna("").astype(object)
            data[name] = pd.Series(np.asarray(text, dtype=object), dtype=object)
            measure[name] = "nominal"
    out = pd.DataFrame(data, index=pd.RangeIndex(len(table)))
    return StatsFrame(data=out, column_labels=labels, value_labels=coded_labels, measure=measure)

"""Score tables for statistics packages: CSV, Parquet, Stata ``.dta``, SPSS ``.sav`` + codebook.

A user study ends in a statistics package (R, SPSS, Stata, pandas).  This module
turns the tidy per-session and per-query tables of an evaluation into files those
packages read with their labels intact:

* **wide** form: one row per session (or query), one column per score: the
  evaluation's own tables;
* **long** form: one row per (session, score) with ``measure`` and ``value``
  columns (:func:`long_form`), the layout of mixed models and ggplot;
* **by system**: one row per searcher, one column per (score, system), each the
  mean of that searcher's sessions with that system (:func:`wide_by_system`), the
  layout a paired test needs in a within-subject (Latin-square) design.

In ``.dta`` and ``.sav`` files every identifier column with few distinct values
(systems, topics, searchers, measures; booleans) is an integer code with **value
labels** carrying the names, so ``system_id`` reads as 1 = "A", 2 = "B" in SPSS
and Stata; every column carries a **variable label**.  Codes are shared by all
files written together, so per-session and per-query files merge on them.  The
**codebook** (:func:`codebook`; ``codebook.csv`` and ``codebook.md``) gives every
column of every file its meaning, unit, value labels and the parameters behind it
(b, bq, X, gains, …), rendered from the configuration actually used.

Stata and SPSS restrict names (Stata: letters, digits, ``_``, at most 32
characters), so generated column names go through :func:`stats_name`.  The same
names are used in every format so the codebook matches every file.

pyreadstat (extra ``export``) is imported only when ``.dta``/``.sav`` is written.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, Literal

import numpy as np
import pandas as pd

from ..errors import SessionvalError

__all__ = [
    "FORMATS",
    "STRING_IDS",
    "ColumnDoc",
    "ExportResult",
    "Format",
    "StatsFrame",
    "codebook",
    "describe_column",
    "long_form",
    "stats_name",
    "to_stats_frame",
    "wide_by_system",
    "write_exports",
    "write_table",
]

Format = Literal["csv", "parquet", "dta", "sav"]
FORMATS: Final[tuple[Format, ...]] = ("csv", "parquet", "dta", "sav")

#: Identifier columns that stay strings in ``.dta``/``.sav`` (too many values to label).
STRING_IDS: Final[frozenset[str]] = frozenset({"session_id", "query_id", "text", "query_text"})

#: Parameters behind session measures (config keys; rendered in the codebook when present).
#: Keys are :class:`~sessionval.evaluation.config.SessionConfig` fields (``cutoff`` is X).
_SESSION_PARAMS: Final = (
    "b",
    "bq",
    "cutoff",
    "gains",
    "discount",
    "query_discount",
    "duplicates",
    "short_lists",
    "scan_depth",
    "judgments",
    "unjudged",
    "negative",
)
_QUERY_PARAMS: Final = ("b", "cutoff", "gains", "discount", "judgments", "unjudged", "negative")
_IDEAL_PARAMS: Final = (*_SESSION_PARAMS, "ideal", "empty_ideal")
#: How a configuration key is printed in the codebook (the papers' symbols).
_PARAM_SYMBOL: Final = {"cutoff": "X"}


@dataclass(frozen=True, slots=True)
class ColumnDoc:
    """Meaning of one exported column.

    Parameters
    ----------
    label
        Short variable label (at most 80 characters: Stata's limit).
    unit
        Unit or scale of the values (``"gain"``, ``"rank"``, ``"count"``, ``""`` for ids).
    parameters
        Configuration keys the values depend on (``("b", "bq", "X", "gains")``).
    description
        Longer meaning for the codebook.
    """

    label: str
    unit: str
    parameters: tuple[str, ...] = ()
    description: str = ""


_ID = ColumnDoc
_DOCS: Final[dict[str, ColumnDoc]] = {
    "session_id": _ID("Session identifier", "", (), "One searcher's session on one topic."),
    "user_id": _ID("Searcher identifier", "", (), "The study participant."),
    "topic_id": _ID("Topic / scenario", "", (), "Search topic or task scenario."),
    "system_id": _ID("System", "", (), "Search system or interface condition."),
    "scenario": _ID("Scenario", "", (), "Search task scenario."),
    "query_id": _ID("Query identifier", "", (), "Query id from the log (session:pos if absent)."),
    "query_pos": _ID(
        "Query position in session",
        "position (1 = first)",
        (),
        "Order of the query in its session.",
    ),
    "q": _ID(
        "Query position in session",
        "position (1 = first)",
        (),
        "Order of the query in its session.",
    ),
    "rank": _ID("Rank in the query's list", "rank (1 = top)", (), "Rank of the result."),
    "pos": _ID(
        "Position in the concatenated session vector",
        "position",
        ("cutoff", "short_lists"),
        "Position p in the concatenated top-X session vector; query ceil(p/X).",
    ),
    "position": _ID(
        "Position in the concatenated session vector",
        "position",
        ("cutoff", "short_lists"),
        "Position p in the concatenated top-X session vector; query ceil(p/X).",
    ),
    "text": _ID("Query text", "", (), "Query as typed by the searcher."),
    "n_queries": _ID("Number of queries in session", "count", (), "Queries the searcher issued."),
    "n_sessions": _ID("Number of sessions", "count", (), "Sessions of the searcher."),
    "n_results": _ID("Number of results of the query", "count", (), "Results logged."),
    "padded": _ID(
        "Query list padded to X",
        "0 = no, 1 = yes",
        ("cutoff", "short_lists"),
        "The list was shorter than X and padded with zero gain.",
    ),
    "is_last": _ID("Last query of the session", "0 = no, 1 = yes", (), "Query is the last one."),
    "is_best": _ID(
        "Best query of the session (highest sDCG_q)",
        "0 = no, 1 = yes",
        _SESSION_PARAMS,
        "Query with the highest query-discounted DCG at X.",
    ),
    "sdcg": _ID(
        "Session DCG at the end of the session, sDCG[nX]",
        "discounted gain",
        _SESSION_PARAMS,
        "Järvelin et al. 2008 sDCG at the last position of the session.",
    ),
    "nsdcg": _ID(
        "Normalised session DCG, nsDCG[nX]",
        "ratio 0-1",
        _IDEAL_PARAMS,
        "sDCG divided by the ideal session's sDCG at the same position.",
    ),
    "ideal": _ID(
        "Ideal session DCG at the same position",
        "discounted gain",
        _IDEAL_PARAMS,
        "Top-X ideal gains concatenated n times, query-discounted and cumulated.",
    ),
    "avg_pos": _ID(
        "Mean sDCG over session positions, avg-pos(S, nX)",
        "discounted gain",
        _SESSION_PARAMS,
        "Average of the session vector over its nX positions.",
    ),
    "dcg": _ID(
        "DCG of the query at X",
        "discounted gain",
        _QUERY_PARAMS,
        "The query's own DCG vector at rank X (ranks restart at 1).",
    ),
    "sdcg_q": _ID(
        "Query-discounted DCG of the query at X",
        "discounted gain",
        _SESSION_PARAMS,
        "qd(q) * DCG_q[X], qd(q) = 1 / (1 + log_bq(q)).",
    ),
    "gain": _ID(
        "Gain of the result",
        "gain",
        ("gains", "judgments"),
        "Gain of the result's grade under the gain scheme.",
    ),
    "grade": _ID("Relevance grade", "grade", ("judgments",), "Grade of the result (reference)."),
    "n_relevant_found": _ID(
        "Distinct relevant documents found",
        "count",
        ("duplicates", "cutoff"),
        "Distinct documents with grade > 0 in the session's top-X lists.",
    ),
    "n_relevant": _ID(
        "Relevant documents of the topic (recall base)",
        "count",
        (),
        "Documents judged relevant for the topic.",
    ),
    "n_positions": _ID(
        "Positions in the session vector (n queries x X when padded)",
        "count",
        ("cutoff", "short_lists", "scan_depth"),
        "Length of the concatenated session vector.",
    ),
    "avg_pos_sdcg": _ID(
        "Mean sDCG over the session's positions, avg-pos(S, nX)",
        "discounted gain",
        _SESSION_PARAMS,
        "Average of the session vector over its positions.",
    ),
    "avg_pos_nsdcg": _ID(
        "Mean nsDCG over the session's positions",
        "ratio 0-1",
        _IDEAL_PARAMS,
        "Average of the normalised session vector over its positions.",
    ),
    "sdcg_per_query": _ID(
        "Final sDCG divided by the number of queries",
        "discounted gain per query",
        _SESSION_PARAMS,
        "sDCG/#queries, a length-normalised session score used in the literature.",
    ),
    "best_query_pos": _ID("Position of the session's best query", "position", ("cutoff",), ""),
    "n_highly_relevant_found": _ID(
        "Distinct highly relevant documents found",
        "count",
        ("duplicates", "cutoff", "high_grade"),
        "Distinct documents of the top grade in the session's top-X lists.",
    ),
    "qrels_id": _ID("Judgment set of the query", "", (), "Topic (or session) judgments used."),
    "n_available": _ID("Results available in the list", "count", (), ""),
    "n_scored": _ID(
        "Ranks of the query scored (top-X after policies)",
        "count",
        ("cutoff", "short_lists", "scan_depth", "duplicates"),
        "",
    ),
    "n_repeats": _ID("Results already returned earlier in the session", "count", (), ""),
    "qd": _ID(
        "Query discount qd(q) = 1/(1 + log_bq q)",
        "factor 0-1",
        ("bq", "query_discount"),
        "Järvelin et al. 2008, formula (1).",
    ),
    "ideal_dcg": _ID("Ideal DCG at X for the query's topic", "discounted gain", _QUERY_PARAMS, ""),
    "ndcg": _ID("Normalised DCG of the query at X", "ratio 0-1", _QUERY_PARAMS, ""),
    "doc_rank": _ID("Rank of the document in its own list", "rank", (), ""),
}

_QUERY_DOCS: Final[dict[str, ColumnDoc]] = {
    "sdcg": _DOCS["sdcg_q"],
    "ideal": _ID(
        "Ideal query-discounted DCG at X for this query position",
        "discounted gain",
        _IDEAL_PARAMS,
        "",
    ),
}

# Pattern rules for families of columns (checked in order after the exact names).
_PATTERNS: Final[tuple[tuple[re.Pattern[str], ColumnDoc], ...]] = (
    (
        re.compile(r"^rating_(.+)$"),
        _ID(
            "Searcher's post-task rating: {0}",
            "rating scale",
            (),
            "Rating the searcher gave after the task.",
        ),
    ),
    (
        re.compile(r"^(last|best)_(sdcg_q|sdcg)$"),
        _ID(
            "sDCG_q at X of the session's {0} query",
            "discounted gain",
            _SESSION_PARAMS,
            "Query-discounted DCG at X of the {0} query.",
        ),
    ),
    (
        re.compile(r"^(last|best)_dcg$"),
        _ID(
            "DCG at X of the session's {0} query",
            "discounted gain",
            _QUERY_PARAMS,
            "Undiscounted-by-position DCG at X of the {0} query.",
        ),
    ),
    (
        re.compile(r"^(last|best)_(nsdcg|ndcg)$"),
        _ID("Normalised DCG at X of the session's {0} query", "ratio 0-1", _IDEAL_PARAMS, ""),
    ),
    (
        re.compile(r"^(last|best)_(query|pos|query_pos)$"),
        _ID("Position of the session's {0} query", "position", (), ""),
    ),
    (
        re.compile(r"^first_(rel|relevant)_(query|pos|query_pos)$"),
        _ID(
            "Query position of the first relevant result",
            "position",
            ("cutoff",),
            "First query whose top-X list holds a document with grade > 0 (missing: none).",
        ),
    ),
    (
        re.compile(r"^first_(rel|relevant)_rank$"),
        _ID("Rank of the first relevant result in that query", "rank", ("cutoff",), ""),
    ),
    (
        re.compile(r"^first_(hrel|highly_relevant)_(query|pos|query_pos)$"),
        _ID(
            "Query position of the first highly relevant result",
            "position",
            ("cutoff",),
            "First query whose top-X list holds a document of the top grade (missing: none).",
        ),
    ),
    (
        re.compile(r"^first_(hrel|highly_relevant)_rank$"),
        _ID("Rank of the first highly relevant result in that query", "rank", ("cutoff",), ""),
    ),
    (
        re.compile(r"^n?s?dcg(_q)?_?(at_?)?(\d+)$"),
        _ID("Score at cut-off {2}", "discounted gain", _SESSION_PARAMS, ""),
    ),
)


def describe_column(name: str, *, level: Literal["session", "query"] = "session") -> ColumnDoc:
    """Return the documentation of an exported column (exact name, then families).

    Unknown names get a generic entry naming the column, so a codebook is never
    missing a row.

    Parameters
    ----------
    name
        Column name as exported.
    level
        Table the column belongs to: in per-query tables ``sdcg`` is the query's
        own query-discounted DCG (sDCG_q), not the session's final sDCG.

    Returns
    -------
    ColumnDoc

    Examples
    --------
    >>> describe_column("nsdcg").unit
    'ratio 0-1'
    >>> describe_column("rating_satisfaction").label
    "Searcher's post-task rating: satisfaction"
    """
    if "__" in name:
        base, system = name.split("__", 1)
        inner = describe_column(base)
        what = "Number" if base == "n_sessions" else "Mean"
        return ColumnDoc(
            label=f"{inner.label}, system {system}"[:80],
            unit=inner.unit,
            parameters=inner.parameters,
            description=f"{what} of {base} over the searcher's sessions with system "
            f"{system}. {inner.description}".strip(),
        )
    key = name.lower()
    if level == "query" and key in _QUERY_DOCS:
        return _QUERY_DOCS[key]
    if key in _DOCS:
        return _DOCS[key]
    for pattern, doc in _PATTERNS:
        m = pattern.match(key)
        if m is None:
            continue
        groups = m.groups()
        return ColumnDoc(
            label=doc.label.format(*groups)[:80],
            unit=doc.unit,
            parameters=doc.parameters,
            description=doc.description.format(*groups),
        )
    return ColumnDoc(label=name[:80], unit="", parameters=(), description="(no description)")


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
        value_columns = [
            c
            for c in table.columns
            if c not in id_columns
            and pd.api.types.is_numeric_dtype(table[c])
            and not pd.api.types.is_bool_dtype(table[c])
        ]
    n, m = len(table), len(value_columns)
    out = table.loc[:, list(id_columns)].iloc[np.repeat(np.arange(n), m)].reset_index(drop=True)
    out["measure"] = pd.Categorical(
        np.tile(np.asarray(value_columns, dtype=object), n), categories=list(value_columns)
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
        ``subject``, ``n_sessions__<system>`` and ``<measure>__<system>`` (means),
        names passed through :func:`stats_name`; a searcher who never used a
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
    frame = per_session.loc[:, list(measures)].astype("float64")
    frame[subject] = per_session[subject].astype(str).to_numpy()
    frame[system] = per_session[system].astype(str).to_numpy()
    systems = sorted(frame[system].unique())
    subjects = sorted(frame[subject].unique())
    frame["_n"] = 1.0
    cnt = frame.pivot_table(index=subject, columns=system, values="_n", aggfunc="sum")
    cnt = cnt.reindex(index=subjects, columns=systems).fillna(0).astype("int64")
    out = pd.DataFrame({subject: subjects})
    taken: list[str] = [subject]
    for s in systems:
        name = stats_name(f"n_sessions__{s}", taken=taken)
        taken.append(name)
        out[name] = cnt[s].to_numpy()
    for measure in measures:
        table = frame.pivot_table(
            index=subject, columns=system, values=measure, aggfunc="mean", dropna=False
        )
        table = table.reindex(index=subjects, columns=systems)
        for s in systems:
            name = stats_name(f"{measure}__{s}", taken=taken)
            taken.append(name)
            out[name] = table[s].to_numpy(dtype=np.float64)
    return out


def _render_params(keys: Sequence[str], parameters: Mapping[str, object]) -> str:
    parts = [
        f"{_PARAM_SYMBOL.get(k, k)}={_fmt_value(parameters[k])}" for k in keys if k in parameters
    ]
    return ", ".join(parts)


def _fmt_value(v: object) -> str:
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    if isinstance(v, Mapping):
        return "{" + ", ".join(f"{k}: {_fmt_value(x)}" for k, x in v.items()) + "}"
    return str(v)


def _value_labels(series: pd.Series) -> list[str] | None:
    """Categories to code (1..k) in .dta/.sav, or None when the column stays as is."""
    if pd.api.types.is_bool_dtype(series):
        return None
    if isinstance(series.dtype, pd.CategoricalDtype):
        return [str(c) for c in series.cat.categories]
    if pd.api.types.is_string_dtype(series) or series.dtype == object:
        values = series.dropna().astype(str).unique()
        return sorted(values)
    return None


def _shared_label_maps(tables: Mapping[str, pd.DataFrame]) -> dict[str, list[str]]:
    """Per coded column, the sorted union of its values over all tables (stable codes)."""
    maps: dict[str, set[str]] = {}
    for table in tables.values():
        for col in table.columns:
            if col in STRING_IDS:
                continue
            labels = _value_labels(table[col])
            if labels is not None:
                maps.setdefault(col, set()).update(labels)
    return {col: sorted(vals) for col, vals in maps.items()}


def codebook(
    tables: Mapping[str, pd.DataFrame],
    *,
    parameters: Mapping[str, object],
    label_maps: Mapping[str, Sequence[str]] | None = None,
) -> pd.DataFrame:
    """Describe every column of every exported table.

    Parameters
    ----------
    tables
        File stem (``"per_session_wide"``) -> table, as written.
    parameters
        The configuration actually used (e.g. ``SessionConfig.model_dump()``);
        each column's ``parameters`` entry renders the keys it depends on.
    label_maps
        Coded columns -> their labels in code order (codes are 1..k); default:
        computed from the tables as :func:`write_exports` does.

    Returns
    -------
    pandas.DataFrame
        One row per (file, column): ``file, variable, label, type, unit,
        value_labels, parameters, description``.

    Examples
    --------
    >>> t = pd.DataFrame({"system_id": ["B", "A"], "nsdcg": [0.2, 0.4]})
    >>> cb = codebook({"per_session": t}, parameters={"b": 2.0, "bq": 4.0, "cutoff": 10})
    >>> cb.loc[1, ["variable", "unit", "parameters"]].tolist()
    ['nsdcg', 'ratio 0-1', 'b=2, bq=4, X=10']
    >>> cb.loc[0, "value_labels"]
    '1 = A; 2 = B'
    """
    maps = _shared_label_maps(tables) if label_maps is None else label_maps
    rows: list[dict[str, str]] = []
    for stem, table in tables.items():
        for col in table.columns:
            doc = describe_column(str(col), level="query" if "query" in stem else "session")
            labels = maps.get(str(col))
            series = table[col]
            if labels is not None:
                kind = "coded (integer with value labels)"
                vl = "; ".join(f"{i} = {v}" for i, v in enumerate(labels, start=1))
            elif pd.api.types.is_bool_dtype(series):
                kind, vl = "0/1", "0 = no; 1 = yes"
            elif pd.api.types.is_integer_dtype(series):
                kind, vl = "integer", ""
            elif pd.api.types.is_float_dtype(series):
                kind, vl = "real", ""
            elif pd.api.types.is_datetime64_any_dtype(series):
                kind, vl = "datetime (UTC)", ""
            else:
                kind, vl = "string", ""
            rows.append(
                {
                    "file": stem,
                    "variable": str(col),
                    "label": doc.label,
                    "type": kind,
                    "unit": doc.unit,
                    "value_labels": vl,
                    "parameters": _render_params(doc.parameters, parameters),
                    "description": doc.description,
                }
            )
    return pd.DataFrame(
        rows,
        columns=[
            "file",
            "variable",
            "label",
            "type",
            "unit",
            "value_labels",
            "parameters",
            "description",
        ],
    )


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

    Returns
    -------
    StatsFrame

    Examples
    --------
    >>> sf = to_stats_frame(pd.DataFrame({"system_id": ["B", "A", "B"], "x": [1.0, 2.0, 3.0]}))
    >>> sf.data["system_id"].tolist(), sf.value_labels["system_id"]
    ([2, 1, 2], {1: 'A', 2: 'B'})
    """
    maps = _shared_label_maps({"t": table}) if label_maps is None else label_maps
    data: dict[str, pd.Series | np.ndarray] = {}
    labels: dict[str, str | None] = {}
    value_labels: dict[str, dict[int | float, str]] = {}
    measure: dict[str, str] = {}
    for col in table.columns:
        name = str(col)
        if name != stats_name(name):
            raise SessionvalError(
                f"column {name!r} is not a valid Stata/SPSS variable name "
                f"(letters, digits, _; at most 32 characters); use {stats_name(name)!r}"
            )
        s = table[col]
        labels[name] = describe_column(name).label
        if name in maps and name not in STRING_IDS:
            cats = list(maps[name])
            codes = pd.Categorical(s.astype("string").astype(object), categories=cats).codes
            unknown = (codes < 0) & s.notna().to_numpy()
            if unknown.any():
                bad = s[unknown].iloc[0]
                raise SessionvalError(
                    f"column {name!r}: value {bad!r} has no label; labels are {cats}"
                )
            coded = codes.astype(np.float64) + 1.0
            coded[codes < 0] = np.nan
            data[name] = coded if (codes < 0).any() else codes.astype(np.int32) + 1
            value_labels[name] = {i: v for i, v in enumerate(cats, start=1)}
            measure[name] = "nominal"
        elif pd.api.types.is_bool_dtype(s):
            if s.isna().any():
                data[name] = s.astype("float64").to_numpy()
            else:
                data[name] = s.to_numpy(dtype=np.int8)
            value_labels[name] = {0: "no", 1: "yes"}
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
            data[name] = np.asarray(s.astype("string").fillna("").astype(object), dtype=object)
            measure[name] = "nominal"
    out = pd.DataFrame(data, index=pd.RangeIndex(len(table)))
    return StatsFrame(data=out, column_labels=labels, value_labels=value_labels, measure=measure)


def _check_formats(formats: Sequence[str]) -> tuple[Format, ...]:
    bad = [f for f in formats if f not in FORMATS]
    if bad:
        raise SessionvalError(f"unknown export format(s) {bad}; allowed: {list(FORMATS)}")
    return tuple(f for f in FORMATS if f in formats)


def write_table(
    table: pd.DataFrame,
    stem: str | Path,
    *,
    formats: Sequence[Format] = FORMATS,
    label_maps: Mapping[str, Sequence[str]] | None = None,
    file_label: str = "",
) -> list[Path]:
    """Write one table as ``<stem>.csv``, ``.parquet``, ``.dta`` and/or ``.sav``.

    Parameters
    ----------
    table
        The table (not modified). Column names must be valid (:func:`stats_name`).
    stem
        Path without suffix.
    formats
        Which files to write.
    label_maps
        Shared value labels for coded columns (see :func:`to_stats_frame`).
    file_label
        Dataset label stored in ``.dta``/``.sav``.

    Returns
    -------
    list of pathlib.Path
        The files written, in ``formats`` order.
    """
    stem = Path(stem)
    fmts = _check_formats(formats)
    written: list[Path] = []
    if "csv" in fmts:
        path = stem.with_name(stem.name + ".csv")
        table.to_csv(path, index=False)
        written.append(path)
    if "parquet" in fmts:
        path = stem.with_name(stem.name + ".parquet")
        table.to_parquet(path, index=False)
        written.append(path)
    if "dta" in fmts or "sav" in fmts:
        import pyreadstat

        sf = to_stats_frame(table, label_maps=label_maps)
        if "dta" in fmts:
            path = stem.with_name(stem.name + ".dta")
            pyreadstat.write_dta(
                sf.data,
                str(path),
                file_label=file_label[:80],
                column_labels=sf.column_labels,
                variable_value_labels=sf.value_labels,
            )
            written.append(path)
        if "sav" in fmts:
            path = stem.with_name(stem.name + ".sav")
            pyreadstat.write_sav(
                sf.data,
                str(path),
                file_label=file_label,
                column_labels=sf.column_labels,
                variable_value_labels=sf.value_labels,
                variable_measure=sf.measure,
            )
            written.append(path)
    return written


@dataclass(frozen=True)
class ExportResult:
    """What :func:`write_exports` wrote."""

    files: tuple[Path, ...]
    codebook: pd.DataFrame
    tables: Mapping[str, pd.DataFrame]


_SESSION_IDS: Final = ("session_id", "user_id", "topic_id", "system_id")


def _score_columns(table: pd.DataFrame, ids: Sequence[str]) -> list[str]:
    return [
        str(c)
        for c in table.columns
        if c not in ids
        and pd.api.types.is_numeric_dtype(table[c])
        and not pd.api.types.is_bool_dtype(table[c])
    ]


def _sanitise(table: pd.DataFrame) -> pd.DataFrame:
    taken: list[str] = []
    names = []
    for c in table.columns:
        n = stats_name(str(c), taken=taken)
        taken.append(n)
        names.append(n)
    if names == [str(c) for c in table.columns]:
        return table
    return table.set_axis(names, axis=1)


def write_exports(
    out_dir: str | Path,
    *,
    per_session: pd.DataFrame,
    per_query: pd.DataFrame | None = None,
    parameters: Mapping[str, object],
    formats: Sequence[Format] = FORMATS,
    paired_measures: Sequence[str] | None = None,
    title: str = "sessionval scores",
) -> ExportResult:
    """Write per-session and per-query scores in long and wide form, plus the codebook.

    Files (each in every requested format): ``per_session_wide``,
    ``per_session_long``, ``per_user_by_system`` (paired layout, see
    :func:`wide_by_system`), ``per_query_wide``, ``per_query_long``; and
    ``codebook.csv`` / ``codebook.md``.

    Parameters
    ----------
    out_dir
        Directory to write into (created if needed).
    per_session
        One row per session with ``session_id, user_id, topic_id, system_id`` and scores.
    per_query
        One row per query (``session_id``, ``query_pos`` and scores), or None.
    parameters
        Configuration actually used (rendered in the codebook).
    formats
        Subset of :data:`FORMATS`.
    paired_measures
        Scores spread by system (default: every score column of ``per_session``).
    title
        Dataset label in ``.dta``/``.sav``.

    Returns
    -------
    ExportResult
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    fmts = _check_formats(formats)
    ps = _sanitise(per_session)
    s_ids = [c for c in _SESSION_IDS if c in ps.columns]
    tables: dict[str, pd.DataFrame] = {"per_session_wide": ps}
    tables["per_session_long"] = long_form(
        ps, id_columns=s_ids, value_columns=_score_columns(ps, s_ids)
    )
    if "user_id" in ps.columns and "system_id" in ps.columns:
        measures = (
            list(paired_measures) if paired_measures is not None else _score_columns(ps, s_ids)
        )
        tables["per_user_by_system"] = wide_by_system(ps, measures=measures)
    if per_query is not None:
        pq = _sanitise(per_query)
        q_ids = [c for c in (*_SESSION_IDS, "query_pos", "query_id") if c in pq.columns]
        tables["per_query_wide"] = pq
        tables["per_query_long"] = long_form(
            pq, id_columns=q_ids, value_columns=[c for c in _score_columns(pq, q_ids)]
        )
    maps = _shared_label_maps(tables)
    files: list[Path] = []
    for stem, table in tables.items():
        files.extend(
            write_table(
                table, out / stem, formats=fmts, label_maps=maps, file_label=f"{title}: {stem}"
            )
        )
    book = codebook(tables, parameters=parameters, label_maps=maps)
    book.to_csv(out / "codebook.csv", index=False)
    (out / "codebook.md").write_text(_codebook_markdown(book, parameters), encoding="utf-8")
    files.extend([out / "codebook.csv", out / "codebook.md"])
    return ExportResult(files=tuple(files), codebook=book, tables=tables)


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _codebook_markdown(book: pd.DataFrame, parameters: Mapping[str, object]) -> str:
    lines = ["# Codebook", "", "Parameters of the evaluation behind every score:", ""]
    lines += [f"- `{k}` = `{_fmt_value(v)}`" for k, v in parameters.items()]
    for stem, part in book.groupby("file", sort=False):
        lines += [
            "",
            f"## {stem}",
            "",
            "| variable | label | type | unit | value labels | parameters |",
            "|---|---|---|---|---|---|",
        ]
        for row in part.itertuples(index=False):
            lines.append(
                "| "
                + " | ".join(
                    _md_cell(str(x))
                    for x in (
                        f"`{row.variable}`",
                        row.label,
                        row.type,
                        row.unit,
                        row.value_labels,
                        row.parameters,
                    )
                )
                + " |"
            )
    return "\n".join(lines) + "\n"

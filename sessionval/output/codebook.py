"""The codebook: every column of every exported file, rendered from the data dictionary.

One row per (file, column) with its name in CSV/Parquet (``variable``), its name in
``.dta``/``.sav`` (``stats_variable``: short names there,
:func:`~sessionval.output.labels.stats_names`), its label, storage type, unit, value
labels, the parameters behind it (``b=2, bq=4, X=10, gains=0-1-10-100``) and its meaning,
with the formulas of the configuration actually used
(:mod:`sessionval.output.columns`, :mod:`sessionval.output.parameters`).  Written
as ``codebook.csv`` and, with the parameter list and their meanings on top,
``codebook.md``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

import pandas as pd

from .columns import Level, describe_column
from .labels import shared_label_maps
from .labels import stats_names as short_names
from .parameters import configuration, parameter_docs, render_parameters

__all__ = [
    "CODEBOOK_COLUMNS",
    "codebook",
    "codebook_markdown",
    "level_of",
]

CODEBOOK_COLUMNS: Final[tuple[str, ...]] = (
    "file",
    "variable",
    "stats_variable",
    "label",
    "type",
    "unit",
    "value_labels",
    "parameters",
    "description",
)


def level_of(stem: str) -> Level:
    """The table a file holds, from its stem (``per_query_long`` -> ``"query"``).

    Examples
    --------
    >>> level_of("per_query_wide"), level_of("per_position"), level_of("per_user_by_system")
    ('query', 'position', 'session')
    """
    if "position" in stem:
        return "position"
    return "query" if "query" in stem else "session"


def _value_labels(labels: Sequence[str]) -> str:
    """The value labels of a coded column as the codebook lists them (codes 1..k)."""
    return "; ".join(f"{i} = {v}" for i, v in enumerate(labels, start=1))


def _storage(series: pd.Series, labels: str | None) -> tuple[str, str]:
    """The type column and value labels (:func:`_value_labels`) of one column as stored."""
    if labels is not None:
        return "coded (integer with value labels)", labels
    if pd.api.types.is_bool_dtype(series):
        return "0/1", "0 = no; 1 = yes"
    if pd.api.types.is_integer_dtype(series):
        return "integer", ""
    if pd.api.types.is_float_dtype(series):
        return "real", ""
    if pd.api.types.is_datetime64_any_dtype(series):
        return "datetime (UTC)", ""
    return "string", ""


def codebook(
    tables: Mapping[str, pd.DataFrame],
    *,
    parameters: Mapping[str, object],
    label_maps: Mapping[str, Sequence[str]] | None = None,
    stats_names: Mapping[str, Mapping[str, str]] | None = None,
) -> pd.DataFrame:
    """Describe every column of every exported table.

    Parameters
    ----------
    tables
        File stem (``"per_session_wide"``) -> table, as written.
    parameters
        The configuration actually used (e.g. ``SessionConfig.model_dump()``);
        each column's ``parameters`` entry renders the keys it depends on, and the
        descriptions quote the configured discount formulas.
    label_maps
        Coded columns -> their labels in code order (codes are 1..k); default:
        computed from the tables as :func:`~sessionval.output.export.write_exports` does.
    stats_names
        Per file stem, each column's ``.dta``/``.sav`` name (default: computed with
        :func:`~sessionval.output.labels.stats_names` and the ``system_id`` labels).

    Returns
    -------
    pandas.DataFrame
        One row per (file, column): ``file, variable, stats_variable, label, type,
        unit, value_labels, parameters, description``.

    Examples
    --------
    >>> t = pd.DataFrame({"system_id": ["B", "A"], "nsdcg": [0.2, 0.4]})
    >>> cb = codebook({"per_session": t}, parameters={"b": 2.0, "bq": 4.0, "cutoff": 10})
    >>> cb.loc[1, ["variable", "unit", "parameters"]].tolist()
    ['nsdcg', 'ratio 0-1', 'b=2, bq=4, X=10']
    >>> cb.loc[0, "value_labels"]
    '1 = A; 2 = B'
    """
    maps = shared_label_maps(tables) if label_maps is None else label_maps
    config = configuration(parameters)  # validated once, for the formulas every text quotes
    # columns renamed for Stata/SPSS (labels.sanitise_names) are described by their source
    source: dict[str, str] = {}
    for table in tables.values():
        source.update(table.attrs.get("source_names", {}))
    rows: list[dict[str, str]] = []
    # a coded column's labels are shared by every table it is in (a session id's: one
    # label per session): their text is made once
    label_text = {col: _value_labels(labels) for col, labels in maps.items()}
    for stem, table in tables.items():
        names = (stats_names or {}).get(stem) or short_names(
            table.columns, systems=maps.get("system_id", ())
        )
        for col in table.columns:
            doc = describe_column(
                _source_name(str(col), source), level=level_of(stem), parameters=config
            )
            kind, labels = _storage(table[col], label_text.get(str(col)))
            rows.append(
                {
                    "file": stem,
                    "variable": str(col),
                    "stats_variable": names.get(str(col), str(col)),
                    "label": doc.label,
                    "type": kind,
                    "unit": doc.unit,
                    "value_labels": labels,
                    "parameters": render_parameters(doc.parameters, parameters),
                    "description": doc.description,
                }
            )
    return pd.DataFrame(rows, columns=list(CODEBOOK_COLUMNS))


def _source_name(col: str, source: Mapping[str, str]) -> str:
    """A renamed column's name as written; ``<score>__<system>`` spreads keep their system."""
    if col in source:
        return source[col]
    for safe in sorted(source, key=len, reverse=True):
        if col.startswith(safe + "__"):
            return source[safe] + col[len(safe) :]
    return col


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def codebook_markdown(book: pd.DataFrame, parameters: Mapping[str, object]) -> str:
    """The codebook as Markdown: the parameters and their meanings, then a table per file."""
    lines = [
        "# Codebook",
        "",
        "`variable` is a column's name in the CSV and Parquet files; `Stata/SPSS` its name in",
        "the `.dta` and `.sav` files, where names are limited to 32 characters (a by-system",
        "column `<measure>__<system>` is `<measure>_s<k>` there, `k` the system's code).",
        "",
        "Parameters of the evaluation behind every score:",
        "",
    ]
    for p in parameter_docs(parameters):
        meaning = f": {_md_cell(p.meaning)}" if p.meaning else ""
        lines.append(f"- `{p.name}` = `{p.value}`{meaning}")
    for stem, part in book.groupby("file", sort=False):
        lines += [
            "",
            f"## {stem}",
            "",
            "| variable | Stata/SPSS | label | type | unit | value labels | parameters | "
            "description |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for row in part.itertuples(index=False):
            cells = (
                f"`{row.variable}`",
                f"`{row.stats_variable}`",
                row.label,
                row.type,
                row.unit,
                row.value_labels,
                row.parameters,
                row.description,
            )
            lines.append("| " + " | ".join(_md_cell(str(x)) for x in cells) + " |")
    return "\n".join(lines) + "\n"

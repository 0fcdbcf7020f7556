"""Score files for statistics packages: CSV, Parquet, Stata ``.dta``, SPSS ``.sav`` + codebook.

A user study ends in a statistics package (R, SPSS, Stata, pandas).
:func:`write_exports` writes the tidy per-session and per-query tables of an
evaluation in wide form, long form (:func:`~sessionval.output.reshape.long_form`)
and the paired by-system layout (:func:`~sessionval.output.reshape.wide_by_system`),
each as every requested format, with the codebook
(:func:`~sessionval.output.codebook.codebook`).  In ``.dta`` and ``.sav`` files
identifiers are integer codes with value labels shared by all files written
together, and every column carries a variable label
(:mod:`sessionval.output.labels`).  The same (valid) names are used in every
format so the codebook matches every file.

This module writes files; the reshaping, the names and labels and the data
dictionary live in their own modules and are re-exported here, where the
previous release had them.

pyreadstat (extra ``export``) is imported only when ``.dta``/``.sav`` is written.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

import pandas as pd

from ..errors import SessionvalError
from .codebook import codebook, codebook_markdown, level_of
from .columns import ColumnDoc, Level, describe_column
from .labels import (
    STRING_IDS,
    StatsFrame,
    sanitise_names,
    shared_label_maps,
    stats_name,
    to_stats_frame,
)
from .reshape import long_form, score_columns, wide_by_system

__all__ = [
    "FORMATS",
    "STRING_IDS",
    "ColumnDoc",
    "ExportResult",
    "Format",
    "StatsFrame",
    "codebook",
    "describe_column",
    "export_tables",
    "long_form",
    "stats_name",
    "to_stats_frame",
    "wide_by_system",
    "write_exports",
    "write_table",
]

Format = Literal["csv", "parquet", "dta", "sav"]
FORMATS: Final[tuple[Format, ...]] = ("csv", "parquet", "dta", "sav")

_SESSION_IDS: Final = ("session_id", "user_id", "topic_id", "system_id")


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
    level: Level | None = None,
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
    level
        Table the columns belong to, for their variable labels (default: from the
        stem, as :func:`~sessionval.output.codebook.level_of`).

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

        sf = to_stats_frame(
            table, label_maps=label_maps, level=level if level is not None else level_of(stem.name)
        )
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


def export_tables(
    per_session: pd.DataFrame,
    per_query: pd.DataFrame | None = None,
    *,
    paired_measures: Sequence[str] | None = None,
) -> dict[str, pd.DataFrame]:
    """The tables :func:`write_exports` writes, by file stem, with valid column names.

    ``per_session_wide``, ``per_session_long``, ``per_user_by_system`` (when the
    table has searchers and systems), ``per_query_wide`` and ``per_query_long``
    (with a per-query table).
    """
    ps = sanitise_names(per_session)
    s_ids = [c for c in _SESSION_IDS if c in ps.columns]
    tables: dict[str, pd.DataFrame] = {"per_session_wide": ps}
    tables["per_session_long"] = long_form(
        ps, id_columns=s_ids, value_columns=score_columns(ps, s_ids)
    )
    if "user_id" in ps.columns and "system_id" in ps.columns:
        measures = (
            list(paired_measures) if paired_measures is not None else score_columns(ps, s_ids)
        )
        tables["per_user_by_system"] = wide_by_system(ps, measures=measures)
    if per_query is not None:
        pq = sanitise_names(per_query)
        q_ids = [c for c in (*_SESSION_IDS, "query_pos", "query_id") if c in pq.columns]
        tables["per_query_wide"] = pq
        tables["per_query_long"] = long_form(
            pq, id_columns=q_ids, value_columns=score_columns(pq, q_ids)
        )
    return tables


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
    tables = export_tables(per_session, per_query, paired_measures=paired_measures)
    maps = shared_label_maps(tables)
    files: list[Path] = []
    for stem, table in tables.items():
        files.extend(
            write_table(
                table, out / stem, formats=fmts, label_maps=maps, file_label=f"{title}: {stem}"
            )
        )
    book = codebook(tables, parameters=parameters, label_maps=maps)
    book.to_csv(out / "codebook.csv", index=False)
    (out / "codebook.md").write_text(codebook_markdown(book, parameters), encoding="utf-8")
    files.extend([out / "codebook.csv", out / "codebook.md"])
    return ExportResult(files=tuple(files), codebook=book, tables=tables)

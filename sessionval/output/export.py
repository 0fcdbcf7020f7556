"""Score files for statistics packages: CSV, Parquet, Stata ``.dta``, SPSS ``.sav`` + codebook.

A user study ends in a statistics package (R, SPSS, Stata, pandas).
:func:`write_exports` writes the tidy per-session and per-query tables of an
evaluation in wide form, long form (:func:`~sessionval.output.reshape.long_form`)
and the paired by-system layout (:func:`~sessionval.output.reshape.wide_by_system`),
each as every requested format, with the codebook
(:func:`~sessionval.output.codebook.codebook`).  CSV and Parquet keep the full
column names (``nsdcg__org_manual_ance_bert``).  Only ``.dta`` and ``.sav`` limit
names (32 characters, letters, digits and ``_``): there every column gets a short
unique name (:func:`~sessionval.output.labels.stats_names`: ``nsdcg_s3`` for the
system with code 3), its full measure and system in the variable label, and the
codebook maps each full name to its Stata/SPSS name.  Identifiers are integer codes
with value labels shared by all files written together.  ``csv_safe`` neutralises
spreadsheet formulas in CSV cells (:func:`neutralise_formulas`).  A table of more
than :data:`LARGE_ROWS` rows is not repeated in every format (:func:`export_formats`:
Parquet and CSV when wide, Parquet when long); CSV goes through Arrow
(:func:`~sessionval.output.csv_writer.write_csv`).

This module writes files; the reshaping, the names and labels and the data
dictionary live in their own modules and are re-exported here, where the
previous release had them.

pyreadstat (extra ``export``) is imported only when ``.dta``/``.sav`` is written.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Mapping, Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal

import pandas as pd

from ..analysis.covariates import attribute_columns, covariate_columns
from ..errors import SessionvalError, writing
from .background import BackgroundWork
from .codebook import codebook, codebook_markdown, level_of
from .columns import ColumnDoc, Level, describe_column
from .csv_writer import write_csv
from .labels import (
    STRING_IDS,
    StatsFrame,
    shared_label_maps,
    stats_name,
    stats_names,
    to_stats_frame,
)
from .reshape import long_form, score_columns, wide_by_system
from .stata_file import write_dta
from .write_thread import BackgroundWrites

__all__ = [
    "FORMATS",
    "LARGE_ROWS",
    "STRING_IDS",
    "ColumnDoc",
    "ExportResult",
    "Format",
    "StatsFrame",
    "codebook",
    "describe_column",
    "export_formats",
    "export_tables",
    "fit_label",
    "long_form",
    "neutralise_formulas",
    "stats_name",
    "stats_names",
    "to_stats_frame",
    "wide_by_system",
    "write_exports",
    "write_table",
]

Format = Literal["csv", "parquet", "dta", "sav"]
FORMATS: Final[tuple[Format, ...]] = ("csv", "parquet", "dta", "sav")

_SESSION_IDS: Final = ("session_id", "user_id", "topic_id", "system_id")
#: Longest file labels: Stata 80 characters, SPSS 64 bytes.
_LABEL_LIMITS: Final = {"dta": 80, "sav": 64}
#: Rows above which an export is written in the compact formats only (:func:`export_formats`).
LARGE_ROWS: Final = 500_000
#: Formats a large table keeps, in order of preference: typed and compact, then universal.
_COMPACT: Final[tuple[Format, ...]] = ("parquet", "csv")
#: First characters a spreadsheet reads as a formula (OWASP: also tab and carriage return).
FORMULA_STARTS: Final = ("=", "+", "-", "@", "\t", "\r")


def neutralise_formulas(table: pd.DataFrame) -> pd.DataFrame:
    """Text cells that a spreadsheet would run as a formula, prefixed with ``'``.

    Cells of text columns (ids, query text, labels) starting with ``=``, ``+``, ``-``,
    ``@``, a tab or a carriage return get a leading apostrophe, so Excel or LibreOffice
    shows them as text (formula injection).  Numbers stay numbers (a negative score is
    not a formula).  Returns the table itself when nothing changes.

    Examples
    --------
    >>> t = pd.DataFrame({"query": ["=1+1", "ok", "@SUM(A1)"], "score": [-0.5, 1.0, 2.0]})
    >>> neutralise_formulas(t).to_dict("list")
    {'query': ["'=1+1", 'ok', "'@SUM(A1)"], 'score': [-0.5, 1.0, 2.0]}
    """
    out = table
    for col in table.columns:
        s = table[col]
        if not (
            isinstance(s.dtype, pd.CategoricalDtype)
            or pd.api.types.is_string_dtype(s)
            or s.dtype == object
        ):
            continue
        text = s.astype("string")
        risky = text.str.startswith(FORMULA_STARTS).fillna(False).to_numpy(dtype=bool)
        if risky.any():
            if out is table:
                out = table.copy()
            out[col] = text.where(~risky, "'" + text)
    return out


def fit_label(label: str, limit: int) -> str:
    """``label`` within ``limit`` UTF-8 bytes.

    Of ``"<title>: <file>"`` the file's name goes first (the file is named so anyway),
    then the title is cut, marked with ``...``.

    Examples
    --------
    >>> fit_label("A study with a rather long name: per_session_wide", 40)
    'A study with a rather long name'
    >>> fit_label("A study with a rather long name: per_session_wide", 20)
    'A study with a ra...'
    >>> fit_label("short: x", 64)
    'short: x'
    """
    if len(label.encode("utf-8")) <= limit:
        return label
    head, sep, _ = label.rpartition(": ")
    title = head if sep else label
    if len(title.encode("utf-8")) <= limit:
        return title
    cut = title.encode("utf-8")[: max(limit - 3, 0)].decode("utf-8", errors="ignore")
    return cut + "..."


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
    csv_safe: bool = False,
    background: BackgroundWrites | None = None,
    stats_files: BackgroundWork | None = None,
) -> list[Path]:
    """Write one table as ``<stem>.csv``, ``.parquet``, ``.dta`` and/or ``.sav``.

    Parameters
    ----------
    table
        The table (not modified), with its full column names: CSV and Parquet keep
        them, ``.dta``/``.sav`` get :func:`stats_names` with the full names in the
        variable labels.
    stem
        Path without suffix.
    formats
        Which files to write.
    label_maps
        Shared value labels for coded columns (see :func:`to_stats_frame`).
    file_label
        Dataset label stored in ``.dta``/``.sav`` (cut to 80 characters, 64 bytes for
        SPSS; :func:`write_exports` says so when it cuts).
    level
        Table the columns belong to, for their variable labels (default: from the
        stem, as :func:`~sessionval.output.codebook.level_of`).
    csv_safe
        Neutralise spreadsheet formulas in the CSV (:func:`neutralise_formulas`).
    background
        Write the CSV and Parquet files on this writer thread (Arrow's encoders
        release the GIL) while the Stata and SPSS files (pyreadstat's per-cell loop
        holds it) are written here: the same bytes, complete when its block ends.
    stats_files
        Write the Stata and SPSS files through it (the run's background process, once
        started: the same files, complete when it closes); ``None``: here.

    Returns
    -------
    list of pathlib.Path
        The files written, in ``formats`` order.
    """
    stem = Path(stem)
    fmts = _check_formats(formats)
    written: list[Path] = []
    for fmt in ("csv", "parquet"):
        if fmt in fmts:
            path = stem.with_name(f"{stem.name}.{fmt}")
            if background is None:
                _write_arrow(table, path, csv_safe=csv_safe)
            else:
                # the writer's own frame (a shallow copy): this thread reads the table on
                background.submit(_write_arrow, table.copy(deep=False), path, csv_safe=csv_safe)
            written.append(path)
    if "dta" in fmts or "sav" in fmts:
        maps = shared_label_maps({"t": table}) if label_maps is None else label_maps
        names = stats_names(table.columns, systems=maps.get("system_id", ()))
        sf = to_stats_frame(
            table.set_axis([names[str(c)] for c in table.columns], axis=1),
            label_maps={names.get(k, k): v for k, v in maps.items()},
            level=level if level is not None else level_of(stem.name),
            full_names={short: full for full, short in names.items()},
        )
        args = (sf, stem, [f for f in ("dta", "sav") if f in fmts], file_label)
        if stats_files is None:
            _write_stats(*args)
        else:  # pickled to the run's background process: its per-cell loop runs there
            stats_files.submit(_write_stats, *args)
        written += [stem.with_name(f"{stem.name}.{f}") for f in args[2]]
    return written


def _write_stats(sf: StatsFrame, stem: Path, fmts: Sequence[str], file_label: str) -> None:
    """``<stem>.dta`` and/or ``<stem>.sav`` of a table made for them (:func:`to_stats_frame`)."""
    import pyreadstat

    writers: dict[str, tuple[Callable[..., object], dict[str, Any]]] = {
        # SPSS alone stores each variable's measure (nominal, ordinal, scale)
        "dta": (write_dta, {}),  # pandas' column-wise writer (stata_file.py)
        "sav": (pyreadstat.write_sav, {"variable_measure": sf.measure}),
    }
    for fmt in fmts:
        write, extra = writers[fmt]
        path = stem.with_name(f"{stem.name}.{fmt}")
        with writing(path):  # pyreadstat's C writer reports a full disk as ReadstatError
            write(
                sf.data,
                str(path),
                file_label=fit_label(file_label, _LABEL_LIMITS[fmt]),
                column_labels=sf.column_labels,
                variable_value_labels=sf.value_labels,
                **extra,
            )


def _write_arrow(table: pd.DataFrame, path: Path, *, csv_safe: bool) -> None:
    """``table`` as CSV or Parquet (by the suffix of ``path``), through Arrow."""
    with writing(path):
        if path.suffix == ".parquet":
            table.to_parquet(path, index=False)
        else:
            write_csv(neutralise_formulas(table) if csv_safe else table, path)


def export_formats(
    stem: str, n_rows: int, formats: Sequence[Format], large_rows: int | None = LARGE_ROWS
) -> tuple[Format, ...]:
    """The formats a table of ``n_rows`` rows is written in: all of ``formats``, unless large.

    A table of more than ``large_rows`` rows is not repeated in every format: a wide
    table is written as Parquet and CSV (those of ``formats``), a long one
    (``*_long``, the wide table melted: the largest, and rebuilt from the wide one in
    one line of R or pandas) as Parquet alone, or CSV when Parquet is not asked for.
    Stata and SPSS copies are left out (both read the CSV); when ``formats`` holds
    neither Parquet nor CSV the first requested format is kept, so a table is never
    dropped.  ``large_rows=None`` writes every table in every format.

    Examples
    --------
    >>> export_formats("per_session_wide", 1_000, FORMATS)
    ('csv', 'parquet', 'dta', 'sav')
    >>> export_formats("per_session_wide", 2_000_000, FORMATS)
    ('parquet', 'csv')
    >>> export_formats("per_session_long", 2_000_000, FORMATS)
    ('parquet',)
    >>> export_formats("per_session_long", 2_000_000, ("dta", "sav"))
    ('dta',)
    >>> export_formats("per_session_long", 2_000_000, FORMATS, large_rows=None)
    ('csv', 'parquet', 'dta', 'sav')
    """
    fmts = _check_formats(formats)
    if large_rows is None or n_rows <= large_rows:
        return fmts
    compact = tuple(f for f in _COMPACT if f in fmts)
    if stem.endswith("_long"):
        compact = compact[:1]
    return compact or fmts[:1]


@dataclass(frozen=True)
class ExportResult:
    """What :func:`write_exports` wrote, and what it had to say (``notes``: a label cut)."""

    files: tuple[Path, ...]
    codebook: pd.DataFrame
    tables: Mapping[str, pd.DataFrame]
    notes: tuple[str, ...] = ()


def export_tables(
    per_session: pd.DataFrame,
    per_query: pd.DataFrame | None = None,
    *,
    paired_measures: Sequence[str] | None = None,
) -> dict[str, pd.DataFrame]:
    """The tables :func:`write_exports` writes, by file stem, with their full column names.

    ``per_session_wide``, ``per_session_long``, ``per_user_by_system`` (when the
    table has searchers and systems; ``<measure>__<system>`` columns, then the
    searcher attributes), ``per_query_wide`` and ``per_query_long`` (with a per-query
    table).  The covariates of a session (times, order, searcher attributes:
    :mod:`sessionval.analysis.covariates`) are not scores: the long form repeats them
    on every row of the session, the by-system layout keeps the searcher's attributes.
    """
    ps = per_session
    covariates = covariate_columns(ps.columns)
    s_ids = [c for c in _SESSION_IDS if c in ps.columns]
    scores = score_columns(ps, [*s_ids, *covariates])
    tables: dict[str, pd.DataFrame] = {"per_session_wide": ps}
    tables["per_session_long"] = long_form(
        ps, id_columns=[*s_ids, *covariates], value_columns=scores
    )
    if "user_id" in ps.columns and "system_id" in ps.columns:
        measures = list(paired_measures) if paired_measures is not None else scores
        by_system = wide_by_system(ps, measures=measures)
        attributes = attribute_columns(covariates)
        if attributes:
            first = ps.drop_duplicates("user_id")  # attributes are the searcher's: any row
            first = first.set_axis(pd.Index(first["user_id"].astype(str)), axis=0)
            at = pd.Index(by_system["user_id"].astype(str))
            for c in attributes:
                by_system[c] = first[c].reindex(at).to_numpy()
        tables["per_user_by_system"] = by_system
    if per_query is not None:
        pq = per_query
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
    csv_safe: bool = False,
    large_rows: int | None = LARGE_ROWS,
    copies: Mapping[str, Mapping[str, Path]] | None = None,
    stats_files: BackgroundWork | None = None,
    writes: BackgroundWrites | None = None,
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
        Dataset label in ``.dta``/``.sav``: ``"<title>: <file>"``, or the title alone when
        that is too long for the format (:func:`fit_label`); a title too long by itself is
        cut, and ``ExportResult.notes`` says so.
    csv_safe
        Neutralise spreadsheet formulas in the CSV files (:func:`neutralise_formulas`).
    large_rows
        A table of more rows is written in the compact formats only
        (:func:`export_formats`) and ``ExportResult.notes`` says which; ``None``: every
        table in every format.
    copies
        Files that already hold a table exactly as it would be written, by stem and
        format (``{"per_session_wide": {"csv": Path("tables/per_session.csv")}}``: the
        run's ``tables/``, written from the same table with the same ``csv_safe``):
        copied instead of converted again.  Only CSV and Parquet are copied.
    stats_files
        Where the Stata and SPSS files are written (:func:`write_table`): the run's
        background process, once started; ``None``: here.
    writes
        The writer thread of the copies, CSV and Parquet files: a run's, which outlives
        this call (the files are complete once the caller closes it; ``copies`` written
        on it are copied after them); ``None``: a thread of this call's, waited for
        before it returns.

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
    slimmed: dict[str, tuple[int, tuple[Format, ...]]] = {}
    # copies, CSV and Parquet on the writer thread, Stata and SPSS here (write_table)
    with nullcontext(writes) if writes is not None else BackgroundWrites() as bg:
        for stem, table in tables.items():
            chosen = export_formats(stem, len(table), fmts, large_rows)
            if chosen != fmts:
                slimmed[stem] = (len(table), chosen)
            given = (copies or {}).get(stem, {})
            same = {f: src for f, src in given.items() if f in chosen and f in _COMPACT}
            for fmt, src in same.items():
                bg.submit(_copy, src, out / f"{stem}.{fmt}")
            write_table(
                table,
                out / stem,
                formats=[f for f in chosen if f not in same],
                label_maps=maps,
                file_label=f"{title}: {stem}",
                csv_safe=csv_safe,
                background=bg,
                stats_files=stats_files,
            )
            files.extend(out / f"{stem}.{f}" for f in FORMATS if f in chosen)  # write_table's
        names = {
            stem: stats_names(table.columns, systems=maps.get("system_id", ()))
            for stem, table in tables.items()
        }
        book = codebook(tables, parameters=parameters, label_maps=maps, stats_names=names)
        with writing(out / "codebook.csv"):
            safe = neutralise_formulas(book) if csv_safe else book
            safe.to_csv(out / "codebook.csv", index=False)
        with writing(out / "codebook.md"):
            (out / "codebook.md").write_text(codebook_markdown(book, parameters), encoding="utf-8")
    files.extend([out / "codebook.csv", out / "codebook.md"])
    notes = [_slimmed_note(slimmed, large_rows)] if slimmed else []
    for fmt in ("dta", "sav"):
        if fmt in fmts and len(title.encode("utf-8")) > _LABEL_LIMITS[fmt]:
            what = "Stata's 80 characters" if fmt == "dta" else "SPSS's 64 bytes"
            notes.append(
                f"The file label of the .{fmt} exports holds {what}: the study name "
                f"{title!r} is cut to {fit_label(title, _LABEL_LIMITS[fmt])!r} there."
            )
    return ExportResult(files=tuple(files), codebook=book, tables=tables, notes=tuple(notes))


def _copy(src: Path, path: Path) -> None:
    with writing(path):
        shutil.copyfile(src, path)


def _slimmed_note(
    slimmed: Mapping[str, tuple[int, tuple[Format, ...]]], large_rows: int | None
) -> str:
    """The note on the large tables written in fewer formats, and how to ask for all."""
    listed = "; ".join(
        f"{stem} ({n:,} rows): {', '.join('.' + f for f in chosen)}"
        for stem, (n, chosen) in slimmed.items()
    )
    return (
        f"exports/ of more than {large_rows:,} rows are written in the compact formats only "
        f"(the same table in every format would repeat it): {listed}. "
        "[run] all_formats = true writes every format."
    )

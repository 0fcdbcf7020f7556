"""The toolkit's own layout: ``study.json`` + a JSON-lines log or a flat table + judgments.

A study folder holds ``sessions.jsonl`` (or ``sessions.parquet`` / ``.csv`` /
``.tsv``), optionally ``study.json`` (the header) and the reference judgments
given with ``qrels=``.  :func:`load_toolkit_study` reads it (the readers of the ``jsonl``
and ``flat`` formats of :data:`sessionval.io.formats.FORMATS`): it validates the
sessions (models at the edges, vectorised rules on the columns), checks the
study-level references (every session's user, topic and system known; every
topic judged or declared unjudged) and returns a :class:`LoadedStudy`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Final, Literal

import pandas as pd

from ..errors import InputFormatError, ParseError, raise_if_any
from ..frame import JudgmentFrame, LoadedStudy
from ..models.study import Study
from ..problems import Mode
from ..validate.flat import frame_from_flat, loaded_without_judgments
from ..validate.references import attach_entities, check_references, unjudged_keys
from ..validate.sources import ParquetColumns
from .flat import read_flat_table
from .header import find_header
from .jsonl import load_jsonl
from .mapping import load_mapped_table
from .trec import read_judgments

__all__ = [
    "FLAT_SUFFIXES",
    "JSONL_SUFFIXES",
    "SESSION_FILES",
    "is_flat_input",
    "is_jsonl_input",
    "load_flat_study",
    "load_judgments",
    "load_sessions",
    "load_toolkit_study",
]

#: the session log of a study folder, looked for in this order
SESSION_FILES: Final = ("sessions.jsonl", "sessions.parquet", "sessions.csv", "sessions.tsv")
#: file suffixes of a JSON-lines log (also compressed: ``.jsonl.gz``)
JSONL_SUFFIXES: Final = (".jsonl", ".ndjson")
#: file suffixes of a flat table (``.txt`` is read as CSV)
FLAT_SUFFIXES: Final = (".parquet", ".pq", ".csv", ".tsv", ".txt")


def _suffixes(p: Path) -> str:
    return "".join(p.suffixes).lower()


def _is_parquet(p: Path) -> bool:
    suffixes = _suffixes(p)
    return ".parquet" in suffixes or suffixes.endswith(".pq")


def is_jsonl_input(path: Path) -> bool:
    """A ``.jsonl`` log, or a folder with ``sessions.jsonl``."""
    if path.is_dir():
        return (path / SESSION_FILES[0]).exists()
    return any(s in _suffixes(path) for s in JSONL_SUFFIXES)


def is_flat_input(path: Path) -> bool:
    """A ``.parquet``/``.csv``/``.tsv`` table, or a folder with ``sessions.parquet``/``.csv``."""
    if path.is_dir():
        return any((path / name).exists() for name in SESSION_FILES[1:])
    suffixes = _suffixes(path)
    return any(s in suffixes for s in FLAT_SUFFIXES) and not is_jsonl_input(path)


def load_sessions(
    path: str | os.PathLike[str],
    *,
    mode: Mode = "strict",
    max_problems: int = 50,
    study: Study | None = None,
    progress: Callable[[str], None] | None = None,
    max_rank: int | None = None,
    columns: Sequence[str] | None = None,
    encoding: str | None = None,
    raise_problems: bool = True,
) -> LoadedStudy:
    """Load a session log file by its extension: ``.jsonl``, ``.csv``/``.tsv`` or ``.parquet``.

    ``max_rank`` reads only the results down to that rank: enough for session
    measures over the top X, not for deep single-query measures or the rank-100
    figures.  ``columns`` (Parquet) reads only those optional columns besides the
    required ones, e.g. ``()`` for a bare evaluation of a million sessions.
    ``encoding`` is the text encoding of a CSV/TSV table (default UTF-8).
    ``raise_problems=False``: strict mode returns the problems in the report instead
    of raising, for a caller that raises them with its study-level ones.

    Returns
    -------
    LoadedStudy
        The sessions and their load report, with ``study`` as the header (when
        given; else one naming the study after the file) and no judgments.
        :func:`~sessionval.io.study.load_study` reads a whole study (header,
        judgments, references checked).
    """
    p = Path(path)
    scale = (study.user_grade_scale or study.grade_scale) if study is not None else None
    if is_jsonl_input(p):
        if max_rank is not None:
            raise InputFormatError(f"{p}: max_rank is for Parquet and flat tables, not JSON-lines")
        loaded = load_jsonl(
            p,
            mode=mode,
            max_problems=max_problems,
            user_grade_scale=scale,
            progress=progress,
            raise_problems=raise_problems,
            encoding=encoding,
        )
    else:
        # Parquet is read column by column (a million sessions never sit in one wide table)
        if _is_parquet(p):
            flat: pd.DataFrame | ParquetColumns = ParquetColumns(
                p, max_rank=max_rank, columns=columns
            )
        else:
            flat = read_flat_table(p, encoding=encoding)
            if max_rank is not None:
                ranks = pd.to_numeric(flat["rank"], errors="coerce") if "rank" in flat else None
                if ranks is not None:
                    flat = flat[(ranks <= max_rank) | flat["rank"].isna()]
        kind: Literal["row", "line"] = "row" if _is_parquet(p) else "line"
        loaded = frame_from_flat(
            flat,
            source=str(p),
            mode=mode,
            max_problems=max_problems,
            user_grade_scale=scale,
            location_kind=kind,
            progress=progress,
            max_rank=max_rank,
            raise_problems=raise_problems,
        )
    if study is None:
        return loaded_without_judgments(loaded.frame, loaded.report, p.stem)
    return replace(loaded, study=study)


def load_judgments(
    path: str | os.PathLike[str],
    *,
    study: Study | None = None,
    encoding: str | None = None,
    max_problems: int = 50,
    qrels_map: str | Mapping[str, str] | None = None,
) -> JudgmentFrame:
    """Read reference judgments: TREC qrels (``topic iter doc grade``) or CSV/TSV.

    The CSV form has columns ``topic_id, doc_id, grade[, assessor]``, or others named
    by ``qrels_map`` (``"topic=QueryId,doc=DocNo,grade=Rel"``).  Grades must be
    integers on the study's grade scale (when a study header gives one).
    """
    return read_judgments(
        path,
        scale=study.grade_scale if study is not None else None,
        encoding=encoding,
        max_problems=max_problems,
        columns=qrels_map,
    )


def _locate_sessions(root: Path) -> Path:
    for name in SESSION_FILES:
        if (root / name).exists():
            return root / name
    raise InputFormatError(f"{root}: no session log found (looked for {', '.join(SESSION_FILES)})")


def load_toolkit_study(
    path: str | os.PathLike[str],
    *,
    qrels: str | os.PathLike[str] | None = None,
    header: str | os.PathLike[str] | None = None,
    mode: Mode = "strict",
    max_problems: int = 50,
    progress: Callable[[str], None] | None = None,
    max_rank: int | None = None,
    encoding: str | None = None,
    qrels_map: str | Mapping[str, str] | None = None,
) -> LoadedStudy:
    """Read and validate a study folder or a single session file of the toolkit's layout.

    ``path`` is a folder with ``sessions.jsonl`` (or ``.parquet``/``.csv``) and
    optionally ``study.json``, or one session file with the header it carries (a
    Parquet file's metadata, a table's ``<stem>.study.json``) or ``study.json``
    beside it (:func:`~sessionval.io.header.find_header`); ``header`` a ``study.json``
    elsewhere; ``encoding`` the text encoding of the JSON-lines log, ``study.json``
    and the qrels; ``qrels_map`` the column map of a CSV/TSV qrels table
    (:func:`load_judgments`).  The other parameters are those of
    :func:`sessionval.io.study.load_study`.

    Returns
    -------
    LoadedStudy
        Keyed as the header says (``qrels_key``, default ``"topic"``; a query may
        carry its own key in ``qrels_id``); no ``details``.
    """
    p = Path(path)
    if not p.exists():
        raise ParseError(f"{p}: no such file or folder")
    root = p if p.is_dir() else p.parent
    sessions_path = _locate_sessions(p) if p.is_dir() else p
    study = find_header(p, header=header, encoding=encoding)
    loaded = load_sessions(
        sessions_path,
        mode=mode,
        max_problems=max_problems,
        study=study,
        progress=progress,
        max_rank=max_rank,
        encoding=encoding,
        raise_problems=False,  # strict: raised below with the study-level problems
    )
    frame, report = loaded.frame, loaded.report
    judgments = (
        load_judgments(
            qrels, study=study, encoding=encoding, max_problems=max_problems, qrels_map=qrels_map
        )
        if qrels is not None
        else None
    )
    if study is None:
        scale = judgments.scale if judgments is not None else None
        study = Study(name=root.name, **({"grade_scale": scale} if scale is not None else {}))
    frame, report = check_references(
        frame,
        report,
        study,
        judgments,
        source=str(sessions_path),
        mode="lenient",  # only rejects; strict raises every problem at once just below
        max_problems=max_problems,
    )
    if mode == "strict":
        raise_if_any(report.problems, limit=max_problems)
    frame = attach_entities(frame, study)
    return LoadedStudy(
        study=study,
        frame=frame,
        judgments=judgments,
        report=report,
        qrels_key=study.qrels_key,
        unjudged=unjudged_keys(frame, judgments),
    )


def load_flat_study(
    path: str | os.PathLike[str],
    *,
    qrels: str | os.PathLike[str] | None = None,
    mapping: str | Mapping[str, str] | None = None,
    header: str | os.PathLike[str] | None = None,
    mode: Mode = "strict",
    max_problems: int = 50,
    progress: Callable[[str], None] | None = None,
    max_rank: int | None = None,
    encoding: str | None = None,
    qrels_map: str | Mapping[str, str] | None = None,
) -> LoadedStudy:
    """Read a flat table: the toolkit's layout (:func:`load_toolkit_study`), or any via ``mapping``.

    With a column ``mapping`` (``"session=SessionID,query_pos=Qno,..."``) the table
    goes through :func:`~sessionval.io.mapping.load_mapped_table`; ``header`` and
    ``max_rank`` apply only to a table already in the toolkit's layout; ``encoding`` is
    the text encoding of a CSV/TSV table (default UTF-8; a byte-order mark overrides it).
    """
    if mapping is None:
        return load_toolkit_study(
            path,
            qrels=qrels,
            header=header,
            mode=mode,
            max_problems=max_problems,
            progress=progress,
            max_rank=max_rank,
            encoding=encoding,
            qrels_map=qrels_map,
        )
    if header is not None or max_rank is not None:
        raise InputFormatError(
            f"{path}: header and max_rank apply to a table in the toolkit's layout, "
            "not to a table read through a column mapping"
        )
    return load_mapped_table(
        path,
        mapping,
        qrels=qrels,
        mode=mode,
        max_problems=max_problems,
        progress=progress,
        encoding=encoding,
        qrels_map=qrels_map,
    )

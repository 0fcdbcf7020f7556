"""The input formats sessionval reads, declared once: :data:`FORMATS` and :func:`load_input`.

Each :class:`InputFormat` names its reader (a function returning a
:class:`~sessionval.frame.LoadedStudy`), how to recognise its files, and the
options it takes beyond the common ones (``qrels``, ``mode``, ``max_problems``,
``progress``).  :func:`load_input` is the one entry point: ``load_study``,
``sessionval convert``, ``sessionval validate`` and ``sessionval run`` all read
through it, and the command-line options of every format are generated from
these declarations (:mod:`sessionval.commands._options`).

Adding a format is one :class:`InputFormat` entry here plus a reader module in
:mod:`sessionval.io`; ``docs/formats.md`` lists the formats from this table.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Final, Literal

from ..errors import InputFormatError, ParseError
from ..frame import LoadedStudy, QrelsKey
from ..problems import Mode
from ..validate.collect import ProblemCollector
from ..validate.ids import spelling_notes
from .cast import is_cast_input, load_cast
from .lab_tables import is_lab_tables_input, load_lab_tables
from .partitioned import PARTITIONED, has_glob, is_partitioned_input, load_partitioned_study
from .toolkit import is_flat_input, is_jsonl_input, load_flat_study, load_toolkit_study
from .trec_session import is_trec_session_input, load_trec_session

__all__ = [
    "ENCODING_OPTION",
    "FORMATS",
    "QRELS_MAP_OPTION",
    "FormatOption",
    "InputFormat",
    "detect_format",
    "format_options",
    "formats_markdown",
    "load_input",
]


@dataclass(frozen=True, slots=True)
class FormatOption:
    """An option a format's reader takes, declared once for Python and the command line.

    Parameters
    ----------
    name
        The reader's keyword argument (``"topic_map"``).
    flag
        The command-line flag (``"--topic-map"``).
    help
        What it sets, with its default.
    kind
        ``"file"`` (an existing file), ``"int"``, ``"choice"`` or ``"text"``.
    choices
        The allowed values of a ``"choice"``.
    low, high
        Bounds of an ``"int"`` (``None``: unbounded).
    cli
        Offered on the command line (``False``: Python only).
    """

    name: str
    flag: str
    help: str
    kind: Literal["file", "int", "choice", "text"] = "text"
    choices: tuple[str, ...] = ()
    low: int | None = None
    high: int | None = None
    cli: bool = True


@dataclass(frozen=True, slots=True)
class InputFormat:
    """One input format: its reader, how its files look, its options.

    Parameters
    ----------
    name
        The name given to ``--from`` / ``fmt=``.
    description
        What the format is, in a few words.
    reader
        ``reader(path, *, qrels, mode, max_problems, progress, **options) -> LoadedStudy``.
    detect
        ``detect(path) -> bool``: whether ``path`` looks like this format (``fmt="auto"``).
    detects
        What :attr:`detect` looks for, in words (for messages and docs).
    options
        The options the reader takes besides the common ones.
    qrels_key
        What its judgments are keyed by.
    """

    name: str
    description: str
    reader: Callable[..., LoadedStudy]
    detect: Callable[[Path], bool]
    detects: str
    options: tuple[FormatOption, ...] = ()
    qrels_key: QrelsKey = "topic"


_HEADER = FormatOption(
    "header", "--header", "study.json when it is not beside the sessions.", kind="file"
)
#: ``--encoding``: the one declaration of the option, for every reader of text files
ENCODING_OPTION: Final = FormatOption(
    "encoding",
    "--encoding",
    "text encoding of the input files and of --qrels (default utf-8; a byte-order mark "
    "wins; gzip is read whatever the name).",
)
#: ``--qrels-map``: the column map of a CSV/TSV --qrels table, for the readers of CSV qrels
#: (and, with the same help, for the commands that read a QRELS argument)
QRELS_MAP_OPTION: Final = FormatOption(
    "qrels_map",
    "--qrels-map",
    "column map of a CSV/TSV --qrels table whose columns have other names, e.g. "
    "topic=QueryId,doc=DocNo,grade=Rel (targets topic_id, doc_id, grade, assessor; "
    "query_id and relevance are accepted).",
)
_MAX_RANK = FormatOption(
    "max_rank", "--max-rank", "read only results down to this rank.", kind="int", low=1, cli=False
)

FORMATS: Final[Mapping[str, InputFormat]] = {
    f.name: f
    for f in (
        InputFormat(
            "jsonl",
            "the toolkit's JSON-lines log (one session per line) and study.json",
            load_toolkit_study,
            is_jsonl_input,
            "sessions.jsonl in a folder, or a *.jsonl file",
            (_HEADER, _MAX_RANK, ENCODING_OPTION, QRELS_MAP_OPTION),
        ),
        InputFormat(
            "flat",
            "a flat table, one row per result (CSV, TSV, Parquet), optionally column-mapped",
            load_flat_study,
            is_flat_input,
            "sessions.parquet/.csv/.tsv in a folder, or a *.parquet/.csv/.tsv file",
            (
                FormatOption(
                    "mapping",
                    "--map",
                    "column mapping, e.g. session=SessionID,query_pos=Qno,doc=URL.",
                ),
                _HEADER,
                _MAX_RANK,
                ENCODING_OPTION,
                QRELS_MAP_OPTION,
            ),
        ),
        InputFormat(
            PARTITIONED,
            "a folder or glob of flat Parquet files partitioned by session (docs/scale-out.md)",
            load_partitioned_study,
            is_partitioned_input,
            "*.parquet files in a folder (or its sessions/), or a glob of them",
            (
                _MAX_RANK,
                FormatOption(
                    "mapper",
                    "--mapper",
                    "how the partitions are loaded (an engine's map_items).",
                    cli=False,
                ),
                QRELS_MAP_OPTION,
            ),
        ),
        InputFormat(
            "trec-session",
            "TREC Session Track XML 2011-2014 (+ session-topic map)",
            load_trec_session,
            is_trec_session_input,
            "a *.xml file",
            (
                FormatOption("topic_map", "--topic-map", "sessiontopicmap.txt.", kind="file"),
                ENCODING_OPTION,
                FormatOption(
                    "year",
                    "--year",
                    "track year (default: from the root tag).",
                    kind="int",
                    low=2011,
                    high=2014,
                ),
            ),
        ),
        InputFormat(
            "lab-tables",
            "per-session lab tables (session, results, per-session qrels; Jiang & Allan 2016)",
            load_lab_tables,
            is_lab_tables_input,
            "session and results tables in a folder",
            (ENCODING_OPTION,),
            qrels_key="session",
        ),
        InputFormat(
            "cast",
            "TREC runs over topic_turn ids as sessions (TREC CAsT)",
            load_cast,
            is_cast_input,
            "*.run files in a folder, or a *.run file",
            (
                FormatOption(
                    "topics", "--topics", "topics JSON (turn texts and order).", kind="file"
                ),
                FormatOption(
                    "text",
                    "--text",
                    "utterance used as query text (default: raw).",
                    kind="choice",
                    choices=("raw", "manual", "automatic"),
                ),
                FormatOption(
                    "depth",
                    "--depth",
                    "documents kept per turn (default: 10).",
                    kind="int",
                    low=1,
                ),
                ENCODING_OPTION,
            ),
            qrels_key="query_id",
        ),
    )
}
"""Every input format, by name, in the order ``fmt="auto"`` tries them."""


def format_options() -> dict[str, tuple[FormatOption, tuple[str, ...]]]:
    """Every format option once, with the formats that take it: ``{name: (option, formats)}``.

    Examples
    --------
    >>> format_options()["header"][1]
    ('jsonl', 'flat')
    """
    out: dict[str, tuple[FormatOption, tuple[str, ...]]] = {}
    for fmt in FORMATS.values():
        for opt in fmt.options:
            known, names = out.get(opt.name, (opt, ()))
            out[opt.name] = (known, (*names, fmt.name))
    return out


def detect_format(path: str | os.PathLike[str]) -> str:
    """The name of the format ``path`` looks like (the first of :data:`FORMATS` that matches).

    Raises
    ------
    ParseError
        ``path`` does not exist.
    InputFormatError
        No format recognises it; the message lists what each format looks for.
    """
    p = Path(path)
    if has_glob(p):  # a pattern names the files of a partitioned input
        if not is_partitioned_input(p):
            raise ParseError(f"{p}: no file matches this pattern")
        return PARTITIONED
    if not p.exists():
        raise ParseError(f"{p}: no such file or folder")
    for fmt in FORMATS.values():
        if fmt.detect(p):
            return fmt.name
    looked = "; ".join(f.detects for f in FORMATS.values())
    what = "no session log found" if p.is_dir() else "cannot tell the format of this file"
    raise InputFormatError(f"{p}: {what} (looked for {looked}); name the format with --from / fmt=")


def load_input(
    path: str | os.PathLike[str],
    fmt: str = "auto",
    *,
    qrels: str | os.PathLike[str] | None = None,
    mode: Mode = "strict",
    max_problems: int = 50,
    progress: Callable[[str], None] | None = None,
    **options: Any,
) -> LoadedStudy:
    r"""Read and validate ``path`` in any supported format: the one entry point.

    Parameters
    ----------
    path
        The input: a file or a folder, as the format expects.
    fmt
        A name of :data:`FORMATS`, or ``"auto"`` (default) to recognise it by its
        files (:func:`detect_format`).
    qrels
        Reference judgments (TREC qrels, CSV, or the lab study's per-session table).
    mode
        ``"strict"`` (default) fails with every problem found (up to
        ``max_problems``); ``"lenient"`` repairs what is safe, rejects the bad
        sessions and reports both.
    max_problems
        Limit of problems listed in strict mode.
    progress
        Called with the name of each loading phase as it starts.
    **options
        Options of the format (:attr:`InputFormat.options`); ``None`` means not given.

    Returns
    -------
    LoadedStudy

    Raises
    ------
    InputFormatError
        Unknown format, an input no format recognises, or an option the format
        does not take.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "log.csv").write_text(
    ...     "session_id,user_id,topic_id,system_id,query_pos,rank,doc_id\ns1,u1,T1,S1,1,1,d1\n")
    >>> load_input(d / "log.csv").report.summary_line()
    '1 records read = 1 sessions accepted + 0 rejected'
    """
    name = detect_format(path) if fmt == "auto" else fmt
    if name not in FORMATS:
        raise InputFormatError(
            f"unknown input format {name!r} (allowed: auto, {', '.join(FORMATS)})"
        )
    entry = FORMATS[name]
    given = {k: v for k, v in options.items() if v is not None}
    allowed = {o.name for o in entry.options}
    stray = sorted(set(given) - allowed)
    if stray:
        takes = ", ".join(sorted(allowed)) or "none"
        raise InputFormatError(
            f"option(s) {', '.join(stray)} do not apply to the {name} format (its options: {takes})"
        )
    loaded = entry.reader(
        Path(path), qrels=qrels, mode=mode, max_problems=max_problems, progress=progress, **given
    )
    return _with_spelling_notes(loaded, str(qrels) if qrels is not None else str(path))


def _with_spelling_notes(loaded: LoadedStudy, source: str) -> LoadedStudy:
    """``loaded`` with the notes of the Unicode policy of ids (:mod:`sessionval.validate.ids`).

    Document ids of the log and the judgments that differ only by Unicode
    normalisation or invisible characters are kept as written; they are noted,
    and so are such spellings judged with different grades for one topic.
    """
    judged = loaded.judgments.table if loaded.judgments is not None else None
    notes = spelling_notes(judged, loaded.frame.results["doc_id"])
    if not notes:
        return loaded
    extra = ProblemCollector(source)
    for note in notes:
        extra.add_at(None, "doc_id", note)
    return replace(loaded, notes=(*loaded.notes, *extra.problems))


def formats_markdown() -> str:
    """The formats as a Markdown table (the formats section of ``docs/formats.md``).

    Examples
    --------
    >>> formats_markdown().splitlines()[2].split(" | ")[0]
    '| `jsonl`'
    """
    rows = [
        "| `--from` | what | recognised by (`auto`) | options | judgments keyed by |",
        "|---|---|---|---|---|",
    ]
    for f in FORMATS.values():
        opts = ", ".join(f"`{o.flag}`" if o.cli else f"`{o.name}=`" for o in f.options) or "—"
        rows.append(f"| `{f.name}` | {f.description} | {f.detects} | {opts} | {f.qrels_key} |")
    return "\n".join(rows)

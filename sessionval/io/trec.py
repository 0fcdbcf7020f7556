r"""TREC qrels and runs, and CSV judgments, read with pandas' C parser (no loop per line).

* :func:`read_qrels` — ``topic iteration doc grade`` -> :class:`JudgmentFrame`.
* :func:`read_judgments_csv` — CSV/TSV with ``topic_id, doc_id, grade[, assessor]``.
* :func:`read_judgments` — either of the two, by the file's suffix.
* :func:`read_run` — ``qid Q0 doc rank score tag`` -> DataFrame ``query_id``, ``doc_id``
  (categorical), ``rank`` (int64), ``score`` (float64), ``tag`` (categorical).

The whitespace-separated files follow one rule: a line ends at ``\n``, ``\r\n`` or
``\r``; fields are separated by runs of spaces and tabs; a line of only spaces and
tabs is blank and skipped; every other character (a ``"``, a vertical tab, a
no-break space) is data.  Ids then follow the whitespace rule of every reader
(:mod:`sessionval.validate.ids`): Unicode whitespace around an id (a no-break space,
U+3000) is removed, so ``d1`` and ``d1`` + U+00A0 are one id; an id that is only
whitespace is an error.  Grades and ranks are decided on their text: an integer is
written with digits (``3``, ``-1``, ``+2``, ``3.0``), never a number that only rounds
to one (``2.9999999999999999``, ``1e-400``).  A line with more or fewer fields than
the format has is an error, as is an integer outside its storage type (grades are 16-bit) or off the
grade scale.  Every problem is collected, up to ``max_problems``, and raised in one
error naming the file, the line, the field and the value as written.  Files may be
gzip-compressed and in any encoding (:mod:`sessionval.io.text`); they are streamed in
pieces of whole lines (``chunk_bytes``), so memory beyond the table read stays bounded.

Judgments then pass the one boundary of every road,
:func:`sessionval.validate.judgments.judgment_frame`: a document judged twice for the
same topic with the same grade is kept once; with different grades it is an error
naming the topic, document and lines.
"""

from __future__ import annotations

import gzip
import os
from collections.abc import Callable, Mapping
from functools import cache
from pathlib import Path
from typing import Final

import numpy as np
import numpy.typing as npt
import pandas as pd

from ..errors import InputFormatError, ParseError
from ..frame import JudgmentFrame
from ..models.judgments import GradeScale
from ..progress import ProgressLike, counted
from ..validate.collect import ProblemCollector
from ..validate.fields import exact_integers
from ..validate.ids import checked_id_column, strip_ids
from ..validate.judgments import GRADE_RANGE, judgment_frame
from ..validate.runs import check_scores
from .column_map import apply_judgment_map, parse_judgment_map
from .flat import read_csv_table
from .text import check_utf8_range, count_line_ends, range_start
from .whitespace_table import PIECE_BYTES, RowLines, read_fields, read_piece

__all__ = [
    "GRADE_RANGE",
    "read_judgments",
    "read_judgments_csv",
    "read_qrels",
    "read_run",
    "read_run_range",
    "run_line_numbers",
    "run_tag",
]

#: ranks are stored as int64 but compared as float64: integers exactly representable
_RANK_RANGE: Final = (-(2**53), 2**53)
_QRELS_FIELDS: Final = ("topic", "iteration", "doc", "grade")
_RUN_FIELDS: Final = ("qid", "q0", "doc", "rank", "score", "tag")


def read_qrels(
    path: str | os.PathLike[str],
    *,
    scale: GradeScale | None = None,
    encoding: str | None = None,
    max_problems: int = 50,
    chunk_bytes: int = PIECE_BYTES,
    progress: ProgressLike = None,
) -> JudgmentFrame:
    """Read TREC qrels (``topic iteration doc grade``, whitespace-separated).

    Parameters
    ----------
    path
        The qrels file (plain or gzip-compressed).
    scale
        Grade scale the grades must be on (default: the grades observed).
    encoding
        Text encoding (default UTF-8; a byte-order mark wins).
    max_problems
        Problems listed in the error at most.
    chunk_bytes
        Decompressed bytes parsed at a time: memory beyond the table stays about
        this size, whatever the file's.
    progress
        Told the lines read (:class:`~sessionval.progress.Progress`).

    Returns
    -------
    JudgmentFrame

    Raises
    ------
    ParseError
        Undecodable bytes, lines with the wrong number of fields, grades that are not
        integers: every problem, each with its line and the value as written.
    JudgmentError
        When every problem is about grades: off ``scale`` or outside 16 bits, or a
        (topic, doc) judged twice with different grades.
    """
    p = Path(path)
    problems = ProblemCollector(str(p), limit=max_problems)
    df, line_at = read_fields(
        p, _QRELS_FIELDS, "qrels", encoding, problems, chunk_bytes, progress=progress
    )
    # the fields' checks are vectorised passes over every row: a phase of their own
    with counted(progress, f"checking {p.name}", len(df)) as shown:
        out = judgment_frame(
            df["topic"],
            df["doc"],
            df["grade"],
            None,
            source=str(p),
            what="qrels",
            scale=scale,
            problems=problems,
            line_at=line_at,
        )
        shown.advance(len(df))
    return out


def read_judgments_csv(
    path: str | os.PathLike[str],
    *,
    scale: GradeScale | None = None,
    encoding: str | None = None,
    max_problems: int = 50,
    columns: str | Mapping[str, str] | None = None,
) -> JudgmentFrame:
    """Read judgments from CSV/TSV with columns ``topic_id, doc_id, grade[, assessor]``.

    A table whose columns have other names is read through ``columns``
    (``"topic=QueryId,doc=DocNo,grade=Rel"``: :func:`~sessionval.io.column_map.parse_judgment_map`).

    Parameters
    ----------
    path
        ``.csv`` (comma) or ``.tsv`` (tab) file with a header row (plain or gzip).
    scale
        Grade scale the grades must be on.
    encoding
        Text encoding (default UTF-8; a byte-order mark wins).
    max_problems
        Problems listed in the error at most.
    columns
        Column map of a table with other column names (``--qrels-map``).

    Returns
    -------
    JudgmentFrame
    """
    p = Path(path)
    sep = "\t" if ".tsv" in "".join(p.suffixes).lower() else ","
    df = read_csv_table(
        p, sep=sep, encoding=encoding, what="judgments table", skip_blank_lines=False
    ).fillna("")
    if columns:
        df = apply_judgment_map(df, parse_judgment_map(columns), source=str(p))
    missing = [c for c in ("topic_id", "doc_id", "grade") if c not in df.columns]
    if missing:
        raise ParseError(
            f"{p}: missing column(s) {', '.join(missing)} (found {', '.join(df.columns)}); "
            "judgment tables need topic_id, doc_id, grade[, assessor]: rename the columns, "
            "or map them with --qrels-map topic=YourTopic,doc=YourDoc,grade=YourGrade "
            "(qrels_map= in Python)"
        )
    problems = ProblemCollector(str(p), limit=max_problems)
    line_of = np.arange(len(df), dtype=np.int64) + 2  # header is line 1
    for col in ("topic_id", "doc_id"):  # the whitespace rule of every reader
        df[col] = strip_ids(df[col])
    empty = df == ""
    blank = empty.all(axis=1).to_numpy().copy()  # a blank line (kept above for the line numbers)
    for col in ("topic_id", "doc_id", "grade"):
        absent = empty[col].to_numpy() & ~blank
        for i in problems.first(absent):
            problems.add_at(int(line_of[i]), col, "is empty (or the row has too few fields)")
        blank |= absent
    df = df[~blank].reset_index(drop=True)
    line_of = line_of[~blank]
    return judgment_frame(
        df["topic_id"],
        df["doc_id"],
        df["grade"],
        df["assessor"] if "assessor" in df.columns else None,
        source=str(p),
        what="judgments",
        scale=scale,
        problems=problems,
        line_at=lambda: line_of,
    )


def read_judgments(
    path: str | os.PathLike[str],
    *,
    scale: GradeScale | None = None,
    encoding: str | None = None,
    max_problems: int = 50,
    columns: str | Mapping[str, str] | None = None,
    progress: ProgressLike = None,
) -> JudgmentFrame:
    """Read judgments: a ``.csv``/``.tsv`` table (:func:`read_judgments_csv`), else TREC qrels.

    Parameters
    ----------
    path
        The judgments file.
    scale
        Grade scale the grades must be on (default: the grades observed).
    encoding
        Text encoding (default UTF-8; a byte-order mark wins).
    max_problems
        Problems listed in the error at most.
    columns
        Column map of a CSV/TSV table with other column names (``--qrels-map``).
    progress
        Told the lines of TREC qrels read (:func:`read_qrels`).

    Raises
    ------
    InputFormatError
        ``columns`` given for TREC qrels (their columns are fixed by position).
    """
    suffixes = "".join(Path(path).suffixes).lower()
    if any(s in suffixes for s in (".csv", ".tsv")):
        return read_judgments_csv(
            path, scale=scale, encoding=encoding, max_problems=max_problems, columns=columns
        )
    if columns:
        raise InputFormatError(
            f"{path}: --qrels-map maps the columns of a CSV/TSV judgments table (named "
            ".csv or .tsv); TREC qrels have fixed columns: topic iteration doc grade"
        )
    return read_qrels(
        path, scale=scale, encoding=encoding, max_problems=max_problems, progress=progress
    )


def run_line_numbers(
    path: str | os.PathLike[str], *, encoding: str | None = None
) -> npt.NDArray[np.int64]:
    """The 1-based line of each row :func:`read_run` returns for ``path`` (for messages).

    A loop over the lines: call it only to locate a problem.
    """
    return RowLines(Path(path), encoding, PIECE_BYTES)()


def read_run(
    path: str | os.PathLike[str],
    *,
    encoding: str | None = None,
    max_problems: int = 50,
    chunk_bytes: int = PIECE_BYTES,
    progress: ProgressLike = None,
) -> pd.DataFrame:
    """Read a TREC run (``qid Q0 doc rank score tag``).

    Parameters
    ----------
    path
        The run file (plain or gzip-compressed).
    encoding
        Text encoding (default UTF-8; a byte-order mark wins).
    max_problems
        Problems listed in the error at most.
    chunk_bytes
        Decompressed bytes parsed at a time (as :func:`read_qrels`).
    progress
        Told the lines read (:class:`~sessionval.progress.Progress`).

    Returns
    -------
    pandas.DataFrame
        ``query_id``, ``doc_id`` (categorical), ``rank`` (int64), ``score`` (float64),
        ``tag`` (categorical), in file order.  Order lists with
        :meth:`sessionval.measures.lists.RankedLists.from_run`.

    Raises
    ------
    ParseError
        Undecodable bytes, lines with the wrong number of fields, a rank that is not
        an integer or a score that is not a number: every problem, each with its line
        and the value as written.
    """
    p = Path(path)
    problems = ProblemCollector(str(p), limit=max_problems)
    df, line_at = read_fields(
        p, _RUN_FIELDS, "run", encoding, problems, chunk_bytes, progress=progress
    )
    # the fields' checks are vectorised passes over every row: a phase of their own
    with counted(progress, f"checking {p.name}", len(df)) as shown:
        out = _run_from_fields(df, p, problems, line_at)
        shown.advance(len(df))
    return out


def read_run_range(
    data: bytes, path: str | os.PathLike[str], offset: int, *, max_problems: int = 50
) -> tuple[pd.DataFrame, Callable[[], npt.NDArray[np.int64]]]:
    r"""A byte range of a TREC run read as :func:`read_run` reads the file, and its rows' lines.

    ``data`` is the block ``fsspec.utils.read_block(f, offset, length,
    delimiter=b"\n")`` reads at ``offset`` (as ``dask.bytes.read_bytes`` does):
    whole lines of a plain UTF-8 file (:func:`~sessionval.io.text.splittable`).
    The same parse and checks as the whole file's, so a problem names the file and
    its line: the lines before the block are counted only then
    (:func:`~sessionval.io.text.count_line_ends`).

    Returns
    -------
    tuple
        The table of :func:`read_run` (an empty one for a block of blank lines), and a
        callable giving each row's line in the file (for later messages).

    Raises
    ------
    ParseError
        As :func:`read_run`, for the lines of the block.
    """
    p = Path(path)
    problems = ProblemCollector(str(p), limit=max_problems)

    @cache
    def before() -> int:
        return count_line_ends(p, range_start(p, offset))

    text = check_utf8_range(data, p, range_start(p, offset) if offset else 0, before)
    df, line_at = read_piece(text, _RUN_FIELDS, "run", problems, before)
    return _run_from_fields(df, p, problems, line_at), line_at


def _run_from_fields(
    df: pd.DataFrame,
    p: Path,
    problems: ProblemCollector,
    line_at: Callable[[], npt.NDArray[np.int64]],
) -> pd.DataFrame:
    """The run's fields checked and typed (every problem raised together, located)."""
    rank, _ = exact_integers(
        df["rank"], "rank", _RANK_RANGE, "exactly representable", problems, line_at
    )
    qid, _ = checked_id_column(df["qid"], "qid", problems, line_at)
    doc, _ = checked_id_column(df["doc"], "doc", problems, line_at)
    score = check_scores(df["score"], problems, line_at)
    problems.raise_if_any("run")
    out = pd.DataFrame(
        {
            "query_id": qid,
            "doc_id": doc,
            "rank": rank.astype(np.int64),  # every rank is an integer within ±2**53 here
            "score": score,
            "tag": pd.Categorical(df["tag"].to_numpy()),
        }
    )
    out.attrs["source"] = str(p)  # for messages of later steps (score_runs)
    return out


def run_tag(path: str | os.PathLike[str]) -> str:
    """The tag (sixth field) of a TREC run's first line: trec_eval's ``runid``.

    Reads only that line (plain or gzip-compressed); ``""`` for an empty file or a
    line without a sixth field (the run itself is checked by :func:`read_run`).
    """
    p = Path(path)
    with p.open("rb") as f:
        gz = f.read(2) == b"\x1f\x8b"
    with gzip.open(p, "rb") if gz else p.open("rb") as f:
        fields = f.readline(1 << 20).decode("utf-8-sig", errors="replace").split()
    return fields[5] if len(fields) >= 6 else ""

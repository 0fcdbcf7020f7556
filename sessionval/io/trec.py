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

A document judged twice for the same topic with the same grade is kept once; with
different grades it is an error naming the topic, document and lines.
"""

from __future__ import annotations

import gzip
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Final

import numpy as np
import numpy.typing as npt
import pandas as pd

from ..errors import InputFormatError, ParseError
from ..frame import JudgmentFrame
from ..models.judgments import GradeScale
from ..problems import line_list
from ..validate.fields import INEXACT_WHOLE, inexact_whole_text
from ..validate.ids import strip_coded, strip_ids
from .column_map import apply_judgment_map, parse_judgment_map
from .flat import read_csv_table
from .whitespace_table import PIECE_BYTES, FileProblems, RowLines, read_fields

__all__ = [
    "GRADE_RANGE",
    "read_judgments",
    "read_judgments_csv",
    "read_qrels",
    "read_run",
    "run_line_numbers",
    "run_tag",
]

#: grades are stored as 16-bit integers: the values a grade may take
GRADE_RANGE: Final = (-32768, 32767)
#: ranks are stored as int64 but compared as float64: integers exactly representable
_RANK_RANGE: Final = (-(2**53), 2**53)
_QRELS_FIELDS: Final = ("topic", "iteration", "doc", "grade")
_RUN_FIELDS: Final = ("qid", "q0", "doc", "rank", "score", "tag")


def _integers(
    col: pd.Series,
    name: str,
    bounds: tuple[int, int],
    storage: str,
    problems: FileProblems,
    line_at: Callable[[], np.ndarray],
    *,
    judgment: bool = False,
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.bool_]]:
    """Parse integers; flag non-integers and values outside ``bounds`` (checked before any cast).

    Returns the values (float64, exact within ``bounds``) and the mask of bad rows.
    """
    num = pd.to_numeric(col, errors="coerce")
    vals = num.to_numpy(dtype=np.float64, na_value=np.nan)
    with np.errstate(invalid="ignore"):
        not_int = ~np.isfinite(vals) | (np.floor(vals) != vals)
    inexact = np.zeros(len(vals), dtype=bool)
    if not pd.api.types.is_integer_dtype(num.dtype):  # all integers: the text was exact
        inexact = inexact_whole_text(col, vals)  # decided on the text, not the float
        not_int |= inexact
    with np.errstate(invalid="ignore"):
        out = ~not_int & ((vals < bounds[0]) | (vals > bounds[1]))
    bad = not_int | out
    if bad.any():
        lines = line_at()
        raw = col.to_numpy()
        for i in problems.first(not_int):
            message = INEXACT_WHOLE if inexact[i] else "must be an integer"
            problems.add(int(lines[i]), name, message, repr(str(raw[i])))
        for i in problems.first(out):
            problems.add(
                int(lines[i]),
                name,
                f"must be an integer from {bounds[0]} to {bounds[1]} ({storage})",
                repr(str(raw[i])),
                judgment=judgment,
            )
    return vals, bad


def _id_column(
    col: pd.Series, name: str, problems: FileProblems, line_at: Callable[[], np.ndarray]
) -> tuple[pd.Categorical, npt.NDArray[np.bool_]]:
    """Ids by the rule of every reader (sorted categorical) and the rows that are only whitespace.

    One sorted factorisation, as ``pd.Categorical`` does; the rule runs on the
    distinct values only (:func:`~sessionval.validate.ids.strip_coded`).
    """
    raw_codes, uniques = pd.factorize(col, sort=True)
    codes, cats = strip_coded(raw_codes, pd.Index(uniques), sort=True)
    empty = np.flatnonzero(np.asarray(cats == "", dtype=bool))
    blank = codes == int(empty[0]) if len(empty) else np.zeros(len(codes), dtype=bool)
    if blank.any():
        lines, raw = line_at(), col.to_numpy()
        for i in problems.first(blank):
            problems.add(
                int(lines[i]), name, "is only whitespace (ids must not be empty)", repr(raw[i])
            )
    return pd.Categorical.from_codes(codes, categories=cats), blank


def _used_only(cat: pd.Categorical) -> pd.Categorical:
    """``cat`` without the categories no row uses (rows were dropped), order kept."""
    codes = cat.codes
    if (np.bincount(codes[codes >= 0], minlength=len(cat.categories)) > 0).all():
        return cat
    return cat.remove_unused_categories()


def _judgment_frame(
    topic: pd.Series,
    doc: pd.Series,
    grade_text: pd.Series,
    assessor: pd.Series | None,
    *,
    path: Path,
    what: str,
    scale: GradeScale | None,
    problems: FileProblems,
    line_at: Callable[[], np.ndarray],
) -> JudgmentFrame:
    vals, bad = _integers(
        grade_text,
        "grade",
        GRADE_RANGE,
        "grades are stored as 16-bit integers",
        problems,
        line_at,
        judgment=True,
    )
    topic_ids, blank_topic = _id_column(topic, str(topic.name), problems, line_at)
    doc_ids, blank_doc = _id_column(doc, str(doc.name), problems, line_at)
    bad = bad | blank_topic | blank_doc
    if scale is not None:
        allowed = np.asarray(scale.grades, dtype=np.float64)
        off = ~bad & ~np.isin(vals, allowed)
        if off.any():
            lines, raw = line_at(), grade_text.to_numpy()
            for i in problems.first(off):
                problems.add(
                    int(lines[i]),
                    "grade",
                    f"not on the scale {scale.name!r} "
                    f"(allowed: {', '.join(map(str, scale.grades))})",
                    repr(str(raw[i])),
                    judgment=True,
                )
            bad = bad | off
    keep_rows = ~bad
    # every grade left is an integer within int16: the cast changes no value
    t = pd.DataFrame(
        {
            "topic_id": topic_ids[keep_rows],  # categoricals: the rules below run on codes
            "doc_id": doc_ids[keep_rows],
            "grade": vals[keep_rows].astype(np.int16),
        }
    )
    row_index = np.flatnonzero(keep_rows)
    if assessor is not None:
        assessor = assessor[keep_rows]
    dup = t.duplicated(["topic_id", "doc_id"], keep=False).to_numpy()
    if dup.any():
        d = t[dup]
        n_grades = d.groupby(["topic_id", "doc_id"], sort=False, observed=True)["grade"].nunique()
        conflict = n_grades[n_grades > 1]
        if len(conflict):
            lines = line_at()
            pairs = list(conflict.index)
            problems.uncounted += max(len(pairs) - problems.limit, 0)
            for top, doc_id in pairs[: problems.limit]:
                rows = np.flatnonzero(((t["topic_id"] == top) & (t["doc_id"] == doc_id)).to_numpy())
                at = [int(lines[row_index[r]]) for r in rows]
                grades = line_list(t["grade"].to_numpy()[rows])  # as many as lines listed
                problems.add(
                    at[1],
                    "grade",
                    f"document {doc_id!r} is judged more than once for topic {top!r} with "
                    f"different grades ({grades} on lines {line_list(at)})",
                    judgment=True,
                )
        keep = ~t.duplicated(["topic_id", "doc_id"], keep="first").to_numpy()
        t = t[keep]
        if assessor is not None:
            assessor = assessor[keep]
    problems.raise_if_any(what)
    t = t.reset_index(drop=True)
    table = pd.DataFrame(
        {
            "topic_id": _used_only(t["topic_id"].array),
            "doc_id": _used_only(t["doc_id"].array),
            "grade": t["grade"].to_numpy(),
            "assessor": pd.Categorical(
                assessor.astype(str).to_numpy() if assessor is not None else [""] * len(t)
            ),
        }
    )
    sc = (
        scale
        if scale is not None
        else GradeScale.from_grades(sorted(set(table["grade"].tolist())) or [0])
    )
    return JudgmentFrame(table, sc, str(path))


def read_qrels(
    path: str | os.PathLike[str],
    *,
    scale: GradeScale | None = None,
    encoding: str | None = None,
    max_problems: int = 50,
    chunk_bytes: int = PIECE_BYTES,
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
    problems = FileProblems(str(p), max_problems)
    df, line_at = read_fields(p, _QRELS_FIELDS, "qrels", encoding, problems, chunk_bytes)
    return _judgment_frame(
        df["topic"],
        df["doc"],
        df["grade"],
        None,
        path=p,
        what="qrels",
        scale=scale,
        problems=problems,
        line_at=line_at,
    )


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
    problems = FileProblems(str(p), max_problems)
    line_of = np.arange(len(df), dtype=np.int64) + 2  # header is line 1
    for col in ("topic_id", "doc_id"):  # the whitespace rule of every reader
        df[col] = strip_ids(df[col])
    empty = df == ""
    blank = empty.all(axis=1).to_numpy().copy()  # a blank line (kept above for the line numbers)
    for col in ("topic_id", "doc_id", "grade"):
        absent = empty[col].to_numpy() & ~blank
        for i in problems.first(absent):
            problems.add(int(line_of[i]), col, "is empty (or the row has too few fields)")
        blank |= absent
    df = df[~blank].reset_index(drop=True)
    line_of = line_of[~blank]
    return _judgment_frame(
        df["topic_id"],
        df["doc_id"],
        df["grade"],
        df["assessor"] if "assessor" in df.columns else None,
        path=p,
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
    return read_qrels(path, scale=scale, encoding=encoding, max_problems=max_problems)


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
    problems = FileProblems(str(p), max_problems)
    df, line_at = read_fields(p, _RUN_FIELDS, "run", encoding, problems, chunk_bytes)
    rank, _ = _integers(df["rank"], "rank", _RANK_RANGE, "exactly representable", problems, line_at)
    qid, _ = _id_column(df["qid"], "qid", problems, line_at)
    doc, _ = _id_column(df["doc"], "doc", problems, line_at)
    score = pd.to_numeric(df["score"], errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
    nan = np.isnan(score)
    if nan.any():
        lines, raw = line_at(), df["score"].to_numpy()
        for i in problems.first(nan):
            problems.add(int(lines[i]), "score", "must be a number", repr(str(raw[i])))
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

"""TREC qrels and runs, and CSV judgments, read with pandas' C parser (no loop per line).

* :func:`read_qrels` — ``topic iteration doc grade`` -> :class:`JudgmentFrame`.
* :func:`read_judgments_csv` — CSV/TSV with ``topic_id, doc_id, grade[, assessor]``.
* :func:`read_judgments` — either of the two, by the file's suffix.
* :func:`read_run` — ``qid Q0 doc rank score tag`` -> DataFrame ``query_id``, ``doc_id``
  (categorical), ``rank`` (int64), ``score`` (float64), ``tag`` (categorical).

A document judged twice for the same topic with the same grade is kept once; with
different grades it is an error naming the topic, document and lines.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import JudgmentError, ParseError
from ..frame import JudgmentFrame
from ..models.judgments import GradeScale
from .flat import read_csv_table

__all__ = [
    "read_judgments",
    "read_judgments_csv",
    "read_qrels",
    "read_run",
]


def _line_numbers(path: Path) -> np.ndarray:
    """1-based line number of every non-blank line (pandas skips blank lines)."""
    with path.open("rb") as fh:
        return np.asarray([i + 1 for i, ln in enumerate(fh) if ln.strip()], dtype=np.int64)


def _read_ws(path: Path, names: list[str], what: str) -> pd.DataFrame:
    if not path.exists():
        raise ParseError(f"{path}: no such file")
    try:
        df = pd.read_csv(
            path,
            sep=r"\s+",
            header=None,
            names=names,
            dtype=str,
            engine="c",
            skip_blank_lines=True,
            keep_default_na=False,
        )
    except pd.errors.ParserError as exc:
        raise ParseError(
            f"{path}: {what} lines must have {len(names)} whitespace-separated fields "
            f"({' '.join(names)}): {exc}"
        ) from None
    except pd.errors.EmptyDataError:
        raise ParseError(f"{path}: file is empty (expected {what} lines)") from None
    if len(df) == 0:
        raise ParseError(f"{path}: file is empty (expected {what} lines)")
    short = (df[names[-1]] == "").to_numpy() | df[names[-1]].isna().to_numpy()
    if short.any():
        i = int(np.flatnonzero(short)[0])
        line = int(_line_numbers(path)[i])
        raise ParseError(
            f"{path}:{line}: {what} line must have {len(names)} whitespace-separated fields "
            f"({' '.join(names)})"
        )
    return df


def _numeric(df: pd.DataFrame, col: str, path: Path, *, integer: bool) -> np.ndarray:
    vals = pd.to_numeric(df[col], errors="coerce").to_numpy(dtype=np.float64)
    bad = np.isnan(vals) | (np.floor(vals) != vals if integer else np.zeros(len(vals), bool))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        line = int(_line_numbers(path)[i]) if path.exists() else i + 1
        kind = "an integer" if integer else "a number"
        raise ParseError(f"{path}:{line}: {col} must be {kind}, got {df[col].iloc[i]!r}")
    return vals


def _judgment_frame(
    topic: pd.Series,
    doc: pd.Series,
    grade: np.ndarray,
    assessor: pd.Series | None,
    *,
    path: Path,
    scale: GradeScale | None,
    line_of: np.ndarray | None,
) -> JudgmentFrame:
    g = grade.astype(np.int64)
    if scale is not None:
        off = ~np.isin(g, np.asarray(scale.grades))
        if off.any():
            i = int(np.flatnonzero(off)[0])
            where = f"{path}:{int(line_of[i])}" if line_of is not None else f"{path}: row {i}"
            raise JudgmentError(
                f"{where}: grade {g[i]} is not on the scale {scale.name!r} "
                f"(allowed: {', '.join(map(str, scale.grades))})"
            )
    t = pd.DataFrame(
        {
            "topic_id": topic.astype(str).to_numpy(),
            "doc_id": doc.astype(str).to_numpy(),
            "grade": g,
        }
    )
    dup = t.duplicated(["topic_id", "doc_id"], keep=False).to_numpy()
    if dup.any():
        d = t[dup]
        n_grades = d.groupby(["topic_id", "doc_id"], sort=False)["grade"].nunique()
        conflict = n_grades[n_grades > 1]
        if len(conflict):
            top, doc_id = conflict.index[0]
            rows = np.flatnonzero(((t["topic_id"] == top) & (t["doc_id"] == doc_id)).to_numpy())
            lines = [int(line_of[r]) for r in rows] if line_of is not None else rows.tolist()
            raise JudgmentError(
                f"{path}: document {doc_id!r} is judged more than once for topic {top!r} "
                f"with different grades (lines {', '.join(map(str, lines))})"
            )
        keep = ~t.duplicated(["topic_id", "doc_id"], keep="first").to_numpy()
        t = t[keep]
        if assessor is not None:
            assessor = assessor[keep]
    t = t.reset_index(drop=True)
    table = pd.DataFrame(
        {
            "topic_id": pd.Categorical(t["topic_id"].to_numpy()),
            "doc_id": pd.Categorical(t["doc_id"].to_numpy()),
            "grade": t["grade"].to_numpy().astype(np.int16),
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


def read_qrels(path: str | os.PathLike[str], *, scale: GradeScale | None = None) -> JudgmentFrame:
    """Read TREC qrels (``topic iteration doc grade``, whitespace-separated).

    Parameters
    ----------
    path
        The qrels file.
    scale
        Grade scale the grades must be on (default: the grades observed).

    Returns
    -------
    JudgmentFrame

    Raises
    ------
    ParseError
        Wrong number of fields or a non-integer grade (with the line number).
    JudgmentError
        A grade off ``scale``, or a (topic, doc) judged twice with different grades.
    """
    p = Path(path)
    df = _read_ws(p, ["topic", "iteration", "doc", "grade"], "qrels")
    g = _numeric(df, "grade", p, integer=True)
    return _judgment_frame(df["topic"], df["doc"], g, None, path=p, scale=scale, line_of=None)


def read_judgments_csv(
    path: str | os.PathLike[str],
    *,
    scale: GradeScale | None = None,
    encoding: str | None = None,
) -> JudgmentFrame:
    """Read judgments from CSV/TSV with columns ``topic_id, doc_id, grade[, assessor]``.

    Parameters
    ----------
    path
        ``.csv`` (comma) or ``.tsv`` (tab) file with a header row.
    scale
        Grade scale the grades must be on.
    encoding
        Text encoding (default UTF-8; a BOM overrides it; gzip is read).

    Returns
    -------
    JudgmentFrame
    """
    p = Path(path)
    sep = "\t" if ".tsv" in "".join(p.suffixes).lower() else ","
    df = read_csv_table(p, sep=sep, encoding=encoding, what="judgments table")
    df = df.fillna("")
    missing = [c for c in ("topic_id", "doc_id", "grade") if c not in df.columns]
    if missing:
        raise ParseError(
            f"{p}: missing column(s) {', '.join(missing)} (found {', '.join(df.columns)}); "
            "judgment tables need topic_id, doc_id, grade[, assessor]"
        )
    g = _numeric(df, "grade", p, integer=True)
    line_of = np.arange(len(df), dtype=np.int64) + 2  # header is line 1
    return _judgment_frame(
        df["topic_id"].str.strip(),  # ids lose surrounding whitespace, as in every format
        df["doc_id"].str.strip(),
        g,
        df["assessor"] if "assessor" in df.columns else None,
        path=p,
        scale=scale,
        line_of=line_of,
    )


def read_judgments(
    path: str | os.PathLike[str], *, scale: GradeScale | None = None
) -> JudgmentFrame:
    """Read judgments: a ``.csv``/``.tsv`` table (:func:`read_judgments_csv`), else TREC qrels.

    Parameters
    ----------
    path
        The judgments file.
    scale
        Grade scale the grades must be on (default: the grades observed).
    """
    suffixes = "".join(Path(path).suffixes).lower()
    if any(s in suffixes for s in (".csv", ".tsv")):
        return read_judgments_csv(path, scale=scale)
    return read_qrels(path, scale=scale)


def read_run(path: str | os.PathLike[str]) -> pd.DataFrame:
    """Read a TREC run (``qid Q0 doc rank score tag``).

    Parameters
    ----------
    path
        The run file.

    Returns
    -------
    pandas.DataFrame
        ``query_id``, ``doc_id`` (categorical), ``rank`` (int64), ``score`` (float64),
        ``tag`` (categorical), in file order.  Order lists with
        :meth:`sessionval.measures.lists.RankedLists.from_run`.
    """
    p = Path(path)
    df = _read_ws(p, ["qid", "q0", "doc", "rank", "score", "tag"], "run")
    rank = _numeric(df, "rank", p, integer=True)
    score = _numeric(df, "score", p, integer=False)
    return pd.DataFrame(
        {
            "query_id": pd.Categorical(df["qid"].to_numpy()),
            "doc_id": pd.Categorical(df["doc"].to_numpy()),
            "rank": rank.astype(np.int64),
            "score": score,
            "tag": pd.Categorical(df["tag"].to_numpy()),
        }
    )

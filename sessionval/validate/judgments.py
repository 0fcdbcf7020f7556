"""Judgments in, a valid :class:`~sessionval.frame.JudgmentFrame` out: the one boundary.

Every road judgments come in by calls :func:`judgment_frame` (directly, or through
:func:`judgments_from_table` and :func:`judgments_from_records`): the TREC qrels and
CSV readers, the lab-table, TREC Session and CAsT readers, a DataFrame or dict given
to ``evaluate_run``, records written in code, and the generators of ``synth``.  So
the same judgments are accepted or refused the same way, with the same message, on
every road; only the location differs (``line 7`` of a file, ``row 6`` of a table,
``record 6`` of records).  The rules, each checked on whole columns:

* a grade is an integer as written (``3``, ``3.0``; not ``2.7``, not a number that
  only rounds to one), within 16 bits (:data:`GRADE_RANGE`, checked before the cast,
  which would wrap), and on the grade scale when one is given;
* a topic and a document id are present and not only whitespace; surrounding
  whitespace is removed (:mod:`sessionval.validate.ids`);
* **one grade per (topic, document)**: the same judgment twice with the *same* grade
  is kept once (qrels assembled from several assessment rounds repeat lines; trec_eval
  and ir_measures' dicts read them as one); twice with *different* grades is an error
  naming the topic, the document and every line, since which grade was meant cannot be
  told (trec_eval would keep whichever it read last, silently).

The joins (:mod:`sessionval.judgments.lookup`, :mod:`sessionval.measures.string_ids`)
trust a :class:`JudgmentFrame`: they do not check it again.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Final

import numpy as np
import numpy.typing as npt
import pandas as pd

from ..errors import InputFormatError
from ..frame import JudgmentFrame
from ..models.judgments import GradeScale
from ..problems import line_list
from .collect import ProblemCollector
from .fields import exact_integers
from .ids import checked_id_column

__all__ = [
    "GRADE_COLUMNS",
    "GRADE_RANGE",
    "TOPIC_COLUMNS",
    "check_grades",
    "judgment_frame",
    "judgments_from_records",
    "judgments_from_table",
    "pick_column",
]

#: grades are stored as 16-bit integers: the values a grade may take
GRADE_RANGE: Final = (-32768, 32767)
#: a judgments table's topic column (ir_measures' name first), and its grade column
TOPIC_COLUMNS: Final = ("query_id", "topic_id")
GRADE_COLUMNS: Final = ("relevance", "grade")

LineAt = Callable[[], npt.NDArray[Any]]


def check_grades(
    grade: pd.Series,
    problems: ProblemCollector,
    line_at: LineAt,
    *,
    scale: GradeScale | None = None,
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.bool_]]:
    """Grades as float64 (exact integers within 16 bits) and the mask of bad rows.

    A grade that is not an integer, is outside :data:`GRADE_RANGE` or is off
    ``scale`` is a problem of its row, listed with the value as given.

    Examples
    --------
    >>> p = ProblemCollector("q.txt", limit=5)
    >>> vals, bad = check_grades(pd.Series(["1", "2.5", "40000"]), p, lambda: np.arange(3) + 1)
    >>> vals[0], bad.tolist(), [str(x) for x in p.problems][:1]
    (np.float64(1.0), [False, True, True], ["q.txt:2: grade: must be an integer (got '2.5')"])
    """
    name = str(grade.name or "grade")  # the input's own column name
    vals, bad = exact_integers(
        grade,
        name,
        GRADE_RANGE,
        "grades are stored as 16-bit integers",
        problems,
        line_at,
        judgment=True,
    )
    if scale is not None:
        off = ~bad & ~np.isin(vals, np.asarray(scale.grades, dtype=np.float64))
        if off.any():
            lines, raw = line_at(), grade.to_numpy()
            for i in problems.first(off):
                problems.add_at(
                    int(lines[i]),
                    name,
                    f"not on the scale {scale.name!r} "
                    f"(allowed: {', '.join(map(str, scale.grades))})",
                    repr(str(raw[i])),
                    judgment=True,
                )
            bad = bad | off
    return vals, bad


def _one_grade_each(
    t: pd.DataFrame,
    row_index: npt.NDArray[np.intp],
    problems: ProblemCollector,
    line_at: LineAt,
    field: str,
) -> npt.NDArray[np.bool_] | None:
    """Rows to keep under the rule of one grade per (topic, document); ``None``: keep all.

    A repeat with the same grade is dropped (the first copy kept); a repeat with a
    different grade is a problem naming every line of the pair.
    """
    dup = t.duplicated(["topic_id", "doc_id"], keep=False).to_numpy()
    if not dup.any():
        return None
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
            problems.add_at(
                at[1],
                field,
                f"document {doc_id!r} is judged more than once for topic {top!r} with "
                f"different grades ({grades} on {problems.unit}s {line_list(at)})",
                judgment=True,
            )
    keep: npt.NDArray[np.bool_] = ~t.duplicated(["topic_id", "doc_id"], keep="first").to_numpy()
    return keep


def _used_only(cat: pd.Categorical) -> pd.Categorical:
    """``cat`` without the categories no row uses (rows were dropped), order kept."""
    codes = cat.codes
    if (np.bincount(codes[codes >= 0], minlength=len(cat.categories)) > 0).all():
        return cat
    return cat.remove_unused_categories()


def judgment_frame(
    topic: pd.Series,
    doc: pd.Series,
    grade: pd.Series,
    assessor: pd.Series | None = None,
    *,
    source: str,
    scale: GradeScale | None = None,
    what: str = "judgments",
    problems: ProblemCollector | None = None,
    line_at: LineAt | None = None,
) -> JudgmentFrame:
    """Judgments from their columns, every rule of the module checked, every problem located.

    Parameters
    ----------
    topic, doc, grade
        One value per judgment: ids (text, numbers or categories) and grades (text
        as read from a file, or numbers).
    assessor
        Who judged (optional; ``""`` when absent).
    source
        The file or table named in messages and kept as the frame's ``source``.
    scale
        Grade scale the grades must be on (default: one level per grade that occurs).
    what
        What the input holds, in the error's first line (``"qrels"``, ``"judgments"``).
    problems
        Where problems are collected (a reader passes its own, holding the problems
        it found first); default: the rows of a table, 0-based.
    line_at
        The line (or row) of each value, computed only when a message needs it.

    Returns
    -------
    JudgmentFrame
        One row per (topic, document), ids as sorted categoricals, grades int16.

    Raises
    ------
    JudgmentError
        Every problem is about grades: off ``scale``, outside 16 bits, or a (topic,
        document) judged twice with different grades.
    ParseError
        Any other problem (a grade that is not an integer, a missing or blank id),
        listed with the grade problems.

    Examples
    --------
    >>> jf = judgment_frame(pd.Series(["T1", "T1", "T1"]), pd.Series(["d1", "d2", "d1"]),
    ...                     pd.Series([2, 0, 2]), source="<t>")
    >>> jf.table[["doc_id", "grade"]].to_numpy().tolist(), jf.scale.grades
    ([['d1', 2], ['d2', 0]], (0, 2))
    """
    n = len(grade)
    if problems is None:
        problems = ProblemCollector(source, limit=50, unit="row", container="table")
    if line_at is None:
        line_at = lambda: np.arange(n)  # noqa: E731  (rows of a table, as iloc counts them)
    vals, bad = check_grades(grade, problems, line_at, scale=scale)
    topic_ids, no_topic = checked_id_column(topic, str(topic.name or "topic_id"), problems, line_at)
    doc_ids, no_doc = checked_id_column(doc, str(doc.name or "doc_id"), problems, line_at)
    keep_rows = ~(bad | no_topic | no_doc)
    # every grade left is an integer within int16: the cast changes no value
    t = pd.DataFrame(
        {
            "topic_id": topic_ids[keep_rows],  # categoricals: the rules below run on codes
            "doc_id": doc_ids[keep_rows],
            "grade": vals[keep_rows].astype(np.int16),
        }
    )
    if assessor is not None:
        assessor = assessor[keep_rows]
    keep = _one_grade_each(
        t, np.flatnonzero(keep_rows), problems, line_at, str(grade.name or "grade")
    )
    if keep is not None:
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
    return JudgmentFrame(table, sc, source)


def pick_column(df: pd.DataFrame, names: Sequence[str], what: str, meaning: str) -> str:
    """The first of ``names`` that ``df`` has; else a located error naming the columns."""
    for n in names:
        if n in df.columns:
            return n
    raise InputFormatError(
        f"{what}: missing column {names[0]!r} ({meaning}; found "
        f"{', '.join(map(str, df.columns)) or 'no columns'}); ir_measures' names are "
        "query_id, doc_id, score (run) and query_id, doc_id, relevance (qrels)"
    )


def judgments_from_table(
    table: pd.DataFrame, *, source: str = "<qrels table>", scale: GradeScale | None = None
) -> JudgmentFrame:
    """Judgments from a table with ir_measures' columns (or sessionval's).

    Parameters
    ----------
    table
        ``query_id`` (or ``topic_id``), ``doc_id``, ``relevance`` (or ``grade``)
        and optionally ``assessor``; other columns (``iteration``) are ignored.
    source
        Name used in messages; problems are located by row (0-based, as ``iloc``).
    scale
        Grade scale the grades must be on (default: the grades that occur).

    Returns
    -------
    JudgmentFrame

    Raises
    ------
    InputFormatError
        A column is missing.
    JudgmentError, ParseError
        As :func:`judgment_frame`.

    Examples
    --------
    >>> qrels = pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", "b"], "grade": [2, 0]})
    >>> judgments_from_table(qrels).scale.grades
    (0, 2)
    """
    q = pick_column(table, TOPIC_COLUMNS, source, "the query of each judgment")
    d = pick_column(table, ("doc_id",), source, "the judged document")
    g = pick_column(table, GRADE_COLUMNS, source, "the grade, an integer")
    return judgment_frame(
        table[q].reset_index(drop=True),
        table[d].reset_index(drop=True),
        table[g].reset_index(drop=True),
        table["assessor"].reset_index(drop=True) if "assessor" in table.columns else None,
        source=source,
        scale=scale,
    )


def judgments_from_records(
    records: Iterable[Sequence[Any]] | Mapping[str, Mapping[str, Any]],
    *,
    scale: GradeScale | None = None,
    source: str = "<records>",
) -> JudgmentFrame:
    """Judgments written in code: ``(topic, doc, grade[, assessor])`` tuples or a dict of dicts.

    Parameters
    ----------
    records
        One tuple per judgment, or ``{topic: {doc: grade}}`` (pytrec_eval's and
        ranx's qrels).
    scale
        The grade scale (default: one level per grade that occurs).
    source
        Name used in messages; problems are located by record (0-based).

    Returns
    -------
    JudgmentFrame

    Raises
    ------
    JudgmentError, ParseError
        As :func:`judgment_frame` (a grade of 2.7 is refused, not truncated).

    Examples
    --------
    >>> jf = judgments_from_records([("T1", "d1", 3), ("T1", "d2", 0)])
    >>> jf.table["grade"].tolist(), list(jf.scale.grades)
    ([3, 0], [0, 3])
    >>> judgments_from_records({"T1": {"d1": 1}}).table["doc_id"].tolist()
    ['d1']
    """
    if isinstance(records, Mapping):
        rows: list[Sequence[Any]] = [
            (t, d, g) for t, docs in records.items() for d, g in docs.items()
        ]
    else:
        rows = [tuple(r) for r in records]
    width = max((len(r) for r in rows), default=3)
    cols = [pd.Series([r[i] if i < len(r) else "" for r in rows], dtype=object) for i in range(4)]
    return judgment_frame(
        cols[0].rename("topic_id"),
        cols[1].rename("doc_id"),
        cols[2].rename("grade"),
        cols[3] if width > 3 else None,
        source=source,
        scale=scale,
        problems=ProblemCollector(source, limit=50, unit="record", container="records"),
    )

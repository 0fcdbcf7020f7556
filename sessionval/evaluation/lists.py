"""Evaluate ranked lists with registered measures: per-query values, means and counts.

:func:`evaluate_lists` evaluates :class:`~sessionval.measures.lists.RankedLists`;
:func:`evaluate_run` is the one call from a run and qrels (pandas or Arrow tables with
ir_measures' column names, TREC files, or pytrec_eval's dicts) with trec_eval's
defaults, so its numbers are trec_eval's.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any, Final, Literal, TypeAlias

import numpy as np
import numpy.typing as npt
import pandas as pd

from .._types import FloatArray
from ..errors import (
    InputFormatError,
    MeasureSpecError,
    SessionvalError,
    memory_advice,
    phase,
)
from ..frame import JudgmentFrame
from ..io.trec import read_judgments, read_run, run_line_numbers
from ..judgments.gains import NegativePolicy
from ..judgments.unjudged import UnjudgedPolicy
from ..kernels.blocks import for_blocks
from ..measures.lists import EmptyPolicy, RankedLists, TieBreak
from ..measures.registry import Measure, parse_measures
from ..measures.run_lists import beside, ranked_lists
from ..problems import line_list
from ..progress import ProgressLike, as_progress, counted
from ..validate.collect import ProblemCollector
from ..validate.ids import spelling_notes
from ..validate.judgments import (
    GRADE_COLUMNS,
    TOPIC_COLUMNS,
    check_grades,
    judgments_from_table,
    pick_column,
)
from ..validate.list_rules import repeated_documents
from .engine import ItemMapper
from .inputs import nested_table, run_and_qrels
from .single import SingleEvaluation

__all__ = [
    "DEFAULT_RUN_MEASURES",
    "RUN_SCORING",
    "QrelsInput",
    "ReadQrels",
    "RunInput",
    "RunScoring",
    "SingleEvaluation",
    "evaluate_lists",
    "evaluate_run",
    "evaluate_table",
    "judgments_from_table",
    "load_qrels",
    "located_run_error",
]

RunInput: TypeAlias = (
    "pd.DataFrame | Any | str | os.PathLike[str] | Mapping[str, Mapping[str, float]]"
)
"""A run: a pandas or Arrow table (``query_id, doc_id, score``), a TREC run file, or
pytrec_eval's ``{query: {doc: score}}``."""

QrelsInput: TypeAlias = (
    "JudgmentFrame | pd.DataFrame | Any | str | os.PathLike[str] | Mapping[str, Mapping[str, int]]"
)
"""Qrels: a :class:`JudgmentFrame`, a pandas or Arrow table (``query_id, doc_id,
relevance``; ``grade`` and ``topic_id`` accepted), a TREC qrels or CSV file, or
pytrec_eval's ``{query: {doc: grade}}``."""

DEFAULT_RUN_MEASURES: Final[tuple[str, ...]] = ("AP", "nDCG", "nDCG@10", "P@10", "RR", "Bpref")
"""Measures of ``sessionval evaluate`` and :func:`evaluate_run` when none are named."""

# what helps when a read runs out of memory (the parsed tables take about the file's size)
_QRELS_ADVICE: Final = memory_advice("keep only the judgments of the run's topics in the qrels")
_RUN_ADVICE: Final = memory_advice("a run of fewer lines (e.g. the top 1000 of each topic)")


_MEASURES_ON_CORES_ROWS: Final = 1 << 20
"""Rows of the lists from which :func:`evaluate_lists` computes its measures on the cores."""


def _compute(m: Measure, *, lists: RankedLists, empty: EmptyPolicy) -> FloatArray:
    """One measure on every list (the unit a mapper runs)."""
    return m.compute(lists, empty=empty)


def evaluate_lists(
    lists: RankedLists,
    measures: Sequence[str | Measure],
    *,
    empty: EmptyPolicy = "nan",
    mapper: ItemMapper | None = None,
    progress: ProgressLike = None,
) -> SingleEvaluation:
    """Compute every measure for every list (one vectorised pass per measure).

    Parameters
    ----------
    lists
        The ranked lists (:meth:`RankedLists.from_run`, :meth:`RankedLists.from_frame`).
    measures
        Measure strings in the grammar (``"nDCG@10"``) or :class:`Measure` objects.
    empty
        ``"nan"`` (default): a normalised measure is NaN for a list with an empty recall
        base; ``"zero"``: 0, as trec_eval.
    mapper
        Computes the measures, one item each (an engine's ``map_items``: a
        :class:`~sessionval.evaluation.dask_engine.DaskEngine` runs them on its
        workers); default: here, one after another, or on the process's cores
        (:func:`~sessionval.kernels.blocks.for_blocks`) when the lists hold a million
        rows or more.  The values are the same.
    progress
        Told the measures computed (:class:`~sessionval.progress.Progress`; with a
        ``mapper`` or on the cores, all of them when they return).

    Returns
    -------
    SingleEvaluation

    Examples
    --------
    >>> lists = RankedLists.from_arrays(["q1", "q2"], [0, 2, 3], [2, 0, 0])
    >>> ev = evaluate_lists(lists, ["RR", "nDCG@2"])
    >>> ev.per_query()
      query_id   RR  nDCG@2
    0       q1  1.0     1.0
    1       q2  0.0     NaN
    >>> ev.n_empty_recall_base
    1
    """
    if empty not in ("nan", "zero"):
        raise MeasureSpecError(f"empty={empty!r} unknown; use 'nan' or 'zero'")
    ms = tuple(parse_measures(measures))
    if not ms:
        raise MeasureSpecError("no measure given")
    sessions = [repr(m) for m in ms if m.scope != "query"]
    if sessions:
        raise MeasureSpecError(
            f"{', '.join(sessions)}: session measure(s) need sessions; ranked lists take "
            "single-query measures (use sessionval.evaluate on a study for session measures)"
        )
    n = lists.n
    fn = partial(_compute, lists=lists, empty=empty)
    with counted(progress, f"evaluating {n} queries", len(ms), "measures") as shown:
        if mapper is not None:
            values = mapper.map_items(fn, ms)
            shown.advance(len(ms))
        elif len(ms) > 1 and int(lists.offsets[-1]) >= _MEASURES_ON_CORES_ROWS:
            # the measures are independent passes that release the GIL: on the cores
            out: list[FloatArray] = [np.zeros(0)] * len(ms)

            def one(i: int, _: int) -> None:
                out[i] = fn(ms[i])

            for_blocks(one, list(range(len(ms) + 1)))
            values = out
            shown.advance(len(ms))
        else:
            values = []
            for m in ms:
                values.append(fn(m))
                shown.advance()
    qids = np.asarray(lists.query_ids, dtype=object)
    # query-major order (all measures of a query together), as trec_eval -q prints:
    # the (query, measure) matrix of values read row by row
    per_query = pd.DataFrame(
        {
            "query_id": np.repeat(qids, len(ms)),
            "measure": np.tile(np.array([repr(m) for m in ms], dtype=object), n),
            "value": np.stack(values, axis=1).ravel(),
        }
    )
    return SingleEvaluation(
        per_query,
        ms,
        n,
        int(np.count_nonzero(lists.n_relevant() == 0)),
        lists.n_negative,
        lists.n_unjudged,
        lists.n_skipped,
    )


@dataclass(frozen=True)
class RunScoring:
    """How a run becomes ranked lists and is scored: the options of evaluate, compare, meta.

    The one declaration of their defaults, trec_eval's (ties by document id
    descending, judged topics without relevant documents scored 0, topics a run lacks
    left out), so every command that scores runs gives trec_eval's numbers.
    """

    ties: TieBreak = "trec_eval"
    complete: bool = False
    empty: EmptyPolicy = "zero"
    negative: NegativePolicy = "clip"
    unjudged: UnjudgedPolicy = "zero"


RUN_SCORING: Final[RunScoring] = RunScoring()
"""The default scoring of runs (:class:`RunScoring`)."""


def evaluate_run(
    run: RunInput,
    qrels: QrelsInput,
    measures: Sequence[str | Measure] | str | Measure = DEFAULT_RUN_MEASURES,
    *,
    ties: TieBreak = RUN_SCORING.ties,
    complete: bool = RUN_SCORING.complete,
    empty: EmptyPolicy = RUN_SCORING.empty,
    negative: NegativePolicy = RUN_SCORING.negative,
    unjudged: UnjudgedPolicy = RUN_SCORING.unjudged,
    mapper: ItemMapper | None = None,
    encoding: str | None = None,
    progress: ProgressLike = None,
) -> SingleEvaluation:
    """Evaluate a run against qrels in one call, with trec_eval's defaults.

    The single-query counterpart of ir_measures' ``calc_aggregate`` / ``iter_calc``
    and ranx's ``evaluate``: the defaults are trec_eval's (ties broken by document id
    descending, judged topics without relevant documents scored 0, run topics
    without judgments skipped), so the means are trec_eval's.

    Parameters
    ----------
    run
        A pandas DataFrame or Arrow table with ir_measures' columns ``query_id``,
        ``doc_id``, ``score`` (ids as strings, categoricals or numbers); a TREC run
        file (``qid Q0 doc rank score tag``); pytrec_eval's and ranx's
        ``{query: {doc: score}}``; or an iterable of ir_measures' ``ScoredDoc``.
    qrels
        A table with ``query_id``, ``doc_id``, ``relevance`` (ir_measures; ``grade``
        and ``topic_id`` are accepted too; integer grades); a TREC qrels file or a
        CSV/TSV judgments file; pytrec_eval's ``{query: {doc: grade}}``; an iterable
        of named tuples (ir_datasets' ``qrels_iter()``); or a
        :class:`~sessionval.frame.JudgmentFrame`.  Given first, as ir_measures and
        ranx take them (``evaluate_run(qrels, run)``), the qrels are recognised by
        what they hold (:func:`sessionval.evaluation.inputs.run_and_qrels`).
    measures
        Measure names in the grammar (``"nDCG@10"``), trec_eval's names (``"map"``,
        ``"ndcg_cut.10"``, ``"P_10"``; ``"P"``, ``"P.5,10"`` and ``"all_trec"`` are the
        lists trec_eval prints), ir_measures' (``"ndcg@10"``, ``"SetP"``,
        ``"IPrec@0.5"``) or ranx's (``"hit_rate@5"``); a single name is accepted.
        Rows are named by the canonical name (``P@5``); ``sessionval evaluate``
        prints trec_eval's names.
    ties
        Order of tied scores: ``"trec_eval"`` (doc id descending, default),
        ``"doc_id"`` (ascending) or ``"input"`` (row order).
    complete
        Judged topics the run lacks count as empty lists (trec_eval ``-c``).
    empty
        ``"zero"`` (trec_eval) or ``"nan"`` (left out of the means) for normalised
        measures on a topic without relevant documents.
    negative, unjudged
        Negative-grade and unjudged-document policies
        (:mod:`sessionval.judgments.gains`, :mod:`sessionval.judgments.unjudged`).
    mapper
        Where the measures run (one task each; e.g. a Dask engine); default here.
    encoding
        Text encoding of a run or qrels given as a file (default UTF-8; a
        byte-order mark wins; gzip is read).
    progress
        Told each phase (a qrels or run file's lines as they are read, the run rows
        ranked into lists, the measures computed): a
        :class:`~sessionval.progress.Progress`, e.g. ``sessionval evaluate``'s bar.

    Returns
    -------
    SingleEvaluation
        ``per_query()`` one row per query and a column per measure, ``long()`` the
        tidy table ``query_id, measure, value``; ``means`` the mean per measure.

    Raises
    ------
    InputFormatError
        A table lacks a column, a file is missing, an input is of an unknown kind.
    JudgmentError
        A grade is not an integer, or a (query, document) is judged twice.
    MeasureSpecError
        An unknown measure or option.

    Examples
    --------
    >>> run = pd.DataFrame({"query_id": ["1", "1", "2"], "doc_id": ["a", "b", "a"],
    ...                     "score": [2.0, 1.0, 1.0]})
    >>> qrels = pd.DataFrame({"query_id": ["1", "1", "2"], "doc_id": ["b", "c", "a"],
    ...                       "relevance": [1, 2, 0]})
    >>> ev = evaluate_run(run, qrels, ["nDCG@10", "P@1", "map"])
    >>> ev.long().head(3)
      query_id  measure     value
    0        1  nDCG@10  0.239812
    1        1      P@1  0.000000
    2        1       AP  0.250000
    >>> ev.means["AP"]
    0.125
    """
    ms = [measures] if isinstance(measures, str | Measure) else list(measures)
    parse_measures(ms)  # a bad name fails before any data is read
    run, qrels = run_and_qrels(run, qrels)  # ir_measures' and ranx's order works too
    # each read is its own phase: running out of memory names the file being read
    shown = as_progress(progress)
    judged = load_qrels(qrels, encoding, shown)  # a file's lines counted as they are read
    with _reading(run, "run", _RUN_ADVICE):
        table = _run_table(run, encoding, shown)
    locate = None
    if _is_path(run):
        path = Path(run)

        def locate(exc: SessionvalError) -> SessionvalError:
            return located_run_error(
                exc,
                path,
                table,
                lambda rows: run_line_numbers(path, encoding=encoding)[rows],
                judged.source,
            )

    scoring = RunScoring(ties, complete, empty, negative, unjudged)
    return evaluate_table(table, judged, ms, scoring, mapper=mapper, progress=shown, locate=locate)


def load_qrels(
    qrels: QrelsInput, encoding: str | None = None, progress: ProgressLike = None
) -> ReadQrels:
    """The qrels of :func:`evaluate_run` read (a file in a phase of its own), grades checked."""
    with _reading(qrels, "qrels", _QRELS_ADVICE):
        return _qrels(qrels, encoding, progress)


def evaluate_table(
    table: pd.DataFrame,
    judged: ReadQrels,
    measures: Sequence[str | Measure],
    scoring: RunScoring = RUN_SCORING,
    *,
    mapper: ItemMapper | None = None,
    progress: ProgressLike = None,
    locate: Callable[[SessionvalError], SessionvalError] | None = None,
) -> SingleEvaluation:
    """A run table (``query_id, doc_id, score``) scored against read qrels.

    The one scoring of :func:`evaluate_run`, also run on each partition of whole
    queries of a run scored on a cluster
    (:mod:`sessionval.evaluation.distributed_runs`).  ``locate`` turns a problem
    of the run found while ranking (a document listed twice) into one naming the
    file and lines.
    """
    shown = as_progress(progress)
    try:
        with counted(shown, "ranking lists", len(table)):
            lists = _lists(table, judged, scoring)
            shown.advance(len(table))
    except SessionvalError as exc:
        if locate is None or isinstance(exc, MeasureSpecError):
            raise
        raise locate(exc) from None
    # the ids' spelling notes on the second thread while the measures are computed
    notes_of = beside(partial(spelling_notes, judged.table, table["doc_id"]))
    ev = evaluate_lists(lists, measures, empty=scoring.empty, mapper=mapper, progress=shown)
    notes = notes_of()
    return replace(ev, notes=tuple(notes)) if notes else ev


def located_run_error(
    exc: SessionvalError,
    run: Path,
    table: pd.DataFrame,
    lines: Callable[[npt.NDArray[np.intp]], npt.NDArray[np.int64]],
    qrels: str | None = None,
) -> SessionvalError:
    """``exc`` about the run read from ``run``, with the file and, for repeats, every line.

    ``lines`` gives the file's line of rows of ``table`` (asked only for repeats);
    a message already naming the run or the qrels file ``qrels`` is kept as it is.
    """
    dup = _repeated_pairs(table)
    if not dup.any():
        text = str(exc)  # a message naming the qrels file is about the qrels: left as it is
        named = str(run) in text or (qrels is not None and qrels in text)
        return type(exc)(text if named else f"{run}: {text}")
    rows = np.flatnonzero(dup)
    keys = pd.DataFrame(
        {
            "q": table["query_id"].to_numpy()[rows],
            "d": table["doc_id"].to_numpy()[rows],
            "line": lines(rows),
        }
    )
    groups = keys.groupby(["q", "d"], sort=False, observed=True)["line"].agg(list)
    limit = 50
    msgs = [
        f"  {run}:{at[1]}: document {d!r} appears again for query {q!r} "
        f"(lines {line_list(at)}); a document may appear once per ranked list"
        for (q, d), at in zip(groups.index.tolist()[:limit], groups.tolist()[:limit], strict=True)
    ]
    more = f" (the first {limit} are listed)" if len(groups) > limit else ""
    return InputFormatError(
        f"{run}: {len(groups)} repeated document(s) in the run{more}:\n" + "\n".join(msgs)
    )


def _repeated_pairs(table: pd.DataFrame) -> npt.NDArray[np.bool_]:
    """Rows of a (query, document) listed more than once in the run, every copy marked.

    The repeats are found by the one detection of :mod:`sessionval.validate.list_rules`
    on the rows grouped by query.
    """
    q, _ = pd.factorize(table["query_id"])
    d, d_ids = pd.factorize(table["doc_id"])
    order = np.argsort(q, kind="stable")
    later = order[repeated_documents(q[order], d[order])]
    key = q.astype(np.int64) * max(len(d_ids), 1) + d
    marked: npt.NDArray[np.bool_] = np.isin(key, key[later])
    return marked


def _lists(table: pd.DataFrame, judged: ReadQrels, scoring: RunScoring) -> RankedLists:
    """The ranked lists of the run table against the judgments (the join chosen by the data)."""
    missing: Literal["skip", "empty"] = "empty" if scoring.complete else "skip"
    return ranked_lists(
        table,
        judged,
        ties=scoring.ties,
        missing=missing,
        negative=scoring.negative,
        unjudged=scoring.unjudged,
    )


def _reading(source: object, what: str, advice: str) -> AbstractContextManager[None]:
    """The phase of reading ``what`` (named by its file when it is one)."""
    name = f"the {what} file {source}" if _is_path(source) else f"the {what} table"
    return phase(f"reading {name}", advice=advice)


def _is_path(x: object) -> bool:
    return isinstance(x, str | os.PathLike)


def _existing(path: str | os.PathLike[str], what: str) -> Path:
    p = Path(path)
    if not p.is_file():
        raise InputFormatError(f"{what} file {str(p)!r} does not exist")
    return p


def _as_pandas(table: object, what: str) -> pd.DataFrame:
    """A pandas DataFrame from a pandas or Arrow table (Arrow strings stay Arrow-backed)."""
    if isinstance(table, pd.DataFrame):
        return table
    to_pandas = getattr(table, "to_pandas", None)
    if callable(to_pandas):  # pyarrow.Table / RecordBatch (and polars)
        out = to_pandas()
        if isinstance(out, pd.DataFrame):
            return out
    raise InputFormatError(
        f"{what}: expected a pandas DataFrame, an Arrow table, a file path or a dict of "
        f"dicts, got {type(table).__name__}"
    )


def _run_table(
    run: RunInput, encoding: str | None = None, progress: ProgressLike = None
) -> pd.DataFrame:
    """The run as ``query_id, doc_id, score`` columns (ids as given: str or categorical)."""
    if _is_path(run):
        path = _existing(run, "run")  # type: ignore[arg-type]
        return read_run(path, encoding=encoding, progress=progress)
    if isinstance(run, Mapping):
        table = nested_table(run, "score")
        return table.astype({"score": np.float64})
    df = _as_pandas(run, "run")
    q = pick_column(df, ("query_id",), "run", "the query of each row")
    d = pick_column(df, ("doc_id",), "run", "the document of each row")
    sc = pick_column(df, ("score",), "run", "the score the list is ordered by")
    return pd.DataFrame({"query_id": df[q], "doc_id": df[d], "score": df[sc]}, copy=False)


@dataclass(frozen=True)
class _QrelsTable:
    """A qrels table with ids as given and checked grades: ``query_id, doc_id, grade``.

    The 64-bit key road of the join (chosen by
    :func:`~sessionval.measures.run_lists.ranked_lists`) reads the ids as they are;
    whenever it cannot (ids that are not plain ASCII text, a missing id, a (topic,
    document) judged twice) the table becomes judgments through the one boundary,
    :func:`~sessionval.validate.judgments.judgments_from_table`, which decides and
    says where.
    """

    table: pd.DataFrame
    source: str
    original: pd.DataFrame

    @classmethod
    def check(cls, table: pd.DataFrame, source: str) -> _QrelsTable:
        """The grades checked as the boundary checks them (every bad row listed)."""
        q = pick_column(table, TOPIC_COLUMNS, source, "the query of each judgment")
        d = pick_column(table, ("doc_id",), source, "the judged document")
        g = pick_column(table, GRADE_COLUMNS, source, "the grade, an integer")
        problems = ProblemCollector(source, limit=50, unit="row", container="table")
        grade, _ = check_grades(table[g], problems, lambda: np.arange(len(table)))
        problems.raise_if_any("judgments")
        out = pd.DataFrame({"query_id": table[q], "doc_id": table[d], "grade": grade}, copy=False)
        return cls(out, source, table)

    def judgments(self) -> JudgmentFrame:
        """The table through the boundary (ids dictionary-encoded, every rule checked)."""
        return judgments_from_table(self.original, source=self.source)


ReadQrels: TypeAlias = "JudgmentFrame | _QrelsTable"
"""Qrels read by :func:`load_qrels`: judgments, or a table with checked grades."""


def _qrels(
    qrels: QrelsInput, encoding: str | None = None, progress: ProgressLike = None
) -> ReadQrels:
    if isinstance(qrels, JudgmentFrame):
        return qrels
    if _is_path(qrels):
        path = _existing(qrels, "qrels")  # type: ignore[arg-type]
        return read_judgments(path, encoding=encoding, progress=progress)
    if isinstance(qrels, Mapping):
        return _QrelsTable.check(nested_table(qrels, "relevance"), "<dict>")
    return _QrelsTable.check(_as_pandas(qrels, "qrels"), "<qrels table>")

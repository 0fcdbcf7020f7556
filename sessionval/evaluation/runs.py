"""Several runs scored against one set of judgments: the score table of the statistics.

:func:`score_runs` evaluates every run with the same measures and options through
:func:`~sessionval.evaluation.lists.evaluate_run` (the road and the defaults of
``sessionval evaluate``: trec_eval's), and stacks the per-topic scores into the long
table the statistics take (``system, topic, measure, value``): the input of
``sessionval compare`` and ``meta`` (:mod:`sessionval.workflow.runs` reads the run
files) and of :func:`sessionval.analysis.compare.compare_systems` given qrels and runs.
A topic a run does not answer is left out of that run's rows (trec_eval's default),
or scored as an empty list with ``complete=True`` (trec_eval ``-c``); a normalised
measure that is undefined on a topic (no relevant document, ``empty="nan"``) leaves
the topic out of that measure.  :func:`as_judgments` reads qrels of any shape the
ecosystem holds.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from typing import Final

import numpy as np
import pandas as pd

from ..errors import InputFormatError, JudgmentError
from ..frame import JudgmentFrame
from ..io.trec import read_judgments
from ..measures.registry import Measure, parse_measures
from ..progress import ProgressLike, counted
from .inputs import nested_table, records_table
from .lists import QrelsInput, RunInput, RunScoring, evaluate_run, judgments_from_table

__all__ = [
    "DEFAULT_COMPARE_MEASURES",
    "as_judgments",
    "score_runs",
]

#: the measures of ``sessionval compare`` and of ``compare_systems`` on runs, by default
DEFAULT_COMPARE_MEASURES: Final[tuple[str, ...]] = ("nDCG@10", "AP")


def as_judgments(qrels: QrelsInput, *, encoding: str | None = None) -> JudgmentFrame:
    """Any qrels :func:`~sessionval.evaluation.lists.evaluate_run` takes, as judgments.

    A :class:`~sessionval.frame.JudgmentFrame` as it is; a TREC qrels or CSV file; a
    table with ir_measures' columns; ``{query: {doc: grade}}``; an iterable of named
    tuples (ir_datasets' ``qrels_iter()``).

    Raises
    ------
    InputFormatError
        Something else.
    """
    if isinstance(qrels, JudgmentFrame):
        return qrels
    if isinstance(qrels, str | os.PathLike):
        return read_judgments(qrels, encoding=encoding)
    if isinstance(qrels, Mapping):
        return judgments_from_table(nested_table(qrels, "relevance"), source="<dict>")
    table = records_table(qrels)
    if table is not None:
        return judgments_from_table(table, source="<qrels records>")
    to_pandas = getattr(qrels, "to_pandas", None)
    frame = to_pandas() if callable(to_pandas) else qrels
    if not isinstance(frame, pd.DataFrame):
        raise InputFormatError(
            "qrels: expected a qrels file, a DataFrame, a dict of dicts or named tuples, "
            f"got {type(qrels).__name__}"
        )
    return judgments_from_table(frame)


def score_runs(
    runs: Mapping[str, RunInput],
    judgments: JudgmentFrame,
    measures: Sequence[str | Measure],
    *,
    scoring: RunScoring | None = None,
    progress: ProgressLike = None,
) -> pd.DataFrame:
    """Per-topic scores of every run: ``system, topic, measure, value``.

    Parameters
    ----------
    runs
        Runs by name, in display order: tables (:func:`sessionval.io.trec.read_run`), or
        anything else :func:`~sessionval.evaluation.lists.evaluate_run` reads.
    judgments
        The reference judgments.
    measures
        Single-query measures in the grammar (``"nDCG@10"``).
    scoring
        Tie-break, ``-c``, empty recall bases, negative grades and unjudged documents.
    progress
        Told the runs scored (:class:`~sessionval.progress.Progress`).

    Returns
    -------
    pandas.DataFrame
        One row per run × topic × measure with a defined value; ``system`` and
        ``measure`` are categorical in the order given, ``topic`` is a string;
        ``attrs["aggregate"]`` maps each measure to how it summarises over topics
        (``MeasureDef.aggregate``).
    """
    sc = scoring or RunScoring()
    ms = parse_measures(list(measures))
    names = [repr(m) for m in ms]
    parts = []
    with counted(progress, f"scoring {len(runs)} runs", len(runs), "runs") as shown:
        for name, table in runs.items():
            parts.append(_scored(name, table, judgments, ms, sc))
            shown.advance()
    if not parts:
        raise InputFormatError("no run to score")
    out = pd.concat(parts, ignore_index=True)
    out["system"] = pd.Categorical(out["system"], categories=list(runs))
    out["measure"] = pd.Categorical(out["measure"], categories=names)
    # how each measure summarises over topics (analysis.system_means reads it)
    out.attrs["aggregate"] = {repr(m): m.definition.aggregate for m in ms}
    return out


def _scored(
    name: str, table: RunInput, judgments: JudgmentFrame, ms: Sequence[Measure], sc: RunScoring
) -> pd.DataFrame:
    """One run's rows of :func:`score_runs`: ``system, topic, measure, value``."""
    try:
        # evaluate_run: the one road from a run to scores, so the numbers are evaluate's
        pq = evaluate_run(table, judgments, ms, **asdict(sc)).long()
    except (InputFormatError, JudgmentError) as exc:
        # name the run's file (read_run records it) unless the message is about the qrels
        where = str(getattr(table, "attrs", {}).get("source", f"run {name!r}"))
        text = str(exc)
        if where in text or judgments.source in text:
            raise
        raise type(exc)(f"{where}: {text}") from None
    pq = pq[~np.isnan(pq["value"].to_numpy(dtype=np.float64))]
    return pd.DataFrame(
        {
            "system": name,
            "topic": pq["query_id"].astype(str).to_numpy(),
            "measure": pq["measure"].to_numpy(),
            "value": pq["value"].to_numpy(dtype=np.float64),
        }
    )

"""Several TREC runs scored against one set of judgments: the input of ``compare`` and ``meta``.

:func:`load_runs` reads run files (the run's name is its file name without ``.run``);
:func:`score_runs` evaluates every run with the same measures and options through
:func:`~sessionval.evaluation.lists.evaluate_run` (the road and the defaults of
``sessionval evaluate``: trec_eval's), and stacks the per-topic scores into the long
table the statistics take (``system, topic, measure, value``).  A topic a run does
not answer is left out of that run's rows (trec_eval's default), or scored as an
empty list with ``complete=True`` (trec_eval ``-c``); a normalised measure that is
undefined on a topic (no relevant document, ``empty="nan"``) leaves the topic out of
that measure.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import InputFormatError, JudgmentError
from ..evaluation.lists import RunScoring, evaluate_run
from ..frame import JudgmentFrame
from ..io.trec import read_run
from ..measures.registry import Measure, parse_measures
from ..output.comparison import CONTROL_CHARACTERS, visible_escape

__all__ = [
    "RunScoring",  # declared with evaluate_run, re-exported for the jobs that score runs
    "load_runs",
    "run_name",
    "score_runs",
]


def run_name(path: str | os.PathLike[str]) -> str:
    """The name of a run: its file name without a ``.run`` suffix.

    The file name, not the tag column of the run's lines: the tag is often the same
    placeholder in every run of an experiment, and it may differ between lines.

    Raises
    ------
    InputFormatError
        The name holds a control character (a tab, a line break, ...): it would break
        every table the run is named in, so the file must be renamed.

    Examples
    --------
    >>> run_name("runs/org_convdr.run"), run_name("bm25.txt")
    ('org_convdr', 'bm25.txt')
    """
    name = Path(path).name
    bad = CONTROL_CHARACTERS.search(name)
    if bad:
        char = visible_escape(bad.group())
        raise InputFormatError(
            f"{os.fspath(path)!r}: the run's name (its file name) holds a control character "
            f"({char}, at character {bad.start() + 1}), which no table of runs can show; "
            "rename the file"
        )
    return name[: -len(".run")] if name.endswith(".run") and len(name) > 4 else name


def load_runs(
    paths: Sequence[str | os.PathLike[str]], *, encoding: str | None = None
) -> dict[str, pd.DataFrame]:
    """Read TREC runs, keyed by :func:`run_name`, in the order given (text ``encoding``).

    Raises
    ------
    InputFormatError
        A file name holds a control character, or two files give the same run name.
    """
    names = [run_name(p) for p in paths]  # every name checked before any file is read
    runs: dict[str, pd.DataFrame] = {}
    for p, name in zip(paths, names, strict=True):
        if name in runs:
            raise InputFormatError(f"two runs are named {name!r} ({p}); rename one file")
        runs[name] = read_run(p, encoding=encoding)
    return runs


def score_runs(
    runs: Mapping[str, pd.DataFrame],
    judgments: JudgmentFrame,
    measures: Sequence[str | Measure],
    *,
    scoring: RunScoring | None = None,
) -> pd.DataFrame:
    """Per-topic scores of every run: ``system, topic, measure, value``.

    Parameters
    ----------
    runs
        Run tables (:func:`sessionval.io.trec.read_run`) by name, in display order.
    judgments
        The reference judgments.
    measures
        Single-query measures in the grammar (``"nDCG@10"``).
    scoring
        Tie-break, ``-c``, empty recall bases, negative grades and unjudged documents.

    Returns
    -------
    pandas.DataFrame
        One row per run × topic × measure with a defined value; ``system`` and
        ``measure`` are categorical in the order given, ``topic`` is a string.
    """
    sc = scoring or RunScoring()
    ms = parse_measures(list(measures))
    names = [repr(m) for m in ms]
    parts = []
    for name, table in runs.items():
        try:
            # evaluate_run: the one road from a run to scores, so the numbers are evaluate's
            pq = evaluate_run(table, judgments, ms, **asdict(sc)).per_query
        except (InputFormatError, JudgmentError) as exc:
            # name the run's file (read_run records it) unless the message is about the qrels
            where = str(table.attrs.get("source", f"run {name!r}"))
            text = str(exc)
            if where in text or judgments.source in text:
                raise
            raise type(exc)(f"{where}: {text}") from None
        pq = pq[~np.isnan(pq["value"].to_numpy(dtype=np.float64))]
        parts.append(
            pd.DataFrame(
                {
                    "system": name,
                    "topic": pq["query_id"].astype(str).to_numpy(),
                    "measure": pq["measure"].to_numpy(),
                    "value": pq["value"].to_numpy(dtype=np.float64),
                }
            )
        )
    if not parts:
        raise InputFormatError("no run to score")
    out = pd.concat(parts, ignore_index=True)
    out["system"] = pd.Categorical(out["system"], categories=list(runs))
    out["measure"] = pd.Categorical(out["measure"], categories=names)
    return out

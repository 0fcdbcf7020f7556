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
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from ..errors import InputFormatError
from ..evaluation.lists import RunScoring
from ..evaluation.runs import score_runs
from ..io.trec import read_run
from ..output.comparison import CONTROL_CHARACTERS, visible_escape
from ..progress import ProgressLike, counted

__all__ = [
    "RunScoring",  # declared with evaluate_run, re-exported for the jobs that score runs
    "load_runs",
    "run_name",
    "score_runs",  # moved to evaluation.runs (compare_systems scores runs too)
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
    paths: Sequence[str | os.PathLike[str]],
    *,
    encoding: str | None = None,
    progress: ProgressLike = None,
) -> dict[str, pd.DataFrame]:
    """Read TREC runs, keyed by :func:`run_name`, in the order given (text ``encoding``).

    ``progress`` is told the runs read (:class:`~sessionval.progress.Progress`).

    Raises
    ------
    InputFormatError
        A file name holds a control character, or two files give the same run name.
    """
    names = [run_name(p) for p in paths]  # every name checked before any file is read
    runs: dict[str, pd.DataFrame] = {}
    with counted(progress, f"reading {len(paths)} runs", len(paths), "runs") as shown:
        for p, name in zip(paths, names, strict=True):
            if name in runs:
                raise InputFormatError(f"two runs are named {name!r} ({p}); rename one file")
            runs[name] = read_run(p, encoding=encoding)
            shown.advance()
    return runs

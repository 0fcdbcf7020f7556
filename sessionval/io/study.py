"""Load a whole study, in any supported format: :func:`load_study`.

``load_study("sample_logs/", qrels="sample_logs/qrels.txt")`` is the one call a
user needs: it recognises the input (the toolkit's study folder, a flat table,
TREC Session XML, lab tables, TREC runs; see :data:`sessionval.io.formats.FORMATS`),
validates everything and returns a :class:`~sessionval.frame.LoadedStudy` with
the columnar frame, the judgments and the load report.

The readers of the toolkit's own layout live in :mod:`sessionval.io.toolkit`
(re-exported here, where they have always been importable from).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from ..frame import LoadedStudy
from ..problems import Mode
from .formats import load_input
from .header import read_study_header
from .toolkit import SESSION_FILES, load_judgments, load_sessions

__all__ = [
    "SESSION_FILES",
    "load_judgments",
    "load_sessions",
    "load_study",
    "read_study_header",
]


def load_study(
    path: str | os.PathLike[str],
    *,
    qrels: str | os.PathLike[str] | None = None,
    header: str | os.PathLike[str] | None = None,
    mode: Mode = "strict",
    max_problems: int = 50,
    progress: Callable[[str], None] | None = None,
    max_rank: int | None = None,
    fmt: str = "auto",
    **options: Any,
) -> LoadedStudy:
    """Load and validate a study: a folder or a file in any supported format.

    Parameters
    ----------
    path
        A folder with ``sessions.jsonl`` (or ``.parquet``/``.csv``) and optionally
        ``study.json``; one session file; or an input of another format
        (``ts2013.xml``, a folder of lab tables, ``*.run`` files).
    qrels
        Reference judgments (TREC qrels or CSV). Without them only the log is checked.
        A CSV whose columns have other names is read with ``qrels_map=``
        (``"topic=QueryId,doc=DocNo,grade=Rel"``; toolkit layout, flat tables,
        partitions).
    header
        A ``study.json`` elsewhere than beside the sessions (toolkit layout).
    mode
        ``"strict"`` (default) fails with every problem found (up to
        ``max_problems``); ``"lenient"`` rejects the bad sessions, keeps the rest and
        lists each rejected session with its reasons in ``report.rejects``.
    max_problems
        Limit of problems listed in strict mode.
    progress
        Called with each loading phase's name (:data:`sessionval.validate.flat.LOAD_PHASES`).
    max_rank
        Read only results down to this rank (see :func:`load_sessions`).
    fmt
        The input format (a name of :data:`~sessionval.io.formats.FORMATS`), or
        ``"auto"`` (default) to recognise it.
    **options
        Options of that format (e.g. ``topic_map=`` for TREC Session XML).

    Returns
    -------
    LoadedStudy
    """
    return load_input(
        path,
        fmt,
        qrels=qrels,
        mode=mode,
        max_problems=max_problems,
        progress=progress,
        header=header,
        max_rank=max_rank,
        **options,
    )

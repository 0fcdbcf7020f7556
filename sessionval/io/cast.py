"""TREC CAsT: a folder of runs over conversational topics, read as sessions.

In conversational collections a topic is a conversation and each turn a query.  A
run file ranks documents per turn id ``<topic>_<turn>``; :func:`load_cast` turns
every (run, topic) pair into one session whose queries are the topic's turns in
turn order and whose results are the run's top ``depth`` for that turn
(:mod:`sessionval.io.runs_as_sessions`, with the turn-id rule :data:`CAST_TURN_IDS`).
Judgments are per turn: ``queries["qrels_id"]`` is the turn id and the qrels'
``topic_id`` is the same turn id, so each turn's ideal list is built from that turn's
judged pool.  The topics JSON (turn texts and every turn of a topic) is read by
:mod:`sessionval.io.cast_topics`.

What is checked (strict: one error listing every problem; lenient: the run lines
concerned are dropped and listed): a turn id that is not ``<topic>_<turn>`` with a
turn number of at most 18 digits; run tags that differ only by whitespace; a turn
missing from the topics file; a topics file of the wrong shape (each problem with its
JSON path, e.g. ``topics[0].turn[2].number``); and the rules of every session table
(a document twice in one ranked list is an error in strict mode; lenient mode keeps
its first, best-ranked occurrence, removes the later one so the list moves up, and
lists each repair in ``report.repairs``).
"""

from __future__ import annotations

import os
import re
import warnings
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final, Literal

import pandas as pd

from ..errors import InputFormatError
from ..frame import JudgmentFrame, LoadedStudy
from ..models.judgments import GradeScale
from ..problems import Mode
from ..validate.references import unjudged_keys
from .cast_topics import MAX_TURN_DIGITS, TurnText, read_cast_topics
from .header import study_header
from .mapping import with_qrels_key
from .runs_as_sessions import TurnIds, runs_as_sessions
from .text import check_encoding
from .trec import read_qrels

__all__ = [
    "CAST_GRADE_SCALE",
    "CAST_TURN_IDS",
    "is_cast_input",
    "load_cast",
    "load_runs_as_sessions",
]

#: TREC CAsT 2021 document grades (0 = fails to meet ... 4 = fully meets)
CAST_GRADE_SCALE: Final = GradeScale(
    name="TREC CAsT 0-4",
    levels={
        0: "fails to meet",
        1: "slightly meets",
        2: "moderately meets",
        3: "highly meets",
        4: "fully meets",
    },
)

#: CAsT's turn ids: ``<topic>_<turn>``, the turn number the digits after the last ``_``
CAST_TURN_IDS: Final = TurnIds(
    pattern=re.compile(r"^(?P<topic>.+)_(?P<turn>[0-9]+)$"),
    rule="turn id must be <topic>_<turn> (a turn number of digits 0-9 after the last '_')",
    max_digits=MAX_TURN_DIGITS,
)


def load_cast(
    runs: Sequence[str | os.PathLike[str]] | str | os.PathLike[str],
    *,
    qrels: str | os.PathLike[str] | None = None,
    topics: str | os.PathLike[str] | None = None,
    text: TurnText = "raw",
    depth: int | None = 10,
    order: Literal["score", "rank"] = "score",
    system_names: Mapping[str, str] | None = None,
    grade_scale: GradeScale | None = None,
    mode: Mode = "strict",
    max_problems: int = 50,
    progress: Callable[[str], None] | None = None,
    encoding: str | None = None,
) -> LoadedStudy:
    """Load TREC runs over ``topic_turn`` ids as sessions (one per run and topic).

    Parameters
    ----------
    runs
        A run file (6-column TREC format), a folder of ``*.run`` files, or a list of
        run files.
    qrels
        Per-turn TREC qrels (``topic_turn 0 doc grade``).
    topics
        CAsT topics JSON; gives the turn texts and every turn of a topic (a turn
        with no run lines becomes a query without results).  Without it, turns
        come from the run lines.
    text
        Utterance used as query text (``"raw"``, ``"manual"``, ``"automatic"``).
    depth
        Keep the top ``depth`` documents per turn (``None``: all); lines below are
        not read.
    order
        ``"score"``: score descending, ties by doc id descending (trec_eval);
        ``"rank"``: the file's rank column (ties by doc id descending).
    system_names
        Map run tag -> system id (default: the tag with a trailing ``.run`` removed).
    grade_scale
        Scale of the qrels grades (default :data:`CAST_GRADE_SCALE` when all grades fit it).
    mode
        ``"strict"``: one error listing every problem (module docstring);
        ``"lenient"``: the run lines concerned are dropped and listed, a document
        twice in one list is repaired (the later copy removed).
    max_problems
        Limit of problems listed in strict mode.
    progress
        Called with each loading phase's name (:data:`sessionval.validate.flat.LOAD_PHASES`).
    encoding
        Text encoding of the run, topics and qrels files (default UTF-8; a
        byte-order mark wins).

    Returns
    -------
    LoadedStudy
        One session per (run, topic), ``session_id = "<system>:<topic>"``,
        ``system_id`` = ``user_id`` = run tag, ``query_id`` = turn id = ``qrels_id``
        (``qrels_key="query_id"``).  ``unjudged`` lists the turns without qrels;
        ``report.problems`` the run lines dropped in lenient mode, ``notes`` (and
        ``report.repairs``) the repairs.
        ``details``: ``depth`` and ``systems`` (the run tags, in file order).

    Raises
    ------
    InputFormatError
        No run file given, or a folder without ``*.run`` files.
    """
    paths = _run_files(runs)
    check_encoding(encoding)
    read_turns = None
    if topics is not None:
        topics_path = topics

        def read_turns() -> pd.DataFrame:
            return read_cast_topics(
                topics_path, text=text, encoding=encoding, max_problems=max_problems
            )

    built = runs_as_sessions(
        paths,
        turn_ids=CAST_TURN_IDS,
        read_turns=read_turns,
        turns_source=str(topics),
        depth=depth,
        order=order,
        system_names=system_names,
        mode=mode,
        max_problems=max_problems,
        progress=progress,
        encoding=encoding,
    )
    frame = with_qrels_key(built.frame, by="query_id")
    judgments = _read_turn_qrels(qrels, grade_scale, encoding) if qrels is not None else None
    return LoadedStudy(
        study=study_header(frame, judgments=judgments, name=Path(paths[0]).stem),
        frame=frame,
        judgments=judgments,
        report=built.report,
        qrels_key="query_id",
        unjudged=unjudged_keys(frame, judgments),
        details={"depth": depth, "systems": built.systems},
    )


def load_runs_as_sessions(
    runs: Sequence[str | os.PathLike[str]] | str | os.PathLike[str], **options: Any
) -> LoadedStudy:
    """Deprecated name of :func:`load_cast` (same parameters).

    .. deprecated::
        Call :func:`load_cast`: one public name per format (``load_<format>``).
    """
    warnings.warn(
        "load_runs_as_sessions is deprecated: call sessionval.load_cast (same parameters)",
        DeprecationWarning,
        stacklevel=2,
    )
    return load_cast(runs, **options)


def _run_files(
    runs: Sequence[str | os.PathLike[str]] | str | os.PathLike[str],
) -> list[str | os.PathLike[str]]:
    """The run files of ``runs``: itself, a folder's ``*.run`` files (sorted), or the list."""
    if not isinstance(runs, str | os.PathLike):
        paths = list(runs)
        if not paths:
            raise InputFormatError("no run file given")
        return paths
    p = Path(runs)
    if not p.is_dir():
        return [runs]
    found: list[str | os.PathLike[str]] = list(sorted(p.glob("*.run")))
    if not found:
        raise InputFormatError(f"{p}: no *.run file in the folder")
    return found


def _read_turn_qrels(
    qrels: str | os.PathLike[str], grade_scale: GradeScale | None, encoding: str | None
) -> JudgmentFrame:
    """Per-turn qrels on ``grade_scale``, else :data:`CAST_GRADE_SCALE` when the grades fit."""
    if grade_scale is not None:
        return read_qrels(qrels, scale=grade_scale, encoding=encoding)
    j = read_qrels(qrels, encoding=encoding)
    if set(j.scale.grades) <= set(CAST_GRADE_SCALE.grades):
        return JudgmentFrame(table=j.table, scale=CAST_GRADE_SCALE, source=j.source)
    return j


def is_cast_input(path: Path) -> bool:
    """A ``.run`` file, or a folder with ``*.run`` files."""
    if path.is_dir():
        return any(path.glob("*.run"))
    return path.suffix.lower() == ".run"

"""TREC runs as sessions: one session per run and conversational topic (TREC CAsT).

In conversational collections a topic is a conversation and each turn a query.

A run file ranks documents per turn id ``<topic>_<turn>``; :func:`load_runs_as_sessions`
turns every (run, topic) pair into one session whose queries are the topic's turns
in turn order and whose results are the run's top ``k`` for that turn.  The system
of a session is the run tag, so several runs give several systems over the same
topics.  Judgments are per turn: ``queries["qrels_id"]`` is the turn id and the
qrels' ``topic_id`` is the same turn id, so each turn's ideal list is built from
that turn's judged pool.

Run and qrels files are read with :mod:`sessionval.io.trec`.  Ranked lists are
ordered by score descending with ties broken by document id
descending (trec_eval's order), unless ``order="rank"`` (the file's rank column).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Final, Literal

import numpy as np
import numpy.typing as npt
import pandas as pd

from ..errors import InputFormatError, ParseError, ValidationFailed
from ..frame import JudgmentFrame, LoadedStudy
from ..models.judgments import GradeScale
from ..problems import Mode, Problem
from ..validate.flat import frame_from_flat
from ..validate.references import unjudged_keys
from .header import study_header
from .mapping import with_qrels_key
from .trec import read_qrels, read_run

__all__ = [
    "CAST_GRADE_SCALE",
    "TurnText",
    "is_cast_input",
    "load_runs_as_sessions",
    "read_cast",
    "read_cast_topics",
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

TurnText = Literal["raw", "manual", "automatic"]
_TEXT_FIELD: Final = {
    "raw": "raw_utterance",
    "manual": "manual_rewritten_utterance",
    "automatic": "automatic_rewritten_utterance",
}


def _run_with_lines(path: str | os.PathLike[str]) -> pd.DataFrame:
    """:func:`sessionval.io.trec.read_run` with plain string columns and each row's file line."""
    p = Path(path)
    run = read_run(p)
    with p.open("rb") as fh:
        lines = np.asarray([i + 1 for i, ln in enumerate(fh) if ln.strip()], dtype=np.int64)
    return pd.DataFrame(
        {
            "qid": run["query_id"].astype(str).to_numpy(),
            "doc": run["doc_id"].astype(str).to_numpy(),
            "rank": run["rank"].to_numpy(),
            "score": run["score"].to_numpy(),
            "tag": run["tag"].astype(str).to_numpy(),
            "_line": lines[: len(run)],
        }
    )


def _flag_rows(
    run: pd.DataFrame,
    bad: npt.NDArray[np.bool_],
    field: str,
    message: str,
    problems: list[Problem],
    *,
    mode: Mode,
    max_problems: int,
) -> None:
    """Record a problem for each flagged run row; in strict mode raise with them.

    Lenient mode reports every dropped row (counts in = counts out); strict mode
    lists the first ``max_problems`` and says when there are more.
    """
    rows = np.flatnonzero(bad)
    shown = rows[:max_problems] if mode == "strict" else rows
    problems.extend(
        Problem(
            str(run["_file"].iloc[i]),
            f"line {int(run['_line'].iloc[i])}",
            field,
            message,
            repr(run[field].iloc[i]),
            record=str(run["qid"].iloc[i]),
        )
        for i in shown.tolist()
    )
    if mode == "strict":
        raise ValidationFailed(problems, truncated=len(rows) > len(shown))


def read_cast_topics(path: str | os.PathLike[str], *, text: TurnText = "raw") -> pd.DataFrame:
    """Read CAsT topics JSON (``[{number, turn: [{number, raw_utterance, ...}]}]``).

    Parameters
    ----------
    path
        The topics file.
    text
        Which utterance becomes the query text: ``"raw"``, ``"manual"`` (manual rewrite)
        or ``"automatic"`` (automatic rewrite). A missing field gives an empty text.

    Returns
    -------
    pandas.DataFrame
        One row per turn: ``topic`` (str), ``turn`` (int), ``turn_id`` (``topic_turn``), ``text``.
    """
    p = Path(path)
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise ParseError(f"{p}: no such file") from exc
    except json.JSONDecodeError as exc:
        raise ParseError(f"{p}:{exc.lineno}:{exc.colno}: malformed JSON ({exc.msg})") from exc
    if not isinstance(data, list):
        raise InputFormatError(f"{p}: expected a JSON list of topics, got {type(data).__name__}")
    rows: list[tuple[str, int, str]] = []
    fld = _TEXT_FIELD[text]
    for i, topic in enumerate(data):
        if not isinstance(topic, dict) or "number" not in topic or "turn" not in topic:
            raise InputFormatError(f"{p}: topics[{i}] must have 'number' and 'turn'")
        for j, turn in enumerate(topic["turn"]):
            if not isinstance(turn, dict) or "number" not in turn:
                raise InputFormatError(f"{p}: topics[{i}].turn[{j}] has no 'number'")
            rows.append(
                (str(topic["number"]), int(turn["number"]), str(turn.get(fld) or "").strip())
            )
    df = pd.DataFrame(rows, columns=["topic", "turn", "text"])
    df["turn_id"] = df["topic"] + "_" + df["turn"].astype(str)
    return df


_TURN_RE: Final = re.compile(r"^(?P<topic>.+)_(?P<turn>\d+)$")


def load_runs_as_sessions(
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
) -> LoadedStudy:
    """Load TREC runs over ``topic_turn`` ids as sessions (one per run and topic).

    Parameters
    ----------
    runs
        One or more run files (6-column TREC format).
    qrels
        Per-turn TREC qrels (``topic_turn 0 doc grade``).
    topics
        CAsT topics JSON; gives the turn texts and every turn of a topic (a turn
        with no run lines becomes a query without results).  Without it, turns
        come from the run lines.
    text
        Utterance used as query text (``"raw"``, ``"manual"``, ``"automatic"``).
    depth
        Keep the top ``depth`` documents per turn (``None``: all).
    order
        ``"score"``: score descending, ties by doc id descending (trec_eval);
        ``"rank"``: the file's rank column (ties by doc id).
    system_names
        Map run tag -> system id (default: the tag with a trailing ``.run`` removed).
    grade_scale
        Scale of the qrels grades (default :data:`CAST_GRADE_SCALE` when all grades fit it).
    mode
        ``"strict"`` or ``"lenient"``; a turn id that is not ``<topic>_<turn>``, a
        document twice in one list or a turn missing from the topics file is a problem.
    max_problems
        Limit of problems listed in strict mode.
    progress
        Called with each loading phase's name (:data:`sessionval.validate.flat.LOAD_PHASES`).

    Returns
    -------
    LoadedStudy
        One session per (run, topic), ``session_id = "<system>:<topic>"``,
        ``system_id`` = ``user_id`` = run tag, ``query_id`` = turn id = ``qrels_id``
        (``qrels_key="query_id"``).  ``unjudged`` lists the turns without qrels;
        ``notes`` the run rows dropped in lenient mode (also in ``report.problems``).
        ``details``: ``depth`` and ``systems`` (the run tags, in file order).
    """
    paths = [runs] if isinstance(runs, str | os.PathLike) else list(runs)
    if not paths:
        raise InputFormatError("no run file given")
    if depth is not None and depth < 1:
        raise InputFormatError(f"depth must be >= 1 or None, got {depth}")
    problems: list[Problem] = []
    run = _read_runs(paths, system_names or {})
    run = _split_turn_ids(run, problems, mode=mode, max_problems=max_problems)
    run = _rank_lists(
        run, order=order, depth=depth, problems=problems, mode=mode, max_problems=max_problems
    )
    systems = tuple(str(s) for s in pd.unique(run["system"]))
    turns = _turns(run, topics, text)
    flat = _session_grid(
        run, systems, turns, topics, problems, mode=mode, max_problems=max_problems
    )
    frame, report = frame_from_flat(
        flat,
        source=", ".join(map(str, paths)),
        mode=mode,
        max_problems=max_problems,
        progress=progress,
    )
    frame = with_qrels_key(frame, by="query_id")
    report.problems = [*problems, *report.problems]
    judgments = _read_turn_qrels(qrels, grade_scale) if qrels is not None else None
    return LoadedStudy(
        study=study_header(frame, judgments=judgments, name=Path(paths[0]).stem),
        frame=frame,
        judgments=judgments,
        report=report,
        notes=tuple(problems),
        qrels_key="query_id",
        unjudged=unjudged_keys(frame, judgments),
        details={"depth": depth, "systems": systems},
    )


def _read_runs(paths: list[str | os.PathLike[str]], names: Mapping[str, str]) -> pd.DataFrame:
    """Every run line, with its file, line and system (the tag, or its name in ``names``)."""
    frames = []
    for path in paths:
        df = _run_with_lines(path)
        df["_file"] = str(path)
        frames.append(df)
    run = pd.concat(frames, ignore_index=True)
    tags = run["tag"].astype(str)
    run["system"] = tags.map(lambda t: names.get(t, t[:-4] if t.endswith(".run") else t))
    return run


def _split_turn_ids(
    run: pd.DataFrame, problems: list[Problem], *, mode: Mode, max_problems: int
) -> pd.DataFrame:
    """``qid`` split into ``topic`` and ``turn``; a qid not ``<topic>_<turn>`` is a problem."""
    m = run["qid"].str.extract(_TURN_RE)
    badq = m["topic"].isna().to_numpy()
    if badq.any():
        msg = "turn id must be <topic>_<turn>"
        _flag_rows(run, badq, "qid", msg, problems, mode=mode, max_problems=max_problems)
        run = run[~badq].reset_index(drop=True)
        m = m[~badq].reset_index(drop=True)
    run["topic"] = m["topic"].astype(str)
    run["turn"] = m["turn"].astype(np.int64)
    return run


def _rank_lists(
    run: pd.DataFrame,
    *,
    order: Literal["score", "rank"],
    depth: int | None,
    problems: list[Problem],
    mode: Mode,
    max_problems: int,
) -> pd.DataFrame:
    """Each (system, turn) list in trec_eval's order, ranked 1..k, cut at ``depth``.

    A document twice in one list is a problem (lenient: the first is kept).
    """
    sys_codes, _ = pd.factorize(run["system"], sort=False)
    turn_codes, _ = pd.factorize(run["qid"], sort=False)
    doc_codes, _ = pd.factorize(run["doc"], sort=True)
    primary = -run["score"].to_numpy() if order == "score" else run["rank"].to_numpy(np.float64)
    # trec_eval breaks score ties by docno descending; docno codes are sorted ascending
    srt = np.lexsort((-doc_codes, primary, turn_codes, sys_codes))
    run = run.iloc[srt].reset_index(drop=True)
    grp = (run["system"] + "\x00" + run["qid"]).to_numpy()
    dup = (pd.Series(grp) + "\x00" + run["doc"].astype(str)).duplicated().to_numpy()
    if dup.any():
        msg = "document occurs more than once in the same ranked list"
        _flag_rows(run, dup, "doc", msg, problems, mode=mode, max_problems=max_problems)
        run = run[~dup].reset_index(drop=True)
        grp = grp[~dup]
    starts = np.ones(len(run), dtype=bool)
    starts[1:] = grp[1:] != grp[:-1]
    first_idx = np.flatnonzero(starts)
    run["new_rank"] = np.arange(len(run)) - first_idx[np.cumsum(starts) - 1] + 1
    if depth is not None:
        run = run[run["new_rank"] <= depth].reset_index(drop=True)
    return run


def _turns(
    run: pd.DataFrame, topics: str | os.PathLike[str] | None, text: TurnText
) -> pd.DataFrame:
    """Every topic's turns (from the topics file, or the run lines), ``query_pos`` 1..n each.

    Topics keep their order of first appearance; turns are ordered by number.
    """
    if topics is not None:
        turns = read_cast_topics(topics, text=text)
    else:
        t = run[["topic", "turn", "qid"]].drop_duplicates("qid")
        turns = pd.DataFrame(
            {
                "topic": t["topic"].to_numpy(),
                "turn": t["turn"].to_numpy(),
                "text": "",
                "turn_id": t["qid"].to_numpy(),
            }
        )
    tcode = pd.factorize(turns["topic"], sort=False)[0]
    turns = turns.iloc[np.lexsort((turns["turn"].to_numpy(), tcode))].reset_index(drop=True)
    turns["query_pos"] = turns.groupby("topic", sort=False).cumcount() + 1
    return turns


def _session_grid(
    run: pd.DataFrame,
    systems: tuple[str, ...],
    turns: pd.DataFrame,
    topics: str | os.PathLike[str] | None,
    problems: list[Problem],
    *,
    mode: Mode,
    max_problems: int,
) -> pd.DataFrame:
    """The flat table: every system x turn, with that system's results for the turn.

    A turn in the run but not in the topics file is a problem (lenient: dropped).
    """
    grid = pd.DataFrame({"system": list(systems)}).merge(turns, how="cross")
    res = run[["system", "qid", "doc", "new_rank", "score"]].rename(
        columns={"qid": "turn_id", "new_rank": "rank"}
    )
    unknown_turns = sorted(set(res["turn_id"]) - set(grid["turn_id"]))
    if unknown_turns:
        shown = unknown_turns[:max_problems] if mode == "strict" else unknown_turns
        problems.extend(
            Problem(
                str(topics),
                "",
                "qid",
                "turn id in the run is not in the topics file",
                repr(tid),
                record=tid,
            )
            for tid in shown
        )
        if mode == "strict":
            raise ValidationFailed(problems, truncated=len(unknown_turns) > len(shown))
        res = res[~res["turn_id"].isin(unknown_turns)]
    flat = grid.merge(res, on=["system", "turn_id"], how="left", sort=False)
    return pd.DataFrame(
        {
            "session_id": flat["system"] + ":" + flat["topic"],
            "user_id": flat["system"],
            "topic_id": flat["topic"],
            "system_id": flat["system"],
            "query_pos": flat["query_pos"].astype(np.int64),
            "query_id": flat["turn_id"],
            "query_text": flat["text"],
            "rank": flat["rank"].astype("Int64"),
            "doc_id": flat["doc"],
        }
    )


def _read_turn_qrels(
    qrels: str | os.PathLike[str], grade_scale: GradeScale | None
) -> JudgmentFrame:
    """Per-turn qrels on ``grade_scale``, else :data:`CAST_GRADE_SCALE` when the grades fit."""
    if grade_scale is not None:
        return read_qrels(qrels, scale=grade_scale)
    j = read_qrels(qrels)
    if set(j.scale.grades) <= set(CAST_GRADE_SCALE.grades):
        return JudgmentFrame(table=j.table, scale=CAST_GRADE_SCALE, source=j.source)
    return j


# ---------------------------------------------------------------------------------------------
# a run file or a folder of runs


def is_cast_input(path: Path) -> bool:
    """A ``.run`` file, or a folder with ``*.run`` files."""
    if path.is_dir():
        return any(path.glob("*.run"))
    return path.suffix.lower() == ".run"


def read_cast(
    path: str | os.PathLike[str],
    *,
    qrels: str | os.PathLike[str] | None = None,
    topics: str | os.PathLike[str] | None = None,
    text: TurnText = "raw",
    depth: int | None = 10,
    mode: Mode = "strict",
    max_problems: int = 50,
    progress: Callable[[str], None] | None = None,
) -> LoadedStudy:
    """Load a run file, or every ``*.run`` file of a folder, as sessions.

    See :func:`load_runs_as_sessions`.

    Raises
    ------
    InputFormatError
        A folder without ``*.run`` files.
    """
    p = Path(path)
    runs = sorted(p.glob("*.run")) if p.is_dir() else [p]
    if not runs:
        raise InputFormatError(f"{p}: no *.run file in the folder")
    return load_runs_as_sessions(
        runs,
        qrels=qrels,
        topics=topics,
        text=text,
        depth=depth,
        mode=mode,
        max_problems=max_problems,
        progress=progress,
    )

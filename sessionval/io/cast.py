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

What is checked (strict: one error listing every problem; lenient: the run lines
concerned are dropped and listed): a turn id that is not ``<topic>_<turn>`` with a
turn number of at most 18 digits; run tags that differ only by whitespace (they
would name one system twice); a turn missing from the topics file; a topics file
of the wrong shape (each problem with its JSON path, e.g. ``topics[0].turn[2].number``).
A document twice in one ranked list is an error in strict mode; lenient mode keeps
its first (best-ranked) occurrence, removes the later one so the list moves up, and
lists each repair in ``report.repairs``.
"""

from __future__ import annotations

import codecs
import json
import os
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final, Literal

import numpy as np
import numpy.typing as npt
import pandas as pd

from ..errors import InputFormatError, ParseError, ValidationFailed, raise_if_any
from ..frame import JudgmentFrame, LoadedStudy, SessionFrame
from ..models.judgments import GradeScale
from ..problems import LoadReport, Mode, Problem
from ..validate.flat import frame_from_flat
from ..validate.ids import strip_id
from ..validate.references import unjudged_keys
from .header import study_header
from .mapping import with_qrels_key
from .text import check_encoding, decode_text, read_input_bytes, read_input_text
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


_LINE_END: Final = re.compile(r"\r\n?|\n")


def _run_with_lines(path: str | os.PathLike[str], encoding: str | None) -> pd.DataFrame:
    r""":func:`sessionval.io.trec.read_run` with plain string columns and each row's file line.

    Lines end at ``\n``, ``\r\n`` or ``\r`` (CR-only files included) and a line of
    only spaces and tabs is blank, as in the run reader.  Should the counts still
    disagree, rows are named by their position (``line`` 0) rather than misnamed.
    """
    p = Path(path)
    data = read_input_bytes(p)
    text = decode_text(data, p, encoding)  # a located decoding error first
    # the run reader needs the encoding only when the bytes are not UTF-8 as they stand
    # (read_run takes encoding= once the TREC readers share the decoder, issue 10)
    as_utf8 = data.startswith(codecs.BOM_UTF8) or text.encode("utf-8") == data
    enc: dict[str, Any] = {} if encoding is None or as_utf8 else {"encoding": encoding}
    run = read_run(p, **enc)
    lines = np.asarray(
        [i for i, ln in enumerate(_LINE_END.split(text), start=1) if ln.strip(" \t")],
        dtype=np.int64,
    )
    if len(lines) != len(run):
        lines = np.zeros(len(run), dtype=np.int64)
    return pd.DataFrame(
        {
            "qid": run["query_id"].astype(str).to_numpy(),
            "doc": run["doc_id"].astype(str).to_numpy(),
            "rank": run["rank"].to_numpy(),
            "score": run["score"].to_numpy(),
            "tag": run["tag"].astype(str).to_numpy(),
            "_line": lines,
            "_row": np.arange(len(run), dtype=np.int64),
        }
    )


def _flag_rows(
    run: pd.DataFrame,
    bad: npt.NDArray[np.bool_],
    field: str,
    message: str | Sequence[str],
    problems: list[Problem],
) -> None:
    """Record a problem for each flagged run row (the caller drops the rows).

    Every flagged row is listed, so lenient mode's counts balance; strict mode
    raises them all together once every check has run.
    """
    rows = np.flatnonzero(bad)
    msgs = [message] * len(rows) if isinstance(message, str) else list(message)
    problems.extend(
        Problem(
            str(run["_file"].iloc[i]),
            _where(int(run["_line"].iloc[i]), int(run["_row"].iloc[i])),
            field,
            msg,
            repr(run[field].iloc[i]),
            record=str(run["qid"].iloc[i]),
        )
        for i, msg in zip(rows.tolist(), msgs, strict=True)
    )


def _where(line: int, row: int) -> str:
    return f"line {line}" if line > 0 else f"run line {row + 1} (not blank)"


def read_cast_topics(
    path: str | os.PathLike[str],
    *,
    text: TurnText = "raw",
    encoding: str | None = None,
    max_problems: int = 50,
) -> pd.DataFrame:
    """Read CAsT topics JSON (``[{number, turn: [{number, raw_utterance, ...}]}]``).

    Parameters
    ----------
    path
        The topics file (plain or gzip-compressed).
    text
        Which utterance becomes the query text: ``"raw"``, ``"manual"`` (manual rewrite)
        or ``"automatic"`` (automatic rewrite). A missing field gives an empty text.
    encoding
        Text encoding (default UTF-8; a byte-order mark wins).
    max_problems
        Problems listed in the error at most.

    Returns
    -------
    pandas.DataFrame
        One row per turn: ``topic`` (str), ``turn`` (int), ``turn_id`` (``topic_turn``), ``text``.

    Raises
    ------
    ParseError
        Bytes not valid in the encoding, or malformed JSON (line and column).
    InputFormatError
        A file of the wrong shape: every problem, each with its JSON path
        (``topics[0].turn[2].number``), the value and what is allowed.
    """
    p = Path(path)
    raw = read_input_text(p, encoding)
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ParseError(f"{p}:{exc.lineno}:{exc.colno}: malformed JSON ({exc.msg})") from None
    except RecursionError:
        raise ParseError(f"{p}: JSON nested too deeply (expected a list of topics)") from None
    if not isinstance(data, list):
        raise InputFormatError(
            f"{p}: expected a JSON list of topics [{{number, turn: [...]}}], "
            f"got a JSON {_json_kind(data)}"
        )
    rows: list[tuple[str, int, str]] = []
    errors: list[str] = []
    fld = _TEXT_FIELD[text]

    def bad(where: str, what: str, value: object) -> None:
        errors.append(f"{p}: {where}: {what} (got {_shown(value)})")

    for i, topic in enumerate(data):
        if not isinstance(topic, dict):
            bad(f"topics[{i}]", "must be an object with 'number' and 'turn'", topic)
            continue
        number = topic.get("number")
        if not _is_id(number):
            bad(f"topics[{i}].number", "must be a topic number or id (integer or string)", number)
            continue
        turns = topic.get("turn")
        if not isinstance(turns, list):
            bad(f"topics[{i}].turn", "must be a list of turns", turns)
            continue
        seen: set[int] = set()
        for j, turn in enumerate(turns):
            where = f"topics[{i}].turn[{j}]"
            if not isinstance(turn, dict):
                bad(where, "must be an object with 'number'", turn)
                continue
            n = _turn_number(turn.get("number"))
            if n is None:
                bad(
                    f"{where}.number",
                    "must be a whole turn number from 0 to 18 digits",
                    turn.get("number"),
                )
                continue
            if n in seen:
                bad(f"{where}.number", f"turn {n} occurs twice in topic {number}", n)
                continue
            seen.add(n)
            utterance = turn.get(fld)
            if utterance is not None and not isinstance(utterance, str):
                bad(f"{where}.{fld}", "must be a string", utterance)
                continue
            rows.append((strip_id(str(number)), n, (utterance or "").strip()))
    if errors:
        n_more = len(errors) - max_problems
        more = f"\n  ... and {n_more} more" if n_more > 0 else ""
        raise InputFormatError(
            f"{len(errors)} problem(s) in the topics file:\n  "
            + "\n  ".join(errors[:max_problems])
            + more
        )
    df = pd.DataFrame(rows, columns=["topic", "turn", "text"])
    df["turn"] = df["turn"].astype(np.int64)
    df["turn_id"] = df["topic"] + "_" + df["turn"].astype(str)
    return df


#: turn numbers have at most this many digits (they fit a 64-bit integer)
_MAX_TURN_DIGITS: Final = 18


def _turn_number(value: object) -> int | None:
    """A turn number: a non-negative JSON integer, or a string of ASCII digits."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if 0 <= value < 10**_MAX_TURN_DIGITS else None
    if isinstance(value, str) and strip_id(value).isascii() and strip_id(value).isdigit():
        v = strip_id(value)
        return int(v) if len(v) <= _MAX_TURN_DIGITS else None
    return None


def _is_id(value: object) -> bool:
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, str) and bool(strip_id(value)))


def _json_kind(value: object) -> str:
    return {dict: "object", list: "list", str: "string", bool: "boolean"}.get(
        type(value), "number" if isinstance(value, int | float) else "null"
    )


def _shown(value: Any) -> str:
    r = repr(value)
    return r if len(r) <= 60 else r[:57] + "..."


_TURN_RE: Final = re.compile(r"^(?P<topic>.+)_(?P<turn>[0-9]+)$")


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
    encoding: str | None = None,
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
    """
    paths = [runs] if isinstance(runs, str | os.PathLike) else list(runs)
    if not paths:
        raise InputFormatError("no run file given")
    if depth is not None and depth < 1:
        raise InputFormatError(f"depth must be >= 1 or None, got {depth}")
    check_encoding(encoding)
    problems: list[Problem] = []
    repairs: list[Problem] = []
    run = _read_runs(paths, system_names or {}, encoding)
    run = _check_tags(run, problems)
    run = _split_turn_ids(run, problems)
    run = _rank_lists(run, order=order, depth=depth, problems=problems, repairs=repairs, mode=mode)
    if not len(run):  # every line flagged: nothing to build sessions from
        raise ValidationFailed(problems[:max_problems], truncated=len(problems) > max_problems)
    systems = tuple(str(s) for s in pd.unique(run["system"]))
    turns = _turns(run, topics, text, encoding, max_problems)
    flat = _session_grid(run, systems, turns, topics, problems)
    source = ", ".join(map(str, paths))
    if not len(flat):
        raise_if_any(problems, limit=max_problems)
        raise InputFormatError(f"{source}: no run line to read")

    def build() -> tuple[SessionFrame, LoadReport]:
        return frame_from_flat(
            flat, source=source, mode=mode, max_problems=max_problems, progress=progress
        )

    if mode == "strict" and problems:
        try:  # one pass: the table's own problems join the run lines' ones
            build()
        except ValidationFailed as exc:
            problems.extend(exc.problems)
        raise_if_any(problems, limit=max_problems)
    frame, report = build()
    frame = with_qrels_key(frame, by="query_id")
    # each run line (or unknown turn) dropped above is a record read and rejected with its
    # one problem: the books count it, as a flat row without a session id
    report.records_read += len(problems)
    report.sessions_rejected += len(problems)
    report.problems = [*problems, *report.problems]
    report.repairs = [*repairs, *report.repairs]
    judgments = _read_turn_qrels(qrels, grade_scale, encoding) if qrels is not None else None
    return LoadedStudy(
        study=study_header(frame, judgments=judgments, name=Path(paths[0]).stem),
        frame=frame,
        judgments=judgments,
        report=report,
        notes=tuple(repairs),
        qrels_key="query_id",
        unjudged=unjudged_keys(frame, judgments),
        details={"depth": depth, "systems": systems},
    )


def _read_runs(
    paths: list[str | os.PathLike[str]], names: Mapping[str, str], encoding: str | None
) -> pd.DataFrame:
    """Every run line, with its file, line and system (the tag, or its name in ``names``)."""
    frames = []
    for path in paths:
        df = _run_with_lines(path, encoding)
        df["_file"] = str(path)
        frames.append(df)
    run = pd.concat(frames, ignore_index=True)
    tags = run["tag"].astype(str)
    run["system"] = tags.map(lambda t: names.get(t, t[:-4] if t.endswith(".run") else t))
    return run


def _check_tags(run: pd.DataFrame, problems: list[Problem]) -> pd.DataFrame:
    """Systems whose names differ only by whitespace would be one system twice: a problem.

    The first spelling (in file order) is kept; the lines of the others are flagged
    and dropped.
    """
    systems = pd.unique(run["system"])
    first: dict[str, str] = {}
    clash: dict[str, str] = {}
    for name in systems.tolist():
        key = "".join(str(name).split())
        if key in first:
            clash[name] = first[key]
        else:
            first[key] = name
    if not clash:
        return run
    bad = run["system"].isin(list(clash)).to_numpy()
    msgs = [
        f"run tag differs from {clash[t]!r} only by whitespace; tags must differ in "
        "visible characters (fix the tag)"
        for t in run["system"].to_numpy()[bad]
    ]
    _flag_rows(run, bad, "tag", msgs, problems)
    return run[~bad].reset_index(drop=True)


def _split_turn_ids(run: pd.DataFrame, problems: list[Problem]) -> pd.DataFrame:
    """``qid`` split into ``topic`` and ``turn``; a qid not ``<topic>_<turn>`` is a problem."""
    m = run["qid"].str.extract(_TURN_RE)
    badq = m["topic"].isna().to_numpy()
    if badq.any():
        msg = "turn id must be <topic>_<turn> (a turn number of digits 0-9 after the last '_')"
        _flag_rows(run, badq, "qid", msg, problems)
    long = ~badq & (m["turn"].str.len().fillna(0).to_numpy() > _MAX_TURN_DIGITS)
    if long.any():
        msg = f"turn number has more than {_MAX_TURN_DIGITS} digits"
        _flag_rows(run, long, "qid", msg, problems)
    keep = ~(badq | long)
    if not keep.all():
        run = run[keep].reset_index(drop=True)
        m = m[keep].reset_index(drop=True)
    run["topic"] = m["topic"].astype(str)
    run["turn"] = m["turn"].astype(np.int64)
    return run


def _rank_lists(
    run: pd.DataFrame,
    *,
    order: Literal["score", "rank"],
    depth: int | None,
    problems: list[Problem],
    repairs: list[Problem],
    mode: Mode,
) -> pd.DataFrame:
    """Each (system, turn) list in trec_eval's order, ranked 1..k, cut at ``depth``.

    A document twice in one list is a problem (strict) or repaired (lenient: the
    first, best-ranked occurrence kept, the later one removed, the list moves up).
    """
    sys_codes, _ = pd.factorize(run["system"], sort=False)
    turn_codes, _ = pd.factorize(run["qid"], sort=False)
    doc_codes, _ = pd.factorize(run["doc"], sort=True)
    primary = -run["score"].to_numpy() if order == "score" else run["rank"].to_numpy(np.float64)
    # trec_eval breaks score ties by docno descending; docno codes are sorted ascending
    srt = np.lexsort((-doc_codes, primary, turn_codes, sys_codes))
    run = run.iloc[srt].reset_index(drop=True)
    grp = (run["system"] + "\x00" + run["qid"]).to_numpy()
    starts = np.ones(len(run), dtype=bool)
    starts[1:] = grp[1:] != grp[:-1]
    first_idx = np.flatnonzero(starts)
    pos = np.arange(len(run)) - first_idx[np.cumsum(starts) - 1] + 1  # rank before the repair
    key = pd.Series(grp) + "\x00" + run["doc"].astype(str)
    dup = key.duplicated().to_numpy()
    if dup.any():
        kept_at = pd.Series(pos).groupby(key.to_numpy()).transform("first").to_numpy()
        msgs = [
            f"document occurs more than once in the same ranked list (ranks {a} and {b})"
            + (
                ""
                if mode == "strict"
                else f": kept at rank {a}, removed at rank {b}; the "
                "documents below moved up one rank"
            )
            for a, b in zip(kept_at[dup].tolist(), pos[dup].tolist(), strict=True)
        ]
        _flag_rows(run, dup, "doc", msgs, problems if mode == "strict" else repairs)
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
    run: pd.DataFrame,
    topics: str | os.PathLike[str] | None,
    text: TurnText,
    encoding: str | None,
    max_problems: int,
) -> pd.DataFrame:
    """Every topic's turns (from the topics file, or the run lines), ``query_pos`` 1..n each.

    Topics keep their order of first appearance; turns are ordered by number.
    """
    if topics is not None:
        turns = read_cast_topics(topics, text=text, encoding=encoding, max_problems=max_problems)
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
        problems.extend(
            Problem(
                str(topics),
                "",
                "qid",
                "turn id in the run is not in the topics file",
                repr(tid),
                record=tid,
            )
            for tid in unknown_turns
        )
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
    qrels: str | os.PathLike[str], grade_scale: GradeScale | None, encoding: str | None
) -> JudgmentFrame:
    """Per-turn qrels on ``grade_scale``, else :data:`CAST_GRADE_SCALE` when the grades fit."""
    # read_qrels takes encoding= once the TREC readers share the decoder (issue 10)
    enc: dict[str, Any] = {"encoding": encoding} if encoding is not None else {}
    if grade_scale is not None:
        return read_qrels(qrels, scale=grade_scale, **enc)
    j = read_qrels(qrels, **enc)
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
    encoding: str | None = None,
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
        encoding=encoding,
    )

"""TREC runs as sessions: one session per run and topic, the topic's turns its queries.

A run ranks documents per query id; when a query id names a topic and a turn
(``<topic>_<turn>`` in TREC CAsT, the one format-specific rule, a :class:`TurnIds`
parameter), every (run, topic) pair becomes one session whose queries are the
topic's turns in turn order and whose results are the run's top ``depth`` for that
turn.  The system of a session is the run tag, so several runs give several systems
over the same topics.  :func:`sessionval.io.cast.load_cast` is the reader of TREC
CAsT built on it.

Ranked lists are in trec_eval's order (:func:`sessionval.validate.ranking.run_order`:
score descending, ties by document id descending), or by the file's rank column
(``order="rank"``, ties the same way); in-list ranks come from the segment library.
The rows then pass through the flat-table rules
(:func:`~sessionval.validate.flat.frame_from_flat`) like every other input, so a
document twice in one list is a problem in strict mode and repaired in lenient mode by
the one repair (:mod:`sessionval.validate.repair`).  Each problem of the table is named
by its run file and line (a turn without results by its turn).

What is checked here, before the table (strict: one error listing every problem with
the table's own; lenient: the run lines concerned are dropped and listed): a query id
the turn rule does not match, or with a turn number of more than its digits; run tags
that differ only by whitespace (they would name one system twice); a turn missing from
the topics.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final, Literal

import numpy as np
import numpy.typing as npt
import pandas as pd

from .._types import IntArray
from ..errors import InputFormatError, ValidationFailed, raise_if_any
from ..frame import SessionFrame
from ..kernels.segments import offsets_from_counts, segment_cumsum_int, segment_ranks
from ..problems import LoadReport, Mode, Problem
from ..validate.collect import ProblemCollector
from ..validate.flat import frame_from_flat
from ..validate.ranking import coded_doc_ranks, factorize_ids, run_order
from .trec import read_run, run_line_numbers

__all__ = [
    "RunSessions",
    "TurnIds",
    "runs_as_sessions",
]


@dataclass(frozen=True)
class TurnIds:
    """How a run's query id names a topic and a turn: the one format-specific rule.

    Attributes
    ----------
    pattern
        Matches a whole query id, with groups ``topic`` and ``turn`` (ASCII digits).
    rule
        What a query id must look like, as a problem's message says it.
    max_digits
        Turn numbers have at most this many digits (they fit a 64-bit integer).
    """

    pattern: re.Pattern[str]
    rule: str
    max_digits: int = 18


@dataclass(frozen=True)
class RunSessions:
    """The sessions built from runs, before the format's reader adds its judgments.

    Attributes
    ----------
    frame
        One session per (system, topic), ``session_id = "<system>:<topic>"``.
    report
        Every run line dropped (lenient) is a record read and rejected with its problem.
    systems
        The systems, in the order of the run lines.
    """

    frame: SessionFrame
    report: LoadReport
    systems: tuple[str, ...]


def runs_as_sessions(
    paths: Sequence[str | os.PathLike[str]],
    *,
    turn_ids: TurnIds,
    read_turns: Callable[[], pd.DataFrame] | None = None,
    turns_source: str = "",
    depth: int | None = 10,
    order: Literal["score", "rank"] = "score",
    system_names: Mapping[str, str] | None = None,
    mode: Mode = "strict",
    max_problems: int = 50,
    progress: Callable[[str], None] | None = None,
    encoding: str | None = None,
) -> RunSessions:
    """Read run files and build one session per (system, topic).

    Parameters
    ----------
    paths
        The run files (6-column TREC format).
    turn_ids
        How a query id names a topic and a turn.
    read_turns
        Reads every topic's turns (columns ``topic``, ``turn``, ``turn_id``,
        ``text``); called once the run lines are read.  ``None``: the turns are those
        the run lines name, without text.
    turns_source
        The file ``read_turns`` reads, for the problem of a turn it lacks.
    depth, order, system_names, mode, max_problems, progress, encoding
        As :func:`sessionval.io.cast.load_cast`.
    """
    if not paths:
        raise InputFormatError("no run file given")
    if depth is not None and depth < 1:
        raise InputFormatError(f"depth must be >= 1 or None, got {depth}")
    problems: list[Problem] = []
    runs = _Runs(paths, encoding)
    run = runs.read(system_names or {})
    run = _check_tags(run, runs, problems)
    run = _split_turn_ids(run, turn_ids, runs, problems)
    if not len(run):  # every line flagged: nothing to build sessions from
        raise ValidationFailed(problems[:max_problems], truncated=len(problems) > max_problems)
    run = _rank_lists(run, order=order, depth=depth)
    systems = tuple(str(s) for s in pd.unique(run["system"]))
    turns = _turns(run, read_turns)
    flat, located = _session_grid(run, systems, turns, turns_source, problems)
    source = ", ".join(map(str, paths))
    if not len(flat):
        raise_if_any(problems, limit=max_problems)
        raise InputFormatError(f"{source}: no run line to read")

    def build() -> tuple[SessionFrame, LoadReport]:
        try:
            loaded = frame_from_flat(
                flat,
                source=source,
                mode=mode,
                max_problems=max_problems,
                location_kind="line",
                row_locations=located,
                progress=progress,
            )
            frame, report = loaded.frame, loaded.report
        except ValidationFailed as exc:
            raise ValidationFailed(runs.relocate(exc.problems), truncated=exc.truncated) from None
        report.problems = runs.relocate(report.problems)
        report.repairs = runs.relocate(report.repairs)
        return frame, report

    if mode == "strict" and problems:
        try:  # one pass: the table's own problems join the run lines' ones
            build()
        except ValidationFailed as exc:
            problems.extend(exc.problems)
        raise_if_any(problems, limit=max_problems)
    frame, report = build()
    # each run line (or unknown turn) dropped above is a record read and rejected with its
    # one problem: the books count it, as a flat row without a session id
    report.records_read += len(problems)
    report.sessions_rejected += len(problems)
    report.problems = [*problems, *report.problems]
    return RunSessions(frame, report, systems)


class _Runs:
    """The run files read, and each row's file line found again only for a message."""

    def __init__(self, paths: Sequence[str | os.PathLike[str]], encoding: str | None) -> None:
        self.paths = [str(p) for p in paths]
        self.encoding = encoding
        self.offsets: IntArray = np.zeros(1, dtype=np.int64)  # first row of each file
        self._lines: dict[int, npt.NDArray[np.int64]] = {}

    def read(self, names: Mapping[str, str]) -> pd.DataFrame:
        """Every run line, with its row (over all files) and system (the tag, or its name)."""
        frames = [read_run(p, encoding=self.encoding) for p in self.paths]
        self.offsets = offsets_from_counts([len(f) for f in frames])
        run = pd.DataFrame(
            {
                "qid": np.concatenate([f["query_id"].astype(str).to_numpy() for f in frames]),
                "doc": np.concatenate([f["doc_id"].astype(str).to_numpy() for f in frames]),
                "rank": np.concatenate([f["rank"].to_numpy() for f in frames]),
                "score": np.concatenate([f["score"].to_numpy() for f in frames]),
                "tag": np.concatenate([f["tag"].astype(str).to_numpy() for f in frames]),
            }
        )
        run["_row"] = np.arange(len(run), dtype=np.int64)
        tags = run["tag"]
        run["system"] = tags.map(lambda t: names.get(t, t[:-4] if t.endswith(".run") else t))
        return run

    def where(self, row: int) -> tuple[str, int]:
        """The file and line of a run row (counted over all files)."""
        f = int(np.searchsorted(self.offsets, row, side="right")) - 1
        if f not in self._lines:
            self._lines[f] = run_line_numbers(self.paths[f], encoding=self.encoding)
        return self.paths[f], int(self._lines[f][row - int(self.offsets[f])])

    def relocate(self, problems: Sequence[Problem]) -> list[Problem]:
        """Problems of the flat table, named by run file and line instead of table row.

        The table's rows are located by run row + 1 (0: a turn without results).
        """
        out = []
        for p in problems:
            number = p.location.removeprefix("line ")
            if not (p.location.startswith("line ") and number.isdigit()):
                out.append(p)
            elif int(number) == 0:
                out.append(dataclasses.replace(p, location=""))
            else:
                path, line = self.where(int(number) - 1)
                out.append(dataclasses.replace(p, source=path, location=f"line {line}"))
        return out

    def flag(
        self,
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
        of_file = {p: ProblemCollector(p, into=problems) for p in self.paths}
        for i, msg in zip(rows.tolist(), msgs, strict=True):
            path, line = self.where(int(run["_row"].iloc[i]))
            of_file[path].add_at(
                line, field, msg, repr(run[field].iloc[i]), record=str(run["qid"].iloc[i])
            )


def _check_tags(run: pd.DataFrame, runs: _Runs, problems: list[Problem]) -> pd.DataFrame:
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
    runs.flag(run, bad, "tag", msgs, problems)
    return run[~bad].reset_index(drop=True)


def _split_turn_ids(
    run: pd.DataFrame, turn_ids: TurnIds, runs: _Runs, problems: list[Problem]
) -> pd.DataFrame:
    """``qid`` split into ``topic`` and ``turn``; a qid the rule does not match is a problem."""
    m = run["qid"].str.extract(turn_ids.pattern)
    badq = m["topic"].isna().to_numpy()
    if badq.any():
        runs.flag(run, badq, "qid", turn_ids.rule, problems)
    long = ~badq & (m["turn"].str.len().fillna(0).to_numpy() > turn_ids.max_digits)
    if long.any():
        msg = f"turn number has more than {turn_ids.max_digits} digits"
        runs.flag(run, long, "qid", msg, problems)
    keep = ~(badq | long)
    if not keep.all():
        run = run[keep].reset_index(drop=True)
        m = m[keep].reset_index(drop=True)
    run["topic"] = m["topic"].astype(str)
    run["turn"] = m["turn"].astype(np.int64)
    return run


def _rank_lists(
    run: pd.DataFrame, *, order: Literal["score", "rank"], depth: int | None
) -> pd.DataFrame:
    """Each (system, turn) list in trec_eval's order, ranked 1..k, cut below ``depth`` documents.

    The cut keeps the rows down to the ``depth``-th distinct document of the list, so
    a list that repeats a document still has ``depth`` documents once the repair of
    the flat table (lenient mode) removes the later copy; what lies below the cut is
    not read, as a table read with ``max_rank``.
    """
    lists, _ = pd.factorize(pd.MultiIndex.from_arrays([run["system"], run["qid"]]), sort=False)
    list_codes = lists.astype(np.int64)
    doc_codes, doc_ids = factorize_ids(run["doc"])
    # the file's rank column orders like a score of -rank; ties by doc id either way
    key = -run["score"].to_numpy() if order == "score" else run["rank"].to_numpy(np.float64)
    rows = run_order(
        list_codes,
        np.arange(int(list_codes.max()) + 1, dtype=np.int64),
        -key,
        coded_doc_ranks(doc_codes, doc_ids),
        ties="trec_eval",
    )
    run = run.iloc[rows].reset_index(drop=True)
    sorted_lists = list_codes[rows]
    offsets = offsets_from_counts(np.bincount(sorted_lists))
    run["new_rank"] = segment_ranks(offsets)
    if depth is not None:
        pair = sorted_lists * (len(doc_ids) + 1) + doc_codes[rows]
        first = ~pd.Series(pair).duplicated().to_numpy()  # a document's first row in its list
        distinct = segment_cumsum_int(first.astype(np.int64), offsets)
        run = run[(distinct < depth) | ((distinct == depth) & first)].reset_index(drop=True)
    return run


def _turns(run: pd.DataFrame, read_turns: Callable[[], pd.DataFrame] | None) -> pd.DataFrame:
    """Every topic's turns (``read_turns``, or the run lines), ``query_pos`` 1..n each.

    Topics keep their order of first appearance; turns are ordered by number.
    """
    if read_turns is not None:
        turns = read_turns()
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


#: the table row of a turn without results, located as "line 0" (no run line)
_NO_LINE: Final = 0


def _session_grid(
    run: pd.DataFrame,
    systems: tuple[str, ...],
    turns: pd.DataFrame,
    turns_source: str,
    problems: list[Problem],
) -> tuple[pd.DataFrame, IntArray]:
    """The flat table: every system x turn, with that system's results for the turn.

    A turn in the run but not in the turns is a problem (lenient: dropped).  Returns
    the table and each row's run row + 1 (:data:`_NO_LINE` for a turn without results).
    """
    grid = pd.DataFrame({"system": list(systems)}).merge(turns, how="cross")
    res = run[["system", "qid", "doc", "new_rank", "_row"]].rename(
        columns={"qid": "turn_id", "new_rank": "rank"}
    )
    unknown_turns = sorted(set(res["turn_id"]) - set(grid["turn_id"]))
    if unknown_turns:
        of_turns = ProblemCollector(turns_source, into=problems)
        for tid in unknown_turns:
            of_turns.add_at(
                None, "qid", "turn id in the run is not in the topics file", repr(tid), record=tid
            )
        res = res[~res["turn_id"].isin(unknown_turns)]
    flat = grid.merge(res, on=["system", "turn_id"], how="left", sort=False)
    located = flat["_row"].fillna(_NO_LINE - 1).to_numpy(np.int64) + 1
    table = pd.DataFrame(
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
    return table, located

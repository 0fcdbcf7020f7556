"""Walking a TREC Session Track log: ``<session>`` elements to the rows of a flat table.

:class:`SessionLogWalk` visits each ``<session>`` of a parsed log (see
:mod:`sessionval.io._xml`), reads its topic, interactions, result lists and
clicks, and either emits one flat row per result (one row per query without
results) or, when the session breaks a rule, keeps its problems to reject it.
The options and quirks are those of :func:`sessionval.io.trec_session.load_trec_session`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final, Literal

import numpy as np

from ..frame import FLAT_COLUMNS
from ..problems import Mode, Problem
from ..validate.collect import ProblemCollector
from ..validate.ids import strip_id
from ._xml import XmlNode, child_text

__all__ = [
    "FLAT_FIELDS",
    "SessionLogWalk",
    "seconds",
]

CurrentQuery = Literal["if-results", "keep", "drop"]

#: the result-level fields of a row (``None`` on the row of a query without results)
_RESULT_FIELDS: Final = tuple(
    c.name for c in FLAT_COLUMNS if c.level == "result" and c.name != "user_grade"
)
#: the columns the walk emits: flat columns, and times in seconds (``*_secs``, ``session_start``)
FLAT_FIELDS: Final = (
    "session_id",
    "user_id",
    "topic_id",
    "system_id",
    "session_start",
    "query_pos",
    "query_text",
    "query_secs",
    *_RESULT_FIELDS,
)
_CLOCK: Final = re.compile(r"^(\d{1,2}):(\d{2}):(\d{2}(?:\.\d*)?)$")
#: latest time accepted, in seconds from the session start or midnight (about 31 years):
#: any later one cannot be a logged time, and 1e30 would not fit a timestamp
MAX_SECONDS: Final = 1e9
_DOC_TAG: Final = re.compile(r"^(clueweb\d*id|docid|docno)$")
#: a rank as the logs write it: ASCII digits (``int`` would also take "1_0" and other scripts)
_RANK: Final = re.compile(r"^\s*[+-]?[0-9]+\s*$")
#: ranks are stored in 32 bits
_MAX_RANK: Final = 2**31 - 1


def _parse_rank(text: str) -> int | None:
    """The rank in ``text``, or None when it is not an integer that a rank column can hold."""
    if not _RANK.match(text):
        return None
    rank = int(text)
    return rank if abs(rank) <= _MAX_RANK else None


def seconds(value: str | None) -> float:
    """Seconds from a number (``99.39``) or a clock time (``09:54:27.67``); NaN if unknown.

    Examples
    --------
    >>> seconds("99.5"), seconds("01:00:01.5"), seconds("NA")
    (99.5, 3601.5, nan)
    """
    if value is None:
        return float("nan")
    v = value.strip()
    if not v or v.upper() == "NA":
        return float("nan")
    m = _CLOCK.match(v)
    if m:
        return int(m.group(1)) * 3600 + int(m.group(2)) * 60 + float(m.group(3))
    try:
        return float(v)
    except ValueError:
        return float("nan")


def check_seconds(value: str | None) -> str:
    """What is wrong with a logged time (``""`` when it is fine or unknown).

    Examples
    --------
    >>> check_seconds("99.5"), check_seconds("NA"), check_seconds("inf")[:24]
    ('', '', 'must be a finite number ')
    """
    if value is None or not value.strip() or value.strip().upper() == "NA":
        return ""
    v = value.strip()
    if _CLOCK.match(v):
        return ""
    try:
        x = float(v)
    except ValueError:
        return "must be seconds (99.39), a clock time (09:54:27.674) or NA"
    if not np.isfinite(x):
        return "must be a finite number of seconds (or NA when unknown)"
    if x < 0:
        return "must be >= 0 seconds"
    if x > MAX_SECONDS:
        return f"must be at most {MAX_SECONDS:.0e} seconds (about 31 years)"
    return ""


def _add_clicks(a: tuple[int, float] | None, b: tuple[int, float]) -> tuple[int, float]:
    """Clicks and dwell of one result summed (an unknown dwell does not erase a known one)."""
    if a is None:
        return b
    d = b[1] if np.isnan(a[1]) else a[1] if np.isnan(b[1]) else a[1] + b[1]
    return a[0] + b[0], d


@dataclass
class _Result:
    rank: int
    doc: str
    url: str
    title: str
    snippet: str
    line: int


@dataclass
class _Query:
    line: int
    text: str
    secs: float
    results: list[_Result]
    clicks: dict[int, tuple[int, float]]  # rank -> (number of clicks, dwell seconds)


@dataclass
class _Session:
    """One session being read: its problems reject it, its repairs are kept if it is not."""

    sid: str
    problems: list[Problem] = field(default_factory=list)
    repairs: list[Problem] = field(default_factory=list)
    queries: list[_Query] = field(default_factory=list)


@dataclass
class SessionLogWalk:
    """Reads ``<session>`` elements into flat rows; collects rejections, repairs and topics.

    Parameters
    ----------
    source
        File name for messages.
    mode
        ``"strict"`` or ``"lenient"`` (a click on a missing rank is a problem, or skipped).
    topic_map
        ``{session: topic}`` from the session-topic map (may be empty).
    system_id, unknown_user
        The system of every session; the user of a session without ``userid``.
    doc_id, current_query, empty_serps, pages
        As in :func:`~sessionval.io.trec_session.load_trec_session`.
    """

    source: str
    mode: Mode
    topic_map: Mapping[str, str]
    system_id: str
    unknown_user: str
    doc_id: Literal["clueweb", "url"] = "clueweb"
    current_query: CurrentQuery = "if-results"
    empty_serps: Literal["keep", "drop"] = "keep"
    pages: Literal["merge", "separate"] = "merge"
    #: the flat columns, one list each (see :data:`FLAT_FIELDS`)
    rows: dict[str, list[object]] = field(default_factory=lambda: {k: [] for k in FLAT_FIELDS})
    #: file line of each row
    row_lines: list[int] = field(default_factory=list)
    #: problems of rejected sessions
    rejected: list[Problem] = field(default_factory=list)
    #: repairs in accepted sessions
    notes: list[Problem] = field(default_factory=list)
    #: topic -> (title, description) as the XML gives them
    topics: dict[str, tuple[str, str]] = field(default_factory=dict)
    #: logged queries with an empty result page (of every session read)
    n_empty: int = 0
    #: ``<session>`` elements rejected (each is one record, even when two share a num)
    n_rejected: int = 0
    _seen: set[str] = field(default_factory=set)

    def session(self, snode: XmlNode) -> None:
        """Read one ``<session>``: emit its rows, or reject it with its problems."""
        num = strip_id(snode.attrib.get("num", ""))
        sid = num or f"line{snode.line}"
        s = _Session(sid)
        if not num:
            self._problem(s, snode, "session@num", "session has no num attribute")
        if sid in self._seen:
            self._problem(s, snode, "session@num", "session num occurs twice", repr(sid))
        self._seen.add(sid)
        start = self._time(s, snode, "starttime")
        topic = self._topic(s, snode)
        user = strip_id(snode.attrib.get("userid", "")) or self.unknown_user
        for it in self._interactions(snode):
            self._interaction(s, it)
        if not s.queries and not s.problems:
            self._problem(s, snode, "interaction", f"session {sid} has no query")
        if s.problems:
            self.rejected.extend(s.problems)
            self.n_rejected += 1
            return
        self.notes.extend(s.repairs)
        self._emit(s, user, topic, start)

    def _time(self, s: _Session, node: XmlNode, attr: str) -> float:
        """The node's time attribute in seconds (NaN if unknown); a bad value is a problem."""
        raw = node.attrib.get(attr)
        why = check_seconds(raw)
        if why:
            self._problem(s, node, f"{node.tag}@{attr}", f"time {why}", repr(raw))
            return float("nan")
        return seconds(raw)

    def _problem(
        self, s: _Session, node: XmlNode | _Result, fld: str, msg: str, val: str = ""
    ) -> None:
        ProblemCollector(self.source, into=s.problems).add_at(
            node.line, fld, msg, val, record=s.sid
        )

    def _repair(
        self, s: _Session, node: XmlNode | _Result, fld: str, msg: str, val: str = ""
    ) -> None:
        ProblemCollector(self.source, into=s.repairs).add_at(node.line, fld, msg, val, record=s.sid)

    def _topic(self, s: _Session, snode: XmlNode) -> str:
        """The session's topic: ``<topic num>``, else the map's; a conflict is a problem."""
        tnode = snode.find("topic")
        xml_topic = strip_id(tnode.attrib.get("num", "")) if tnode is not None else ""
        map_topic = self.topic_map.get(s.sid, "")
        if xml_topic and map_topic and xml_topic != map_topic:
            self._problem(
                s,
                snode,
                "topic",
                f"topic {xml_topic} in the XML but {map_topic} in the session-topic map",
                repr(xml_topic),
            )
        topic = xml_topic or map_topic
        if not topic:
            where = (
                "no <topic num=...> in the XML"
                if not self.topic_map
                else "not in the session-topic map"
            )
            self._problem(s, snode, "topic", f"session {s.sid} has no topic ({where})")
        elif tnode is not None and topic not in self.topics:
            self.topics[topic] = (child_text(tnode, "title"), child_text(tnode, "desc"))
        return topic

    @staticmethod
    def _interactions(snode: XmlNode) -> list[XmlNode]:
        """``<interaction>`` elements in ``num`` order, then ``<currentquery>``.

        File order is kept when an interaction has no number.
        """
        items = snode.findall("interaction")
        nums = [seconds(it.attrib.get("num")) for it in items]
        if all(not np.isnan(n) for n in nums):
            items = [it for _, it in sorted(zip(nums, items, strict=True), key=lambda x: x[0])]
        cq = snode.find("currentquery")
        return [*items, *([cq] if cq is not None else [])]

    def _interaction(self, s: _Session, it: XmlNode) -> None:
        """One interaction: a query of its own, a page of the previous one, or skipped."""
        is_cq = it.tag == "currentquery"
        qnode = it.find("query")
        results = self._results(s, it)
        clicks = self._clicks(s, it, {r.rank for r in results})
        if is_cq and (
            self.current_query == "drop" or (self.current_query == "if-results" and not results)
        ):
            return
        if (
            self.pages == "merge"
            and it.attrib.get("type", "") == "page"
            and s.queries
            and not is_cq
        ):
            prev = s.queries[-1]
            shift = len(prev.results) if results and results[0].rank == 1 else 0
            for r in results:
                r.rank += shift
            merged = dict(prev.clicks)
            for k, v in clicks.items():
                merged[k + shift] = _add_clicks(merged.get(k + shift), v)
            prev.results, prev.clicks = self._dedupe(s, it, prev.results + results, merged)
            self._repair(s, it, "interaction", "result page merged into the previous query")
            return
        results, clicks = self._dedupe(s, it, results, clicks)
        if not results and not is_cq:
            self.n_empty += 1
            if self.empty_serps == "drop":
                self._repair(s, it, "results", "empty result page: query dropped")
                return
        text = qnode.text if qnode is not None else ""
        s.queries.append(_Query(it.line, text, self._time(s, it, "starttime"), results, clicks))

    def _results(self, s: _Session, it: XmlNode) -> list[_Result]:
        """The result list in rank order; a bad rank or a result without document is a problem."""
        found: list[_Result] = []
        node = it.find("results")
        for rnode in node.findall("result") if node is not None else []:
            rank_s = rnode.attrib.get("rank", "")
            rank = _parse_rank(rank_s)
            if rank is None:
                self._problem(
                    s,
                    rnode,
                    "result@rank",
                    f"rank must be an integer between 1 and {_MAX_RANK:,}",
                    repr(rank_s),
                )
                continue
            dnode = next((c for c in rnode.children if _DOC_TAG.match(c.tag)), None)
            url = child_text(rnode, "url")
            doc = url if self.doc_id == "url" else (dnode.text if dnode is not None else "")
            if not doc:
                self._problem(
                    s,
                    rnode,
                    "result",
                    f"result at rank {rank} has no document id "
                    f"({'<url>' if self.doc_id == 'url' else '<clueweb..id>'})",
                )
                continue
            title, snippet = child_text(rnode, "title"), child_text(rnode, "snippet")
            found.append(_Result(rank, doc, url, title, snippet, rnode.line))
        found.sort(key=lambda r: r.rank)
        return found

    def _dedupe(
        self,
        s: _Session,
        it: XmlNode,
        results: list[_Result],
        clicks: dict[int, tuple[int, float]],
    ) -> tuple[list[_Result], dict[int, tuple[int, float]]]:
        """Remove the later copies of a document listed twice in one (rank-ordered) list.

        Strict mode: each copy is a problem.  Lenient mode: the first (by rank) is
        kept, the later copy removed, the results below it move up one rank, and
        the repair is recorded; clicks on the removed copy count for the kept one.
        """
        kept: dict[str, _Result] = {}
        rank_map: dict[int, int] = {}  # rank in the list -> rank after the repair
        removed = 0
        out: list[_Result] = []
        for r in results:
            first = kept.get(r.doc)
            if first is None:
                kept[r.doc] = r
                rank_map.setdefault(r.rank, r.rank - removed)
                out.append(r)
                continue
            removed += 1
            rank_map.setdefault(r.rank, rank_map[first.rank])
            where = f"interaction {it.attrib.get('num', '?')}"
            if self.mode == "strict":
                self._problem(
                    s,
                    r,
                    "result",
                    f"document {r.doc} occurs twice in one result list "
                    f"(ranks {first.rank} and {r.rank}) in {where}",
                    repr(r.doc),
                )
                continue
            moved = (
                f"; its {clicks[r.rank][0]} click(s) counted for the kept copy"
                if r.rank in clicks
                else ""
            )
            self._repair(
                s,
                r,
                "result",
                f"document {r.doc} listed twice in one result list ({where}): kept at rank "
                f"{first.rank}, removed at rank {r.rank}; the results below moved up one rank"
                + moved,
                repr(r.doc),
            )
        if len(out) == len(results):
            return results, clicks
        new_clicks: dict[int, tuple[int, float]] = {}
        for k, v in clicks.items():
            nk = rank_map.get(k, k)
            new_clicks[nk] = _add_clicks(new_clicks.get(nk), v)
        for r in out:
            r.rank = rank_map[r.rank]
        return out, new_clicks

    def _clicks(self, s: _Session, it: XmlNode, ranks: set[int]) -> dict[int, tuple[int, float]]:
        """Clicks and dwell per rank of one interaction.

        A click on a rank without a result is a problem (strict) or skipped (lenient);
        a click time that is not a time is a problem.
        """
        clicks: dict[int, tuple[int, float]] = {}
        clicked = it.find("clicked")
        for cnode in clicked.findall("click") if clicked is not None else []:
            rn = cnode.find("rank")
            parsed = _parse_rank(rn.text or "") if rn is not None else None
            crank = -1 if parsed is None else parsed
            if crank not in ranks:
                msg = (
                    f"click on rank {rn.text if rn is not None else '?'} but the result "
                    f"list has {'no results' if not ranks else f'ranks 1..{max(ranks)}'}"
                )
                if self.mode == "strict":
                    self._problem(s, cnode, "click", msg)
                else:
                    self._repair(s, cnode, "click", msg + "; click skipped")
                continue
            dur = self._time(s, cnode, "endtime") - self._time(s, cnode, "starttime")
            clicks[crank] = _add_clicks(clicks.get(crank), (1, dur))
        return clicks

    def _emit(self, s: _Session, user: str, topic: str, start: float) -> None:
        """One row per result of each query (one row with empty result fields if none)."""
        for pos, q in enumerate(s.queries, start=1):
            query: dict[str, object] = {
                "session_id": s.sid,
                "user_id": user,
                "topic_id": topic,
                "system_id": self.system_id,
                "session_start": start,
                "query_pos": pos,
                "query_text": q.text,
                "query_secs": q.secs,
            }
            if not q.results:
                self._row(query, dict.fromkeys(_RESULT_FIELDS), q.line)
            for r in q.results:
                n_clicks, dwell = q.clicks.get(r.rank, (0, float("nan")))
                result: dict[str, object] = {
                    "rank": r.rank,
                    "doc_id": r.doc,
                    "url": r.url or None,
                    "title": r.title or None,
                    "snippet": r.snippet or None,
                    "clicks": n_clicks,
                    "dwell": dwell,
                }
                self._row(query, result, r.line)

    def _row(self, query: dict[str, object], result: dict[str, object], line: int) -> None:
        for name, value in (*query.items(), *result.items()):
            self.rows[name].append(value)
        self.row_lines.append(line)

"""TREC Session Track logs (2011-2014 XML layouts), session-topic maps and qrels.

Layout (all four years; the differences are noted)::

    <sessiontrack2013>
      <session num="1" starttime="0" [userid="..."]>           userid: 2014 only
        <topic num="1"><desc>...</desc></topic>                2011: <topic><title>, no num
        <interaction num="1" starttime="99.39" [type="..."]>   type="page": next result page
          <query>...</query>
          <results>
            <result rank="1"><url/><clueweb12id/><title/><snippet/></result>  clueweb09id in 2011-12
          </results>
          <clicked><click num="1" starttime="43.06" endtime="68.95"><rank>1</rank></click></clicked>
        </interaction>
        <currentquery starttime="170.4"><query>...</query>[<results>...]</currentquery>
      </session>
    </sessiontrack2013>

Times are seconds (``99.39``; 2013-2014, relative to the session start) or clock
times (``09:54:27.674``; 2011-2012); the logs carry no date, so they are placed on
``time_origin`` (default 1970-01-01 UTC).  Dwell is the sum of ``endtime -
starttime`` over a result's clicks (``endtime="NA"`` counts as unknown).

Every quirk is explicit (strict: error listing every case; lenient: the action in
the report):

* malformed XML (a bare ``&``, control characters, unclosed tags): strict raises
  :class:`~sessionval.errors.ParseError` with file:line:column and what is wrong;
  lenient escapes bare ``&`` as ``&amp;``, drops control characters and, if the
  document still does not parse, parses each ``<session>`` on its own and rejects
  only the broken ones;
* a document twice in one result list: the session is rejected (lenient);
* a click on a rank with no result: the click is skipped (lenient);
* an empty result page: kept as a query without results (``empty_serps="drop"``
  removes such queries), counted in :attr:`TrecSessionLoad.empty_serps`;
* a session whose topic is neither in the XML nor in the session-topic map, or
  whose map entry disagrees with the XML: the session is rejected (lenient);
* ``<currentquery>``: kept only when it has results (``current_query=``).

Qrels are per topic (``topic 0 doc grade``); the year's grade mapping
(:data:`TREC_SESSION_YEARS`) turns raw grades into the grades used for gains.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

import numpy as np
import pandas as pd

from ..errors import JudgmentError, ParseError, ValidationFailed
from ..frame import JudgmentFrame, SessionFrame
from ..models.judgments import GradeScale
from ..problems import LoadReport, Mode, Problem
from ..validate.flat import frame_from_flat
from ._xml import _child_text, _Node, _parse_by_session, _parse_tree, _repair, _XmlError
from .trec import read_qrels

__all__ = [
    "TREC_SESSION_YEARS",
    "UNKNOWN_USER",
    "CurrentQuery",
    "TrecSessionLoad",
    "TrecSessionYear",
    "load_trec_session",
    "map_grades",
    "read_session_topic_map",
]

UNKNOWN_USER: Final = "unknown"
"""``user_id`` of sessions whose log has no ``userid`` (2011-2013)."""

CurrentQuery = Literal["if-results", "keep", "drop"]


@dataclass(frozen=True)
class TrecSessionYear:
    """The grade scale of one track year and its raw-grade -> grade mapping.

    ``raw_scale`` holds the grades as they appear in the year's qrels;
    ``grade_map`` sends each raw grade to the grade used for gains, on ``scale``.
    """

    year: int
    raw_scale: GradeScale
    grade_map: Mapping[int, int]
    scale: GradeScale
    doc_tag: str


_RAW_WEB = {
    -2: "spam / junk",
    0: "not relevant",
    1: "relevant",
    2: "highly relevant",
    3: "key",
    4: "navigational",
}
_IDENTITY_SCALE = GradeScale(name="TREC Session -2..4", levels=_RAW_WEB)

#: per year: raw grade scale, mapping to gain grades and the scale of those grades.
#: 2012 follows the track's published mapping {-2:0, 0:0, 1:1, 4:2, 2:3, 3:4};
#: 2013 uses the raw grades -2..4 as they are (negative grades are left to the gain
#: scheme's negative-grade policy); 2011 and 2014 are taken as 2013 (identity).
TREC_SESSION_YEARS: Final[dict[int, TrecSessionYear]] = {
    2011: TrecSessionYear(
        2011, _IDENTITY_SCALE, {g: g for g in _RAW_WEB}, _IDENTITY_SCALE, "clueweb09id"
    ),
    2012: TrecSessionYear(
        2012,
        GradeScale(name="TREC Session 2012 raw", levels=_RAW_WEB),
        {-2: 0, 0: 0, 1: 1, 4: 2, 2: 3, 3: 4},
        GradeScale(
            name="TREC Session 2012 mapped",
            levels={
                0: "not relevant or spam",
                1: "relevant",
                2: "navigational",
                3: "highly relevant",
                4: "key",
            },
        ),
        "clueweb09id",
    ),
    2013: TrecSessionYear(
        2013, _IDENTITY_SCALE, {g: g for g in _RAW_WEB}, _IDENTITY_SCALE, "clueweb12id"
    ),
    2014: TrecSessionYear(
        2014, _IDENTITY_SCALE, {g: g for g in _RAW_WEB}, _IDENTITY_SCALE, "clueweb12id"
    ),
}


def map_grades(
    grades: np.ndarray, mapping: Mapping[int, int], *, source: str = "qrels"
) -> np.ndarray:
    """Map raw grades through ``mapping`` (vectorised lookup table).

    Raises
    ------
    JudgmentError
        A raw grade the mapping does not cover.

    Examples
    --------
    >>> map_grades(np.array([-2, 0, 1, 4, 2, 3]), TREC_SESSION_YEARS[2012].grade_map).tolist()
    [0, 0, 1, 2, 3, 4]
    """
    g = np.asarray(grades, dtype=np.int64)
    keys = np.array(sorted(mapping), dtype=np.int64)
    vals = np.array([mapping[int(k)] for k in keys], dtype=np.int64)
    pos = np.searchsorted(keys, g)
    pos_c = np.clip(pos, 0, len(keys) - 1)
    ok = keys[pos_c] == g
    if not ok.all():
        bad = sorted(set(g[~ok].tolist()))
        raise JudgmentError(
            f"{source}: raw grade(s) {', '.join(map(str, bad))} not covered by the grade mapping "
            f"(covered: {', '.join(map(str, keys.tolist()))})"
        )
    return vals[pos_c]


# ---------------------------------------------------------------------------------------------
# a small expat tree that remembers line/column of every element


# ---------------------------------------------------------------------------------------------
# times


_CLOCK: Final = re.compile(r"^(\d{1,2}):(\d{2}):(\d{2}(?:\.\d*)?)$")


def _seconds(value: str | None) -> float:
    """Seconds from a number (``99.39``) or a clock time (``09:54:27.67``); NaN if unknown."""
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


# ---------------------------------------------------------------------------------------------
# session-topic map


def read_session_topic_map(path: str | os.PathLike[str]) -> dict[str, str]:
    r"""Read ``sessiontopicmap.txt``: ``session<whitespace>topic`` per line.

    Raises
    ------
    ParseError
        A line without two fields, or a session listed twice with different topics.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "map.txt"
    >>> _ = p.write_text("1\t1\n2\t6\n")
    >>> read_session_topic_map(p)
    {'1': '1', '2': '6'}
    """
    p = Path(path)
    if not p.exists():
        raise ParseError(f"{p}: no such file")
    out: dict[str, str] = {}
    for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), start=1):
        parts = line.split()
        if not parts:
            continue
        if len(parts) != 2:
            raise ParseError(f"{p}:{i}: expected 'session topic', got {line.strip()!r}")
        s, t = parts
        if s in out and out[s] != t:
            raise ParseError(f"{p}:{i}: session {s} mapped to topic {t} but earlier to {out[s]}")
        out[s] = t
    return out


# ---------------------------------------------------------------------------------------------
# loader


@dataclass(frozen=True)
class TrecSessionLoad:
    """Result of :func:`load_trec_session`.

    Attributes
    ----------
    frame
        The sessions (``qrels_id`` = topic).
    judgments
        The qrels with mapped grades on ``year.scale`` (``None`` without qrels).
    report
        Sessions read, accepted, rejected and why.
    year
        The track year's grade scale and mapping (``None`` when unknown and no qrels).
    repairs
        What lenient mode changed without rejecting a session (escaped ``&``,
        skipped clicks, dropped empty queries, ...).
    empty_serps
        Number of logged queries with an empty result page.
    unjudged_topics
        Topics of accepted sessions that have no qrels.
    """

    frame: SessionFrame
    judgments: JudgmentFrame | None
    report: LoadReport
    year: TrecSessionYear | None
    repairs: tuple[Problem, ...] = ()
    empty_serps: int = 0
    unjudged_topics: tuple[str, ...] = ()


_DOC_TAG: Final = re.compile(r"^(clueweb\d*id|docid|docno)$")


def load_trec_session(
    xml_path: str | os.PathLike[str],
    *,
    qrels: str | os.PathLike[str] | None = None,
    topic_map: str | os.PathLike[str] | Mapping[str, str] | None = None,
    year: int | None = None,
    grade_map: Literal["year", "raw"] | Mapping[int, int] = "year",
    mode: Mode = "strict",
    doc_id: Literal["clueweb", "url"] = "clueweb",
    current_query: CurrentQuery = "if-results",
    empty_serps: Literal["keep", "drop"] = "keep",
    pages: Literal["merge", "separate"] = "merge",
    system_id: str | None = None,
    time_origin: str = "1970-01-01T00:00:00Z",
    max_problems: int = 50,
) -> TrecSessionLoad:
    """Load a TREC Session Track log (+ optional session-topic map and qrels).

    Parameters
    ----------
    xml_path
        ``sessiontrackYYYY.xml``.
    qrels
        Topic qrels (``topic 0 doc grade``).
    topic_map
        ``sessiontopicmap.txt`` or a dict ``{session: topic}``; needed when the XML's
        ``<topic>`` has no ``num`` (2011), checked against it otherwise.
    year
        Track year (default: from the root tag ``<sessiontrackYYYY>``).
    grade_map
        ``"year"``: the year's mapping (:data:`TREC_SESSION_YEARS`); ``"raw"``: keep the
        raw grades; or an explicit ``{raw: grade}`` mapping.
    mode
        ``"strict"``: every problem raises (one error listing all of them);
        ``"lenient"``: repair or reject as described in the module docstring.
    doc_id
        Document id from the ``clueweb..id`` element or from the ``url``.
    current_query
        ``"if-results"`` (default): keep ``<currentquery>`` only when it has results;
        ``"keep"``: always (as a query without results if none); ``"drop"``: never.
    empty_serps
        ``"keep"``: an empty result page is a query without results; ``"drop"``: remove it.
    pages
        ``"merge"``: an ``<interaction type="page">`` (next page of the same query)
        extends the previous query's list; ``"separate"``: it is a query of its own.
    system_id
        System id of every session (default ``"trec-session-<year>"``).
    time_origin
        Date the logs' times are placed on.
    max_problems
        Limit of problems listed in strict mode.

    Returns
    -------
    TrecSessionLoad
    """
    p = Path(xml_path)
    src = str(p)
    try:
        raw = p.read_bytes()
    except FileNotFoundError as exc:
        raise ParseError(f"{p}: no such file") from exc
    repairs: list[Problem] = []
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        if mode == "strict":
            raise ParseError(
                f"{p}:{line}: not valid UTF-8 (byte {raw[exc.start : exc.start + 1]!r})"
                "; save the file as UTF-8 or use mode='lenient'"
            ) from exc
        text = raw.decode("utf-8", errors="replace")
        repairs.append(
            Problem(
                src,
                f"line {line}",
                "",
                "bytes not valid UTF-8 replaced by U+FFFD "
                f"(first at this line; {text.count(chr(0xFFFD))} in all)",
            )
        )
    rejected: list[Problem] = []
    try:
        root = _parse_tree(text)
        session_nodes = root.findall("session")
        root_tag = root.tag
    except _XmlError as exc:
        if mode == "strict":
            raise ParseError(
                f"{p}:{exc.line}:{exc.col}: malformed XML: {exc.what}"
                " (mode='lenient' repairs bare '&' and skips broken sessions)"
            ) from exc
        text, notes = _repair(text, src)
        repairs.extend(notes)
        try:
            root = _parse_tree(text)
            session_nodes = root.findall("session")
            root_tag = root.tag
        except _XmlError as exc2:
            repairs.append(
                Problem(
                    src,
                    f"line {exc2.line}:{exc2.col}",
                    "",
                    f"document not well-formed ({exc2.what}); each <session> parsed on its own",
                )
            )
            session_nodes, rejected, root_tag = _parse_by_session(text, src)
    m = re.match(r"sessiontrack(\d{4})$", root_tag)
    yr = year if year is not None else (int(m.group(1)) if m else None)
    spec = TREC_SESSION_YEARS.get(yr) if yr is not None else None

    tmap: dict[str, str] = {}
    if topic_map is not None:
        tmap = (
            dict(topic_map) if isinstance(topic_map, Mapping) else read_session_topic_map(topic_map)
        )

    origin = pd.Timestamp(time_origin)
    if origin.tzinfo is None:
        origin = origin.tz_localize("UTC")
    sys_id = system_id or (f"trec-session-{yr}" if yr is not None else "trec-session")
    cols: dict[str, list[object]] = {
        k: []
        for k in (
            "session_id",
            "user_id",
            "topic_id",
            "system_id",
            "session_start",
            "query_pos",
            "query_text",
            "query_secs",
            "rank",
            "doc_id",
            "url",
            "title",
            "snippet",
            "clicks",
            "dwell",
        )
    }
    row_lines: list[int] = []
    topics_seen: dict[str, tuple[str, str]] = {}
    n_empty = 0
    seen_ids: set[str] = set()

    for snode in session_nodes:
        sid = snode.attrib.get("num", "").strip()
        sprobs: list[Problem] = []
        srepairs: list[Problem] = []

        def prob(
            node: _Node,
            fld: str,
            msg: str,
            val: str = "",
            _sp: list[Problem] = sprobs,
            _sid: str = sid,
        ) -> None:
            _sp.append(Problem(src, f"line {node.line}", fld, msg, val, record=_sid))

        if not sid:
            sid = f"line{snode.line}"
            prob(snode, "session@num", "session has no num attribute")
        if sid in seen_ids:
            prob(snode, "session@num", "session num occurs twice", repr(sid))
        seen_ids.add(sid)
        tnode = snode.find("topic")
        xml_topic = tnode.attrib.get("num", "").strip() if tnode is not None else ""
        map_topic = tmap.get(sid, "")
        if xml_topic and map_topic and xml_topic != map_topic:
            prob(
                snode,
                "topic",
                f"topic {xml_topic} in the XML but {map_topic} in the session-topic map",
                repr(xml_topic),
            )
        topic = xml_topic or map_topic
        if not topic:
            where = "no <topic num=...> in the XML" if not tmap else "not in the session-topic map"
            prob(snode, "topic", f"session {sid} has no topic ({where})")
        elif tnode is not None and topic not in topics_seen:
            title, desc = (_child_text(tnode, tag) for tag in ("title", "desc"))
            topics_seen[topic] = (title, desc)
        user = snode.attrib.get("userid", "").strip() or UNKNOWN_USER
        s_start = _seconds(snode.attrib.get("starttime"))

        # queries: (node, text, seconds, [(rank, doc, url, title, snippet, line)], clicks)
        queries: list[
            tuple[
                _Node,
                str,
                float,
                list[tuple[int, str, str, str, str, int]],
                dict[int, tuple[int, float]],
            ]
        ] = []
        items = snode.findall("interaction")
        nums = [_seconds(it.attrib.get("num")) for it in items]
        if all(not np.isnan(n) for n in nums):
            items = [it for _, it in sorted(zip(nums, items, strict=True), key=lambda x: x[0])]
        cq = snode.find("currentquery")
        cq_items = [cq] if cq is not None else []
        for it in [*items, *cq_items]:
            is_cq = it.tag == "currentquery"
            qnode = it.find("query")
            qtext = qnode.text if qnode is not None else ""
            res_list: list[tuple[int, str, str, str, str, int]] = []
            results = it.find("results")
            seen_docs: dict[str, int] = {}
            for rnode in results.findall("result") if results is not None else []:
                rank_s = rnode.attrib.get("rank", "")
                try:
                    rank = int(rank_s)
                except ValueError:
                    prob(rnode, "result@rank", "rank must be an integer", repr(rank_s))
                    continue
                dnode = next((c for c in rnode.children if _DOC_TAG.match(c.tag)), None)
                unode = rnode.find("url")
                url = unode.text if unode is not None else ""
                doc = url if doc_id == "url" else (dnode.text if dnode is not None else "")
                if not doc:
                    prob(
                        rnode,
                        "result",
                        f"result at rank {rank} has no document id "
                        f"({'<url>' if doc_id == 'url' else '<clueweb..id>'})",
                    )
                    continue
                if doc in seen_docs:
                    prob(
                        rnode,
                        "result",
                        f"document {doc} occurs twice in one result list "
                        f"(ranks {seen_docs[doc]} and {rank})",
                        repr(doc),
                    )
                seen_docs[doc] = rank
                tn, sn = rnode.find("title"), rnode.find("snippet")
                res_list.append(
                    (
                        rank,
                        doc,
                        url,
                        tn.text if tn is not None else "",
                        sn.text if sn is not None else "",
                        rnode.line,
                    )
                )
            res_list.sort(key=lambda r: r[0])
            ranks = {r[0] for r in res_list}
            clicks: dict[int, tuple[int, float]] = {}
            clicked = it.find("clicked")
            for cnode in clicked.findall("click") if clicked is not None else []:
                rn = cnode.find("rank")
                try:
                    crank = int(rn.text) if rn is not None else -1
                except ValueError:
                    crank = -1
                if crank not in ranks:
                    msg = (
                        f"click on rank {rn.text if rn is not None else '?'} but the result "
                        f"list has {'no results' if not ranks else f'ranks 1..{max(ranks)}'}"
                    )
                    if mode == "strict":
                        prob(cnode, "click", msg)
                    else:
                        srepairs.append(
                            Problem(
                                src,
                                f"line {cnode.line}",
                                "click",
                                msg + "; click skipped",
                                record=sid,
                            )
                        )
                    continue
                dur = _seconds(cnode.attrib.get("endtime")) - _seconds(
                    cnode.attrib.get("starttime")
                )
                n, d = clicks.get(crank, (0, float("nan")))
                if not np.isnan(dur):
                    d = dur if np.isnan(d) else d + dur
                clicks[crank] = (n + 1, d)
            if is_cq and (
                current_query == "drop" or (current_query == "if-results" and not res_list)
            ):
                continue
            if pages == "merge" and it.attrib.get("type", "") == "page" and queries and not is_cq:
                prev = queries[-1]
                shift = len(prev[3]) if res_list and res_list[0][0] == 1 else 0
                prev[3].extend((r[0] + shift, *r[1:]) for r in res_list)
                prev[4].update({k + shift: v for k, v in clicks.items()})
                srepairs.append(
                    Problem(
                        src,
                        f"line {it.line}",
                        "interaction",
                        "result page merged into the previous query",
                        record=sid,
                    )
                )
                continue
            if not res_list and not is_cq:
                n_empty += 1
                if empty_serps == "drop":
                    srepairs.append(
                        Problem(
                            src,
                            f"line {it.line}",
                            "results",
                            "empty result page: query dropped",
                            record=sid,
                        )
                    )
                    continue
            queries.append((it, qtext, _seconds(it.attrib.get("starttime")), res_list, clicks))
        if not queries and not sprobs:
            prob(snode, "interaction", f"session {sid} has no query")
        if sprobs:
            rejected.extend(sprobs)
            continue
        repairs.extend(srepairs)
        for pos, (qn, qtext, qsecs, res_list, clicks) in enumerate(queries, start=1):
            rows: list[tuple[int, str, str, str, str, int] | None] = list(res_list) or [None]
            for r in rows:
                cols["session_id"].append(sid)
                cols["user_id"].append(user)
                cols["topic_id"].append(topic)
                cols["system_id"].append(sys_id)
                cols["session_start"].append(s_start)
                cols["query_pos"].append(pos)
                cols["query_text"].append(qtext)
                cols["query_secs"].append(qsecs)
                if r is None:
                    for c in ("rank", "doc_id", "url", "title", "snippet", "clicks", "dwell"):
                        cols[c].append(None)
                    row_lines.append(qn.line)
                    continue
                cols["rank"].append(r[0])
                cols["doc_id"].append(r[1])
                cols["url"].append(r[2] or None)
                cols["title"].append(r[3] or None)
                cols["snippet"].append(r[4] or None)
                n_c, dwell = clicks.get(r[0], (0, float("nan")))
                cols["clicks"].append(n_c)
                cols["dwell"].append(dwell)
                row_lines.append(r[5])

    if rejected and mode == "strict":
        raise ValidationFailed(rejected[:max_problems], truncated=len(rejected) > max_problems)
    pre = LoadReport(source=src)
    rejected_ids = {pr.record for pr in rejected}
    pre.records_read = len(rejected_ids)
    pre.sessions_rejected = len(rejected_ids)
    pre.problems = list(rejected)
    if not cols["session_id"]:
        raise ValidationFailed(
            rejected[:max_problems] or [Problem(src, "", "", f"no session found in {p.name}")]
        )

    flat = pd.DataFrame({k: v for k, v in cols.items() if k not in ("session_start", "query_secs")})
    flat["rank"] = pd.array(flat["rank"].tolist(), dtype="Int64")
    flat["clicks"] = pd.array(flat["clicks"].tolist(), dtype="Int64")
    flat["dwell"] = pd.array(flat["dwell"].tolist(), dtype="Float64")
    for c in ("url", "title", "snippet", "query_text"):
        flat[c] = flat[c].astype("string")
    secs = np.asarray(cols["query_secs"], dtype=np.float64)
    flat["query_time"] = origin + pd.to_timedelta(secs, unit="s")
    ssecs = np.asarray(cols["session_start"], dtype=np.float64)
    flat["session_start"] = origin + pd.to_timedelta(ssecs, unit="s")
    frame, report = frame_from_flat(
        flat,
        source=src,
        mode=mode,
        max_problems=max_problems,
        location_kind="line",
        row_locations=np.asarray(row_lines, dtype=np.int64),
    )
    pre.merge(report)
    pre.rows_read = report.rows_read

    judgments: JudgmentFrame | None = None
    unjudged: tuple[str, ...] = ()
    if qrels is not None:
        judgments = _read_session_qrels(qrels, spec=spec, grade_map=grade_map)
        judged = set(judgments.table["topic_id"].astype(str))
        unjudged = tuple(
            t for t in frame.sessions["topic_id"].cat.categories.astype(str) if t not in judged
        )
    topics = frame.topics.copy()
    tid = topics["topic_id"].astype(str)
    topics["title"] = pd.Series([topics_seen.get(t, ("", ""))[0] for t in tid], dtype="string")
    topics["description"] = pd.Series(
        [topics_seen.get(t, ("", ""))[1] for t in tid], dtype="string"
    )
    topics["judged"] = ~tid.isin(unjudged).to_numpy() if qrels is not None else True
    frame = dataclasses.replace(frame, topics=topics)
    return TrecSessionLoad(
        frame=frame,
        judgments=judgments,
        report=pre,
        year=spec,
        repairs=tuple(repairs),
        empty_serps=n_empty,
        unjudged_topics=unjudged,
    )


def _read_session_qrels(
    path: str | os.PathLike[str],
    *,
    spec: TrecSessionYear | None,
    grade_map: Literal["year", "raw"] | Mapping[int, int],
) -> JudgmentFrame:
    raw = read_qrels(path)
    g = raw.table["grade"].to_numpy(np.int64)
    if grade_map == "raw":
        scale = spec.raw_scale if spec is not None else raw.scale
        if spec is not None:
            off = ~np.isin(g, np.asarray(scale.grades))
            if off.any():
                raise JudgmentError(
                    f"{path}: grade(s) {sorted(set(g[off].tolist()))} not on the {scale.name} "
                    f"scale (allowed: {', '.join(map(str, scale.grades))})"
                )
        return JudgmentFrame(table=raw.table, scale=scale, source=str(path))
    if grade_map == "year":
        if spec is None:
            raise JudgmentError(
                f"{path}: track year unknown, so no grade mapping applies; pass year=2011..2014, "
                "grade_map='raw' or an explicit mapping"
            )
        mapping, scale = spec.grade_map, spec.scale
    else:
        mapping = dict(grade_map)
        scale = GradeScale.from_grades(sorted(set(mapping.values())), name="mapped")
    mapped = map_grades(g, mapping, source=str(path))
    table = raw.table.copy()
    table["grade"] = mapped.astype(np.int16)
    return JudgmentFrame(table=table, scale=scale, source=str(path))

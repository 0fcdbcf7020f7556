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
* the file's encoding: a byte-order mark, else ``encoding=``, else the XML
  declaration's ``encoding``, else UTF-8; a byte not valid there is a located
  error (lenient: replaced by U+FFFD, noted);
* a time that is not seconds, a clock time or ``NA`` (``inf``, ``1e30``, negative,
  ``nan``): an error naming the element and the value (lenient: the session is
  rejected);
* a document twice in one result list: an error (strict); lenient mode keeps the
  first occurrence, removes the later one so the results below it move up one
  rank, and lists each repair (session, interaction, document, both ranks) in
  ``report.repairs``; a click on the removed copy counts for the kept one;
* a click on a rank with no result: the click is skipped (lenient);
* an empty result page: kept as a query without results (``empty_serps="drop"``
  removes such queries), counted in the result's ``details["empty_serps"]``;
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
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal

import numpy as np
import pandas as pd

from ..errors import JudgmentError, ParseError, ValidationFailed, raise_if_any
from ..frame import JudgmentFrame, LoadedStudy, SessionFrame
from ..models.judgments import GradeScale
from ..problems import LoadReport, Mode, Problem
from ..validate.collect import ProblemCollector
from ..validate.flat import frame_from_flat
from ..validate.references import unjudged_keys
from ._xml import XmlError, XmlNode, decode_xml, parse_by_session, parse_tree, repair_xml
from .header import study_header
from .text import check_encoding, read_input_bytes, read_input_text
from .trec import read_qrels
from .trec_session_log import CurrentQuery, SessionLogWalk

__all__ = [
    "TREC_SESSION_YEARS",
    "UNKNOWN_USER",
    "CurrentQuery",
    "TrecSessionYear",
    "is_trec_session_input",
    "load_trec_session",
    "map_grades",
    "read_session_topic_map",
]

UNKNOWN_USER: Final = "unknown"
"""``user_id`` of sessions whose log has no ``userid`` (2011-2013)."""


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
# session-topic map


def read_session_topic_map(
    path: str | os.PathLike[str], *, encoding: str | None = None
) -> dict[str, str]:
    r"""Read ``sessiontopicmap.txt``: ``session<whitespace>topic`` per line.

    Parameters
    ----------
    path
        The map (gzip-compressed or not).
    encoding
        Text encoding (default UTF-8; a byte-order mark wins).

    Raises
    ------
    ParseError
        Bytes not valid in the encoding; a line without two fields, or a session
        listed twice with different topics (every such line, in one error).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "map.txt"
    >>> _ = p.write_text("1\t1\n2\t6\n")
    >>> read_session_topic_map(p)
    {'1': '1', '2': '6'}
    """
    p = Path(path)
    text = read_input_text(p, encoding)
    out: dict[str, str] = {}
    errors: list[str] = []
    for i, line in enumerate(re.split(r"\r\n?|\n", text), start=1):
        parts = line.split()
        if not parts:
            continue
        if len(parts) != 2:
            errors.append(f"{p}:{i}: expected 'session topic' (two fields), got {line.strip()!r}")
            continue
        s, t = parts
        if s in out and out[s] != t:
            errors.append(f"{p}:{i}: session {s} mapped to topic {t} but earlier to {out[s]}")
            continue
        out[s] = t
    if errors:
        more = f"\n  ... and {len(errors) - 50} more" if len(errors) > 50 else ""
        raise ParseError("\n  ".join(errors[:50]) + more)
    return out


# ---------------------------------------------------------------------------------------------
# loader: read and repair the XML, walk the sessions, build the flat table, judgments, report


def is_trec_session_input(path: Path) -> bool:
    """A ``.xml`` file (the Session Track logs are ``sessiontrackYYYY.xml``)."""
    return path.is_file() and path.suffix.lower() == ".xml"


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
    progress: Callable[[str], None] | None = None,
    encoding: str | None = None,
) -> LoadedStudy:
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
    progress
        Called with each loading phase's name (:data:`sessionval.validate.flat.LOAD_PHASES`).
    encoding
        Text encoding of the XML, the session-topic map and the qrels when they
        have no byte-order mark (default: the XML declaration's, else UTF-8).

    Returns
    -------
    LoadedStudy
        Judgments keyed by topic (``qrels_key="topic"``) on the year's ``scale``;
        ``notes`` lists the lenient repairs, ``unjudged`` the topics of accepted
        sessions without qrels; ``report.repairs`` the repairs made to accepted
        sessions (also in ``notes``).  ``details``: ``year`` (the :class:`TrecSessionYear`,
        ``None`` when unknown) and ``empty_serps`` (logged empty result pages).
    """
    src = str(xml_path)
    check_encoding(encoding)
    text, notes = decode_xml(read_input_bytes(xml_path), src, encoding, lenient=mode == "lenient")
    root_tag, session_nodes, rejected = _parse_sessions(text, src, mode, notes, max_problems)
    n_unreadable = len(rejected)  # one problem per unreadable <session> element
    m = re.match(r"sessiontrack(\d{4})$", root_tag)
    yr = year if year is not None else (int(m.group(1)) if m else None)
    spec = TREC_SESSION_YEARS.get(yr) if yr is not None else None
    log = SessionLogWalk(
        source=src,
        mode=mode,
        topic_map=_topic_map(topic_map, encoding),
        system_id=system_id or (f"trec-session-{yr}" if yr is not None else "trec-session"),
        unknown_user=UNKNOWN_USER,
        doc_id=doc_id,
        current_query=current_query,
        empty_serps=empty_serps,
        pages=pages,
    )
    for snode in session_nodes:
        log.session(snode)
    rejected.extend(log.rejected)
    notes.extend(log.notes)
    if not log.row_lines:
        raise ValidationFailed(
            rejected[:max_problems] or _no_session(src),
            truncated=len(rejected) > max_problems,
        )

    def build() -> tuple[SessionFrame, LoadReport]:
        loaded = frame_from_flat(
            _flat_table(log, time_origin),
            source=src,
            mode=mode,
            max_problems=max_problems,
            location_kind="line",
            row_locations=np.asarray(log.row_lines, dtype=np.int64),
            progress=progress,
        )
        return loaded.frame, loaded.report

    if mode == "strict" and rejected:
        # one pass: the problems the table checks find in the other sessions join these
        try:
            build()
        except ValidationFailed as exc:
            rejected.extend(exc.problems)
        raise_if_any(rejected, limit=max_problems)
    # books balance by <session> element: each unreadable or rejected one is one record
    n_rejected = n_unreadable + log.n_rejected
    report = LoadReport(
        source=src,
        records_read=n_rejected,
        sessions_rejected=n_rejected,
        problems=list(rejected),
        repairs=list(log.notes),
    )
    frame, inner = build()
    report.merge(inner)
    judgments = None
    if qrels is not None:
        judgments = _read_session_qrels(qrels, spec=spec, grade_map=grade_map, encoding=encoding)
    unjudged = unjudged_keys(frame, judgments)
    frame = _with_topic_texts(frame, log.topics, unjudged if judgments is not None else None)
    return LoadedStudy(
        study=study_header(frame, judgments=judgments, name=Path(src).stem),
        frame=frame,
        judgments=judgments,
        report=report,
        notes=tuple(notes),
        qrels_key="topic",
        unjudged=unjudged,
        details={"year": spec, "empty_serps": log.n_empty},
    )


def _parse_sessions(
    text: str, src: str, mode: Mode, notes: list[Problem], max_problems: int
) -> tuple[str, list[XmlNode], list[Problem]]:
    """Parse the XML: ``(root tag, <session> nodes, problems of unreadable sessions)``.

    Strict mode raises on malformed XML, listing every broken ``<session>`` when
    the error is inside sessions.  Lenient mode repairs it (bare ``&``, control
    characters; one note per kind of repair) and, if it still does not parse,
    parses each ``<session>`` on its own and rejects the broken ones.
    """
    try:
        root = parse_tree(text)
        return root.tag, root.findall("session"), []
    except XmlError as exc:
        if mode == "strict":
            # every broken <session> in one error, after the first problem the parser met
            _, broken, _ = parse_by_session(text, src)
            listed = ""
            if len(broken) > 1:
                more = len(broken) - max_problems
                listed = (
                    f"\n{len(broken)} <session> elements do not parse on their own:\n  "
                    + "\n  ".join(str(p) for p in broken[:max_problems])
                    + (f"\n  ... and {more} more" if more > 0 else "")
                )
            raise ParseError(
                f"{src}:{exc.line}:{exc.col}: malformed XML: {exc.what}"
                " (mode='lenient' repairs bare '&' and skips broken sessions)" + listed
            ) from exc
    text, repairs = repair_xml(text, src)
    notes.extend(repairs)
    try:
        root = parse_tree(text)
        return root.tag, root.findall("session"), []
    except XmlError as exc:
        ProblemCollector(src, into=notes).add_at(
            exc.line,
            "",
            f"document not well-formed ({exc.what}); each <session> parsed on its own",
            column=exc.col,
        )
    session_nodes, rejected, root_tag = parse_by_session(text, src)
    return root_tag, session_nodes, rejected


def _no_session(src: str) -> list[Problem]:
    """The problem of a file without any session."""
    problems = ProblemCollector(src)
    problems.add_at(None, "", f"no session found in {Path(src).name}")
    return problems.problems


def _topic_map(
    topic_map: str | os.PathLike[str] | Mapping[str, str] | None, encoding: str | None
) -> dict[str, str]:
    if topic_map is None:
        return {}
    if isinstance(topic_map, Mapping):
        return dict(topic_map)
    return read_session_topic_map(topic_map, encoding=encoding)


def _flat_table(log: SessionLogWalk, time_origin: str) -> pd.DataFrame:
    """The walked rows as a flat table, times in seconds placed on ``time_origin``."""
    cols = log.rows
    try:
        origin = pd.Timestamp(time_origin)
    except (ValueError, OverflowError) as exc:
        raise ParseError(f"time_origin {time_origin!r} is not a date and time ({exc})") from None
    if origin.tzinfo is None:
        origin = origin.tz_localize("UTC")
    flat = pd.DataFrame({k: v for k, v in cols.items() if k not in ("session_start", "query_secs")})
    flat["rank"] = pd.array(flat["rank"].tolist(), dtype="Int64")
    flat["clicks"] = pd.array(flat["clicks"].tolist(), dtype="Int64")
    flat["dwell"] = pd.array(flat["dwell"].tolist(), dtype="Float64")
    for c in ("url", "title", "snippet", "query_text"):
        flat[c] = flat[c].astype("string")
    for name, secs in (
        ("query_time", cols["query_secs"]),
        ("session_start", cols["session_start"]),
    ):
        x = np.asarray(secs, dtype=np.float64)
        latest = float(np.nanmax(x)) if np.isfinite(x).any() else 0.0
        room = (pd.Timestamp.max.tz_localize("UTC") - origin).total_seconds()
        if not pd.Timestamp.min.tz_localize("UTC") <= origin or latest > room:
            raise ParseError(
                f"time_origin {time_origin!r} plus the logged times (up to {latest:g} s) is "
                "outside 1677-09-21 .. 2262-04-11, the representable times; choose another "
                "time_origin"
            )
        # to the nearest nanosecond: 494.521612 s is 494521611999.99994 ns as a float, and
        # to_timedelta(unit="s") truncates it 1 ns low
        flat[name] = origin + pd.to_timedelta(np.round(x * 1e9), unit="ns")
    return flat


def _with_topic_texts(
    frame: SessionFrame, texts: Mapping[str, tuple[str, str]], unjudged: tuple[str, ...] | None
) -> SessionFrame:
    """Topic titles and descriptions from the XML; ``judged`` is False for unjudged topics."""
    topics = frame.topics.copy()
    tid = topics["topic_id"].astype(str)
    topics["title"] = pd.Series([texts.get(t, ("", ""))[0] for t in tid], dtype="string")
    topics["description"] = pd.Series([texts.get(t, ("", ""))[1] for t in tid], dtype="string")
    topics["judged"] = ~tid.isin(unjudged).to_numpy() if unjudged is not None else True
    return dataclasses.replace(frame, topics=topics)


def _read_session_qrels(
    path: str | os.PathLike[str],
    *,
    spec: TrecSessionYear | None,
    grade_map: Literal["year", "raw"] | Mapping[int, int],
    encoding: str | None,
) -> JudgmentFrame:
    # read_qrels takes encoding= once the TREC readers share the decoder (issue 10)
    enc: dict[str, Any] = {"encoding": encoding} if encoding is not None else {}
    if grade_map == "raw":  # the boundary checks the grades against the year's raw scale
        return read_qrels(path, scale=spec.raw_scale if spec is not None else None, **enc)
    raw = read_qrels(path, **enc)
    g = raw.table["grade"].to_numpy(np.int64)
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

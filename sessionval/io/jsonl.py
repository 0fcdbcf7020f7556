"""JSON-lines session logs: one :class:`~sessionval.models.Session` per line.

Each line is parsed and validated through the Pydantic model (so a bad line is
reported with its line number and the dotted path of the field), then the
accepted sessions pass through the same vectorised rules as every other input
(:func:`sessionval.validate.flat.frame_from_flat`).  The file is streamed: decoded a
chunk at a time, and validated a batch of sessions at a time, each batch kept only
as compact columns (:mod:`sessionval.io.jsonl_columns`).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

import numpy as np
import numpy.typing as npt
import pandas as pd
from pydantic import ValidationError

from ..errors import ParseError, ValidationFailed, raise_if_any
from ..frame import LoadedStudy
from ..models.judgments import GradeScale
from ..models.session import REPAIR_LATER, Session
from ..problems import LoadReport, Mode, Problem, line_list
from ..progress import NO_PROGRESS, ProgressLike, as_progress
from ..validate.collect import ProblemCollector
from ..validate.flat import frame_from_flat, loaded_without_judgments
from .jsonl_columns import JsonlBatches
from .text import CHUNK_BYTES, count_lines, iter_input_text

__all__ = [
    "iter_sessions",
    "load_jsonl",
]

#: deepest nesting of arrays and objects a JSON line may have (a session needs 4)
MAX_DEPTH: Final = 64
INT64_MIN: Final = -(2**63)
INT64_MAX: Final = 2**63 - 1
# a JSON string (escapes included), blanked out before brackets are counted
_STRINGS = re.compile(r'"(?:[^"\\]|\\.)*"')
# 19 digits in a row: the only lines that may hold an integer outside int64
_LONG_DIGITS = re.compile(r"\d{19}")
#: a time whose fraction goes beyond microseconds (seconds, a point, 7 digits or more)
_SUB_MICRO = re.compile(r":\d\d[.,]\d{7}")
#: the longest time text with at most 6 fraction digits and no zone offset
#: (``2020-01-01T00:00:00.123456Z``): only longer ones may hold more digits
_PLAIN_TIME = len("2020-01-01T00:00:00.123456Z")

_INNER_PATH = re.compile(r"^((?:results|queries)\[\d+\]\.\w+): (.*)$", re.DOTALL)


def _field_path(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _problems_from_validation(
    exc: ValidationError, problems: ProblemCollector, line: int, record: str
) -> None:
    """One problem per error of the model on ``line`` (none repeats another)."""
    errors = exc.errors(include_url=False)
    # a list whose items failed is reported again as too short (pydantic counts the valid
    # ones): that second message only repeats the first, and says nothing to fix
    failed_in = {tuple(e["loc"][: i + 1]) for e in errors for i in range(len(e["loc"]) - 1)}
    for err in errors:
        if err["type"] == "too_short" and tuple(err["loc"]) in failed_in:
            continue
        value = err.get("input")
        shown = "" if isinstance(value, dict | list) else repr(value)
        field = _field_path(tuple(err["loc"]))
        msg = str(err["msg"]).removeprefix("Value error, ")
        if err["type"] == "too_short" and field == "queries":
            msg, shown = "a session needs at least one query: list its queries, or leave it out", ""
        # model validators prefix their message with the sub-path they checked
        inner = _INNER_PATH.match(msg)
        if inner:
            field = f"{field}.{inner.group(1)}" if field else inner.group(1)
            msg, shown = inner.group(2), ""
        problems.add_at(line, field, msg, shown, record=record)


def _read_lines(
    path: Path, encoding: str | None = None, *, chunk_bytes: int = CHUNK_BYTES
) -> Iterator[tuple[int, str]]:
    r"""``(line number, line)`` of each non-blank line; lines end at ``\n`` (or ``\r\n``) only.

    U+2028, U+2029, U+0085, vertical tab and form feed are legal inside JSON strings
    (and the toolkit's own writers emit them), so they never end a line, unlike
    :meth:`str.splitlines`.  The file is decoded ``chunk_bytes`` at a time
    (:func:`~sessionval.io.text.iter_input_text`): only one chunk's lines, and a
    line that spans chunks, are held at once.
    """
    lineno = 0
    blank = True  # no line with text so far
    pending: list[str] = []  # the start of a line that continues in the next chunk
    for text in iter_input_text(path, encoding, chunk_bytes=chunk_bytes):
        rows = text.split("\n")
        if len(rows) == 1:
            pending.append(text)
            continue
        pending.append(rows[0])
        rows[0] = "".join(pending)
        pending = [rows.pop()]
        for row in rows:
            lineno += 1
            if row.strip():
                blank = False
                yield lineno, row.removesuffix("\r")
        del rows
    last = "".join(pending)
    if last.strip():
        yield lineno + 1, last.removesuffix("\r")
    elif blank:
        raise ParseError(f"{path}: file is empty (expected one JSON session per line)")


def _nesting(line: str, *, keep_columns: bool = True) -> tuple[int, int]:
    """Deepest nesting of ``[``/``{`` in a JSON line outside strings, and the column it is reached.

    Vectorised (one regular expression and a NumPy cumulative sum); called only for
    lines with more than :data:`MAX_DEPTH` brackets in all.  Without ``keep_columns``
    each string becomes ``""`` (no Python call per string): the depth is right, the
    column is not.
    """
    if keep_columns:
        bare = _STRINGS.sub(lambda m: "_" * len(m.group()), line)
    else:
        bare = _STRINGS.sub('""', line)
    codes = np.frombuffer(bare.encode("utf-32-le"), dtype=np.uint32)
    step = (
        (codes == ord("[")).astype(np.int64)
        + (codes == ord("{"))
        - (codes == ord("]"))
        - (codes == ord("}"))
    )
    depth = np.cumsum(step)
    at = int(np.argmax(depth)) if depth.size else 0
    return (int(depth[at]) if depth.size else 0), at + 1


def _too_deep(line: str) -> str | None:
    """A message when the line nests deeper than :data:`MAX_DEPTH` (checked before parsing)."""
    if line.count("[") + line.count("{") <= MAX_DEPTH:
        return None  # cannot be deeper: no scan needed
    if _nesting(line, keep_columns=False)[0] <= MAX_DEPTH:
        return None
    depth, col = _nesting(line)
    return (
        f"JSON nested {depth} levels deep (column {col}); at most {MAX_DEPTH} levels are "
        "allowed (a session with results needs 5)"
    )


def _big_ints(obj: Any, path: str = "") -> Iterator[tuple[str, int]]:
    """``(field path, value)`` of every integer outside int64 in a parsed JSON value."""
    if isinstance(obj, bool):
        return
    if isinstance(obj, int):
        if not INT64_MIN <= obj <= INT64_MAX:
            yield path, obj
    elif isinstance(obj, dict):
        for k, v in obj.items():
            yield from _big_ints(v, f"{path}.{k}" if path else str(k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _big_ints(v, f"{path}[{i}]")


def iter_sessions(
    path: str | os.PathLike[str],
    *,
    report: LoadReport | None = None,
    encoding: str | None = None,
    chunk_bytes: int = CHUNK_BYTES,
) -> Iterator[tuple[int, Session]]:
    """Yield ``(line number, Session)`` for each valid line; record problems in ``report``.

    Invalid lines (bad JSON, model violations, repeated session ids) are not
    yielded; each is added to ``report.problems`` and counted as a rejected record.

    Parameters
    ----------
    path
        The ``.jsonl`` file.
    report
        Collects counts and problems; a fresh one is used when ``None``.
    encoding
        Text encoding (default UTF-8; a byte-order mark wins; gzip is read).
    chunk_bytes
        The file is read and decoded this many bytes at a time.
    """
    p = Path(path)
    rep = report if report is not None else LoadReport(source=str(p))
    seen: dict[str, int] = {}
    problems = ProblemCollector(str(p), into=rep.problems)
    for lineno, session in _parse_lines(p, rep, encoding, False, chunk_bytes):
        if session.session_id in seen:
            _repeated(problems, lineno, session.session_id, seen[session.session_id])
            rep.sessions_rejected += 1
            continue
        seen[session.session_id] = lineno
        yield lineno, session


def _repeated(problems: ProblemCollector, lineno: int, sid: str, first: int) -> None:
    """The problem of a later line that repeats the session id first read on line ``first``."""
    problems.add_at(
        lineno,
        "session_id",
        f"duplicate session id (first on line {first}); session ids must be unique",
        repr(sid),
        record=sid,
    )


def _parse_lines(
    p: Path, rep: LoadReport, encoding: str | None, repair: bool, chunk_bytes: int
) -> Iterator[tuple[int, Session]]:
    """``(line, Session)`` of each line the model accepts; the others go to ``rep``.

    Session ids are not compared here (see :func:`iter_sessions` and :func:`load_jsonl`).
    ``repair`` (lenient mode): the model lets a document repeated in one result list
    through, for the repair of the flat table (:mod:`sessionval.validate.repair`).
    """
    context = REPAIR_LATER if repair else None
    problems = ProblemCollector(str(p), into=rep.problems)
    for lineno, line in _read_lines(p, encoding, chunk_bytes=chunk_bytes):
        rep.records_read += 1
        deep = _too_deep(line)
        if deep is not None:
            problems.add_at(lineno, "", deep)
            rep.sessions_rejected += 1
            continue
        try:
            obj: Any = json.loads(line)
        except RecursionError:  # unreachable below MAX_DEPTH; kept as a guard
            problems.add_at(lineno, "", f"JSON nested too deeply (> {MAX_DEPTH})")
            rep.sessions_rejected += 1
            continue
        except json.JSONDecodeError as exc:
            truncated = exc.pos >= len(line.rstrip()) - 1 or exc.msg.startswith("Unterminated")
            hint = "; the line looks truncated" if truncated else ""
            if "\r" in line:  # CR-only line ends: several sessions on one "line"
                hint = (
                    "; the line holds a carriage return (\\r): JSON-lines lines end with \\n "
                    "(or \\r\\n), not with \\r alone; convert the line endings"
                )
            problems.add_at(lineno, "", f"invalid JSON: {exc.msg} (column {exc.colno}){hint}")
            rep.sessions_rejected += 1
            continue
        record = str(obj.get("session_id", "")) if isinstance(obj, dict) else ""
        if not isinstance(obj, dict):
            problems.add_at(
                lineno, "", "must be a JSON object (one session per line)", type(obj).__name__
            )
            rep.sessions_rejected += 1
            continue
        big = list(_big_ints(obj)) if _LONG_DIGITS.search(line) else []
        if big:
            for field, value in big:
                problems.add_at(
                    lineno,
                    field,
                    f"integer out of range: integers must be from {INT64_MIN} to {INT64_MAX}",
                    str(value),  # JSON integers have one spelling: this is the text in the file
                    record=record,
                )
            rep.sessions_rejected += 1
            continue
        try:
            session = Session.model_validate(obj, context=context)
        except ValidationError as exc:
            _problems_from_validation(exc, problems, lineno, record)
            rep.sessions_rejected += 1
            continue
        if _sub_micro(obj):  # rare: a time the model's datetimes would cut
            session = with_nanoseconds(session, obj)
        yield lineno, session


def _long_time(value: Any) -> bool:
    return isinstance(value, str) and len(value) > _PLAIN_TIME and bool(_SUB_MICRO.search(value))


def _sub_micro(obj: dict[str, Any]) -> bool:
    """Whether a time of the parsed line has digits beyond microseconds.

    A look at each time's length (a search of the whole line cost a fifth of its
    parse); only a time longer than one with six digits is searched.
    """
    if _long_time(obj.get("start_time")) or _long_time(obj.get("end_time")):
        return True
    queries = obj.get("queries")
    return isinstance(queries, list) and any(
        _long_time(q.get("time")) for q in queries if isinstance(q, dict)
    )


def _exact_time(raw: Any, parsed: Any) -> Any:
    """``raw`` as a nanosecond ``Timestamp`` when it has digits beyond microseconds."""
    if parsed is None or not _long_time(raw):
        return parsed
    try:
        return pd.Timestamp(raw.strip()).tz_convert("UTC")
    except (ValueError, TypeError, OverflowError):  # the model accepted it: keep its reading
        return parsed


def with_nanoseconds(session: Session, obj: dict[str, Any]) -> Session:
    """``session`` whose times written with nanoseconds keep them.

    The model's times are Python datetimes, which stop at microseconds; a
    :class:`pandas.Timestamp` is a datetime that keeps nanoseconds, so these few times
    (:func:`_sub_micro` finds the rare line that has one) reach the frame whole.
    ``obj`` is the parsed line the model was validated from.
    """
    raw_q = {
        q.get("position"): q.get("time") for q in obj.get("queries") or () if isinstance(q, dict)
    }
    queries = tuple(
        q.model_copy(update={"time": _exact_time(raw_q.get(q.position), q.time)})
        for q in session.queries
    )
    return session.model_copy(
        update={
            "start_time": _exact_time(obj.get("start_time"), session.start_time),
            "end_time": _exact_time(obj.get("end_time"), session.end_time),
            "queries": queries,
        }
    )


#: sessions validated per batch by :func:`load_jsonl` before only their columns are kept
_BATCH: Final = 500


def _reject_repeated_ids(batches: JsonlBatches, report: LoadReport) -> npt.NDArray[np.bool_] | None:
    """Reject every line of a session id that more than one line gives; the sessions kept.

    Which of the lines is right cannot be known, so none is kept: the same rule as
    a flat table (where the rows of both merge into one inconsistent session) and
    TREC Session XML; each line is one rejected record.  The ids are compared once
    all batches are read (vectorised), so no Python object per session is held
    meanwhile.

    Returns
    -------
    numpy.ndarray of bool or None
        Which accepted sessions to keep; ``None`` when no id is repeated.
    """
    ids = batches.session_ids()
    dup = ids.duplicated(keep=False).to_numpy(dtype=bool)
    later: set[int] = set()
    if dup.any():
        at = np.flatnonzero(dup)
        lines = batches.session_lines()[at]
        first: dict[str, int] = {}
        repeated: dict[str, list[int]] = {}
        problems = ProblemCollector(report.source, into=report.problems)
        for sid, line in zip(ids.iloc[at].tolist(), lines.tolist(), strict=True):
            if sid in first:
                repeated[sid].append(line)
                later.add(line)
                _repeated(problems, line, sid, first[sid])
            else:
                first[sid], repeated[sid] = line, []
        for sid, lines_after in repeated.items():
            problems.add_at(
                first[sid],
                "session_id",
                f"session id repeated on line(s) {line_list(lines_after)}; "
                "every line of a repeated session id is rejected",
                repr(sid),
                record=sid,
            )
        report.sessions_rejected += len(at)
        report.problems.sort(key=lambda q: _line_number(q.location))
    return ~dup if later else None


def _whole_file(source: str, message: str) -> list[Problem]:
    """The one problem of a file as a whole (no line)."""
    problems = ProblemCollector(source)
    problems.add_at(None, "", message)
    return problems.problems


def _line_number(location: str) -> int:
    """The number in ``"line 17"`` (0 for another kind of location)."""
    number = location.removeprefix("line ")
    return int(number) if number.isdigit() else 0


def load_jsonl(
    path: str | os.PathLike[str],
    *,
    mode: Mode = "strict",
    max_problems: int = 50,
    user_grade_scale: GradeScale | None = None,
    progress: ProgressLike = None,
    raise_problems: bool = True,
    encoding: str | None = None,
    batch_size: int | None = None,
    chunk_bytes: int = CHUNK_BYTES,
) -> LoadedStudy:
    """Load a JSON-lines session log into a validated :class:`SessionFrame`.

    The file is read as a stream: ``chunk_bytes`` of it are decoded at a time, and
    each batch of ``batch_size`` sessions is validated through the model, then kept
    only as compact columns (:class:`~sessionval.io.jsonl_columns.JsonlBatches`)
    before the next batch is parsed; the flat-table rules then run over those
    columns (:func:`frame_from_flat`).  Peak memory is about the final frame plus one
    batch plus the columns kept.

    Parameters
    ----------
    path
        ``sessions.jsonl``: one nested session per line (``schemas/session.schema.json``).
    mode
        ``"strict"`` raises :class:`~sessionval.errors.ValidationFailed` listing up to
        ``max_problems`` problems; ``"lenient"`` rejects the bad sessions and reports them.
    max_problems
        Limit of problems listed in strict mode.
    user_grade_scale
        Scale the searchers' own grades must be on.
    progress
        A :class:`~sessionval.progress.Progress` told the lines parsed (out of the
        file's, counted first when the bar is shown) and then each flat-table phase
        (see :func:`frame_from_flat`), or a callback called with those phases' names.
    raise_problems
        ``False``: strict mode returns the sessions without problems and a report
        listing every problem, for a caller that raises them with its own (see
        :func:`frame_from_flat`).
    encoding
        Text encoding (default UTF-8; a byte-order mark wins; gzip is read).
    batch_size
        Sessions validated per batch (default 500).
    chunk_bytes
        Bytes of the file (after decompression) read and decoded at a time.

    Returns
    -------
    LoadedStudy
        The frame, the report (its ``records_read`` counts non-blank lines and equals
        accepted + rejected), a header naming the study after the file (a study
        folder's ``study.json`` is read by :func:`~sessionval.io.study.load_study`) and
        no judgments.
    """
    p = Path(path)
    report = LoadReport(source=str(p))
    size = max(1, batch_size or _BATCH)
    batches = JsonlBatches()
    batch: list[Session] = []
    lines: list[int] = []
    shown = as_progress(progress)
    # the phase-name callback hears the flat-table phases only, as before counts came
    parsing = shown if shown.counting else NO_PROGRESS
    total = count_lines(p, encoding) if shown.counting else None
    parsing.start("parsing lines", total, "lines")
    done = 0  # lines counted on the bar, each batch's when it is kept
    for lineno, session in _parse_lines(p, report, encoding, mode == "lenient", chunk_bytes):
        batch.append(session)
        lines.append(lineno)
        if len(batch) == size:
            batches.add(batch, lines)  # the batch's models are dropped: only columns stay
            batch.clear()
            lines.clear()
            parsing.advance(lineno - done)
            done = lineno
    last = lines[-1] if lines else done  # the last line kept: the count without a total
    if batch:
        batches.add(batch, lines)
    parsing.advance((total if total is not None else last) - done)
    parsing.finish()
    del batch, lines
    keep = _reject_repeated_ids(batches, report)
    if mode == "strict" and raise_problems:
        raise_if_any(report.problems, limit=max_problems)
    if not (sum(batches.batch_sessions) if keep is None else int(keep.sum())):
        raise ValidationFailed(
            report.problems[:max_problems] or _whole_file(str(p), "no valid session in the file")
        )
    columns = batches.columns(str(p), keep)
    del batches
    loaded = frame_from_flat(
        columns,
        source=str(p),
        mode=mode,
        max_problems=max_problems,
        user_grade_scale=user_grade_scale,
        location_kind="line",
        row_locations=columns.row_lines(),
        progress=progress,
        raise_problems=raise_problems,
    )
    frame, inner = loaded.frame, loaded.report
    report.rows_read = inner.rows_read  # the removed copies of repaired lists included
    report.sessions_accepted = inner.sessions_accepted
    report.sessions_rejected += inner.sessions_rejected
    report.problems.extend(inner.problems)
    report.repairs.extend(inner.repairs)
    return loaded_without_judgments(frame, report, p.name.split(".")[0])

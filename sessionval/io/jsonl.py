"""JSON-lines session logs: one :class:`~sessionval.models.Session` per line.

Each line is parsed and validated through the Pydantic model (so a bad line is
reported with its line number and the dotted path of the field), then all
accepted sessions are flattened and passed through the same vectorised rules as
every other input (:func:`sessionval.validate.flat.frame_from_flat`).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Final, cast

import numpy as np
import numpy.typing as npt
import pandas as pd
from pydantic import ValidationError

from ..errors import ParseError, ValidationFailed, raise_if_any
from ..frame import FLAT_COLUMNS, SessionFrame
from ..models.judgments import GradeScale
from ..models.session import Session
from ..problems import LoadReport, Mode, Problem
from ..validate.flat import frame_from_flat
from .jsonl_repair import remove_repeated_documents
from .text import read_input_text

__all__ = [
    "iter_sessions",
    "load_jsonl",
    "sessions_to_flat",
]

#: flat column -> field of the Session / Query / Result model, where the names differ
_MODEL_FIELD: Final = {
    "session_start": "start_time",
    "session_end": "end_time",
    "query_pos": "position",
    "query_text": "text",
    "query_time": "time",
}

#: deepest nesting of arrays and objects a JSON line may have (a session needs 4)
MAX_DEPTH: Final = 64
INT64_MIN: Final = -(2**63)
INT64_MAX: Final = 2**63 - 1
# a JSON string (escapes included), blanked out before brackets are counted
_STRINGS = re.compile(r'"(?:[^"\\]|\\.)*"')
# 19 digits in a row: the only lines that may hold an integer outside int64
_LONG_DIGITS = re.compile(r"\d{19}")

_INNER_PATH = re.compile(r"^((?:results|queries)\[\d+\]\.\w+): (.*)$", re.DOTALL)


def _field_path(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _problems_from_validation(
    exc: ValidationError, source: str, line: int, record: str
) -> list[Problem]:
    probs = []
    for err in exc.errors(include_url=False):
        value = err.get("input")
        shown = "" if isinstance(value, dict | list) else repr(value)
        field = _field_path(tuple(err["loc"]))
        msg = str(err["msg"]).removeprefix("Value error, ")
        # model validators prefix their message with the sub-path they checked
        inner = _INNER_PATH.match(msg)
        if inner:
            field = f"{field}.{inner.group(1)}" if field else inner.group(1)
            msg, shown = inner.group(2), ""
        probs.append(Problem(source, f"line {line}", field, msg, shown, record))
    return probs


def _read_lines(path: Path, encoding: str | None = None) -> Iterator[tuple[int, str]]:
    r"""``(line number, line)`` of each non-blank line; lines end at ``\n`` (or ``\r\n``) only.

    U+2028, U+2029, U+0085, vertical tab and form feed are legal inside JSON strings
    (and the toolkit's own writers emit them), so they never end a line, unlike
    :meth:`str.splitlines`.
    """
    text = read_input_text(path, encoding)
    if not text.strip():
        raise ParseError(f"{path}: file is empty (expected one JSON session per line)")
    for i, row in enumerate(text.split("\n"), start=1):
        if row.strip():
            yield i, row.removesuffix("\r")


def _nesting(line: str) -> tuple[int, int]:
    """Deepest nesting of ``[``/``{`` in a JSON line outside strings, and the column it is reached.

    Vectorised (one regular expression and a NumPy cumulative sum); called only for
    lines with more than :data:`MAX_DEPTH` brackets in all.
    """
    bare = _STRINGS.sub(lambda m: "_" * len(m.group()), line)  # keep columns
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
    depth, col = _nesting(line)
    if depth <= MAX_DEPTH:
        return None
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
    repair: bool = False,
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
    repair
        Lenient mode: a document listed twice in one result list keeps its first
        copy and the repair is listed in ``report.repairs``
        (:func:`~sessionval.io.jsonl_repair.remove_repeated_documents`) instead of
        rejecting the session.
    """
    p = Path(path)
    rep = report if report is not None else LoadReport(source=str(p))
    seen: dict[str, int] = {}
    for lineno, line in _read_lines(p, encoding):
        rep.records_read += 1
        deep = _too_deep(line)
        if deep is not None:
            rep.problems.append(Problem(str(p), f"line {lineno}", "", deep))
            rep.sessions_rejected += 1
            continue
        try:
            obj: Any = json.loads(line)
        except RecursionError:  # unreachable below MAX_DEPTH; kept as a guard
            rep.problems.append(
                Problem(str(p), f"line {lineno}", "", f"JSON nested too deeply (> {MAX_DEPTH})")
            )
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
            rep.problems.append(
                Problem(
                    str(p),
                    f"line {lineno}",
                    "",
                    f"invalid JSON: {exc.msg} (column {exc.colno}){hint}",
                )
            )
            rep.sessions_rejected += 1
            continue
        record = str(obj.get("session_id", "")) if isinstance(obj, dict) else ""
        if not isinstance(obj, dict):
            rep.problems.append(
                Problem(
                    str(p),
                    f"line {lineno}",
                    "",
                    "must be a JSON object (one session per line)",
                    type(obj).__name__,
                )
            )
            rep.sessions_rejected += 1
            continue
        big = list(_big_ints(obj)) if _LONG_DIGITS.search(line) else []
        if big:
            rep.problems.extend(
                Problem(
                    str(p),
                    f"line {lineno}",
                    field,
                    f"integer out of range: integers must be from {INT64_MIN} to {INT64_MAX}",
                    str(value),  # JSON integers have one spelling: this is the text in the file
                    record,
                )
                for field, value in big
            )
            rep.sessions_rejected += 1
            continue
        repairs = remove_repeated_documents(obj, str(p), lineno) if repair else []
        try:
            session = Session.model_validate(obj)
        except ValidationError as exc:
            rep.problems.extend(_problems_from_validation(exc, str(p), lineno, record))
            rep.sessions_rejected += 1
            continue
        if session.session_id in seen:
            rep.problems.append(
                Problem(
                    str(p),
                    f"line {lineno}",
                    "session_id",
                    f"duplicate session id (first on line {seen[session.session_id]}); "
                    "session ids must be unique",
                    repr(session.session_id),
                    session.session_id,
                )
            )
            rep.sessions_rejected += 1
            continue
        seen[session.session_id] = lineno
        rep.repairs.extend(repairs)  # listed only for a session that is kept
        yield lineno, session


def sessions_to_flat(
    sessions: list[Session], lines: list[int] | None = None
) -> tuple[pd.DataFrame, np.ndarray]:
    """Flatten sessions to the flat table layout; returns the table and each row's source line.

    The columns are those of :data:`~sessionval.frame.FLAT_COLUMNS`, each read from
    the session, the query or the result its level names.
    """
    cols: dict[str, list[Any]] = {c.name: [] for c in FLAT_COLUMNS}
    by_level = {
        level: [
            (cols[c.name], _MODEL_FIELD.get(c.name, c.name))
            for c in FLAT_COLUMNS
            if c.level == level
        ]
        for level in ("session", "query", "result")
    }
    rating_names = sorted({k for s in sessions for k in s.ratings})
    ratings: dict[str, list[float | None]] = {k: [] for k in rating_names}
    row_lines: list[int] = []
    for k, s in enumerate(sessions):
        line = lines[k] if lines is not None else k + 1
        s_values = [(out, getattr(s, name)) for out, name in by_level["session"]]
        s_ratings = [s.ratings.get(name) for name in rating_names]
        for q in s.queries:
            q_values = [(out, getattr(q, name)) for out, name in by_level["query"]]
            for r in q.results or (None,):
                for out, value in s_values:
                    out.append(value)
                for out, value in q_values:
                    out.append(value)
                for out, name in by_level["result"]:
                    out.append(None if r is None else getattr(r, name))
                for name, value in zip(rating_names, s_ratings, strict=True):
                    ratings[name].append(value)
                row_lines.append(line)
    flat = pd.DataFrame(cols)
    for name, vals in ratings.items():
        flat[f"rating_{name}"] = pd.array(vals, dtype="Float64").astype("float64")
    for c in ("query_pos", "rank", "clicks", "scan_depth", "user_grade"):
        flat[c] = pd.array(flat[c].tolist(), dtype="Int64")
    flat["dwell"] = pd.array(flat["dwell"].tolist(), dtype="Float64")
    for c in ("session_start", "session_end", "query_time"):
        flat[c] = pd.to_datetime(flat[c], utc=True)
    return flat, np.asarray(row_lines, dtype=np.int64)


#: sessions validated and flattened per batch by :func:`load_jsonl`
_BATCH: Final = 500


def _compact(flat: pd.DataFrame) -> Any:
    """A flattened batch as an Arrow table, text columns dictionary-encoded."""
    import pyarrow as pa
    import pyarrow.compute as pc

    table = pa.Table.from_pandas(flat, preserve_index=False)
    for i, field in enumerate(table.schema):
        if pa.types.is_string(field.type) or (
            pa.types.is_null(field.type) and field.name in _TEXT_COLUMNS
        ):
            column = table.column(i).cast(pa.string())
            table = table.set_column(i, field.name, pc.dictionary_encode(column))
    return table


#: dtypes of the flat columns :func:`sessions_to_flat` makes, besides text
_DTYPES: Final = {
    **dict.fromkeys(("query_pos", "rank", "clicks", "scan_depth", "user_grade"), "Int64"),
    "dwell": "Float64",
    **dict.fromkeys(("session_start", "session_end", "query_time"), "datetime64[ns, UTC]"),
}
#: flat columns holding text (ids, query text, url, title, snippet)
_TEXT_COLUMNS: Final = frozenset(c.name for c in FLAT_COLUMNS if c.kind in ("id", "text"))


def _flat_frame(tables: list[Any]) -> pd.DataFrame:
    """The batches as one flat DataFrame: text as categoricals, integers as masked arrays."""
    import pyarrow as pa

    from ..validate.sources import dictionary_to_categorical

    table = pa.concat_tables(tables, promote_options="permissive")
    out: dict[str, Any] = {}
    names = table.column_names
    ratings = sorted(n for n in names if n.startswith("rating_"))  # as one batch orders them
    for name in [n for n in names if not n.startswith("rating_")] + ratings:
        col = table.column(name)
        dtype = _DTYPES.get(name, "float64" if name.startswith("rating_") else "object")
        if pa.types.is_dictionary(col.type):
            out[name] = pd.Series(dictionary_to_categorical(col))
        elif pa.types.is_null(col.type):  # no batch had a value
            out[name] = pd.Series([None] * len(col), dtype=cast(Any, dtype))
        elif dtype in ("Int64", "Float64"):
            # masked, as sessions_to_flat made them: no float64 copy of an integer column
            out[name] = pd.Series(pd.array(col.to_numpy(zero_copy_only=False), dtype=dtype))
        else:
            out[name] = col.to_pandas()
    return pd.DataFrame(out)


def _line_number(location: str) -> int:
    """The number in ``"line 17"`` (0 for another kind of location)."""
    number = location.removeprefix("line ")
    return int(number) if number.isdigit() else 0


def _reject_repeated_ids(
    tables: list[Any],
    row_lines: list[npt.NDArray[np.int64]],
    first_line: dict[str, int],
    report: LoadReport,
) -> tuple[list[Any], list[npt.NDArray[np.int64]]]:
    """Reject the first line of a session id that a later line repeats, as well.

    Which of the lines is right cannot be known, so none is kept: the same rule as
    a flat table (where the rows of both merge into one inconsistent session) and
    TREC Session XML; each line is one rejected record.  The first lines are
    already flattened into batches, so their rows are filtered out of them.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    repeated: dict[str, list[int]] = {}
    for prob in report.problems:
        if prob.field == "session_id" and prob.record in first_line:  # later lines, rejected
            repeated.setdefault(prob.record, []).append(_line_number(prob.location))
    if not repeated:
        return tables, row_lines
    for sid, later in repeated.items():
        report.problems.append(
            Problem(
                report.source,
                f"line {first_line[sid]}",
                "session_id",
                f"session id repeated on line(s) {', '.join(map(str, later))}; "
                "every line of a repeated session id is rejected",
                repr(sid),
                sid,
            )
        )
        report.sessions_rejected += 1
    report.problems.sort(key=lambda q: _line_number(q.location))
    drop = pa.array(sorted(repeated), type=pa.string())
    kept_tables, kept_lines = [], []
    for table, rows in zip(tables, row_lines, strict=True):
        ids = pc.cast(table.column("session_id"), pa.string())
        keep = pc.invert(pc.is_in(ids, value_set=drop))
        if table.num_rows and pc.any(keep).as_py():
            kept_tables.append(table.filter(keep))
            kept_lines.append(rows[keep.to_numpy(zero_copy_only=False)])
    return kept_tables, kept_lines


def load_jsonl(
    path: str | os.PathLike[str],
    *,
    mode: Mode = "strict",
    max_problems: int = 50,
    user_grade_scale: GradeScale | None = None,
    progress: Callable[[str], None] | None = None,
    raise_problems: bool = True,
    encoding: str | None = None,
) -> tuple[SessionFrame, LoadReport]:
    """Load a JSON-lines session log into a validated :class:`SessionFrame`.

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
        Called with each loading phase's name (see :func:`frame_from_flat`).
    raise_problems
        ``False``: strict mode returns the sessions without problems and a report
        listing every problem, for a caller that raises them with its own (see
        :func:`frame_from_flat`).
    encoding
        Text encoding (default UTF-8; a byte-order mark wins; gzip is read).

    Returns
    -------
    (SessionFrame, LoadReport)
        The report's ``records_read`` counts non-blank lines and equals accepted + rejected.
    """
    p = Path(path)
    report = LoadReport(source=str(p))
    # sessions are flattened a batch at a time into compact Arrow columns (text
    # dictionary-encoded), so the models of one batch, never of the whole log, are held
    batch: list[Session] = []
    lines: list[int] = []
    tables: list[Any] = []
    row_lines: list[npt.NDArray[np.int64]] = []
    first_line: dict[str, int] = {}  # accepted session id -> its line, for repeated ids

    def flush() -> None:
        if batch:
            flat, rows = sessions_to_flat(batch, lines)
            tables.append(_compact(flat))
            row_lines.append(rows)
            batch.clear()
            lines.clear()

    for lineno, session in iter_sessions(
        p, report=report, encoding=encoding, repair=mode == "lenient"
    ):
        batch.append(session)
        lines.append(lineno)
        first_line[session.session_id] = lineno
        if len(batch) == _BATCH:
            flush()
    flush()
    tables, row_lines = _reject_repeated_ids(tables, row_lines, first_line, report)
    if mode == "strict" and raise_problems:
        raise_if_any(report.problems, limit=max_problems)
    if not tables:
        raise ValidationFailed(
            report.problems[:max_problems]
            or [Problem(str(p), "", "", "no valid session in the file")]
        )
    flat = _flat_frame(tables)
    tables.clear()
    frame, inner = frame_from_flat(
        flat,
        source=str(p),
        mode=mode,
        max_problems=max_problems,
        user_grade_scale=user_grade_scale,
        location_kind="line",
        row_locations=np.concatenate(row_lines),
        progress=progress,
        raise_problems=raise_problems,
    )
    report.rows_read = inner.rows_read + len(report.repairs)  # the removed copies were read
    report.sessions_accepted = inner.sessions_accepted
    report.sessions_rejected += inner.sessions_rejected
    report.problems.extend(inner.problems)
    return frame, report

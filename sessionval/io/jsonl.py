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
import pandas as pd
from pydantic import ValidationError

from ..errors import ParseError, ValidationFailed, raise_if_any
from ..frame import FLAT_COLUMNS, SessionFrame
from ..models.judgments import GradeScale
from ..models.session import Session
from ..problems import LoadReport, Mode, Problem
from ..validate.flat import frame_from_flat

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


def _read_lines(path: Path) -> Iterator[tuple[int, str]]:
    if not path.exists():
        raise ParseError(f"{path}: no such file")
    data = path.read_bytes()
    if not data.strip():
        raise ParseError(f"{path}: file is empty (expected one JSON session per line)")
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ParseError(
            f"{path}:{line}: not valid UTF-8 "
            f"(byte {exc.start}: {data[exc.start : exc.start + 1]!r});"
            " JSON-lines logs must be UTF-8"
        ) from exc
    for i, row in enumerate(text.splitlines(), start=1):
        if row.strip():
            yield i, row


def iter_sessions(
    path: str | os.PathLike[str], *, report: LoadReport | None = None
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
    """
    p = Path(path)
    rep = report if report is not None else LoadReport(source=str(p))
    seen: dict[str, int] = {}
    for lineno, line in _read_lines(p):
        rep.records_read += 1
        try:
            obj: Any = json.loads(line)
        except json.JSONDecodeError as exc:
            truncated = exc.pos >= len(line.rstrip()) - 1 or exc.msg.startswith("Unterminated")
            hint = "; the line looks truncated" if truncated else ""
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


def load_jsonl(
    path: str | os.PathLike[str],
    *,
    mode: Mode = "strict",
    max_problems: int = 50,
    user_grade_scale: GradeScale | None = None,
    progress: Callable[[str], None] | None = None,
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
    row_lines: list[np.ndarray] = []

    def flush() -> None:
        if batch:
            flat, rows = sessions_to_flat(batch, lines)
            tables.append(_compact(flat))
            row_lines.append(rows)
            batch.clear()
            lines.clear()

    for lineno, session in iter_sessions(p, report=report):
        batch.append(session)
        lines.append(lineno)
        if len(batch) == _BATCH:
            flush()
    flush()
    if mode == "strict":
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
    )
    report.rows_read = inner.rows_read
    report.sessions_accepted = inner.sessions_accepted
    report.sessions_rejected += inner.sessions_rejected
    report.problems.extend(inner.problems)
    return frame, report

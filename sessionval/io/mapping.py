"""Column-mapped flat tables: any one-row-per-result table onto the flat layout.

A mapping names, for each column of the flat layout (``docs/formats.md``), the
column of the user's table that holds it, as on the command line::

    --map session=SessionID,query_pos=Qno,rank=Rank,doc=URL,user=User,topic=Topic,system='lab'

Targets may use the short aliases ``session, user, topic, system, doc, query,
text, time, start, end`` (see :data:`TARGET_ALIASES`) or any flat column name,
including ``rating_<name>`` and ``qrels_id``.  A quoted source (``'lab'``) is a
constant for every row.  An unknown target or a source column missing from the
table is an :class:`~sessionval.errors.InputFormatError` that lists what is
allowed / available.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Final

import numpy as np
import pandas as pd

from ..errors import InputFormatError
from ..frame import FLAT_COLUMNS, LoadedStudy, QrelsKey, SessionFrame
from ..problems import Mode
from ..validate.flat import frame_from_flat
from ..validate.references import unjudged_keys
from .column_map import constant, parse_pairs
from .flat import read_flat_table
from .header import study_header
from .trec import read_judgments

__all__ = [
    "TARGET_ALIASES",
    "apply_flat_qrels_id",
    "apply_mapping",
    "load_mapped_table",
    "parse_mapping",
    "with_qrels_key",
]

#: short target names accepted in a mapping, and the flat column each one means
TARGET_ALIASES: Final[dict[str, str]] = {
    "session": "session_id",
    "user": "user_id",
    "topic": "topic_id",
    "system": "system_id",
    "doc": "doc_id",
    "query": "query_id",
    "text": "query_text",
    "time": "query_time",
    "start": "session_start",
    "end": "session_end",
    "pos": "query_pos",
}

#: every column a mapping may target besides ``rating_<name>``: the flat layout's
_TARGETS: Final = tuple(c.name for c in FLAT_COLUMNS)


def parse_mapping(spec: str) -> dict[str, str]:
    """Parse ``target=source,target=source`` into ``{flat column: source}``.

    Parameters
    ----------
    spec
        Comma-separated pairs. A source in quotes (``system='lab'``) is a constant.

    Returns
    -------
    dict
        Canonical flat column name -> source column (or quoted constant).

    Raises
    ------
    InputFormatError
        A pair without ``=``, an unknown target, or a target given twice.

    Examples
    --------
    >>> parse_mapping("session=SessionID, query_pos=Qno, system='lab'")
    {'session_id': 'SessionID', 'query_pos': 'Qno', 'system_id': "'lab'"}
    """
    return parse_pairs(spec, _canonical_target, flag="mapping")


def _canonical_target(target: str) -> str:
    name = TARGET_ALIASES.get(target, target)
    if name in _TARGETS or (name.startswith("rating_") and len(name) > len("rating_")):
        return name
    allowed = ", ".join([*_TARGETS, "rating_<name>", *sorted(TARGET_ALIASES)])
    raise InputFormatError(f"mapping: unknown target column {target!r} (allowed: {allowed})")


def apply_mapping(
    table: pd.DataFrame, mapping: Mapping[str, str], *, source: str = "<table>"
) -> pd.DataFrame:
    """Build the flat table from ``table`` by the mapping (the input is not modified).

    Columns of ``table`` already named as flat columns are kept unless a mapping
    target replaces them; other columns are dropped.

    Parameters
    ----------
    table
        The user's table.
    mapping
        ``{target: source}`` as returned by :func:`parse_mapping` (aliases allowed).
    source
        File name for messages.

    Raises
    ------
    InputFormatError
        An unknown target or a source column that is not in the table.

    Examples
    --------
    >>> t = pd.DataFrame({"SID": ["a"], "Qno": [1], "R": [1], "URL": ["u"]})
    >>> apply_mapping(t, {"session": "SID", "query_pos": "Qno", "rank": "R", "doc": "URL",
    ...                   "user": "'u1'"}).columns.tolist()
    ['session_id', 'query_pos', 'rank', 'doc_id', 'user_id']
    """
    canonical = {_canonical_target(t): s for t, s in mapping.items()}
    missing = sorted(
        {s for s in canonical.values() if constant(s) is None and s not in table.columns}
    )
    if missing:
        raise InputFormatError(
            f"{source}: mapped source column(s) {', '.join(map(repr, missing))} not in the table "
            f"(columns: {', '.join(map(str, table.columns))})"
        )
    data: dict[str, object] = {}
    mapped_sources = {s for s in canonical.values()}
    for col in table.columns:
        name = str(col)
        if (
            (name in _TARGETS or name.startswith("rating_"))
            and name not in canonical
            and (name not in mapped_sources)
        ):
            data[name] = table[col]
    for target, src in canonical.items():
        const = constant(src)
        data[target] = (
            pd.Series([const] * len(table), index=table.index, dtype="string")
            if const is not None
            else table[src]
        )
    return pd.DataFrame(data, index=table.index)


def with_qrels_key(frame: SessionFrame, *, by: QrelsKey | pd.Series) -> SessionFrame:
    """Return the frame with ``queries["qrels_id"]`` set to another judgment key.

    Parameters
    ----------
    frame
        The frame (not modified; a new frame is returned).
    by
        ``"topic"`` (the session's topic), ``"session"`` (per-session judgments,
        as in lab studies), ``"query_id"`` (per-turn judgments, e.g. CAsT
        ``topic_turn`` ids), or a Series with one key per query row.

    Returns
    -------
    SessionFrame
        Same tables, new ``qrels_id`` category column.

    Examples
    --------
    >>> from sessionval.validate.flat import frame_from_flat
    >>> flat = pd.DataFrame({"session_id": ["s1"], "user_id": "u", "topic_id": "T",
    ...     "system_id": "S", "query_pos": [1], "rank": [1], "doc_id": ["d"]})
    >>> f = with_qrels_key(frame_from_flat(flat).frame, by="session")
    >>> f.queries["qrels_id"].tolist()
    ['s1']
    """
    q = frame.queries
    if isinstance(by, pd.Series):
        if len(by) != len(q):
            raise InputFormatError(
                f"qrels key: got {len(by)} values for {len(q)} queries (one per query row needed)"
            )
        keys = pd.Series(by.to_numpy(), dtype="string")
    elif by == "topic":
        codes = q["session_id"].cat.codes.to_numpy()
        keys = pd.Series(frame.sessions["topic_id"].astype(str).to_numpy()[codes], dtype="string")
    elif by == "session":
        keys = q["session_id"].astype("string").reset_index(drop=True)
    elif by == "query_id":
        keys = q["query_id"].astype("string").reset_index(drop=True)
    else:
        raise InputFormatError(
            f"qrels key {by!r} unknown (allowed: 'topic', 'session', 'query_id' or a Series)"
        )
    queries = q.copy()
    queries["qrels_id"] = keys.astype("category").to_numpy()
    queries["qrels_id"] = queries["qrels_id"].astype("category")
    return dataclasses.replace(frame, queries=queries)


def load_mapped_table(
    path: str | os.PathLike[str] | pd.DataFrame,
    mapping: Mapping[str, str] | str,
    *,
    qrels: str | os.PathLike[str] | None = None,
    mode: Mode = "strict",
    source: str | None = None,
    max_problems: int = 50,
    progress: Callable[[str], None] | None = None,
    encoding: str | None = None,
    qrels_map: str | Mapping[str, str] | None = None,
) -> LoadedStudy:
    """Read any one-row-per-result CSV/TSV/Parquet table through a column mapping.

    Parameters
    ----------
    path
        The table file, or a DataFrame already in memory.
    mapping
        ``"session=SessionID,query_pos=Qno,..."`` or a dict (``""``: the table is
        already in the flat layout).
    qrels
        Reference judgments (TREC qrels or CSV), keyed by topic or by the mapped
        ``qrels_id``.
    mode
        ``"strict"`` or ``"lenient"`` (see :func:`~sessionval.validate.flat.frame_from_flat`).
    source
        Name used in messages (default: the path).
    max_problems
        Limit of problems listed in strict mode.
    progress
        Called with each loading phase's name (:data:`sessionval.validate.flat.LOAD_PHASES`).
    encoding
        Text encoding of a CSV/TSV table and of the qrels file (default UTF-8; a
        byte-order mark wins).
    qrels_map
        Column map of a CSV/TSV qrels table (``"topic=QueryId,doc=DocNo,grade=Rel"``).

    Returns
    -------
    LoadedStudy
        When ``qrels_id`` is mapped, ``frame.queries["qrels_id"]`` takes its values.
        ``details``: ``mapping``, the parsed mapping (flat column -> source).
    """
    mp = (
        parse_mapping(mapping)
        if isinstance(mapping, str)
        else {_canonical_target(k): v for k, v in mapping.items()}
    )
    if isinstance(path, pd.DataFrame):
        table, name = path, source or "<table>"
    else:
        table, name = read_flat_table(path, encoding=encoding), source or str(path)
    flat = apply_mapping(table, mp, source=name)
    loaded = frame_from_flat(
        flat,
        source=name,
        mode=mode,
        max_problems=max_problems,
        location_kind="line",
        row_locations=np.arange(len(flat), dtype=np.int64) + 2,
        progress=progress,
    )
    frame, report = loaded.frame, loaded.report
    if "qrels_id" in flat.columns:
        frame = apply_flat_qrels_id(frame, flat)
    judgments = (
        read_judgments(qrels, encoding=encoding, max_problems=max_problems, columns=qrels_map)
        if qrels is not None
        else None
    )
    return LoadedStudy(
        study=study_header(frame, judgments=judgments, name=Path(name).stem),
        frame=frame,
        judgments=judgments,
        report=report,
        unjudged=unjudged_keys(frame, judgments),
        details={"mapping": mp},
    )


def apply_flat_qrels_id(frame: SessionFrame, flat: pd.DataFrame) -> SessionFrame:
    """Set ``qrels_id`` from a flat table's ``qrels_id`` column (first row of each query).

    Rows of rejected sessions are ignored; a query whose rows disagree keeps its first value.
    """
    keys = pd.MultiIndex.from_arrays(
        [flat["session_id"].astype(str), pd.to_numeric(flat["query_pos"]).astype(np.int64)]
    )
    first = ~keys.duplicated()
    lookup = pd.Series(flat["qrels_id"].astype("string").to_numpy()[first], index=keys[first])
    q = frame.queries
    qk = pd.MultiIndex.from_arrays([q["session_id"].astype(str), q["query_pos"].astype(np.int64)])
    vals = lookup.reindex(qk).to_numpy()
    fallback = with_qrels_key(frame, by="topic").queries["qrels_id"].astype(str).to_numpy()
    vals = np.where(pd.isna(vals), fallback, vals)
    return with_qrels_key(frame, by=pd.Series(vals, dtype="string"))

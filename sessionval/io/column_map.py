"""Column maps: ``target=source,target=source`` from the command line, parsed once.

The sessions' ``--map`` (:func:`sessionval.io.mapping.parse_mapping`, onto the flat
layout) and the judgments' ``--qrels-map`` (:func:`parse_judgment_map`, onto
``topic_id, doc_id, grade, assessor``) share this grammar: comma-separated pairs, a
target given once, a quoted source (``assessor='lab'``) a constant for every row.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Final

import pandas as pd

from ..errors import InputFormatError

__all__ = [
    "JUDGMENT_ALIASES",
    "JUDGMENT_TARGETS",
    "apply_judgment_map",
    "constant",
    "parse_judgment_map",
    "parse_pairs",
]

#: the columns of a judgments table (CSV/TSV), what ``--qrels-map`` maps onto
JUDGMENT_TARGETS: Final = ("topic_id", "doc_id", "grade", "assessor")
#: short or other tools' names of those columns (ir_measures: query_id, relevance)
JUDGMENT_ALIASES: Final[dict[str, str]] = {
    "topic": "topic_id",
    "query": "topic_id",
    "query_id": "topic_id",
    "doc": "doc_id",
    "relevance": "grade",
    "judge": "assessor",
}


def constant(source: str) -> str | None:
    """The text of a quoted source (``'lab'`` -> ``lab``), ``None`` for a column name."""
    if len(source) >= 2 and source[0] == source[-1] and source[0] in "'\"":
        return source[1:-1]
    return None


def parse_pairs(spec: str, canonical: Callable[[str], str], *, flag: str) -> dict[str, str]:
    """``target=source,...`` as ``{canonical(target): source}``.

    Raises
    ------
    InputFormatError
        A pair without ``=``, an empty source, a target given twice, or what
        ``canonical`` raises for an unknown target.
    """
    out: dict[str, str] = {}
    for raw in spec.split(","):
        part = raw.strip()
        if not part:
            continue
        if "=" not in part:
            raise InputFormatError(
                f"{flag} {part!r}: expected target=source (e.g. {_example(flag)})"
            )
        target, source = (x.strip() for x in part.split("=", 1))
        name = canonical(target)
        if not source:
            raise InputFormatError(f"{flag} {part!r}: empty source column for {target!r}")
        if name in out:
            raise InputFormatError(f"{flag}: target {target!r} given twice")
        out[name] = source
    return out


def _example(flag: str) -> str:
    return "topic=QueryId,doc=DocNo,grade=Rel" if flag == "--qrels-map" else "session=SessionID"


def _judgment_target(target: str) -> str:
    name = JUDGMENT_ALIASES.get(target, target)
    if name in JUDGMENT_TARGETS:
        return name
    allowed = ", ".join([*JUDGMENT_TARGETS, *JUDGMENT_ALIASES])
    raise InputFormatError(f"--qrels-map: unknown target column {target!r} (allowed: {allowed})")


def parse_judgment_map(spec: str | Mapping[str, str]) -> dict[str, str]:
    """A judgments column map: ``{topic_id|doc_id|grade|assessor: source}``.

    Examples
    --------
    >>> parse_judgment_map("query_id=Q, doc=DocNo, relevance=Rel, assessor='lab'")
    {'topic_id': 'Q', 'doc_id': 'DocNo', 'grade': 'Rel', 'assessor': "'lab'"}
    """
    if isinstance(spec, str):
        return parse_pairs(spec, _judgment_target, flag="--qrels-map")
    return {_judgment_target(k): v for k, v in spec.items()}


def apply_judgment_map(
    table: pd.DataFrame, columns: Mapping[str, str], *, source: str
) -> pd.DataFrame:
    """The judgments ``table`` with its mapped columns renamed (constants filled in).

    Columns already named as a target and not replaced by the map are kept.

    Raises
    ------
    InputFormatError
        A mapped source column that is not in the table (the message lists them).

    Examples
    --------
    >>> t = pd.DataFrame({"Q": ["1"], "D": ["a"], "R": ["2"]})
    >>> apply_judgment_map(t, {"topic_id": "Q", "doc_id": "D", "grade": "R"}, source="j.csv")
      topic_id doc_id grade
    0        1      a     2
    """
    missing = [s for s in columns.values() if constant(s) is None and s not in table.columns]
    if missing:
        raise InputFormatError(
            f"{source}: --qrels-map names column(s) {', '.join(map(repr, missing))} that the "
            f"table does not have (its columns: {', '.join(map(str, table.columns))})"
        )
    data = {str(c): table[c] for c in table.columns if c in JUDGMENT_TARGETS and c not in columns}
    for target, src in columns.items():
        value = constant(src)
        data[target] = (
            pd.Series(value, index=table.index, dtype=object) if value is not None else table[src]
        )
    return pd.DataFrame(data, index=table.index)

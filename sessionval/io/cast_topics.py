"""TREC CAsT topics JSON: the turns of each conversation (:func:`read_cast_topics`).

A topics file is ``[{number, turn: [{number, raw_utterance, ...}]}]``; each problem of
its shape is reported with its JSON path (``topics[0].turn[2].number``), the value and
what is allowed.  :func:`sessionval.io.cast.load_cast` reads it for the turn texts and
the turns of each topic.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Final, Literal

import numpy as np
import pandas as pd

from ..errors import InputFormatError, ParseError
from ..validate.ids import strip_id
from .text import read_input_text

__all__ = [
    "MAX_TURN_DIGITS",
    "TurnText",
    "read_cast_topics",
]

TurnText = Literal["raw", "manual", "automatic"]
_TEXT_FIELD: Final = {
    "raw": "raw_utterance",
    "manual": "manual_rewritten_utterance",
    "automatic": "automatic_rewritten_utterance",
}

#: turn numbers have at most this many digits (they fit a 64-bit integer)
MAX_TURN_DIGITS: Final = 18


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


def _turn_number(value: object) -> int | None:
    """A turn number: a non-negative JSON integer, or a string of ASCII digits."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if 0 <= value < 10**MAX_TURN_DIGITS else None
    if isinstance(value, str) and strip_id(value).isascii() and strip_id(value).isdigit():
        v = strip_id(value)
        return int(v) if len(v) <= MAX_TURN_DIGITS else None
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

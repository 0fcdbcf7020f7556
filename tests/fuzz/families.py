"""Structure-aware mutations of reliability round 3: the inputs that found its defects.

Each family edits the structure a reader relies on, not random bytes:

* **ids with Unicode blanks**: an id gets U+00A0 (no-break space) or U+3000 (ideographic
  space) before or after it, in one place or everywhere in the file (UNI-1);
* **NFC / NFD pairs**: an id becomes a non-ASCII one spelt in NFC in one place and in NFD
  (a letter and a combining accent) in another, in the same file or in the other file of
  a pair (log and qrels, run and qrels; UNI-2);
* **rows without ids**: the session id cell blanked (empty, null, blank, U+00A0) on some
  rows of a table or JSON line (FL-1, FL-2);
* **ratings on some sessions only**: the post-task ratings removed from some sessions (a
  JSON line without ``ratings``, empty ``rating_*`` cells, a lab session row cut before its
  ratings; CV-1, CV-2);
* **deep TOML**: a configuration value nested 100 to 1,000 levels deep (CFG-1);
* **odd run names**: a run file renamed with a tab, a newline, a blank line, only blanks or
  a very long name (ST-2).

Byte mutations (``bytes, rng -> bytes``) join :data:`tests.fuzz.mutations.KIND_MUTATIONS`;
folder mutations (``folder, mutated file, rng -> name or None``) edit several files of one
input or rename them and are listed per target (:attr:`tests.fuzz.corpus.Target.reshape`).
"""

from __future__ import annotations

import csv
import io
import json
import random
import re
import unicodedata
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

FolderMutation = Callable[[Path, str, random.Random], "str | None"]

#: blanks that ``str.strip`` removes but an ASCII-only rule would keep
UNICODE_BLANKS = ("\u00a0", "\u3000")

#: an id of the seeds: a letter, then letters, digits or ``_``, with at least one digit
_ID = re.compile(rb"(?<![\w\x80-\xff])[A-Za-z][A-Za-z_]*\d[\w]*(?![\w\x80-\xff])")

#: what a blanked session id cell holds
_NO_ID = ("", " ", "\u00a0", "\u3000", None)

#: column names of the session id and of the ratings in the flat and lab layouts
_SESSION_COLUMNS = ("session_id", "SessionID")
_RATING = re.compile(r"^(rating_.*|Performance|Difficulty)$")


def _ids(data: bytes) -> list[bytes]:
    return sorted({m.group(0) for m in _ID.finditer(data)})


def _token(tok: bytes) -> re.Pattern[bytes]:
    """``tok`` as a whole id (not the start of a longer one)."""
    return re.compile(rb"(?<![\w\x80-\xff])" + re.escape(tok) + rb"(?![\w\x80-\xff])")


def _replace_some(
    data: bytes, old: bytes, new: bytes, rng: random.Random, *, everywhere: float = 0.5
) -> bytes:
    """``old`` -> ``new`` everywhere (with probability ``everywhere``) or at one of its places."""
    if rng.random() < everywhere:
        return _token(old).sub(new, data)
    found = [m.start() for m in _token(old).finditer(data)]
    if not found:
        return data
    at = rng.choice(found)
    return data[:at] + new + data[at + len(old) :]


def id_unicode_blank(data: bytes, rng: random.Random) -> bytes:
    """An id with U+00A0 or U+3000 before or after it (one place, or the whole file)."""
    ids = _ids(data)
    if not ids:
        return data
    old = rng.choice(ids)
    blank = rng.choice(UNICODE_BLANKS).encode()
    new = blank + old if rng.random() < 0.5 else old + blank
    return _replace_some(data, old, new, rng)


def nfc_nfd(token: bytes) -> tuple[bytes, bytes]:
    """``token`` with an accented letter, in NFC and in NFD (``é`` vs ``e`` + U+0301)."""
    nfc = token.decode() + "\u00e9"
    return nfc.encode(), unicodedata.normalize("NFD", nfc).encode()


def id_nfd(data: bytes, rng: random.Random) -> bytes:
    """An id spelt in NFD in one place of the file and in NFC elsewhere."""
    ids = _ids(data)
    if not ids:
        return data
    old = rng.choice(ids)
    nfc, nfd = nfc_nfd(old)
    return _replace_some(_token(old).sub(nfc, data), nfc, nfd, rng, everywhere=0)


def blank_session_id(data: bytes, rng: random.Random) -> bytes:
    """The session id of some rows (a table) or of a JSON line left empty, null or blank."""
    if data.lstrip().startswith(b"{"):
        lines = data.split(b"\n")
        idx = [i for i, ln in enumerate(lines) if b'"session_id"' in ln]
        for i in rng.sample(idx, min(len(idx), rng.randint(1, 2))):
            value = json.dumps(rng.choice(_NO_ID), ensure_ascii=False).encode()
            lines[i] = re.sub(rb'"session_id": ?("[^"]*"|null)', b'"session_id":' + value, lines[i])
        return b"\n".join(lines)
    return _edit_table(data, rng, _SESSION_COLUMNS, per_session=False, cut=False)


def ratings_some_sessions(data: bytes, rng: random.Random) -> bytes:
    """The post-task ratings of some sessions removed, the others' kept."""
    if data.lstrip().startswith(b"{"):
        lines = data.split(b"\n")
        idx = [i for i, ln in enumerate(lines) if b'"ratings"' in ln]
        for i in rng.sample(idx, min(len(idx), rng.randint(1, max(1, len(idx) - 1)))):
            try:
                doc = json.loads(lines[i])
            except (ValueError, RecursionError):  # an earlier mutation broke the line
                continue
            if not isinstance(doc, dict):
                continue
            ratings = doc.get("ratings")
            if rng.random() < 0.7 or not isinstance(ratings, dict) or not ratings:
                doc.pop("ratings", None)
            else:
                del ratings[rng.choice(list(ratings))]
            lines[i] = json.dumps(doc, ensure_ascii=False).encode()
        return b"\n".join(lines)
    return _edit_table(data, rng, (), per_session=True, cut=rng.random() < 0.5)


def _edit_table(
    data: bytes,
    rng: random.Random,
    columns: tuple[str, ...],
    *,
    per_session: bool,
    cut: bool,
) -> bytes:
    """Blank ``columns`` (none given: the rating columns) on some rows of a CSV/TSV table.

    ``per_session``: on every row of one or two sessions; ``cut``: the row ends before the
    first blanked column instead (what a hand-edited TSV does).
    """
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return data
    head = text.split("\n", 1)[0]
    delim = "\t" if "\t" in head else ","
    quoting = csv.QUOTE_NONE if delim == "\t" else csv.QUOTE_MINIMAL
    rows = list(csv.reader(io.StringIO(text), delimiter=delim, quoting=quoting))
    if len(rows) < 2:
        return data
    header = rows[0]
    cols = [i for i, c in enumerate(header) if (c in columns if columns else _RATING.match(c))]
    sid = next((i for i, c in enumerate(header) if c in _SESSION_COLUMNS), None)
    if not cols:
        return data
    body = [i for i in range(1, len(rows)) if rows[i]]
    if per_session and sid is not None:
        sessions = sorted({rows[i][sid] for i in body if len(rows[i]) > sid})
        chosen = set(rng.sample(sessions, min(len(sessions), rng.randint(1, 2))))
        picked = [i for i in body if len(rows[i]) > sid and rows[i][sid] in chosen]
    else:
        picked = rng.sample(body, min(len(body), rng.randint(1, 3)))
    for i in picked:
        row = rows[i]
        if cut and cols[0] == len(header) - len(cols):  # rating columns last: end the row early
            del row[cols[0] :]
            continue
        for c in cols:
            if c < len(row):
                row[c] = str(rng.choice(_NO_ID) or "")
    out = io.StringIO()
    writer = csv.writer(out, delimiter=delim, quoting=quoting, lineterminator="\n", escapechar="\\")
    writer.writerows(rows)
    return out.getvalue().encode("utf-8")


def parquet_rows_without_ids(data: bytes, rng: random.Random) -> bytes:
    """A Parquet table whose session id is null on some rows, or ratings null on some sessions."""
    try:
        table = pq.read_table(io.BytesIO(data))
    except Exception:  # a file an earlier mutation broke: leave it to the byte mutations
        return data
    n = table.num_rows
    if not n or "session_id" not in table.column_names:
        return data
    sid = table.column("session_id")
    if rng.random() < 0.5:
        rows = rng.sample(range(n), min(n, rng.randint(1, 3)))
        mask = pa.array([i in rows for i in range(n)])
        targets = ["session_id"]
    else:
        chosen = rng.choice(sid.unique().to_pylist())
        mask = pc.fill_null(pc.equal(sid, pa.scalar(chosen, sid.type)), False)
        targets = [c for c in table.column_names if _RATING.match(c)]
    for name in targets:
        i = table.column_names.index(name)
        col = table.column(i)
        table = table.set_column(i, name, pc.if_else(mask, pa.nulls(n, col.type), col))
    sink = io.BytesIO()
    pq.write_table(table, sink)
    return sink.getvalue()


def toml_deep(data: bytes, rng: random.Random) -> bytes:
    """A value nested 100 to 1,000 levels deep: arrays, inline tables or both."""
    depth = rng.choice([100, 300, 400, 500, 1000])
    kind = rng.randrange(3)
    if kind == 0:
        value = "[" * depth + "1" + "]" * depth
    elif kind == 1:
        value = "{a=" * depth + "1" + "}" * depth
    else:
        value = "[{a=" * (depth // 2) + "1" + "}]" * (depth // 2)
    key = rng.choice(["x", "cutoff", "measures.x", "figures.y"])
    line = f"{key} = {value}\n".encode()
    return line + data if rng.random() < 0.5 else data + b"\n" + line


# ---------------------------------------------------------------------------------- folders

_TEXT_SUFFIXES = (".jsonl", ".csv", ".tsv", ".txt", ".run", "")


def _text_files(folder: Path) -> list[Path]:
    return sorted(
        p
        for p in folder.rglob("*")
        if p.is_file() and p.suffix in _TEXT_SUFFIXES and p.stat().st_size < 5_000_000
    )


def nfd_across_files(folder: Path, mutated: str, rng: random.Random) -> str | None:
    """An id shared by two files spelt in NFC in the one fuzzed and in NFD in the other."""
    first = folder / mutated
    if not first.is_file():
        return None
    data = first.read_bytes()
    others = [p for p in _text_files(folder) if p != first]
    shared = [(tok, p) for p in others for tok in set(_ids(p.read_bytes())) & set(_ids(data))]
    if not shared:
        return None
    tok, other = rng.choice(sorted(shared, key=lambda x: (x[0], str(x[1]))))
    nfc, nfd = nfc_nfd(tok)
    first.write_bytes(_token(tok).sub(nfc, data))
    other.write_bytes(_token(tok).sub(nfd, other.read_bytes()))
    return f"nfd_across_files({other.relative_to(folder)})"


#: run names the report tables must survive (ST-2)
ODD_NAMES = (
    "tab\tname", "two\n\npar", "line\nbreak", "   ", " lead", "trail ", "x" * 200, "a,b;c|d",
    'q"uote', "\u00e9t\u00e9", "e\u0301te\u0301", "-dash", "$x_1$", "back\\slash",
)  # fmt: skip


def odd_run_name(folder: Path, mutated: str, rng: random.Random) -> str | None:
    """A run file renamed with a tab, a newline, a blank line, only blanks or a long name."""
    runs = sorted(folder.rglob("*.run"))
    if not runs:
        return None
    run = rng.choice(runs)
    name = rng.choice(ODD_NAMES)
    run.rename(run.with_name(name + ".run"))
    return f"odd_run_name({name!r})"

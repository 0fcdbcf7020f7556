"""Mutation operators of the fuzz suite: valid input bytes in, hostile input bytes out.

Every operator takes the input's bytes and a seeded :class:`random.Random` and returns
new bytes; :func:`mutate` stacks one to three of them, chosen by the kind of file
(``"text"``, ``"json"``, ``"csv"``, ``"xml"``, ``"parquet"``, ``"toml"``); the
structure-aware families of reliability round 3 are in :mod:`tests.fuzz.families`.
Everything is driven by the generator, so an input is reproduced from its seed alone.
"""

from __future__ import annotations

import gzip
import io
import json
import random
import re
from collections.abc import Callable

import pyarrow as pa
import pyarrow.parquet as pq

from .families import (
    blank_session_id,
    id_nfd,
    id_unicode_blank,
    parquet_rows_without_ids,
    ratings_some_sessions,
    toml_deep,
)

Mutation = Callable[[bytes, random.Random], bytes]

#: characters that break line-based and JSON readers (or must not: U+2028 is legal in JSON)
SPECIAL_CHARS = (
    "\x00", "\x01", "\x07", "\x0b", "\x0c", "\x1b", "\x7f", "\r", "\n", "\t", "\u0085",
    "\u2028", "\u2029", "\ufeff", "\ufffd", "\ud7ff", "é", "\u200b", '"', "'", "\\", ",",
    ";", "|", "<", ">", "&", "&amp;", "&#0;", "]]>", "$\\frac{1}$", "=cmd", " ", "  ", "_x",
)  # fmt: skip

#: numbers at and beyond the edges of the storage types and the grade scale
EDGE_NUMBERS = (
    "0", "-0", "-1", "1", "3", "4", "32767", "32768", "-32769", "65537", "2147483647",
    "2147483648", "9223372036854775807", "9223372036854775808", "-9223372036854775809",
    "18446744073709551616", "1" + "0" * 40, "1e308", "1e309", "-1e309", "nan", "NaN", "inf",
    "-inf", "Infinity", "1.5", "0x10", "1_000", " 7", "7 ", "٣", "１",
)  # fmt: skip

#: text that is not the type a field expects
WRONG_VALUES = (
    "", " ", "null", "None", "true", "[]", "{}", "[1,2]", '{"a":1}', "abc", "\"", "NaT",
    "2262-04-12T00:00:00Z", "1677-09-21T00:00:00Z", "9999-12-31T23:59:59Z", "0001-01-01",
    "-1-01-01T00:00:00Z", "2020-13-45", "24:61:61", "1e30", "-1e30",
)  # fmt: skip

TIMES = ("1e30", "inf", "-inf", "nan", "99999999999", "-1", "25:00:00", "00:00:00.9999999999")


def _pick_span(data: bytes, rng: random.Random, max_len: int = 16) -> tuple[int, int]:
    if not data:
        return 0, 0
    start = rng.randrange(len(data))
    return start, min(len(data), start + rng.randint(1, max_len))


def flip_bytes(data: bytes, rng: random.Random) -> bytes:
    """Replace one to eight bytes by random bytes (non-UTF-8 bytes included)."""
    b = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        if b:
            b[rng.randrange(len(b))] = rng.randrange(256)
    return bytes(b)


def flip_bits(data: bytes, rng: random.Random) -> bytes:
    """Flip single bits (what a bad disk or a bad transfer does)."""
    b = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        if b:
            b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
    return bytes(b)


def truncate(data: bytes, rng: random.Random) -> bytes:
    """Cut the file anywhere (an interrupted download)."""
    return data[: rng.randrange(len(data) + 1)] if data else data


def delete_span(data: bytes, rng: random.Random) -> bytes:
    """Remove a short run of bytes."""
    a, b = _pick_span(data, rng)
    return data[:a] + data[b:]


def duplicate_span(data: bytes, rng: random.Random) -> bytes:
    """Repeat a run of bytes in place."""
    a, b = _pick_span(data, rng, 64)
    return data[:b] + data[a:b] + data[b:]


def insert_special(data: bytes, rng: random.Random) -> bytes:
    """Insert control characters, line separators, quotes, markup or a BOM anywhere."""
    at = rng.randrange(len(data) + 1)
    text = "".join(rng.choice(SPECIAL_CHARS) for _ in range(rng.randint(1, 3)))
    return data[:at] + text.encode("utf-8", "surrogatepass") + data[at:]


def _lines(data: bytes) -> list[bytes]:
    return data.split(b"\n")


def delete_line(data: bytes, rng: random.Random) -> bytes:
    """Drop one line (a header, a record, a closing tag)."""
    lines = _lines(data)
    del lines[rng.randrange(len(lines))]
    return b"\n".join(lines)


def duplicate_line(data: bytes, rng: random.Random) -> bytes:
    """Repeat one line (a duplicated record or header)."""
    lines = _lines(data)
    i = rng.randrange(len(lines))
    lines.insert(rng.randrange(len(lines) + 1), lines[i])
    return b"\n".join(lines)


def swap_lines(data: bytes, rng: random.Random) -> bytes:
    """Exchange two lines (records out of order; a header in the middle)."""
    lines = _lines(data)
    i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
    lines[i], lines[j] = lines[j], lines[i]
    return b"\n".join(lines)


_SEP = re.compile(rb"[\t ,]+")


def _edit_fields(data: bytes, rng: random.Random, edit: Callable[[list[bytes]], None]) -> bytes:
    lines = _lines(data)
    for _ in range(rng.randint(1, 3)):
        i = rng.randrange(len(lines))
        line = lines[i]
        seps = _SEP.findall(line)
        fields = _SEP.split(line)
        edit(fields)
        sep = seps[0] if seps else b" "
        lines[i] = sep.join(fields)
    return b"\n".join(lines)


def swap_fields(data: bytes, rng: random.Random) -> bytes:
    """Exchange two fields of a line (columns in the wrong order)."""

    def edit(fields: list[bytes]) -> None:
        i, j = rng.randrange(len(fields)), rng.randrange(len(fields))
        fields[i], fields[j] = fields[j], fields[i]

    return _edit_fields(data, rng, edit)


def extra_field(data: bytes, rng: random.Random) -> bytes:
    """Add or remove a field of a line (more or fewer fields than the format has)."""

    def edit(fields: list[bytes]) -> None:
        if fields and rng.random() < 0.4:
            del fields[rng.randrange(len(fields))]
        else:
            fields.insert(rng.randrange(len(fields) + 1), rng.choice(EDGE_NUMBERS).encode())

    return _edit_fields(data, rng, edit)


_NUMBER = re.compile(rb"-?\d+(\.\d+)?")


def edge_number(data: bytes, rng: random.Random) -> bytes:
    """Replace a number by one at or beyond a storage type's edge (2^15, 2^63, 1e309, nan)."""
    found = list(_NUMBER.finditer(data))
    if not found:
        return insert_special(data, rng)
    for m in rng.sample(found, min(len(found), rng.randint(1, 3))):
        new = rng.choice(EDGE_NUMBERS + TIMES).encode()
        data = (
            data[: m.start()] + new + data[m.end() :]
            if len(new) == m.end() - m.start()
            else (data.replace(m.group(0), new, 1))
        )
    return data


_WORD = re.compile(rb"[A-Za-z0-9_\-.:]+")


def wrong_value(data: bytes, rng: random.Random) -> bytes:
    """Replace a token by a value of another type (empty, null, a list, a bad time)."""
    found = list(_WORD.finditer(data))
    if not found:
        return insert_special(data, rng)
    m = rng.choice(found)
    return data[: m.start()] + rng.choice(WRONG_VALUES).encode() + data[m.end() :]


def reencode(data: bytes, rng: random.Random) -> bytes:
    """The same text in another encoding (UTF-16 with or without BOM, Latin-1, UTF-8 BOM)."""
    text = data.decode("utf-8", "replace")
    enc = rng.choice(["utf-16", "utf-16-le", "utf-16-be", "utf-32", "latin-1", "cp1252", "bom"])
    if enc == "bom":
        return b"\xef\xbb\xbf" + data
    return text.encode(enc, "replace")


def gzip_wrap(data: bytes, rng: random.Random) -> bytes:
    """Compress the whole file (sometimes truncated: a broken .gz)."""
    packed = gzip.compress(data, mtime=0)
    return packed if rng.random() < 0.7 else packed[: rng.randrange(len(packed) + 1)]


def line_endings(data: bytes, rng: random.Random) -> bytes:
    """CRLF, CR-only, vertical-tab or form-feed line ends."""
    return data.replace(b"\n", rng.choice([b"\r\n", b"\r", b"\x0b", b"\x0c", b"\n\n"]))


def whitespace(data: bytes, rng: random.Random) -> bytes:
    """Leading or trailing blanks around fields (the same id written two ways)."""
    return _edit_fields(data, rng, lambda f: f.__setitem__(rng.randrange(len(f)), b" " + f[0]))


TEXT_MUTATIONS: tuple[Mutation, ...] = (
    flip_bytes, flip_bits, truncate, delete_span, duplicate_span, insert_special, delete_line,
    duplicate_line, swap_lines, swap_fields, extra_field, edge_number, wrong_value, reencode,
    gzip_wrap, line_endings, whitespace,
)  # fmt: skip


# ---------------------------------------------------------------------------------- JSON


def _json_lines(data: bytes) -> list[bytes]:
    return [ln for ln in data.split(b"\n")]


def _walk(node: object, rng: random.Random, edit: Callable[[object], object]) -> object:
    """Apply ``edit`` to one random node of a JSON document."""
    if isinstance(node, dict) and node and rng.random() < 0.8:
        k = rng.choice(list(node))
        node[k] = _walk(node[k], rng, edit)
        return node
    if isinstance(node, list) and node and rng.random() < 0.8:
        i = rng.randrange(len(node))
        node[i] = _walk(node[i], rng, edit)
        return node
    return edit(node)


def _json_edit(data: bytes, rng: random.Random, edit: Callable[[object], object]) -> bytes:
    """Edit one JSON value of one line (JSON-lines) or of the whole document."""
    lines = _json_lines(data)
    whole = data.lstrip()[:1] in (b"[", b"{") and len([ln for ln in lines if ln.strip()]) > 1
    try:
        if whole and data.count(b"\n") > 2 and not data.lstrip().startswith(b'{"session'):
            doc = json.loads(data)
            return json.dumps(_walk(doc, rng, edit), ensure_ascii=rng.random() < 0.5).encode()
    except (ValueError, RecursionError):
        pass
    idx = [i for i, ln in enumerate(lines) if ln.strip()]
    if not idx:
        return data
    i = rng.choice(idx)
    try:
        doc = json.loads(lines[i])
    except (ValueError, RecursionError):
        return data
    lines[i] = json.dumps(_walk(doc, rng, edit), ensure_ascii=rng.random() < 0.5).encode()
    return b"\n".join(lines)


def json_deep(data: bytes, rng: random.Random) -> bytes:
    """Replace a value by a deeply nested list or object (recursion limits)."""
    depth = rng.choice([50, 1000, 5000, 100_000])
    opener, closer = rng.choice([("[", "]"), ('{"a":', "}")])
    nested = opener * depth + "1" + closer * depth
    marker = "\u0000NEST\u0000"
    out = _json_edit(data, rng, lambda _v: marker)
    return out.replace(json.dumps(marker).encode(), nested.encode(), 1)


def json_value(data: bytes, rng: random.Random) -> bytes:
    """Replace a value by one of another type or at a type's edge."""
    choices: list[object] = [
        None, True, "", " ", [], {}, 2**63, -(2**63) - 1, 2**64, 10**40, 1e308, -0.0, 1.5,
        "\u2028", "a\u2029b", "\u0085", "x\x00y", "$\\frac{1}$", "_s", " padded ", "é",
        32768, 65537, -1, 0, "9999-12-31T23:59:59Z", "1500-01-01T00:00:00Z", "nan", "inf",
    ]  # fmt: skip
    return _json_edit(data, rng, lambda _v: rng.choice(choices))


def json_drop_key(data: bytes, rng: random.Random) -> bytes:
    """Remove a key or add an unknown one."""

    def edit_parent(node: object) -> object:
        return node

    lines = _json_lines(data)
    idx = [i for i, ln in enumerate(lines) if ln.strip().startswith(b"{")]
    if not idx:
        return json_value(data, rng)
    i = rng.choice(idx)
    try:
        doc = json.loads(lines[i])
    except (ValueError, RecursionError):
        return data

    def dicts(node: object) -> list[dict[str, object]]:
        out: list[dict[str, object]] = []
        if isinstance(node, dict):
            out.append(node)
            for v in node.values():
                out += dicts(v)
        elif isinstance(node, list):
            for v in node:
                out += dicts(v)
        return out

    found = dicts(doc)
    if found:
        d = rng.choice(found)
        if d and rng.random() < 0.6:
            del d[rng.choice(list(d))]
        else:
            d[rng.choice(["extra", "rank", "doc_id", "session_id", ""])] = rng.choice(
                [1, "x", None, [1]]
            )
    lines[i] = json.dumps(doc).encode()
    return b"\n".join(lines)


def json_duplicate_key(data: bytes, rng: random.Random) -> bytes:
    """Write a key twice in one object (the last one wins in Python's json)."""
    m = list(re.finditer(rb'"([a-z_]+)": ?("[^"]*"|-?\d+)', data))
    if not m:
        return json_value(data, rng)
    x = rng.choice(m)
    return data[: x.end()] + b", " + x.group(0) + data[x.end() :]


JSON_MUTATIONS: tuple[Mutation, ...] = (json_deep, json_value, json_drop_key, json_duplicate_key)


# ---------------------------------------------------------------------------------- CSV


def csv_header(data: bytes, rng: random.Random) -> bytes:
    """Duplicate, drop, rename or reorder a header column."""
    head, sep, rest = data.partition(b"\n")
    delim = b"\t" if b"\t" in head else b","
    cols = head.split(delim)
    op = rng.randrange(4)
    if op == 0:
        cols.append(rng.choice(cols))
    elif op == 1 and len(cols) > 1:
        del cols[rng.randrange(len(cols))]
    elif op == 2:
        cols[rng.randrange(len(cols))] = rng.choice([b"", b" session_id", b"rank ", b"x", b'"'])
    else:
        rng.shuffle(cols)
    return delim.join(cols) + sep + rest


def csv_quote(data: bytes, rng: random.Random) -> bytes:
    """Insert an unbalanced or doubled quote into a field."""
    at = rng.randrange(len(data) + 1)
    return data[:at] + rng.choice([b'"', b'""', b'"x""', b"'"]) + data[at:]


CSV_MUTATIONS: tuple[Mutation, ...] = (csv_header, csv_quote)


# ---------------------------------------------------------------------------------- XML


def xml_markup(data: bytes, rng: random.Random) -> bytes:
    """Break or bend the markup: unclosed tags, bare ampersands, entities, deep nesting."""
    op = rng.randrange(7)
    tags = list(re.finditer(rb"</?[A-Za-z]+[^>]*>", data))
    if op == 0 and tags:  # drop a tag
        t = rng.choice(tags)
        return data[: t.start()] + data[t.end() :]
    if op == 1 and tags:  # duplicate a tag
        t = rng.choice(tags)
        return data[: t.end()] + t.group(0) + data[t.end() :]
    if op == 2:
        at = rng.randrange(len(data) + 1)
        ent = rng.choice([b"&", b"&amp", b"&bogus;", b"&#xD800;", b"&#99999999;", b"<![CDATA[x"])
        return data[:at] + ent + data[at:]
    if op == 3:
        depth = rng.choice([100, 5000])
        at = data.find(b"<query>")
        if at < 0:
            at = rng.randrange(len(data) + 1)
        return data[:at] + b"<a>" * depth + b"</a>" * depth + data[at:]
    if op == 4:  # attributes: numbers at the edges, duplicates, missing
        attrs = list(re.finditer(rb'(num|rank|starttime|endtime)="([^"]*)"', data))
        if attrs:
            a = rng.choice(attrs)
            value = rng.choice(EDGE_NUMBERS + TIMES + ("",)).encode()
            return data[: a.start(2)] + value + data[a.end(2) :]
    if op == 5:  # a DOCTYPE with an entity
        decl = b'<!DOCTYPE x [<!ENTITY e "' + b"x" * rng.choice([10, 10_000]) + b'">]>'
        body = data.split(b"?>", 1)[-1] if data.startswith(b"<?xml") else data
        return decl + body.replace(b"<query>", b"<query>&e;", 1)
    # a whole session duplicated (duplicate session numbers)
    m = re.search(rb"<session .*?</session>", data, flags=re.S)
    if m:
        return data[: m.end()] + m.group(0) + data[m.end() :]
    return flip_bytes(data, rng)


XML_MUTATIONS: tuple[Mutation, ...] = (xml_markup,)


# ---------------------------------------------------------------------------------- Parquet


def _table_edit(data: bytes, rng: random.Random) -> bytes:
    """Rewrite a valid Parquet file with a column duplicated, retyped, nested or emptied."""
    try:
        return _table_edit_valid(data, rng)
    except Exception:  # a file an earlier mutation broke: flip bytes instead
        return flip_bytes(data, rng)


def _table_edit_valid(data: bytes, rng: random.Random) -> bytes:
    table = pq.read_table(io.BytesIO(data))
    if table.num_columns == 0:
        return data
    i = rng.randrange(table.num_columns)
    name = table.column_names[i]
    col = table.column(i)
    n = table.num_rows
    op = rng.randrange(9)
    if op == 0:  # duplicated column name
        table = table.append_column(name, col)
    elif op == 1:  # list-typed
        table = table.set_column(i, name, pa.array([[str(v)] for v in col.to_pylist()]))
    elif op == 2:  # struct-typed
        table = table.set_column(i, name, pa.array([{"v": str(v)} for v in col.to_pylist()]))
    elif op == 3:  # all null
        table = table.set_column(i, name, pa.nulls(n, col.type))
    elif op == 4:  # numbers at the edges
        vals = [rng.choice([0, -1, 2**15, 2**31, 2**63 - 1, -(2**63)]) for _ in range(n)]
        table = table.set_column(i, name, pa.array(vals, pa.int64()))
    elif op == 5:  # floats, NaN and infinities
        vals = [rng.choice([0.5, float("nan"), float("inf"), -1e300, 1e300]) for _ in range(n)]
        table = table.set_column(i, name, pa.array(vals, pa.float64()))
    elif op == 6:  # invalid UTF-8 as binary, or text where numbers belong
        vals = [rng.choice([b"\xff\xfe", b"ok", b"\x00"]) for _ in range(n)]
        table = table.set_column(i, name, pa.array(vals, pa.binary()))
    elif op == 7:  # a column removed
        table = table.remove_column(i)
    else:  # timestamps out of pandas' nanosecond range
        vals = [rng.choice([-(2**62), 2**62, 0]) for _ in range(n)]
        table = table.set_column(i, name, pa.array(vals, pa.timestamp("us", tz="UTC")))
    sink = io.BytesIO()
    pq.write_table(table, sink)
    return sink.getvalue()


PARQUET_MUTATIONS: tuple[Mutation, ...] = (_table_edit, _table_edit, _table_edit, flip_bytes,
                                           truncate, flip_bits)  # fmt: skip


#: the structure-aware families of reliability round 3 (:mod:`tests.fuzz.families`)
ID_MUTATIONS: tuple[Mutation, ...] = (id_unicode_blank, id_nfd)
ROW_MUTATIONS: tuple[Mutation, ...] = (*ID_MUTATIONS, blank_session_id, ratings_some_sessions)

KIND_MUTATIONS: dict[str, tuple[Mutation, ...]] = {
    "text": TEXT_MUTATIONS + ID_MUTATIONS * 2,
    "json": TEXT_MUTATIONS + JSON_MUTATIONS * 3 + ROW_MUTATIONS * 2,
    "csv": TEXT_MUTATIONS + CSV_MUTATIONS * 2 + ROW_MUTATIONS * 2,
    "xml": TEXT_MUTATIONS + XML_MUTATIONS * 6 + ID_MUTATIONS,
    "parquet": PARQUET_MUTATIONS + (parquet_rows_without_ids,) * 2,
    "toml": TEXT_MUTATIONS + (toml_deep,) * 6,
}


def mutate(data: bytes, kind: str, rng: random.Random) -> tuple[bytes, list[str]]:
    """One to three mutations of ``data`` for a file of ``kind``; returns bytes and their names."""
    ops = KIND_MUTATIONS[kind]
    names = []
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        op = rng.choice(ops)
        data = op(data, rng)
        names.append(op.__name__.lstrip("_"))
    return data, names

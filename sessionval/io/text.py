"""Bytes of an input file to text: gzip, byte-order marks and encodings, with located errors.

Every text reader (JSON-lines, CSV/TSV, TREC qrels and runs, CAsT topics, TREC Session
XML, mappings) goes through :func:`read_input_bytes` and :func:`decode_text`, so
compressed files, BOMs and non-UTF-8 bytes behave the same in every format:

- a file whose first bytes are gzip's magic number is decompressed, whatever its
  name; a file named ``*.gz`` that is not gzip is a located error;
- a UTF-8 or UTF-16/32 byte-order mark selects that encoding and is removed;
- otherwise the text is decoded as ``encoding`` (default UTF-8); a byte that is not
  valid there is a :class:`~sessionval.errors.ParseError` naming the file, the
  line, the byte offset and the bytes, and saying how to pass another encoding.
"""

from __future__ import annotations

import codecs
import gzip
import io
import os
import zlib
from pathlib import Path

from ..errors import ParseError

__all__ = [
    "DEFAULT_ENCODING",
    "check_encoding",
    "decode_text",
    "open_input_binary",
    "read_input_bytes",
    "read_input_text",
]

DEFAULT_ENCODING = "utf-8"

_GZIP_MAGIC = b"\x1f\x8b"
# Longest first: the UTF-32-LE mark starts with the UTF-16-LE one.
_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)


def check_encoding(encoding: str | None) -> str:
    """Return the codec name for ``encoding`` (``None``: UTF-8) or raise a readable error.

    Examples
    --------
    >>> check_encoding(None), check_encoding("latin-1")
    ('utf-8', 'iso8859-1')
    >>> check_encoding("klingon")
    Traceback (most recent call last):
    ...
    sessionval.errors.ParseError: encoding 'klingon' is not known to Python; ...
    """
    if encoding is None:
        return DEFAULT_ENCODING
    try:
        return codecs.lookup(encoding).name
    except LookupError:
        raise ParseError(
            f"encoding {encoding!r} is not known to Python; "
            "use a name such as utf-8, latin-1, cp1252 or utf-16"
        ) from None


def read_input_bytes(path: str | os.PathLike[str]) -> bytes:
    """Read a whole input file, decompressing gzip (detected by its magic number).

    Raises
    ------
    ParseError
        When the file does not exist, is a folder, or is named ``.gz`` / starts
        like gzip but cannot be decompressed (with the byte offset where it broke).
    """
    p = Path(path)
    if not p.exists():
        raise ParseError(f"{p}: no such file")
    if p.is_dir():
        raise ParseError(f"{p}: is a folder, expected a file")
    data = p.read_bytes()
    if data.startswith(_GZIP_MAGIC):
        try:
            return gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as exc:
            raise ParseError(
                f"{p}: not a valid gzip file ({exc}); re-compress it or pass the uncompressed file"
            ) from exc
    if p.suffix.lower() == ".gz":
        raise ParseError(
            f"{p}: named .gz but not gzip-compressed (first bytes {data[:4]!r}, "
            f"expected {_GZIP_MAGIC!r}); rename it or compress it with gzip"
        )
    return data


def decode_text(data: bytes, source: str | os.PathLike[str], encoding: str | None = None) -> str:
    r"""Decode ``data`` read from ``source``: a BOM wins, else ``encoding`` (default UTF-8).

    Parameters
    ----------
    data
        The file's bytes (already decompressed).
    source
        The file name, for messages.
    encoding
        A Python codec name; ``None`` means UTF-8. A byte-order mark in the file
        overrides it (and is removed).

    Raises
    ------
    ParseError
        On a byte that is not valid in the encoding: file, line, byte offset, the
        bytes as found, and the ``--encoding`` option to use instead.

    Examples
    --------
    >>> decode_text(b"\xef\xbb\xbfq1 0 d1 1", "q.txt")
    'q1 0 d1 1'
    >>> decode_text("caf\u00e9".encode("latin-1"), "q.txt", "latin-1")
    'café'
    >>> decode_text(b"ok\ncaf\xe9\n", "q.txt")
    Traceback (most recent call last):
    ...
    sessionval.errors.ParseError: q.txt:2: byte offset 6: b'\xe9' is not valid utf-8; ...
    """
    codec = check_encoding(encoding)
    for bom, name in _BOMS:
        if data.startswith(bom):
            codec, data = name, data[len(bom) :]
            break
    try:
        return data.decode(codec)
    except UnicodeDecodeError as exc:
        # UTF-16/32: count newlines in the decodable prefix, not raw 0x0a bytes
        prefix = data[: exc.start].decode(codec, errors="replace")
        line = prefix.count("\n") + 1
        raise ParseError(
            f"{source}:{line}: byte offset {exc.start}: {data[exc.start : exc.end]!r} is not valid "
            f"{exc.encoding}; save the file as UTF-8 or pass its encoding "
            "(--encoding latin-1, cp1252, ...)"
        ) from None


def read_input_text(path: str | os.PathLike[str], encoding: str | None = None) -> str:
    """Read, decompress and decode a text input file (see the module docstring)."""
    check_encoding(encoding)  # a misspelt option is reported before the file is read
    return decode_text(read_input_bytes(path), path, encoding)


def open_input_binary(path: str | os.PathLike[str], encoding: str | None = None) -> io.BytesIO:
    """A UTF-8 byte stream of a text input, for readers that parse bytes (pandas, Arrow CSV).

    The file is decompressed and decoded as in :func:`read_input_text`, so a
    decoding problem is the same located error; the stream holds UTF-8 without BOM.
    """
    data = read_input_bytes(path)
    codec = check_encoding(encoding)
    if codec == DEFAULT_ENCODING and not any(data.startswith(bom) for bom, _ in _BOMS):
        decode_text(data, path, encoding)  # validate only: the bytes are already UTF-8
        return io.BytesIO(data)
    return io.BytesIO(decode_text(data, path, encoding).encode("utf-8"))

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
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import BinaryIO, Final

from ..errors import ParseError

__all__ = [
    "DEFAULT_ENCODING",
    "check_encoding",
    "check_utf8_range",
    "count_line_ends",
    "count_lines",
    "decode_text",
    "iter_input_text",
    "iter_input_utf8",
    "open_input_binary",
    "range_start",
    "read_input_bytes",
    "read_input_text",
    "splittable",
]

DEFAULT_ENCODING = "utf-8"

#: bytes read and decoded at a time by :func:`iter_input_text` and :func:`iter_input_utf8`
CHUNK_BYTES: Final = 8 << 20

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


def _not_gzip(p: Path, first: bytes) -> ParseError:
    return ParseError(
        f"{p}: named .gz but not gzip-compressed (first bytes {first[:4]!r}, "
        f"expected {_GZIP_MAGIC!r}); rename it or compress it with gzip"
    )


def _bad_gzip(p: Path, exc: BaseException) -> ParseError:
    return ParseError(
        f"{p}: not a valid gzip file ({exc}); re-compress it or pass the uncompressed file"
    )


def _check_file(p: Path) -> None:
    if not p.exists():
        raise ParseError(f"{p}: no such file")
    if p.is_dir():
        raise ParseError(f"{p}: is a folder, expected a file")


def count_lines(path: str | os.PathLike[str], encoding: str | None = None) -> int | None:
    r"""The lines of an uncompressed UTF-8 (or ASCII) file, as the line readers number them.

    A line ends at ``\n``; a last line without one counts too.  One pass of
    ``bytes.count`` over the file, ``CHUNK_BYTES`` at a time: the total of a progress
    bar.  ``None`` for a gzip file (counting would decompress it) or another encoding.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     p = Path(d) / "log.jsonl"
    ...     _ = p.write_bytes(b'{"a": 1}\n\n{"b": 2}')
    ...     count_lines(p)
    3
    """
    if check_encoding(encoding) not in ("utf-8", "ascii"):
        return None
    p = Path(path)
    _check_file(p)
    lines, last = 0, b"\n"
    with p.open("rb") as raw:
        if raw.read(2) == _GZIP_MAGIC:
            return None
        raw.seek(0)
        while chunk := raw.read(CHUNK_BYTES):
            lines += chunk.count(b"\n")
            last = chunk[-1:]
    return lines + (last != b"\n")


def splittable(path: str | os.PathLike[str], encoding: str | None = None) -> bool:
    r"""Whether byte ranges of the file cut after a ``\n`` are whole lines of UTF-8 text.

    True for an uncompressed file in UTF-8 (or ASCII), with no byte-order mark of
    another encoding: what a reader of byte ranges (``sessionval evaluate --engine
    dask``) can cut on the workers; gzip and UTF-16/32 files are read whole.
    """
    if check_encoding(encoding) not in ("utf-8", "ascii"):
        return False
    p = Path(path)
    _check_file(p)
    with p.open("rb") as raw:
        head = raw.read(4)
    if head.startswith(_GZIP_MAGIC) or p.suffix.lower() == ".gz":
        return False
    return not any(head.startswith(bom) and name != "utf-8" for bom, name in _BOMS)


def range_start(path: str | os.PathLike[str], offset: int) -> int:
    r"""Where the block Dask reads at ``offset`` starts: after the first ``\n`` from there.

    ``fsspec.utils.read_block(f, offset, length, delimiter=b"\n")`` (the reader of
    ``dask.bytes.read_bytes``) starts each block but the first after the first line
    end at or after its offset; a line from there on is the block's.
    """
    if offset <= 0:
        return 0
    with Path(path).open("rb") as raw:
        size = raw.seek(0, os.SEEK_END)
        if offset >= size:
            return size
        raw.seek(offset)
        raw.readline()
        return raw.tell()


def count_line_ends(path: str | os.PathLike[str], end: int) -> int:
    r"""The lines that end in the first ``end`` bytes of a file (``\r\n``, ``\r``, ``\n``).

    The line rule of the text readers (:mod:`sessionval.io.whitespace_table`): the
    line number of the line starting at byte ``end`` is this plus one.  Streamed
    ``CHUNK_BYTES`` at a time; called to locate a problem in a byte range.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     p = Path(d) / "run.txt"
    ...     _ = p.write_bytes(b"a\r\nb\rc\nd\n")
    ...     count_line_ends(p, 7), count_line_ends(p, 3)
    (3, 1)
    """
    lines, left, prev = 0, int(end), b""
    with Path(path).open("rb") as raw:
        while left > 0 and (chunk := raw.read(min(CHUNK_BYTES, left))):
            left -= len(chunk)
            lines += chunk.count(b"\n") + chunk.count(b"\r") - chunk.count(b"\r\n")
            lines -= prev == b"\r" and chunk[:1] == b"\n"  # a \r\n cut between two chunks
            prev = chunk[-1:]
    return lines


def check_utf8_range(
    data: bytes, source: str | os.PathLike[str], start: int, lines_before: Callable[[], int]
) -> bytes:
    """A byte range of a UTF-8 file (from byte ``start``), checked, without a byte-order mark.

    ASCII passes as read; other bytes are decoded once to check them.  A byte that is
    not valid is located as :func:`decode_text` locates it (``lines_before``, the
    lines of the file before the range, is called only then).

    Raises
    ------
    ParseError
        A byte that is not valid UTF-8: file, line, byte offset, the bytes as found.
    """
    if start == 0 and data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8) :]  # offsets count from after it, as decode_text's
    if data.isascii():
        return data
    try:
        data.decode(DEFAULT_ENCODING)
    except UnicodeDecodeError as exc:
        line = lines_before() + data[: exc.start].count(b"\n") + 1
        raise _undecodable(source, line, start + exc.start, exc) from None
    return data


def read_input_bytes(path: str | os.PathLike[str]) -> bytes:
    """Read a whole input file, decompressing gzip (detected by its magic number).

    Raises
    ------
    ParseError
        When the file does not exist, is a folder, or is named ``.gz`` / starts
        like gzip but cannot be decompressed (with the byte offset where it broke).
    """
    p = Path(path)
    _check_file(p)
    data = p.read_bytes()
    if data.startswith(_GZIP_MAGIC):
        try:
            return gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as exc:
            raise _bad_gzip(p, exc) from exc
    if p.suffix.lower() == ".gz":
        raise _not_gzip(p, data)
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
    codec, data = _without_bom(data, check_encoding(encoding))
    try:
        return data.decode(codec)
    except UnicodeDecodeError as exc:
        # UTF-16/32: count newlines in the decodable prefix, not raw 0x0a bytes
        prefix = data[: exc.start].decode(codec, errors="replace")
        raise _undecodable(source, prefix.count("\n") + 1, exc.start, exc) from None


def _without_bom(data: bytes, codec: str) -> tuple[str, bytes]:
    """The codec a byte-order mark at the start of ``data`` names (else ``codec``), mark removed."""
    for bom, name in _BOMS:
        if data.startswith(bom):
            return name, data[len(bom) :]
    return codec, data


def _undecodable(
    source: str | os.PathLike[str], line: int, offset: int, exc: UnicodeDecodeError
) -> ParseError:
    """A byte not valid in the encoding: where it is, as found, and the option to use instead."""
    return ParseError(
        f"{source}:{line}: byte offset {offset}: {exc.object[exc.start : exc.end]!r} is not "
        f"valid {exc.encoding}; save the file as UTF-8 or pass its encoding "
        "(--encoding latin-1, cp1252, ...)"
    )


def read_input_text(path: str | os.PathLike[str], encoding: str | None = None) -> str:
    """Read, decompress and decode a text input file (see the module docstring)."""
    check_encoding(encoding)  # a misspelt option is reported before the file is read
    return decode_text(read_input_bytes(path), path, encoding)


def _read_some(stream: BinaryIO, size: int, p: Path) -> bytes:
    """Up to ``size`` bytes of ``stream`` (fewer only at its end); gzip damage is located."""
    try:
        return stream.read(size)
    except (OSError, EOFError, zlib.error) as exc:
        raise _bad_gzip(p, exc) from exc


def iter_input_text(
    path: str | os.PathLike[str], encoding: str | None = None, *, chunk_bytes: int = CHUNK_BYTES
) -> Iterator[str]:
    """The text of an input file, decoded ``chunk_bytes`` bytes at a time.

    The same rules and errors as :func:`read_input_text` (gzip by its magic number,
    a byte-order mark wins, a byte that is not valid is located by line and byte
    offset), but only one chunk of the file, compressed or not, is held at a time: a
    reader that splits lines can stream a file larger than memory.  A character
    whose bytes straddle two chunks is decoded whole (an incremental decoder).
    """
    for chunk in _decoded_chunks(path, encoding, chunk_bytes, ascii_as_bytes=False):
        yield chunk if isinstance(chunk, str) else chunk.decode("ascii")


def iter_input_utf8(
    path: str | os.PathLike[str], encoding: str | None = None, *, chunk_bytes: int = CHUNK_BYTES
) -> Iterator[bytes]:
    """An input file as UTF-8 bytes without BOM, ``chunk_bytes`` at a time (for byte parsers).

    :func:`iter_input_text` encoded as UTF-8, with the same rules and located errors,
    but a UTF-8 chunk of ASCII bytes is passed on as read, neither decoded nor copied:
    the TREC readers' large files stay one pass of the C parser.  A chunk may end
    inside a line (never inside a character).
    """
    for chunk in _decoded_chunks(path, encoding, chunk_bytes, ascii_as_bytes=True):
        yield chunk if isinstance(chunk, bytes) else chunk.encode("utf-8")


def _decoded_chunks(
    path: str | os.PathLike[str], encoding: str | None, chunk_bytes: int, *, ascii_as_bytes: bool
) -> Iterator[str | bytes]:
    """Chunks of decoded text; with ``ascii_as_bytes``, UTF-8 ASCII chunks as their bytes."""
    codec = check_encoding(encoding)  # a misspelt option is reported before the file is read
    p = Path(path)
    _check_file(p)
    size = max(int(chunk_bytes), 4)  # a byte-order mark is at most 4 bytes
    with p.open("rb") as raw:
        head = raw.read(4)
        raw.seek(0)
        stream: BinaryIO = raw
        if head.startswith(_GZIP_MAGIC):
            stream = gzip.GzipFile(fileobj=raw, mode="rb")  # type: ignore[assignment]
        elif p.suffix.lower() == ".gz":
            raise _not_gzip(p, head)
        codec, chunk = _without_bom(_read_some(stream, size, p), codec)
        if not chunk:  # the first chunk held only the mark: an empty chunk means the end
            chunk = _read_some(stream, size, p)
        decoder = codecs.getincrementaldecoder(codec)("strict")
        passthrough = ascii_as_bytes and codec == DEFAULT_ENCODING
        fed = 0  # bytes given to the decoder so far (after the mark), for the byte offset
        newlines = 0  # in the text decoded so far, for the line number
        while True:
            final = not chunk
            pending = len(decoder.getstate()[0])  # bytes of a character cut by the last chunk
            out: str | bytes
            if passthrough and not pending and chunk.isascii():
                out = chunk  # ASCII is UTF-8 and leaves the decoder as it was: no decoding
                newlines += chunk.count(b"\n")
            else:
                try:
                    out = decoder.decode(chunk, final=final)
                except UnicodeDecodeError as exc:
                    # exc.object: the pending bytes, then this chunk
                    prefix = exc.object[: exc.start].decode(codec, errors="replace")
                    line = newlines + prefix.count("\n") + 1
                    raise _undecodable(path, line, fed - pending + exc.start, exc) from None
                newlines += out.count("\n")
            fed += len(chunk)
            if out:
                yield out
            if final:
                return
            chunk = _read_some(stream, size, p)


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

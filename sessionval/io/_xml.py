"""A small, safe XML reader for TREC Session Track logs, with lenient repair.

Expat never fetches external entities; a reference to one (or to an entity declared
outside the file) and an XInclude element are located errors naming the element,
since their text would otherwise be lost without a word.  The text that internal entities expand
to is bounded by an absolute limit (:data:`MAX_EXPANSION` characters beyond the
file's own text), so an entity bomb is a located error whatever the file's size.
A failed parse can be repaired (bare ``&``, control characters; linear time, one
note per kind of repair) or split per ``<session>`` so one broken session does not
lose the file.  :func:`decode_xml` turns the file's bytes into text: a byte-order
mark, the ``encoding=`` option, the XML declaration's encoding, UTF-8, in that order.
"""

from __future__ import annotations

import bisect
import codecs
import re
import xml.parsers.expat
from dataclasses import dataclass, field
from typing import Final

from ..errors import ParseError
from ..problems import Problem
from ..validate.collect import ProblemCollector
from .text import check_encoding, decode_text

#: characters that entity references may add beyond the file's own text (an absolute
#: bound: expat's own guard is a factor of the input size, which grows with the file)
MAX_EXPANSION: Final = 16 * 1024 * 1024

__all__: list[str] = [
    "XmlError",
    "XmlNode",
    "child_text",
    "parse_by_session",
    "parse_tree",
    "repair_xml",
]


@dataclass(eq=False)
class XmlNode:
    """An element of the parsed tree: tag, attributes, 1-based line/column, children, text."""

    tag: str
    attrib: dict[str, str]
    line: int
    col: int
    children: list[XmlNode] = field(default_factory=list)
    parts: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        return "".join(self.parts).strip()

    def find(self, tag: str) -> XmlNode | None:
        for c in self.children:
            if c.tag == tag:
                return c
        return None

    def findall(self, tag: str) -> list[XmlNode]:
        return [c for c in self.children if c.tag == tag]


def child_text(node: XmlNode, tag: str) -> str:
    """Text of the first child named ``tag`` ("" when there is none)."""
    child = node.find(tag)
    return child.text if child is not None else ""


class XmlError(Exception):
    """A parse error at a 1-based ``line`` and ``col``."""

    def __init__(self, line: int, col: int, what: str) -> None:
        super().__init__(f"{line}:{col}: {what}")
        self.line, self.col, self.what = line, col, what


def parse_tree(text: str) -> XmlNode:
    """Parse XML text into :class:`XmlNode` (raises :class:`XmlError` with 1-based line/col)."""
    parser = xml.parsers.expat.ParserCreate()
    root = XmlNode("#document", {}, 1, 1)
    stack = [root]
    # characters delivered so far: beyond the text's length only entities can add more
    budget = [len(text) + MAX_EXPANSION]

    def spend(n: int) -> None:
        budget[0] -= n
        if budget[0] < 0:
            raise XmlError(
                parser.CurrentLineNumber,
                parser.CurrentColumnNumber + 1,
                f"entity references expand to more than {MAX_EXPANSION:,} characters beyond "
                "the file's own text (an entity bomb?); entities are not used by Session "
                "Track logs",
            )

    def unresolved(what: str) -> None:
        # the text would silently go missing: say where and why instead
        raise XmlError(
            parser.CurrentLineNumber,
            parser.CurrentColumnNumber + 1,
            f"{what} in <{stack[-1].tag}> is not resolved: sessionval never fetches external "
            "entities or XInclude files (the text would be lost); write the text into the file",
        )

    def external(
        context: str | None, base: str | None, system: str | None, public: str | None
    ) -> int:
        unresolved(f"external entity &{context or '?'}; ({system or public or 'no address'})")
        return 0

    def skipped(name: str, is_parameter_entity: bool) -> None:
        if not is_parameter_entity:  # a general entity left unexpanded: its text is lost
            unresolved(f"entity &{name}; (declared outside the file, or not at all)")

    def start(tag: str, attrib: dict[str, str]) -> None:
        if tag.rpartition(":")[2] == "include" and "href" in attrib:
            unresolved(f"XInclude <{tag} href={attrib['href']!r}>")
        spend(sum(len(v) for v in attrib.values()))
        node = XmlNode(tag, attrib, parser.CurrentLineNumber, parser.CurrentColumnNumber + 1)
        stack[-1].children.append(node)
        stack.append(node)

    def end(tag: str) -> None:
        stack.pop()

    def chars(data: str) -> None:
        spend(len(data))
        stack[-1].parts.append(data)

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = chars
    parser.ExternalEntityRefHandler = external
    parser.SkippedEntityHandler = skipped
    try:
        parser.Parse(text, True)
    except xml.parsers.expat.ExpatError as exc:
        line, col = exc.lineno, exc.offset + 1
        what = xml.parsers.expat.ErrorString(exc.code) or str(exc)
        src = _LineIndex(text).line_text(line)
        ch = src[col - 1 : col] if src else ""
        amp = next(
            (
                c
                for c in (col, col - 1)
                if c >= 1 and src[c - 1 : c] == "&" and _BARE_AMP.match(src, c - 1)
            ),
            None,
        )
        if amp is not None:
            col, what = amp, "bare '&' (write '&amp;' in XML text)"
        elif ch and ord(ch) < 32 and ch not in "\t\n\r":
            what = f"control character {ch!r} is not allowed in XML"
        elif "mismatched tag" in what or "no element found" in what or "unclosed" in what:
            open_tags = [n.tag for n in stack[1:]]
            if open_tags:
                what += f" (open elements: <{'> <'.join(open_tags)}>, innermost opened at line "
                what += f"{stack[-1].line})"
        excerpt = src.strip()[:80]
        raise XmlError(line, col, f"{what}; line reads: {excerpt!r}") from exc
    if not root.children:
        raise XmlError(1, 1, "no root element")
    return root.children[0]


_BARE_AMP: Final = re.compile(r"&(?!(?:[A-Za-z_][\w.-]*|#\d+|#x[0-9A-Fa-f]+);)")


_CONTROL: Final = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
_NEWLINE: Final = re.compile(r"\r\n?|\n")


class _LineIndex:
    r"""Line and column of a position in O(log n), after one linear pass over the text.

    Lines end at ``\n``, ``\r\n`` or ``\r``, as expat counts them.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = [0, *(m.end() for m in _NEWLINE.finditer(text))]

    def line_col(self, pos: int) -> tuple[int, int]:
        line = bisect.bisect_right(self.starts, pos)
        return line, pos - self.starts[line - 1] + 1

    def line_text(self, line: int) -> str:
        if not 0 < line <= len(self.starts):
            return ""
        end = self.starts[line] if line < len(self.starts) else len(self.text)
        return self.text[self.starts[line - 1] : end].rstrip("\r\n")


#: locations listed in a repair note (the count covers them all)
_SHOWN_LOCATIONS: Final = 5


def repair_xml(text: str, source: str) -> tuple[str, list[Problem]]:
    """Escape bare ``&`` and drop XML-illegal control characters, in linear time.

    One note per kind of repair: how many, and where the first few were.
    """
    index: _LineIndex | None = None
    notes = ProblemCollector(source)
    for pattern, what in (
        (_BARE_AMP, "bare '&' escaped as '&amp;'"),
        (_CONTROL, "control character removed"),
    ):
        found = pattern.finditer(text)
        first = [m for _, m in zip(range(_SHOWN_LOCATIONS), found, strict=False)]
        if not first:
            continue
        count = len(first) + sum(1 for _ in found)
        index = index or _LineIndex(text)
        where = ", ".join(_at(index, m) for m in first)
        more = f" and {count - len(first):,} more" if count > len(first) else ""
        line, col = index.line_col(first[0].start())
        notes.add_at(
            line,
            "",
            f"{what}: {count:,} time(s), at line:column {where}{more}",
            repr(first[0].group()),
            column=col,
        )
    if notes.problems:
        text = _CONTROL.sub("", _BARE_AMP.sub("&amp;", text))
    return text, notes.problems


def _at(index: _LineIndex, m: re.Match[str]) -> str:
    line, col = index.line_col(m.start())
    return f"{line}:{col}" + (f" {m.group()!r}" if m.group() != "&" else "")


_SESSION_START: Final = re.compile(r"<session\b[^>]*>")


_NUM_ATTR: Final = re.compile(r"""\bnum\s*=\s*["']([^"']*)["']""")


def parse_by_session(text: str, source: str) -> tuple[list[XmlNode], list[Problem], str]:
    """Parse each ``<session>`` element on its own; broken ones become problems.

    Each broken ``<session>`` element is one problem (its own record), so rejected
    sessions are counted by element even when two share a ``num``.
    """
    starts = [m.start() for m in _SESSION_START.finditer(text)]
    root_m = re.search(r"<(sessiontrack\d*)", text)
    root_tag = root_m.group(1) if root_m else ""
    index = _LineIndex(text)
    nodes: list[XmlNode] = []
    problems = ProblemCollector(source)
    for k, start in enumerate(starts):
        end = starts[k + 1] if k + 1 < len(starts) else len(text)
        chunk = text[start:end]
        if k + 1 == len(starts) and root_tag:
            close = chunk.rfind(f"</{root_tag}")
            if close >= 0:
                chunk = chunk[:close]
        line0, col0 = index.line_col(start)
        m = _NUM_ATTR.search(chunk[: chunk.find(">") + 1])
        sid = m.group(1).strip() if m else ""
        try:
            nodes.append(_shift(parse_tree(chunk), line0 - 1, col0 - 1))
        except XmlError as exc:
            line = exc.line + line0 - 1
            col = exc.col + (col0 - 1 if exc.line == 1 else 0)
            problems.add_at(
                line,
                "session",
                f"malformed XML: {exc.what}",
                column=col,
                record=sid or f"line{line0}",
            )
    return nodes, problems.problems, root_tag


def _shift(node: XmlNode, dline: int, dcol: int) -> XmlNode:
    stack = [node]
    while stack:
        n = stack.pop()
        if n.line == 1:
            n.col += dcol
        n.line += dline
        stack.extend(n.children)
    return node


# ---------------------------------------------------------------------------------------------
# bytes to text

_DECLARED: Final = re.compile(rb"""^<\?xml[^>]*?\bencoding\s*=\s*["']([A-Za-z][\w.:-]*)["']""")
_BOMS: Final = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
#: XML 1.0 appendix F: a document without a byte-order mark starts with '<'
_UTF16_START: Final = ((b"<\x00?\x00", "utf-16-le"), (b"\x00<\x00?", "utf-16-be"))


def decode_xml(
    data: bytes, source: str, encoding: str | None = None, *, lenient: bool = False
) -> tuple[str, list[Problem]]:
    """The text of an XML file: a BOM wins, then ``encoding``, the declaration, UTF-8.

    A document without a byte-order mark that starts with ``<?`` in UTF-16 is read
    as UTF-16 (XML 1.0, appendix F).  Bytes that are not valid in the encoding are
    a located :class:`~sessionval.errors.ParseError`; with ``lenient=True`` they
    are replaced by U+FFFD and one note says where the first was and how many.

    Examples
    --------
    >>> data = '<?xml version="1.0" encoding="latin-1"?><a>é</a>'.encode("latin-1")
    >>> decode_xml(data, "x")[0][-8:]
    '<a>é</a>'
    """
    codec = check_encoding(encoding) if encoding is not None else None
    if codec is None and not any(data.startswith(b) for b, _ in _BOMS):
        for start, name in _UTF16_START:
            if data.startswith(start):
                codec = name
                break
        else:
            m = _DECLARED.match(data)
            if m:
                declared = m.group(1).decode("ascii")
                try:
                    codec = check_encoding(declared)
                except ParseError:
                    raise ParseError(
                        f"{source}:1: the XML declaration names encoding {declared!r}, which "
                        "Python does not know; pass the file's encoding (--encoding latin-1, "
                        "cp1252, ...)"
                    ) from None
                if codec.startswith(("utf-16", "utf-32")):
                    codec = None  # a declaration read as ASCII bytes: the file is not UTF-16
    try:
        return decode_text(data, source, codec), []
    except ParseError as exc:
        if not lenient:
            raise
        bom = next((b for b in _BOMS if data.startswith(b[0])), None)
        if bom is not None:
            codec, data = bom[1], data[len(bom[0]) :]
        text = data.decode(codec or "utf-8", errors="replace")
        note = ProblemCollector(source)
        note.add_at(
            None,
            "",
            f"bytes not valid in the file's encoding replaced by U+FFFD "
            f"({text.count(chr(0xFFFD)):,} in all; the first: {exc})",
        )
        return text, note.problems

"""A small, safe XML reader for TREC Session Track logs, with lenient repair.

Expat with entities disabled (no entity bombs, no external entities); a failed
parse can be repaired (bare ``&``, control characters) or split per ``<session>``
so one broken session does not lose the file.
"""

from __future__ import annotations

import re
import xml.parsers.expat
from dataclasses import dataclass, field
from typing import Final

from ..problems import Problem

__all__: list[str] = []


@dataclass(eq=False)
class _Node:
    tag: str
    attrib: dict[str, str]
    line: int
    col: int
    children: list[_Node] = field(default_factory=list)
    parts: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        return "".join(self.parts).strip()

    def find(self, tag: str) -> _Node | None:
        for c in self.children:
            if c.tag == tag:
                return c
        return None

    def findall(self, tag: str) -> list[_Node]:
        return [c for c in self.children if c.tag == tag]


def _child_text(node: _Node, tag: str) -> str:
    child = node.find(tag)
    return child.text if child is not None else ""


class _XmlError(Exception):
    def __init__(self, line: int, col: int, what: str) -> None:
        super().__init__(f"{line}:{col}: {what}")
        self.line, self.col, self.what = line, col, what


def _parse_tree(text: str) -> _Node:
    """Parse XML text into :class:`_Node` (raises :class:`_XmlError` with 1-based line/col)."""
    parser = xml.parsers.expat.ParserCreate()
    root = _Node("#document", {}, 1, 1)
    stack = [root]

    def start(tag: str, attrib: dict[str, str]) -> None:
        node = _Node(tag, attrib, parser.CurrentLineNumber, parser.CurrentColumnNumber + 1)
        stack[-1].children.append(node)
        stack.append(node)

    def end(tag: str) -> None:
        stack.pop()

    def chars(data: str) -> None:
        stack[-1].parts.append(data)

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = chars
    try:
        parser.Parse(text, True)
    except xml.parsers.expat.ExpatError as exc:
        line, col = exc.lineno, exc.offset + 1
        what = xml.parsers.expat.ErrorString(exc.code) or str(exc)
        lines = text.splitlines()
        src = lines[line - 1] if 0 < line <= len(lines) else ""
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
        raise _XmlError(line, col, f"{what}; line reads: {excerpt!r}") from exc
    if not root.children:
        raise _XmlError(1, 1, "no root element")
    return root.children[0]


_BARE_AMP: Final = re.compile(r"&(?!(?:[A-Za-z_][\w.-]*|#\d+|#x[0-9A-Fa-f]+);)")


_CONTROL: Final = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")


def _line_col(text: str, pos: int) -> tuple[int, int]:
    line = text.count("\n", 0, pos) + 1
    return line, pos - (text.rfind("\n", 0, pos) + 1) + 1


def _repair(text: str, source: str) -> tuple[str, list[Problem]]:
    """Escape bare ``&`` and drop XML-illegal control characters; report each repair."""
    notes: list[Problem] = []
    for m in _BARE_AMP.finditer(text):
        line, col = _line_col(text, m.start())
        notes.append(
            Problem(source, f"line {line}:{col}", "", "bare '&' escaped as '&amp;'", "'&'")
        )
    for m in _CONTROL.finditer(text):
        line, col = _line_col(text, m.start())
        notes.append(
            Problem(source, f"line {line}:{col}", "", "control character removed", repr(m.group()))
        )
    if notes:
        text = _CONTROL.sub("", _BARE_AMP.sub("&amp;", text))
    return text, notes


_SESSION_START: Final = re.compile(r"<session\b[^>]*>")


_NUM_ATTR: Final = re.compile(r"""\bnum\s*=\s*["']([^"']*)["']""")


def _parse_by_session(text: str, source: str) -> tuple[list[_Node], list[Problem], str]:
    """Parse each ``<session>`` element on its own; broken ones become problems."""
    starts = [m.start() for m in _SESSION_START.finditer(text)]
    root_m = re.search(r"<(sessiontrack\d*)", text)
    root_tag = root_m.group(1) if root_m else ""
    nodes: list[_Node] = []
    problems: list[Problem] = []
    for k, start in enumerate(starts):
        end = starts[k + 1] if k + 1 < len(starts) else len(text)
        chunk = text[start:end]
        if k + 1 == len(starts) and root_tag:
            close = chunk.rfind(f"</{root_tag}")
            if close >= 0:
                chunk = chunk[:close]
        line0, col0 = _line_col(text, start)
        m = _NUM_ATTR.search(chunk[: chunk.find(">") + 1])
        sid = m.group(1) if m else f"#{k + 1}"
        try:
            nodes.append(_shift(_parse_tree(chunk), line0 - 1, col0 - 1))
        except _XmlError as exc:
            line = exc.line + line0 - 1
            col = exc.col + (col0 - 1 if exc.line == 1 else 0)
            problems.append(
                Problem(
                    source,
                    f"line {line}:{col}",
                    "session",
                    f"malformed XML: {exc.what}",
                    record=sid,
                )
            )
    return nodes, problems, root_tag


def _shift(node: _Node, dline: int, dcol: int) -> _Node:
    stack = [node]
    while stack:
        n = stack.pop()
        if n.line == 1:
            n.col += dcol
        n.line += dline
        stack.extend(n.children)
    return node

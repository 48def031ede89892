"""A fast reader for the canonical YAML that :mod:`.emit` writes, and nothing else.

libyaml builds a Python node (with two position marks) for every scalar before
anything is constructed: about 10 µs per node, so a 100,000-event stream takes
seconds. Our own files have one fixed layout, so this reader parses just that
layout line by line with regular expressions.

It is only a shortcut, never an authority: the caller re-emits what it read and
accepts the result only if that gives back the file's exact text. Any file this
reader misreads, or any construct it does not know (an alias, a tag, a comment,
a hand edit), fails that check or raises :class:`NotCanonicalError`, and the caller
falls back to the safe YAML loader, which also produces the precise errors.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

from .emit import MAX_DEPTH

__all__ = ["NotCanonicalError", "read_canonical", "read_canonical_file"]


class NotCanonicalError(Exception):
    """The text is not in the exact layout the writer produces."""


_SINGLE = r"'[^']*(?:''[^']*)*'"
_DOUBLE = r'"[^"\\]*(?:\\.[^"\\]*)*"'
_PLAIN_KEY = r"[^\s,\[\]{}:#'\"][^,\[\]{}:#]*"
_KEY = re.compile(rf"({_SINGLE}|{_DOUBLE}|{_PLAIN_KEY}):(?: |$)")
_FLOW_TOKEN = re.compile(
    rf"\s*({_SINGLE}|{_DOUBLE}|[{{}}\[\],]|: |[^\s,\[\]{{}}:#'\"][^,\[\]{{}}:#]*)"
)
# The usual event line, read in one match; anything else goes through _Flow.
_EVENT = re.compile(
    rf"\{{(?:t: ([0-9][0-9.e+-]*), )?(?:event: ({_SINGLE}|{_PLAIN_KEY}), )?"
    rf"data: ({_SINGLE}|{_DOUBLE})\}}"
)
_INT = re.compile(r"-?(?:0|[1-9][0-9]*)")
# No .inf / .nan: JSON cannot hold them, so such files take the validating slow path.
_FLOAT = re.compile(r"-?[0-9]+\.[0-9]*(?:e[-+][0-9]+)?")
_ESCAPE = re.compile(r"\\(x[0-9A-F]{2}|u[0-9A-F]{4}|U[0-9A-F]{8}|.)")
_ESCAPES = {
    "0": "\0",
    "a": "\a",
    "b": "\b",
    "t": "\t",
    "n": "\n",
    "v": "\v",
    "f": "\f",
    "r": "\r",
    "e": "\x1b",
    '"': '"',
    "\\": "\\",
    "N": "\x85",
    "_": "\xa0",
    "L": "\u2028",
    "P": "\u2029",
}
_NUMBER_START = frozenset("-.0123456789")
_WORDS: dict[str, Any] = {"null": None, "true": True, "false": False, "{}": {}, "[]": []}


def _unescape(match: re.Match[str]) -> str:
    code = match.group(1)
    if len(code) > 1:
        return chr(int(code[1:], 16))
    try:
        return _ESCAPES[code]
    except KeyError:
        raise NotCanonicalError(f"unknown escape \\{code}") from None


def _scalar(token: str) -> Any:
    """A scalar token, as the writer would have produced it."""
    first = token[0]
    if first == "'":
        return token[1:-1].replace("''", "'")
    if first == '"':
        return _ESCAPE.sub(_unescape, token[1:-1])
    if first in _NUMBER_START:
        if _INT.fullmatch(token):
            return int(token)
        if _FLOAT.fullmatch(token):
            return float(token)
        return token
    if token in _WORDS:
        word = _WORDS[token]
        return type(word)() if isinstance(word, (dict, list)) else word
    return token


class _Flow:
    """A one-line flow collection (an event line): ``{t: 0.1, data: '...'}``."""

    def __init__(self, text: str) -> None:
        self.tokens = [m.group(1) for m in _FLOW_TOKEN.finditer(text)]
        if "".join(self.tokens).replace(" ", "") != text.replace(" ", ""):
            raise NotCanonicalError("unexpected text in a flow collection")
        self.pos = 0

    def next(self) -> str:
        token = self.tokens[self.pos]
        self.pos += 1
        return token

    def value(self) -> Any:
        token = self.next()
        if token == "{":
            return self.collection("}", mapping=True)
        if token == "[":
            return self.collection("]", mapping=False)
        if token in "}],":
            raise NotCanonicalError("misplaced flow indicator")
        return _scalar(token)

    def collection(self, close: str, *, mapping: bool) -> Any:
        items: list[Any] = []
        out: dict[Any, Any] = {}
        if self.tokens[self.pos] == close:
            self.pos += 1
            return out if mapping else items
        while True:
            if mapping:
                key = _scalar(self.next())
                if self.next() != ": " or key in out:
                    raise NotCanonicalError("bad flow mapping entry")
                out[key] = self.value()
            else:
                items.append(self.value())
            token = self.next()
            if token == close:
                return out if mapping else items
            if token != ",":
                raise NotCanonicalError("bad flow separator")


def _flow(text: str) -> Any:
    match = _EVENT.fullmatch(text)
    if match is None:
        return _Flow(text).value()
    t, name, data = match.groups()
    out: dict[str, Any] = {}
    if t is not None:
        out["t"] = float(t)
    if name is not None:
        # A plain name is a string: the writer quotes anything YAML would type.
        # Interned: a stream repeats a few names (a copy per event was a third of it).
        out["event"] = sys.intern(name if name[0] != "'" else name[1:-1].replace("''", "'"))
    out["data"] = data[1:-1].replace("''", "'") if data[0] == "'" else _scalar(data)
    return out


class _Reader:
    """Recursive descent over the lines of a canonical file (indents computed once)."""

    def __init__(self, lines: Any, indents: Any, event: Callable[[Any], Any] | None) -> None:
        """``lines`` and ``indents`` are lists (a text read at once) or the two views of
        a :class:`_Streamed` file; ``indents`` ends with a sentinel ``-1``."""
        self.event = event
        self.lines: list[str] = lines
        self.indents: list[int] = indents
        self.pos = 0

    @classmethod
    def of_text(cls, text: str, event: Callable[[Any], Any] | None) -> _Reader:
        if not text.endswith("\n") or "\r" in text or "\t" in text:
            raise NotCanonicalError("not the writer's line layout")
        lines = text.split("\n")[:-1]
        indents = [len(line) - len(line.lstrip(" ")) for line in lines]
        indents.append(-1)  # a sentinel: the end of the text closes every block
        return cls(lines, indents, event)

    def mapping(self, indent: int, depth: int) -> dict[Any, Any]:
        out: dict[Any, Any] = {}
        lines, indents = self.lines, self.indents
        while indents[self.pos] == indent:
            line = lines[self.pos]
            match = _KEY.match(line, indent)
            if match is None:
                if line[indent] == "-":
                    break
                raise NotCanonicalError("expected a key")
            token = match.group(1)
            key = token if token[0] not in "'\"" else _scalar(token)
            if key in out:
                raise NotCanonicalError("duplicate key")
            self.pos += 1
            rest = line[match.end() :]
            if rest and rest[0] not in "{[|" and " #" not in rest:
                out[key] = _scalar(rest)
            else:
                out[key] = (
                    self.events(indent)
                    if key == "events" and not rest and self.event is not None
                    else self.after_head(rest, indent, depth)
                )
        if indents[self.pos] > indent:
            raise NotCanonicalError("unexpected indentation")
        return out

    def sequence(self, indent: int, depth: int) -> list[Any]:
        out: list[Any] = []
        lines, indents = self.lines, self.indents
        while indents[self.pos] == indent and lines[self.pos][indent] == "-":
            line = lines[self.pos]
            if not line.startswith("- ", indent):
                raise NotCanonicalError("expected '- '")
            rest = line[indent + 2 :]
            if rest.startswith("- "):
                # The item's content starts on the dash line: re-read it as its own line.
                lines[self.pos] = " " * (indent + 2) + rest
                indents[self.pos] = indent + 2
                out.append(self.sequence(indent + 2, depth + 1))
            elif _KEY.match(rest):
                lines[self.pos] = " " * (indent + 2) + rest
                indents[self.pos] = indent + 2
                out.append(self.mapping(indent + 2, depth + 1))
            else:
                self.pos += 1
                out.append(self.after_head(rest, indent + 2, depth, in_seq=True))
        return out

    def events(self, indent: int) -> list[Any]:
        """An event list, each ``- {...}`` line read and handed to ``self.event`` at once
        (what it returns is kept): a 50 MB stream is never held as a dict per event."""
        out: list[Any] = []
        lines, indents, event = self.lines, self.indents, self.event
        assert event is not None
        while indents[self.pos] == indent and lines[self.pos].startswith("- {", indent):
            out.append(event(_flow(lines[self.pos][indent + 2 :])))
            self.pos += 1
        if not out:
            raise NotCanonicalError("an empty event list is written as []")
        return out

    def after_head(self, rest: str, indent: int, depth: int, *, in_seq: bool = False) -> Any:
        """The value after ``key:`` / ``-``: inline, a literal block, or a nested block."""
        if depth > MAX_DEPTH + 8:
            raise NotCanonicalError("too deep")
        if rest in ("|", "|-", "|+"):
            return self.literal(rest, indent if in_seq else indent + 2)
        if rest:
            if rest[0] in "{[" and rest not in ("{}", "[]"):
                return _flow(rest)
            if " #" in rest and rest[0] not in "'\"":
                raise NotCanonicalError("comment")
            return _scalar(rest)
        following = self.indents[self.pos]
        if not in_seq and following == indent and self.lines[self.pos].startswith("- ", indent):
            return self.sequence(indent, depth + 1)
        if following > indent:
            return self.mapping(following, depth + 1)
        raise NotCanonicalError("missing value")

    def literal(self, indicator: str, indent: int) -> str:
        lines: list[str] = []
        while self.indents[self.pos] >= indent or self.lines[self.pos : self.pos + 1] == [""]:
            lines.append(self.lines[self.pos][indent:])
            self.pos += 1
        body_lines = list(lines)
        while body_lines and not body_lines[-1]:
            body_lines.pop()
        if not body_lines:
            raise NotCanonicalError("empty literal")
        trailing = len(lines) - len(body_lines)
        body = "\n".join(body_lines)
        if indicator == "|-":
            return body if trailing == 0 else _no(str)
        if indicator == "|":
            return body + "\n" if trailing == 0 else _no(str)
        return body + "\n" * (trailing + 1)


def _no(kind: type[str]) -> str:
    raise NotCanonicalError(f"unexpected blank lines after a {kind.__name__} block")


def read_canonical(text: str, *, event: Callable[[Any], Any] | None = None) -> Any:
    """The data of a file in the writer's layout; raises :class:`NotCanonicalError` otherwise.

    ``event``, when given, receives each stream event's data as it is read, and the
    event lists hold what it returns instead."""
    try:
        reader = _Reader.of_text(text, event)
        data = reader.mapping(0, 1)
    except (IndexError, ValueError, OverflowError, RecursionError) as exc:
        raise NotCanonicalError(str(exc)) from None
    if reader.pos != len(reader.lines):
        raise NotCanonicalError("text after the document")
    return data


def read_canonical_file(path: Path, *, event: Callable[[Any], Any]) -> Any:
    """:func:`read_canonical` of the file at ``path``, read a line at a time and never
    held whole: the writer verifies a 50 MB stream it wrote this way (issue 18)."""
    with path.open("rb") as handle:
        streamed = _Streamed(handle)
        try:
            reader = _Reader(streamed.lines, streamed.indents, event)
            data = reader.mapping(0, 1)
        except (IndexError, ValueError, OverflowError, RecursionError) as exc:
            raise NotCanonicalError(str(exc)) from None
        if not streamed.ended_at(reader.pos):
            raise NotCanonicalError("text after the document")
    return data


class _Streamed:
    """The lines of a file as a :class:`_Reader` reaches them (it only ever reads its
    current line): two list-like views, ``lines`` and ``indents``, over one line
    read at a time. A line behind the reader is gone."""

    def __init__(self, handle: BinaryIO) -> None:
        self._handle = handle
        self._at = -1  # index of the line held
        self._line: str | None = None  # None: past the end
        self._indent = -1
        self.lines = _View(self, "_line")
        self.indents = _View(self, "_indent")

    def seek(self, index: int) -> None:
        if index < self._at:
            raise IndexError("a line behind the reader")
        while self._at < index:
            self._at += 1
            raw = self._handle.readline()
            if not raw:
                self._line, self._indent = None, -1
                continue
            line = raw.decode("utf-8")  # a UnicodeDecodeError is a ValueError
            if not line.endswith("\n") or "\r" in line or "\t" in line:
                raise NotCanonicalError("not the writer's line layout")
            self._line = line[:-1]
            self._indent = len(self._line) - len(self._line.lstrip(" "))

    def ended_at(self, index: int) -> bool:
        """Whether the file has no line ``index``: the reader read every line."""
        self.seek(index)
        return self._line is None


class _View:
    """``lines[pos]``, ``lines[pos:pos + 1]`` and ``lines[pos] = ...`` (or the same of
    ``indents``) at the reader's position, over a :class:`_Streamed` file."""

    def __init__(self, streamed: _Streamed, field: str) -> None:
        self._streamed, self._field = streamed, field

    def __getitem__(self, index: int | slice) -> Any:
        at = index.start if isinstance(index, slice) else index
        self._streamed.seek(at)
        value = getattr(self._streamed, self._field)
        if isinstance(index, slice):
            return [] if self._streamed._line is None else [value]
        if value is None:
            raise IndexError("past the last line")
        return value

    def __setitem__(self, index: int, value: Any) -> None:
        self._streamed.seek(index)
        setattr(self._streamed, self._field, value)

"""A fast reader for the canonical YAML that :mod:`.emit` writes, and nothing else.

libyaml builds a Python node (with two position marks) for every scalar before
anything is constructed: about 10 µs per node, so a 100,000-event stream takes
seconds. Our own files have one fixed layout, so this reader parses just that
layout line by line with regular expressions.

It is only a shortcut, never an authority: what it reads is accepted only if the
writer gives back the file's exact text. Any file this reader misreads, or any
construct it does not know (an alias, a tag, a comment, a hand edit), fails that
check or raises :class:`NotCanonicalError`, and the caller falls back to the safe
YAML loader, which also produces the precise errors.

Writing the file again to compare cost about as much as reading it (issue 29), so
:func:`read_written` holds each line to the writer as it reads it: a ``key: value``
line must be the writer's line for that key and value (:func:`~.emit.scalar_text`),
a nested block must sit where the writer puts it, a literal block and an event line
must be the writer's lines for what they hold. A line the reader met before is the
same line with the same verdict, so the lines a file repeats (headers, field names)
are held to the writer once. When every line passes, the text is the block layout of
the data read; the caller then asks :func:`~.layout.lays_out` whether the model built
from it writes that layout, and writes the file again only when either says no.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

from .emit import event_line, literal_block, scalar_text
from .errors import NotCanonicalError, UnstorableError
from .scalars import MAX_DEPTH, yaml_key

__all__ = [
    "BLOCK_BYTES",
    "read_canonical",
    "read_canonical_file",
    "read_event",
    "read_written",
    "scan_canonical_file",
]

BLOCK_BYTES = 64 * 1024
"""About how much of a file :func:`read_canonical_file` reads at a time."""


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
_PROVEN_DEPTH = 40
"""Nesting beyond which :func:`read_written` proves nothing (the writer refuses more
than :data:`~.scalars.MAX_DEPTH` levels; real bodies stay far below this)."""
_LITERALS = ("|", "|-", "|+")
_NESTED = object()
"""What :class:`_Reader` remembers as the value of a ``key:`` line whose block follows."""
_PROVEN_LINES: dict[str, tuple[Any, Any]] = {}
"""Lines readers proving what they read found to be the writer's (:attr:`_Reader.seen`),
kept from file to file: a suite's cassettes repeat their header lines, model names and
field names (bench/ W4: a test's cassette read about 45 lines, each held to the writer
anew). A line's text alone decides what it holds and whether the writer writes it;
only immutable values are kept, and at most :data:`_SEEN_LINES` lines."""
_ITEMS: dict[str, tuple[bool, str]] = {}
"""Sequence item lines read so far, whatever the reader (:attr:`_Reader.items`)."""
_SEEN_LINES = 1 << 15
"""How many distinct ``key: scalar`` lines a reader remembers at most (a few MB)."""
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


def read_event(text: str) -> Any:
    """The data of one event line's flow mapping (``{t: 0.1, data: '...'}``, the line
    after its ``- ``), as the canonical reader reads it; raises
    :class:`NotCanonicalError` for anything else. A caller holding one line of a file
    checks it as the whole-file reader does: the writer must give the line back."""
    try:
        return _flow(text)
    except (IndexError, ValueError, OverflowError, RecursionError) as exc:
        raise NotCanonicalError(str(exc)) from None


def _written(token: str, key: str, rest: str, value: Any) -> bool:
    """Whether ``token: rest`` is the writer's line for ``key`` and the scalar ``value``."""
    try:
        return token == yaml_key(key) and rest == scalar_text(value)
    except UnstorableError:
        return False


def _item_written(rest: str, value: Any) -> bool:
    """Whether ``- rest`` is the writer's line for the sequence item ``value``."""
    try:
        return rest == scalar_text(value)
    except UnstorableError:
        return False


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

    def __init__(
        self,
        lines: list[str],
        indents: list[int],
        event: Callable[[Any], Any] | None,
        *,
        let_go: bool = False,
        deferred: dict[int, Any] | None = None,
        prove: bool = False,
    ) -> None:
        """``indents`` ends with a sentinel ``-1``; with ``let_go`` an event's line is
        dropped from ``lines`` once the event is built (a file's lines are not kept).
        ``deferred`` maps a line number to the value of the event list that starts on
        it (one stand-in line that replaces a stream's lines, see :mod:`..big_file`).
        ``prove``: hold each line to the writer (see the module docstring); ``proven``
        then says whether every line passed."""
        self.prove = self.proven = prove
        self.deferred = deferred
        self.event = event
        self.lines = lines
        self.indents = indents
        self.let_go = let_go
        self.pos = 0
        self.items = _ITEMS
        """Sequence lines ``- key: ...`` / ``- - ...`` read so far: whether the item is a
        list, and the line as the item's own line (a file repeats most of them)."""
        self.seen: dict[str, tuple[Any, Any]] = _PROVEN_LINES if prove else {}
        """``key: scalar`` lines read so far, and what they held: a file repeats most
        of them (header lines, a model's name, field names with a small number), and a
        line's text alone decides what it holds (its indent is its leading spaces). A
        ``key:`` line whose block follows is kept with :data:`_NESTED` as its value.
        A reader that proves what it reads keeps only the lines it proved, in memory
        shared by every file it and the next readers read (:data:`_PROVEN_LINES`)."""

    @classmethod
    def of_text(
        cls,
        text: str,
        event: Callable[[Any], Any] | None,
        deferred: dict[int, Any] | None = None,
        *,
        prove: bool = False,
    ) -> _Reader:
        if not text.endswith("\n") or "\r" in text or "\t" in text:
            raise NotCanonicalError("not the writer's line layout")
        lines = text.split("\n")[:-1]
        indents = _indents(lines)
        indents.append(-1)  # a sentinel: the end of the text closes every block
        return cls(lines, indents, event, deferred=deferred, prove=prove)

    def mapping(self, indent: int, depth: int) -> dict[Any, Any]:
        out: dict[Any, Any] = {}
        lines, indents, seen = self.lines, self.indents, self.seen
        pos = self.pos  # kept local, and in self.pos around the nested reads
        while indents[pos] == indent:
            line = lines[pos]
            known = seen.get(line)
            if known is not None:  # read before: the same key and (immutable) scalar
                key, value = known
                if key in out:
                    raise NotCanonicalError("duplicate key")
                if value is _NESTED:  # the same ``key:`` line: its block follows
                    self.pos = pos + 1
                    out[key] = self.nested(key, indent, depth)
                    pos = self.pos
                else:
                    out[key] = value
                    pos += 1
                continue
            match = _KEY.match(line, indent)
            if match is None:
                if line[indent] == "-":
                    break
                raise NotCanonicalError("expected a key")
            token = match.group(1)
            key = token if token[0] not in "'\"" else _scalar(token)
            if key in out:
                raise NotCanonicalError("duplicate key")
            pos += 1
            rest = line[match.end() :]
            if rest and rest[0] not in "{[|" and " #" not in rest:
                out[key] = value = _scalar(rest)
                if self.proven and not _written(token, key, rest, value):
                    self.proven = False
                elif self.proven or not self.prove:  # a line that failed is not kept
                    if len(seen) >= _SEEN_LINES:
                        seen.clear()  # bounded: the lines that keep coming back come back
                    seen[line] = (key, value)
            else:
                self.pos = pos
                out[key] = value = (
                    self.after_head(rest, indent, depth)
                    if rest
                    else self.nested(key, indent, depth)
                )
                pos = self.pos
                if self.proven and not self._head_written(token, key, rest, value, line):
                    self.proven = False
                elif not rest and (self.proven or not self.prove):
                    seen[line] = (key, _NESTED)  # a nested block's head, kept as a scalar's
        self.pos = pos
        if indents[pos] > indent:
            raise NotCanonicalError("unexpected indentation")
        return out

    def nested(self, key: Any, indent: int, depth: int) -> Any:
        """The block after a ``key:`` line with nothing after the colon."""
        if key == "events" and self.event is not None:
            return self.events(indent, depth)
        return self.after_head("", indent, depth)

    def sequence(self, indent: int, depth: int) -> list[Any]:
        out: list[Any] = []
        lines, indents, items = self.lines, self.indents, self.items
        inner = indent + 2
        while indents[self.pos] == indent and lines[self.pos][indent] == "-":
            line = lines[self.pos]
            known = items.get(line)
            if known is None:
                if not line.startswith("- ", indent):
                    raise NotCanonicalError("expected '- '")
                rest = line[inner:]
                if not rest.startswith("- ") and not _KEY.match(rest):
                    self.pos += 1
                    out.append(value := self.after_head(rest, inner, depth, in_seq=True))
                    if self.proven and rest not in _LITERALS and not _item_written(rest, value):
                        self.proven = False
                    continue
                # The item's content starts on the dash line: re-read it as its own line.
                if len(items) >= _SEEN_LINES:
                    items.clear()
                known = items[line] = (rest.startswith("- "), " " * inner + rest)
            listed, lines[self.pos] = known
            indents[self.pos] = inner
            out.append(
                self.sequence(inner, depth + 1) if listed else self.mapping(inner, depth + 1)
            )
        return out

    def _head_written(self, token: str, key: str, rest: str, value: Any, line: str) -> bool:
        """Whether a key line whose value is not a plain one-line scalar is the writer's:
        its key as the writer writes it, then nothing (a nested block, checked where it
        is read), a literal block's indicator (its lines checked by :meth:`literal`), or
        a one-line value (``{}``, a quoted text with `` #``)."""
        try:
            if token != yaml_key(key):
                return False
        except UnstorableError:
            return False
        if not rest:
            return line[-1] == ":"
        return rest in _LITERALS or _item_written(rest, value)

    def events(self, indent: int, depth: int) -> Any:
        """An event list, each ``- {...}`` line read and handed to ``self.event`` at once
        (what it returns is kept): a 50 MB stream is never held as a dict per event.
        An ``events`` key whose block is not event lines (a JSON body's) is read as any
        block is."""
        if self.deferred and self.pos in self.deferred:
            self.pos += 1  # the stand-in line
            return self.deferred.pop(self.pos - 1)
        if not self.lines[self.pos].startswith("- {", indent):
            return self.after_head("", indent, depth)
        out: list[Any] = []
        lines, indents, event = self.lines, self.indents, self.event
        assert event is not None
        let_go = self.let_go
        while indents[self.pos] == indent and lines[self.pos].startswith("- {", indent):
            line = lines[self.pos]
            out.append(built := event(_flow(line[indent + 2 :])))
            if self.proven:
                try:
                    self.proven = event_line(built) == line
                except (AttributeError, UnstorableError):  # not an event the writer writes
                    self.proven = False
            if let_go:
                lines[self.pos] = ""
            self.pos += 1
        return out

    def after_head(self, rest: str, indent: int, depth: int, *, in_seq: bool = False) -> Any:
        """The value after ``key:`` / ``-``: inline, a literal block, or a nested block."""
        if depth > MAX_DEPTH + 8:
            raise NotCanonicalError("too deep")
        if depth > _PROVEN_DEPTH:
            self.proven = False
        if rest in _LITERALS:
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
            if in_seq or following != indent + 2:  # the writer nests a mapping 2 deeper
                self.proven = False
            return self.mapping(following, depth + 1)
        raise NotCanonicalError("missing value")

    def literal(self, indicator: str, indent: int) -> str:
        start = self.pos
        text = self._literal(indicator, indent)
        if self.proven:
            block = literal_block(text)
            pad = " " * indent
            self.proven = block is not None and block[0] == indicator
            if self.proven and block is not None:
                written = [pad + line if line else "" for line in block[1]]
                self.proven = self.lines[start : self.pos] == written
        return text

    def _literal(self, indicator: str, indent: int) -> str:
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


def read_canonical(
    text: str,
    *,
    event: Callable[[Any], Any] | None = None,
    deferred: dict[int, Any] | None = None,
) -> Any:
    """The data of a file in the writer's layout; raises :class:`NotCanonicalError` otherwise.

    ``event``, when given, receives each stream event's data as it is read, and the
    event lists hold what it returns instead. ``deferred`` (with ``event``) maps the
    0-based number of a line that stands in for an event list to that list's value;
    each must be read as an event list (a stand-in read any other way is refused)."""
    return _read(_Reader.of_text(text, event, deferred), deferred)


def read_written(text: str, *, event: Callable[[Any], Any]) -> tuple[Any, bool]:
    """:func:`read_canonical`, and whether every line of ``text`` is the writer's line
    for what it holds (see the module docstring): then ``text`` is the block layout
    of the data, and :func:`~.layout.lays_out` says whether a model built from it
    writes the same. ``event`` must build the writer's event objects."""
    reader = _Reader.of_text(text, event, prove=True)
    data = _read(reader, None)
    return data, reader.proven


def _read(reader: _Reader, deferred: dict[int, Any] | None) -> Any:
    try:
        data = reader.mapping(0, 1)
    except (IndexError, ValueError, OverflowError, RecursionError) as exc:
        raise NotCanonicalError(str(exc)) from None
    if reader.pos != len(reader.lines):
        raise NotCanonicalError("text after the document")
    if deferred:
        raise NotCanonicalError("a stand-in line not read as an event list")
    return data


def read_canonical_file(path: Path, *, event: Callable[[Any], Any]) -> tuple[Any, bool]:
    """:func:`read_written` of the file at ``path``, for replay's load: never held as
    one text. Its lines are read a block at a time, and each stream event's line is let
    go once ``event`` has built the event, so a 50 MB stream peaks at about the loaded
    model (issue 18) while the reader indexes plain lists, as fast as the whole text
    (issue 17's W1: reading through views of one line cost a third more)."""
    try:
        with path.open("rb") as handle:
            lines = _lines_of(handle)
    except ValueError as exc:  # not UTF-8
        raise NotCanonicalError(str(exc)) from None
    indents = _indents(lines)
    indents.append(-1)  # a sentinel: the end of the text closes every block
    reader = _Reader(lines, indents, event, let_go=True, prove=True)
    return _read(reader, None), reader.proven


def scan_canonical_file(path: Path, *, event: Callable[[Any], Any]) -> Any:
    """:func:`read_canonical_file` holding at most a block of the file's lines, for the
    writer's check of a file it wrote while the cassette is in memory anyway: a 50 MB
    stream is verified without its text or its lines (issue 18)."""
    with path.open("rb") as handle:
        streamed = _Streamed(handle)
        try:
            reader = _Reader(streamed.lines, streamed.indents, event)  # type: ignore[arg-type]
            data = reader.mapping(0, 1)
            ended = streamed.ended_at(reader.pos)
        except (IndexError, ValueError, OverflowError, RecursionError) as exc:
            raise NotCanonicalError(str(exc)) from None
        if not ended:
            raise NotCanonicalError("text after the document")
    return data


def _lines_of(handle: BinaryIO, *, blocks: int = -1) -> list[str]:
    """The lines of a file in the writer's layout, read :data:`BLOCK_BYTES` at a time
    (``blocks`` of them, or all), the handle left at the start of the first line not
    read. A block is cut after its last line break, so no UTF-8 sequence is split, and
    the rest is read again with the next block: reading line by line made a bytes object
    per line before the text was decoded (a third of the time, issue 29)."""
    lines: list[str] = []
    while blocks != 0 and (raw := handle.read(BLOCK_BYTES)):
        blocks -= 1
        parts = [raw]
        while (cut := raw.rfind(b"\n") + 1) == 0 and (raw := handle.read(BLOCK_BYTES)):
            parts.append(raw)  # a line longer than a block: read on to its end
        if cut == 0:
            raise NotCanonicalError("not the writer's line layout: no line break at the end")
        if cut < len(raw):
            handle.seek(cut - len(raw), os.SEEK_CUR)  # the next block starts at that line
        parts[-1] = raw[:cut]
        text = b"".join(parts).decode("utf-8")  # a UnicodeDecodeError is a ValueError
        if "\r" in text or "\t" in text:
            raise NotCanonicalError("not the writer's line layout")
        block = text.split("\n")
        block.pop()
        lines += block
    return lines


def _indents(lines: list[str]) -> list[int]:
    return [len(line) - len(line.lstrip(" ")) for line in lines]


class _Streamed:
    """The lines of a file as a :class:`_Reader` reaches them: two list-like views,
    ``lines`` and ``indents``, over a block of lines read at a time (about
    :data:`BLOCK_BYTES`). The reader only ever reads its current line, so a block is
    dropped up to that line when the next is read, and a line behind it is gone."""

    def __init__(self, handle: BinaryIO) -> None:
        self._handle = handle
        self.base = 0  # index in the file of the block's first line
        self.block: list[str] = []
        self.block_indents: list[int] = []  # ends with the sentinel -1 once at the end
        self._ended = False
        self.lines = _View(self, indents=False)
        self.indents = _View(self, indents=True)

    def fill(self, index: int) -> None:
        """Read blocks until line ``index`` is held or the file ends; lines before
        ``index`` are let go."""
        if index < self.base:
            raise IndexError("a line behind the reader")
        while index >= self.base + len(self.block) and not self._ended:
            drop = min(index, self.base + len(self.block)) - self.base
            del self.block[:drop], self.block_indents[:drop]
            self.base += drop
            lines = _lines_of(self._handle, blocks=1)
            if not lines:
                self._ended = True
                self.block_indents.append(-1)  # the sentinel: the end closes every block
                return
            self.block += lines
            self.block_indents += _indents(lines)

    def ended_at(self, index: int) -> bool:
        """Whether the file has no line ``index``: the reader read every line."""
        self.fill(index)
        return index - self.base >= len(self.block)


class _View:
    """``lines[pos]``, ``lines[pos:pos + 1]`` and ``lines[pos] = ...`` (or the same of
    ``indents``) at the reader's position, over a :class:`_Streamed` file."""

    def __init__(self, streamed: _Streamed, *, indents: bool) -> None:
        self._streamed, self._indents = streamed, indents

    def _values(self) -> list[Any]:
        streamed = self._streamed
        return streamed.block_indents if self._indents else streamed.block

    def __getitem__(self, index: int | slice) -> Any:
        streamed = self._streamed
        if isinstance(index, slice):  # lines[pos:pos + 1]
            streamed.fill(index.start)
            at = index.start - streamed.base
            return self._values()[at : at + 1]
        values, at = self._values(), index - streamed.base
        if 0 <= at < len(values):  # the common case: a line of the block held
            return values[at]
        streamed.fill(index)
        values, at = self._values(), index - streamed.base
        if at >= len(values):
            raise IndexError("past the last line")
        return values[at]

    def __setitem__(self, index: int, value: Any) -> None:
        self._streamed.fill(index)
        self._values()[index - self._streamed.base] = value

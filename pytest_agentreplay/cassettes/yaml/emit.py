"""Writes cassettes as canonical YAML: stable, unwrapped, one line per SSE event.

PyYAML's emitter picks scalar styles by itself, wraps long lines and can emit
anchors; a cassette must instead be byte-stable (re-saving an unchanged cassette
creates no diff) and read like a conversation. This writer emits one fixed
layout and chooses each scalar's style conservatively (:mod:`.scalars`), a
literal block (``|``, ``|-``, ``|+``) for readable multi-line text in block
context.

No anchors, aliases or tags are ever written, and keys keep a fixed order. The
loader's fast path relies on this: it accepts a file only when the writer gives
back the file's exact text, which the reader proves line by line against
:func:`scalar_text`, :func:`literal_block` and :func:`event_line` (and
:mod:`.layout` for the cassette's own layout), or else re-emitting what it read
shows.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from functools import lru_cache
from typing import Any

from ..fields import (
    StoredBody,
    StoredCassette,
    StoredInteraction,
    StoredRequest,
    StoredResponse,
    TimedEvent,
)
from .errors import UnstorableError
from .scalars import MAX_DEPTH, inline, yaml_float, yaml_key, yaml_string
from .unstorable import unstorable_field

__all__ = [
    "EVENT_BATCH",
    "dump_cassette",
    "dump_interactions",
    "dump_json",
    "event_line",
    "iter_interactions",
    "literal_block",
    "scalar_text",
]


EVENT_BATCH = 2048
"""Event lines per piece of text when a stream is written in pieces."""

# --- block collections ----------------------------------------------------------------


def literal_block(text: str) -> tuple[str, list[str]] | None:
    """The chomping indicator and lines of ``text`` as a literal block, if it can be one."""
    if "\n" not in text or text[0] in " \n" or text.endswith(" ") or " \n" in text:
        return None
    if not text.replace("\n", "").isprintable():
        return None
    body = text.rstrip("\n")
    newlines = len(text) - len(body)
    indicator = "|-" if newlines == 0 else "|" if newlines == 1 else "|+"
    return indicator, body.split("\n") + [""] * max(newlines - 1, 0)


def scalar_text(value: Any) -> str | None:
    """What the writer writes after ``key: `` or ``- `` for ``value`` when that is one
    line: ``None`` where it writes a block (a non-empty collection, a text it writes as
    a literal block). The canonical reader holds each line it reads to it. Raises
    :class:`UnstorableError` for a value the writer refuses."""
    kind = type(value)
    if kind is str:
        if "\n" in value and literal_block(value) is not None:
            return None
        return yaml_string(value, False)
    if (kind is dict or kind is list) and value:
        return None
    return inline(value)


class _Writer:
    """Appends the lines of block-style YAML for nested JSON-like values."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def value(self, head: str, value: Any, indent: int, depth: int) -> None:
        """``head`` (``"  key:"`` / ``"  -"``) and ``value``; nested lines at ``indent``."""
        if type(value) is str:
            block = literal_block(value) if "\n" in value else None
            if block is None:
                self.lines.append(f"{head} {yaml_string(value, False)}")
            else:
                self.literal(head, block, indent + 2)
        elif depth > MAX_DEPTH:
            raise UnstorableError(f"nests deeper than {MAX_DEPTH} levels")
        elif isinstance(value, Mapping) and value:
            self.lines.append(head)
            self.mapping(value, indent + 2, depth + 1)
        elif isinstance(value, (list, tuple)) and value:
            self.lines.append(head)
            self.sequence(value, indent, depth + 1)
        else:
            self.lines.append(f"{head} {inline(value)}")

    def literal(self, head: str, block: tuple[str, list[str]], indent: int) -> None:
        indicator, lines = block
        pad = " " * indent
        self.lines.append(f"{head} {indicator}")
        self.lines.extend(pad + line if line else "" for line in lines)

    def mapping(self, mapping: Mapping[Any, Any], indent: int, depth: int) -> None:
        pad = " " * indent
        append = self.lines.append
        for key, item in mapping.items():
            # The common lines written here as value() would write them: a one-line
            # string, and a number or null not nested too deep (issue 29).
            kind = type(item)
            if kind is str and "\n" not in item:
                append(f"{pad}{yaml_key(key)}: {yaml_string(item, False)}")
            elif (kind is int or item is None) and depth <= MAX_DEPTH:
                append(f"{pad}{yaml_key(key)}: {inline(item)}")
            else:
                self.value(f"{pad}{yaml_key(key)}:", item, indent, depth)

    def sequence(self, items: Sequence[Any], indent: int, depth: int) -> None:
        head = " " * indent + "-"
        for item in items:
            self.item(head, item, indent, depth)

    def item(self, head: str, item: Any, indent: int, depth: int) -> None:
        """One sequence entry: ``head`` is the dash, its content starts at ``indent + 2``."""
        if depth > MAX_DEPTH:
            raise UnstorableError(f"nests deeper than {MAX_DEPTH} levels")
        inner = " " * (indent + 2)
        if isinstance(item, Mapping) and item:
            lead = f"{head} "
            for key, value in item.items():
                self.value(f"{lead}{yaml_key(key)}:", value, indent + 2, depth + 1)
                lead = inner
        elif isinstance(item, (list, tuple)) and item:
            lead = f"{head} -"
            for value in item:
                self.item(lead, value, indent + 2, depth + 1)
                lead = f"{inner}-"
        elif isinstance(item, str) and (block := literal_block(item)) is not None:
            self.literal(head, block, indent + 2)
        else:
            self.lines.append(f"{head} {inline(item)}")


def dump_json(value: Any, *, indent: int = 0) -> list[str]:
    """Block-style lines for a JSON value under a key at column ``indent`` (for checks)."""
    writer = _Writer()
    writer.value(" " * indent + "json:", value, indent, 0)
    return writer.lines


# --- the cassette layout ---------------------------------------------------------------


def event_line(event: TimedEvent) -> str:
    """The line of one stream event, as the writer writes it (no newline)."""
    parts = []
    if event.t is not None:
        parts.append(f"t: {yaml_float(event.t)}")
    if event.event is not None:
        parts.append(f"event: {yaml_string(event.event, flow=True)}")
    if event.id is not None:
        parts.append(f"id: {yaml_string(event.id, flow=True)}")
    if event.retry is not None:
        parts.append(f"retry: {event.retry}")
    if event.comments:
        parts.append(f"comments: [{', '.join(_comment(c) for c in event.comments)}]")
    parts.append(f"data: {yaml_string(event.data, flow=True)}")
    return "    - {" + ", ".join(parts) + "}"


def _comment(comment: str | None) -> str:
    """A comment line in an event's flow list; ``null`` for the blank line that closed
    a block of comments only."""
    return "null" if comment is None else yaml_string(comment, flow=True)


def _headers(writer: _Writer, headers: Mapping[str, str]) -> None:
    if headers:
        items = tuple(headers.items())
        # Text only in the cache: 1, 1.0 and True are one key to it, not to the writer.
        text = all(type(name) is str and type(value) is str for name, value in items)
        writer.lines += _header_lines(items) if text else _header_lines.__wrapped__(items)


@lru_cache(maxsize=64)
def _header_lines(items: tuple[tuple[str, str], ...]) -> tuple[str, ...]:
    """The lines of a headers block: one text per set of headers, which most of a
    cassette's requests share (the same client), written once (issue 29)."""
    writer = _Writer()
    writer.lines.append("    headers:")
    lowered: dict[str, str] = {}
    for name, value in items:
        key = name.lower()
        lowered[key] = f"{lowered[key]}, {value}" if key in lowered else value
    writer.mapping(dict(sorted(lowered.items())), 6, 3)
    return tuple(writer.lines)


def _body(writer: _Writer, side: StoredBody) -> None:
    if side.json_body is not None:
        writer.value("    json:", side.json_body, 4, 2)
    if side.body is not None:
        writer.value("    body:", side.body, 4, 2)
    if side.body_b64 is not None:
        writer.lines.append(f"    body_b64: {yaml_string(side.body_b64, flow=False)}")


def _request(writer: _Writer, request: StoredRequest) -> None:
    writer.lines.append(f"    method: {yaml_string(request.method, flow=False)}")
    writer.lines.append(f"    url: {yaml_string(request.url, flow=False)}")
    _headers(writer, request.headers)
    _body(writer, request)


def _response(writer: _Writer, response: StoredResponse) -> Iterator[str]:
    """The response's lines; a stream's events in batches of :data:`EVENT_BATCH` lines,
    each batch one piece of text (ending with a newline), so that a 50 MB stream is
    written without its whole text, or a line per event, held at once (issue 18)."""
    writer.lines.append(f"    status: {response.status}")
    _headers(writer, response.headers)
    _body(writer, response)
    events = response.events
    if events is not None:
        writer.lines.append("    events:" if events else "    events: []")
        for start in range(0, len(events), EVENT_BATCH):
            yield _joined(writer.lines)
            writer.lines = [event_line(event) for event in events[start : start + EVENT_BATCH]]
    if events is not None or response.end != "complete":
        writer.lines.append(f"    end: {response.end}")
    if response.truncated is not None:
        writer.lines.append(f"    truncated: {yaml_string(response.truncated, flow=False)}")
    if response.tail is not None:
        writer.value("    tail:", response.tail, 4, 2)


def _joined(lines: list[str]) -> str:
    return "\n".join(lines) + "\n" if lines else ""


def dump_cassette(cassette: StoredCassette) -> str:
    """The canonical YAML text of ``cassette`` (ends with a newline).

    Raises :class:`UnstorableError` (with the field path) for a value YAML cannot
    carry faithfully.
    """
    try:
        return dump_interactions(cassette.interactions, cassette.version)
    except UnstorableError:
        raise unstorable_field(cassette) from None


def dump_interactions(interactions: Sequence[StoredInteraction], version: int) -> str:
    """The canonical YAML text of a cassette holding ``interactions``; raises
    :class:`UnstorableError` (without the field path) for a value YAML cannot carry."""
    return "".join(iter_interactions(interactions, version))


def iter_interactions(interactions: Sequence[StoredInteraction], version: int) -> Iterator[str]:
    """:func:`dump_interactions`' text in pieces, for a writer that streams it to a file:
    a piece per interaction, and a piece per batch of a stream's events."""
    yield "interactions:\n" if interactions else "interactions: []\n"
    for interaction in interactions:
        writer = _Writer()
        writer.lines.append("- request:")
        _request(writer, interaction.request)
        writer.lines.append("  response:")
        yield from _response(writer, interaction.response)
        if interaction.origin is not None:  # an imported interaction says where from
            writer.value("  origin:", interaction.origin, 2, 1)
        yield _joined(writer.lines)
    yield f"version: {version}\n"

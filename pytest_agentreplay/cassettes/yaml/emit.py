"""Writes cassettes as canonical YAML: stable, unwrapped, one line per SSE event.

PyYAML's emitter picks scalar styles by itself, wraps long lines and can emit
anchors; a cassette must instead be byte-stable (re-saving an unchanged cassette
creates no diff) and read like a conversation. This writer emits one fixed
layout and chooses each scalar's style conservatively:

* plain only when every YAML 1.1 *and* 1.2 parser reads it back as the same
  string (so ``yes``, ``null``, ``1e3``, ``0o7``, ``2025-01-01`` are quoted);
* single-quoted for other one-line printable text;
* literal block (``|``, ``|-``, ``|+``) for readable multi-line text in block
  context;
* double-quoted with escapes for everything else (CR, NUL, U+2028, tabs, a BOM,
  control characters), always on one line.

No anchors, aliases or tags are ever written, and keys keep a fixed order. The
loader's fast path relies on this: it accepts a file only when re-emitting what
it read gives back the file's exact text.
"""

from __future__ import annotations

import math
import re
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

__all__ = [
    "MAX_DEPTH",
    "UnstorableError",
    "dump_cassette",
    "dump_interactions",
    "dump_json",
    "inline",
    "iter_interactions",
    "yaml_key",
]


MAX_DEPTH = 100
"""Deepest nesting of YAML collections a cassette may have (JSON bodies included).

Far beyond real provider payloads; it keeps every recursive walk (this writer,
``json.dumps``, the loader) well inside Python's recursion limit."""

EVENT_BATCH = 2048
"""Event lines per piece of text when a stream is written in pieces."""

_MAX_KEY = 1000  # YAML implicit keys must fit in 1024 characters
# PyYAML's implicit resolvers (``yaml/resolver.py``), pattern for pattern: a plain
# scalar one of them matches loads as a bool, number, null, date, ``<<`` or ``=``,
# anything else as a string. Keeping the patterns here (tests check they are still
# PyYAML's) spares loading a cassette an ``import yaml`` (~12 ms of a test run).
IMPLICIT_TAGS: dict[str, re.Pattern[str]] = {
    "tag:yaml.org,2002:bool": re.compile(
        r"""^(?:yes|Yes|YES|no|No|NO
                    |true|True|TRUE|false|False|FALSE
                    |on|On|ON|off|Off|OFF)$""",
        re.X,
    ),
    "tag:yaml.org,2002:float": re.compile(
        r"""^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?
                    |\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?
                    |[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*
                    |[-+]?\.(?:inf|Inf|INF)
                    |\.(?:nan|NaN|NAN))$""",
        re.X,
    ),
    "tag:yaml.org,2002:int": re.compile(
        r"""^(?:[-+]?0b[0-1_]+
                    |[-+]?0[0-7_]+
                    |[-+]?(?:0|[1-9][0-9_]*)
                    |[-+]?0x[0-9a-fA-F_]+
                    |[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$""",
        re.X,
    ),
    "tag:yaml.org,2002:merge": re.compile(r"^(?:<<)$"),
    "tag:yaml.org,2002:null": re.compile(
        r"""^(?: ~
                    |null|Null|NULL
                    | )$""",
        re.X,
    ),
    "tag:yaml.org,2002:timestamp": re.compile(
        r"""^(?:[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]
                    |[0-9][0-9][0-9][0-9] -[0-9][0-9]? -[0-9][0-9]?
                     (?:[Tt]|[ \t]+)[0-9][0-9]?
                     :[0-9][0-9] :[0-9][0-9] (?:\.[0-9]*)?
                     (?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?)$""",
        re.X,
    ),
    "tag:yaml.org,2002:value": re.compile(r"^(?:=)$"),
    "tag:yaml.org,2002:yaml": re.compile(r"^(?:!|&|\*)$"),
}
_BAD_FIRST = frozenset("-?:,[]{}#&*!|>'\"%@` \t.+~=<")
_FLOW_SPECIAL = re.compile(r"[,\[\]{}:#]")
_TYPED_ELSEWHERE = re.compile(
    r"[-+]?(\.[0-9]+|[0-9][0-9_]*(\.[0-9_]*)?)([eE][-+]?[0-9]+)?|0o[0-7]+|0x[0-9a-fA-F]+"
    r"|[-+]?\.(inf|Inf|INF)|\.(nan|NaN|NAN)|y|Y|yes|Yes|YES|n|N|no|No|NO|on|On|ON|off|Off|OFF"
    r"|true|True|TRUE|false|False|FALSE|null|Null|NULL"
)
_NEEDS_ESCAPE = re.compile(r"[^\x20\x21\x23-\x5b\x5d-\x7e]")
_SHORT_ESCAPES = {
    "\\": "\\\\",
    '"': '\\"',
    "\0": "\\0",
    "\a": "\\a",
    "\b": "\\b",
    "\t": "\\t",
    "\n": "\\n",
    "\v": "\\v",
    "\f": "\\f",
    "\r": "\\r",
    "\x1b": "\\e",
    "\x85": "\\N",
    "\xa0": "\\_",
    "\u2028": "\\L",
    "\u2029": "\\P",
}


class UnstorableError(ValueError):
    """A value cannot be written so that loading gives it back (a lone surrogate,
    a non-string key, nesting beyond :data:`MAX_DEPTH`, ...)."""

    def __init__(self, problem: str, where: tuple[str | int, ...] = ()) -> None:
        self.problem = problem
        self.where = where
        super().__init__(problem)


# --- scalars ------------------------------------------------------------------------


@lru_cache(maxsize=8192)
def _plain_ok(text: str, flow: bool) -> bool:
    """Can ``text`` be written without quotes and read back as this same string?"""
    if not text or text[0] in _BAD_FIRST or text[-1] in " :" or not text.isprintable():
        return False
    if ": " in text or " #" in text or (flow and _FLOW_SPECIAL.search(text)):
        return False
    if _TYPED_ELSEWHERE.fullmatch(text):
        return False
    return not any(pattern.match(text) for pattern in IMPLICIT_TAGS.values())


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    short = _SHORT_ESCAPES.get(char)
    if short is not None:
        return short
    if char.isprintable():
        return char
    code = ord(char)
    if 0xD800 <= code <= 0xDFFF:
        raise UnstorableError("holds a lone surrogate, which UTF-8 (and so YAML) cannot carry")
    if code <= 0xFF:
        return f"\\x{code:02X}"
    return f"\\u{code:04X}" if code <= 0xFFFF else f"\\U{code:08X}"


def _double_quoted(text: str) -> str:
    return '"' + _NEEDS_ESCAPE.sub(_escape, text) + '"'


def _string(text: str, flow: bool) -> str:
    if text and text[0] not in _BAD_FIRST and len(text) <= 200 and _plain_ok(text, flow):
        return text
    if text.isprintable():
        return "'" + text.replace("'", "''") + "'"
    return _double_quoted(text)


def _float(value: float) -> str:
    if math.isnan(value):
        return ".nan"
    if math.isinf(value):
        return ".inf" if value > 0 else "-.inf"
    text = repr(value)
    # YAML 1.1 floats need a dot: 1e-05 would read back as a string.
    return text.replace("e", ".0e", 1) if "." not in text and "e" in text else text


def _int(value: int) -> str:
    try:
        return str(value)
    except ValueError:  # more digits than Python converts (issue 18): no bare ValueError
        raise UnstorableError(
            f"holds an integer of about {int(value.bit_length() * 0.30103):,} digits, more "
            "than Python writes as text (sys.get_int_max_str_digits())"
        ) from None


def inline(value: Any, *, flow: bool = False) -> str:
    """One scalar (or empty collection) on one line."""
    if isinstance(value, str):
        return _string(value, flow)
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return _int(value)
    if isinstance(value, float):
        return _float(value)
    if isinstance(value, Mapping) and not value:
        return "{}"
    if isinstance(value, (list, tuple)) and not value:
        return "[]"
    raise UnstorableError(f"holds a {type(value).__name__}, which is not JSON")


def yaml_key(key: object) -> str:
    """``key`` as a YAML mapping key (quoted when needed); refused if it is not a
    string or is too long to be a key."""
    if not isinstance(key, str):
        raise UnstorableError(f"has a {type(key).__name__} key; JSON keys are strings")
    return _key_text(key)


@lru_cache(maxsize=8192)  # keys repeat across files: header names, model, messages, ...
def _key_text(key: str) -> str:
    text = _string(key, flow=True)
    if len(text) > _MAX_KEY:
        raise UnstorableError(f"has a key of {len(key)} characters; YAML keys are limited")
    return text


# --- block collections ----------------------------------------------------------------


def _literal(text: str) -> tuple[str, list[str]] | None:
    """The chomping indicator and lines of ``text`` as a literal block, if it can be one."""
    if "\n" not in text or text[0] in " \n" or text.endswith(" ") or " \n" in text:
        return None
    if not text.replace("\n", "").isprintable():
        return None
    body = text.rstrip("\n")
    newlines = len(text) - len(body)
    indicator = "|-" if newlines == 0 else "|" if newlines == 1 else "|+"
    return indicator, body.split("\n") + [""] * max(newlines - 1, 0)


class _Writer:
    """Appends the lines of block-style YAML for nested JSON-like values."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def value(self, head: str, value: Any, indent: int, depth: int) -> None:
        """``head`` (``"  key:"`` / ``"  -"``) and ``value``; nested lines at ``indent``."""
        if type(value) is str:
            block = _literal(value) if "\n" in value else None
            if block is None:
                self.lines.append(f"{head} {_string(value, False)}")
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
        for key, item in mapping.items():
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
        elif isinstance(item, str) and (block := _literal(item)) is not None:
            self.literal(head, block, indent + 2)
        else:
            self.lines.append(f"{head} {inline(item)}")


def dump_json(value: Any, *, indent: int = 0) -> list[str]:
    """Block-style lines for a JSON value under a key at column ``indent`` (for checks)."""
    writer = _Writer()
    writer.value(" " * indent + "json:", value, indent, 0)
    return writer.lines


# --- the cassette layout ---------------------------------------------------------------


def _event(event: TimedEvent) -> str:
    parts = []
    if event.t is not None:
        parts.append(f"t: {_float(event.t)}")
    if event.event is not None:
        parts.append(f"event: {_string(event.event, flow=True)}")
    if event.id is not None:
        parts.append(f"id: {_string(event.id, flow=True)}")
    if event.retry is not None:
        parts.append(f"retry: {event.retry}")
    if event.comments:
        parts.append(f"comments: [{', '.join(_comment(c) for c in event.comments)}]")
    parts.append(f"data: {_string(event.data, flow=True)}")
    return "    - {" + ", ".join(parts) + "}"


def _comment(comment: str | None) -> str:
    """A comment line in an event's flow list; ``null`` for the blank line that closed
    a block of comments only."""
    return "null" if comment is None else _string(comment, flow=True)


def _headers(writer: _Writer, headers: Mapping[str, str]) -> None:
    if headers:
        writer.lines.append("    headers:")
        lowered: dict[str, str] = {}
        for name, value in headers.items():
            key = name.lower()
            lowered[key] = f"{lowered[key]}, {value}" if key in lowered else value
        writer.mapping(dict(sorted(lowered.items())), 6, 3)


def _body(writer: _Writer, side: StoredBody) -> None:
    if side.json_body is not None:
        writer.value("    json:", side.json_body, 4, 2)
    if side.body is not None:
        writer.value("    body:", side.body, 4, 2)
    if side.body_b64 is not None:
        writer.lines.append(f"    body_b64: {_string(side.body_b64, flow=False)}")


def _request(writer: _Writer, request: StoredRequest) -> None:
    writer.lines.append(f"    method: {_string(request.method, flow=False)}")
    writer.lines.append(f"    url: {_string(request.url, flow=False)}")
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
            writer.lines = [_event(event) for event in events[start : start + EVENT_BATCH]]
    if events is not None or response.end != "complete":
        writer.lines.append(f"    end: {response.end}")
    if response.truncated is not None:
        writer.lines.append(f"    truncated: {_string(response.truncated, flow=False)}")
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
        from .locate import unstorable_field  # noqa: PLC0415 - emit is what it imports

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

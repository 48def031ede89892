"""One YAML scalar (or mapping key) on one line, written so that every YAML parser
reads it back as the same value: the writer's choice of style, shared by the
canonical writer (:mod:`.emit`) and the re-walk that names a field it refused
(:mod:`.unstorable`).

A string is plain only when every YAML 1.1 *and* 1.2 parser reads it back as the
same string (so ``yes``, ``null``, ``1e3``, ``0o7``, ``2025-01-01`` are quoted);
single-quoted when it is other one-line printable text; double-quoted with escapes
for everything else (CR, NUL, U+2028, tabs, a BOM, control characters).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from .errors import UnstorableError

__all__ = [
    "IMPLICIT",
    "IMPLICIT_TAGS",
    "MAX_DEPTH",
    "inline",
    "yaml_float",
    "yaml_key",
    "yaml_string",
]

MAX_DEPTH = 100
"""Deepest nesting of YAML collections a cassette may have (JSON bodies included).

Far beyond real provider payloads; it keeps every recursive walk (this writer,
``json.dumps``, the loader) well inside Python's recursion limit."""

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
IMPLICIT = re.compile(
    "|".join(f"(?{'x' if rx.flags & re.X else ''}:{rx.pattern})" for rx in IMPLICIT_TAGS.values())
)
"""Whether any of :data:`IMPLICIT_TAGS` matches, in one call (each pattern keeps its
own flags): every string the writer writes is asked, and eight calls were most of
writing a short one (issue 29)."""
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


@lru_cache(maxsize=8192)
def _plain_ok(text: str, flow: bool) -> bool:
    """Can ``text`` be written without quotes and read back as this same string?"""
    if not text or text[0] in _BAD_FIRST or text[-1] in " :" or not text.isprintable():
        return False
    if ": " in text or " #" in text or (flow and _FLOW_SPECIAL.search(text)):
        return False
    if _TYPED_ELSEWHERE.fullmatch(text):
        return False
    return IMPLICIT.match(text) is None


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


def yaml_string(text: str, flow: bool) -> str:
    """``text`` as a one-line scalar: plain, single- or double-quoted (see the module
    docs); ``flow``: inside a flow collection, where ``,[]{}:#`` need quotes too."""
    if text and text[0] not in _BAD_FIRST and len(text) <= 200 and _plain_ok(text, flow):
        return text
    if text.isprintable():
        return "'" + text.replace("'", "''") + "'"
    return _double_quoted(text)


def yaml_float(value: float) -> str:
    """``value`` as a YAML float that reads back as the same float."""
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
        return yaml_string(value, flow)
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return _int(value)
    if isinstance(value, float):
        return yaml_float(value)
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
    text = yaml_string(key, flow=True)
    if len(text) > _MAX_KEY:
        raise UnstorableError(f"has a key of {len(key)} characters; YAML keys are limited")
    return text

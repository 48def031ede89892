"""JSON text from a file or the wire, parsed with a bound on its nesting.

``json.loads`` recurses once per level: an SSE event whose data nests 5,000 deep
raised ``RecursionError``, which ``inspect``, ``lint``, ``fold`` and ``diff`` reported
as an internal error (issue 27), and a value that parsed at 900 levels still broke
every recursive walk after it (scrubbing, diffs, folding). Here the nesting is bounded
at :data:`MAX_DEPTH`, the cassette writer's own limit: deeper text is a
:class:`~.errors.TooDeepError`, a ``ValueError`` like any other text that is not JSON, which
every caller already handles.

Counting brackets is two C-speed scans, so the common text (fewer brackets than the
limit, which cannot nest deeper) costs almost nothing; only text with more brackets
is walked, skipping its strings.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from typing import Any

from .errors import TooDeepError

__all__ = ["MAX_DEPTH", "depth", "loads"]

MAX_DEPTH = 100
"""Levels of arrays and objects a parsed value may nest (the cassette writer's limit)."""

_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')
_TOKENS_B = re.compile(rb'"(?:[^"\\]|\\.)*"|[\[\]{}]')
_OPENERS = (b"{", b"[")
_scan_once: Callable[[str, int], tuple[Any, int]] = json.JSONDecoder().scan_once  # type: ignore[attr-defined]
"""The default decoder's value scanner (C): ``json.loads(text)`` without its two
whitespace scans and checks when ``text`` is one value and nothing more."""


def depth(text: str | bytes, stop: int = MAX_DEPTH) -> int:
    """How deep ``text`` nests arrays and objects (strings skipped), counted up to just
    past ``stop``. Not a validator: brackets of text that is not JSON count too."""
    brackets = _brackets(text)
    if brackets <= stop:
        return brackets  # no deeper than there are brackets to open
    return _nesting(text, stop)


def _brackets(text: str | bytes) -> int:
    """How many arrays and objects ``text`` could open: the most it can nest."""
    if isinstance(text, str):
        return text.count("[") + text.count("{")
    return text.count(b"[") + text.count(b"{")


def _nesting(text: str | bytes, stop: int) -> int:
    """:func:`depth` by walking the brackets outside strings."""
    tokens: Iterator[re.Match[str]] | Iterator[re.Match[bytes]] = (
        _TOKENS.finditer(text) if isinstance(text, str) else _TOKENS_B.finditer(text)
    )
    level = deepest = 0
    for token in tokens:
        char = token.group()[:1]
        if char in ("[", "{", b"[", b"{"):
            level += 1
            if level > deepest:
                deepest = level
                if deepest > stop:
                    return deepest
        elif char in ("]", "}", b"]", b"}"):
            level -= 1
    return deepest


def loads(text: str | bytes) -> Any:
    """``json.loads(text)``, refusing nesting beyond :data:`MAX_DEPTH` with a
    :class:`~.errors.TooDeepError` (a ``ValueError``), never a ``RecursionError``. (No
    keyword arguments: an empty ``**kwargs`` is a dict made on every call, and a fake
    reads every request's body here.)"""
    # depth(text) in its two steps: text with fewer brackets than the limit (the usual
    # text) cannot nest deeper, and is not walked (_brackets, without the call)
    brackets = (
        text.count("[") + text.count("{")
        if isinstance(text, str)
        else text.count(b"[") + text.count(b"{")
    )
    if brackets > MAX_DEPTH and _nesting(text, MAX_DEPTH) > MAX_DEPTH:
        raise TooDeepError(MAX_DEPTH)
    if isinstance(text, bytes) and text[:1] in _OPENERS and text[1:2] != b"\x00":
        # What json.loads decodes such bytes as (no BOM, no NUL among the first two: its
        # detect_encoding says UTF-8), without asking: a fake reads every request so.
        text = text.decode("utf-8", "surrogatepass")
    if isinstance(text, str):
        # One value filling the text (a request body as a client writes it): read by the
        # scanner json.loads ends in, without its steps around it (about half its cost
        # for a small body: bench/ W5). Anything else (leading or trailing whitespace, a
        # BOM, text that is no JSON) goes to json.loads, for the same value or error.
        try:
            value, end = _scan_once(text, 0)
        except Exception:  # json.loads says what is wrong, as before
            pass
        else:
            if end == len(text):
                return value
    try:
        return json.loads(text)
    except RecursionError:  # a deep stack already: the limit could not be reached
        raise TooDeepError(MAX_DEPTH) from None

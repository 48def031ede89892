"""Which format a cassette file is in, told cheaply from its text or its parsed data."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal

__all__ = ["Format", "detect_data", "detect_text"]

Format = Literal["agentreplay", "vcrpy", "http-snapshot", "raw-sse"]

_RAW_SSE_START = re.compile(r"(?:event|data|id|retry)[ \t]*:|:")
# The request's own url / uri key: where PyYAML and our writer put it first, then anywhere.
_URL_KEYS = (
    re.compile(r"^ {4}(uri|url):", re.MULTILINE),
    re.compile(r"^[ \t]*(?:- )?(uri|url):", re.MULTILINE),
)
_JSON_URL_KEY = re.compile(r'(?<!\\)"(uri|url)"\s*:')
"""The request's URL key in a JSON document (vcrpy's ``serializer="json"``); a key
inside a JSON-encoded body string has its quotes escaped and does not match."""


def detect_text(text: str) -> Format:
    """Tell the format from the text alone (cheap; a BOM and leading blank lines ignored)."""
    head = text.lstrip("\ufeff \t\r\n")
    if _RAW_SSE_START.match(head):
        return "raw-sse"
    if head.startswith("["):
        return "http-snapshot"
    patterns = (_JSON_URL_KEY,) if head.startswith("{") else _URL_KEYS
    for pattern in patterns:
        match = pattern.search(text)
        if match is not None:
            return "vcrpy" if match.group(1) == "uri" else "agentreplay"
    return "agentreplay"


def detect_data(data: Any) -> Format:
    """``vcrpy`` when the first request has a ``uri`` (ours has ``url``)."""
    try:
        request = data["interactions"][0]["request"]
    except (KeyError, IndexError, TypeError):
        return "agentreplay"
    return "vcrpy" if isinstance(request, Mapping) and "uri" in request else "agentreplay"

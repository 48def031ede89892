"""A cassette file as written: its raw document, its stored responses, where our fields are.

The cassette loader turns every format into our model and drops what a replayer
recomputes (``content-length``, a decoded body's ``content-encoding``). ``lint``
and ``convert`` also need the file as it is: where a field is, what the other
tool's replay would send. The home of each foreign format knows its own layout
(:func:`~..cassettes.formats.detect.foreign_file`); this module asks it.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .. import jsonparse
from ..cassettes.formats.detect import Format, foreign_file
from ..cassettes.io import CassetteFormatError
from ..cassettes.yaml.load import load_yaml
from .analysis import Source

__all__ = [
    "RawResponse",
    "parse_field_path",
    "raw_document",
    "raw_responses",
    "source_loc",
]

Loc = tuple[str | int, ...]

_FIELD_PART = re.compile(r"\[(\d+)\]|\.?([^.\[\]]+)")


def source_loc(fmt: Format, index: int, *rest: str | int) -> Loc:
    """Where ``interactions[index].<rest>`` (our layout) is in a file of format ``fmt``
    (the home of a foreign format knows its field names)."""
    home = foreign_file(fmt)
    return ("interactions", index, *rest) if home is None else home.source_loc(index, *rest)


def parse_field_path(where: str) -> Loc | None:
    """``interactions[2].request.headers.x-api-key`` → its parts; ``None`` for ``line N``."""
    if not where or where.startswith("line "):
        return None
    parts: list[str | int] = []
    for match in _FIELD_PART.finditer(where):
        parts.append(int(match.group(1)) if match.group(1) else match.group(2))
    return tuple(parts)


# --- the raw document ------------------------------------------------------------------


def raw_document(source: Source) -> Any:
    """The file's document as plain data (safe loader), ``None`` for a bare SSE body."""
    if source.format == "raw-sse":
        return None
    try:
        if source.format == "http-snapshot":
            return jsonparse.loads(source.text)
        return load_yaml(source.text, str(source.path))
    except (ValueError, RecursionError, CassetteFormatError):
        return None


@dataclass
class RawResponse:
    """One stored response as the file has it: headers as written, and the bytes the
    source tool replays (``None`` when the file format does not say)."""

    index: int
    headers: dict[str, str]
    sent: bytes | None
    raw_body: bool = False
    """Whether ``sent`` is the stored body itself (not re-serialized from parsed JSON)."""


def _first(value: Any) -> str:
    if isinstance(value, list):
        return str(value[0]) if value else ""
    return "" if value is None else str(value)


def _headers(raw: Any) -> dict[str, str]:
    if not isinstance(raw, Mapping):
        return {}
    return {str(name).lower(): _first(value) for name, value in raw.items()}


def raw_responses(source: Source) -> list[RawResponse]:
    """The stored responses of a vcrpy or http-snapshot file, as the file has them."""
    home = foreign_file(source.format)
    if home is None:
        return []
    out = []
    for index, response in home.stored_responses(raw_document(source)):
        sent, raw_body = home.sent_body(response)
        out.append(RawResponse(index, _headers(response.get("headers")), sent, raw_body))
    return out


def encoded_as(body: bytes, encoding: str) -> bool | None:
    """Whether ``body`` is plausibly encoded with ``encoding`` (``None``: cannot tell)."""
    encoding = encoding.strip().lower()
    if encoding in ("gzip", "x-gzip"):
        return body[:2] == b"\x1f\x8b"
    if encoding == "deflate":
        for wbits in (zlib.MAX_WBITS, -zlib.MAX_WBITS):
            try:
                zlib.decompressobj(wbits).decompress(body[:4096], 1)
            except zlib.error:
                continue
            return True
        return False
    return None

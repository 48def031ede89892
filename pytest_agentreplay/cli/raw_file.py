"""A cassette file as written: its raw document, line numbers, YAML comments, stored headers.

The cassette loader turns every format into our model and drops what a replayer
recomputes (``content-length``, a decoded body's ``content-encoding``). ``lint``
and ``convert`` also need the file as it is: which line a field is on, what a
vcrpy replay would send, whether there are YAML comments a rewrite would lose.
"""

from __future__ import annotations

import json
import re
import zlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from .. import jsonparse
from ..cassettes.formats.detect import Format
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
# Our field names → the source format's, for the parts of a path that differ.
_VCR_NAMES = {"url": "uri", "events": "body", "json": "parsed_body", "tail": "body"}
_SNAPSHOT_NAMES = {"status": "status_code", "events": "body", "json": "body", "tail": "body"}


def source_loc(fmt: Format, index: int, *rest: str | int) -> Loc:
    """Where ``interactions[index].<rest>`` (our layout) is in a file of format ``fmt``."""
    if fmt == "agentreplay":
        return ("interactions", index, *rest)
    names = _VCR_NAMES if fmt == "vcrpy" else _SNAPSHOT_NAMES
    mapped = tuple(names.get(p, p) if isinstance(p, str) else p for p in rest)
    if fmt == "vcrpy":
        return ("interactions", index, *mapped)
    return (index, *mapped)


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


def _as_bytes(value: Any) -> bytes:
    return value if isinstance(value, bytes) else str(value).encode("utf-8")


def _vcr_sent(response: Mapping[str, Any]) -> tuple[bytes | None, bool]:
    if "parsed_body" in response:  # pydantic-ai's serializer: json.dumps on load
        return json.dumps(response["parsed_body"]).encode("utf-8"), False
    body = response.get("body")
    if isinstance(body, Mapping):
        body = body.get("string")
    return (b"" if body is None else _as_bytes(body)), True


def _snapshot_sent(response: Mapping[str, Any]) -> tuple[bytes | None, bool]:
    body = response.get("body")
    if body is None:
        return b"", True
    if isinstance(body, str):
        return body.encode("utf-8"), True
    return json.dumps(body).encode("utf-8"), False


def _pairs(document: Any, fmt: Format) -> Iterator[tuple[int, Mapping[str, Any]]]:
    items = document.get("interactions") if isinstance(document, Mapping) else document
    if not isinstance(items, list):
        return
    for index, item in enumerate(items):
        response = item.get("response") if isinstance(item, Mapping) else None
        if isinstance(response, Mapping):
            yield index, response


def raw_responses(source: Source) -> list[RawResponse]:
    """The stored responses of a vcrpy or http-snapshot file, as the file has them."""
    if source.format not in ("vcrpy", "http-snapshot"):
        return []
    document = raw_document(source)
    sent_of = _vcr_sent if source.format == "vcrpy" else _snapshot_sent
    out = []
    for index, response in _pairs(document, source.format):
        sent, raw_body = sent_of(response)
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

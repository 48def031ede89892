"""A ``multipart/form-data`` body as matched: its parts, without the boundary.

Clients pick a random boundary for every upload (requests, httpx, aiohttp), so the
bytes of a recorded upload never equal the live ones and a file upload never
matched its recording (issue 20). :func:`multipart_parts` gives the parts in order,
each as its headers (names lower-cased) and its content, a JSON value so it keys,
digests and diffs like a JSON body. A body that does not parse as the multipart its
content type announces is ``None``: it is then compared as bytes, as before.
"""

from __future__ import annotations

import base64
import re
from typing import Any

__all__ = ["multipart_boundary", "multipart_parts"]

_BOUNDARY = re.compile(r'(?:^|;)\s*boundary\s*=\s*(?:"([^"]+)"|([^;,\s]+))', re.IGNORECASE)
"""The ``boundary`` parameter (not ``xboundary``), quoted or not, spaces around ``=``
allowed; an unquoted one ends at ``;``, ``,`` or a space."""


def multipart_boundary(content_type: str) -> bytes | None:
    """The boundary of a ``multipart/*`` content type, else ``None``. Matching reads the
    parts with it and the scrubber redacts them with it: one reading, so that a body
    the scrubber treats as parts is matched by its parts too."""
    if not content_type.lower().lstrip().startswith("multipart/"):
        return None
    found = _BOUNDARY.search(content_type)
    if found is None:
        return None
    return (found.group(1) or found.group(2)).encode("latin-1", "replace")


def _content(raw: bytes) -> str | dict[str, str]:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return {"base64": base64.b64encode(raw).decode("ascii")}


def _part(segment: bytes) -> dict[str, Any] | None:
    """One part: headers, a blank line, the content (CRLF or bare LF line breaks)."""
    for separator in (b"\r\n\r\n", b"\n\n"):
        head, found, content = segment.partition(separator)
        if found:
            break
    else:
        return None
    headers: dict[str, str] = {}
    for line in head.splitlines():
        name, colon, value = line.decode("latin-1").partition(":")
        if not colon:
            return None
        headers[name.strip().lower()] = value.strip()
    return {"headers": headers, "content": _content(content)}


def multipart_parts(raw: bytes, content_type: str) -> dict[str, Any] | None:
    """The parts of a multipart ``raw`` body, in order, or ``None`` when it is not one
    (no boundary in ``content_type``, no closing delimiter, a malformed part)."""
    boundary = multipart_boundary(content_type)
    if boundary is None:
        return None
    delimiter = b"--" + boundary
    segments = raw.split(delimiter)
    if len(segments) < 3 or not segments[-1].startswith(b"--"):
        return None
    parts = []
    for segment in segments[1:-1]:
        body = segment.removeprefix(b"\r\n").removeprefix(b"\n")
        body = body.removesuffix(b"\n").removesuffix(b"\r")
        part = _part(body)
        if part is None:
            return None
        parts.append(part)
    return {"multipart": content_type.split(";", maxsplit=1)[0].strip().lower(), "parts": parts}

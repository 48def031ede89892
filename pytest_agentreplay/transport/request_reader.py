"""One HTTP/1.1 request read off a client connection, strictly (RFC 9112).

The port server (:mod:`.server`) serves any process, so whatever reaches its socket is
untrusted: a fuzzer, a client killed mid-upload, a smuggling attempt. Issue 27 found
the standard library's reader let through a chunk size of ``-1`` (read to EOF, past
the 64 MiB cap), answered a request framed by both ``Content-Length`` and
``Transfer-Encoding`` twice on one connection, and handed a body cut short by a
dying client to the fake as if it were whole.

Every way a body enters is decided here, once:

- ``Transfer-Encoding: chunked`` (the only transfer coding read): strict hex sizes
  (no sign, no ``0x``, at most 16 digits), extensions allowed, data followed by its
  line end, trailers read and dropped, the total held to the cap;
- ``Content-Length``: digits only, repeated or listed values must agree;
- neither: no body.

Anything else is a :class:`BadRequestError` with the status to answer (400, 413, 414, 431,
501, 505), after which the connection is closed: both ``Content-Length`` and
``Transfer-Encoding`` (RFC 9112 §6.3: a smuggling vector), ``Transfer-Encoding`` on
HTTP/1.0, a coding other than ``chunked``, obsolete line folding, whitespace before a
header's colon, a bare CR, control characters, an oversized line or head. A client
that goes away before its request is whole raises :class:`IncompleteRequestError`: it was
never made, so it consumes nothing and counts as nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Protocol

from .errors import BadRequestError, IncompleteRequestError

__all__ = [
    "MAX_BODY",
    "MAX_HEADERS",
    "MAX_LINE",
    "Framing",
    "Reader",
    "RequestHead",
    "framing",
    "read_body",
    "read_head",
]

MAX_BODY = 64 * 1024 * 1024
"""Bytes: a request body larger than this is refused (413) without being read."""
MAX_LINE = 8192
"""Bytes of one request line, header line, chunk-size line or trailer line."""
MAX_HEADERS = 100
"""Header (or trailer) fields of one request."""
_EMPTY_LINES = 8  # blank lines skipped before a request line (RFC 9112 §2.2 allows some)
_TOKEN = re.compile(rb"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_VALUE_BAD = re.compile(rb"[\x00-\x08\x0a-\x1f\x7f]")  # controls other than HT
_TARGET = re.compile(rb"[\x21-\x7e\x80-\xff]+")
_VERSION = re.compile(rb"HTTP/([0-9])\.([0-9])")
_DIGITS = re.compile(r"[0-9]+")
_CHUNK_LINE = re.compile(rb"([0-9A-Fa-f]{1,16})[ \t]*(?:;[\x20-\x7e\t\x80-\xff]*)?")


class Reader(Protocol):
    """A buffered binary reader of the connection (``socket.makefile("rb")``)."""

    def readline(self, size: int = -1, /) -> bytes: ...

    def read(self, size: int = -1, /) -> bytes: ...


@dataclass(frozen=True)
class RequestHead:
    """A request line and its header fields, as received (names keep their case)."""

    method: str
    target: str
    version: str
    headers: tuple[tuple[str, str], ...]

    def values(self, name: str) -> list[str]:
        """Every value of header ``name`` (case-insensitive), in order."""
        name = name.lower()
        return [v for k, v in self.headers if k.lower() == name]

    def get(self, name: str) -> str | None:
        """The first value of header ``name``, or ``None``."""
        found = self.values(name)
        return found[0] if found else None

    @property
    def keep_alive(self) -> bool:
        """Whether the client asked to keep the connection (HTTP/1.1 unless it said
        ``close``; HTTP/1.0 only if it said ``keep-alive``)."""
        options = {o.strip().lower() for v in self.values("connection") for o in v.split(",")}
        if self.version == "HTTP/1.0":
            return "keep-alive" in options
        return "close" not in options

    @property
    def expects_continue(self) -> bool:
        """Whether the client waits for ``100 Continue`` before it sends the body."""
        return self.version != "HTTP/1.0" and any(
            v.strip().lower() == "100-continue" for v in self.values("expect")
        )


@dataclass(frozen=True)
class Framing:
    """How the body of a request is delimited: ``chunked``, else ``length`` bytes."""

    chunked: bool = False
    length: int = 0

    @property
    def has_body(self) -> bool:
        return self.chunked or self.length > 0


def _line(rfile: Reader, what: str, status: int) -> bytes | None:
    """One line without its end (CRLF, or a lone LF); ``None`` at EOF before any byte.
    A line longer than :data:`MAX_LINE` is ``status``; a bare CR inside is a 400."""
    try:
        raw = rfile.readline(MAX_LINE + 2)
    except (ConnectionError, TimeoutError) as exc:
        raise IncompleteRequestError(str(exc)) from None
    if not raw:
        return None
    if not raw.endswith(b"\n"):
        if len(raw) > MAX_LINE:
            raise BadRequestError(status, f"{what} longer than {MAX_LINE} bytes")
        raise IncompleteRequestError(f"the connection closed inside the {what}")
    line = raw[:-2] if raw.endswith(b"\r\n") else raw[:-1]
    if len(line) > MAX_LINE:
        raise BadRequestError(status, f"{what} longer than {MAX_LINE} bytes")
    if b"\r" in line:
        raise BadRequestError(400, f"a bare CR in the {what}")
    return line


def _request_line(rfile: Reader) -> bytes | None:
    for _ in range(_EMPTY_LINES + 1):
        line = _line(rfile, "request line", 414)
        if line is None:
            return None  # the client closed between requests: a normal end
        if line:
            return line
    raise BadRequestError(400, "too many empty lines before the request line")


def read_head(rfile: Reader) -> RequestHead | None:
    """The next request's line and headers; ``None`` when the client closed the
    connection between requests."""
    line = _request_line(rfile)
    if line is None:
        return None
    parts = line.split(b" ")
    if len(parts) != 3 or not _TOKEN.fullmatch(parts[0]) or not _TARGET.fullmatch(parts[1]):
        raise BadRequestError(400, "a malformed request line (METHOD TARGET HTTP/1.1 expected)")
    version = _VERSION.fullmatch(parts[2])
    if version is None:
        raise BadRequestError(400, "a malformed HTTP version in the request line")
    if version.group(1) != b"1":
        raise BadRequestError(505, f"HTTP version {parts[2].decode('latin-1')} is not supported")
    headers = _fields(rfile, "header line", 431)
    return RequestHead(
        method=parts[0].decode("ascii"),
        target=parts[1].decode("latin-1"),
        version="HTTP/1.0" if version.group(2) == b"0" else "HTTP/1.1",
        headers=headers,
    )


def _fields(rfile: Reader, what: str, status: int) -> tuple[tuple[str, str], ...]:
    """Header (or trailer) fields up to the empty line that ends them."""
    fields: list[tuple[str, str]] = []
    while True:
        line = _line(rfile, what, status)
        if line is None:
            raise IncompleteRequestError(f"the connection closed inside the {what}s")
        if not line:
            return tuple(fields)
        if line[:1] in (b" ", b"\t"):
            raise BadRequestError(400, f"obsolete line folding in a {what} (RFC 9112 §5.2)")
        name, colon, value = line.partition(b":")
        if not colon or not _TOKEN.fullmatch(name):
            raise BadRequestError(400, f"a malformed {what} (a field name, then ':', expected)")
        value = value.strip(b" \t")
        if _VALUE_BAD.search(value):
            raise BadRequestError(400, f"a control character in the value of {name.decode()!r}")
        fields.append((name.decode("ascii"), value.decode("latin-1")))
        if len(fields) > MAX_HEADERS:
            raise BadRequestError(status, f"more than {MAX_HEADERS} {what}s")


def _list(values: list[str]) -> list[str]:
    return [item.strip(" \t") for value in values for item in value.split(",")]


def framing(head: RequestHead, limit: int = MAX_BODY) -> Framing:
    """How ``head``'s body is delimited (RFC 9112 §6), or the :class:`BadRequestError` that
    refuses it. A declared length over ``limit`` is a 413 before any byte is read."""
    codings = [c.lower() for c in _list(head.values("transfer-encoding"))]
    lengths = head.values("content-length")
    if codings:
        if lengths:
            raise BadRequestError(400, "both Content-Length and Transfer-Encoding (RFC 9112 §6.3)")
        if head.version == "HTTP/1.0":
            raise BadRequestError(400, "Transfer-Encoding in an HTTP/1.0 request")
        if "" in codings or codings[-1] != "chunked" or codings.count("chunked") > 1:
            raise BadRequestError(400, "a Transfer-Encoding whose last coding is not chunked, once")
        if len(codings) > 1:
            others = ", ".join(c for c in codings if c != "chunked")
            raise BadRequestError(501, f"transfer coding {others} is not supported")
        return Framing(chunked=True)
    if not lengths:
        return Framing()
    values = set(_list(lengths))
    if len(values) != 1 or not _DIGITS.fullmatch(next(iter(values))):
        raise BadRequestError(400, "a Content-Length that is not one number")
    text = next(iter(values)).lstrip("0") or "0"
    if len(text) > len(str(limit)) or int(text) > limit:
        raise BadRequestError(413, f"a request body of {text} bytes; at most {limit:,} are read")
    return Framing(length=int(text))


def read_body(rfile: Reader, how: Framing, limit: int = MAX_BODY) -> bytes:
    """The body ``how`` delimits, whole, or :class:`IncompleteRequestError`."""
    if how.chunked:
        return b"".join(_chunks(rfile, limit))
    return _exactly(rfile, how.length)


def _exactly(rfile: Reader, size: int) -> bytes:
    try:
        data = rfile.read(size) if size else b""
    except (ConnectionError, TimeoutError) as exc:
        raise IncompleteRequestError(str(exc)) from None
    if len(data) != size:
        raise IncompleteRequestError(f"the body ended after {len(data)} of {size} bytes")
    return data


def _chunks(rfile: Reader, limit: int) -> list[bytes]:
    chunks: list[bytes] = []
    total = 0
    while True:
        line = _line(rfile, "chunk-size line", 400)
        if line is None:
            raise IncompleteRequestError("the connection closed before the last chunk")
        size_line = _CHUNK_LINE.fullmatch(line)
        if size_line is None:
            raise BadRequestError(400, "a malformed chunk size (hex digits, then extensions)")
        size = int(size_line.group(1), 16)
        if size == 0:
            _fields(rfile, "trailer line", 400)  # read to the end, and dropped
            return chunks
        total += size
        if total > limit:
            raise BadRequestError(413, f"a chunked request body over {limit:,} bytes")
        chunks.append(_exactly(rfile, size))
        _chunk_end(rfile)


def _chunk_end(rfile: Reader) -> None:
    """The line end after a chunk's data: anything else means the size was wrong."""
    end = _exactly(rfile, 1)
    if end == b"\r":
        end = _exactly(rfile, 1)
    if end != b"\n":
        raise BadRequestError(400, "chunk data not followed by its line end (a wrong chunk size)")

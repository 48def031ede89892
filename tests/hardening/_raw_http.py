"""A raw HTTP/1.1 client for attacking the port server: bytes out exactly as written
(in pieces, with pauses), responses read back exactly as sent.

No HTTP library stands in between: a library would refuse to send the malformed
framing the tests need, or would fix it on the way.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from pytest_agentreplay.transport.playback import Playback
from pytest_agentreplay.transport.router import HTTPRequest

TIMEOUT = 60.0  # a server that never answers fails the test instead of hanging the run


@dataclass
class Response:
    """One response as the client read it."""

    status: int
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""


class RawClient:
    """One connection to ``(host, port)``."""

    def __init__(self, host: str, port: int) -> None:
        self.sock = socket.create_connection((host, port), timeout=TIMEOUT)
        self._buffer = b""

    def __enter__(self) -> RawClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.sock.close()

    def send(self, data: bytes, pieces: Iterable[int] = (), pause: float = 0.0) -> None:
        """Send ``data`` cut at the offsets ``pieces`` (each piece its own send), with
        ``pause`` seconds between pieces."""
        cuts = sorted({c for c in pieces if 0 < c < len(data)})
        start = 0
        for i, cut in enumerate([*cuts, len(data)]):
            if i and pause:
                threading.Event().wait(pause)
            self.sock.sendall(data[start:cut])
            start = cut

    def _more(self) -> bool:
        try:
            data = self.sock.recv(65536)
        except ConnectionResetError:
            data = b""
        self._buffer += data
        return bool(data)

    def _line(self) -> bytes | None:
        while b"\r\n" not in self._buffer:
            if not self._more():
                return None
        line, _, self._buffer = self._buffer.partition(b"\r\n")
        return line

    def _exactly(self, size: int) -> bytes:
        while len(self._buffer) < size:
            if not self._more():
                raise AssertionError(f"the body ended after {len(self._buffer)} of {size} bytes")
        data, self._buffer = self._buffer[:size], self._buffer[size:]
        return data

    def response(self) -> Response | None:
        """The next final response (interim ``1xx`` ones skipped); ``None`` if the server
        closed the connection first."""
        while True:
            line = self._line()
            if line is None:
                return None
            status = int(line.split(b" ")[1])
            headers: dict[str, str] = {}
            while (header := self._line()) not in (b"", None):
                name, _, value = header.decode("latin-1").partition(":")
                headers[name.strip().lower()] = value.strip()
            if status >= 200:
                return Response(status, headers, self._body(headers))

    def _body(self, headers: dict[str, str]) -> bytes:
        if "content-length" in headers:
            return self._exactly(int(headers["content-length"]))
        if headers.get("transfer-encoding") == "chunked":
            chunks = []
            while size := int((self._line() or b"0").split(b";")[0], 16):
                chunks.append(self._exactly(size))
                self._exactly(2)
            self._line()
            return b"".join(chunks)
        while self._more():
            pass
        data, self._buffer = self._buffer, b""
        return data

    def closed_by_server(self) -> bool:
        """Whether the server closed the connection (EOF with nothing more to read)."""
        return not self._buffer and not self._more()


def head(method: str = "POST", target: str = "/v1/echo", *headers: str) -> bytes:
    """A request line and header lines, ended by the empty line."""
    lines = [f"{method} {target} HTTP/1.1", "Host: agentreplay.test", *headers]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def chunked(*pieces: bytes) -> bytes:
    """``pieces`` in the chunked coding, with the last chunk and an empty trailer."""
    return b"".join(b"%x\r\n%b\r\n" % (len(p), p) for p in pieces if p) + b"0\r\n\r\n"


class EchoHandler:
    """A port server's handler that answers each request with its own body, and its
    method and target in headers: what the server read is what the client sees."""

    def __init__(self) -> None:
        self.requests: list[HTTPRequest] = []
        self._lock = threading.Lock()

    def claims(self, request: HTTPRequest) -> bool:
        return True

    def respond(self, request: HTTPRequest) -> Playback:
        with self._lock:
            self.requests.append(request)
        headers = [
            ("content-length", str(len(request.content))),
            ("x-method", request.method),
            ("x-target", urlsplit(request.url).path),
        ]
        return Playback(status=200, headers=headers, events=[request.content])

    async def respond_async(self, request: HTTPRequest) -> Playback:
        return self.respond(request)

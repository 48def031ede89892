"""The proxy a guarded child process is pointed at: it refuses, and says so.

A child's HTTP clients send every request for a host the test may not reach to the
proxy its environment names (:mod:`.children`). This one reads the request's head —
``CONNECT host:443`` or ``GET http://host/path`` — records the attempt in the active
test's blocked ledger, as the guard does for the test's own process (so
``assert_no_live_calls()`` and the run's summary see a child's attempt too), answers
one line that is not HTTP, naming what was blocked and why, and closes. Every client
fails on that line as on a refused connection (curl, urllib, requests, httpx and
aiohttp raise; none can mistake it for a response) and most show it.

Nothing is forwarded: the proxy never opens a connection of its own.
"""

from __future__ import annotations

import atexit
import contextlib
import socket
import socketserver
import threading

from ..urls import bare_url
from . import egress, send_guard

__all__ = ["ANSWER", "port"]

ANSWER = "pytest-agentreplay blocked this request from a child process of a test"
"""How the line the proxy answers begins."""

_HEAD_LIMIT = 16 * 1024  # a request head is read this far, no further
_READ_TIMEOUT = 10.0  # seconds a client may take to send its head (not a speed bound)
_lock = threading.Lock()
_server: socketserver.ThreadingTCPServer | None = None


def port() -> int:
    """The proxy's port on loopback, started on first use and kept for the process."""
    global _server  # noqa: PLW0603 - one proxy for the process
    with _lock:
        if _server is None:
            server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), _Refuse)
            server.daemon_threads = True
            threading.Thread(
                target=server.serve_forever, name="agentreplay-refusing-proxy", daemon=True
            ).start()
            atexit.register(_stop, server)
            _server = server
        return int(_server.server_address[1])


def _stop(server: socketserver.ThreadingTCPServer) -> None:
    server.shutdown()
    server.server_close()


class _Refuse(socketserver.BaseRequestHandler):
    def handle(self) -> None:
        self.request.settimeout(_READ_TIMEOUT)
        head = b""
        try:
            while b"\n\n" not in head.replace(b"\r", b"") and len(head) < _HEAD_LIMIT:
                chunk = self.request.recv(4096)
                if not chunk:
                    break
                head += chunk
        except OSError:
            pass  # a client that sent nothing whole is refused all the same
        method, shown = _shown(head.split(b"\n", 1)[0].decode("latin-1").strip())
        host = send_guard.proxied_host(head)  # as the guard reads a proxy request it sends
        what = _child_guard_report(head) or f"{method} {shown}"
        policy = egress.current()
        line = f"{ANSWER}: {what}".strip()
        if policy is not None and host:
            line = str(policy.refuse(f"a child process's {what}", host))
        answer = line.replace("\r", " ").replace("\n", " ").encode() + b"\r\n\r\n"
        # The guard on sends (``wire``) refuses loopback when the test blocks it: the
        # socket's own C send answers the child (nothing here ever goes anywhere else).
        sock: socket.socket = self.request
        with contextlib.suppress(OSError):  # a client that hung up was refused anyway
            super(socket.socket, sock).sendall(answer)


def _child_guard_report(head: bytes) -> str | None:
    """What a child Python's own guard refused (``socket connect to host:port``, a DNS
    lookup), sent as a header of its report (:mod:`.child_site`)."""
    for line in head.split(b"\n")[1:]:
        name, _, value = line.decode("latin-1").partition(":")
        if name.strip().lower() == "x-agentreplay-child":
            return value.strip()[:200] or None
    return None


def _shown(request_line: str) -> tuple[str, str]:
    """(method, target) of a proxy request line as they may be shown: ``CONNECT
    host:port`` for a tunnel, an absolute URL without its query otherwise."""
    parts = request_line.split(" ")
    if len(parts) < 2:
        return "", ""
    method, target = parts[0][:16], parts[1]
    return method, (target if method.upper() == "CONNECT" else bare_url(target))[:300]

"""The egress guard on what is sent: connections made earlier, and proxies.

:mod:`.egress` stops a connection as it is made. Two ways out made no new
connection to a host the guard could judge (issue 18):

* a keep-alive connection opened before the test — a ``requests.Session`` warmed
  in a session-scoped fixture, a pool left over from an earlier test — is reused
  without a ``connect()`` (item 9). Every send on a socket is judged by its peer:
  bytes go to a host the active policy blocks only over a connection made before
  the guard was on, and they are refused.
* a proxy on loopback (``HTTP_PROXY=http://127.0.0.1:3128``) is an allowed peer that
  carries the request on to its real host (item 11). A request is judged by the host
  it is for: a proxy request line (``GET http://host/ HTTP/1.1``, ``CONNECT
  host:443 HTTP/1.1``) at the start of what is sent names that host.

The sends of ``socket.socket`` (``send``, ``sendall``, ``sendmsg``, ``sendfile``) are
patched, which covers ``http.client``, urllib3, requests and asyncio's transports
(aiohttp), and ``ssl.SSLSocket``'s ``send``/``sendall``/``write`` (TLS writes go
through OpenSSL, not the socket's methods). With no blocking policy active a send
costs one function call more.
"""

from __future__ import annotations

import socket
import sys
from typing import Any
from urllib.parse import urlsplit

from . import egress
from .import_hook import when_imported

__all__ = ["install", "proxied_host"]

_LINE_LIMIT = 8192  # a request line longer than this is no proxy request a client sends
_METHODS = (b"GET ", b"POST ", b"PUT ", b"PATCH ", b"DELETE ", b"HEAD ", b"OPTIONS ", b"CONNECT ")
_installed = False


def proxied_host(data: Any) -> str | None:
    """The host a proxy request at the start of ``data`` is for: ``CONNECT host:port``
    or an absolute URL (``GET http://host/path``); ``None`` for anything else (an
    origin-form request ``GET /path``, TLS bytes, a body)."""
    try:
        view = memoryview(data).cast("B")
    except (TypeError, ValueError):
        return None
    if not bytes(view[:8]).upper().startswith(_METHODS):  # most sends: no copy beyond this
        return None
    parts = bytes(view[:_LINE_LIMIT]).split(b"\r\n", 1)[0].split(b" ")
    if len(parts) != 3 or not parts[2].upper().startswith(b"HTTP/"):
        return None
    target = parts[1].decode("latin-1")
    if parts[0].upper() == b"CONNECT":
        return urlsplit(f"//{target}").hostname
    if "://" in target:
        return urlsplit(target).hostname
    return None


def _judge(sock: socket.socket, data: Any, what: str) -> None:
    """Refuse to send ``data`` on ``sock`` when its peer, or the host the request is for
    (named by a proxy request line in it, or by the TLS server name), is one the active
    policy blocks."""
    policy = egress.current()
    if policy is None:
        return
    try:
        peer = sock.getpeername()
    except (OSError, ValueError):  # not connected (a datagram with an address), closed
        peer = None
    host = egress.host_of(peer)
    if host is not None and not egress.reachable(policy, host):
        raise policy.refuse(
            f"{what} to {host}:{peer[1]} over a connection made before the guard was on",
            host,
        )
    # A TLS connection through a proxy tunnel (CONNECT, perhaps sent before the guard
    # was on) names its real host only in the server name it was opened for.
    target = proxied_host(data) or getattr(sock, "server_hostname", None)
    if target and not egress.reachable(policy, target):
        via = f" through {host}:{peer[1]}" if host is not None else ""
        raise policy.refuse(f"{what} of a request for {target}{via}", target)


def _guarded(original: Any, what: str) -> Any:
    """``original`` (a send method whose first argument is the data) with the guard."""

    def send(self: socket.socket, data: Any, *args: Any, **kwargs: Any) -> Any:
        _judge(self, data, what)
        return original(self, data, *args, **kwargs)

    send.__name__ = getattr(original, "__name__", "send")
    send.__doc__ = original.__doc__
    return send


def _first_buffer(buffers: Any) -> Any:
    try:
        return next(iter(buffers), b"")
    except TypeError:
        return b""


def _guarded_sendmsg(original: Any) -> Any:
    """``socket.sendmsg`` with the guard (asyncio's transports write with it)."""

    def sendmsg(self: socket.socket, buffers: Any, *args: Any) -> Any:
        if len(args) <= 2:  # no address: a send on the connection (one is checked in egress)
            buffers = list(buffers)
            _judge(self, _first_buffer(buffers), "socket sendmsg")
        return original(self, buffers, *args)

    return sendmsg


def _patch_sockets() -> None:
    cls = socket.socket
    cls.send = _guarded(cls.send, "socket send")  # type: ignore[method-assign]
    cls.sendall = _guarded(cls.sendall, "socket sendall")  # type: ignore[method-assign]
    cls.sendfile = _guarded(cls.sendfile, "socket sendfile")  # type: ignore[method-assign]
    if hasattr(cls, "sendmsg"):
        cls.sendmsg = _guarded_sendmsg(cls.sendmsg)  # type: ignore[method-assign]


def _patch_ssl(module: Any) -> None:
    cls = module.SSLSocket
    for name in ("send", "sendall", "write"):
        setattr(cls, name, _guarded(getattr(cls, name), f"TLS {name}"))


def install() -> None:
    """Patch the sends once (after :func:`.egress.install`, whose ``sendmsg`` with an
    address this wraps); ``ssl`` when it is first imported, if it is not yet."""
    global _installed  # noqa: PLW0603
    if _installed:
        return
    _installed = True
    _patch_sockets()
    if "ssl" in sys.modules:
        _patch_ssl(sys.modules["ssl"])
    else:
        when_imported("ssl", _patch_ssl)

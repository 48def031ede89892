"""The egress guard inside a child Python process of a replaying test.

A child process has sockets of its own, which no patch of the test's process reaches:
its proxy variables hold the clients that obey them, but a raw socket
(``socket.create_connection``), or a name the child resolves itself, reached the
network (issue 27). A child started while the test blocks egress gets this folder at
the front of its ``PYTHONPATH`` and the policy in ``AGENTREPLAY_CHILD_GUARD``; Python
imports ``sitecustomize`` at start-up, before the child's own code, and this one
installs the guard: every ``connect``, ``connect_ex``, ``sendto`` and ``sendmsg`` to a
host the test may not reach, and every lookup of such a name, fails with the reason,
and the attempt is reported to the refusing proxy of the test
(``pytest_agentreplay.transport.refusing_proxy``), which writes it in the test's
ledger. Loopback passes when the test allows it (a name such as ``x.localhost`` only
if it resolves there), and so do the allowed hosts.

Then the ``sitecustomize`` this one hides, if any (a virtualenv's, coverage's), is
imported, and this folder leaves ``sys.path``: the child's own imports are as before.

The standard library only, and the syntax of any Python 3 a child may run: the package
never imports this module, only children do.
"""

from __future__ import annotations

import errno
import fnmatch
import importlib
import ipaddress
import json
import os
import socket
import sys
import threading
from collections.abc import Callable
from typing import Any

ENV = "AGENTREPLAY_CHILD_GUARD"
_MESSAGE = "pytest-agentreplay blocked a live network call from a child process of {test}: {what}"
_LOOKUPS = ("getaddrinfo", "gethostbyname", "gethostbyname_ex")
_original_getaddrinfo = socket.getaddrinfo


def _address(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return None


def _loopback(host: str) -> bool:
    """A loopback address, or ``localhost`` / ``*.localhost`` resolving only there."""
    address = _address(host)
    if address is not None:
        return address.is_loopback
    if host != "localhost" and not host.endswith(".localhost"):
        return False
    try:
        found = {str(info[4][0]) for info in _original_getaddrinfo(host, None)}
    except OSError:
        return False
    return bool(found) and all(_loopback(a) for a in found if _address(a) is not None)


def _host_of(address: Any) -> str | None:
    if not (isinstance(address, tuple) and address):
        return None  # a unix socket's path, a netlink pair: no host
    host = address[0]
    if isinstance(host, (bytes, bytearray)):
        return bytes(host).decode("latin-1")
    return host if isinstance(host, str) else None


class _Guard:
    """The test's policy (loopback or not, allowed host patterns, the refusing proxy's
    port) and the patches that hold it."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.loopback = bool(data.get("loopback", True))
        self.hosts = [str(h).lower() for h in data.get("hosts", [])]
        self.proxy = int(data.get("proxy", 0))
        self.test = str(data.get("test", "a test"))
        self.names: dict[str, set[str]] = {}  # address -> the names it was resolved from
        self.lock = threading.Lock()
        self.connect = socket.socket.connect
        self.lookups = {name: getattr(socket, name) for name in _LOOKUPS}

    def allows(self, host: str) -> bool:
        host = host.strip("[]").lower()
        if self._listed(host) or (self.loopback and _loopback(host)):
            return True
        with self.lock:
            names = set(self.names.get(host, ()))
        return any(self._listed(name) for name in names)

    def _listed(self, host: str) -> bool:
        return any(fnmatch.fnmatchcase(host, pattern) for pattern in self.hosts)

    def report(self, what: str, host: str, port: Any) -> None:
        """Tell the test's refusing proxy, which writes it in the test's ledger."""
        if not self.proxy:
            return
        line = what.replace("\r", " ").replace("\n", " ")[:200]
        head = f"CONNECT {host}:{port} HTTP/1.1\r\nX-Agentreplay-Child: {line}\r\n\r\n"
        try:
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
                sock.settimeout(5.0)
                self.connect(sock, ("127.0.0.1", self.proxy))
                sock.sendall(head.encode("latin-1", "replace"))
                sock.recv(1024)
        except OSError:
            pass  # the test may be gone: the child is refused all the same

    def refuse(self, address: Any, what: str) -> None:
        """Raise for a send or connect to ``address`` the test does not allow."""
        host = _host_of(address)
        if host is None or self.allows(host):
            return
        if self.proxy and _loopback(host) and address[1] == self.proxy:
            return  # the refusing proxy itself, which the proxy variables point at
        described = f"{what} to {host}:{address[1]}"
        self.report(described, host, address[1])
        raise ConnectionRefusedError(
            errno.ECONNREFUSED, _MESSAGE.format(test=self.test, what=described)
        )

    def lookup(self, name: str) -> Callable[..., Any]:
        """The guarded form of the name lookup ``socket.<name>``."""
        original = self.lookups[name]

        def guarded(host: Any, *args: Any, **kwargs: Any) -> Any:
            text = bytes(host).decode("idna") if isinstance(host, (bytes, bytearray)) else host
            literal = isinstance(text, str) and _address(text.strip("[]")) is not None
            if isinstance(text, str) and text and not literal and not self.allows(text):
                self.report(f"DNS lookup of {text}", text, 53)
                message = _MESSAGE.format(test=self.test, what=f"DNS lookup of {text}")
                raise socket.gaierror(socket.EAI_NONAME, message)
            result = original(host, *args, **kwargs)
            if isinstance(text, str) and text:
                with self.lock:
                    for address in _addresses(name, result):
                        self.names.setdefault(address.lower(), set()).add(text.lower())
            return result

        return guarded


def _addresses(name: str, result: Any) -> list[str]:
    if name == "getaddrinfo":
        return [str(info[4][0]) for info in result]
    if name == "gethostbyname":
        return [str(result)]
    return [str(a) for a in result[2]]


def _install(guard: _Guard) -> None:
    cls = socket.socket
    connect, connect_ex, sendto = cls.connect, cls.connect_ex, cls.sendto
    sendmsg = getattr(cls, "sendmsg", None)

    def guarded_connect(self: socket.socket, address: Any) -> None:
        guard.refuse(address, "socket connect")
        return connect(self, address)

    def guarded_connect_ex(self: socket.socket, address: Any) -> int:
        guard.refuse(address, "socket connect")
        return connect_ex(self, address)

    def guarded_sendto(self: socket.socket, data: Any, *args: Any) -> int:
        if args:
            guard.refuse(args[-1], "socket sendto")
        return sendto(self, data, *args)

    def guarded_sendmsg(self: socket.socket, buffers: Any, *args: Any) -> int:
        if len(args) > 2:
            guard.refuse(args[2], "socket sendmsg")
        assert sendmsg is not None
        return sendmsg(self, buffers, *args)  # type: ignore[no-any-return]

    cls.connect = guarded_connect  # type: ignore[method-assign,assignment]
    cls.connect_ex = guarded_connect_ex  # type: ignore[method-assign,assignment]
    cls.sendto = guarded_sendto  # type: ignore[method-assign,assignment]
    if sendmsg is not None:
        cls.sendmsg = guarded_sendmsg  # type: ignore[method-assign,assignment]
    for name in _LOOKUPS:
        setattr(socket, name, guard.lookup(name))


def _chain() -> None:
    """Leave ``sys.path``, then import the ``sitecustomize`` this one hides, if any."""
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    mine = sys.modules.pop("sitecustomize", None)
    try:
        importlib.import_module("sitecustomize")  # the next one on the path
    except ImportError as exc:
        if exc.name != "sitecustomize":
            raise
        if mine is not None:
            sys.modules["sitecustomize"] = mine


def _start() -> None:
    raw = os.environ.get(ENV)
    data = None
    if raw:
        try:
            data = json.loads(raw)
        except ValueError:
            data = None
    if isinstance(data, dict):
        _install(_Guard(data))
    _chain()


_start()

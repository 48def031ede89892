"""The egress guard below the HTTP clients: sockets and DNS.

httpx and httpx2 are stopped at the transport (see :mod:`.router`) with a
message naming the method and URL. Everything else — requests, aiohttp,
urllib3, raw sockets — is stopped here, at ``socket.connect``, ``sendto`` and
``sendmsg`` (UDP needs no connect) and the name lookups (``getaddrinfo``,
``gethostbyname``, ``gethostbyname_ex``: the last two do not go through the
first), while a blocking router is active. Loopback and
unix-domain sockets pass unless the router blocks loopback too; hosts on the
router's allow-list pass, and the addresses they resolve to are remembered so
the connection that follows the lookup passes as well. The guard asks the active
policy two things only (:class:`Policy`: may this host be reached, and the error
that refuses it), so it does not depend on the router, which is one such policy.

:class:`EgressBlocked` derives from ``BaseException`` on purpose, as pytest's
own ``Failed`` does: SDK retry loops and agent code catch ``Exception`` and
would turn a blocked call into a slow, vague "connection error" after retries.
Blocking must fail the test at once, with the reason in the message.
"""

from __future__ import annotations

import fnmatch
import ipaddress
import socket
import threading
from collections.abc import Callable, Iterable
from typing import Any, Protocol

from _pytest.outcomes import Failed  # pytest.fail.Exception, importable as a base

__all__ = [
    "DEFAULT_HINT",
    "EgressBlocked",
    "Policy",
    "host_matches",
    "install",
    "is_loopback",
    "refresh",
]

DEFAULT_HINT = (
    "Serve it with a fake model (scripted_model.serve(base_url=...)), record it with "
    "--agentreplay-record-mode=once, or allow the host with "
    "@pytest.mark.agentreplay(allow_hosts=[...])."
)


class EgressBlocked(Failed):
    """A live network call was refused because the test runs in replay mode.

    A pytest failure outcome (``pytest.fail.Exception``), hence a ``BaseException``:
    agent code's ``except Exception`` and SDK retry loops cannot swallow it, while
    test runners that pass pytest outcomes through — anyio's, for async tests —
    report it as the test's failure instead of treating it like Ctrl-C.
    """


class Policy(Protocol):
    """What the guard asks of the active blocking policy (a :class:`~.router.Router`)."""

    def allows(self, host: str) -> bool:
        """Whether a live connection to ``host`` is allowed."""

    def refuse(self, what: str, host: str) -> EgressBlocked:
        """Record a blocked attempt (``what``: ``socket connect to host:443``, ...) and
        build the error to raise."""


def is_loopback(host: str) -> bool:
    """Whether ``host`` names this machine (``localhost``, 127.0.0.0/8, ``::1``)."""
    host = host.strip("[]").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def host_matches(host: str, patterns: Iterable[str]) -> bool:
    """Whether ``host`` matches one of ``patterns`` (exact names or ``*.example.com`` globs)."""
    host = host.strip("[]").lower()
    return any(fnmatch.fnmatchcase(host, p.lower()) for p in patterns)


_state_lock = threading.Lock()
_resolved: set[str] = set()
_current: Callable[[], Policy | None] = lambda: None  # noqa: E731
_installed = False
_original_connect = socket.socket.connect
_original_connect_ex = socket.socket.connect_ex
_original_sendto = socket.socket.sendto
_original_sendmsg = getattr(socket.socket, "sendmsg", None)  # not on every platform
_original_getaddrinfo = socket.getaddrinfo
_original_gethostbyname = socket.gethostbyname
_original_gethostbyname_ex = socket.gethostbyname_ex


def refresh(current: Callable[[], Policy | None]) -> None:
    """Point the guard at the function that returns the active blocking policy."""
    global _current  # noqa: PLW0603 - the guard is process-wide by nature
    with _state_lock:
        _current = current
        if current() is None:
            _resolved.clear()


def _check(address: Any, what: str) -> None:
    """Refuse ``what`` to a socket address (host, port, ...) the active policy blocks;
    unix sockets and the like, whose address names no host, pass."""
    if not (isinstance(address, tuple) and address and isinstance(address[0], str)):
        return
    host = address[0]
    policy = _current()
    if policy is None or policy.allows(host) or host in _resolved:
        return
    raise policy.refuse(f"{what} to {host}:{address[1]}", host)


def _connect(self: socket.socket, address: Any) -> None:
    _check(address, "socket connect")
    return _original_connect(self, address)


def _connect_ex(self: socket.socket, address: Any) -> int:
    _check(address, "socket connect")
    return _original_connect_ex(self, address)


def _sendto(self: socket.socket, data: Any, *args: Any) -> int:
    if args:  # sendto(data[, flags], address)
        _check(args[-1], "socket sendto")
    return _original_sendto(self, data, *args)


def _sendmsg(self: socket.socket, buffers: Any, *args: Any) -> int:
    if len(args) > 2:  # sendmsg(buffers[, ancdata[, flags[, address]]]), a datagram as sendto
        _check(args[2], "socket sendmsg")
    assert _original_sendmsg is not None  # installed only where the platform has it
    return _original_sendmsg(self, buffers, *args)  # type: ignore[no-any-return]


def _lookup(host: Any) -> Policy | None:
    """Refuse a DNS lookup of ``host`` if the active policy blocks it; return the policy
    under which an allowed lookup runs (its answers are remembered)."""
    name = host.decode("idna") if isinstance(host, bytes) else host
    policy = _current()
    if policy is None or not isinstance(name, str):
        return None
    if not policy.allows(name):
        raise policy.refuse(f"DNS lookup of {name}", name)
    return None if is_loopback(name) else policy


def _remember(addresses: Iterable[str]) -> None:
    with _state_lock:
        _resolved.update(addresses)


def _getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
    policy = _lookup(host)
    result = _original_getaddrinfo(host, port, *args, **kwargs)
    if policy is not None:
        _remember(str(info[4][0]) for info in result)
    return result


def _gethostbyname(host: str) -> str:
    policy = _lookup(host)
    address = _original_gethostbyname(host)
    if policy is not None:
        _remember([address])
    return address


def _gethostbyname_ex(host: str) -> tuple[str, list[str], list[str]]:
    policy = _lookup(host)
    result = _original_gethostbyname_ex(host)
    if policy is not None:
        _remember(result[2])
    return result


def install() -> None:
    """Patch ``socket`` once; the patch does nothing while no blocking router is active."""
    global _installed  # noqa: PLW0603
    with _state_lock:
        if _installed:
            return
        socket.socket.connect = _connect  # type: ignore[method-assign,assignment]
        socket.socket.connect_ex = _connect_ex  # type: ignore[method-assign,assignment]
        socket.socket.sendto = _sendto  # type: ignore[method-assign,assignment]
        if _original_sendmsg is not None:
            socket.socket.sendmsg = _sendmsg  # type: ignore[method-assign,assignment]
        socket.getaddrinfo = _getaddrinfo
        socket.gethostbyname = _gethostbyname
        socket.gethostbyname_ex = _gethostbyname_ex
        _installed = True

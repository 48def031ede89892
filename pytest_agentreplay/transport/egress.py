"""The egress guard below the HTTP clients: sockets and DNS.

httpx and httpx2 are stopped at the transport (see :mod:`.router`) with a
message naming the method and URL. Everything else — requests, aiohttp,
urllib3, raw sockets — is stopped here, at ``socket.connect``, ``sendto`` and
``sendmsg`` (UDP needs no connect), the name lookups (``getaddrinfo``,
``gethostbyname``, ``gethostbyname_ex``: the last two do not go through the
first) and the reverse lookups (``gethostbyaddr``, ``getnameinfo``), while a
blocking router is active; what is sent on a connection made earlier is judged in
:mod:`.send_guard`. The C socket type (``_socket.socket``) is replaced by a guarded
subclass for code that builds sockets from it directly. Loopback and
unix-domain sockets pass unless the router blocks loopback too; hosts on the
router's allow-list pass, and the addresses names resolve to are remembered so
the connection that follows the lookup of an allowed name passes as well. The
guard asks the active policy two things only (:class:`Policy`: may this host be
reached, and the error that refuses it), so it does not depend on the router,
which is one such policy.

:class:`EgressBlocked` derives from ``BaseException`` on purpose, as pytest's
own ``Failed`` does: SDK retry loops and agent code catch ``Exception`` and
would turn a blocked call into a slow, vague "connection error" after retries.
Blocking must fail the test at once, with the reason in the message.
"""

from __future__ import annotations

import _socket
import fnmatch
import functools
import ipaddress
import socket
import threading
from collections.abc import Callable, Iterable
from typing import Any, Protocol

from .errors import EgressBlocked

__all__ = [
    "DEFAULT_HINT",
    "EgressBlocked",
    "Policy",
    "current",
    "host_matches",
    "host_of",
    "install",
    "is_loopback",
    "reachable",
    "refresh",
    "resolves_to_loopback",
]

DEFAULT_HINT = (
    "Serve it with a fake model (fake.serve(base_url=...)) or allow the host "
    "(FakeModel(allow_hosts=[...]), @pytest.mark.agentreplay(allow_hosts=[...])); a "
    "child process reaches a fake through fake.listen() or the model_server fixture."
)


class Policy(Protocol):
    """What the guard asks of the active blocking policy (a :class:`~.router.Router`)."""

    def allows(self, host: str) -> bool:
        """Whether a live connection to ``host`` is allowed."""

    def refuse(self, what: str, host: str) -> EgressBlocked:
        """Record a blocked attempt (``what``: ``socket connect to host:443``, ...) and
        build the error to raise."""

    def no_proxy(self) -> list[str] | None:
        """The hosts a child process may reach (its ``NO_PROXY``), or ``None`` to leave
        children's environment alone (see :mod:`.children`)."""

    def child_policy(self) -> dict[str, Any]:
        """What a child Python's own guard allows (see :mod:`.children`): ``loopback``,
        the allowed ``hosts`` patterns, the ``test`` (masked) it refuses for."""


@functools.lru_cache(maxsize=1024)
def is_loopback(host: str) -> bool:
    """Whether ``host`` is a loopback address (127.0.0.0/8, ``::1``).

    Cached: every send on a connection asks it of its peer (see :mod:`.send_guard`), and
    parsing an address costs more than the rest of the guard together. A name is not
    an address: see :func:`resolves_to_loopback`."""
    host = host.strip("[]").lower()
    try:
        return ipaddress.ip_address(host.split("%", 1)[0]).is_loopback
    except ValueError:
        return False


def resolves_to_loopback(host: str) -> bool:
    """Whether ``host`` is a loopback address, or ``localhost`` / ``*.localhost`` and
    every address it resolves to is one.

    Issue 27: with a resolver that maps ``*.localhost`` to an outside address, the
    test's own httpx and a child's urllib reached ``192.0.2.2``: the name was taken
    for loopback. The lookup here is not guarded (it is the guard's own) and asks only
    about those names, which resolve on the machine (RFC 6761)."""
    host = host.strip("[]").lower()
    if is_loopback(host):
        return True
    if host != "localhost" and not host.endswith(".localhost"):
        return False
    try:
        found = {str(info[4][0]) for info in _original_getaddrinfo(host, None)}
    except (OSError, UnicodeError):
        return False
    return bool(found) and all(is_loopback(address) for address in found)


def host_matches(host: str, patterns: Iterable[str]) -> bool:
    """Whether ``host`` matches one of ``patterns`` (exact names or ``*.example.com`` globs)."""
    host = host.strip("[]").lower()
    return any(fnmatch.fnmatchcase(host, p.lower()) for p in patterns)


_state_lock = threading.Lock()
_NAMES_KEPT = 4096  # addresses remembered with their names; the oldest go first
_names: dict[str, set[str]] = {}
"""The names each address was resolved from (``getaddrinfo`` and the like), kept across
tests: a connection opened to an allowed host in one test and reused in the next is
judged by its peer's address, which only this map ties to the allowed name."""
_current: Callable[[], Policy | None] = lambda: None  # noqa: E731
_installed = False
_original_socket_type = _socket.socket
_original_connect = socket.socket.connect
_original_connect_ex = socket.socket.connect_ex
_original_sendto = socket.socket.sendto
_original_sendmsg = getattr(socket.socket, "sendmsg", None)  # not on every platform
_original_getaddrinfo = socket.getaddrinfo
_original_gethostbyname = socket.gethostbyname
_original_gethostbyname_ex = socket.gethostbyname_ex
_original_gethostbyaddr = socket.gethostbyaddr
_original_getnameinfo = socket.getnameinfo


def refresh(current: Callable[[], Policy | None]) -> None:
    """Point the guard at the function that returns the active blocking policy."""
    global _current  # noqa: PLW0603 - the guard is process-wide by nature
    with _state_lock:
        _current = current


def current() -> Policy | None:
    """The active blocking policy, if any (what the guard of :mod:`.send_guard` asks)."""
    return _current()


def host_of(address: Any) -> str | None:
    """The host a socket address (``(host, port, ...)``) names, as text; ``None`` for an
    address naming no host (a unix socket's path, a netlink pair of numbers).

    The C socket functions take the host as ``str``, ``bytes`` or ``bytearray``; a
    guard that looked at ``str`` only let ``connect((b"203.0.113.7", 443))`` through
    (issue 18, item 8)."""
    if not (isinstance(address, tuple) and address):
        return None
    host = address[0]
    if isinstance(host, (bytes, bytearray, memoryview)):
        return bytes(host).decode("latin-1")  # never fails; a name is ASCII anyway
    return str(host) if isinstance(host, str) else None


def reachable(policy: Policy, host: str) -> bool:
    """Whether ``policy`` lets a connection to ``host`` (a name or an address) through:
    the host is allowed, or it is an address an allowed name resolved to."""
    if policy.allows(host):
        return True
    with _state_lock:
        names = tuple(_names.get(host.strip("[]").lower(), ()))
    return any(policy.allows(name) for name in names)


def _check(address: Any, what: str) -> None:
    """Refuse ``what`` to a socket address (host, port, ...) the active policy blocks;
    unix sockets and the like, whose address names no host, pass."""
    host = host_of(address)
    policy = _current()
    if host is None or policy is None or reachable(policy, host):
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


def _lookup(host: Any) -> None:
    """Refuse a DNS lookup of ``host`` if the active policy blocks it."""
    name = bytes(host).decode("idna") if isinstance(host, (bytes, bytearray)) else host
    policy = _current()
    if policy is not None and isinstance(name, str) and not policy.allows(name):
        raise policy.refuse(f"DNS lookup of {name}", name)


def _remember(host: Any, addresses: Iterable[str]) -> None:
    """Note that ``host`` resolved to ``addresses`` (see :data:`_names`)."""
    if isinstance(host, (bytes, bytearray)):
        host = bytes(host).decode("latin-1")
    if not isinstance(host, str):
        return
    with _state_lock:
        for address in addresses:
            _names.setdefault(address.lower(), set()).add(host)
        while len(_names) > _NAMES_KEPT:
            del _names[next(iter(_names))]


def _getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
    _lookup(host)
    result = _original_getaddrinfo(host, port, *args, **kwargs)
    _remember(host, (str(info[4][0]) for info in result))
    return result


def _gethostbyname(host: str) -> str:
    _lookup(host)
    address = _original_gethostbyname(host)
    _remember(host, [address])
    return address


def _gethostbyname_ex(host: str) -> tuple[str, list[str], list[str]]:
    _lookup(host)
    result = _original_gethostbyname_ex(host)
    _remember(host, result[2])
    return result


def _reverse(host: Any) -> None:
    """Refuse a reverse lookup of ``host`` (an address, or a name looked up first) the
    active policy blocks: the query goes to a DNS server like a forward one (issue 18,
    item 10). The machine's own name and loopback addresses pass, loopback blocked or
    not (the answer comes from the hosts file): ``socket.getfqdn()``, which the standard
    library calls (``http.server``, ``smtplib``, ``logging.handlers``), asks for them."""
    policy = _current()
    name = host_of((host,))
    if policy is None or name is None or name in ("", socket.gethostname()):
        return
    if resolves_to_loopback(name):
        return
    if not reachable(policy, name):
        raise policy.refuse(f"reverse DNS lookup of {name}", name)


def _gethostbyaddr(host: str) -> tuple[str, list[str], list[str]]:
    _reverse(host)
    return _original_gethostbyaddr(host)


def _getnameinfo(address: tuple[Any, ...], flags: int) -> tuple[str, str]:
    if not flags & socket.NI_NUMERICHOST:  # a numeric answer asks no server
        _reverse(host_of(address))
    return _original_getnameinfo(address, flags)


class _AnyCSocket(type):
    """``isinstance(x, _socket.socket)`` stays true of every socket once the name is
    bound to :class:`_GuardedCSocket`, as it was of the original type."""

    def __instancecheck__(cls, obj: object) -> bool:
        return isinstance(obj, _original_socket_type)

    def __subclasscheck__(cls, sub: type) -> bool:
        return issubclass(sub, _original_socket_type)


class _GuardedCSocket(_original_socket_type, metaclass=_AnyCSocket):
    """``_socket.socket`` with the guard: code that builds its sockets from the C type
    (``import _socket; _socket.socket()``) went around ``socket.socket``'s methods
    (issue 18, item 8). The C type is immutable, so its name is rebound to this."""

    __slots__ = ()
    connect = _connect
    connect_ex = _connect_ex
    sendto = _sendto
    if _original_sendmsg is not None:
        sendmsg = _sendmsg


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
        socket.gethostbyaddr = _gethostbyaddr
        socket.getnameinfo = _getnameinfo
        _socket.socket = _GuardedCSocket  # type: ignore[misc]
        _socket.SocketType = _GuardedCSocket
        _installed = True

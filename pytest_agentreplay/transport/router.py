"""Who answers a request: the routing policy of a scope (a test), and its activation.

A request caught by the patched transports (:mod:`.patch`) is, in order: served by
the newest handler of the active :class:`Router` that claims it (a fake model, a
cassette); else let through live if the router allows it (loopback, allowed hosts,
record mode; a recorder may tee the response); else refused with
:class:`~.egress.EgressBlocked`, naming the method, URL, host and test. With no
router active, the transports behave as if unpatched.

:func:`intercepting` scopes a router to a block (a test): it installs the hooks
once, nests, and always cleans up; :func:`active_router` is the innermost one.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property
from operator import itemgetter
from typing import Any, Protocol
from urllib.parse import SplitResult, urlsplit

from .. import jsonparse
from ..urls import bare_url
from . import children, egress, patch
from .egress import resolves_to_loopback
from .errors import EgressBlocked
from .family import Family
from .gate import Gate
from .playback import Playback

__all__ = [
    "Deferred",
    "EgressBlocked",
    "HTTPRequest",
    "Handler",
    "Recorder",
    "Router",
    "active_router",
    "intercepting",
]


@dataclass(frozen=True, eq=False)
class HTTPRequest:
    """A request as a handler sees it, whatever client module sent it.

    Two requests are equal when their fields are, whichever way each was made (see
    :meth:`from_wire`)."""

    method: str
    url: str
    headers: tuple[tuple[str, str], ...] = field(repr=False)  # credentials: never shown
    content: bytes = field(repr=False)
    family: str = ""

    @staticmethod
    def from_wire(
        method: str,
        url: str,
        raw_headers: Sequence[tuple[bytes, bytes]],
        content: bytes,
        family: str,
    ) -> HTTPRequest:
        """A request whose headers, as the client module holds them (bytes), are decoded
        (latin-1) when first read: a fake's call reads them only when its log is read
        (bench/ W5: an SDK sends about twenty)."""
        request = object.__new__(_WireRequest)
        request.__dict__.update(
            method=method, url=url, content=content, family=family, _raw_headers=tuple(raw_headers)
        )
        return request

    def headers_as_sent(self) -> SentHeaders:
        """The headers, or (from :meth:`from_wire`, not read yet) the client module's
        bytes they are decoded from (:func:`decode_headers`): what keeps them for later
        without decoding them now, or holding on to the request."""
        return self.headers

    def _fields(self) -> tuple[Any, ...]:
        return (self.method, self.url, self.headers, self.content, self.family)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, HTTPRequest):
            return NotImplemented
        return self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        # Tracebacks show it: its query, fragment and userinfo may hold credentials
        # (``?key=``, SAS ``sig=``, ``user:password@``), so they are left out.
        return f"HTTPRequest({self.method} {bare_url(self.url)}, family={self.family!r})"

    @cached_property
    def url_parts(self) -> SplitResult:
        """The URL split (once: routing reads it several times a request)."""
        return urlsplit(self.url)

    @property
    def host(self) -> str:
        return self.url_parts.hostname or ""

    @property
    def path(self) -> str:
        return self.url_parts.path

    @property
    def scheme(self) -> str:
        return self.url_parts.scheme

    def header(self, name: str) -> str | None:
        """The first value of header ``name`` (case-insensitive), or ``None``."""
        name = name.lower()
        return next((v for k, v in self.headers if k.lower() == name), None)

    def has_header(self, name: str) -> bool:
        """Whether a header ``name`` (lower-case) was sent, in any case."""
        return name in map(str.lower, map(itemgetter(0), self.headers))

    def json(self) -> Any:
        """The body parsed as JSON; ``None`` for an empty body."""
        return jsonparse.loads(self.content) if self.content else None


SentHeaders = tuple[tuple[str, str], ...] | Sequence[tuple[bytes, bytes]]
"""Headers decoded, or as the client module holds them (bytes)."""


def decode_headers(headers: SentHeaders) -> tuple[tuple[str, str], ...]:
    """Headers as :meth:`HTTPRequest.headers_as_sent` gives them, decoded (latin-1, what
    HTTP headers are) where they are still bytes."""
    if headers and type(headers[0][0]) is bytes and type(headers[0][1]) is bytes:
        try:  # all bytes, as the clients hold them: no call per name and value
            return tuple([(k.decode("latin-1"), v.decode("latin-1")) for k, v in headers])  # type: ignore[union-attr]
        except AttributeError:  # a mix of str and bytes after all
            pass
    return tuple([(_text(k), _text(v)) for k, v in headers])


def _text(value: str | bytes) -> str:
    return value if isinstance(value, str) else value.decode("latin-1")


class _WireRequest(HTTPRequest):
    """:meth:`HTTPRequest.from_wire`'s request: its headers decoded when first read."""

    @property
    def headers(self) -> tuple[tuple[str, str], ...]:
        fields = self.__dict__
        headers: tuple[tuple[str, str], ...] | None = fields.get("_headers")
        if headers is None:  # two threads may both decode: the same tuple either way
            headers = fields["_headers"] = decode_headers(fields["_raw_headers"])
        return headers

    @headers.setter
    def headers(self, value: tuple[tuple[str, str], ...]) -> None:
        # what the dataclass's __init__ sets (a copy made with dataclasses.replace)
        self.__dict__["_headers"] = value

    def headers_as_sent(self) -> SentHeaders:
        fields = self.__dict__
        headers: tuple[tuple[str, str], ...] | None = fields.get("_headers")
        return fields["_raw_headers"] if headers is None else headers

    def has_header(self, name: str) -> bool:
        """:meth:`HTTPRequest.has_header`, asked of the bytes while they are not decoded
        (a replayed request asks for ``content-encoding``, and most never need their
        headers as text: issue 29)."""
        sent = self.headers_as_sent()
        if not sent or type(sent[0][0]) is not bytes:
            return super().has_header(name)
        try:
            return name.encode("latin-1") in map(bytes.lower, map(itemgetter(0), sent))
        except TypeError:  # a mix of str and bytes after all
            return super().has_header(name)


@dataclass
class Deferred:
    """Hold the response until ``gate`` opens, then build it with ``then()``.

    If the client gives up while held (task cancelled, interrupt), ``cancelled()``
    is called instead and nothing is built.
    """

    gate: Gate
    then: Callable[[], Playback]
    cancelled: Callable[[], None]


class Handler(Protocol):
    """Something that answers requests: a fake model, a cassette session."""

    def claims(self, request: HTTPRequest) -> bool:
        """Whether this handler answers ``request``."""

    def respond(self, request: HTTPRequest) -> Playback | Deferred:
        """The response to play for ``request`` (called from sync clients)."""

    async def respond_async(self, request: HTTPRequest) -> Playback | Deferred:
        """The response to play for ``request`` (called from async clients)."""


class Recorder(Protocol):
    """Sees live traffic in record mode (see :mod:`..cassettes.record`)."""

    def wrap(self, request: HTTPRequest, response: Any, family: Family, started: float) -> Any:
        """Return ``response`` with its body teed into the recording."""


@dataclass
class Router:
    """The interception policy of one scope (a test): handlers, egress rules, ledger.

    ``block`` refuses live traffic except to loopback (unless ``allow_loopback``
    is false) and ``allow_hosts``; ``recorder`` (record mode) sees every live
    response and may tee its body; ``guard_children`` starts child processes in an
    environment whose proxy variables refuse what the router would (see
    :mod:`.children`).
    """

    test: str | None = None
    block: bool = True
    allow_hosts: tuple[str, ...] = ()
    allow_loopback: bool = True
    guard_children: bool = True
    hint: str = ""
    handlers: list[Handler] = field(default_factory=list)
    # The ledgers hold URLs as sent, credentials included: kept out of the repr,
    # which tracebacks print.
    blocked: list[str] = field(default_factory=list, repr=False)
    live_calls: list[str] = field(default_factory=list, repr=False)
    recorder: Recorder | None = None
    mask: Callable[[str], str] = field(default=lambda text: text, repr=False)
    """Hides secrets in what an :class:`EgressBlocked` message names (the plugin sets
    the session scrubber's; the transport layer cannot know the rules itself)."""
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    # The handlers newest first, replaced (never changed in place) by add() and remove():
    # a request reads it without the lock (bench/ W5: every fake call routes).
    _newest_first: tuple[Handler, ...] = field(default=(), repr=False)

    def __post_init__(self) -> None:
        self._newest_first = tuple(reversed(self.handlers))

    def add(self, handler: Handler) -> None:
        """Add a handler; the newest handler wins when several claim a request."""
        with self._lock:
            self.handlers.append(handler)
            self._newest_first = tuple(reversed(self.handlers))

    def remove(self, handler: Handler) -> None:
        with self._lock:
            if handler in self.handlers:
                self.handlers.remove(handler)
            self._newest_first = tuple(reversed(self.handlers))

    def route(self, request: HTTPRequest) -> Handler | None:
        """The newest handler that claims ``request``."""
        for handler in self._newest_first:
            if handler.claims(request):
                return handler
        return None

    def allows(self, host: str) -> bool:
        """Whether a live connection to ``host`` is allowed under this router."""
        if not self.block:
            return True
        if egress.host_matches(host, self.allow_hosts):
            return True
        return self.allow_loopback and resolves_to_loopback(host)

    def refuse(self, what: str, host: str) -> EgressBlocked:
        """Record a blocked attempt and build the error naming it and the test."""
        where = f"test {self.test}" if self.test else "code outside any test"
        what = self.mask(what)
        message = (
            f"pytest-agentreplay blocked a live network call from {where}: {what}. "
            f"No fake model or cassette serves host {host!r}, and replay allows no "
            f"network egress. {self.hint or egress.DEFAULT_HINT}"
        )
        with self._lock:
            self.blocked.append(what)
        return EgressBlocked(message)

    def no_proxy(self) -> list[str] | None:
        """What a child process may reach without the refusing proxy (``NO_PROXY``)."""
        if not (self.block and self.guard_children):
            return None
        return children.exempt_hosts(self.allow_loopback, self.allow_hosts)

    def child_policy(self) -> dict[str, Any]:
        """What a child Python's own guard allows (see :mod:`.children`)."""
        where = f"test {self.test}" if self.test else "code outside any test"
        return {
            "loopback": self.allow_loopback,
            "hosts": list(self.allow_hosts),
            "test": self.mask(where),
        }

    def check_live(self, request: HTTPRequest) -> None:
        """Allow ``request`` to go out live, or raise :class:`EgressBlocked`."""
        if not self.allows(request.host):
            raise self.refuse(f"{request.method} {request.url}", request.host)
        with self._lock:
            self.live_calls.append(f"{request.method} {request.url}")


_stack: list[Router] = []
_stack_lock = threading.Lock()


def active_router() -> Router | None:
    """The innermost active router, from any thread."""
    return _stack[-1] if _stack else None


@contextmanager
def intercepting(router: Router) -> Iterator[Router]:
    """Activate ``router`` for the duration of the block (process-wide, all threads)."""
    patch.install(_HOOKS)
    with _stack_lock:
        _stack.append(router)
    egress.refresh(_blocking_router)
    try:
        yield router
    finally:
        with _stack_lock:
            # Remove this router even if an inner scope leaked (e.g. an interrupted test).
            while router in _stack:
                _stack.remove(router)
        egress.refresh(_blocking_router)


def _replaying() -> bool:
    """Whether a transport built now may skip building its pool (see :mod:`.lazy_pool`)."""
    router = active_router()
    return router is not None and router.block


def _blocking_router() -> Router | None:
    router = active_router()
    return router if router is not None and router.block else None


# --- one request, as the patched transports hand it over ----------------------------


def _handle(family: Family, transport: Any, request: Any) -> Any:
    """A sync request: served by a handler, let out live (and maybe recorded), or refused."""
    __tracebackhide__ = True  # its arguments' repr holds the raw URL, secrets included
    router = _stack[-1] if _stack else None  # active_router(), asked by every request
    if router is None:
        return family.send(transport, request)
    content = request.read()
    view = HTTPRequest.from_wire(  # the request as a handler sees it, whatever its module
        request.method, family.url_text(request.url), request.headers.raw, content, family.name
    )
    handler = router.route(view)
    if handler is None:
        router.check_live(view)
        started = time.monotonic()
        response = family.send(transport, request)
        return _recorded(router, view, response, family, started)
    answer = handler.respond(view)
    if isinstance(answer, Deferred):
        answer = _hold_sync(answer)
    return family.start(request, answer, sync=True)


async def _handle_async(family: Family, transport: Any, request: Any) -> Any:
    """:func:`_handle` for an async request."""
    __tracebackhide__ = True
    router = _stack[-1] if _stack else None
    if router is None:
        return await family.send_async(transport, request)
    content = await request.aread()
    view = HTTPRequest.from_wire(
        request.method, family.url_text(request.url), request.headers.raw, content, family.name
    )
    handler = router.route(view)
    if handler is None:
        router.check_live(view)
        started = time.monotonic()
        response = await family.send_async(transport, request)
        return _recorded(router, view, response, family, started)
    answer = await handler.respond_async(view)
    if isinstance(answer, Deferred):
        answer = await _hold_async(answer)
    return family.start(request, answer, sync=False)


_HOOKS = patch.Hooks(handle=_handle, handle_async=_handle_async, defer_pools=_replaying)


def _recorded(
    router: Router, view: HTTPRequest, response: Any, family: Family, started: float
) -> Any:
    if router.recorder is None:
        return response
    return router.recorder.wrap(view, response, family, started)


def _hold_sync(deferred: Deferred) -> Playback:
    deferred.gate.wait(threading.Event())
    return deferred.then()


async def _hold_async(deferred: Deferred) -> Playback:
    try:
        await deferred.gate.wait_async()
    except BaseException:
        deferred.cancelled()
        raise
    return deferred.then()

"""Route every httpx / httpx2 request to the active handler, and guard egress.

The transports of both module families are patched at class level —
``HTTPTransport.handle_request`` and ``AsyncHTTPTransport.handle_async_request`` —
so clients built anywhere (inside the anthropic / openai SDKs, pydantic-ai,
openai-agents, worker threads) are caught without passing ``http_client=``.
The patch is installed once (for a family not imported yet, when it is first
imported) and stays inert while no :class:`Router` is active;
:func:`intercepting` scopes a router to a block (a test), nests, and always
cleans up.

A request is, in order: served by the newest handler that claims it (a fake
model, a cassette); else let through live if the router allows it (loopback,
allowed hosts, record mode); else refused with :class:`EgressBlocked`, naming
the method, URL, host and test.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import urlsplit

from . import egress
from . import lazy_pool as lazy
from .delivery import Delivery
from .egress import EgressBlocked, is_loopback
from .gate import Gate
from .import_hook import when_imported
from .playback import Playback
from .tee import Tee

__all__ = [
    "FAMILIES",
    "Deferred",
    "EgressBlocked",
    "HTTPRequest",
    "Handler",
    "Router",
    "active_router",
    "install",
    "intercepting",
]

FAMILIES = ("httpx", "httpx2")


@dataclass(frozen=True)
class HTTPRequest:
    """A request as a handler sees it, whatever client module sent it."""

    method: str
    url: str
    headers: tuple[tuple[str, str], ...] = field(repr=False)  # credentials: never shown
    content: bytes = field(repr=False)
    family: str = ""

    def __repr__(self) -> str:
        # Tracebacks show it: its query, fragment and userinfo may hold credentials
        # (``?key=``, SAS ``sig=``, ``user:password@``), so they are left out.
        return f"HTTPRequest({self.method} {_bare_url(self.url)}, family={self.family!r})"

    @property
    def host(self) -> str:
        return urlsplit(self.url).hostname or ""

    @property
    def path(self) -> str:
        return urlsplit(self.url).path

    @property
    def scheme(self) -> str:
        return urlsplit(self.url).scheme

    def header(self, name: str) -> str | None:
        """The first value of header ``name`` (case-insensitive), or ``None``."""
        name = name.lower()
        return next((v for k, v in self.headers if k.lower() == name), None)

    def json(self) -> Any:
        """The body parsed as JSON; ``None`` for an empty body."""
        return json.loads(self.content) if self.content else None


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
    """Something that answers requests: a fake model, a cassette player."""

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
    response and may tee its body.
    """

    test: str | None = None
    block: bool = True
    allow_hosts: tuple[str, ...] = ()
    allow_loopback: bool = True
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

    def add(self, handler: Handler) -> None:
        """Add a handler; the newest handler wins when several claim a request."""
        with self._lock:
            self.handlers.append(handler)

    def remove(self, handler: Handler) -> None:
        with self._lock:
            if handler in self.handlers:
                self.handlers.remove(handler)

    def route(self, request: HTTPRequest) -> Handler | None:
        """The newest handler that claims ``request``."""
        with self._lock:
            handlers = list(self.handlers)
        return next((h for h in reversed(handlers) if h.claims(request)), None)

    def allows(self, host: str) -> bool:
        """Whether a live connection to ``host`` is allowed under this router."""
        if not self.block:
            return True
        if self.allow_loopback and is_loopback(host):
            return True
        return egress.host_matches(host, self.allow_hosts)

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

    def check_live(self, request: HTTPRequest) -> None:
        """Allow ``request`` to go out live, or raise :class:`EgressBlocked`."""
        if not self.allows(request.host):
            raise self.refuse(f"{request.method} {request.url}", request.host)
        with self._lock:
            self.live_calls.append(f"{request.method} {request.url}")


def _bare_url(url: str) -> str:
    """``url`` without userinfo, query and fragment (``?…`` marks a dropped query)."""
    parts = urlsplit(url)
    host = parts.netloc.rpartition("@")[2]
    more = "?…" if parts.query or parts.fragment else ""
    return f"{parts.scheme}://{host}{parts.path}{more}"


_stack: list[Router] = []
_stack_lock = threading.Lock()


def active_router() -> Router | None:
    """The innermost active router, from any thread."""
    return _stack[-1] if _stack else None


@contextmanager
def intercepting(router: Router) -> Iterator[Router]:
    """Activate ``router`` for the duration of the block (process-wide, all threads)."""
    install()
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


# --- module families ---------------------------------------------------------------


class Family:
    """One HTTP client module (``httpx`` or ``httpx2``): its types and its faults."""

    def __init__(self, name: str, module: Any) -> None:
        self.name = name
        self.module = module
        self.sync_stream = _sync_stream_class(module)
        self.async_stream = _async_stream_class(module)

    def cut(self) -> BaseException:
        return self.module.RemoteProtocolError(  # type: ignore[no-any-return]
            "peer closed connection without sending complete message body (incomplete chunked read)"
        )

    def timeout(self) -> BaseException:
        return self.module.ReadTimeout("The read operation timed out")  # type: ignore[no-any-return]

    def classify(self, exc: BaseException) -> str:
        """How a live body that raised ``exc`` ended: ``timeout`` or ``cut``."""
        return "timeout" if isinstance(exc, self.module.TimeoutException) else "cut"

    def view(self, request: Any, content: bytes) -> HTTPRequest:
        headers = tuple((k.decode("latin-1"), v.decode("latin-1")) for k, v in request.headers.raw)
        return HTTPRequest(
            method=request.method,
            url=str(request.url),
            headers=headers,
            content=content,
            family=self.name,
        )

    def teed(self, response: Any, tee: Tee) -> Any:
        """``response`` with its body passed through ``tee`` (same status, headers)."""
        sync = isinstance(response.stream, self.module.SyncByteStream)
        stream = self.sync_stream(tee) if sync else self.async_stream(tee)
        # A transport's response has no request yet: the client attaches it.
        return self.module.Response(
            status_code=response.status_code,
            headers=response.headers,
            stream=stream,
            extensions=response.extensions,
        )

    def response(self, request: Any, playback: Playback, *, sync: bool) -> Any:
        delivery = Delivery(playback, self)
        stream = self.sync_stream(delivery) if sync else self.async_stream(delivery)
        return self.module.Response(
            status_code=playback.status,
            headers=playback.headers,
            stream=stream,
            request=request,
            extensions={"http_version": b"HTTP/1.1"},
        )


def _sync_stream_class(module: Any) -> type:
    class PlaybackStream(module.SyncByteStream):  # type: ignore[misc]
        """A body played (or teed) by a :class:`Delivery` / :class:`Tee`."""

        def __init__(self, player: Delivery | Tee) -> None:
            self.player = player

        def __iter__(self) -> Iterator[bytes]:
            return self.player.iterate()

        def close(self) -> None:
            self.player.close()

    return PlaybackStream


def _async_stream_class(module: Any) -> type:
    class AsyncPlaybackStream(module.AsyncByteStream):  # type: ignore[misc]
        """A body played (or teed) by a :class:`Delivery` / :class:`Tee`, async."""

        def __init__(self, player: Delivery | Tee) -> None:
            self.player = player

        def __aiter__(self) -> Any:
            return self.player.aiterate()

        async def aclose(self) -> None:
            await self.player.aclose()

    return AsyncPlaybackStream


_families: dict[str, Family] = {}
_considered: set[str] = set()  # families found installed (or not), once per process
_install_lock = threading.RLock()


def install() -> list[str]:
    """Patch the transports of every installed module family, once. Returns the names
    of the families patched so far.

    A family that is installed but not imported yet is patched as soon as something
    imports it (see :mod:`.import_hook`): replaying through ``httpx`` alone never
    pays for importing ``httpx2``.
    """
    with _install_lock:
        for name in FAMILIES:
            if name in _considered:
                continue
            _considered.add(name)
            if importlib.util.find_spec(name) is not None:
                when_imported(name, functools.partial(_add_family, name))
        egress.install()
        return list(_families)


def _add_family(name: str, module: Any) -> None:
    with _install_lock:
        if name in _families:
            return
        family = Family(name, module)
        _patch(family)
        lazy.install(family.module, _replaying)
        _families[name] = family


def _patch(family: Family) -> None:
    sync_cls = family.module.HTTPTransport
    async_cls = family.module.AsyncHTTPTransport
    original_sync = sync_cls.handle_request
    original_async = async_cls.handle_async_request

    def handle_request(self: Any, request: Any) -> Any:
        __tracebackhide__ = True  # its arguments' repr holds the raw URL, secrets included
        router = active_router()
        if router is None:
            return original_sync(self, request)
        view = family.view(request, request.read())
        handler = router.route(view)
        if handler is None:
            router.check_live(view)
            started = time.monotonic()
            response = original_sync(self, request)
            return _recorded(router, view, response, family, started)
        answer = handler.respond(view)
        if isinstance(answer, Deferred):
            answer = _hold_sync(answer)
        return _start(family, request, answer, sync=True)

    async def handle_async_request(self: Any, request: Any) -> Any:
        __tracebackhide__ = True
        router = active_router()
        if router is None:
            return await original_async(self, request)
        view = family.view(request, await request.aread())
        handler = router.route(view)
        if handler is None:
            router.check_live(view)
            started = time.monotonic()
            response = await original_async(self, request)
            return _recorded(router, view, response, family, started)
        answer = await handler.respond_async(view)
        if isinstance(answer, Deferred):
            answer = await _hold_async(answer)
        return _start(family, request, answer, sync=False)

    handle_request.__agentreplay_original__ = original_sync  # type: ignore[attr-defined]
    handle_async_request.__agentreplay_original__ = original_async  # type: ignore[attr-defined]
    sync_cls.handle_request = handle_request
    async_cls.handle_async_request = handle_async_request


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


def _start(family: Family, request: Any, playback: Playback, *, sync: bool) -> Any:
    """Turn a playback into the family's Response, or raise its before-headers fault."""
    if playback.before_headers:  # the fault strikes before any response exists
        playback.ended(playback.ending, 0)
        raise family.cut() if playback.ending == "cut" else family.timeout()
    return family.response(request, playback, sync=sync)


def families() -> dict[str, Family]:
    """The installed module families by name."""
    return dict(_families)

"""Hooking the HTTP client libraries: httpx and httpx2, sync and async (aiohttp: :mod:`.aio`).

The transports of both module families are patched at class level —
``HTTPTransport.handle_request`` and ``AsyncHTTPTransport.handle_async_request`` —
so clients built anywhere (inside the anthropic / openai SDKs, pydantic-ai,
openai-agents, worker threads) are caught without passing ``http_client=``. The
patch is installed once (for a family not imported yet, when it is first
imported: see :mod:`.import_hook`) and hands every request to the :class:`Hooks`
it was installed with — the router's (:mod:`.router`), which decides who answers.

This module knows the client libraries and nothing of routing: a
:class:`Family` is one client module, its exceptions (what a cut or a timeout
raises there) and its byte-stream classes, and it turns a
:class:`~.playback.Playback` into that module's ``Response``.
"""

from __future__ import annotations

import functools
import importlib.util
import threading
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Any

from . import children, egress, wire
from . import lazy_pool as lazy
from .delivery import Delivery
from .import_hook import when_imported
from .playback import Playback
from .tee import Tee

__all__ = ["FAMILIES", "Family", "Hooks", "install"]

FAMILIES = ("httpx", "httpx2")


class Family:
    """One HTTP client module (``httpx`` or ``httpx2``): its types and its faults.

    ``send`` / ``send_async`` are the transports' own methods (set when the module is
    patched): what a request allowed out live goes through.
    """

    send: Callable[[Any, Any], Any]
    send_async: Callable[[Any, Any], Awaitable[Any]]

    def __init__(self, name: str, module: Any) -> None:
        self.name = name
        self.module = module
        self.sync_stream = _sync_stream_class(module)
        self.async_stream = _async_stream_class(module)

    def cut(self) -> BaseException:
        """What a connection dropped mid-body raises in this module."""
        return self.module.RemoteProtocolError(  # type: ignore[no-any-return]
            "peer closed connection without sending complete message body (incomplete chunked read)"
        )

    def timeout(self) -> BaseException:
        """What a read timeout raises in this module."""
        return self.module.ReadTimeout("The read operation timed out")  # type: ignore[no-any-return]

    def classify(self, exc: BaseException) -> str:
        """How a live body that raised ``exc`` ended: ``timeout`` or ``cut``."""
        return "timeout" if isinstance(exc, self.module.TimeoutException) else "cut"

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

    def start(self, request: Any, playback: Playback, *, sync: bool) -> Any:
        """The module's ``Response`` playing ``playback``, or its before-headers fault
        raised (a read timeout while waiting for the status line)."""
        if playback.before_headers:  # the fault strikes before any response exists
            playback.ended(playback.ending, 0)
            raise self.cut() if playback.ending == "cut" else self.timeout()
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
        """A body played by a :class:`~.delivery.Delivery` (or teed by a :class:`~.tee.Tee`)."""

        def __init__(self, body: Delivery | Tee) -> None:
            self.body = body

        def __iter__(self) -> Iterator[bytes]:
            return self.body.iterate()

        def close(self) -> None:
            self.body.close()

    return PlaybackStream


def _async_stream_class(module: Any) -> type:
    class AsyncPlaybackStream(module.AsyncByteStream):  # type: ignore[misc]
        """:class:`PlaybackStream`, for async clients."""

        def __init__(self, body: Delivery | Tee) -> None:
            self.body = body

        def __aiter__(self) -> Any:
            return self.body.aiterate()

        async def aclose(self) -> None:
            await self.body.aclose()

    return AsyncPlaybackStream


@dataclass(frozen=True)
class Hooks:
    """What the patched transports call: ``handle(family, transport, request)`` for a
    sync request, ``handle_async`` for an async one, and ``defer_pools()`` — whether
    a transport built now may skip building its pool (see :mod:`.lazy_pool`)."""

    handle: Callable[[Family, Any, Any], Any]
    handle_async: Callable[[Family, Any, Any], Awaitable[Any]]
    defer_pools: Callable[[], bool]


_families: dict[str, Family] = {}
_considered: set[str] = set()  # families found installed (or not), once per process
_install_lock = threading.RLock()


def install(hooks: Hooks) -> list[str]:
    """Patch the transports of every installed module family, once, to call ``hooks``.
    Returns the names of the families patched so far.

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
                when_imported(name, functools.partial(_add_family, name, hooks))
        if "aiohttp" not in _considered:
            _considered.add("aiohttp")
            from . import aio  # noqa: PLC0415 - it builds on this module's Family

            if aio.supported():
                when_imported("aiohttp", functools.partial(_add_aiohttp, hooks))
        egress.install()
        wire.install()  # after egress: it wraps the sendmsg egress patched
        children.install()
        return list(_families)


def _add_family(name: str, hooks: Hooks, module: Any) -> None:
    with _install_lock:
        if name in _families:
            return
        family = Family(name, module)
        _patch(family, hooks)
        lazy.install(family.module, hooks.defer_pools)
        _families[name] = family


def _add_aiohttp(hooks: Hooks, module: Any) -> None:
    """Hook aiohttp's ``ClientSession`` (see :mod:`.aio`), once."""
    from . import aio  # noqa: PLC0415 - see install()

    with _install_lock:
        if "aiohttp" not in _families:
            _families["aiohttp"] = aio.install(module, hooks.handle_async)


def _patch(family: Family, hooks: Hooks) -> None:
    sync_cls = family.module.HTTPTransport
    async_cls = family.module.AsyncHTTPTransport
    family.send = sync_cls.handle_request
    family.send_async = async_cls.handle_async_request
    handle, handle_async = hooks.handle, hooks.handle_async

    def handle_request(self: Any, request: Any) -> Any:
        __tracebackhide__ = True  # its arguments' repr holds the raw URL, secrets included
        return handle(family, self, request)

    async def handle_async_request(self: Any, request: Any) -> Any:
        __tracebackhide__ = True
        return await handle_async(family, self, request)

    sync_cls.handle_request = handle_request
    async_cls.handle_async_request = handle_async_request

"""One HTTP client module (``httpx`` or ``httpx2``) as the rest of the package sees it.

A :class:`Family` knows the module's exceptions (what a cut or a timeout raises
there) and its byte-stream classes, and turns a :class:`~.playback.Playback` into
that module's ``Response``: the patched transports (:mod:`.patch`) and aiohttp's
hook (:mod:`.aio`, whose :class:`~.aio.AiohttpFamily` is one) hand it to the
router, which answers through it.

A body sent whole (one chunk, ready at once: a fake's or a cassette's JSON body with
no fault) is played by a :class:`WholeBody` rather than a
:class:`~.delivery.Delivery`: nothing to wait for, pace or cut, and it ends the call as
a delivery would (bench/ W5: the delivery's generator and its steps were a tenth of
what a fake adds to a call).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any

from .chunking import is_per_event
from .delivery import ENDING, Delivery
from .playback import Playback
from .tee import Tee

__all__ = ["Family", "WholeBody", "is_whole"]


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
        self.sync_whole = _sync_whole_class(module)
        self.async_whole = _async_whole_class(module)
        self._urls: dict[Any, str] = {}  # a URL's parts: its text (url_text)
        _PARSED[name] = _parts_class(module)

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

    def url_text(self, url: Any) -> str:
        """``str(url)`` of one of the module's URLs. Both modules spell a URL from its
        parsed parts alone (``str(url._uri_reference)``, a named tuple of strings), about
        five Python steps each time: a request's URL is spelled once per URL seen, and
        read back by its parts after that (a client sends each request to one of a few
        URLs, every one a new object: bench/ W5). A URL of any other kind is spelled."""
        parts = getattr(url, "_uri_reference", None)
        if type(parts) is not _PARSED.get(self.name):
            return str(url)
        text = self._urls.get(parts)
        if text is None:
            text = str(url)
            if len(self._urls) >= _URLS_KEPT:
                self._urls.clear()
            self._urls[parts] = text
        return text

    def start(self, request: Any, playback: Playback, *, sync: bool) -> Any:
        """The module's ``Response`` playing ``playback``, or its before-headers fault
        raised (a read timeout while waiting for the status line). A body sent whole
        is played by a :class:`WholeBody` (:func:`is_whole`), any other by a
        :class:`~.delivery.Delivery`."""
        if playback.before_headers:  # the fault strikes before any response exists
            playback.ended(playback.ending, 0)
            raise self.cut() if playback.ending == "cut" else self.timeout()
        stream: Any
        if is_whole(playback):
            stream = self.sync_whole(playback) if sync else self.async_whole(playback)
        else:
            delivery = Delivery(playback, self)
            stream = self.sync_stream(delivery) if sync else self.async_stream(delivery)
        return self.module.Response(
            status_code=playback.status,
            headers=playback.headers,
            stream=stream,
            request=request,
            extensions={"http_version": b"HTTP/1.1"},
        )


_URLS_KEPT = 256  # URLs whose text a family remembers (a test suite sends to a few)
_PARSED: dict[str, type | None] = {}
"""Per module: the class of its URLs' parsed parts, when ``str(url)`` is theirs."""


def _parts_class(module: Any) -> type | None:
    """The class of ``module.URL("https://h/")._uri_reference`` when a URL's text is its
    parts' (``str(url) == str(url._uri_reference)``, as in httpx and httpx2); else
    ``None``: each URL is spelled."""
    try:
        url = module.URL("https://example.com:8443/p?q=1#f")
        parts = url._uri_reference
        hash(parts)
    except Exception:  # not a module whose URLs are built so
        return None
    return type(parts) if str(parts) == str(url) else None


def is_whole(playback: Playback) -> bool:
    """Whether ``playback`` is one chunk sent as it is and at once, to its end: one
    event in a list, no gate to wait at, no pacing, no chunking policy that could cut
    it, no fault, not relayed as it arrives. What a :class:`WholeBody` can play."""
    events = playback.events
    return (
        type(events) is list
        and len(events) == 1
        and playback.deliver is None
        and playback.ending == "complete"
        and not playback.gates
        and not playback.delay
        and not playback.schedule
        and not playback.arriving
        and is_per_event(playback.chunker)
    )


class WholeBody:
    """A body sent whole (:func:`is_whole`): its one chunk handed over when first asked
    for. The call ends once, with a :class:`~.delivery.Delivery`'s outcomes:
    ``completed`` (one event sent) when the chunk is handed over, for the body has then
    been sent whole (a delivery waits for the client to ask past its last event);
    ``cancelled`` when the client closes the response unread."""

    def __init__(self, playback: Playback) -> None:
        self.playback: Playback | None = playback
        self.chunk: bytes | None = playback.events[0]  # type: ignore[index]

    def take(self) -> bytes | None:
        """The chunk, the first time (the call ends ``completed``); then ``None``."""
        if self.chunk is None:  # taken or closed: the call has ended
            return None
        with ENDING:  # the first of two threads ending it at once ends the call
            playback, self.playback = self.playback, None
            chunk, self.chunk = self.chunk, None
        if playback is not None:
            playback.ended("completed", 1)
        return chunk

    def close(self) -> None:
        """End a call whose chunk was never taken ``cancelled``, and let go of the
        playback; nothing when the call has ended."""
        if self.playback is None:  # taken or closed already: the usual close
            return
        with ENDING:
            playback, self.playback = self.playback, None
            self.chunk = None
        if playback is not None:
            playback.ended("cancelled", 0)


def _sync_whole_class(module: Any) -> type:
    class WholeByteStream(WholeBody, module.SyncByteStream):  # type: ignore[misc]
        """A :class:`WholeBody` as the module's sync byte stream."""

        def __iter__(self) -> Iterator[bytes]:
            chunk = self.take()
            if chunk is not None:
                yield chunk

    return WholeByteStream


def _async_whole_class(module: Any) -> type:
    class AsyncWholeByteStream(WholeBody, module.AsyncByteStream):  # type: ignore[misc]
        """A :class:`WholeBody` as the module's async byte stream."""

        def __aiter__(self) -> AsyncWholeByteStream:
            return self  # not an async generator: one left unfinished needs no event loop

        async def __anext__(self) -> bytes:
            chunk = self.take()
            if chunk is None:
                raise StopAsyncIteration
            return chunk

        async def aclose(self) -> None:
            self.close()

    return AsyncWholeByteStream


def _sync_stream_class(module: Any) -> type:
    class PlaybackStream(module.SyncByteStream):  # type: ignore[misc]
        """A body played by a :class:`~.delivery.Delivery` (or teed by a :class:`~.tee.Tee`)."""

        def __init__(self, body: Delivery | Tee) -> None:
            self.body: Delivery | Tee | _Played = body

        def __iter__(self) -> Iterator[bytes]:
            return self.body.iterate()

        def close(self) -> None:
            body = self.body
            body.close()
            self.body = _played(body)

    return PlaybackStream


def _async_stream_class(module: Any) -> type:
    class AsyncPlaybackStream(module.AsyncByteStream):  # type: ignore[misc]
        """:class:`PlaybackStream`, for async clients."""

        def __init__(self, body: Delivery | Tee) -> None:
            self.body: Delivery | Tee | _Played = body

        def __aiter__(self) -> Any:
            return self.body.aiterate()

        async def aclose(self) -> None:
            body = self.body
            await body.aclose()
            self.body = _played(body)

    return AsyncPlaybackStream


class _Played:
    """A closed :class:`~.delivery.Delivery`'s stand-in: what one gives once closed
    (nothing more to read, nothing left to end).

    A module's ``Response`` and its stream refer to each other, so the cyclic
    garbage collector frees them; a closed stream that let go of its delivery leaves
    the delivery, its playback, headers and body to be freed at once by their
    reference counts (issue 29: they were most of the collector's extra work per
    replayed request, about a tenth of its cost).
    """

    def iterate(self) -> Iterator[bytes]:
        return iter(())

    async def aiterate(self) -> AsyncIterator[bytes]:
        return
        yield  # pragma: no cover - makes this an async generator

    def close(self) -> None:
        pass

    async def aclose(self) -> None:
        pass


_PLAYED = _Played()


def _played(body: Delivery | Tee | _Played) -> Delivery | Tee | _Played:
    """What a stream holds once ``body`` was closed: a delivery gives nothing more
    (closing it ended the call), so :data:`_PLAYED` stands in; a tee stays (its live
    body decides what reading it again does)."""
    return _PLAYED if isinstance(body, Delivery) else body

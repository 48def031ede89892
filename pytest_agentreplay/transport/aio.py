"""Hooking aiohttp: every ``ClientSession`` request passes through the router.

httpx and httpx2 are hooked at their transports (:mod:`.patch`); a client whose
transport is aiohttp goes around them: ``aiohttp.ClientSession`` itself,
google-genai's async client, the SDKs' ``DefaultAioHttpClient`` (httpx-aiohttp)
and litellm's ``acompletion`` (``LiteLLMAiohttpTransport``). Issue 19: a
``scripted_model`` never saw those calls, and cassettes reached them only
through vcrpy, which buffers streams.

``ClientSession._request`` is wrapped to add one client middleware of ours
after the session's own (aiohttp 3.12+ runs middlewares innermost last): it sees
each request as it would go on the wire — every redirect hop and every retry of
a user's middleware, with the final headers and body — and hands it to the
router like an httpx request (:func:`~.router._handle_async`). A claimed request
is answered by a :class:`aiohttp.ClientResponse` whose body is pulled from the
playback (:mod:`.aio_stream`); a live one goes on to the connection, its body
teed when recording. The httpx clients over aiohttp are seen here only: their
transport is no ``HTTPTransport``, so no request is served or recorded twice.

aiohttp is imported by :func:`install` only once the user's code has imported it.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from .aio_version import MIN_VERSION, hookable, supported
from .delivery import Delivery
from .family import Family
from .playback import Playback
from .tee import Tee

__all__ = ["MIN_VERSION", "AiohttpFamily", "hookable", "install", "supported"]

_CUT = (
    "Response payload is not completed: <TransferEncodingError: 400, message="
    "'Not enough data to satisfy transfer length header.'>"
)


class _RawHeaders:
    """Headers as the router reads them (``.raw``: bytes pairs, in order)."""

    def __init__(self, pairs: list[tuple[bytes, bytes]]) -> None:
        self.raw = pairs


class AioRequest:
    """An ``aiohttp.ClientRequest`` as the router reads one: method, URL, headers and
    ``aread()``; ``decompressed`` and ``limit`` are how the client reads the body."""

    def __init__(self, raw: Any, *, decompressed: bool, limit: int) -> None:
        self.raw = raw
        self.method: str = raw.method
        self.url = raw.url
        self.headers = _RawHeaders(
            [(k.encode("latin-1"), v.encode("latin-1")) for k, v in raw.headers.items()]
        )
        self.decompressed = decompressed
        self.limit = limit

    async def aread(self) -> bytes:
        """The body as it will be sent (a streamed body is read once and kept, so it
        can still be sent live)."""
        from aiohttp import payload

        body = self.raw.body
        if isinstance(body, payload.Payload):
            return await body.as_bytes()
        return bytes(body or b"")


class _Headers(dict[str, str]):
    """A live response's headers as the recorder reads them (``multi_items()``)."""

    def __init__(self, pairs: list[tuple[str, str]]) -> None:
        super().__init__(pairs)
        self.pairs = pairs

    def multi_items(self) -> list[tuple[str, str]]:
        return list(self.pairs)


class _LiveBody:
    """The body of a live aiohttp response, read as it arrives (for the :class:`Tee`)."""

    def __init__(self, content: Any) -> None:
        self.content = content

    async def __aiter__(self) -> AsyncIterator[bytes]:
        # Chunk by chunk as the server sent them (``readany`` would join what has
        # piled up): the client sees the server's chunking, the recording its timing.
        while True:
            chunk, _ = await self.content.readchunk()
            if chunk:
                yield chunk
            elif self.content.at_eof():
                return

    def close(self) -> None:
        """Nothing to do: aiohttp closes a connection whose body was left unread."""

    async def aclose(self) -> None:
        pass


class LiveResponse:
    """A live ``aiohttp.ClientResponse`` as the recorder reads one.

    aiohttp decompresses the body itself unless told not to (``auto_decompress``):
    then the body the client reads is no longer in the ``content-encoding`` the
    headers name, and the recorder must not decode it again.
    """

    def __init__(self, raw: Any, *, decompressed: bool) -> None:
        self.raw = raw
        self.status_code: int = raw.status
        pairs = [(str(k), v) for k, v in raw.headers.items()]
        if decompressed:
            pairs = [(k, v) for k, v in pairs if k.lower() != "content-encoding"]
        self.headers = _Headers(pairs)
        self.stream = _LiveBody(raw.content)


class AiohttpFamily(Family):
    """aiohttp as a client family: what its faults raise, how its responses are built.

    Async only (aiohttp has no sync client). A cut body raises
    :class:`aiohttp.ClientPayloadError` and a read timeout
    :class:`aiohttp.SocketTimeoutError` (an ``asyncio.TimeoutError``), from the read
    that meets them; a connection dropped before the status line raises
    :class:`aiohttp.ServerDisconnectedError` — what aiohttp raises in production.
    """

    def __init__(self, module: Any) -> None:  # no byte-stream classes: see start()
        self.name = "aiohttp"
        self.module = module

    async def send_async(self, handler: Any, request: AioRequest) -> LiveResponse:
        """Send ``request`` on to the connection (the next middleware in aiohttp)."""
        response = await handler(request.raw)
        return LiveResponse(response, decompressed=request.decompressed)

    def cut(self) -> BaseException:
        return self.module.ClientPayloadError(_CUT)  # type: ignore[no-any-return]

    def timeout(self) -> BaseException:
        return self.module.SocketTimeoutError("Timeout on reading data from socket")  # type: ignore[no-any-return]

    def classify(self, exc: BaseException) -> str:
        return "timeout" if isinstance(exc, asyncio.TimeoutError) else "cut"

    def teed(self, response: Any, tee: Tee) -> Any:
        """The live ``ClientResponse``, its body now read through ``tee``."""
        from .aio_stream import PulledStream

        raw = response.raw
        raw.content = PulledStream(tee.aiterate(), tee.close, limit=raw.content._low_water)
        return raw

    def start(self, request: Any, playback: Playback, *, sync: bool) -> Any:
        """The ``ClientResponse`` playing ``playback``, or its before-headers fault."""
        from .aio_stream import PulledStream, build_response

        if playback.before_headers:
            playback.ended(playback.ending, 0)
            if playback.ending == "cut":
                raise self.module.ServerDisconnectedError()
            raise self.timeout()
        delivery = Delivery(playback, self)
        body = PulledStream(delivery.aiterate(), delivery.close, limit=request.limit)
        return build_response(request.raw, playback.status, playback.headers, body)


HandleAsync = Callable[[Family, Any, Any], Awaitable[Any]]


def install(module: Any, handle_async: HandleAsync) -> AiohttpFamily:
    """Wrap ``ClientSession._request`` of aiohttp ``module`` so that each request
    passes ``handle_async`` (the router's), as the last middleware."""
    family = AiohttpFamily(module)
    session_class = module.ClientSession
    original = session_class._request

    async def _request(self: Any, method: str, url: Any, **kwargs: Any) -> Any:
        __tracebackhide__ = True  # its arguments' repr holds the raw URL, secrets included
        decompress = kwargs.get("auto_decompress")
        options = {
            "decompressed": self._auto_decompress if decompress is None else decompress,
            "limit": kwargs.get("read_bufsize") or self._read_bufsize,
        }

        async def agentreplay(request: Any, handler: Any) -> Any:
            __tracebackhide__ = True
            answer = await handle_async(family, handler, AioRequest(request, **options))
            return answer.raw if isinstance(answer, LiveResponse) else answer

        own = kwargs.pop("middlewares", None)
        own = self._middlewares if own is None else own
        return await original(self, method, url, middlewares=(*own, agentreplay), **kwargs)

    session_class._request = _request
    return family

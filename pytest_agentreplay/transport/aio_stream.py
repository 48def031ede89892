"""aiohttp responses whose body is pulled, chunk by chunk, from a playback or a tee.

aiohttp hands the caller a :class:`aiohttp.ClientResponse` whose ``content`` is a
:class:`aiohttp.StreamReader` that the connection feeds as bytes arrive. A
:class:`PulledStream` is that same reader class, fed instead from an async source
(a :class:`~.delivery.Delivery` playing a fake's reply or a recording, or a
:class:`~.tee.Tee` over a live body being recorded), one chunk each time a read
finds its buffer empty. So ``iter_chunked``, ``iter_any``, ``readline``,
``readuntil``, ``read()``, ``json()`` and ``text()`` all keep aiohttp's own
behaviour (lines split across chunks, CRLF, line-length limits), the body advances
only as fast as the client reads it, and a cut or a timeout is raised by the read
that meets it, as on the wire.

This module imports aiohttp: only :mod:`.aio` loads it, once aiohttp is imported.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
from collections.abc import AsyncIterator, Callable, Sequence
from types import SimpleNamespace
from typing import Any

import aiohttp
from aiohttp import streams
from multidict import CIMultiDict, CIMultiDictProxy

from .playback import reason_phrase

__all__ = ["PulledStream", "build_response"]

DEFAULT_LIMIT = 2**16
"""aiohttp's default ``read_bufsize``: a line longer than twice this is refused, as
aiohttp refuses it from a real connection."""


class _Feed:
    """The protocol a :class:`aiohttp.StreamReader` asks to pause and resume reading.

    Nothing needs pausing: a :class:`PulledStream` only takes a chunk when its buffer
    is empty."""

    connected = True
    _reading_paused = False

    def pause_reading(self) -> None:
        pass

    def resume_reading(self, resume_parser: bool = True) -> None:
        pass


class PulledStream(streams.StreamReader):
    """A ``StreamReader`` that takes its next chunk from ``source`` when a read needs it.

    ``on_close`` is called once when the client lets go of the body (aiohttp marks
    the reader closed on ``release()`` / ``close()``), so a body hung up on midway is
    logged ``cancelled`` and its source is closed.
    """

    def __init__(
        self,
        source: AsyncIterator[bytes],
        on_close: Callable[[], None],
        *,
        limit: int = DEFAULT_LIMIT,
    ) -> None:
        super().__init__(_Feed(), limit, loop=asyncio.get_running_loop())  # type: ignore[arg-type]
        self._source: AsyncIterator[bytes] | None = source
        self._on_close: Callable[[], None] | None = on_close
        self._pulling = False

    async def _wait(self, func_name: str) -> None:
        """Instead of waiting for the connection to feed data, take the next chunk."""
        if self._pulling:  # aiohttp's own guard against two readers at once
            raise RuntimeError(
                f"{func_name}() called while another coroutine is already waiting for incoming data"
            )
        source = self._source
        if source is None:
            self.feed_eof()
            return
        self._pulling = True
        try:
            chunk = await source.__anext__()
        except StopAsyncIteration:
            self._source = None
            self.feed_eof()
            return
        except (asyncio.CancelledError, GeneratorExit):
            self._source = None  # the source saw the hang-up itself
            raise
        except Exception as exc:  # a cut or a timeout: every later read raises it too
            self._source = None
            super().set_exception(exc)
            raise
        finally:
            self._pulling = False
        self.feed_data(chunk)

    def set_exception(self, exc: BaseException, *cause: Any) -> None:
        """aiohttp calls this when the client releases the response: the body is done."""
        self._close_source()
        super().set_exception(exc, *cause)

    def _close_source(self) -> None:
        on_close, self._on_close = self._on_close, None
        if on_close is not None:
            on_close()
        source, self._source = self._source, None
        if source is None or not hasattr(source, "aclose"):
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # released outside the loop: the collector finalizes it
            return
        # An unfinished async generator left to the collector is finalized later, on
        # whatever loop is running then (or warns): close it here, on this one.
        _closing.add(task := loop.create_task(_aclose(source)))
        task.add_done_callback(_closing.discard)


_closing: set[asyncio.Task[Any]] = set()  # the loop keeps only weak references to tasks


async def _aclose(source: Any) -> None:
    # A read still waiting in another task owns the generator ("already running"):
    # it ends when that read is cancelled, and the hang-up is logged either way.
    with contextlib.suppress(RuntimeError):
        await source.aclose()


_ACCEPTS_STREAM_WRITER = "stream_writer" in inspect.signature(aiohttp.ClientResponse).parameters
"""aiohttp 3.14 made ``stream_writer`` a required argument (the request is already sent)."""


def build_response(
    request: aiohttp.ClientRequest,
    status: int,
    headers: Sequence[tuple[str, str]],
    body: PulledStream,
) -> aiohttp.ClientResponse:
    """The ``ClientResponse`` (of the session's ``response_class``) that
    ``ClientRequest.send`` and ``ClientResponse.start`` would have built for this
    status line and headers, reading ``body``."""
    extra: dict[str, Any] = {}
    if _ACCEPTS_STREAM_WRITER:
        extra["stream_writer"] = SimpleNamespace(output_size=0)
    response = request.response_class(
        request.method,
        request.original_url,
        writer=None,
        continue100=None,
        timer=None,  # type: ignore[arg-type]
        request_info=request.request_info,
        traces=[],
        loop=asyncio.get_running_loop(),
        session=getattr(request, "_session", None),  # type: ignore[arg-type]
        **extra,
    )
    response.version = aiohttp.HttpVersion11
    response.status = status
    response.reason = reason_phrase(status)
    multi = CIMultiDict(headers)
    response._headers = CIMultiDictProxy(multi)
    response._raw_headers = tuple((k.encode("latin-1"), v.encode("latin-1")) for k, v in headers)
    if cookies := multi.getall("Set-Cookie", ()):
        response._raw_cookie_headers = tuple(cookies)  # the session's cookie jar takes them
    response._closed = False
    response.content = body
    body.on_eof(response._response_eof)  # closed once read to the end, as aiohttp's own
    return response

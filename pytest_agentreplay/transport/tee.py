"""The tee that records: a live body passed on to the client as it arrives, and seen.

In record mode the router wraps every live response body in a :class:`Tee`
(see :mod:`..cassettes.record`): the client reads each chunk the moment it
arrives, while a :class:`TeeSink` sees the same chunk and, once, how the body
ended. Nothing is buffered on the client's side, and a stream that never ends is
still delivered.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any, Protocol

__all__ = ["Tee", "TeeSink"]


class TeeSink(Protocol):
    """Receives a live body as it passes: every chunk, then how it ended (once)."""

    def chunk(self, data: bytes) -> None: ...

    def end(self, how: str) -> None: ...


class Tee:
    """Passes a live body to the client unchanged, chunk by chunk, as it arrives,
    while a :class:`TeeSink` records it.

    The client never waits for the recording: each chunk is handed on as soon as the
    sink has seen it. How the body ended is reported once: ``complete``; ``cut`` /
    ``timeout`` (as ``classify`` names the exception, which is re-raised);
    ``cancelled`` when the client closes early; ``incomplete`` on ``KeyboardInterrupt``.
    """

    def __init__(self, inner: Any, sink: TeeSink, classify: Callable[[BaseException], str]) -> None:
        self.inner = inner
        self.sink = sink
        self.classify = classify
        self.ended = False

    def _end(self, how: str) -> None:
        if not self.ended:
            self.ended = True
            self.sink.end(how)

    def _failed(self, exc: BaseException) -> None:
        if isinstance(exc, KeyboardInterrupt):
            self._end("incomplete")
        elif isinstance(exc, GeneratorExit) or _cancelled(exc):
            self._end("cancelled")
        else:
            self._end(self.classify(exc))

    def iterate(self) -> Iterator[bytes]:
        """The body for a sync client, each chunk seen by the sink on its way."""
        try:
            for data in self.inner:
                self.sink.chunk(data)
                yield data
        except BaseException as exc:
            self._failed(exc)
            raise
        self._end("complete")

    async def aiterate(self) -> AsyncIterator[bytes]:
        """The body for an async client, each chunk seen by the sink on its way."""
        try:
            async for data in self.inner:
                self.sink.chunk(data)
                yield data
        except BaseException as exc:
            self._failed(exc)
            raise
        self._end("complete")

    def close(self) -> None:
        """The client closed the body: an unfinished recording ends ``cancelled``."""
        self._end("cancelled")
        self.inner.close()

    async def aclose(self) -> None:
        """:meth:`close`, for async clients."""
        self._end("cancelled")
        await self.inner.aclose()


def _cancelled(exc: BaseException) -> bool:
    """Whether ``exc`` is asyncio's cancellation: never, while asyncio was not even
    imported (a sync test's body, that need not load it: bench/ W4)."""
    asyncio = sys.modules.get("asyncio")
    return asyncio is not None and isinstance(exc, asyncio.CancelledError)

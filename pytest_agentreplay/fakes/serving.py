"""Serving a fake for a block: through the active router, or through a router of its own.

A fake (:class:`~..fakes.FakeModel`, :class:`~.twin.TwinServer`) is a router
handler. The pytest fixtures attach it to the test's router; used as a (sync or
async) context manager it joins the active router, or activates a router of its
own for the block when there is none, and checks itself when the block ends.
"""

from __future__ import annotations

from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar

from ..providers import target
from ..transport.playback import Playback
from ..transport.router import Deferred, HTTPRequest, Router, active_router, intercepting

if TYPE_CHECKING:
    from ..neutral import Request
    from ..providers.base import Codec, RequestFacts
    from .script import HTTPCall

__all__ = ["Serving"]

S = TypeVar("S", bound="Serving")


class Serving:
    """The scope of a handler: :meth:`attach` / :meth:`detach`, and the context
    managers. Subclasses answer requests (``claims``, ``respond``, ``respond_async``)
    and say what is wrong at the end (:meth:`verify`)."""

    allow_hosts: tuple[str, ...] = ()
    _router: Router | None = None
    _scope: Any = None

    def claims(self, request: HTTPRequest) -> bool:
        """Whether this answers ``request`` (see :class:`~..transport.router.Handler`)."""
        raise NotImplementedError

    @staticmethod
    def _parse(codec: Codec, request: HTTPRequest) -> Request:
        """``request`` as ``codec`` reads it, knowing where it was sent (an empty or
        non-object body reads as ``{}``); ``ValueError`` or
        :class:`~..errors.CodecError` for a body that is no valid request."""
        return Serving._parse_at(codec, request, target(request.url))

    @staticmethod
    def _parse_at(codec: Codec, request: HTTPRequest | HTTPCall, where: str) -> Request:
        """:meth:`_parse`, knowing already where the request was sent (``where``: its
        path and query); a logged call's request is read again so."""
        body = request.json()
        return codec.parse_call(request.method, where, body if isinstance(body, dict) else {})

    @staticmethod
    def _check_at(codec: Codec, request: HTTPRequest, where: str) -> RequestFacts:
        """:meth:`_parse_at`'s checks, the neutral models built only where the codec
        cannot check without them (:meth:`~..providers.base.Codec.check_call`)."""
        body = request.json()
        return codec.check_call(request.method, where, body if isinstance(body, dict) else {})

    def respond(self, request: HTTPRequest) -> Playback | Deferred:
        """The response to ``request``, for a sync client."""
        raise NotImplementedError

    async def respond_async(self, request: HTTPRequest) -> Playback | Deferred:
        """The response to ``request``, for an async client."""
        raise NotImplementedError

    def verify(self) -> None:
        """Raise ``AssertionError`` if the block that served this went wrong."""

    def attach(self: S, router: Router) -> S:
        """Serve through ``router`` (what the pytest fixtures do)."""
        self._router = router
        router.add(self)
        return self

    def detach(self) -> None:
        """Stop serving."""
        if self._router is not None:
            self._router.remove(self)
            self._router = None

    def __enter__(self: S) -> S:
        router = active_router()
        if router is None:
            self._scope = intercepting(Router(allow_hosts=self.allow_hosts))
            router = self._scope.__enter__()
        return self.attach(router)

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.detach()
        scope, self._scope = self._scope, None
        if scope is not None:
            scope.__exit__(exc_type, exc, tb)
        if exc_type is None:
            self.verify()

    async def __aenter__(self: S) -> S:
        return self.__enter__()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.__exit__(exc_type, exc, tb)

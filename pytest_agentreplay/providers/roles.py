"""The roles every provider folder fills, and the codec and fold built on them.

A provider folder (``anthropic/``, ``openai/chat/``, ``openai/responses/``,
``gemini/``) holds one module per role, each with the same functions under the same
signatures (the protocols below; mypy checks every folder against them):

* ``request.py``: ``parse(codec, target, body)``, a request in neutral form (and,
  where it can, ``check_only``: the same checks without building the models, what a
  fake answers a call from: :class:`CheckingRequestRole`);
* ``compose.py``: ``compose(codec, request, *, max_tokens)``, the inverse: a neutral
  request as the body the provider's SDK sends (a trace imported as a cassette);
* ``render.py``: ``render_body(codec, reply, ctx)`` and ``iter_events(codec, reply,
  ctx)``, a reply as the JSON body and as the SSE events the provider sends (and, where
  it writes them as bytes itself, ``iter_wire`` and ``body_wire``: :class:`WireRenderRole`);
* ``fold.py``: ``fold(codec, events, *, strict)``, a stream back to its final body;
* ``reply.py``: ``to_reply(codec, body)``, a final body back to a neutral reply;
* ``error_bodies.py``: ``error_response(codec, fault, ctx)`` and ``error_event(codec, fault,
  ctx)``, the provider's HTTP error and in-stream error;

and ``codec.py``, whose :class:`FolderCodec` subclass names its provider and its
:class:`Roles`. :class:`FolderCodec` implements the :class:`~.base.Codec` API once over
the roles (a reply is checked with ``check_renders`` before any role renders it, for
every provider alike), and :class:`EventFolder` is the loop every ``fold.py`` fills in.
What the codec can render beyond text and tool calls comes from its catalog entry
(:mod:`.catalog`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from .base import Codec, ErrorResponse, Folded, RenderContext, RequestFacts
from .catalog import CATALOG
from .routes import handles

if TYPE_CHECKING:
    from ..errors import CodecError
    from ..neutral import Fault, Reply, Request
    from ..sse import SSEEvent

__all__ = [
    "CheckingRequestRole",
    "ComposeRole",
    "ErrorBodiesRole",
    "EventFolder",
    "FoldRole",
    "FolderCodec",
    "RenderRole",
    "ReplyRole",
    "RequestRole",
    "Roles",
    "WireRenderRole",
    "asked_model",
]


class RequestRole(Protocol):
    """``request.py``: what was asked."""

    def parse(self, codec: Codec, target: str, body: Mapping[str, Any]) -> Request:
        """``body`` sent to ``target`` (path and query; ``""`` when unknown) in neutral
        form; a :class:`~..errors.CodecError` names the field that is wrong."""


class CheckingRequestRole(RequestRole, Protocol):
    """A ``request.py`` that also checks a body without building the neutral models
    (``check_only``, looked up by name: see :meth:`FolderCodec.check_call`)."""

    def check_only(self, codec: Codec, target: str, body: Mapping[str, Any]) -> RequestFacts:
        """:meth:`RequestRole.parse`'s checks, the same error for the same body; what
        answering the request reads of it."""


class ComposeRole(Protocol):
    """``compose.py``: what would be asked, written out."""

    def compose(self, codec: Codec, request: Request, *, max_tokens: int | None) -> dict[str, Any]:
        """The body the provider's SDK sends for ``request`` (``max_tokens``: the output
        limit, where the request set one; the provider's default otherwise)."""


class RenderRole(Protocol):
    """``render.py``: a reply as the provider sends it."""

    def render_body(self, codec: Codec, reply: Reply, ctx: RenderContext) -> dict[str, Any]:
        """The non-streaming JSON body."""

    def iter_events(self, codec: Codec, reply: Reply, ctx: RenderContext) -> Iterator[SSEEvent]:
        """The SSE events, lazily; they fold to exactly :meth:`render_body`'s JSON."""


class WireRenderRole(RenderRole, Protocol):
    """A ``render.py`` that also writes its stream as bytes, each event in one step,
    without building the events (``iter_wire``): the fake's stream without a fault.
    It may write its JSON body as bytes too (``body_wire``, looked up by name: see
    :meth:`FolderCodec.body_wire`); its ``body_wire`` refuses a reply the format cannot
    send itself (:meth:`~.base.Codec.check_renders`), so that a reply of plain text,
    which every format sends, is not looked over twice."""

    def iter_wire(self, codec: Codec, reply: Reply, ctx: RenderContext) -> Iterator[bytes]:
        """:meth:`RenderRole.iter_events`, each event as the bytes
        :class:`~..sse.SSEEncoder` writes for it (lines ended with the codec's
        ``sse_line_end``)."""


class FoldRole(Protocol):
    """``fold.py``: a stream back to the body the provider returns without streaming."""

    def fold(self, codec: Codec, events: Sequence[SSEEvent], *, strict: bool) -> Folded:
        """See :meth:`~.base.Codec.fold_detailed`."""


class ReplyRole(Protocol):
    """``reply.py``: a final body back to a neutral reply."""

    def to_reply(self, codec: Codec, body: Mapping[str, Any]) -> Reply:
        """See :meth:`~.base.Codec.to_reply`."""


class ErrorBodiesRole(Protocol):
    """``error_bodies.py``: the provider's errors, over HTTP and inside a stream."""

    def error_response(self, codec: Codec, fault: Fault, ctx: RenderContext) -> ErrorResponse:
        """See :meth:`~.base.Codec.error_response`."""

    def error_event(self, codec: Codec, fault: Fault, ctx: RenderContext) -> SSEEvent:
        """See :meth:`~.base.Codec.error_event`."""


@dataclass(frozen=True)
class Roles:
    """A provider folder's role modules: ``Roles(request, render, fold, reply,
    error_bodies, compose)``."""

    request: RequestRole
    render: RenderRole
    fold: FoldRole
    reply: ReplyRole
    error_bodies: ErrorBodiesRole
    compose: ComposeRole


def asked_model(ctx: RenderContext) -> str:
    """The model the request named, else the context's: what an error body names."""
    return ctx.request.model if ctx.request is not None and ctx.request.model else ctx.model


class FolderCodec(Codec):
    """A built-in codec: the :class:`~.base.Codec` API over its folder's :class:`Roles`.

    A subclass sets :attr:`~.base.Codec.provider` and :attr:`roles`; its
    ``server_tools`` and ``citations`` are its catalog entry's."""

    roles: ClassVar[Roles]
    _check_only: ClassVar[Any] = None
    """The request role's ``check_only``, where :meth:`check_call` uses it (a function)."""
    _body_wire: ClassVar[Any] = None
    """The render role's ``body_wire``, where :meth:`body_wire` uses it (a function)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """A codec class that names its provider takes its capabilities from its entry;
        the role functions its calls use are looked up once, here, not on every call
        (bench/ W5)."""
        super().__init_subclass__(**kwargs)
        entry = next((e for e in CATALOG.values() if e.name == cls.__dict__.get("provider")), None)
        if entry is not None:
            cls.server_tools = entry.server_tools
            cls.citations = entry.citations
        roles = getattr(cls, "roles", None)
        own_parse = cls.parse_call is not FolderCodec.parse_call
        own_render = cls.render_body is not FolderCodec.render_body
        check = None if roles is None or own_parse else getattr(roles.request, "check_only", None)
        wire = None if roles is None or own_render else getattr(roles.render, "body_wire", None)
        cls._check_only = None if check is None else staticmethod(check)
        cls._body_wire = None if wire is None else staticmethod(wire)

    def handles(self, method: str, path: str) -> bool:
        """Whether ``method path`` is a model call in this format (see :mod:`.routes`)."""
        return handles(self.provider, method, path)

    def parse_request(self, body: Mapping[str, Any]) -> Request:
        """The body alone in neutral form (where it was sent is unknown)."""
        return self.roles.request.parse(self, "", body)

    def parse_call(self, method: str, target: str, body: Mapping[str, Any]) -> Request:
        """The request in neutral form, knowing where it was sent."""
        return self.roles.request.parse(self, target, body)

    def check_call(self, method: str, target: str, body: Mapping[str, Any]) -> RequestFacts:
        """The request checked, by the request role's ``check_only`` where it has one
        (its ``parse`` without building the models), else parsed (always, for a subclass
        that parses in its own way)."""
        check = self._check_only
        if check is None:
            return self.parse_call(method, target, body)
        return check(self, target, body)  # type: ignore[no-any-return]

    def compose_request(self, request: Request, *, max_tokens: int | None = None) -> dict[str, Any]:
        """The body this provider's SDK sends for ``request`` (see :class:`ComposeRole`)."""
        return self.roles.compose.compose(self, request, max_tokens=max_tokens)

    def render_body(self, reply: Reply, ctx: RenderContext) -> dict[str, Any]:
        """The JSON body for ``reply`` (refused first if it holds what the format
        cannot send: :meth:`~.base.Codec.check_renders`)."""
        self.check_renders(reply)
        return self.roles.render.render_body(self, reply, ctx)

    def render_events(self, reply: Reply, ctx: RenderContext) -> list[SSEEvent]:
        """The stream for ``reply``; folds to exactly :meth:`render_body`'s JSON. Ids are
        drawn in the same order as :meth:`render_body`, so two contexts with the same
        seed give the same ids on both paths."""
        return list(self.iter_events(reply, ctx))

    def iter_events(self, reply: Reply, ctx: RenderContext) -> Iterator[SSEEvent]:
        """:meth:`render_events`, lazily: the first event costs the same whatever the
        length of the reply. A reply the format cannot send is refused at once."""
        self.check_renders(reply)
        return self.roles.render.iter_events(self, reply, ctx)

    def iter_wire(self, reply: Reply, ctx: RenderContext) -> Iterator[bytes]:
        """:meth:`iter_events` as the bytes sent: written by the render role in one step
        per event where it offers ``iter_wire`` (a :class:`WireRenderRole`), else each
        event encoded (always, for a subclass that renders its own events). A reply the
        format cannot send is refused at once."""
        wire = getattr(self.roles.render, "iter_wire", None)
        if wire is None or type(self).iter_events is not FolderCodec.iter_events:
            return super().iter_wire(reply, ctx)
        self.check_renders(reply)
        return wire(self, reply, ctx)  # type: ignore[no-any-return]

    def body_wire(self, reply: Reply, ctx: RenderContext) -> bytes:
        """:meth:`render_body` as the bytes sent: written by the render role where it
        offers ``body_wire``, else the body encoded (always, for a subclass that renders
        its own body). A reply the format cannot send is refused at once (by the role's
        ``body_wire`` itself: see :class:`WireRenderRole`)."""
        wire = self._body_wire
        if wire is None:
            return super().body_wire(reply, ctx)
        return wire(self, reply, ctx)  # type: ignore[no-any-return]

    def fold_detailed(self, events: Sequence[SSEEvent], *, strict: bool = False) -> Folded:
        """The final JSON of a stream, as the provider's SDK accumulates it."""
        return self.roles.fold.fold(self, events, strict=strict)

    def to_reply(self, body: Mapping[str, Any]) -> Reply:
        """A final JSON body back to a neutral reply."""
        return self.roles.reply.to_reply(self, body)

    def error_response(self, fault: Fault, ctx: RenderContext) -> ErrorResponse:
        """The provider's HTTP error for ``Fault.http(...)``."""
        return self.roles.error_bodies.error_response(self, fault, ctx)

    def error_event(self, fault: Fault, ctx: RenderContext) -> SSEEvent:
        """The provider's in-stream error event for ``Fault.error_event(...)``."""
        return self.roles.error_bodies.error_event(self, fault, ctx)


class EventFolder(ABC):
    """One fold of one stream: the loop, the bookkeeping and the errors every
    ``fold.py`` shares. A subclass says what one event does (:meth:`step`) and what
    the stream added up to (:meth:`result`)."""

    def __init__(self, codec: Codec, events: Sequence[SSEEvent], *, strict: bool) -> None:
        self.codec = codec
        self.events = events
        self.strict = strict
        self.unknown: list[int] = []
        """Indexes of the well-formed events of types this fold does not know."""
        self.index = 0
        """The number of the event being folded."""

    def run(self) -> Folded:
        """Fold the events until the stream ends or :meth:`step` stops it."""
        for index, event in enumerate(self.events):
            self.index = index
            if self.step(event):
                break
        return self.result()

    @abstractmethod
    def step(self, event: SSEEvent) -> bool:
        """Fold one event; ``True`` ends the fold (an error, a terminator)."""

    @abstractmethod
    def result(self) -> Folded:
        """What the events folded so far add up to."""

    def folded(
        self, body: dict[str, Any], *, complete: bool, error: dict[str, Any] | None = None
    ) -> Folded:
        """A :class:`~.base.Folded` with this fold's unknown events."""
        return Folded(body=body, complete=complete, error=error, unknown=self.unknown)

    def data(self) -> dict[str, Any]:
        """The current event's data, which must be a JSON object."""
        data = self.codec.event_json(self.events, self.index)
        if not isinstance(data, dict):
            raise self.fail(f"data must be a JSON object, got {type(data).__name__}", "data")
        return data

    def fail(self, message: str, field: str) -> CodecError:
        """The error for the current event, naming ``field``."""
        return self.codec.error(message, event_index=self.index, field=field)

    def skip(self, why: str, field: str = "event") -> None:
        """An event this fold does not know: listed in ``Folded.unknown`` (so nothing a
        provider adds later is silently lost), or with ``strict`` an error."""
        if self.strict:
            raise self.fail(f"{why}; not allowed with strict=True", field)
        self.unknown.append(self.index)

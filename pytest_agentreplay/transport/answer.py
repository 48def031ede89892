"""From "what to answer" to a :class:`~.playback.Playback`: replies, faults, recorded events.

Fake models and cassette playback share this: a list of SSE events (rendered
from a :class:`~..model.Reply` or loaded from a recording) plus an optional
:class:`~..model.Fault` becomes the exact response a provider would have sent,
with the fault striking where the fault says. The outcome logged for the call
(``completed``, ``cut``, ``error_event``, ``http_error``, ``timeout``,
``cancelled``) is decided here too, as only this layer knows that an error event
was an error.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import chain, islice
from typing import TYPE_CHECKING, Protocol

from ..providers.base import Codec, RenderContext, json_data
from ..sse import SSEEncoder, SSEEvent
from .playback import Chunker, Gate, Playback, chunk_by_event

if TYPE_CHECKING:  # the reply model (pydantic): a recording plays without it
    from ..model import Fault, Reply

__all__ = [
    "Plan",
    "encode_lazily",
    "for_error",
    "for_events",
    "for_reply",
    "for_stream",
]

OnEnd = Callable[[str, int], None]


class StoredEvent(Protocol):
    """An event as a cassette stores it (:class:`~..cassettes.model.RecordedEvent`, where
    a missing id or comment list is ``None``): :func:`for_events` takes these as well as
    :class:`~..sse.SSEEvent`, so a recording plays without first copying every event."""

    @property
    def data(self) -> str: ...

    @property
    def event(self) -> str | None: ...

    @property
    def id(self) -> str | None: ...

    @property
    def retry(self) -> int | None: ...

    @property
    def comments(self) -> Sequence[str] | None: ...

    def to_sse(self) -> SSEEvent:
        """The event as the SSE codec sees it."""
        ...


Event = SSEEvent | StoredEvent


@dataclass
class Plan:
    """How to play: chunking, pacing, stall gate, and who hears the ending."""

    chunker: Chunker = chunk_by_event
    delay: float = 0.0
    stall_gate: Gate | None = None
    on_end: OnEnd | None = None
    extra_gates: dict[int, Gate] = field(default_factory=dict)


def encode_lazily(
    events: Iterable[Event], *, comments: bool = False, tail: bytes = b""
) -> Iterator[bytes]:
    """Encode events one at a time, as they are pulled (time to first byte stays flat);
    ``tail`` (an unterminated last line, as a recording may end) follows them. Stored
    events that need the general encoder are converted to SSE events one by one."""
    encoder = SSEEncoder(comments=comments)
    ids = False  # once an event sets an id, the encoder tracks it for every later event
    for event in events:
        plain = None if ids else _plain(event, comments)
        if plain is None:
            ids = ids or bool(event.id)
            plain = encoder.encode(event if isinstance(event, SSEEvent) else event.to_sse())
        yield plain
    if tail:
        yield tail


def _plain(event: Event, comments: bool) -> bytes | None:
    """The bytes :class:`~..sse.SSEEncoder` writes for the usual event (a name, one data
    line, no id, retry or comment to write), built in one step; ``None`` for any other
    event. Streams of tens of thousands of events spend most of their playback here."""
    data, name = event.data, event.event
    if event.id or event.retry is not None or (comments and event.comments):
        return None
    if "\n" in data or "\r" in data:
        return None
    line = f"data: {data}\n\n" if data else "data:\n\n"
    if name is None:
        return line.encode("utf-8")
    if "\n" in name or "\r" in name:
        return None
    return (f"event: {name}\n{line}" if name else f"event:\n{line}").encode("utf-8")


def _headers(codec: Codec, ctx: RenderContext, *, streaming: bool) -> list[tuple[str, str]]:
    return list(codec.response_headers(ctx, streaming=streaming).items())


def _outcome(plan: Plan, override: str | None, *, always: bool = False) -> OnEnd | None:
    """Wrap ``plan.on_end`` so a body that played to its end logs ``override``
    (whatever the client did with the body, when ``always``)."""
    on_end = plan.on_end
    if on_end is None or override is None:
        return on_end

    def relabel(outcome: str, events_sent: int) -> None:
        on_end(override if always or outcome == "completed" else outcome, events_sent)

    return relabel


def for_error(codec: Codec, fault: Fault, ctx: RenderContext, plan: Plan) -> Playback:
    """An HTTP error response in the provider's format."""
    error = codec.error_response(fault, ctx)
    return Playback(
        status=error.status,
        headers=list(error.headers.items()),
        events=[error.content()],
        # SDKs often close an error response without reading it: still an http_error.
        chunker=plan.chunker,
        on_end=_outcome(plan, "http_error", always=True),
        gates=dict(plan.extra_gates),
    )


def for_events(
    codec: Codec,
    events: Iterable[Event],
    fault: Fault | None,
    ctx: RenderContext,
    plan: Plan,
    *,
    status: int = 200,
    headers: Sequence[tuple[str, str]] | None = None,
    comments: bool = False,
    tail: bytes = b"",
    schedule: Sequence[float] | None = None,
) -> Playback:
    """A streamed response of ``events`` with ``fault`` striking after its event count.

    ``comments`` keeps the events' comment lines; ``tail`` is sent after the last
    event (unless a fault cuts the body first); ``schedule`` paces the events.
    """
    heads = list(headers) if headers is not None else _headers(codec, ctx, streaming=True)
    if fault is None:
        return for_stream(
            events,
            plan,
            status=status,
            headers=heads,
            comments=comments,
            tail=tail,
            schedule=schedule,
        )
    gates = dict(plan.extra_gates)
    deliver: int | None = None
    ending = "complete"
    override = None
    source: Iterable[Event] = events
    after = fault.after_events or 0
    if fault.kind == "cut" and fault.after_events is None:  # "halfway" (interrupt())
        events = list(events)
        source, after = events, max(1, len(events) // 2)
    if fault.kind == "http":
        return for_error(codec, fault, ctx, plan)
    if fault.kind == "timeout" and fault.after_events is None:
        return _before_headers("timeout", plan)
    if fault.kind in ("cut", "timeout"):
        deliver, ending = after, fault.kind
    elif fault.kind == "error_event":
        source = chain(islice(events, after), [codec.error_event(fault, ctx)])
        override = "error_event"
    elif fault.kind == "stall" and plan.stall_gate is not None:
        gates[after] = plan.stall_gate
    elif fault.kind == "truncate":  # a clean end, before the provider's last events
        source, tail = islice(events, after), b""
    return Playback(
        status=status,
        headers=heads,
        events=encode_lazily(source, comments=comments, tail=tail if deliver is None else b""),
        deliver=deliver,
        ending=ending,  # type: ignore[arg-type]
        chunker=plan.chunker,
        gates=gates,
        delay=plan.delay,
        schedule=schedule,
        on_end=_outcome(plan, override),
    )


def for_stream(
    events: Iterable[Event],
    plan: Plan,
    *,
    status: int,
    headers: Sequence[tuple[str, str]],
    comments: bool = False,
    tail: bytes = b"",
    schedule: Sequence[float] | None = None,
) -> Playback:
    """A stream of ``events`` played to its end, no fault: :func:`for_events` without
    one. It needs no codec, so replaying a recording as it came never loads one (nor
    the pydantic reply model the codecs build)."""
    return Playback(
        status=status,
        headers=list(headers),
        events=encode_lazily(events, comments=comments, tail=tail),
        chunker=plan.chunker,
        gates=dict(plan.extra_gates),
        delay=plan.delay,
        schedule=schedule,
        on_end=plan.on_end,
    )


def _before_headers(ending: str, plan: Plan) -> Playback:
    return Playback(
        status=0,
        headers=[],
        events=[],
        ending=ending,  # type: ignore[arg-type]
        before_headers=True,
        on_end=plan.on_end,
    )


def for_reply(
    codec: Codec, reply: Reply, ctx: RenderContext, plan: Plan, *, streaming: bool
) -> Playback:
    """The response to ``reply`` (with its fault, if any), streamed or as one JSON body."""
    fault = reply.fault
    content = (
        reply.model_copy(update={"fault": None, "parts": []})
        if fault is not None and fault.kind == "empty"
        else reply
    )
    if streaming:
        return for_events(codec, _primed(codec.iter_events(content, ctx)), fault, ctx, plan)
    return _json_reply(codec, content, fault, ctx, plan)


def _primed(events: Iterator[SSEEvent]) -> Iterator[SSEEvent]:
    """Render the first event now, before the headers draw their request id, so a
    stream draws ids in the same order as the JSON body (same seed, same ids)."""
    first = next(events, None)
    return events if first is None else chain([first], events)


def _json_reply(
    codec: Codec, reply: Reply, fault: Fault | None, ctx: RenderContext, plan: Plan
) -> Playback:
    if fault is not None and fault.kind == "http":
        return for_error(codec, fault, ctx, plan)
    if fault is not None and fault.kind == "error_event":
        # Not streamed: the same failure arrives as the provider's HTTP error.
        return for_error(codec, codec.as_http_error(fault), ctx, plan)
    if fault is not None and fault.kind == "timeout" and fault.after_events is None:
        return _before_headers("timeout", plan)
    body = json_data(codec.render_body(reply, ctx)).encode("utf-8")
    headers = [*_headers(codec, ctx, streaming=False), ("content-length", str(len(body)))]
    gates = dict(plan.extra_gates)
    deliver: int | None = None
    ending = "complete"
    if fault is not None and fault.kind in ("cut", "timeout"):
        deliver, ending = 0, fault.kind  # headers arrive, the body never does
    elif fault is not None and fault.kind == "stall" and plan.stall_gate is not None:
        gates[0] = plan.stall_gate
    return Playback(
        status=200,
        headers=headers,
        events=[body],
        deliver=deliver,
        ending=ending,  # type: ignore[arg-type]
        chunker=plan.chunker,
        gates=gates,
        delay=plan.delay,
        on_end=plan.on_end,
    )

"""From what to answer to a :class:`~.playback.Playback`: a reply, a fault, recorded events.

Fake models and cassette replay share this: a list of SSE events (rendered from a
:class:`~..neutral.Reply` or loaded from a recording) plus an optional
:class:`~..neutral.Fault` becomes the exact response a provider would have sent.
This is where a fault becomes a way for the response to end (:func:`_strike`):
``cut`` and ``timeout`` deliver *k* events and then end so — the
:class:`~.delivery.Delivery` raises the client's own error after them
(:class:`~.family.Family`) —, ``error_event`` appends the provider's error event,
``stall`` waits at the fake's gate, ``truncate`` stops cleanly, ``http`` is the
provider's error response instead. The outcome logged for the call
(``completed``, ``cut``, ``error_event``, ``http_error``, ``timeout``,
``cancelled``) is decided here too, as only this layer knows that an error event
was an error.

Two things every codec gets here without knowing of them: the headers a fault
gives (``retry_after``, ``request_id``, ``headers``: :func:`fault_headers`), sent
with the status line, before the body fails; and a reply's ``event_fields``, added
to the data of every event it streams (:func:`with_fields`), the error event
included. A reply holding a part the codec cannot send is refused before anything
is sent (``Codec.check_renders``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from itertools import chain, islice
from typing import TYPE_CHECKING, Any, TypeVar

from .. import jsonparse
from ..providers.base import Codec, RenderContext, json_data
from ..sse import LineEnd, SSEEvent
from .chunking import Chunker, Chunking
from .encode import Event, encode_lazily
from .gate import Gate
from .playback import Ending, Playback

if TYPE_CHECKING:  # the reply model (pydantic): a recording plays without it
    from ..neutral import Fault, Reply

__all__ = [
    "Framing",
    "Plan",
    "fault_headers",
    "for_error",
    "for_events",
    "for_no_response",
    "for_reply",
    "for_stream",
    "for_timeout",
    "with_fields",
]

OnEnd = Callable[[str, int], None]
T = TypeVar("T")


@dataclass
class Plan:
    """How to play: chunking, pacing, stall gate, and who hears the ending."""

    chunker: Chunker = Chunking.PER_EVENT
    delay: float = 0.0
    stall_gate: Gate | None = None
    on_end: OnEnd | None = None
    extra_gates: dict[int, Gate] = field(default_factory=dict)


def _headers(codec: Codec, ctx: RenderContext, *, streaming: bool) -> list[tuple[str, str]]:
    return list(codec.response_headers(ctx, streaming=streaming).items())


def fault_headers(
    codec: Codec, fault: Fault | None, headers: Sequence[tuple[str, str]]
) -> list[tuple[str, str]]:
    """``headers`` with those ``fault`` gives: its request id (in the codec's
    request-id header), ``retry-after``, then its own ``headers``; each replaces a
    header of the same name, whatever its case."""
    out = list(headers)
    if fault is None:
        return out
    given: list[tuple[str, str]] = []
    if fault.request_id:
        given.append((codec.request_id_header, fault.request_id))
    if fault.retry_after is not None:
        seconds = fault.retry_after
        given.append(("retry-after", str(int(seconds)) if seconds.is_integer() else repr(seconds)))
    given.extend((fault.headers or {}).items())
    for name, value in given:
        out = [(k, v) for k, v in out if k.lower() != name.lower()]
        out.append((name, value))
    return out


def _request_id(codec: Codec, headers: Sequence[tuple[str, str]]) -> str | None:
    wanted = codec.request_id_header.lower()
    return next((v for k, v in headers if k.lower() == wanted), None)


def with_fields(events: Iterable[Event], fields: Mapping[str, Any] | None) -> Iterable[Event]:
    """``events`` with ``fields`` added to each event whose data is a JSON object (a
    field the event has is kept): what a gateway adding ``"error": null`` sends."""
    if not fields:
        return events
    return (_with_fields(event, fields) for event in events)


def _with_fields(event: Event, fields: Mapping[str, Any]) -> Event:
    try:
        data = jsonparse.loads(event.data)
    except ValueError:  # [DONE] and other sentinels are not JSON
        return event
    if not isinstance(data, dict):
        return event
    merged = {**data, **{k: v for k, v in fields.items() if k not in data}}
    sse = event if isinstance(event, SSEEvent) else event.to_sse()
    return replace(sse, data=json_data(merged))


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
    """An HTTP error response in the provider's format, with the fault's headers."""
    error = codec.error_response(fault, ctx)
    return Playback(
        status=error.status,
        headers=fault_headers(codec, fault, list(error.headers.items())),
        events=[error.content()],
        # SDKs often close an error response without reading it: still an http_error.
        chunker=plan.chunker,
        on_end=_outcome(plan, "http_error", always=True),
        gates=dict(plan.extra_gates),
    )


def for_timeout(plan: Plan) -> Playback:
    """A read timeout while waiting for the status line: no response at all."""
    return Playback(
        status=0, headers=[], events=[], ending="timeout", before_headers=True, on_end=plan.on_end
    )


def for_no_response(ending: str, plan: Plan) -> Playback:
    """No response at all: a read timeout while waiting for the status line
    (``"timeout"``), or the connection dropped before it (anything else)."""
    if ending == "timeout":
        return for_timeout(plan)
    return Playback(
        status=0, headers=[], events=[], ending="cut", before_headers=True, on_end=plan.on_end
    )


@dataclass(frozen=True)
class Framing:
    """How a stream goes out around its events: the status and headers sent first
    (``None``: the codec's), whether the events' comment lines are kept, an
    unterminated ``tail`` sent after the last event (unless a fault cuts the body
    first), the ``schedule`` pacing the events (see
    :attr:`~.playback.Playback.schedule`), and how lines end (a fake's stream ends
    them as its provider does, :attr:`~..providers.base.Codec.sse_line_end`)."""

    status: int = 200
    headers: Sequence[tuple[str, str]] | None = None
    comments: bool = False
    tail: bytes = b""
    schedule: Sequence[float] | None = None
    line_end: LineEnd = "\n"


def for_stream(events: Iterable[Event], plan: Plan, framing: Framing) -> Playback:
    """A stream of ``events`` played to its end, no fault: :func:`for_events` without
    one. It needs no codec, so replaying a recording as it came never loads one (nor
    the pydantic reply model the codecs build)."""
    return Playback(
        status=framing.status,
        headers=list(framing.headers or ()),
        events=encode_lazily(
            events, comments=framing.comments, tail=framing.tail, line_end=framing.line_end
        ),
        chunker=plan.chunker,
        gates=dict(plan.extra_gates),
        delay=plan.delay,
        schedule=framing.schedule,
        on_end=plan.on_end,
    )


def for_events(
    codec: Codec,
    events: Iterable[Event],
    fault: Fault | None,
    ctx: RenderContext,
    plan: Plan,
    *,
    framing: Framing | None = None,
    event_fields: Mapping[str, Any] | None = None,
) -> Playback:
    """A streamed response of ``events`` with ``fault`` striking after its event count,
    ``event_fields`` added to every event it sends (see :func:`with_fields`)."""
    framing = framing or Framing(line_end=codec.sse_line_end)
    if framing.headers is None:  # drawn first, whatever the fault: ids come in one order
        framing = replace(framing, headers=_headers(codec, ctx, streaming=True))
    if fault is None:
        return for_stream(with_fields(events, event_fields), plan, framing)
    if fault.kind == "http":
        return for_error(codec, fault, ctx, plan)
    if fault.kind == "timeout" and fault.after_events is None:
        return for_timeout(plan)
    headers = list(framing.headers or ())
    if fault.request_id is None:  # an error event names the request its response is for
        fault = fault.model_copy(update={"request_id": _request_id(codec, headers)})
    strike = _strike(codec, events, fault, ctx, plan)
    sent = with_fields(strike.events, event_fields)
    return Playback(
        status=framing.status,
        headers=fault_headers(codec, fault, headers),
        events=encode_lazily(
            sent,
            comments=framing.comments,
            tail=strike.tail(framing),
            line_end=framing.line_end,
        ),
        deliver=strike.deliver,
        ending=strike.ending,
        chunker=plan.chunker,
        gates=strike.gates,
        delay=plan.delay,
        schedule=framing.schedule,
        on_end=_outcome(plan, strike.outcome),
    )


@dataclass
class _Strike:
    """A stream once its fault struck: the events sent, how many are delivered before
    the body ends and how it ends, the gates to wait at, the outcome to log."""

    events: Iterable[Event]
    gates: dict[int, Gate]
    deliver: int | None = None
    ending: Ending = "complete"
    outcome: str | None = None
    keeps_tail: bool = True

    def tail(self, framing: Framing) -> bytes:
        return framing.tail if self.keeps_tail else b""


def _strike(
    codec: Codec, events: Iterable[Event], fault: Fault, ctx: RenderContext, plan: Plan
) -> _Strike:
    """Where ``fault`` strikes a stream of ``events``, and how the stream then ends."""
    after = fault.after_events or 0
    gates = dict(plan.extra_gates)
    if fault.kind in ("cut", "timeout"):  # the Delivery raises the client's error after `after`
        if fault.after_events is None:  # a cut "halfway" (interrupt())
            events = list(events)
            after = max(1, len(events) // 2)
        ending: Ending = "cut" if fault.kind == "cut" else "timeout"
        return _Strike(events, gates, deliver=after, ending=ending, keeps_tail=False)
    if fault.kind == "error_event":
        error = codec.error_event(fault, ctx)
        return _Strike(chain(islice(events, after), [error]), gates, outcome="error_event")
    if fault.kind == "truncate":  # a clean end, before the provider's last events
        return _Strike(islice(events, after), gates, keeps_tail=False)
    if fault.kind == "stall" and plan.stall_gate is not None:
        gates[after] = plan.stall_gate
    return _Strike(events, gates)


def for_reply(
    codec: Codec, reply: Reply, ctx: RenderContext, plan: Plan, *, streaming: bool
) -> Playback:
    """The response to ``reply`` (with its fault, if any), streamed or as one JSON body.

    Raises :class:`~..errors.CodecError` before anything is sent when ``reply`` holds
    a part the codec cannot send (``Codec.check_renders``)."""
    fault = reply.fault
    if fault is None and not streaming:  # the usual call: body_wire refuses what it cannot send
        return _json_body(codec, codec.body_wire(reply, ctx), ctx, plan)
    content = (
        reply.model_copy(update={"fault": None, "parts": []})
        if fault is not None and fault.kind == "empty"
        else reply
    )
    codec.check_renders(content)
    if streaming and fault is None and not reply.event_fields:
        return _plain_stream(codec, _primed(codec.iter_wire(content, ctx)), ctx, plan)
    if streaming:
        events = _primed(codec.iter_events(content, ctx))
        return for_events(codec, events, fault, ctx, plan, event_fields=reply.event_fields)
    return _json_reply(codec, content, fault, ctx, plan)


def _plain_stream(codec: Codec, wire: Iterator[bytes], ctx: RenderContext, plan: Plan) -> Playback:
    """A reply's stream played to its end, no fault, no added field: :func:`for_events`
    of its events, but the codec writes each event's bytes itself (``iter_wire``), so
    no event object is built and encoded on the way (bench/ W5)."""
    return Playback(
        status=200,
        headers=_headers(codec, ctx, streaming=True),
        events=wire,
        chunker=plan.chunker,
        gates=dict(plan.extra_gates),
        delay=plan.delay,
        on_end=plan.on_end,
    )


def _primed(events: Iterator[T]) -> Iterator[T]:
    """Render the first event now, before the headers draw their request id, so a
    stream draws ids in the same order as the JSON body (same seed, same ids)."""
    first = next(events, None)
    return events if first is None else chain([first], events)


def _json_reply(
    codec: Codec, reply: Reply, fault: Fault | None, ctx: RenderContext, plan: Plan
) -> Playback:
    kind = None if fault is None else fault.kind
    if fault is not None and kind == "http":
        return for_error(codec, fault, ctx, plan)
    if fault is not None and kind == "error_event":
        # Not streamed: the same failure arrives as the provider's HTTP error.
        return for_error(codec, codec.as_http_error(fault), ctx, plan)
    if fault is not None and kind == "timeout" and fault.after_events is None:
        return for_timeout(plan)
    playback = _json_body(codec, codec.body_wire(reply, ctx), ctx, plan)
    if fault is None:
        return playback
    playback.headers = fault_headers(codec, fault, playback.headers)
    if kind == "stall" and plan.stall_gate is not None:
        playback.gates[0] = plan.stall_gate
    if kind in ("cut", "timeout"):  # the headers arrive, the body never does
        playback.deliver = 0
        playback.ending = "cut" if kind == "cut" else "timeout"
    return playback


def json_answer(
    codec: Codec,
    reply: Reply,
    ctx: RenderContext,
    *,
    chunker: Chunker,
    delay: float,
    on_end: OnEnd,
) -> Playback:
    """:func:`for_reply` of a reply with no fault, not streamed and held by nothing: its
    JSON body played to its end. The usual call to a fake, answered without building a
    :class:`Plan` (bench/ W5). Raises :class:`~..errors.CodecError` as ``for_reply``."""
    body = codec.body_wire(reply, ctx)
    return _whole_json(codec, body, ctx, chunker=chunker, gates={}, delay=delay, on_end=on_end)


def _json_body(codec: Codec, body: bytes, ctx: RenderContext, plan: Plan) -> Playback:
    """:func:`_whole_json` as ``plan`` plays it: what :func:`_json_reply` sends, before
    a fault changes it."""
    gates = dict(plan.extra_gates) if plan.extra_gates else {}
    return _whole_json(
        codec, body, ctx, chunker=plan.chunker, gates=gates, delay=plan.delay, on_end=plan.on_end
    )


def _whole_json(
    codec: Codec,
    body: bytes,
    ctx: RenderContext,
    *,
    chunker: Chunker,
    gates: dict[int, Gate],
    delay: float,
    on_end: OnEnd | None,
) -> Playback:
    """A JSON ``body`` played to its end, with the codec's headers and its length."""
    headers = list(codec.response_headers(ctx, streaming=False).items())  # _headers()
    headers.append(("content-length", str(len(body))))
    # built positionally: no keywords to match (bench/ W5)
    return Playback(
        200, headers, [body], None, "complete", False, chunker, gates, delay, None, on_end
    )

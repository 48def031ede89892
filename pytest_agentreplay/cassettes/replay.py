"""Play a recorded interaction back: same status, headers, events, names and data bytes.

A recorded stream is replayed event by event like a fake model's (time to first
event independent of length), optionally paced by the recorded arrival times,
re-chunked by the chunking policy, and ending the way the recording ended (a cut
connection is cut again, a timeout times out). A fault injected with
``agentreplay.inject(...)`` replaces the recorded ending, exactly as the same
fault would on a fake model. :func:`recorded_reply` is the other way to play a
recording: the :class:`~..neutral.Reply` a recorded response holds, for a fake to
render again (the non-streaming twin of a stream, a run log's reply).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, overload

from ..errors import CodecError
from ..providers import codec_for, detect
from ..providers.base import Codec, RenderContext
from ..providers.catalog import FALLBACK
from ..transport.answer import (
    Framing,
    Plan,
    for_error,
    for_events,
    for_no_response,
    for_reply,
    for_stream,
    for_timeout,
)
from ..transport.playback import Playback
from .errors import IncompleteRecordingError
from .fields import decode_content

if TYPE_CHECKING:  # pydantic models; a recording played as it came loads neither
    from ..neutral import Fault
    from .cassette import Interaction, RecordedEvent, RecordedResponse

__all__ = ["REPLAY_FAULTS", "playback_for", "recorded_reply"]

REPLAY_FAULTS = frozenset({"http", "cut", "timeout", "error_event", "empty"})
"""Fault kinds a replayed call can be failed with (``stall`` needs a fake model's
``release()``)."""

_SKIP_HEADERS = frozenset({"content-length", "content-encoding", "transfer-encoding"})
# How a recorded ending is replayed: the body stops where the recording stopped, and
# the connection fails the way it failed (a hang-up or an interrupted recording
# has no ending of its own: the client sees the connection drop).
_RECORDED_FAULT = {"cut": "cut", "timeout": "timeout", "cancelled": "cut", "incomplete": "cut"}


def _headers(response: RecordedResponse) -> list[tuple[str, str]]:
    headers = response.headers
    # Most: nothing to leave out. Names all lower-case (as the model stores them) are
    # looked up as they are; others, lower-cased one by one.
    lower = all(map(str.islower, headers))
    if _SKIP_HEADERS.isdisjoint(headers if lower else map(str.lower, headers)):
        return list(headers.items())
    return [(k, v) for k, v in response.headers.items() if k.lower() not in _SKIP_HEADERS]


RequestPath = str | Callable[[], str]
"""The request's path, or what gives it when asked: only a fault reads it (the provider's
codec renders the fault), and splitting the URL was about 1 % of a replayed request."""


def _path(path: RequestPath) -> str:
    return path if isinstance(path, str) else path()


def _codec(method: str, path: RequestPath) -> Codec:
    """The provider codec to render a fault with (OpenAI's errors for other paths)."""
    return codec_for(detect(method, _path(path)) or FALLBACK)


def playback_for(
    interaction: Interaction,
    *,
    method: str,
    path: RequestPath,
    fault: Fault | None,
    plan: Plan,
    pace: float | None = None,
    allow_incomplete: bool = False,
    where: str = "",
) -> Playback:
    """The playback of ``interaction``, with ``fault`` injected in place of its ending.

    ``path`` is the request's path, or a function giving it (:data:`RequestPath`).
    ``pace`` replays events at their recorded arrival times scaled by ``pace``
    (``1.0``: as recorded); ``None`` replays as fast as the client reads.
    """
    response = interaction.response
    if response.end == "incomplete" and not allow_incomplete:
        raise IncompleteRecordingError(
            f"{where}: this interaction was recorded while the run was interrupted, so "
            f"its body is incomplete. Re-record it, or replay it anyway with "
            f"@pytest.mark.agentreplay(allow_incomplete=True)."
        )
    provider = detect(method, _path(path)) if fault is not None and fault.kind == "empty" else None
    if provider is not None:  # a model call: the provider's own empty reply
        return _empty_reply(codec_for(provider), response, plan)
    if fault is not None and fault.kind == "timeout" and fault.after_events is None:
        return for_timeout(plan)
    if fault is None and _no_response(interaction):
        return for_no_response(response.end, plan)
    if response.events is None:
        return _body_playback(response, fault, method, path, plan)
    return _stream_playback(
        response, response.events, fault, plan, method=method, path=path, pace=pace
    )


def _no_response(interaction: Interaction) -> bool:
    """An imported call that failed before any response (``origin.no_response``): its
    recorded status and headers only fill the format, its ending strikes first."""
    origin = interaction.origin
    return origin is not None and origin.get("no_response") is True


def _empty_reply(codec: Codec, response: RecordedResponse, plan: Plan) -> Playback:
    from ..neutral import Reply  # noqa: PLC0415 - see the imports

    return for_reply(codec, Reply(parts=[]), RenderContext(), plan, streaming=response.is_stream)


def _stream_playback(
    response: RecordedResponse,
    events: Sequence[RecordedEvent],
    fault: Fault | None,
    plan: Plan,
    *,
    method: str,
    path: RequestPath,
    pace: float | None,
) -> Playback:
    """A recorded stream, its events encoded one by one as pulled (no copy: see
    :class:`~..transport.encode.StoredEvent`), ending as it was recorded unless
    ``fault`` replaces the ending. Only a fault needs the provider's codec: a stream
    replayed as it came loads none."""
    if fault is None and response.end in _RECORDED_FAULT:
        from ..neutral import Fault  # noqa: PLC0415 - see the imports

        fault = Fault(kind=_RECORDED_FAULT[response.end], after_events=len(events))
    framing = Framing(
        status=response.status,
        headers=_headers(response),
        comments=True,
        tail=_tail(response),
        schedule=_Schedule(events, pace) if pace is not None else None,
    )
    if fault is None:
        return for_stream(events, plan, framing)
    return for_events(_codec(method, path), events, fault, RenderContext(), plan, framing=framing)


class _Schedule(Sequence[float]):
    """When each event may be sent (its recorded arrival time times ``pace``),
    computed per event when the delivery asks, not for the whole stream up front."""

    def __init__(self, events: Sequence[RecordedEvent], pace: float) -> None:
        self.events = events
        self.pace = pace

    def __len__(self) -> int:
        return len(self.events)

    @overload
    def __getitem__(self, index: int) -> float: ...

    @overload
    def __getitem__(self, index: slice) -> list[float]: ...

    def __getitem__(self, index: int | slice) -> float | list[float]:
        if isinstance(index, slice):
            return [(e.t or 0.0) * self.pace for e in self.events[index]]
        return (self.events[index].t or 0.0) * self.pace


def _tail(response: RecordedResponse) -> bytes:
    """The unterminated last line of a recorded stream (replayed as it came)."""
    tail = response.tail
    return tail.encode("utf-8") if tail else b""


def _body_playback(
    response: RecordedResponse, fault: Fault | None, method: str, path: RequestPath, plan: Plan
) -> Playback:
    if fault is not None and fault.kind == "error_event":
        fault = _codec(method, path).as_http_error(fault)
    if fault is not None and fault.kind == "http":
        return for_error(_codec(method, path), fault, RenderContext(), plan)
    body, encoding = _sent_body(response)
    if fault is not None and fault.kind == "empty":
        body, encoding = b"", []
    length: str | None = str(len(body))
    deliver: int | None = None
    ending = "complete"
    if fault is not None and fault.kind in ("cut", "timeout"):
        deliver, ending = 0, fault.kind  # the headers arrive, the body never does
    elif fault is None and response.end in _RECORDED_FAULT:
        # The connection dropped (or timed out) while it was recorded: the part that
        # arrived, then the same failure, as a stream's recorded ending is replayed;
        # with the length announced then (longer than what came), if there was one,
        # so the client knows the body is short.
        length, ending = response.headers.get("content-length"), _RECORDED_FAULT[response.end]
    headers = _headers(response) + encoding + ([("content-length", length)] if length else [])
    return Playback(
        status=response.status,
        headers=headers,
        events=[body] if body else [],  # nothing to read: a client that never reads ends it whole
        deliver=deliver,
        ending=ending,  # type: ignore[arg-type]
        chunker=plan.chunker,
        on_end=plan.on_end,
    )


def _sent_body(response: RecordedResponse) -> tuple[bytes, list[tuple[str, str]]]:
    """The body to send and its ``content-encoding`` header, if it needs one.

    A stored body is decoded, except raw bytes that an older version (or another tool)
    kept compressed: they are decoded here so that the client reads what it read when
    recording, or — when the plugin cannot decode them — sent with their
    ``content-encoding``, for the client to decode (issue 18: zstd bytes were sent
    without it, and the client read garbage)."""
    body = response.content()
    header = response.headers.get("content-encoding", "")
    if response.body_b64 is None or not header:
        return body, []
    try:
        plain, left = decode_content({"content-encoding": header}, body)
    except ValueError:  # it would expand beyond the limit: the client's decoder decides
        return body, [("content-encoding", header)]
    return plain, list(left.items())


def recorded_reply(codec: Codec, response: RecordedResponse) -> Any:
    """The reply a recorded response holds (a stream folded first), ``None`` for errors."""
    try:
        if response.events is not None:
            folded = codec.fold_detailed(response.sse_events())
            return None if folded.error else codec.to_reply(folded.body)
        if response.status < 400 and isinstance(response.json_body, dict):
            return codec.to_reply(response.json_body)
    except (CodecError, KeyError, TypeError, ValueError):
        return None
    return None

"""Play a recorded interaction back: same status, headers, events, names and data bytes.

A recorded stream is replayed event by event like a fake model's (time to first
event independent of length), optionally paced by the recorded arrival times,
re-chunked by the chunking policy, and ending the way the recording ended (a cut
connection is cut again, a timeout times out). A fault injected with
``agentreplay.inject(...)`` replaces the recorded ending, exactly as the same
fault would on a fake model.
"""

from __future__ import annotations

from .cassette_model import Interaction, RecordedResponse
from .errors import AgentReplayError
from .model import Fault
from .playbacks import Plan, for_error, for_events
from .providers import codec_for, detect
from .providers.base import Codec, RenderContext
from .streams import Playback

__all__ = ["IncompleteRecordingError", "playback_for"]

_SKIP_HEADERS = frozenset({"content-length", "content-encoding", "transfer-encoding"})
_RECORDED_FAULT = {"cut": "cut", "timeout": "timeout", "cancelled": "cut"}


class IncompleteRecordingError(AgentReplayError):
    """The recording was interrupted (Ctrl-C) before its body ended."""


def _headers(response: RecordedResponse) -> list[tuple[str, str]]:
    return [(k, v) for k, v in response.headers.items() if k.lower() not in _SKIP_HEADERS]


def _codec(method: str, path: str) -> tuple[Codec, bool]:
    """The provider codec for error rendering, and whether the path is a model call."""
    provider = detect(method, path)
    return codec_for(provider or "openai_chat"), provider is not None


def playback_for(
    interaction: Interaction,
    *,
    method: str,
    path: str,
    fault: Fault | None,
    plan: Plan,
    pace: float | None = None,
    allow_incomplete: bool = False,
    where: str = "",
) -> Playback:
    """The playback of ``interaction``, with ``fault`` injected in place of its ending.

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
    codec, _ = _codec(method, path)
    if response.events is None:
        return _body_playback(response, fault, codec, plan)
    if fault is None and response.end in _RECORDED_FAULT:
        fault = Fault(
            kind=_RECORDED_FAULT[response.end],
            after_events=len(response.events),
        )
    schedule = [(e.t or 0.0) * pace for e in response.events] if pace is not None else None
    return for_events(
        codec,
        response.sse_events(),
        fault,
        RenderContext(),
        plan,
        status=response.status,
        headers=_headers(response),
        comments=True,
        tail=_tail(response),
        schedule=schedule,
    )


def _tail(response: RecordedResponse) -> bytes:
    """The unterminated last line of a recorded stream (replayed as it came)."""
    tail = response.tail
    return tail.encode("utf-8") if tail else b""


def _body_playback(
    response: RecordedResponse, fault: Fault | None, codec: Codec, plan: Plan
) -> Playback:
    if fault is not None and fault.kind == "http":
        return for_error(codec, fault, RenderContext(), plan)
    body = response.content()
    headers = [*_headers(response), ("content-length", str(len(body)))]
    cut = fault is not None and fault.kind in ("cut", "timeout")
    return Playback(
        status=response.status,
        headers=headers,
        events=[body],
        deliver=0 if cut else None,
        ending=fault.kind if cut and fault is not None else "complete",  # type: ignore[arg-type]
        chunker=plan.chunker,
        on_end=plan.on_end,
    )

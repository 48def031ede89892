"""What a model call delivered to its client before it ended.

A completed call delivered its whole reply; a call cut, failed or cancelled
mid-stream delivered the events it sent, which are re-rendered from the scripted
reply by the provider codec and folded. The invariants about partial text read
this, so it lives apart from the adapters (which read cassettes and fakes).
"""

from __future__ import annotations

from itertools import islice

from ..errors import CodecError
from ..neutral import ModelCall, Reply
from ..providers import codec_for
from ..providers.base import RenderContext

__all__ = ["delivered_text"]


def delivered_text(call: ModelCall) -> str:
    """The text a call got to the client before it ended: all of it for a completed
    call, the part streamed before the cut for a call cut, failed or cancelled
    mid-stream (re-rendered from the scripted reply), ``""`` when nothing arrived (an
    error status, ``Fault.empty()``)."""
    reply = call.reply
    if reply is None or (call.status or 200) >= 400:
        return ""
    if reply.fault is not None and reply.fault.kind == "empty":
        return ""  # served with no parts at all, whatever reply the plan put under it
    truncated = reply.fault is not None and reply.fault.kind == "truncate"
    if call.outcome == "completed" and not (truncated and call.streaming):
        return reply.text_content
    if not call.streaming or call.events_sent == 0:
        return ""
    return _streamed_text(call, reply)


def _streamed_text(call: ModelCall, reply: Reply) -> str:
    """The text of the first ``events_sent`` events of ``reply`` (the call's), folded."""
    codec = codec_for(call.provider)
    ctx = RenderContext(model=call.request.model or "fake-model", request=call.request)
    whole = reply.model_copy(update={"fault": None})
    # An error event is counted among the events sent, but it is the fault's, not the
    # reply's: re-rendering it as a reply event added a delta the client never saw.
    count = call.events_sent - (call.outcome == "error_event")
    events = list(islice(codec.iter_events(whole, ctx), count))
    try:
        return codec.to_reply(codec.fold_detailed(events).body).text_content
    except (CodecError, KeyError, TypeError, ValueError):
        return ""

"""Filling run logs: from fakes and cassette handles (model side), from pydantic-ai
message histories and openai-agents run items / stream events (agent side).

The framework adapters read their objects by attribute (duck typing) and import
neither framework, so a run log costs nothing in projects that use neither.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from itertools import islice
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from ..cassettes.model import Interaction
from ..cassettes.replay import recorded_reply
from ..errors import CodecError
from ..model import ModelCall, Outcome, Usage
from ..providers import codec_for, detect
from ..providers.base import RenderContext
from .entries import (
    Egress,
    Entry,
    MessageSaved,
    StepCompleted,
    StepOutcome,
    StepStarted,
    ToolCalled,
    ToolOutcome,
    ToolResulted,
)

if TYPE_CHECKING:
    from . import RunLog
__all__ = [
    "collect",
    "delivered_text",
    "feed_openai_agents_event",
    "openai_agents_entries",
    "pydantic_ai_entries",
]

# --- the model side: fakes, cassette handles ---------------------------------------

_OUTCOMES: dict[str, Outcome] = {
    "completed": "completed",
    "complete": "completed",
    "cut": "cut",
    "incomplete": "cut",
    "error_event": "error_event",
    "http_error": "http_error",
    "timeout": "timeout",
    "cancelled": "cancelled",
}


def _is_handle(source: Any) -> bool:
    return all(hasattr(source, name) for name in ("interactions", "calls", "live_calls"))


def collect(sources: Iterable[Any]) -> tuple[list[ModelCall], Egress | None]:
    """The model calls of ``sources`` in order (re-indexed so indexes are unique in the
    log) and their merged egress ledger (``None`` when no source keeps one)."""
    calls: list[ModelCall] = []
    egress: Egress | None = None
    for source in sources:
        if _is_handle(source):
            calls.extend(handle_calls(source))
            egress = _merge(egress, handle_egress(source))
        elif hasattr(source, "log"):
            calls.extend(source.log)
        elif isinstance(source, (list, tuple)):
            calls.extend(c for c in source if isinstance(c, ModelCall))
        if not _is_handle(source) and hasattr(source, "live_calls"):
            egress = _merge(egress, Egress(live_calls=source.live_calls, blocked=source.blocked))
    renumbered = [
        c if c.index == i else c.model_copy(update={"index": i}) for i, c in enumerate(calls)
    ]
    return renumbered, egress


def _merge(a: Egress | None, b: Egress) -> Egress:
    if a is None:
        return b
    unplayed = (
        None
        if a.unplayed is None and b.unplayed is None
        else ([*(a.unplayed or []), *(b.unplayed or [])])
    )
    return a.model_copy(
        update={
            "live_calls": [*a.live_calls, *b.live_calls],
            "blocked": [*a.blocked, *b.blocked],
            "unplayed": unplayed,
        }
    )


def handle_egress(handle: Any) -> Egress:
    """The egress ledger of an ``agentreplay`` handle: live and blocked requests,
    calls answered live, recorded interactions left unplayed."""
    live = list(handle.live_calls)
    for call in handle.calls:
        described = f"{call.method} {call.url}"
        if call.source != "cassette" and described not in live:
            live.append(described)
    return Egress(live_calls=live, blocked=list(handle.blocked), unplayed=list(handle.unplayed))


def handle_calls(handle: Any) -> list[ModelCall]:
    """The model calls of an ``agentreplay`` handle as :class:`ModelCall` objects:
    request and reply parsed from the recorded interaction with the provider codec."""
    recorded = list(handle.recorded)
    interactions = handle.interactions
    calls: list[ModelCall] = []
    live = 0
    for call in handle.calls:
        if call.source == "cassette" and call.interaction is not None:
            interaction: Interaction | None = interactions[call.interaction]
        else:
            interaction = recorded[live] if live < len(recorded) else None
            live += 1
        converted = _model_call(call, interaction, len(calls)) if interaction else None
        if converted is not None:
            calls.append(converted)
    return calls


def _model_call(call: Any, interaction: Interaction, index: int) -> ModelCall | None:
    request = interaction.request
    provider = detect(request.method, urlsplit(request.url).path)
    if provider is None:
        return None  # not a model call (a token count, a model list...)
    codec = codec_for(provider)
    try:
        body = json.loads(request.content() or b"{}")
        parsed = codec.parse_request(body if isinstance(body, dict) else {})
    except (ValueError, CodecError):
        return None
    status = call.status
    outcome = _OUTCOMES.get(call.outcome, "cut")
    if outcome == "completed" and status is not None and status >= 400:
        outcome = "http_error"
    if outcome == "http_error" and (status or 0) < 400:
        outcome = "completed"
    return ModelCall(
        index=index,
        provider=provider,
        method=call.method,
        url=call.url,
        streaming=parsed.stream,
        request=parsed,
        status=status,
        outcome=outcome,
        events_sent=call.events_sent if interaction.response.is_stream else 0,
        reply=recorded_reply(codec, interaction.response),
    )


def delivered_text(call: ModelCall) -> str:
    """See :func:`.delivered_text`."""
    reply = call.reply
    if reply is None or (call.status or 200) >= 400:
        return ""
    truncated = reply.fault is not None and reply.fault.kind == "truncate"
    if call.outcome == "completed" and not (truncated and call.streaming):
        return reply.text_content
    if not call.streaming or call.events_sent == 0:
        return ""
    codec = codec_for(call.provider)
    ctx = RenderContext(model=call.request.model or "fake-model", request=call.request)
    whole = reply.model_copy(update={"fault": None})
    events = list(islice(codec.iter_events(whole, ctx), call.events_sent))
    try:
        return codec.to_reply(codec.fold_detailed(events).body).text_content
    except (CodecError, KeyError, TypeError, ValueError):
        return ""


# --- pydantic-ai ------------------------------------------------------------------------

_PA_STATES: dict[str, StepOutcome] = {
    "complete": "completed",
    "suspended": "completed",
    "incomplete": "interrupted",
    "interrupted": "interrupted",
}
_PA_TOOL_OUTCOMES: dict[str, ToolOutcome] = {
    "success": "completed",
    "failed": "failed",
    "denied": "failed",
    "retried": "failed",
    "interrupted": "interrupted",
}


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, Sequence):
        return "".join(c for c in content if isinstance(c, str))
    return json.dumps(content, default=str)


def _usage_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and value else None


def _pa_usage(usage: Any) -> Usage | None:
    if usage is None:
        return None
    return Usage(
        input_tokens=getattr(usage, "input_tokens", 0) or 0,
        output_tokens=getattr(usage, "output_tokens", 0) or 0,
        cache_read_input_tokens=_usage_or_none(getattr(usage, "cache_read_tokens", None)),
        cache_creation_input_tokens=_usage_or_none(getattr(usage, "cache_write_tokens", None)),
    )


def _pa_request_entries(message: Any, turn: str | None) -> list[Entry]:
    entries: list[Entry] = []
    for part in message.parts:
        kind, at = getattr(part, "part_kind", ""), getattr(part, "timestamp", None)
        if kind in ("system-prompt", "user-prompt"):
            role = "system" if kind == "system-prompt" else "user"
            entries.append(
                MessageSaved(role=role, text=_text_of(part.content), turn_id=turn, at=at)
            )
        elif kind == "tool-return":
            outcome = _PA_TOOL_OUTCOMES.get(getattr(part, "outcome", "success"), "completed")
            entries.append(
                ToolResulted(
                    call_id=part.tool_call_id,
                    content=part.model_response_str(),
                    outcome=outcome,
                    at=at,
                )
            )
        elif kind == "retry-prompt" and getattr(part, "tool_name", None):
            entries.append(
                ToolResulted(
                    call_id=part.tool_call_id,
                    content=part.model_response(),
                    outcome="failed",
                    at=at,
                )
            )
        elif kind == "retry-prompt":
            entries.append(
                MessageSaved(role="user", text=part.model_response(), turn_id=turn, at=at)
            )
    return entries


def _pa_response_entries(
    message: Any, step_index: int, session: str | None, started_at: Any
) -> list[Entry]:
    turn = getattr(message, "run_id", None)
    step_id = message.provider_response_id or f"{turn or 'run'}:{step_index}"
    text = "".join(p.content for p in message.parts if getattr(p, "part_kind", "") == "text")
    ids = {"step_id": step_id, "step_index": step_index, "turn_id": turn, "session_id": session}
    entries: list[Entry] = [
        StepStarted(**ids, at=started_at),
        StepCompleted(
            **ids,
            outcome=_PA_STATES.get(getattr(message, "state", "complete"), "completed"),
            usage=_pa_usage(message.usage),
            text=text,
            at=message.timestamp,
        ),
    ]
    for part in message.parts:
        kind = getattr(part, "part_kind", "")
        if kind == "text":
            entries.append(
                MessageSaved(role="assistant", text=part.content, step_id=step_id, turn_id=turn)
            )
        elif kind == "tool-call":
            entries.append(
                ToolCalled(
                    call_id=part.tool_call_id,
                    name=part.tool_name,
                    args=part.args_as_dict(),
                    step_id=step_id,
                )
            )
    return entries


def pydantic_ai_entries(messages: Sequence[Any], *, session_id: str | None = None) -> list[Entry]:
    """Run-log entries for a pydantic-ai message history (see
    :meth:`~.RunLog.from_pydantic_ai`). Each ``ModelResponse`` is one step whose
    index counts responses within its run (``run_id`` is the turn id,
    ``conversation_id`` the session id)."""
    entries: list[Entry] = []
    counts: dict[Any, int] = {}
    last_request_at = None
    for message in messages:
        turn = getattr(message, "run_id", None)
        if getattr(message, "kind", None) == "request":
            last_request_at = getattr(message, "timestamp", None)
            entries.extend(_pa_request_entries(message, turn))
        elif getattr(message, "kind", None) == "response":
            index = counts.get(turn, 0)
            counts[turn] = index + 1
            session = session_id or getattr(message, "conversation_id", None)
            entries.extend(_pa_response_entries(message, index, session, last_request_at))
    return entries


# --- openai-agents ----------------------------------------------------------------------


def _details(usage: Any, name: str, field: str) -> int | None:
    return _usage_or_none(getattr(getattr(usage, name, None), field, None))


def _agents_usage(usage: Any) -> Usage | None:
    if usage is None:
        return None
    return Usage(
        input_tokens=getattr(usage, "input_tokens", 0) or 0,
        output_tokens=getattr(usage, "output_tokens", 0) or 0,
        cache_read_input_tokens=_details(usage, "input_tokens_details", "cached_tokens"),
        reasoning_tokens=_details(usage, "output_tokens_details", "reasoning_tokens"),
    )


def _output_text(output: Sequence[Any]) -> str:
    """The text of a Responses API output list (its ``message`` items)."""
    texts: list[str] = []
    for item in output:
        if getattr(item, "type", None) == "message":
            texts.extend(getattr(c, "text", "") for c in item.content if hasattr(c, "text"))
    return "".join(texts)


def _raw(item: Any, name: str) -> Any:
    raw = getattr(item, "raw_item", item)
    return raw.get(name) if isinstance(raw, dict) else getattr(raw, name, None)


def _item_entry(item: Any, step_id: str | None) -> Entry | None:
    """The entry for one openai-agents run item (``None`` for kinds the log does not keep)."""
    kind = getattr(item, "type", "")
    if kind == "tool_call_item" and _raw(item, "call_id") is not None:
        arguments = _raw(item, "arguments")
        try:
            args = json.loads(arguments) if isinstance(arguments, str) and arguments else {}
        except ValueError:
            args = {"_raw": arguments}
        return ToolCalled(
            call_id=_raw(item, "call_id"),
            name=_raw(item, "name") or "?",
            args=args if isinstance(args, dict) else {"_value": args},
            step_id=step_id,
        )
    if kind == "tool_call_output_item":
        output = _raw(item, "output")
        text = output if isinstance(output, str) else json.dumps(output, default=str)
        return ToolResulted(call_id=_raw(item, "call_id"), content=text, step_id=step_id)
    if kind == "message_output_item":
        raw = getattr(item, "raw_item", None)
        return MessageSaved(role="assistant", text=_output_text([raw]), step_id=step_id)
    return None


def _step_entries(response: Any, index: int) -> list[Entry]:
    step_id = _response_step_id(response, index)
    return [
        StepStarted(step_id=step_id, step_index=index),
        StepCompleted(
            step_id=step_id,
            step_index=index,
            usage=_agents_usage(getattr(response, "usage", None)),
            text=_output_text(getattr(response, "output", ())),
        ),
    ]


def _response_step_id(response: Any, index: int) -> str:
    return getattr(response, "response_id", None) or f"response-{index}"


def _owners(responses: Sequence[Any]) -> dict[str, int]:
    """Which response (by position) produced each output item / tool call id."""
    owners: dict[str, int] = {}
    for n, response in enumerate(responses):
        for out in getattr(response, "output", ()):
            for name in ("id", "call_id"):
                value = getattr(out, name, None)
                if isinstance(value, str):
                    owners[value] = n
    return owners


def openai_agents_entries(result: Any) -> list[Entry]:
    """Run-log entries for an openai-agents ``RunResult`` (or a list of run items):
    each raw response is a step, emitted before the items it produced."""
    items = list(getattr(result, "new_items", result))
    responses = list(getattr(result, "raw_responses", ()))
    owners = _owners(responses)
    entries: list[Entry] = []
    emitted = 0
    for item in items:
        owner = owners.get(_raw(item, "id")) if _raw(item, "id") else None
        if owner is None:
            owner = owners.get(_raw(item, "call_id") or "", None)
        while owner is not None and emitted <= owner:
            entries.extend(_step_entries(responses[emitted], emitted))
            emitted += 1
        step_id = None if owner is None else _response_step_id(responses[owner], owner)
        entry = _item_entry(item, step_id)
        if entry is not None:
            entries.append(entry)
    for n in range(emitted, len(responses)):
        entries.extend(_step_entries(responses[n], n))
    return entries


def _open_step(log: RunLog) -> str | None:
    started = log.of(StepStarted)
    return started[-1].step_id if started else None


def _response_event(log: RunLog, data: Any) -> Entry | None:
    kind = getattr(data, "type", "")
    response = getattr(data, "response", None)
    if kind == "response.created" and response is not None:
        return log.step_started(response.id, step_index=len(log.of(StepStarted)))
    if kind == "response.output_text.delta":
        return log.delta(data.delta, step_id=_open_step(log))
    ends: dict[str, StepOutcome] = {
        "response.completed": "completed",
        "response.incomplete": "interrupted",
        "response.failed": "failed",
    }
    if kind in ends and response is not None:
        return log.step_completed(
            response.id,
            ends[kind],
            usage=_agents_usage(getattr(response, "usage", None)),
            text=_output_text(getattr(response, "output", ()) or ()),
        )
    return None


def feed_openai_agents_event(log: RunLog, event: Any) -> Entry | None:
    """See :meth:`~.RunLog.feed_openai_agents`."""
    kind = getattr(event, "type", "")
    if kind == "raw_response_event":
        return _response_event(log, event.data)
    if kind == "run_item_stream_event":
        step_id = _open_step(log)
        item = getattr(event, "item", None)
        if getattr(item, "type", "") == "tool_call_output_item":
            step_id = _tool_step(log, _raw(item, "call_id")) or step_id
        entry = _item_entry(item, step_id)
        return log.add(entry) if entry is not None else None
    return None


def _tool_step(log: RunLog, call_id: Any) -> str | None:
    return next((c.step_id for c in log.of(ToolCalled) if c.call_id == call_id), None)

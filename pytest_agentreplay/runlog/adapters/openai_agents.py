"""The agent side of a run log from an openai-agents run: its ``RunResult`` (or run
items), or its stream events one at a time. Read by attribute: openai-agents is not
imported."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ...neutral import Usage
from ..entries import (
    Delta,
    Entry,
    MessageSaved,
    ServerToolCalled,
    ServerToolResulted,
    StepCompleted,
    StepOutcome,
    StepStarted,
    ToolCalled,
    ToolOutcome,
    ToolResulted,
    as_id,
)
from .tokens import usage_of

__all__ = ["openai_agents_entries", "openai_agents_event_entry"]

# Output items of tools the provider runs itself (OpenAI's hosted tools), and how the
# status of a finished one reads as the end of a server tool call.
_HOSTED = frozenset(
    {"web_search_call", "file_search_call", "code_interpreter_call", "image_generation_call"}
)
_HOSTED_ENDS: dict[str, ToolOutcome] = {
    "completed": "completed",
    "failed": "failed",
    "incomplete": "interrupted",
}
_ENDS: dict[str, StepOutcome] = {
    "response.completed": "completed",
    "response.incomplete": "interrupted",
    "response.failed": "failed",
}


# --- a finished run -------------------------------------------------------------------


def openai_agents_entries(result: Any) -> list[Entry]:
    """Run-log entries for an openai-agents ``RunResult`` (or a list of run items):
    each raw response is a step, emitted before the items it produced."""
    items = list(getattr(result, "new_items", result))
    responses = list(getattr(result, "raw_responses", ()))
    owners = _owners(responses)
    entries: list[Entry] = []
    emitted = 0
    for item in items:
        owner = _owner(owners, item)
        while owner is not None and emitted <= owner:
            entries.extend(_step_entries(responses[emitted], emitted))
            emitted += 1
        step_id = None if owner is None else _response_step_id(responses[owner], owner)
        hosted = _hosted(getattr(item, "raw_item", item))
        if hosted is not None:  # a tool the provider ran: its begin and its end
            entries.extend(_hosted_entries(item, step_id))
            continue
        entry = _item_entry(item, step_id)
        if entry is not None:
            entries.append(entry)
    for n in range(emitted, len(responses)):
        entries.extend(_step_entries(responses[n], n))
    return entries


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


def _owner(owners: dict[str, int], item: Any) -> int | None:
    """The response that produced ``item``: by its id, else by its tool call id."""
    owner = owners.get(_raw(item, "id")) if _raw(item, "id") else None
    return owners.get(_raw(item, "call_id") or "") if owner is None else owner


def _step_entries(response: Any, index: int) -> list[Entry]:
    step_id = _response_step_id(response, index)
    return [
        StepStarted(step_id=step_id, step_index=index),
        StepCompleted(
            step_id=step_id,
            step_index=index,
            usage=_usage(getattr(response, "usage", None)),
            text=_output_text(getattr(response, "output", ())),
        ),
    ]


def _response_step_id(response: Any, index: int) -> str:
    return getattr(response, "response_id", None) or f"response-{index}"


# --- run items --------------------------------------------------------------------------


def _raw(item: Any, name: str) -> Any:
    raw = getattr(item, "raw_item", item)
    return raw.get(name) if isinstance(raw, dict) else getattr(raw, name, None)


def _item_entry(item: Any, step_id: str | None) -> Entry | None:
    """The entry for one openai-agents run item (``None`` for kinds the log does not keep)."""
    kind = getattr(item, "type", "")
    if kind == "tool_call_item" and _raw(item, "call_id") is not None:
        return _tool_call(item, step_id)
    if kind == "tool_call_output_item":
        output = _raw(item, "output")
        text = output if isinstance(output, str) else json.dumps(output, default=str)
        return ToolResulted(call_id=_raw(item, "call_id"), content=text, step_id=step_id)
    if kind == "message_output_item":
        raw = getattr(item, "raw_item", None)
        return MessageSaved(role="assistant", text=_output_text([raw]), step_id=step_id)
    return None


def _hosted(raw: Any) -> str | None:
    """The tool name of a provider-side tool item (``web_search_call`` → ``web_search``),
    ``None`` for anything else."""
    kind = raw.get("type") if isinstance(raw, dict) else getattr(raw, "type", None)
    return kind.removesuffix("_call") if isinstance(kind, str) and kind in _HOSTED else None


def _hosted_args(raw: Any) -> dict[str, Any]:
    action = raw.get("action") if isinstance(raw, dict) else getattr(raw, "action", None)
    dump = getattr(action, "model_dump", None)
    dumped = dump(exclude_none=True) if callable(dump) else action
    return {k: v for k, v in dumped.items() if k != "type"} if isinstance(dumped, dict) else {}


def _hosted_begin(raw: Any, name: str, step_id: str | None) -> ServerToolCalled:
    ident = raw.get("id") if isinstance(raw, dict) else getattr(raw, "id", None)
    return ServerToolCalled(call_id=ident, name=name, args=_hosted_args(raw), step_id=step_id)


def _hosted_end(raw: Any, step_id: str | None) -> ServerToolResulted | None:
    """The end of a provider-side tool item, when its status says it ended."""
    status = raw.get("status") if isinstance(raw, dict) else getattr(raw, "status", None)
    outcome = _HOSTED_ENDS.get(str(status))
    if outcome is None:
        return None
    ident = raw.get("id") if isinstance(raw, dict) else getattr(raw, "id", None)
    return ServerToolResulted(call_id=ident, outcome=outcome, step_id=step_id)


def _hosted_entries(raw_or_item: Any, step_id: str | None) -> list[Entry]:
    raw = getattr(raw_or_item, "raw_item", raw_or_item)
    name = _hosted(raw) or "?"
    end = _hosted_end(raw, step_id)
    return [_hosted_begin(raw, name, step_id), *([] if end is None else [end])]


def _tool_call(item: Any, step_id: str | None) -> ToolCalled:
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


def _output_text(output: Sequence[Any]) -> str:
    """The text of a Responses API output list (its ``message`` items)."""
    texts: list[str] = []
    for item in output:
        if getattr(item, "type", None) == "message":
            texts.extend(getattr(c, "text", "") for c in item.content if hasattr(c, "text"))
    return "".join(texts)


def _usage(usage: Any) -> Usage | None:
    return usage_of(
        usage,
        cache_read_input_tokens=_details(usage, "input_tokens_details", "cached_tokens"),
        reasoning_tokens=_details(usage, "output_tokens_details", "reasoning_tokens"),
    )


def _details(usage: Any, name: str, field: str) -> Any:
    return getattr(getattr(usage, name, None), field, None)


# --- stream events ----------------------------------------------------------------------


def openai_agents_event_entry(event: Any, entries: Sequence[Entry]) -> Entry | None:
    """The entry one openai-agents stream event adds to a log that holds ``entries``
    (see :meth:`~pytest_agentreplay.runlog.RunLog.feed_openai_agents`), ``None`` for
    events the log does not keep."""
    kind = getattr(event, "type", "")
    if kind == "raw_response_event":
        return _response_event(event.data, entries)
    if kind == "run_item_stream_event":
        return _stream_item(getattr(event, "item", None), entries)
    return None


def _response_event(data: Any, entries: Sequence[Entry]) -> Entry | None:
    kind = getattr(data, "type", "")
    response = getattr(data, "response", None)
    if kind == "response.created" and response is not None:
        return StepStarted(step_id=response.id, step_index=len(_starts(entries)))
    if kind == "response.output_text.delta":
        return Delta(text=data.delta, step_id=_open_step(entries))
    item = getattr(data, "item", None)
    hosted = None if item is None else _hosted(item)
    if hosted is not None and kind == "response.output_item.added":
        return _hosted_begin(item, hosted, _open_step(entries))
    if hosted is not None and kind == "response.output_item.done":
        return _hosted_end(item, _open_step(entries))
    if kind in _ENDS and response is not None:
        return _step_end(response, _ENDS[kind], entries)
    return None


def _step_end(response: Any, outcome: StepOutcome, entries: Sequence[Entry]) -> StepCompleted:
    """The terminal event of a response's step; index, turn and session from its start."""
    wanted = str(as_id(response.id))
    start = next((s for s in _starts(entries) if s.step_id == wanted), None)
    return StepCompleted(
        step_id=response.id,
        outcome=outcome,
        usage=_usage(getattr(response, "usage", None)),
        text=_output_text(getattr(response, "output", ()) or ()),
        step_index=None if start is None else start.step_index,
        turn_id=None if start is None else start.turn_id,
        session_id=None if start is None else start.session_id,
    )


def _stream_item(item: Any, entries: Sequence[Entry]) -> Entry | None:
    """A run item as it streams: it belongs to the open step, a tool output to the
    step of its tool call."""
    step_id = _open_step(entries)
    if _hosted(getattr(item, "raw_item", item)) is not None:
        return None  # logged from the raw output_item events, where it begins and ends
    if getattr(item, "type", "") == "tool_call_output_item":
        step_id = _tool_step(entries, _raw(item, "call_id")) or step_id
    return _item_entry(item, step_id)


def _starts(entries: Sequence[Entry]) -> list[StepStarted]:
    return [e for e in entries if isinstance(e, StepStarted)]


def _open_step(entries: Sequence[Entry]) -> str | None:
    started = _starts(entries)
    return started[-1].step_id if started else None


def _tool_step(entries: Sequence[Entry], call_id: Any) -> str | None:
    calls = (e for e in entries if isinstance(e, ToolCalled) and e.call_id == call_id)
    return next((c.step_id for c in calls), None)

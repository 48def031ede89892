"""The agent side of a run log from a pydantic-ai message history
(``result.all_messages()`` or ``new_messages()``), read by attribute: pydantic-ai is
not imported."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ...neutral import Usage
from ..entries import (
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
)
from .tokens import usage_of

__all__ = ["pydantic_ai_entries"]

_STATES: dict[str, StepOutcome] = {
    "complete": "completed",
    "suspended": "completed",
    "incomplete": "interrupted",
    "interrupted": "interrupted",
}
_TOOL_OUTCOMES: dict[str, ToolOutcome] = {
    "success": "completed",
    "failed": "failed",
    "denied": "failed",
    "retried": "failed",
    "interrupted": "interrupted",
}


def pydantic_ai_entries(messages: Sequence[Any], *, session_id: str | None = None) -> list[Entry]:
    """Run-log entries for a pydantic-ai message history (see
    :meth:`~pytest_agentreplay.runlog.RunLog.from_pydantic_ai`). Each ``ModelResponse``
    is one step whose index counts responses within its run (``run_id`` is the turn
    id, ``conversation_id`` the session id)."""
    entries: list[Entry] = []
    counts: dict[Any, int] = {}
    last_request_at = None
    for message in messages:
        turn = getattr(message, "run_id", None)
        if getattr(message, "kind", None) == "request":
            last_request_at = getattr(message, "timestamp", None)
            entries.extend(_request_entries(message, turn))
        elif getattr(message, "kind", None) == "response":
            index = counts.get(turn, 0)
            counts[turn] = index + 1
            session = session_id or getattr(message, "conversation_id", None)
            entries.extend(_response_entries(message, index, session, last_request_at))
    return entries


def _request_entries(message: Any, turn: str | None) -> list[Entry]:
    """A ``ModelRequest``: prompts become saved messages, tool returns tool results."""
    entries = (_request_part_entry(part, turn) for part in message.parts)
    return [entry for entry in entries if entry is not None]


def _request_part_entry(part: Any, turn: str | None) -> Entry | None:
    kind, at = getattr(part, "part_kind", ""), getattr(part, "timestamp", None)
    if kind in ("system-prompt", "user-prompt"):
        role = "system" if kind == "system-prompt" else "user"
        return MessageSaved(role=role, text=_text_of(part.content), turn_id=turn, at=at)
    if kind == "tool-return":
        outcome = _TOOL_OUTCOMES.get(getattr(part, "outcome", "success"), "completed")
        content = part.model_response_str()
        return ToolResulted(call_id=part.tool_call_id, content=content, outcome=outcome, at=at)
    if kind == "retry-prompt" and getattr(part, "tool_name", None):
        content = part.model_response()
        return ToolResulted(call_id=part.tool_call_id, content=content, outcome="failed", at=at)
    if kind == "retry-prompt":
        return MessageSaved(role="user", text=part.model_response(), turn_id=turn, at=at)
    return None


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, Sequence):
        return "".join(c for c in content if isinstance(c, str))
    return json.dumps(content, default=str)


def _response_entries(
    message: Any, step_index: int, session: str | None, started_at: Any
) -> list[Entry]:
    """A ``ModelResponse``: one step (started when the request before it was sent), its
    text as a saved assistant message, its tool calls, the provider's own tool calls
    (``builtin-tool-call`` / ``-return`` parts) as server tool entries."""
    turn = getattr(message, "run_id", None)
    step_id = message.provider_response_id or f"{turn or 'run'}:{step_index}"
    text = "".join(p.content for p in message.parts if getattr(p, "part_kind", "") == "text")
    ids = {"step_id": step_id, "step_index": step_index, "turn_id": turn, "session_id": session}
    entries: list[Entry] = [
        StepStarted(**ids, at=started_at),
        StepCompleted(
            **ids,
            outcome=_STATES.get(getattr(message, "state", "complete"), "completed"),
            usage=_usage(message.usage),
            text=text,
            at=message.timestamp,
        ),
    ]
    parts = (_response_part_entry(part, step_id, turn) for part in message.parts)
    entries.extend(entry for entry in parts if entry is not None)
    return entries


def _response_part_entry(part: Any, step_id: str, turn: str | None) -> Entry | None:
    kind = getattr(part, "part_kind", "")
    if kind == "text":
        return MessageSaved(role="assistant", text=part.content, step_id=step_id, turn_id=turn)
    if kind in ("tool-call", "builtin-tool-call"):  # builtin: a tool the provider ran
        entry = ToolCalled if kind == "tool-call" else ServerToolCalled
        return entry(
            call_id=part.tool_call_id,
            name=part.tool_name,
            args=part.args_as_dict(),
            step_id=step_id,
        )
    if kind == "builtin-tool-return":
        outcome = _TOOL_OUTCOMES.get(getattr(part, "outcome", "success"), "completed")
        content = part.model_response_str()
        return ServerToolResulted(
            call_id=part.tool_call_id, content=content, outcome=outcome, step_id=step_id
        )
    return None


def _usage(usage: Any) -> Usage | None:
    return usage_of(
        usage,
        cache_read_input_tokens=getattr(usage, "cache_read_tokens", None),
        cache_creation_input_tokens=getattr(usage, "cache_write_tokens", None),
    )

"""A neutral request as the OpenAI SDK sends it to Chat Completions: the inverse of
:mod:`.request`.

The system text is the first message; an assistant message carries its text and its
``tool_calls`` (arguments as JSON text); each tool result is a ``tool`` message naming
its call. Chat Completions has no place for the model's reasoning in a request: a
thinking part is left out.
"""

from __future__ import annotations

from typing import Any

from ....neutral import Message, Request, Text, ToolCall, ToolResult
from ...base import Codec
from ..common import function_definition, json_arguments

__all__ = ["compose"]


def compose(codec: Codec, request: Request, *, max_tokens: int | None) -> dict[str, Any]:
    """The ``POST /v1/chat/completions`` body for ``request``."""
    messages: list[dict[str, Any]] = []
    if request.system:
        messages.append({"role": "system", "content": request.system})
    for message in request.messages:
        messages += _messages(message)
    body: dict[str, Any] = {"model": request.model or "", "messages": messages}
    if request.tools:
        body["tools"] = [
            {"type": "function", "function": function_definition(t)} for t in request.tools
        ]
    if max_tokens is not None:
        body["max_completion_tokens"] = max_tokens
    if request.stream:
        body["stream"] = True
    return body


def _messages(message: Message) -> list[dict[str, Any]]:
    parts = message.parts
    results = [p for p in parts if isinstance(p, ToolResult)]
    out: list[dict[str, Any]] = [
        {"role": "tool", "tool_call_id": r.tool_call_id, "content": r.content} for r in results
    ]
    text = "".join(p.text for p in parts if isinstance(p, Text))
    calls = [p for p in parts if isinstance(p, ToolCall)]
    if message.role == "assistant":
        said: dict[str, Any] = {"role": "assistant", "content": text or None}
        if calls:
            said["tool_calls"] = [_call(c) for c in calls]
        out.append(said)
    elif text or not results:
        role = "user" if message.role == "tool" else message.role
        out.append({"role": role, "content": text})
    return out


def _call(call: ToolCall) -> dict[str, Any]:
    return {
        "id": call.id,
        "type": "function",
        "function": {"name": call.name, "arguments": json_arguments(call.args)},
    }

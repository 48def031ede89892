"""A neutral request as the Anthropic SDK sends it: the inverse of :mod:`.request`.

Used where a request must be written from what is known of it rather than recorded (a
production trace imported as a cassette, :mod:`...traces`): the system text in
``system``, tool calls as ``tool_use`` blocks, tool results as ``tool_result`` blocks
of a user message, and ``max_tokens``, which the API requires.
"""

from __future__ import annotations

from typing import Any

from ...neutral import Message, Request, Text, Thinking, Tool, ToolCall, ToolResult
from ..base import Codec

__all__ = ["DEFAULT_MAX_TOKENS", "compose"]

DEFAULT_MAX_TOKENS = 1024
"""``max_tokens`` when the request does not say (the API refuses a body without it)."""


def compose(codec: Codec, request: Request, *, max_tokens: int | None) -> dict[str, Any]:
    """The ``POST /v1/messages`` body for ``request``."""
    body: dict[str, Any] = {"model": request.model or ""}
    if request.system:
        body["system"] = request.system
    body["messages"] = [_message(m) for m in request.messages]
    if request.tools:
        body["tools"] = [_tool(t) for t in request.tools]
    body["max_tokens"] = max_tokens or DEFAULT_MAX_TOKENS
    if request.stream:
        body["stream"] = True
    return body


def _message(message: Message) -> dict[str, Any]:
    role = "assistant" if message.role == "assistant" else "user"
    blocks = [b for b in (_block(p) for p in message.parts) if b is not None]
    if len(blocks) == 1 and blocks[0]["type"] == "text":
        return {"role": role, "content": blocks[0]["text"]}
    return {"role": role, "content": blocks}


def _block(part: Any) -> dict[str, Any] | None:
    """A part as its content block; thinking is left out: sent back without the
    signature the API gave it (which a trace does not keep), the API refuses it."""
    if isinstance(part, Text):
        return {"type": "text", "text": part.text}
    if isinstance(part, ToolCall):
        return {"type": "tool_use", "id": part.id, "name": part.name, "input": part.args}
    if isinstance(part, ToolResult):
        return {"type": "tool_result", "tool_use_id": part.tool_call_id, "content": part.content}
    if isinstance(part, Thinking) and part.signature:
        return {"type": "thinking", "thinking": part.text, "signature": part.signature}
    return None


def _tool(tool: Tool) -> dict[str, Any]:
    out: dict[str, Any] = {"name": tool.name, "input_schema": _schema(tool)}
    if tool.description is not None:
        out["description"] = tool.description
    return out


def _schema(tool: Tool) -> dict[str, Any]:
    return dict(tool.parameters) or {"type": "object", "properties": {}}

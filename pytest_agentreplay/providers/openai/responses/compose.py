"""A neutral request as the OpenAI SDK sends it to the Responses API: the inverse of
:mod:`.request`.

The system text is ``instructions``; each text is an input message, each tool call a
``function_call`` item and each tool result a ``function_call_output`` item naming its
call. A reasoning item can only be sent back with the id (or the encrypted content) the
API gave it, which a trace does not keep: a thinking part is left out.
"""

from __future__ import annotations

from typing import Any

from ....neutral import Message, Request, Text, ToolCall, ToolResult
from ...base import Codec
from ..common import function_definition, json_arguments

__all__ = ["compose"]


def compose(codec: Codec, request: Request, *, max_tokens: int | None) -> dict[str, Any]:
    """The ``POST /v1/responses`` body for ``request``."""
    items: list[dict[str, Any]] = []
    for message in request.messages:
        items += _items(message)
    body: dict[str, Any] = {"model": request.model or "", "input": items}
    if request.system:
        body["instructions"] = request.system
    if request.tools:
        body["tools"] = [{"type": "function", **function_definition(t)} for t in request.tools]
    if max_tokens is not None:
        body["max_output_tokens"] = max_tokens
    if request.stream:
        body["stream"] = True
    return body


def _items(message: Message) -> list[dict[str, Any]]:
    speaker = "assistant" if message.role == "assistant" else "user"
    items: list[dict[str, Any]] = []
    for part in message.parts:
        if isinstance(part, Text):
            items.append({"role": speaker, "content": part.text})
        elif isinstance(part, ToolCall):
            items.append(
                {
                    "type": "function_call",
                    "call_id": part.id,
                    "name": part.name,
                    "arguments": json_arguments(part.args),
                }
            )
        elif isinstance(part, ToolResult):
            items.append(
                {
                    "type": "function_call_output",
                    "call_id": part.tool_call_id,
                    "output": part.content,
                }
            )
    return items

"""A neutral request as google-genai sends it: the inverse of :mod:`.request`.

The model and whether to stream are in Gemini's URL, not its body. The system text is
``systemInstruction``; the model's turns have the role ``model``; a tool result is a
``functionResponse`` part naming the function it answers (Gemini's calls have no ids:
the name is looked up from the call with the result's id); thinking is a text part
marked ``thought``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ...neutral import Request, Text, Thinking, Tool, ToolCall, ToolResult
from ..base import Codec

__all__ = ["compose"]


def compose(codec: Codec, request: Request, *, max_tokens: int | None) -> dict[str, Any]:
    """The ``:generateContent`` / ``:streamGenerateContent`` body for ``request``."""
    names = {p.id: p.name for m in request.messages for p in m.parts if isinstance(p, ToolCall)}
    contents = [
        {
            "role": "model" if m.role == "assistant" else "user",
            "parts": [p for p in (_part(part, names) for part in m.parts) if p is not None],
        }
        for m in request.messages
    ]
    body: dict[str, Any] = {"contents": contents}
    if request.system:
        body["systemInstruction"] = {"parts": [{"text": request.system}]}
    if request.tools:
        body["tools"] = [{"functionDeclarations": [_declaration(t) for t in request.tools]}]
    if max_tokens is not None:
        body["generationConfig"] = {"maxOutputTokens": max_tokens}
    return body


def _part(part: Any, names: Mapping[str | None, str]) -> dict[str, Any] | None:
    if isinstance(part, Text):
        return {"text": part.text}
    if isinstance(part, Thinking):
        return {"text": part.text, "thought": True}
    if isinstance(part, ToolCall):
        return {"functionCall": {"name": part.name, "args": part.args}}
    if isinstance(part, ToolResult):
        name = names.get(part.tool_call_id, part.tool_call_id)
        return {"functionResponse": {"name": name, "response": _response(part)}}
    return None


def _response(result: ToolResult) -> dict[str, Any]:
    """A result's content as the object Gemini takes (a plain value under ``result``)."""
    try:
        value = json.loads(result.content)
    except ValueError:
        value = result.content
    return value if isinstance(value, dict) else {"result": value}


def _declaration(tool: Tool) -> dict[str, Any]:
    parameters = dict(tool.parameters) or {"type": "object", "properties": {}}
    out: dict[str, Any] = {"name": tool.name, "parameters": parameters}
    if tool.description is not None:
        out["description"] = tool.description
    return out

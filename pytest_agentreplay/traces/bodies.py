"""The request a span's call sent, as a body of its provider's wire format.

A trace holds the conversation (system text, messages, tool calls and results), the
model and sometimes the tool definitions and ``max_tokens``; not the sampling options
or the SDK's defaults. The body built here carries what the trace knows, in the shape
the provider's SDK sends it, so ``agentreplay inspect`` shows a conversation and the
``conversation`` key part (:mod:`..cassettes.conversation`) reads the same thing from
it as from the agent's live request. Tool results go where each provider expects
them: Anthropic's in a user message, OpenAI Chat's as ``tool`` messages, OpenAI
Responses' as ``function_call_output`` items, Gemini's as ``functionResponse`` parts
naming their call.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from ..neutral import Provider, Text, Thinking, ToolCall, ToolResult
from .genai import Conversation, Part

__all__ = ["request_body"]

DEFAULT_MAX_TOKENS = 1024
"""Anthropic requires ``max_tokens``; a trace without ``gen_ai.request.max_tokens``."""


def request_body(
    provider: Provider,
    conversation: Conversation,
    *,
    model: str,
    stream: bool,
    tools: list[Mapping[str, Any]],
    max_tokens: int | None,
) -> dict[str, Any]:
    """The body ``provider`` is sent for ``conversation`` (Gemini's model and streaming
    are in its URL, not its body)."""
    body = _BUILDERS[provider](conversation, tools)
    if provider != "gemini":
        body = {"model": model, **body}
        if stream:
            body["stream"] = True
    if provider == "anthropic":
        body["max_tokens"] = max_tokens or DEFAULT_MAX_TOKENS
    elif max_tokens is not None:
        key = {"openai_chat": "max_completion_tokens", "openai_responses": "max_output_tokens"}
        if provider in key:
            body[key[provider]] = max_tokens
    return body


def _arguments(call: ToolCall) -> str:
    return json.dumps(call.args, ensure_ascii=False, separators=(",", ":"))


def _function_of(tool: Mapping[str, Any]) -> Mapping[str, Any]:
    """The definition itself: OpenAI's ``{"type": "function", "function": {...}}`` or flat."""
    inner = tool.get("function")
    return inner if isinstance(inner, Mapping) else tool


def _schema(tool: Mapping[str, Any]) -> dict[str, Any]:
    """A tool's JSON schema under any of the names instrumentations use."""
    function = _function_of(tool)
    for key in ("parameters", "input_schema", "inputSchema", "parameters_json_schema"):
        if isinstance(function.get(key), Mapping):
            return dict(function[key])
    return {"type": "object", "properties": {}}


def _tool_name(tool: Mapping[str, Any]) -> tuple[str, str | None]:
    function = _function_of(tool)
    description = function.get("description")
    return str(function.get("name", "")), None if description is None else str(description)


# --- Anthropic Messages ----------------------------------------------------------------


def _anthropic(conversation: Conversation, tools: list[Mapping[str, Any]]) -> dict[str, Any]:
    body: dict[str, Any] = {
        "messages": [_anthropic_message(r, p) for r, p in conversation.messages]
    }
    if conversation.system:
        body["system"] = conversation.system
    if tools:
        body["tools"] = [_anthropic_tool(t) for t in tools]
    return body


def _anthropic_message(role: str, parts: list[Part]) -> dict[str, Any]:
    blocks: list[dict[str, Any]] = []
    for part in parts:
        if isinstance(part, Text):
            blocks.append({"type": "text", "text": part.text})
        elif isinstance(part, ToolCall):
            blocks.append(
                {"type": "tool_use", "id": part.id, "name": part.name, "input": part.args}
            )
        elif isinstance(part, ToolResult):
            blocks.append(
                {"type": "tool_result", "tool_use_id": part.tool_call_id, "content": part.content}
            )
    if len(blocks) == 1 and blocks[0]["type"] == "text":
        return {"role": _two_roles(role), "content": blocks[0]["text"]}
    return {"role": _two_roles(role), "content": blocks}


def _two_roles(role: str) -> str:
    return "assistant" if role == "assistant" else "user"


def _anthropic_tool(tool: Mapping[str, Any]) -> dict[str, Any]:
    name, description = _tool_name(tool)
    out: dict[str, Any] = {"name": name, "input_schema": _schema(tool)}
    if description is not None:
        out["description"] = description
    return out


# --- OpenAI Chat Completions -----------------------------------------------------------


def _chat(conversation: Conversation, tools: list[Mapping[str, Any]]) -> dict[str, Any]:
    messages: list[dict[str, Any]] = []
    if conversation.system:
        messages.append({"role": "system", "content": conversation.system})
    for role, parts in conversation.messages:
        messages += _chat_messages(role, parts)
    body: dict[str, Any] = {"messages": messages}
    if tools:
        body["tools"] = [{"type": "function", "function": _function(t)} for t in tools]
    return body


def _chat_messages(role: str, parts: list[Part]) -> list[dict[str, Any]]:
    results = [p for p in parts if isinstance(p, ToolResult)]
    out = [{"role": "tool", "tool_call_id": r.tool_call_id, "content": r.content} for r in results]
    text = "".join(p.text for p in parts if isinstance(p, Text))
    calls = [p for p in parts if isinstance(p, ToolCall)]
    if role == "assistant":
        message: dict[str, Any] = {"role": "assistant", "content": text or None}
        if calls:
            message["tool_calls"] = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": _arguments(c)},
                }
                for c in calls
            ]
        out.append(message)
    elif text or not results:
        out.append({"role": "user" if role == "tool" else role, "content": text})
    return out


def _function(tool: Mapping[str, Any]) -> dict[str, Any]:
    name, description = _tool_name(tool)
    out: dict[str, Any] = {"name": name, "parameters": _schema(tool)}
    if description is not None:
        out["description"] = description
    return out


# --- OpenAI Responses ------------------------------------------------------------------


def _responses(conversation: Conversation, tools: list[Mapping[str, Any]]) -> dict[str, Any]:
    items: list[dict[str, Any]] = []
    for role, parts in conversation.messages:
        items += _response_items(role, parts)
    body: dict[str, Any] = {"input": items}
    if conversation.system:
        body["instructions"] = conversation.system
    if tools:
        body["tools"] = [{"type": "function", **_function(t)} for t in tools]
    return body


def _response_items(role: str, parts: list[Part]) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for part in parts:
        if isinstance(part, Text):
            speaker = "assistant" if role == "assistant" else "user"
            items.append({"role": speaker, "content": part.text})
        elif isinstance(part, ToolCall):
            items.append(
                {
                    "type": "function_call",
                    "call_id": part.id,
                    "name": part.name,
                    "arguments": _arguments(part),
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


# --- Gemini ----------------------------------------------------------------------------


def _gemini(conversation: Conversation, tools: list[Mapping[str, Any]]) -> dict[str, Any]:
    names = {
        p.id: p.name for _, parts in conversation.messages for p in parts if isinstance(p, ToolCall)
    }
    contents = [
        {"role": "model" if role == "assistant" else "user", "parts": _gemini_parts(parts, names)}
        for role, parts in conversation.messages
    ]
    body: dict[str, Any] = {"contents": contents}
    if conversation.system:
        body["systemInstruction"] = {"parts": [{"text": conversation.system}]}
    if tools:
        body["tools"] = [{"functionDeclarations": [_function(t) for t in tools]}]
    return body


def _gemini_parts(parts: list[Part], names: Mapping[str | None, str]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for part in parts:
        if isinstance(part, Text):
            out.append({"text": part.text})
        elif isinstance(part, Thinking):
            out.append({"text": part.text, "thought": True})
        elif isinstance(part, ToolCall):
            out.append({"functionCall": {"name": part.name, "args": part.args}})
        elif isinstance(part, ToolResult):
            name = names.get(part.tool_call_id, part.tool_call_id)
            out.append({"functionResponse": {"name": name, "response": _gemini_result(part)}})
    return out


def _gemini_result(result: ToolResult) -> dict[str, Any]:
    try:
        value = json.loads(result.content)
    except ValueError:
        value = result.content
    return value if isinstance(value, dict) else {"result": value}


_BUILDERS: dict[Provider, Callable[[Conversation, list[Mapping[str, Any]]], dict[str, Any]]] = {
    "anthropic": _anthropic,
    "openai_chat": _chat,
    "openai_responses": _responses,
    "gemini": _gemini,
}

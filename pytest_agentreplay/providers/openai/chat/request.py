"""OpenAI Chat Completions request bodies → neutral :class:`~....neutral.Request`.

The parser accepts every shape the ``openai`` SDK (and OpenAI-compatible clients)
send: ``content`` as a string, ``None`` or a list of parts; ``system`` / ``developer``
/ ``user`` / ``assistant`` / ``tool`` roles plus the legacy ``function`` role and
``function_call``; tool-call arguments as JSON strings; reasoning that
OpenAI-compatible providers echo back (``reasoning_content``, ``reasoning``,
Mistral ``thinking`` parts). Parts it does not interpret (images, audio,
files, refusals, custom tool calls) are kept as :class:`Other` so nothing is
lost; a body of the wrong *shape* raises :class:`CodecError` naming the field
path (``messages[2].content[0].type``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .... import jsonparse
from ....neutral import (
    Message,
    Other,
    Request,
    Text,
    Thinking,
    Tool,
    ToolCall,
    ToolResult,
)
from ....neutral import MessagePart as Part
from ...base import Codec
from ...validation import Fields, join, type_name

__all__ = ["parse"]

_ROLES = {
    "system": "system",
    "developer": "developer",
    "user": "user",
    "assistant": "assistant",
    "tool": "tool",
    "function": "tool",
}
_REASONING_KEYS = ("reasoning_content", "reasoning")
_check = Fields("openai_chat")


def parse(codec: Codec, target: str, body: Mapping[str, Any]) -> Request:
    """A ``POST /chat/completions`` body in neutral form (``target`` is not read)."""
    body = _check.obj(body, "", what="a JSON object (the request body)")
    model = _check.optional_key(body, "model", "")
    stream = _check.flag(body.get("stream"), "stream")
    raw_messages = _check.items(body.get("messages"), "messages", what="a list of messages")
    messages = [_message(m, join("messages", i)) for i, m in enumerate(raw_messages)]
    return Request(
        provider="openai_chat",
        model=model,
        system=_system_text(messages),
        messages=messages,
        tools=_tools(body),
        stream=stream,
        raw=dict(body),
    )


def _system_text(messages: list[Message]) -> str | None:
    """The text of the leading system / developer messages (the system prompt)."""
    texts: list[str] = []
    for message in messages:
        if message.role not in ("system", "developer"):
            break
        texts.append(message.text)
    return "\n\n".join(texts) if texts else None


def _message(raw: Any, path: str) -> Message:
    raw = _check.obj(raw, path)
    role = raw.get("role")
    if role not in _ROLES:
        raise _check.fail(
            f"unknown role {role!r}; expected one of {sorted(_ROLES)}", f"{path}.role"
        )
    parts: list[Part] = []
    if role == "assistant":
        parts.extend(_reasoning(raw, path))
    if role in ("tool", "function"):
        parts.extend(_tool_result(raw, path))
    else:
        parts.extend(_content(raw.get("content"), f"{path}.content"))
    if role == "assistant":
        parts.extend(_assistant_extras(raw, path))
    return Message(role=_ROLES[role], parts=parts)


def _reasoning(raw: Mapping[str, Any], path: str) -> list[Part]:
    for key in _REASONING_KEYS:
        value = _check.optional_key(raw, key, path)
        if value is not None:
            return [Thinking(text=value)] if value else []
    return []


def _content(content: Any, path: str) -> list[Part]:
    if content is None:
        return []
    if isinstance(content, str):
        return [Text(text=content)] if content else []
    if not isinstance(content, list):
        raise _check.fail(
            f"must be a string, null or a list of parts, got {type_name(content)}", path
        )
    return [_content_part(part, join(path, i)) for i, part in enumerate(content)]


def _content_part(part: Any, path: str) -> Part:
    part = _check.obj(part, path)
    kind = _check.key(part, "type", path)
    if kind == "text":
        return Text(text=_check.key(part, "text", path))
    if kind == "thinking":  # Mistral: {"type": "thinking", "thinking": [{"type": "text", ...}]}
        return Thinking(text=_thinking_text(part.get("thinking"), f"{path}.thinking"))
    return Other(type=kind, data=dict(part))


def _thinking_text(value: Any, path: str) -> str:
    if isinstance(value, str):
        return value
    if not isinstance(value, list):
        raise _check.fail(f"must be a string or a list of text parts, got {type_name(value)}", path)
    texts = []
    for i, inner in enumerate(value):
        texts.append(_check.key(_check.obj(inner, join(path, i)), "text", join(path, i)))
    return "".join(texts)


def _tool_result(raw: Mapping[str, Any], path: str) -> list[Part]:
    key = "tool_call_id" if raw.get("role") == "tool" else "name"
    call_id = _check.key(raw, key, path)
    content = _content(raw.get("content"), f"{path}.content")
    text = "".join(p.text for p in content if isinstance(p, Text))
    others = [p for p in content if not isinstance(p, Text)]
    return [ToolResult(tool_call_id=call_id, content=text), *others]


def _assistant_extras(raw: Mapping[str, Any], path: str) -> list[Part]:
    parts: list[Part] = []
    refusal = raw.get("refusal")
    if isinstance(refusal, str) and refusal:
        parts.append(Other(type="refusal", data={"refusal": refusal}))
    if raw.get("audio") is not None:
        parts.append(Other(type="audio", data={"audio": raw["audio"]}))
    where = f"{path}.tool_calls"
    calls = _check.items(raw.get("tool_calls"), where, required=False)
    parts.extend(_tool_call(c, join(where, i)) for i, c in enumerate(calls))
    legacy = raw.get("function_call")
    if legacy is not None:
        parts.append(_function_call(legacy, None, legacy, f"{path}.function_call"))
    return parts


def _tool_call(raw: Any, path: str) -> Part:
    raw = _check.obj(raw, path)
    kind = raw.get("type", "function")
    if kind != "function":
        return Other(type=f"{kind}_tool_call", data=dict(raw))
    call_id = _check.optional_key(raw, "id", path)
    return _function_call(raw.get("function"), call_id, raw, f"{path}.function")


def _function_call(function: Any, call_id: str | None, whole: Any, path: str) -> Part:
    function = _check.obj(function, path, what="an object with 'name' and 'arguments'")
    name = _check.name(function.get("name"), f"{path}.name")
    args = function.get("arguments", "")
    if isinstance(args, Mapping):
        return ToolCall(name=name, args=dict(args), id=call_id)
    if not isinstance(args, str):
        raise _check.fail(f"must be a JSON string, got {type_name(args)}", f"{path}.arguments")
    try:
        parsed = jsonparse.loads(args) if args.strip() else {}
    except ValueError:
        parsed = None
    if not isinstance(parsed, dict):
        # Models do emit invalid JSON arguments; agents echo them back. Keep the call raw.
        return Other(type="tool_call", data=dict(whole))
    return ToolCall(name=name, args=parsed, id=call_id)


def _tools(body: Mapping[str, Any]) -> list[Tool]:
    tools = _check.items(body.get("tools"), "tools", required=False)
    found = [_tool(t, join("tools", i)) for i, t in enumerate(tools)]
    functions = _check.items(body.get("functions"), "functions", required=False)  # legacy
    found.extend(_function_tool(f, join("functions", i)) for i, f in enumerate(functions))
    return found


def _tool(raw: Any, path: str) -> Tool:
    raw = _check.obj(raw, path)
    kind = _check.text(raw.get("type", "function"), f"{path}.type")
    spec = raw.get(kind)
    if kind == "function" or isinstance(spec, Mapping):
        return _function_tool(spec, f"{path}.{kind}")
    return Tool(name=kind)


def _function_tool(raw: Any, path: str) -> Tool:
    raw = _check.obj(raw, path)
    name = _check.name(raw.get("name"), f"{path}.name")
    description = _check.optional_key(raw, "description", path)
    parameters = raw.get("parameters")
    if parameters is not None:
        _check.obj(parameters, f"{path}.parameters", what="a JSON schema object")
    return Tool(name=name, description=description, parameters=dict(parameters or {}))

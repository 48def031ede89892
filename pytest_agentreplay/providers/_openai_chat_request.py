"""OpenAI Chat Completions request bodies → neutral :class:`~..neutral.Request`.

Split out of :mod:`.openai_chat` to keep each module small. The parser accepts
every shape the ``openai`` SDK (and OpenAI-compatible clients) send: ``content``
as a string, ``None`` or a list of parts; ``system`` / ``developer`` / ``user`` /
``assistant`` / ``tool`` roles plus the legacy ``function`` role and
``function_call``; tool-call arguments as JSON strings; reasoning that
OpenAI-compatible providers echo back (``reasoning_content``, ``reasoning``,
Mistral ``thinking`` parts). Parts it does not interpret (images, audio,
files, refusals, custom tool calls) are kept as :class:`Other` so nothing is
lost; a body of the wrong *shape* raises :class:`CodecError` naming the field
path (``messages[2].content[0].type``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from pytest_agentreplay.errors import CodecError
from pytest_agentreplay.neutral import (
    Message,
    Other,
    Request,
    Text,
    Thinking,
    Tool,
    ToolCall,
    ToolResult,
)
from pytest_agentreplay.neutral import MessagePart as Part

from .. import jsonparse

__all__ = ["parse_chat_request"]

_ROLES = {
    "system": "system",
    "developer": "developer",
    "user": "user",
    "assistant": "assistant",
    "tool": "tool",
    "function": "tool",
}
_REASONING_KEYS = ("reasoning_content", "reasoning")

ErrorFactory = Callable[[str, str], CodecError]
"""``error(message, field)`` → a :class:`CodecError` for this provider."""


def parse_chat_request(body: Mapping[str, Any], error: ErrorFactory) -> Request:
    """Parse a ``POST /chat/completions`` body; ``error`` builds the exceptions."""
    if not isinstance(body, Mapping):
        raise error(f"request body must be a JSON object, got {type(body).__name__}", "")
    model = body.get("model")
    if model is not None and not isinstance(model, str):
        raise error("must be a string", "model")
    stream = body.get("stream")
    if stream is not None and not isinstance(stream, bool):
        raise error("must be a boolean", "stream")
    raw_messages = body.get("messages")
    if not isinstance(raw_messages, list):
        raise error("must be a list of messages", "messages")
    messages = [_message(m, f"messages[{i}]", error) for i, m in enumerate(raw_messages)]
    return Request(
        provider="openai_chat",
        model=model,
        system=_system_text(messages),
        messages=messages,
        tools=_tools(body, error),
        stream=bool(stream),
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


def _message(raw: Any, path: str, error: ErrorFactory) -> Message:
    if not isinstance(raw, Mapping):
        raise error(f"must be an object, got {type(raw).__name__}", path)
    role = raw.get("role")
    if role not in _ROLES:
        raise error(f"unknown role {role!r}; expected one of {sorted(_ROLES)}", f"{path}.role")
    parts: list[Part] = []
    if role == "assistant":
        parts.extend(_reasoning(raw, path, error))
    if role in ("tool", "function"):
        parts.extend(_tool_result(raw, path, error))
    else:
        parts.extend(_content(raw.get("content"), f"{path}.content", error))
    if role == "assistant":
        parts.extend(_assistant_extras(raw, path, error))
    return Message(role=_ROLES[role], parts=parts)


def _reasoning(raw: Mapping[str, Any], path: str, error: ErrorFactory) -> list[Part]:
    for key in _REASONING_KEYS:
        value = raw.get(key)
        if value is None:
            continue
        if not isinstance(value, str):
            raise error("must be a string", f"{path}.{key}")
        return [Thinking(text=value)] if value else []
    return []


def _content(content: Any, path: str, error: ErrorFactory) -> list[Part]:
    if content is None:
        return []
    if isinstance(content, str):
        return [Text(text=content)] if content else []
    if not isinstance(content, list):
        raise error(
            f"must be a string, null or a list of parts, got {type(content).__name__}", path
        )
    return [_content_part(part, f"{path}[{i}]", error) for i, part in enumerate(content)]


def _content_part(part: Any, path: str, error: ErrorFactory) -> Part:
    if not isinstance(part, Mapping):
        raise error(f"must be an object, got {type(part).__name__}", path)
    kind = part.get("type")
    if not isinstance(kind, str):
        raise error("content part has no string 'type'", f"{path}.type")
    if kind == "text":
        return Text(text=_string(part, "text", path, error))
    if kind == "thinking":  # Mistral: {"type": "thinking", "thinking": [{"type": "text", ...}]}
        return Thinking(text=_thinking_text(part.get("thinking"), f"{path}.thinking", error))
    return Other(type=kind, data=dict(part))


def _thinking_text(value: Any, path: str, error: ErrorFactory) -> str:
    if isinstance(value, str):
        return value
    if not isinstance(value, list):
        raise error("must be a string or a list of text parts", path)
    texts = []
    for i, inner in enumerate(value):
        if not isinstance(inner, Mapping):
            raise error("must be an object", f"{path}[{i}]")
        texts.append(_string(inner, "text", f"{path}[{i}]", error))
    return "".join(texts)


def _string(obj: Mapping[str, Any], key: str, path: str, error: ErrorFactory) -> str:
    value = obj.get(key)
    if not isinstance(value, str):
        raise error(f"must be a string, got {type(value).__name__}", f"{path}.{key}")
    return value


def _tool_result(raw: Mapping[str, Any], path: str, error: ErrorFactory) -> list[Part]:
    key = "tool_call_id" if raw.get("role") == "tool" else "name"
    call_id = raw.get(key)
    if not isinstance(call_id, str):
        raise error("must be a string", f"{path}.{key}")
    content = _content(raw.get("content"), f"{path}.content", error)
    text = "".join(p.text for p in content if isinstance(p, Text))
    others = [p for p in content if not isinstance(p, Text)]
    return [ToolResult(tool_call_id=call_id, content=text), *others]


def _assistant_extras(raw: Mapping[str, Any], path: str, error: ErrorFactory) -> list[Part]:
    parts: list[Part] = []
    refusal = raw.get("refusal")
    if isinstance(refusal, str) and refusal:
        parts.append(Other(type="refusal", data={"refusal": refusal}))
    if raw.get("audio") is not None:
        parts.append(Other(type="audio", data={"audio": raw["audio"]}))
    calls = raw.get("tool_calls")
    if calls is not None:
        if not isinstance(calls, list):
            raise error("must be a list", f"{path}.tool_calls")
        parts.extend(_tool_call(c, f"{path}.tool_calls[{i}]", error) for i, c in enumerate(calls))
    legacy = raw.get("function_call")
    if legacy is not None:
        parts.append(_function_call(legacy, None, legacy, f"{path}.function_call", error))
    return parts


def _tool_call(raw: Any, path: str, error: ErrorFactory) -> Part:
    if not isinstance(raw, Mapping):
        raise error("must be an object", path)
    kind = raw.get("type", "function")
    if kind != "function":
        return Other(type=f"{kind}_tool_call", data=dict(raw))
    call_id = raw.get("id")
    if call_id is not None and not isinstance(call_id, str):
        raise error("must be a string", f"{path}.id")
    return _function_call(raw.get("function"), call_id, raw, f"{path}.function", error)


def _function_call(
    function: Any,
    call_id: str | None,
    whole: Any,
    path: str,
    error: ErrorFactory,
) -> Part:
    if not isinstance(function, Mapping):
        raise error("must be an object with 'name' and 'arguments'", path)
    name = function.get("name")
    if not isinstance(name, str) or not name:
        raise error("must be a non-empty string", f"{path}.name")
    args = function.get("arguments", "")
    if isinstance(args, Mapping):
        return ToolCall(name=name, args=dict(args), id=call_id)
    if not isinstance(args, str):
        raise error("must be a JSON string", f"{path}.arguments")
    try:
        parsed = jsonparse.loads(args) if args.strip() else {}
    except ValueError:
        parsed = None
    if not isinstance(parsed, dict):
        # Models do emit invalid JSON arguments; agents echo them back. Keep the call raw.
        return Other(type="tool_call", data=dict(whole))
    return ToolCall(name=name, args=parsed, id=call_id)


def _tools(body: Mapping[str, Any], error: ErrorFactory) -> list[Tool]:
    tools: list[Tool] = []
    raw_tools = body.get("tools")
    if raw_tools is not None:
        if not isinstance(raw_tools, list):
            raise error("must be a list", "tools")
        tools.extend(_tool(t, f"tools[{i}]", error) for i, t in enumerate(raw_tools))
    functions = body.get("functions")  # legacy function calling
    if functions is not None:
        if not isinstance(functions, list):
            raise error("must be a list", "functions")
        tools.extend(_function_tool(f, f"functions[{i}]", error) for i, f in enumerate(functions))
    return tools


def _tool(raw: Any, path: str, error: ErrorFactory) -> Tool:
    if not isinstance(raw, Mapping):
        raise error("must be an object", path)
    kind = raw.get("type", "function")
    if not isinstance(kind, str):
        raise error("must be a string", f"{path}.type")
    spec = raw.get(kind)
    if kind == "function" or isinstance(spec, Mapping):
        return _function_tool(spec, f"{path}.{kind}", error)
    return Tool(name=kind)


def _function_tool(raw: Any, path: str, error: ErrorFactory) -> Tool:
    if not isinstance(raw, Mapping):
        raise error("must be an object", path)
    name = raw.get("name")
    if not isinstance(name, str) or not name:
        raise error("must be a non-empty string", f"{path}.name")
    description = raw.get("description")
    if description is not None and not isinstance(description, str):
        raise error("must be a string", f"{path}.description")
    parameters = raw.get("parameters")
    if parameters is not None and not isinstance(parameters, Mapping):
        raise error("must be a JSON schema object", f"{path}.parameters")
    return Tool(name=name, description=description, parameters=dict(parameters or {}))

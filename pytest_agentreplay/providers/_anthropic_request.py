"""Parse an Anthropic Messages request body into the neutral :class:`Request`.

Accepts every shape the SDK sends: ``content`` as a string or a list of blocks
(``None`` is tolerated as "no content"), ``system`` as a string or a list of
text blocks, ``tool_result.content`` as a string or a list of blocks. Blocks the
neutral model does not interpret (images, documents, server-tool blocks,
redacted thinking, ...) are kept as :class:`Other` with their raw JSON. A body of
the wrong shape raises :class:`CodecError` naming the field path, e.g.
``messages[2].content[0].type``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pytest_agentreplay.errors import CodecError
from pytest_agentreplay.neutral import (
    Message,
    MessagePart,
    Other,
    Request,
    Text,
    Thinking,
    Tool,
    ToolCall,
    ToolResult,
)

__all__ = ["parse_request"]

_ROLES = ("user", "assistant")


def _err(message: str, field: str) -> CodecError:
    return CodecError(message, provider="anthropic", field=field or None)


def _type_name(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _str(block: Mapping[str, Any], key: str, path: str, *, optional: bool = False) -> Any:
    value = block.get(key)
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise _err(f"must be a string, got {_type_name(value)}", f"{path}.{key}" if path else key)
    return value


def _list(value: Any, path: str) -> list[Any]:
    if not isinstance(value, list):
        raise _err(f"must be a list, got {_type_name(value)}", path)
    return value


def _object(value: Any, path: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise _err(f"must be an object, got {_type_name(value)}", path)
    return value


def parse_request(body: Mapping[str, Any]) -> Request:
    """``body`` (a ``POST /v1/messages`` JSON object) in neutral form."""
    body = _object(body, "")
    model = _str(body, "model", "", optional=True)
    messages = body.get("messages")
    stream = body.get("stream")
    if stream is not None and not isinstance(stream, bool):
        raise _err(f"must be a boolean, got {_type_name(stream)}", "stream")
    return Request(
        provider="anthropic",
        model=model,
        system=_system(body.get("system")),
        messages=[
            _message(m, f"messages[{i}]")
            for i, m in enumerate(_list([] if messages is None else messages, "messages"))
        ],
        tools=[
            _tool(t, f"tools[{i}]") for i, t in enumerate(_list(body.get("tools") or [], "tools"))
        ],
        stream=bool(stream),
        raw=dict(body),
    )


def _system(system: Any) -> str | None:
    """``system`` as one string; a list of text blocks is joined with newlines."""
    if system is None or isinstance(system, str):
        return system
    texts = []
    for i, item in enumerate(_list(system, "system")):
        path = f"system[{i}]"
        block = _object(item, path)
        kind = _str(block, "type", path)
        if kind != "text":
            raise _err(f"system blocks must be text, got {kind!r}", f"{path}.type")
        texts.append(_str(block, "text", path))
    return "\n".join(texts)


def _message(message: Any, path: str) -> Message:
    message = _object(message, path)
    role = message.get("role")
    if role not in _ROLES:
        raise _err(f"must be 'user' or 'assistant', got {role!r}", f"{path}.role")
    content = message.get("content")
    if content is None:
        parts: list[MessagePart] = []
    elif isinstance(content, str):
        parts = [Text(text=content)]
    else:
        parts = [
            _part(b, f"{path}.content[{j}]")
            for j, b in enumerate(_list(content, f"{path}.content"))
        ]
    return Message(role=role, parts=parts)


def _part(block: Any, path: str) -> MessagePart:
    block = _object(block, path)
    kind = _str(block, "type", path)
    if kind == "text":
        return Text(text=_str(block, "text", path))
    if kind == "tool_use":
        name = _str(block, "name", path)
        if not name:
            raise _err("must not be empty", f"{path}.name")
        args = block.get("input", {})
        if not isinstance(args, Mapping):
            raise _err(f"must be an object, got {_type_name(args)}", f"{path}.input")
        return ToolCall(name=name, args=dict(args), id=_str(block, "id", path, optional=True))
    if kind == "tool_result":
        return ToolResult(
            tool_call_id=_str(block, "tool_use_id", path),
            content=_tool_result_text(block.get("content"), f"{path}.content"),
            is_error=bool(block.get("is_error") or False),
        )
    if kind == "thinking":
        return Thinking(
            text=_str(block, "thinking", path),
            signature=_str(block, "signature", path, optional=True),
        )
    return Other(type=kind, data=dict(block))


def _tool_result_text(content: Any, path: str) -> str:
    """A tool result's text: the string, or its text blocks joined (images etc. skipped)."""
    if content is None or isinstance(content, str):
        return content or ""
    texts = []
    for i, item in enumerate(_list(content, path)):
        block = _object(item, f"{path}[{i}]")
        if _str(block, "type", f"{path}[{i}]") == "text":
            texts.append(_str(block, "text", f"{path}[{i}]"))
    return "".join(texts)


def _tool(tool: Any, path: str) -> Tool:
    """A client tool (``input_schema``) or a server tool (``type`` + ``name``)."""
    tool = _object(tool, path)
    schema = tool.get("input_schema")
    if schema is not None and not isinstance(schema, Mapping):
        raise _err(f"must be an object, got {_type_name(schema)}", f"{path}.input_schema")
    return Tool(
        name=_str(tool, "name", path),
        description=_str(tool, "description", path, optional=True),
        parameters=dict(schema or {}),
    )

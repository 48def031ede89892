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
from typing import Any, Literal, cast, overload

from ...neutral import (
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
from ..base import CheckedRequest, Codec
from ..validation import Fields, join

__all__ = ["check_only", "parse"]

_ROLES = ("user", "assistant")
_check = Fields("anthropic")


def parse(codec: Codec, target: str, body: Mapping[str, Any]) -> Request:
    """``body`` (a ``POST /v1/messages`` JSON object) in neutral form; everything is in
    the body, so ``target`` is not read."""
    return _walk(body, build=True)


def check_only(codec: Codec, target: str, body: Mapping[str, Any]) -> CheckedRequest:
    """``body`` checked as :func:`parse` checks it (the same error for the same body),
    the neutral models not built: what a fake answers a call from (see
    :meth:`~..base.Codec.check_call`)."""
    return _walk(body, build=False)


@overload
def _walk(body: Mapping[str, Any], *, build: Literal[True]) -> Request: ...


@overload
def _walk(body: Mapping[str, Any], *, build: Literal[False]) -> CheckedRequest: ...


def _walk(body: Mapping[str, Any], *, build: bool) -> Request | CheckedRequest:
    """:func:`parse` (``build``) or :func:`check_only`: one walk, so that both check the
    same fields in the same order.

    A field of the type a client sends (a parsed body's dicts, lists, strings) is taken
    as it is, here; anything else goes to the :class:`~..validation.Fields` check, which
    accepts it or names what is wrong. A message of a role and a string (or no) content is
    checked here too when only checking (there is nothing more to it). A fake checks
    every call: each check a call of its own was most of the walk (bench/ W5)."""
    if type(body) is not dict:
        body = _check.obj(body, "")
    messages = body.get("messages")
    if type(messages) is not list:
        messages = _check.items(messages, "messages", required=False)
    model = body.get("model")
    if model is not None and type(model) is not str:
        model = _check.optional_key(body, "model", "")
    system = body.get("system")
    if system is not None and type(system) is not str:
        system = _system(system)
    if build:
        read = [_message(m, i, build) for i, m in enumerate(messages)]
    else:
        read = []
        for i, m in enumerate(messages):
            if type(m) is not dict or m.get("role") not in _ROLES:
                _message(m, i, build)
                continue
            content = m.get("content")
            if content is not None and type(content) is not str:
                _message(m, i, build)
    listed = body.get("tools") or []
    if type(listed) is not list:
        listed = _check.items(listed, "tools")
    tools = [_tool(t, join("tools", i), build) for i, t in enumerate(listed)] if listed else []
    stream = body.get("stream")
    if stream is None:
        stream = False
    elif type(stream) is not bool:
        stream = _check.flag(stream, "stream")
    if not build:
        return CheckedRequest("anthropic", model, stream, body)
    return Request(
        provider="anthropic",
        model=model,
        system=system,
        messages=cast("list[Message]", read),
        tools=cast("list[Tool]", tools),
        stream=stream,
        raw=dict(body),
    )


def _system(system: Any) -> str | None:
    """``system`` as one string; a list of text blocks is joined with newlines."""
    if system is None or isinstance(system, str):
        return system
    texts = []
    for i, item in enumerate(_check.items(system, "system")):
        path = join("system", i)
        block = _check.obj(item, path)
        kind = _check.key(block, "type", path)
        if kind != "text":
            raise _check.fail(f"system blocks must be text, got {kind!r}", f"{path}.type")
        texts.append(_check.key(block, "text", path))
    return "\n".join(texts)


def _message(message: Any, index: int, build: bool) -> Message | None:
    """Message ``index`` (its path, ``messages[i]``, spelled out only where it is needed:
    a fake checks every call's messages)."""
    if type(message) is not dict:
        message = _check.obj(message, join("messages", index))
    role = message.get("role")
    if role not in _ROLES:
        path = join("messages", index)
        raise _check.fail(f"must be 'user' or 'assistant', got {role!r}", f"{path}.role")
    content = message.get("content")
    if content is None:
        parts: list[MessagePart | None] = []
    elif isinstance(content, str):
        parts = [Text(text=content) if build else None]
    else:
        where = f"{join('messages', index)}.content"
        items = _check.items(content, where)
        parts = [_part(b, join(where, j), build) for j, b in enumerate(items)]
    return Message(role=role, parts=cast("list[MessagePart]", parts)) if build else None


def _part(block: Any, path: str, build: bool) -> MessagePart | None:
    """One content block: built (``build``), or only checked."""
    block = _check.obj(block, path)
    kind = _check.key(block, "type", path)
    if kind == "text":
        text = _check.key(block, "text", path)
        return Text(text=text) if build else None
    if kind == "tool_use":
        name = _check.name(block.get("name"), f"{path}.name")
        args = _check.obj(block.get("input", {}), f"{path}.input")
        call_id = _check.optional_key(block, "id", path)
        return ToolCall(name=name, args=dict(args), id=call_id) if build else None
    if kind == "tool_result":
        call_id = _check.key(block, "tool_use_id", path)
        content = _tool_result_text(block.get("content"), f"{path}.content")
        is_error = bool(block.get("is_error") or False)
        return (
            ToolResult(tool_call_id=call_id, content=content, is_error=is_error) if build else None
        )
    if kind == "thinking":
        text = _check.key(block, "thinking", path)
        signature = _check.optional_key(block, "signature", path)
        return Thinking(text=text, signature=signature) if build else None
    return Other(type=kind, data=dict(block)) if build else None


def _tool_result_text(content: Any, path: str) -> str:
    """A tool result's text: the string, or its text blocks joined (images etc. skipped)."""
    if content is None or isinstance(content, str):
        return content or ""
    texts = []
    for i, item in enumerate(_check.items(content, path)):
        block = _check.obj(item, join(path, i))
        if _check.key(block, "type", join(path, i)) == "text":
            texts.append(_check.key(block, "text", join(path, i)))
    return "".join(texts)


def _tool(tool: Any, path: str, build: bool) -> Tool | None:
    """A client tool (``input_schema``) or a server tool (``type`` + ``name``)."""
    tool = _check.obj(tool, path)
    schema = tool.get("input_schema")
    if schema is not None:
        _check.obj(schema, f"{path}.input_schema")
    name = _check.key(tool, "name", path)
    description = _check.optional_key(tool, "description", path)
    return (
        Tool(name=name, description=description, parameters=dict(schema or {})) if build else None
    )

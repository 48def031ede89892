"""Parsing an OpenAI Responses request body (``responses.create``) into a neutral
:class:`~....neutral.Request`.

``input`` is either a string (one user message) or a list of items:

* messages ``{"role", "content"}`` (``type: "message"`` optional), content a string
  or a list of parts (``input_text``, ``output_text``, ``refusal``, ``input_image``,
  ``input_file``, ...);
* items the model produced earlier and the client sends back: ``reasoning``,
  ``function_call``, ``custom_tool_call``, server-tool calls (``web_search_call``,
  ``tool_search_call``, ...), ``item_reference``;
* the client's answers: ``function_call_output``, ``custom_tool_call_output``,
  ``tool_search_output``, ...

One model turn is several items in a row (reasoning, message, function calls), so
consecutive model-side items are merged into one ``assistant`` message, and
consecutive tool answers into one ``tool`` message. Parts with no neutral form
are kept as :class:`~....neutral.Other` with their raw JSON.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

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
from ...base import Codec
from ...validation import Fields, join, type_name

__all__ = ["arguments", "parse"]

Role = Literal["system", "developer", "user", "assistant", "tool"]
_MESSAGE_ROLES = frozenset({"user", "assistant", "system", "developer"})
_TEXT_PARTS = {
    "input_text": "text",
    "output_text": "text",
    "text": "text",
    "refusal": "refusal",
    "summary_text": "text",
    "reasoning_text": "text",
}
_MergedPart = Text | ToolCall | Thinking | ToolResult | Other
_Turn = tuple[Role, list[_MergedPart], bool]
_check = Fields("openai_responses")


def parse(codec: Codec, target: str, body: Mapping[str, Any]) -> Request:
    """The neutral form of a Responses request (``target`` is not read);
    :class:`CodecError` names the offending field (``input[2].content[0].type``) on a
    body of the wrong shape."""
    body = _check.obj(body, "", what="a JSON object (the request body)")
    return Request(
        provider="openai_responses",
        model=_check.optional_key(body, "model", ""),
        system=_check.optional_key(body, "instructions", ""),
        messages=_messages(body.get("input")),
        tools=_tools(body.get("tools")),
        stream=_check.flag(body.get("stream"), "stream"),
        raw=dict(body),
    )


def arguments(value: Any) -> dict[str, Any]:
    """Tool arguments as sent back by the client (or by the API): whatever the model
    produced. The API passes the model's string through unchecked, so one that is not
    a JSON object becomes ``{}`` (the string itself stays in the raw body)."""
    if not isinstance(value, str):
        return {}
    try:
        parsed = jsonparse.loads(value) if value.strip() else {}
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


# -- input ---------------------------------------------------------------------------


def _messages(value: Any) -> list[Message]:
    if value is None:
        return []
    if isinstance(value, str):
        return [Message(role="user", parts=[Text(text=value)])]
    items = _check.items(value, "input", what="a string or a list of items")
    merged: list[_Turn] = []
    for i, item in enumerate(items):
        role, parts, mergeable = _item(item, join("input", i))
        if mergeable and merged and merged[-1][0] == role and merged[-1][2]:
            merged[-1][1].extend(parts)
        else:
            merged.append((role, list(parts), mergeable))
    return [Message(role=role, parts=parts) for role, parts, _ in merged]


def _item(item: Any, where: str) -> _Turn:
    """One input item as (role, parts, merges-with-neighbours)."""
    item = _check.obj(item, where)
    kind = item.get("type")
    if kind is None and "role" in item:
        kind = "message"
    if not isinstance(kind, str):
        raise _check.fail(
            f"an input item needs a string 'type' (or a 'role'), got {type_name(kind)}",
            f"{where}.type",
        )
    if kind == "message":
        return _message(item, where)
    if kind in ("function_call", "custom_tool_call"):
        return "assistant", [_tool_call(item, kind, where)], True
    if kind in ("function_call_output", "custom_tool_call_output"):
        call_id = _check.key(item, "call_id", where)
        content = _output_text(item.get("output"), f"{where}.output")
        return "tool", [ToolResult(tool_call_id=call_id, content=content)], True
    if kind == "reasoning":
        return "assistant", [_reasoning(item, where)], True
    role: Role = "tool" if kind.endswith("_output") else "assistant"
    return role, [Other(type=kind, data=dict(item))], True


def _message(item: Mapping[str, Any], where: str) -> _Turn:
    role = item.get("role")
    if role not in _MESSAGE_ROLES:
        raise _check.fail(
            f"message role must be one of {sorted(_MESSAGE_ROLES)}, got {role!r}",
            f"{where}.role",
        )
    content = item.get("content")
    parts: list[_MergedPart]
    if content is None:
        parts = []
    elif isinstance(content, str):
        parts = [Text(text=content)]
    else:
        at = f"{where}.content"
        items = _check.items(content, at, what="a string, a list of parts or null")
        parts = [_content_part(part, join(at, j)) for j, part in enumerate(items)]
    # Only the model's own turns merge: two user messages stay two messages.
    return role, parts, role == "assistant"


def _content_part(part: Any, where: str) -> Text | Other:
    part = _check.obj(part, where)
    kind = _check.key(part, "type", where)
    key = _TEXT_PARTS.get(kind)
    if key is None:
        return Other(type=kind, data=dict(part))  # images, files, audio, ...
    return Text(text=_check.key(part, key, where))


def _tool_call(item: Mapping[str, Any], kind: str, where: str) -> ToolCall:
    name = _check.key(item, "name", where)
    call_id = _check.key(item, "call_id", where)
    if not name:
        raise _check.fail("a tool call needs a non-empty 'name'", f"{where}.name")
    if kind == "custom_tool_call":
        return ToolCall(name=name, args={"input": item.get("input", "")}, id=call_id)
    text = _check.key(item, "arguments", where)
    return ToolCall(name=name, args=arguments(text), id=call_id)


def _reasoning(item: Mapping[str, Any], where: str) -> Thinking:
    texts: list[str] = []
    for key in ("summary", "content"):
        at = f"{where}.{key}"
        parts = _check.items(item.get(key) or [], at)
        found = [_content_part(p, join(at, j)) for j, p in enumerate(parts)]
        texts = texts or [p.text for p in found if isinstance(p, Text)]
    signature = _check.optional_key(item, "encrypted_content", where)
    return Thinking(text="\n\n".join(texts), signature=signature)


def _output_text(output: Any, where: str) -> str:
    """A tool answer's text: the string, or its text parts joined."""
    if output is None or isinstance(output, str):
        return output or ""
    items = _check.items(output, where, what="a string or a list of parts")
    parts = [_content_part(p, join(where, j)) for j, p in enumerate(items)]
    return "".join(p.text for p in parts if isinstance(p, Text))


# -- tools ---------------------------------------------------------------------------


def _tools(value: Any, where: str = "tools") -> list[Tool]:
    """Function and custom tools (also inside ``namespace`` tools); built-in
    tools (``web_search``, ``file_search``, ...) stay in ``raw`` only."""
    found: list[Tool] = []
    for i, tool in enumerate(_check.items(value, where, required=False)):
        at = join(where, i)
        if not isinstance(tool, Mapping) or not isinstance(tool.get("type"), str):
            raise _check.fail("each tool needs a string 'type'", f"{at}.type")
        kind = tool["type"]
        if kind == "namespace":
            found.extend(_tools(tool.get("tools"), f"{at}.tools"))
        elif kind in ("function", "custom"):
            found.append(_tool(tool, at))
    return found


def _tool(tool: Mapping[str, Any], where: str) -> Tool:
    parameters = tool.get("parameters")
    if parameters is not None:
        _check.obj(parameters, f"{where}.parameters", what="a JSON schema object")
    return Tool(
        name=_check.key(tool, "name", where),
        description=_check.optional_key(tool, "description", where),
        parameters=dict(parameters or {}),
    )

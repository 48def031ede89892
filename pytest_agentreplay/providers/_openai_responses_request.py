"""Parsing an OpenAI Responses request body (``responses.create``) into a neutral
:class:`~..neutral.Request`.

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
are kept as :class:`~..neutral.Other` with their raw JSON.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

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

from .. import jsonparse
from .base import Codec

__all__ = ["parse_responses_request"]

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


def parse_responses_request(codec: Codec, body: Mapping[str, Any]) -> Request:
    """The neutral form of a Responses request; :class:`CodecError` names the
    offending field (``input[2].content[0].type``) on a body of the wrong shape."""
    if not isinstance(body, Mapping):
        raise codec.error("a request body must be a JSON object", field="body")
    parser = _Parser(codec)
    return Request(
        provider="openai_responses",
        model=parser.optional_str(body, "model"),
        system=parser.optional_str(body, "instructions"),
        messages=parser.messages(body.get("input")),
        tools=parser.tools(body.get("tools")),
        stream=parser.stream_flag(body.get("stream")),
        raw=dict(body),
    )


class _Parser:
    """Field-path-aware helpers; every error names where it was found."""

    def __init__(self, codec: Codec) -> None:
        self.codec = codec

    def fail(self, message: str, field: str) -> Exception:
        return self.codec.error(message, field=field)

    def optional_str(self, body: Mapping[str, Any], key: str, where: str = "") -> str | None:
        value = body.get(key)
        if value is not None and not isinstance(value, str):
            raise self.fail(f"{key!r} must be a string, got {type(value).__name__}", where + key)
        return value

    def required_str(self, body: Mapping[str, Any], key: str, where: str) -> str:
        value = body.get(key)
        if not isinstance(value, str):
            raise self.fail(
                f"{key!r} must be a string, got {type(value).__name__}", f"{where}.{key}"
            )
        return value

    def stream_flag(self, value: Any) -> bool:
        if value is None:
            return False
        if not isinstance(value, bool):
            raise self.fail(f"'stream' must be a boolean, got {value!r}", "stream")
        return value

    # -- input -----------------------------------------------------------------------

    def messages(self, value: Any) -> list[Message]:
        if value is None:
            return []
        if isinstance(value, str):
            return [Message(role="user", parts=[Text(text=value)])]
        if not isinstance(value, list):
            raise self.fail("'input' must be a string or a list of items", "input")
        merged: list[tuple[Role, list[_MergedPart], bool]] = []
        for i, item in enumerate(value):
            role, parts, mergeable = self.item(item, f"input[{i}]")
            if mergeable and merged and merged[-1][0] == role and merged[-1][2]:
                merged[-1][1].extend(parts)
            else:
                merged.append((role, list(parts), mergeable))
        return [Message(role=role, parts=parts) for role, parts, _ in merged]

    def item(self, item: Any, where: str) -> tuple[Role, list[_MergedPart], bool]:
        """One input item as (role, parts, merges-with-neighbours)."""
        if not isinstance(item, Mapping):
            raise self.fail("each input item must be a JSON object", where)
        kind = item.get("type")
        if kind is None and "role" in item:
            kind = "message"
        if not isinstance(kind, str):
            raise self.fail("an input item needs a string 'type' (or a 'role')", f"{where}.type")
        if kind == "message":
            return self.message(item, where)
        if kind in ("function_call", "custom_tool_call"):
            return "assistant", [self.tool_call(item, kind, where)], True
        if kind in ("function_call_output", "custom_tool_call_output"):
            call_id = self.required_str(item, "call_id", where)
            content = self.output_text(item.get("output"), f"{where}.output")
            return "tool", [ToolResult(tool_call_id=call_id, content=content)], True
        if kind == "reasoning":
            return "assistant", [self.reasoning(item, where)], True
        role: Role = "tool" if kind.endswith("_output") else "assistant"
        return role, [Other(type=kind, data=dict(item))], True

    def message(self, item: Mapping[str, Any], where: str) -> tuple[Role, list[_MergedPart], bool]:
        role = item.get("role")
        if role not in _MESSAGE_ROLES:
            raise self.fail(
                f"message role must be one of {sorted(_MESSAGE_ROLES)}, got {role!r}",
                f"{where}.role",
            )
        content = item.get("content")
        parts: list[_MergedPart]
        if content is None:
            parts = []
        elif isinstance(content, str):
            parts = [Text(text=content)]
        elif isinstance(content, list):
            parts = [
                self.content_part(part, f"{where}.content[{j}]") for j, part in enumerate(content)
            ]
        else:
            raise self.fail(
                "message content must be a string, a list of parts or null", f"{where}.content"
            )
        # Only the model's own turns merge: two user messages stay two messages.
        return role, parts, role == "assistant"

    def content_part(self, part: Any, where: str) -> Text | Other:
        if not isinstance(part, Mapping):
            raise self.fail("each content part must be a JSON object", where)
        kind = part.get("type")
        if not isinstance(kind, str):
            raise self.fail("a content part needs a string 'type'", f"{where}.type")
        key = _TEXT_PARTS.get(kind)
        if key is None:
            return Other(type=kind, data=dict(part))  # images, files, audio, ...
        return Text(text=self.required_str(part, key, where))

    def tool_call(self, item: Mapping[str, Any], kind: str, where: str) -> ToolCall:
        name = self.required_str(item, "name", where)
        call_id = self.required_str(item, "call_id", where)
        if not name:
            raise self.fail("a tool call needs a non-empty 'name'", f"{where}.name")
        if kind == "custom_tool_call":
            return ToolCall(name=name, args={"input": item.get("input", "")}, id=call_id)
        arguments = self.required_str(item, "arguments", where)
        return ToolCall(name=name, args=_json_object(arguments), id=call_id)

    def reasoning(self, item: Mapping[str, Any], where: str) -> Thinking:
        texts: list[str] = []
        for key in ("summary", "content"):
            parts = item.get(key) or []
            if not isinstance(parts, list):
                raise self.fail(f"reasoning {key!r} must be a list", f"{where}.{key}")
            found = [self.content_part(p, f"{where}.{key}[{j}]") for j, p in enumerate(parts)]
            texts = texts or [p.text for p in found if isinstance(p, Text)]
        signature = self.optional_str(item, "encrypted_content", f"{where}.")
        return Thinking(text="\n\n".join(texts), signature=signature)

    def output_text(self, output: Any, where: str) -> str:
        """A tool answer's text: the string, or its text parts joined."""
        if output is None or isinstance(output, str):
            return output or ""
        if not isinstance(output, list):
            raise self.fail("a tool output must be a string or a list of parts", where)
        parts = [self.content_part(p, f"{where}[{j}]") for j, p in enumerate(output)]
        return "".join(p.text for p in parts if isinstance(p, Text))

    # -- tools -----------------------------------------------------------------------

    def tools(self, value: Any, where: str = "tools") -> list[Tool]:
        """Function and custom tools (also inside ``namespace`` tools); built-in
        tools (``web_search``, ``file_search``, ...) stay in ``raw`` only."""
        if value is None:
            return []
        if not isinstance(value, list):
            raise self.fail("'tools' must be a list", where)
        found: list[Tool] = []
        for i, tool in enumerate(value):
            at = f"{where}[{i}]"
            if not isinstance(tool, Mapping) or not isinstance(tool.get("type"), str):
                raise self.fail("each tool needs a string 'type'", f"{at}.type")
            if tool["type"] == "namespace":
                found.extend(self.tools(tool.get("tools"), f"{at}.tools"))
            elif tool["type"] in ("function", "custom"):
                found.append(self.tool(tool, at))
        return found

    def tool(self, tool: Mapping[str, Any], where: str) -> Tool:
        parameters = tool.get("parameters")
        if parameters is not None and not isinstance(parameters, Mapping):
            raise self.fail("tool 'parameters' must be a JSON schema object", f"{where}.parameters")
        return Tool(
            name=self.required_str(tool, "name", where),
            description=self.optional_str(tool, "description", f"{where}."),
            parameters=dict(parameters or {}),
        )


def _json_object(arguments: str) -> dict[str, Any]:
    """Arguments as sent back by the client: whatever the model produced earlier.
    The API does not check them, so text that is not a JSON object becomes ``{}``
    (the string itself stays in ``Request.raw``)."""
    try:
        parsed = jsonparse.loads(arguments) if arguments.strip() else {}
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}

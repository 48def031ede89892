"""Parse a Gemini ``generateContent`` request into the neutral :class:`Request`.

The model and whether to stream are in the path
(``.../models/{model}:streamGenerateContent?alt=sse``), the conversation in the body:
``contents`` (``user`` / ``model`` turns of parts), ``systemInstruction``,
``tools[].functionDeclarations``. Google's JSON accepts each field in camelCase or
snake_case (pydantic-ai sends ``parameters_json_schema`` inside camelCase objects),
so both are read. Parts become :class:`Text`, :class:`Thinking` (``thought: true``),
:class:`ToolCall` (``functionCall``), :class:`ToolResult` (``functionResponse``) or
:class:`Other` (images, files, code execution...), and a ``thoughtSignature`` on a
part that is not a thought becomes the :class:`Thinking` it stands for (see
:func:`.parts.neutral_parts`). A body of the wrong shape raises :class:`CodecError` naming
the field path, e.g. ``contents[2].parts[0].functionCall.name``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qs, urlsplit

from ...neutral import Message, MessagePart, Other, Request, Thinking, Tool, ToolResult
from ..base import Codec, json_data
from ..catalog import gemini_method
from ..validation import join
from .parts import check, neutral_parts, pick, text_or_call

__all__ = ["parse"]

_ROLES = {"user": "user", "model": "assistant", "function": "tool", "tool": "tool"}
# What tool-calling frameworks wrap a function's result in: google-genai's automatic
# function calling (`result`), pydantic-ai (`return_value`), LangChain (`output`, `content`).
_RESULT_KEYS = ("result", "return_value", "output", "content")


def parse(codec: Codec, target: str, body: Mapping[str, Any]) -> Request:
    """The request sent to ``target`` (path and query) with ``body``, in neutral form:
    the model and whether to stream are read from ``target``."""
    parts = urlsplit(target)
    found = gemini_method(parts.path)
    model, method = found if found is not None else (None, "generateContent")
    stream = method == "streamGenerateContent"
    if stream and parse_qs(parts.query).get("alt", [""])[-1] != "sse":
        raise check.fail(
            "streamGenerateContent without `?alt=sse` asks for a JSON-array stream, which "
            "pytest-agentreplay does not render; ask for server-sent events (alt=sse), "
            "as google-genai does",
            "alt",
        )
    body = check.obj(body, "")
    contents = check.items(pick(body, "contents"), "contents", required=False)
    return Request(
        provider="gemini",
        model=model,
        system=_system(pick(body, "systemInstruction")),
        messages=[_message(c, join("contents", i)) for i, c in enumerate(contents)],
        tools=_tools(pick(body, "tools")),
        stream=stream,
        raw=dict(body),
    )


def _system(system: Any) -> str | None:
    """``systemInstruction`` as one string (its text parts joined with newlines)."""
    if system is None or isinstance(system, str):
        return system
    content = check.obj(system, "systemInstruction")
    parts = check.items(pick(content, "parts"), "systemInstruction.parts", required=False)
    texts = [
        check.text(p["text"], f"systemInstruction.parts[{i}].text")
        for i, p in enumerate(parts)
        if isinstance(p, Mapping) and "text" in p
    ]
    return "\n".join(texts)


def _message(content: Any, path: str) -> Message:
    content = check.obj(content, path)
    role = content.get("role") or "user"
    if role not in _ROLES:
        raise check.fail(f"must be 'user' or 'model', got {role!r}", f"{path}.role")
    parts = check.items(pick(content, "parts"), f"{path}.parts", required=False)
    return Message(
        role=_ROLES[role],
        parts=neutral_parts(parts, f"{path}.parts", _request_part, Thinking),
    )


def _request_part(part: Mapping[str, Any], path: str) -> MessagePart | None:
    """One part of a request turn; kinds the neutral model does not read stay raw."""
    text = check.text(part["text"], f"{path}.text") if "text" in part else None
    shared = text_or_call(part, text, path)
    if shared is not None:
        return shared
    response = pick(part, "functionResponse")
    if response is not None:
        return _tool_result(response, f"{path}.functionResponse")
    kind = next((k for k in part if k not in ("thoughtSignature", "thought_signature")), "part")
    return Other(type=kind, data=dict(part))


def _tool_result(response: Any, path: str) -> ToolResult:
    """A ``functionResponse``: answers the call with its ``id``, or (Gemini API calls
    have none) its ``name``."""
    response = check.obj(response, path)
    name = check.text(response.get("name"), f"{path}.name")
    result = response.get("response")
    result = {} if result is None else check.obj(result, f"{path}.response")
    ident = check.optional_key(response, "id", path)
    return ToolResult(
        tool_call_id=name if ident is None else ident,
        content=_result_text(result),
        is_error=set(result) == {"error"},
    )


def _result_text(result: Mapping[str, Any]) -> str:
    """The text of a function's result: the string a framework wrapped, else its JSON."""
    if len(result) == 1:
        key, value = next(iter(result.items()))
        if key in (*_RESULT_KEYS, "error") and isinstance(value, str):
            return value
    return json_data(dict(result))


def _tools(tools: Any) -> list[Tool]:
    """Every function declaration of every tool (``googleSearch`` and the other
    built-in tools have no neutral form)."""
    out: list[Tool] = []
    for i, raw in enumerate(check.items(tools, "tools", required=False)):
        path = f"tools[{i}].functionDeclarations"
        tool = check.obj(raw, join("tools", i))
        declarations = check.items(pick(tool, "functionDeclarations"), path, required=False)
        out.extend(_declaration(d, join(path, j)) for j, d in enumerate(declarations))
    return out


def _declaration(declaration: Any, path: str) -> Tool:
    declaration = check.obj(declaration, path)
    schema = pick(declaration, "parametersJsonSchema")
    if schema is None:
        schema = declaration.get("parameters")
    return Tool(
        name=check.text(declaration.get("name"), f"{path}.name"),
        description=check.optional_key(declaration, "description", path),
        parameters=dict(check.obj(schema, f"{path}.parameters")) if schema is not None else {},
    )

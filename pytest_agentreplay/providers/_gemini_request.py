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
:func:`neutral_parts`). A body of the wrong shape raises :class:`CodecError` naming
the field path, e.g. ``contents[2].parts[0].functionCall.name``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar
from urllib.parse import parse_qs, urlsplit

from ..errors import CodecError
from ..neutral import (
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
from .base import json_data
from .routes import gemini_method

__all__ = ["neutral_parts", "parse_call", "pick", "signature_of", "tool_call"]

P = TypeVar("P")

_ROLES = {"user": "user", "model": "assistant", "function": "tool", "tool": "tool"}
# What tool-calling frameworks wrap a function's result in: google-genai's automatic
# function calling (`result`), pydantic-ai (`return_value`), LangChain (`output`, `content`).
_RESULT_KEYS = ("result", "return_value", "output", "content")


def _err(message: str, path: str) -> CodecError:
    return CodecError(message, provider="gemini", field=path or None)


def _type_name(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def pick(obj: Mapping[str, Any], camel: str) -> Any:
    """``obj[camel]``, or its snake_case spelling (``functionCall`` / ``function_call``)."""
    if camel in obj:
        return obj[camel]
    return obj.get("".join(f"_{c.lower()}" if c.isupper() else c for c in camel))


def _object(value: Any, path: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise _err(f"must be an object, got {_type_name(value)}", path)
    return value


def _list(value: Any, path: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise _err(f"must be a list, got {_type_name(value)}", path)
    return value


def _str(value: Any, path: str) -> str:
    if not isinstance(value, str):
        raise _err(f"must be a string, got {_type_name(value)}", path)
    return value


def parse_call(target: str, body: Mapping[str, Any]) -> Request:
    """The request sent to ``target`` (path and query) with ``body``, in neutral form."""
    parts = urlsplit(target)
    found = gemini_method(parts.path)
    model, method = found if found is not None else (None, "generateContent")
    stream = method == "streamGenerateContent"
    if stream and parse_qs(parts.query).get("alt", [""])[-1] != "sse":
        raise _err(
            "streamGenerateContent without `?alt=sse` asks for a JSON-array stream, which "
            "pytest-agentreplay does not render; ask for server-sent events (alt=sse), "
            "as google-genai does",
            "alt",
        )
    body = _object(body, "")
    return Request(
        provider="gemini",
        model=model,
        system=_system(pick(body, "systemInstruction")),
        messages=[
            _message(c, f"contents[{i}]")
            for i, c in enumerate(_list(pick(body, "contents"), "contents"))
        ],
        tools=_tools(pick(body, "tools")),
        stream=stream,
        raw=dict(body),
    )


def _system(system: Any) -> str | None:
    """``systemInstruction`` as one string (its text parts joined with newlines)."""
    if system is None or isinstance(system, str):
        return system
    content = _object(system, "systemInstruction")
    texts = [
        _str(p["text"], f"systemInstruction.parts[{i}].text")
        for i, p in enumerate(_list(pick(content, "parts"), "systemInstruction.parts"))
        if isinstance(p, Mapping) and "text" in p
    ]
    return "\n".join(texts)


def _message(content: Any, path: str) -> Message:
    content = _object(content, path)
    role = content.get("role") or "user"
    if role not in _ROLES:
        raise _err(f"must be 'user' or 'model', got {role!r}", f"{path}.role")
    parts = _list(pick(content, "parts"), f"{path}.parts")
    return Message(
        role=_ROLES[role],
        parts=neutral_parts(parts, f"{path}.parts", _request_part, Thinking),
    )


def signature_of(part: Mapping[str, Any], path: str) -> str | None:
    """A part's ``thoughtSignature``, in standard base64: Google reads base64url and
    base64 alike, and google-genai sends back in base64url what it got in base64."""
    value = pick(part, "thoughtSignature")
    if value is None:
        return None
    return _str(value, f"{path}.thoughtSignature").replace("-", "+").replace("_", "/")


def neutral_parts(
    parts: list[Any],
    path: str,
    convert: Callable[[Mapping[str, Any], str], P | None],
    thinking: Callable[..., P],
) -> list[P]:
    """``parts`` in neutral form, each through ``convert`` (``None``: left out).

    A ``thoughtSignature`` on a part that is not a thought seals the thinking before
    it: it becomes the signature of the :class:`Thinking` just before, when that has
    none, else a :class:`Thinking` with no text (thinking the model did not show)."""
    out: list[P] = []
    for i, raw in enumerate(parts):
        part = _object(raw, f"{path}[{i}]")
        signature = signature_of(part, f"{path}[{i}]")
        if signature is not None and not part.get("thought"):
            last = out[-1] if out else None
            if isinstance(last, Thinking) and last.signature is None:
                out[-1] = last.model_copy(update={"signature": signature})
            else:
                out.append(thinking(text="", signature=signature))
        converted = convert(part, f"{path}[{i}]")
        if converted is not None:
            out.append(converted)
    return out


def _request_part(part: Mapping[str, Any], path: str) -> MessagePart | None:
    """One part of a request turn; kinds the neutral model does not read stay raw."""
    if "text" in part:
        text = _str(part["text"], f"{path}.text")
        if part.get("thought"):
            return Thinking(text=text, signature=signature_of(part, path))
        return Text(text=text)
    call = pick(part, "functionCall")
    if call is not None:
        return tool_call(call, f"{path}.functionCall")
    response = pick(part, "functionResponse")
    if response is not None:
        return _tool_result(response, f"{path}.functionResponse")
    kind = next((k for k in part if k not in ("thoughtSignature", "thought_signature")), "part")
    return Other(type=kind, data=dict(part))


def tool_call(call: Any, path: str) -> ToolCall:
    """A ``functionCall`` (name, ``args`` object, optional ``id``)."""
    call = _object(call, path)
    name = _str(call.get("name"), f"{path}.name")
    if not name:
        raise _err("must not be empty", f"{path}.name")
    args = call.get("args")
    args = {} if args is None else _object(args, f"{path}.args")
    ident = call.get("id")
    return ToolCall(
        name=name, args=dict(args), id=None if ident is None else _str(ident, f"{path}.id")
    )


def _tool_result(response: Any, path: str) -> ToolResult:
    """A ``functionResponse``: answers the call with its ``id``, or (Gemini API calls
    have none) its ``name``."""
    response = _object(response, path)
    name = _str(response.get("name"), f"{path}.name")
    ident = response.get("id")
    result = response.get("response")
    result = {} if result is None else _object(result, f"{path}.response")
    return ToolResult(
        tool_call_id=name if ident is None else _str(ident, f"{path}.id"),
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
    for i, raw in enumerate(_list(tools, "tools")):
        path = f"tools[{i}].functionDeclarations"
        declarations = _list(pick(_object(raw, f"tools[{i}]"), "functionDeclarations"), path)
        out.extend(_declaration(d, f"{path}[{j}]") for j, d in enumerate(declarations))
    return out


def _declaration(declaration: Any, path: str) -> Tool:
    declaration = _object(declaration, path)
    schema = pick(declaration, "parametersJsonSchema")
    if schema is None:
        schema = declaration.get("parameters")
    description = declaration.get("description")
    return Tool(
        name=_str(declaration.get("name"), f"{path}.name"),
        description=None if description is None else _str(description, f"{path}.description"),
        parameters=dict(_object(schema, f"{path}.parameters")) if schema is not None else {},
    )

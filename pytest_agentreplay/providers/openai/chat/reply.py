"""A ``chat.completion`` body → neutral :class:`~....neutral.Reply`.

Reads the first
choice (a neutral reply has one), with the reasoning OpenAI-compatible hosts
add (``reasoning_content`` / ``reasoning``, Mistral ``thinking`` parts) as
:class:`Thinking`, a ``refusal`` as text with stop ``refusal``, and usage with
zero cached / reasoning counts read as ``None`` (OpenAI always sends zeros).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from .... import jsonparse
from ....errors import CodecError
from ....neutral import (
    Citation,
    Part,
    Reply,
    StopReason,
    Text,
    Thinking,
    ToolCall,
    Usage,
)
from ...base import Codec

__all__ = ["to_reply"]

_STOP: dict[str, StopReason] = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
    "content_filter": "refusal",
}

ErrorFactory = Callable[[str, str], CodecError]
"""``error(message, field)`` → a :class:`CodecError` for this provider."""


def to_reply(codec: Codec, body: Mapping[str, Any]) -> Reply:
    """The first choice of ``body`` as a :class:`Reply`."""
    return _read_reply(body, lambda message, path: codec.error(message, field=path or None))


def _read_reply(body: Mapping[str, Any], error: ErrorFactory) -> Reply:
    if not isinstance(body, Mapping):
        raise error("body must be a JSON object", "")
    choices = body.get("choices")
    if not isinstance(choices, list):
        raise error("must be a list", "choices")
    model = body.get("model") if isinstance(body.get("model"), str) else None
    usage = _read_usage(body.get("usage"))
    if not choices:
        return Reply(parts=[], usage=usage, stop="end_turn", model=model)
    choice = choices[0]
    if not isinstance(choice, Mapping) or not isinstance(choice.get("message"), Mapping):
        raise error("must be an object with a 'message'", "choices[0]")
    message = choice["message"]
    parts = _read_parts(message, "choices[0].message", error)
    refusal = message.get("refusal")
    stop = _STOP.get(str(choice.get("finish_reason")), "end_turn")
    if isinstance(refusal, str) and refusal:
        first_call = next((i for i, p in enumerate(parts) if isinstance(p, ToolCall)), len(parts))
        parts.insert(first_call, Text(text=refusal))
        stop = "refusal"
    return Reply(parts=parts, usage=usage, stop=stop, model=model)


def _citations(annotations: Any, text: str) -> list[Citation]:
    """The ``url_citation`` annotations whose span lies in ``text``; one spanning the
    whole text reads back without a span, as it is rendered."""
    out: list[Citation] = []
    for note in annotations if isinstance(annotations, list) else []:
        cited = note.get("url_citation") if isinstance(note, Mapping) else None
        if not isinstance(cited, Mapping) or not isinstance(cited.get("url"), str):
            continue
        start, end = cited.get("start_index"), cited.get("end_index")
        if not (cited["url"] and isinstance(start, int) and isinstance(end, int)):
            continue
        if 0 <= start <= end <= len(text):
            whole = (start, end) == (0, len(text))
            span = {} if whole else {"start": start, "end": end}
            out.append(Citation(url=cited["url"], title=str(cited.get("title") or ""), **span))
    return out


def _read_parts(message: Mapping[str, Any], path: str, error: ErrorFactory) -> list[Part]:
    parts: list[Part] = []
    for key in ("reasoning_content", "reasoning"):
        value = message.get(key)
        if isinstance(value, str) and value:
            parts.append(Thinking(text=value))
            break
    content = message.get("content")
    if isinstance(content, str) and content:
        parts.append(Text(text=content, citations=_citations(message.get("annotations"), content)))
    elif isinstance(content, list):
        parts.extend(_read_content_parts(content, f"{path}.content", error))
    elif content not in (None, ""):
        raise error("must be a string, a list of parts or null", f"{path}.content")
    calls = message.get("tool_calls") or []
    if not isinstance(calls, list):
        raise error("must be a list", f"{path}.tool_calls")
    for i, call in enumerate(calls):
        parts.append(_read_call(call, f"{path}.tool_calls[{i}]", error))
    if isinstance(message.get("function_call"), Mapping):
        legacy = {"function": message["function_call"]}
        parts.append(_read_call(legacy, f"{path}.function_call", error))
    return parts


def _read_content_parts(content: list[Any], path: str, error: ErrorFactory) -> list[Part]:
    """Mistral's part list: ``text`` and ``thinking`` parts, in order."""
    parts: list[Part] = []
    for i, part in enumerate(content):
        if not isinstance(part, Mapping):
            raise error("must be an object", f"{path}[{i}]")
        if part.get("type") == "text" and isinstance(part.get("text"), str):
            if part["text"]:
                parts.append(Text(text=part["text"]))
        elif part.get("type") == "thinking":
            inner = part.get("thinking")
            if isinstance(inner, str):
                text = inner
            else:
                text = "".join(t.get("text", "") for t in inner or [] if isinstance(t, Mapping))
            if text:
                parts.append(Thinking(text=text))
    return parts


def _read_call(call: Any, path: str, error: ErrorFactory) -> ToolCall:
    if not isinstance(call, Mapping):
        raise error("must be an object", path)
    call_id = call.get("id") if isinstance(call.get("id"), str) else None
    custom = call.get("custom")
    if call.get("type") == "custom" and isinstance(custom, Mapping):
        return ToolCall(
            name=str(custom.get("name")), args={"input": custom.get("input")}, id=call_id
        )
    function = call.get("function")
    if (
        not isinstance(function, Mapping)
        or not isinstance(function.get("name"), str)
        or not function["name"]
    ):
        raise error("must name the function", f"{path}.function.name")
    arguments = function.get("arguments") or "{}"
    try:
        args = jsonparse.loads(arguments) if isinstance(arguments, str) else arguments
    except ValueError as exc:
        reason = getattr(exc, "msg", exc)
        raise error(f"arguments are not JSON ({reason})", f"{path}.function.arguments") from None
    if not isinstance(args, dict):
        raise error("arguments must be a JSON object", f"{path}.function.arguments")
    return ToolCall(name=function["name"], args=args, id=call_id)


def _read_usage(usage: Any) -> Usage | None:
    if not isinstance(usage, Mapping):
        return None
    prompt = usage.get("prompt_tokens_details") or {}
    completion = usage.get("completion_tokens_details") or {}
    return Usage(
        input_tokens=int(usage.get("prompt_tokens") or 0),
        output_tokens=int(usage.get("completion_tokens") or 0),
        cache_read_input_tokens=prompt.get("cached_tokens") or None,
        reasoning_tokens=completion.get("reasoning_tokens") or None,
    )

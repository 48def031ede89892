"""The OpenTelemetry GenAI conventions, read: which span is a model call, which wire
format it spoke, its messages as neutral parts, its usage and its stop reason.

Written against the conventions as the instrumentations emit them in late 2026
(``gen_ai.input.messages`` / ``gen_ai.output.messages`` with typed parts, semconv
1.37 and later) and the names they replaced (``gen_ai.system``,
``gen_ai.usage.prompt_tokens``), plus pydantic-ai's spellings of the same parts
(``result`` for a tool's response, ``thinking`` for reasoning).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Literal, cast

from ..errors import CodecError, TraceImportError
from ..neutral import Message, Provider, Request, Text, Thinking, Tool, ToolCall, ToolResult, Usage
from ..providers import codec_for
from .read import INFERENCE_EVENT
from .spans import TraceSpan

__all__ = [
    "INFERENCE_OPERATIONS",
    "is_inference",
    "output_parts",
    "provider_of",
    "read_request",
    "tools_of",
    "usage_of",
]

INFERENCE_OPERATIONS = frozenset({"chat", "generate_content", "text_completion", "responses"})
"""``gen_ai.operation.name`` values of a call to a model (agents and tools are not)."""

_PROVIDERS: dict[str, Provider] = {
    "anthropic": "anthropic",
    "aws.bedrock.anthropic": "anthropic",
    "openai": "openai_chat",
    "azure.ai.openai": "openai_chat",
    "azure_openai": "openai_chat",
    "gcp.gemini": "gemini",
    "gcp.gen_ai": "gemini",
    "gcp.vertex_ai": "gemini",
    "gemini": "gemini",
    "google_genai": "gemini",
    "google-gla": "gemini",  # pydantic-ai's names for Gemini
    "google-vertex": "gemini",
}

Part = Text | ToolCall | ToolResult | Thinking

Role = Literal["user", "assistant", "tool", "developer"]
_ROLES = frozenset({"user", "assistant", "tool", "developer"})


def is_inference(span: TraceSpan) -> bool:
    """Whether ``span`` is one call to a model (not an agent run, a tool, an HTTP call)."""
    if span.event:
        return span.name == INFERENCE_EVENT
    operation = span.get("gen_ai.operation.name")
    if operation is not None:
        return operation in INFERENCE_OPERATIONS
    return span.get("gen_ai.request.model") is not None and _provider_name(span) is not None


def _provider_name(span: TraceSpan) -> str | None:
    name = span.get("gen_ai.provider.name", "gen_ai.system")
    return str(name).lower() if name is not None else None


def provider_of(span: TraceSpan) -> Provider:
    """The wire format the span's call spoke; refused when the trace cannot tell."""
    name = _provider_name(span)
    provider = _PROVIDERS.get(name or "")
    if provider is None:
        known = ", ".join(sorted(_PROVIDERS))
        raise TraceImportError(
            f"{span.where}: span {span.name!r} ({span.instrumentation}): provider "
            f"{name!r} is not one this plugin speaks (gen_ai.provider.name or gen_ai.system "
            f"must be one of: {known}); import the other spans with skip_unknown=True"
        )
    if provider == "openai_chat" and _responses_api(span):
        return "openai_responses"
    return provider


def _responses_api(span: TraceSpan) -> bool:
    """OpenAI's Responses API, told from Chat Completions by what each instrumentation
    leaves: the span name (``openai.response``), the operation, or a ``resp_`` id."""
    response_id = span.get("gen_ai.response.id")
    return (
        "response" in span.name.split(" ")[0]
        or span.get("gen_ai.operation.name") == "responses"
        or (isinstance(response_id, str) and response_id.startswith("resp_"))
    )


def read_request(span: TraceSpan, provider: Provider, *, model: str, stream: bool) -> Request:
    """What ``span`` says was asked, as a neutral request: the system text, the input
    messages (a role the conventions do not name is the user's) and the tools; from the
    request itself where the span keeps it (:func:`recorded_call`)."""
    recorded = recorded_call(span)
    if recorded is not None and span.get("gen_ai.input.messages") is None:
        return _recorded_request(span, recorded, model=model, stream=stream)
    system = _system(span)
    messages: list[Message] = []
    for number, message in enumerate(_list(span, "gen_ai.input.messages")):
        where = f"gen_ai.input.messages[{number}]"
        role = str(message.get("role", "user"))
        parts = _parts(span, message.get("parts"), where)
        if role == "system":
            text = "".join(p.text for p in parts if isinstance(p, Text))
            system = text if system is None else system
            continue
        said = cast("Role", role if role in _ROLES else "user")
        messages.append(Message(role=said, parts=list(parts)))
    return Request(
        provider=provider,
        model=model,
        system=system,
        messages=messages,
        tools=tools_of(span),
        stream=stream,
    )


def tools_of(span: TraceSpan) -> list[Tool]:
    """The tools the call offered (``gen_ai.tool.definitions``), in whichever of the
    shapes instrumentations write them: OpenAI's ``{"type": "function", "function":
    {...}}`` or flat, the schema under ``parameters``, ``input_schema`` and the rest."""
    value = span.get("gen_ai.tool.definitions")
    if not isinstance(value, list):
        return []
    return [_tool(t) for t in value if isinstance(t, Mapping)]


_SCHEMA_KEYS = ("parameters", "input_schema", "inputSchema", "parameters_json_schema")


def _tool(tool: Mapping[str, Any]) -> Tool:
    inner = tool.get("function")
    function = inner if isinstance(inner, Mapping) else tool
    schema = next(
        (dict(function[k]) for k in _SCHEMA_KEYS if isinstance(function.get(k), Mapping)), {}
    )
    description = function.get("description")
    return Tool(
        name=str(function.get("name", "")),
        description=None if description is None else str(description),
        parameters=schema,
    )


def recorded_call(span: TraceSpan) -> tuple[dict[str, Any], Any] | None:
    """The Responses API call itself, where a span keeps it: ``(response, input)``.

    openai-agents' own tracing records each model call's input items and the whole
    ``Response`` (its ``ResponseSpanData``), and logfire's bridge to OpenTelemetry
    (``logfire.instrument_openai_agents()``) puts both on the span as JSON text
    (``response``, ``raw_input``) instead of GenAI messages."""
    response, given = _json(span.get("response")), _json(span.get("raw_input"))
    if not isinstance(response, Mapping) or response.get("object") != "response":
        return None
    if not isinstance(given, (list, str)):
        return None
    return dict(response), given


def _json(value: Any) -> Any:
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except ValueError:
        return None


def _recorded_request(
    span: TraceSpan, recorded: tuple[dict[str, Any], Any], *, model: str, stream: bool
) -> Request:
    response, given = recorded
    body: dict[str, Any] = {"model": model or response.get("model"), "input": given}
    for key in ("instructions", "tools"):
        if response.get(key):
            body[key] = response[key]
    try:
        asked = codec_for("openai_responses").parse_request(body)
    except CodecError as exc:
        raise TraceImportError(
            f"{span.where}: span {span.name!r}: raw_input and response do not make a "
            f"Responses API request: {exc}"
        ) from None
    return asked.model_copy(update={"stream": stream})


def output_parts(span: TraceSpan) -> tuple[list[Part], str | None]:
    """The reply's parts and the finish reason the trace gives (first message's, else
    ``gen_ai.response.finish_reasons``); the recorded response's parts where the span
    keeps it (:func:`recorded_call`: the codec infers the stop reason)."""
    recorded = recorded_call(span)
    if recorded is not None and span.get("gen_ai.output.messages") is None:
        reply = codec_for("openai_responses").to_reply(recorded[0])
        kept = (Text, ToolCall, Thinking)
        return [p for p in reply.parts if isinstance(p, kept)], None
    parts: list[Part] = []
    finish: str | None = None
    for number, message in enumerate(_list(span, "gen_ai.output.messages")):
        parts += _parts(span, message.get("parts"), f"gen_ai.output.messages[{number}]")
        finish = finish or message.get("finish_reason")
        if any(_is_refusal(p) for p in message.get("parts") or ()):
            finish = "refusal"  # OpenAI's refusal, which OpenLLMetry keeps as its own part
    reasons = span.get("gen_ai.response.finish_reasons")
    if finish is None and isinstance(reasons, list) and reasons:
        finish = str(reasons[0])
    return [p for p in parts if not isinstance(p, ToolResult)], finish


def _is_refusal(part: Any) -> bool:
    return isinstance(part, Mapping) and part.get("type") == "refusal"


def usage_of(span: TraceSpan) -> Usage | None:
    """The token counts the span holds; ``None`` when it holds none."""
    given = span.get("gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens")
    taken = span.get("gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens")
    if given is None and taken is None:
        return None
    return Usage(
        input_tokens=int(given or 0),
        output_tokens=int(taken or 0),
        cache_read_input_tokens=_count(span, "gen_ai.usage.cache_read.input_tokens"),
        cache_creation_input_tokens=_count(span, "gen_ai.usage.cache_creation.input_tokens"),
        reasoning_tokens=_count(span, *_REASONING_TOKENS),
    )


_REASONING_TOKENS = (
    "gen_ai.usage.reasoning.output_tokens",  # the GenAI conventions
    "gen_ai.usage.reasoning_tokens",  # OpenLLMetry
)
"""Where a span keeps the reasoning share of its output tokens (counted inside them, as
in :class:`~..neutral.Usage`)."""


def _count(span: TraceSpan, *names: str) -> int | None:
    value = span.get(*names)
    return int(value) if value else None


def _system(span: TraceSpan) -> str | None:
    value = span.get("gen_ai.system_instructions")
    if value is None:
        return None
    items = value if isinstance(value, list) else [value]
    texts = [str(p.get("content", "")) if isinstance(p, Mapping) else str(p) for p in items]
    return "".join(texts) or None


def _list(span: TraceSpan, name: str) -> list[Mapping[str, Any]]:
    value = span.get(name)
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(m, Mapping) for m in value):
        raise TraceImportError(
            f"{span.where}: span {span.name!r}: {name} is not a list of messages "
            f"(got {type(value).__name__}); the GenAI conventions give "
            '[{"role": ..., "parts": [...]}]'
        )
    return value


def _parts(span: TraceSpan, parts: Any, where: str) -> list[Part]:
    if not isinstance(parts, list):
        raise TraceImportError(f"{span.where}: span {span.name!r}: {where}.parts is not a list")
    return [_part(span, part, f"{where}.parts[{n}]") for n, part in enumerate(parts)]


def _part(span: TraceSpan, part: Any, where: str) -> Part:
    kind = part.get("type") if isinstance(part, Mapping) else None
    if kind in ("text", "refusal"):
        return Text(text=str(part.get("content", "")))
    if kind in ("reasoning", "thinking"):
        return Thinking(text=str(part.get("content", "")))
    if kind == "tool_call":
        return ToolCall(name=str(part.get("name")), args=_args(part.get("arguments")), id=_id(part))
    if kind == "tool_call_response":
        result = part.get("response", part.get("result"))
        return ToolResult(tool_call_id=_id(part) or "", content=_content(result))
    raise TraceImportError(
        f"{span.where}: span {span.name!r}: {where}: a part of type {kind!r} cannot be "
        "imported (text, reasoning, tool_call, tool_call_response and refusal can)"
    )


def _id(part: Mapping[str, Any]) -> str | None:
    value = part.get("id")
    return str(value) if value not in (None, "") else None


def _args(value: Any) -> dict[str, Any]:
    if isinstance(value, str):  # some instrumentations keep the arguments' JSON text
        try:
            value = json.loads(value) if value.strip() else {}
        except ValueError:
            return {"_raw": value}
    return dict(value) if isinstance(value, Mapping) else {}


def _content(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, Mapping) for v in value):
        texts = [str(v.get("content", v.get("text", ""))) for v in value]
        return "".join(texts)
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))

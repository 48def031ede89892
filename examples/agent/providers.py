"""The two model clients: the real ``anthropic`` and ``openai`` SDKs, behind one shape.

A client turns the saved context into a provider request (:meth:`request`: the
same context always gives the same request, which is what a retry must send), and
makes one model call (:meth:`call`), streaming or not. While streaming it reports
text deltas and tool calls as they begin. Both return a :class:`ModelReply`; its
``stop_reason`` is ``None`` when a stream ended before the provider said it was done.
A call that fails after its 200 (a stream, or a JSON body, cut short; an in-stream
error event) raises a :class:`~.errors.MidStreamError` that keeps the headers of
its response (its ``retry-after``, its request id).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

import anthropic
import openai

from .citations import anthropic_citations, openai_citations
from .config import DEFAULT_MODELS, SessionConfig, Tool
from .errors import SDK_ERRORS, MidStreamError
from .events import Citation, Usage
from .store import Message, ToolUse

OnText = Callable[[str], None]
OnTool = Callable[[str, str], None]  # (call id, tool name)
# (call id, tool name, "begin" | "completed" | "failed"): a tool the provider runs
ServerToolPhase = Literal["begin", "completed", "failed"]
OnServerTool = Callable[[str, str, ServerToolPhase], None]


def _ignore(call_id: str, name: str, phase: ServerToolPhase) -> None:
    """The provider-side tools of a provider that has none (OpenAI Chat)."""


@dataclass
class _Response:
    """The headers of the response a call reads, once it has begun."""

    headers: Mapping[str, str] | None = None


@contextmanager
def _headers_kept(response: _Response) -> Iterator[None]:
    """Raise a failure after the response began as a :class:`MidStreamError` with its
    headers. Without this the agent lost an overloaded stream's ``retry-after`` and
    request id (issue 21, G3): the SDKs raise a dropped stream and OpenAI's error
    chunk without the response they came in."""
    try:
        yield
    except SDK_ERRORS as exc:
        if response.headers is None:  # an HTTP error: it has its own response
            raise
        raise MidStreamError(exc, response.headers) from exc


@dataclass
class ModelReply:
    """What one model call answered, with the web sources its text cites. ``texts``:
    the text parts of its answer, ``(part index, text)`` — the index of the content
    block that holds it (not kept in the write-ahead log: the parts add up to
    ``text``)."""

    text: str = ""
    tool_calls: list[ToolUse] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    stop_reason: str | None = None
    citations: list[Citation] = field(default_factory=list)
    texts: list[tuple[int, str]] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        """The reply as the write-ahead log stores it (the same for both paths)."""
        return {
            "text": self.text,
            "tool_calls": [vars(call) for call in self.tool_calls],
            "usage": vars(self.usage),
            "stop_reason": self.stop_reason,
            "citations": [vars(citation) for citation in self.citations],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ModelReply:
        return cls(
            data["text"],
            [ToolUse(**c) for c in data["tool_calls"]],
            Usage(**data["usage"]),
            data["stop_reason"],
            [Citation(**c) for c in data.get("citations", ())],  # absent in older logs
        )


class ModelClient(Protocol):
    provider: str
    model: str

    def request(self, messages: Sequence[Message], tools: Sequence[Tool]) -> dict[str, Any]: ...

    async def call(
        self,
        request: dict[str, Any],
        *,
        stream: bool,
        on_text: OnText,
        on_tool: OnTool,
        on_server_tool: OnServerTool = _ignore,
    ) -> ModelReply: ...


def client_for(config: SessionConfig) -> ModelClient:
    """The model client ``config`` asks for."""
    if config.provider == "anthropic":
        return AnthropicClient(config)
    return OpenAIClient(config)


class AnthropicClient:
    """Anthropic Messages, through ``anthropic.AsyncAnthropic``."""

    provider = "anthropic"

    def __init__(self, config: SessionConfig) -> None:
        self.config = config
        self.model = config.model or DEFAULT_MODELS[config.provider]
        # The agent retries by itself, in fresh model steps: the SDK must not.
        self.sdk = anthropic.AsyncAnthropic(
            api_key=config.api_key, base_url=config.base_url, max_retries=0
        )

    def request(self, messages: Sequence[Message], tools: Sequence[Tool]) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model,
            "max_tokens": self.config.max_tokens,
            "messages": _anthropic_messages(messages),
        }
        if self.config.system:
            body["system"] = self.config.system
        if tools:
            body["tools"] = [
                {"name": t.name, "description": t.description, "input_schema": t.parameters}
                for t in tools
            ]
        return body

    async def call(
        self,
        request: dict[str, Any],
        *,
        stream: bool,
        on_text: OnText,
        on_tool: OnTool,
        on_server_tool: OnServerTool = _ignore,
    ) -> ModelReply:
        response = _Response()
        if not stream:
            with _headers_kept(response):  # a body cut after its 200 keeps the 200's headers
                async with self.sdk.messages.with_streaming_response.create(**request) as raw:
                    response.headers = raw.headers
                    message = await raw.parse()
            for block in message.content:  # the JSON path learns of its searches at the end
                _server_tool_block(block, on_server_tool)
            return _anthropic_reply(message)
        with _headers_kept(response):
            async with self.sdk.messages.stream(**request) as events:
                response.headers = events.response.headers
                async for event in events:
                    if event.type == "text":
                        on_text(event.text)
                    elif event.type == "content_block_start":
                        _block_begins(event.content_block, on_tool, on_server_tool)
                return _anthropic_reply(await events.get_final_message())


def _block_begins(block: Any, on_tool: OnTool, on_server_tool: OnServerTool) -> None:
    """Report a content block as it begins: a tool call of the agent's, or a block of
    a tool the provider runs."""
    if block.type == "tool_use":
        on_tool(block.id, block.name)
    else:
        _server_tool_block(block, on_server_tool)


def _server_tool_block(block: Any, on_server_tool: OnServerTool) -> None:
    """Report a block of a tool Anthropic runs itself: its ``server_tool_use`` block
    begins it, its result block (``web_search_tool_result``...) ends it; a result
    whose content is an error object ends it ``failed``."""
    if block.type == "server_tool_use":
        on_server_tool(block.id, block.name, "begin")
    elif block.type.endswith("_tool_result") and hasattr(block, "tool_use_id"):
        failed = str(getattr(block.content, "type", "")).endswith("_error")
        on_server_tool(block.tool_use_id, "", "failed" if failed else "completed")


def _anthropic_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for m in messages:
        if m.role == "tool":
            result = {"type": "tool_result", "tool_use_id": m.tool_call_id, "content": m.text}
            if out and out[-1]["role"] == "user" and isinstance(out[-1]["content"], list):
                out[-1]["content"].append(result)  # tool results share one user message
            else:
                out.append({"role": "user", "content": [result]})
        elif m.tool_calls:
            text = [{"type": "text", "text": m.text}] if m.text else []
            uses = [
                {"type": "tool_use", "id": c.id, "name": c.name, "input": c.args}
                for c in m.tool_calls
            ]
            out.append({"role": "assistant", "content": text + uses})
        else:
            out.append({"role": m.role, "content": m.text})
    return out


def _anthropic_reply(message: anthropic.types.Message) -> ModelReply:
    return ModelReply(
        text="".join(b.text for b in message.content if b.type == "text"),
        tool_calls=[
            ToolUse(b.id, b.name, dict(b.input)) for b in message.content if b.type == "tool_use"
        ],
        usage=Usage(
            message.usage.input_tokens,
            message.usage.output_tokens,
            message.usage.cache_read_input_tokens or 0,
            message.usage.cache_creation_input_tokens or 0,
        ),
        stop_reason=message.stop_reason,
        citations=anthropic_citations(message.content),
        texts=[(n, b.text) for n, b in enumerate(message.content) if b.type == "text"],
    )


class OpenAIClient:
    """OpenAI Chat Completions, through ``openai.AsyncOpenAI``."""

    provider = "openai"

    def __init__(self, config: SessionConfig) -> None:
        self.config = config
        self.model = config.model or DEFAULT_MODELS[config.provider]
        self.sdk = openai.AsyncOpenAI(
            api_key=config.api_key, base_url=config.base_url, max_retries=0
        )

    def request(self, messages: Sequence[Message], tools: Sequence[Tool]) -> dict[str, Any]:
        system = [{"role": "system", "content": self.config.system}] if self.config.system else []
        body: dict[str, Any] = {
            "model": self.model,
            "max_completion_tokens": self.config.max_tokens,
            "messages": system + [_openai_message(m) for m in messages],
        }
        if tools:
            body["tools"] = [
                {
                    "type": "function",
                    "function": {
                        "name": t.name,
                        "description": t.description,
                        "parameters": t.parameters,
                    },
                }
                for t in tools
            ]
        return body

    async def call(
        self,
        request: dict[str, Any],
        *,
        stream: bool,
        on_text: OnText,
        on_tool: OnTool,
        on_server_tool: OnServerTool = _ignore,
    ) -> ModelReply:
        response = _Response()
        if not stream:
            with _headers_kept(response):  # a body cut after its 200 keeps the 200's headers
                async with self.sdk.chat.completions.with_streaming_response.create(
                    **request
                ) as raw:
                    response.headers = raw.headers
                    return _openai_reply(await raw.parse())
        # ``async with``: a consumer that stops early (an interrupt, a crash) closes the
        # response at once, instead of leaving the connection to the garbage collector.
        with _headers_kept(response):
            async with await self.sdk.chat.completions.create(
                **request, stream=True, stream_options={"include_usage": True}
            ) as chunks:
                response.headers = chunks.response.headers
                return await _openai_stream_reply(chunks, on_text, on_tool)


async def _openai_stream_reply(
    chunks: AsyncIterator[openai.types.chat.ChatCompletionChunk], on_text: OnText, on_tool: OnTool
) -> ModelReply:
    """The reply a Chat Completions stream adds up to; text and tool calls are reported
    as they begin. (The SDK raises an error chunk, ``"error": {...}``, as
    ``openai.APIError``; an empty ``"error"`` field, which some gateways send in every
    chunk, is no error.)"""
    reply = ModelReply()
    calls: dict[int, list[str]] = {}  # tool call index -> [id, name, JSON arguments]
    annotations: list[Any] = []  # spans count in the whole content: read at the end
    async for chunk in chunks:
        if chunk.usage:
            reply.usage = _openai_usage(chunk.usage)
        for choice in chunk.choices:
            reply.stop_reason = choice.finish_reason or reply.stop_reason
            if choice.delta.content:
                reply.text += choice.delta.content
                on_text(choice.delta.content)
            annotations += getattr(choice.delta, "annotations", None) or ()
            for piece in choice.delta.tool_calls or ():
                name = piece.function.name if piece.function else None
                arguments = piece.function.arguments if piece.function else None
                if piece.index not in calls:  # the first piece names the call
                    calls[piece.index] = [piece.id or "", name or "", ""]
                    on_tool(piece.id or "", name or "")
                calls[piece.index][2] += arguments or ""
    reply.tool_calls = [
        ToolUse(call_id, name, _arguments(arguments)) for call_id, name, arguments in calls.values()
    ]
    reply.citations = openai_citations(annotations, reply.text)
    reply.texts = [(0, reply.text)] if reply.text else []
    return reply


def _arguments(text: str | None) -> dict[str, Any]:
    """A tool call's JSON arguments. A stream that ends inside them leaves them cut
    short: ``{}`` then (the reply has no stop reason, so the agent rejects it anyway),
    rather than an exception that would leave the model step without an end."""
    try:
        arguments = json.loads(text or "{}")
    except json.JSONDecodeError:
        return {}
    return arguments if isinstance(arguments, dict) else {}


def _openai_message(m: Message) -> dict[str, Any]:
    if m.role == "tool":
        return {"role": "tool", "tool_call_id": m.tool_call_id, "content": m.text}
    if m.tool_calls:
        return {
            "role": "assistant",
            "content": m.text or None,
            "tool_calls": [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": json.dumps(c.args)},
                }
                for c in m.tool_calls
            ],
        }
    return {"role": m.role, "content": m.text}


def _openai_reply(completion: openai.types.chat.ChatCompletion) -> ModelReply:
    usage = completion.usage
    reply = ModelReply(usage=_openai_usage(usage) if usage else Usage())
    if completion.choices:
        choice = completion.choices[0]
        reply.text = choice.message.content or ""
        reply.texts = [(0, reply.text)] if reply.text else []
        reply.citations = openai_citations(choice.message.annotations, reply.text)
        reply.stop_reason = choice.finish_reason
        reply.tool_calls = [
            ToolUse(c.id, c.function.name, _arguments(c.function.arguments))
            for c in choice.message.tool_calls or ()
            if c.type == "function"
        ]
    return reply


def _openai_usage(usage: openai.types.CompletionUsage) -> Usage:
    """Chat Completions' usage; OpenAI reports cached prompt tokens (reads) only."""
    details = usage.prompt_tokens_details
    cached = details.cached_tokens if details and details.cached_tokens else 0
    return Usage(usage.prompt_tokens, usage.completion_tokens, cached)

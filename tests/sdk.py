"""Drive the real anthropic / openai SDKs the way agent code does, one call at a time.

Every helper builds a default SDK client (no ``http_client``, no ``base_url``):
interception must catch it as it would catch a client built inside a framework.
Results are reduced to a neutral :class:`Seen` so one test can run against all
three wire formats, sync and async, streaming and not.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import anthropic
import openai

PROVIDERS = ("anthropic", "openai_chat", "openai_responses")
MODEL = {
    "anthropic": "claude-test-1",
    "openai_chat": "gpt-test-1",
    "openai_responses": "gpt-test-1",
}


@dataclass
class Seen:
    """What the agent saw: streamed deltas as they came, then the final message."""

    text: str = ""
    tool_calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    usage: tuple[int, int] | None = None
    deltas: list[str] = field(default_factory=list)
    stop: str | None = None


def client(provider: str, *, is_async: bool = False, **kwargs: Any) -> Any:
    kwargs.setdefault("api_key", "test-key")
    kwargs.setdefault("max_retries", 0)
    if provider == "anthropic":
        return (anthropic.AsyncAnthropic if is_async else anthropic.Anthropic)(**kwargs)
    return (openai.AsyncOpenAI if is_async else openai.OpenAI)(**kwargs)


def _messages(provider: str, text: str) -> dict[str, Any]:
    if provider == "anthropic":
        return {
            "model": MODEL[provider],
            "max_tokens": 256,
            "messages": [{"role": "user", "content": text}],
        }
    if provider == "openai_chat":
        return {"model": MODEL[provider], "messages": [{"role": "user", "content": text}]}
    return {"model": MODEL[provider], "input": text}


def _from_anthropic(message: Any, seen: Seen) -> Seen:
    seen.text = "".join(b.text for b in message.content if b.type == "text")
    seen.tool_calls = [(b.name, b.input) for b in message.content if b.type == "tool_use"]
    seen.usage = (message.usage.input_tokens, message.usage.output_tokens)
    seen.stop = message.stop_reason
    return seen


def _from_chat(completion: Any, seen: Seen) -> Seen:
    msg = completion.choices[0].message
    seen.text = msg.content or ""
    seen.tool_calls = [
        (t.function.name, json.loads(t.function.arguments)) for t in msg.tool_calls or []
    ]
    if completion.usage is not None:
        seen.usage = (completion.usage.prompt_tokens, completion.usage.completion_tokens)
    seen.stop = completion.choices[0].finish_reason
    return seen


def _from_responses(response: Any, seen: Seen) -> Seen:
    seen.text = response.output_text
    seen.tool_calls = [
        (o.name, json.loads(o.arguments)) for o in response.output if o.type == "function_call"
    ]
    if response.usage is not None:
        seen.usage = (response.usage.input_tokens, response.usage.output_tokens)
    seen.stop = response.status
    return seen


def call(
    provider: str,
    *,
    stream: bool,
    text: str = "Hi",
    seen: Seen | None = None,
    sdk: Any = None,
    **extra: Any,
) -> Seen:
    """One model call through the sync SDK. ``seen`` collects deltas even if it raises."""
    seen = seen if seen is not None else Seen()
    sdk = sdk if sdk is not None else client(provider)
    args = {**_messages(provider, text), **extra}
    if provider == "anthropic":
        if not stream:
            return _from_anthropic(sdk.messages.create(**args), seen)
        with sdk.messages.stream(**args) as s:
            for delta in s.text_stream:
                seen.deltas.append(delta)
            return _from_anthropic(s.get_final_message(), seen)
    if provider == "openai_chat":
        if not stream:
            return _from_chat(sdk.chat.completions.create(**args), seen)
        with sdk.chat.completions.stream(**args, stream_options={"include_usage": True}) as s:
            for event in s:
                if event.type == "content.delta":
                    seen.deltas.append(event.delta)
            return _from_chat(s.get_final_completion(), seen)
    if not stream:
        return _from_responses(sdk.responses.create(**args), seen)
    with sdk.responses.stream(**args) as s:
        for event in s:
            if event.type == "response.output_text.delta":
                seen.deltas.append(event.delta)
        return _from_responses(s.get_final_response(), seen)


async def acall(
    provider: str,
    *,
    stream: bool,
    text: str = "Hi",
    seen: Seen | None = None,
    sdk: Any = None,
    **extra: Any,
) -> Seen:
    """One model call through the async SDK."""
    seen = seen if seen is not None else Seen()
    sdk = sdk if sdk is not None else client(provider, is_async=True)
    args = {**_messages(provider, text), **extra}
    if provider == "anthropic":
        if not stream:
            return _from_anthropic(await sdk.messages.create(**args), seen)
        async with sdk.messages.stream(**args) as s:
            async for delta in s.text_stream:
                seen.deltas.append(delta)
            return _from_anthropic(await s.get_final_message(), seen)
    if provider == "openai_chat":
        if not stream:
            return _from_chat(await sdk.chat.completions.create(**args), seen)
        async with sdk.chat.completions.stream(**args, stream_options={"include_usage": True}) as s:
            async for event in s:
                if event.type == "content.delta":
                    seen.deltas.append(event.delta)
            return _from_chat(await s.get_final_completion(), seen)
    if not stream:
        return _from_responses(await sdk.responses.create(**args), seen)
    async with sdk.responses.stream(**args) as s:
        async for event in s:
            if event.type == "response.output_text.delta":
                seen.deltas.append(event.delta)
        return _from_responses(await s.get_final_response(), seen)


def tools_arg(provider: str) -> dict[str, Any]:
    """A ``weather(city)`` tool in the provider's request shape."""
    schema = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    if provider == "anthropic":
        return {
            "tools": [
                {"name": "weather", "description": "Weather in a city", "input_schema": schema}
            ]
        }
    if provider == "openai_chat":
        return {
            "tools": [
                {
                    "type": "function",
                    "function": {
                        "name": "weather",
                        "description": "Weather in a city",
                        "parameters": schema,
                    },
                }
            ]
        }
    return {
        "tools": [
            {
                "type": "function",
                "name": "weather",
                "description": "Weather in a city",
                "parameters": schema,
            }
        ]
    }

"""Each folder's ``compose`` role writes a neutral request as its provider's SDK sends it:
parsed back by the same codec, it is the request it was written from."""

from __future__ import annotations

import pytest

from pytest_agentreplay.neutral import (
    PROVIDERS,
    Message,
    Provider,
    Request,
    Text,
    Thinking,
    Tool,
    ToolCall,
    ToolResult,
)
from pytest_agentreplay.providers import codec_for, target
from pytest_agentreplay.providers.catalog import facts

WEATHER = Tool(
    name="weather",
    description="The weather in a city.",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}},
)


def _asked(provider: Provider, stream: bool) -> Request:
    return Request(
        provider=provider,
        model="m-1",
        system="Answer in one sentence.",
        messages=[
            Message(role="user", parts=[Text(text="Weather in Leeds?")]),
            Message(
                role="assistant",
                parts=[
                    Thinking(text="The tool knows."),
                    ToolCall(name="weather", args={"city": "Leeds"}, id="call_1"),
                ],
            ),
            Message(role="tool", parts=[ToolResult(tool_call_id="call_1", content="sunny")]),
            Message(role="user", parts=[Text(text="And tomorrow?")]),
        ],
        tools=[WEATHER],
        stream=stream,
    )


def _seen(request: Request) -> list[tuple[str, str, list[object], list[str]]]:
    """Each message as every format carries it: who, the text, the calls, the results
    (OpenAI Chat's system message is also the request's ``system``)."""
    out = []
    for message in request.messages:
        if message.role == "system":
            continue
        calls = [(p.name, p.args) for p in message.parts if isinstance(p, ToolCall)]
        results = [p.content for p in message.parts if isinstance(p, ToolResult)]
        role = "user" if message.role == "tool" or results else message.role
        out.append((role, message.text, calls, results))
    return out


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("stream", [False, True])
def test_a_composed_request_parses_back_to_what_it_was_written_from(
    provider: Provider, stream: bool
) -> None:
    codec = codec_for(provider)
    asked = _asked(provider, stream)
    url = facts(provider).url("m-1", stream=stream)

    body = codec.compose_request(asked, max_tokens=300)
    parsed = codec.parse_call("POST", target(url), body)

    assert (parsed.model, parsed.system, parsed.stream) == ("m-1", asked.system, stream)
    assert parsed.tools == [WEATHER]
    assert _seen(parsed) == _seen(asked)


def test_anthropic_requires_max_tokens_and_gets_a_default() -> None:
    body = codec_for("anthropic").compose_request(_asked("anthropic", False), max_tokens=None)
    assert body["max_tokens"] == 1024

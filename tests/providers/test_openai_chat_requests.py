"""``parse_request`` on the JSON the real ``openai`` SDK sends for Chat Completions."""

from __future__ import annotations

import json
from typing import Any

import httpx2
import pytest

from pytest_agentreplay.errors import CodecError
from pytest_agentreplay.neutral import Message, Other, Text, Thinking, Tool, ToolCall, ToolResult
from pytest_agentreplay.providers.openai_chat import OpenAIChatCodec
from tests.providers._openai_chat_sdk import client

pytestmark = pytest.mark.sdk

CODEC = OpenAIChatCodec()
OK_BODY = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "created": 1,
    "model": "m",
    "choices": [
        {"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}
    ],
}
WEATHER_TOOL: Any = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Weather for a city",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
        "strict": True,
    },
}


def sent(**kwargs: Any) -> dict[str, Any]:
    """The JSON body the SDK sends for ``chat.completions.create(**kwargs)``."""
    captured: list[dict[str, Any]] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        assert request.url.path == "/v1/chat/completions"
        assert CODEC.handles(request.method, request.url.path)
        captured.append(json.loads(request.content))
        return httpx2.Response(200, json=OK_BODY)

    client(handler).chat.completions.create(**kwargs)
    return captured[0]


def test_text_request() -> None:
    request = CODEC.parse_request(
        sent(
            model="gpt-4o", messages=[{"role": "user", "content": "What is the capital of France?"}]
        )
    )
    assert request.provider == "openai_chat"
    assert request.model == "gpt-4o"
    assert request.stream is False
    assert request.system is None
    assert request.messages == [
        Message(role="user", parts=[Text(text="What is the capital of France?")])
    ]
    assert request.last_user_text == "What is the capital of France?"
    assert request.raw["messages"][0]["content"] == "What is the capital of France?"


def test_system_and_developer_messages() -> None:
    body = sent(
        model="o3",
        messages=[
            {"role": "developer", "content": "Be terse."},
            {"role": "system", "content": [{"type": "text", "text": "Answer in French."}]},
            {"role": "user", "content": "Hi", "name": "alice"},
            {"role": "system", "content": "late system note"},
        ],
    )
    request = CODEC.parse_request(body)
    assert request.system == "Be terse.\n\nAnswer in French."
    assert [m.role for m in request.messages] == ["developer", "system", "user", "system"]
    assert request.messages[3].text == "late system note"


def test_streaming_flag_and_options() -> None:
    captured: list[dict[str, Any]] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        captured.append(json.loads(request.content))
        return httpx2.Response(
            200, headers={"content-type": "text/event-stream"}, content=b"data: [DONE]\n\n"
        )

    stream = client(handler).chat.completions.create(
        model="gpt-4o",
        messages=[{"role": "user", "content": "Hi"}],
        stream=True,
        stream_options={"include_usage": True},
    )
    list(stream)
    request = CODEC.parse_request(captured[0])
    assert request.stream is True
    assert request.raw["stream_options"] == {"include_usage": True}


def test_tool_loop_request() -> None:
    body = sent(
        model="gpt-4o",
        tools=[WEATHER_TOOL],
        messages=[
            {"role": "user", "content": "Weather in Leeds and York?"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": '{"city": "Leeds"}'},
                    },
                    {
                        "id": "call_2",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": ""},
                    },
                ],
            },
            {"role": "tool", "tool_call_id": "call_1", "content": "Rain, 9°C"},
            {
                "role": "tool",
                "tool_call_id": "call_2",
                "content": [{"type": "text", "text": "Sun, "}, {"type": "text", "text": "12°C"}],
            },
        ],
    )
    request = CODEC.parse_request(body)
    assert request.tools == [
        Tool(
            name="get_weather",
            description="Weather for a city",
            parameters=WEATHER_TOOL["function"]["parameters"],
        )
    ]
    assert request.messages[1] == Message(
        role="assistant",
        parts=[
            ToolCall(name="get_weather", args={"city": "Leeds"}, id="call_1"),
            ToolCall(name="get_weather", args={}, id="call_2"),
        ],
    )
    assert request.tool_results == [
        ToolResult(tool_call_id="call_1", content="Rain, 9°C"),
        ToolResult(tool_call_id="call_2", content="Sun, 12°C"),
    ]
    assert [m.role for m in request.messages] == ["user", "assistant", "tool", "tool"]


def test_invalid_tool_arguments_in_history_are_kept_raw() -> None:
    call = {
        "id": "call_9",
        "type": "function",
        "function": {"name": "f", "arguments": '{"truncated": '},
    }
    request = CODEC.parse_request(
        sent(model="gpt-4o", messages=[{"role": "assistant", "tool_calls": [call]}])
    )
    assert request.messages[0].parts == [Other(type="tool_call", data=call)]


def test_image_audio_and_file_parts_are_kept_as_other() -> None:
    image = {
        "type": "image_url",
        "image_url": {"url": "data:image/png;base64,iVBORw0KGgo=", "detail": "low"},
    }
    audio = {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}}
    document = {"type": "file", "file": {"file_id": "file-abc"}}
    request = CODEC.parse_request(
        sent(
            model="gpt-4o",
            messages=[
                {
                    "role": "user",
                    "content": [{"type": "text", "text": "What is this?"}, image, audio, document],
                }
            ],
        )
    )
    assert request.messages[0].parts == [
        Text(text="What is this?"),
        Other(type="image_url", data=image),
        Other(type="input_audio", data=audio),
        Other(type="file", data=document),
    ]
    assert request.last_user_text == "What is this?"


def test_reasoning_echoed_by_openai_compatible_clients() -> None:
    # DeepSeek wants `reasoning_content` back; OpenRouter / Groq use `reasoning`;
    # Mistral sends `thinking` parts. The SDK passes extra keys through unchanged.
    messages: Any = [
        {"role": "user", "content": "2+2?"},
        {"role": "assistant", "content": "4", "reasoning_content": "Add them."},
        {"role": "assistant", "content": "Yes.", "reasoning": "Check again."},
        {
            "role": "assistant",
            "content": [
                {
                    "type": "thinking",
                    "thinking": [
                        {"type": "text", "text": "Hmm. "},
                        {"type": "text", "text": "Sure."},
                    ],
                },
                {"type": "text", "text": "Four."},
            ],
        },
    ]
    body = sent(model="deepseek-reasoner", messages=messages)
    request = CODEC.parse_request(body)
    assert request.messages[1].parts == [Thinking(text="Add them."), Text(text="4")]
    assert request.messages[2].parts == [Thinking(text="Check again."), Text(text="Yes.")]
    assert request.messages[3].parts == [Thinking(text="Hmm. Sure."), Text(text="Four.")]


def test_refusal_and_legacy_function_calling() -> None:
    body = sent(
        model="gpt-3.5-turbo",
        functions=[{"name": "lookup", "parameters": {"type": "object"}}],
        messages=[
            {"role": "assistant", "content": None, "refusal": "I can't."},
            {
                "role": "assistant",
                "content": None,
                "function_call": {"name": "lookup", "arguments": '{"q": "x"}'},
            },
            {"role": "function", "name": "lookup", "content": "found"},
        ],
    )
    request = CODEC.parse_request(body)
    assert request.tools == [Tool(name="lookup", parameters={"type": "object"})]
    assert request.messages[0].parts == [Other(type="refusal", data={"refusal": "I can't."})]
    assert request.messages[1].parts == [ToolCall(name="lookup", args={"q": "x"})]
    assert request.messages[2] == Message(
        role="tool", parts=[ToolResult(tool_call_id="lookup", content="found")]
    )


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"model": "m"}, "messages"),
        ({"model": "m", "messages": {"role": "user"}}, "messages"),
        ({"model": 4, "messages": []}, "model"),
        ({"model": "m", "messages": [], "stream": "yes"}, "stream"),
        ({"model": "m", "messages": ["hi"]}, "messages[0]"),
        ({"model": "m", "messages": [{"content": "hi"}]}, "messages[0].role"),
        ({"model": "m", "messages": [{"role": "robot", "content": "hi"}]}, "messages[0].role"),
        ({"model": "m", "messages": [{"role": "user", "content": 5}]}, "messages[0].content"),
        (
            {
                "model": "m",
                "messages": [
                    {"role": "user", "content": "a"},
                    {
                        "role": "user",
                        "content": [{"type": "text", "text": "ok"}, {"text": "no type"}],
                    },
                ],
            },
            "messages[1].content[1].type",
        ),
        (
            {"model": "m", "messages": [{"role": "user", "content": [{"type": "text"}]}]},
            "messages[0].content[0].text",
        ),
        (
            {"model": "m", "messages": [{"role": "tool", "content": "x"}]},
            "messages[0].tool_call_id",
        ),
        (
            {"model": "m", "messages": [{"role": "assistant", "tool_calls": {}}]},
            "messages[0].tool_calls",
        ),
        (
            {
                "model": "m",
                "messages": [
                    {
                        "role": "assistant",
                        "tool_calls": [
                            {"id": "c", "type": "function", "function": {"arguments": "{}"}}
                        ],
                    }
                ],
            },
            "messages[0].tool_calls[0].function.name",
        ),
        (
            {
                "model": "m",
                "messages": [
                    {
                        "role": "assistant",
                        "tool_calls": [
                            {
                                "id": "c",
                                "type": "function",
                                "function": {"name": "f", "arguments": 3},
                            }
                        ],
                    }
                ],
            },
            "messages[0].tool_calls[0].function.arguments",
        ),
        (
            {"model": "m", "messages": [], "tools": [{"type": "function", "function": {}}]},
            "tools[0].function.name",
        ),
        (
            {
                "model": "m",
                "messages": [],
                "tools": [{"type": "function", "function": {"name": "f", "parameters": "schema"}}],
            },
            "tools[0].function.parameters",
        ),
    ],
)
def test_bad_bodies_name_the_field(body: dict[str, Any], field: str) -> None:
    with pytest.raises(CodecError) as info:
        CODEC.parse_request(body)
    assert info.value.field == field
    assert info.value.provider == "openai_chat"
    assert repr(field) in str(info.value)


def test_not_a_mapping_is_refused() -> None:
    with pytest.raises(CodecError, match="must be a JSON object"):
        CODEC.parse_request(["not", "a", "body"])  # type: ignore[arg-type]

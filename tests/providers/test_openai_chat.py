"""OpenAI Chat Completions codec: rendering, folding and errors, checked against the real SDK.

The key property: for any reply, the SDK's non-streaming parse of ``render_body``
equals what the SDK's own stream accumulator builds from ``render_events``
(sync and async, under arbitrary re-chunkings of the bytes).
"""

from __future__ import annotations

import asyncio
import inspect
import json
import re
from typing import Any

import httpx2
import openai
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from openai.lib.streaming.chat import ChatCompletionStreamState

from pytest_agentreplay.errors import CodecError
from pytest_agentreplay.neutral import Fault, Reply, Text, Thinking, ToolCall, Usage
from pytest_agentreplay.providers import codec_for, detect
from pytest_agentreplay.providers.base import IdFactory, RenderContext
from pytest_agentreplay.providers.openai_chat import OpenAIChatCodec
from pytest_agentreplay.sse import SSEEvent, decode, encode
from tests.gen import replies
from tests.providers._openai_chat_sdk import (
    MESSAGES,
    FakeServer,
    async_client,
    client,
    sse_response,
)

pytestmark = pytest.mark.sdk

CODEC = OpenAIChatCodec()
REASONING_CODEC = OpenAIChatCodec(reasoning_field="reasoning_content")
STREAM_OPTIONS: Any = {"include_usage": True}
chunk_sizes = st.lists(st.integers(1, 48), min_size=1, max_size=6)


def ctx_for(codec: OpenAIChatCodec, body: dict[str, Any], seed: str = "chat") -> RenderContext:
    return RenderContext(request=codec.parse_request(body), ids=IdFactory(seed))


STREAM_BODY = {
    "model": "gpt-4o",
    "messages": MESSAGES,
    "stream": True,
    "stream_options": STREAM_OPTIONS,
}
PLAIN_BODY = {"model": "gpt-4o", "messages": MESSAGES}


# -- the SDK's two paths -------------------------------------------------------------


def from_create(dump: dict[str, Any]) -> dict[str, Any]:
    """A ``create()`` result, with the one field the real API sends only without
    streaming mapped to its streamed form: ``message.annotations`` is ``[]`` in a
    non-streaming body, while a stream with no citations never sends the key."""
    for choice in dump["choices"]:
        assert choice["message"]["annotations"] == []
        choice["message"]["annotations"] = None
    return dump


def from_stream(dump: dict[str, Any]) -> dict[str, Any]:
    """A ``stream().get_final_completion()`` result without what only the stream
    helper adds: ``message.parsed`` and ``function.parsed_arguments`` (the SDK's
    structured-output parsing, never on the wire) and each tool call's ``index``
    (delta bookkeeping kept by ``accumulate_delta``; bodies have no ``index``)."""
    for choice in dump["choices"]:
        message = choice["message"]
        assert message.pop("parsed") is None
        for call in message["tool_calls"] or []:
            assert call.pop("index") is not None
            call["function"].pop("parsed_arguments")
    return dump


def without_estimated_usage(
    reply: Reply, created: dict[str, Any], streamed: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """A reply without usage gets ``RenderContext.usage_for``'s estimate, which is
    computed from the size of the request JSON; the streaming request is longer
    (``stream``, ``stream_options``), so the two estimates may differ. Only then is
    ``usage`` left out of the comparison."""
    if reply.usage is None:
        for dump in (created, streamed):
            assert dump.pop("usage")["prompt_tokens"] > 0
    return created, streamed


def truncated(reply: Reply, exc: openai.LengthFinishReasonError) -> Any:
    """``get_final_completion()`` refuses to parse a completion cut by
    ``finish_reason: "length"``; the accumulated completion is on the exception."""
    assert reply.stop == "max_tokens"
    return exc.completion


def expected_content(reply: Reply) -> str | None:
    """``message.content``: the joined text; ``None`` for a refusal (the text goes to
    ``message.refusal``) and for a reply that is only tool calls."""
    if reply.stop == "refusal" or (reply.tool_calls and not reply.text_content):
        return None
    return reply.text_content


def sdk_pair_sync(codec: OpenAIChatCodec, reply: Reply, sizes: list[int]) -> tuple[Any, Any]:
    sdk = client(FakeServer(codec, [reply, reply], sizes=sizes))
    created = sdk.chat.completions.create(model="gpt-4o", messages=MESSAGES)
    with sdk.chat.completions.stream(
        model="gpt-4o", messages=MESSAGES, stream_options=STREAM_OPTIONS
    ) as stream:
        try:
            final = stream.get_final_completion()
        except openai.LengthFinishReasonError as exc:
            final = truncated(reply, exc)
    return without_estimated_usage(
        reply, from_create(created.model_dump()), from_stream(final.model_dump())
    )


async def sdk_pair_async(codec: OpenAIChatCodec, reply: Reply, sizes: list[int]) -> tuple[Any, Any]:
    sdk = async_client(FakeServer(codec, [reply, reply], sizes=sizes))
    created = await sdk.chat.completions.create(model="gpt-4o", messages=MESSAGES)
    async with sdk.chat.completions.stream(
        model="gpt-4o", messages=MESSAGES, stream_options=STREAM_OPTIONS
    ) as stream:
        try:
            final = await stream.get_final_completion()
        except openai.LengthFinishReasonError as exc:
            final = truncated(reply, exc)
    return without_estimated_usage(
        reply, from_create(created.model_dump()), from_stream(final.model_dump())
    )


@given(reply=replies(), sizes=chunk_sizes)
def test_sdk_sees_stream_and_body_as_equal_sync(reply: Reply, sizes: list[int]) -> None:
    created, streamed = sdk_pair_sync(CODEC, reply, sizes)
    assert streamed == created
    message = created["choices"][0]["message"]
    assert message["content"] == expected_content(reply)
    if reply.stop == "refusal":
        assert message["refusal"] == reply.text_content


@settings(max_examples=25)
@given(reply=replies(), sizes=chunk_sizes)
def test_sdk_sees_stream_and_body_as_equal_async(reply: Reply, sizes: list[int]) -> None:
    created, streamed = asyncio.run(sdk_pair_async(CODEC, reply, sizes))
    assert streamed == created


@settings(max_examples=25)
@given(reply=replies(), sizes=chunk_sizes)
def test_sdk_equivalence_with_reasoning_rendered(reply: Reply, sizes: list[int]) -> None:
    created, streamed = sdk_pair_sync(REASONING_CODEC, reply, sizes)
    assert streamed == created
    thinking = "".join(p.text for p in reply.parts if isinstance(p, Thinking))
    assert created["choices"][0]["message"].get("reasoning_content") == (thinking or None)


def test_sdk_equivalence_byte_by_byte_with_multibyte_text() -> None:
    reply = Reply(
        parts=[
            Text(text="Zürich → 東京 🙂 done"),
            ToolCall(name="go", args={"to": "ß€𝄞", "n": [1, 2.5]}),
        ]
    )
    created, streamed = sdk_pair_sync(CODEC, reply, [1])
    assert streamed == created
    assert created["choices"][0]["message"]["content"] == "Zürich → 東京 🙂 done"
    args = created["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"]
    assert json.loads(args) == {"to": "ß€𝄞", "n": [1, 2.5]}


# -- fold and round trips -------------------------------------------------------------


def expected_parts(reply: Reply, *, thinking: bool) -> list[Any]:
    """What a reply looks like after a trip through Chat Completions: one text
    (content is a single string), tool calls after it, thinking only when rendered."""
    parts: list[Any] = []
    think = "".join(p.text for p in reply.parts if isinstance(p, Thinking))
    if thinking and think:
        parts.append(Thinking(text=think))
    if reply.text_content:
        parts.append(Text(text=reply.text_content))
    parts.extend((c.name, c.args) for c in reply.tool_calls)
    return parts


def expected_usage(usage: Usage) -> Usage:
    """Usage after the trip: Chat Completions has no cache-creation count, and it
    always sends cached / reasoning counts, so 0 and "not given" read back alike."""
    return Usage(
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cache_read_input_tokens=usage.cache_read_input_tokens or None,
        reasoning_tokens=usage.reasoning_tokens or None,
    )


def expected_stop(reply: Reply) -> str:
    """The stop reason after the trip: ``finish_reason: "stop"`` covers both a natural
    end and a stop sequence, and a refusal is only visible when it has text."""
    stop = reply.stop_reason
    if stop == "stop_sequence" or (stop == "refusal" and not reply.text_content):
        return "end_turn"
    return stop


def comparable(parts: list[Any]) -> list[Any]:
    return [(p.name, p.args) if isinstance(p, ToolCall) else p for p in parts]


@pytest.mark.parametrize("codec", [CODEC, REASONING_CODEC], ids=["plain", "reasoning"])
@given(reply=replies())
def test_fold_of_events_is_the_body_and_round_trips(codec: OpenAIChatCodec, reply: Reply) -> None:
    body = codec.render_body(reply, ctx_for(codec, STREAM_BODY))
    events = codec.render_events(reply, ctx_for(codec, STREAM_BODY))
    folded = codec.fold_detailed(decode(encode(events)).events)
    assert folded.complete
    assert folded.error is None
    assert folded.unknown == []
    assert json.dumps(folded.body, sort_keys=True) == json.dumps(body, sort_keys=True)
    back = codec.to_reply(folded.body)
    assert comparable(back.parts) == expected_parts(reply, thinking=codec is REASONING_CODEC)
    assert back.usage == expected_usage(ctx_for(codec, STREAM_BODY).usage_for(reply))
    assert back.stop == expected_stop(reply)
    ids = [c.id for c in back.tool_calls]
    assert all(re.fullmatch(r"call_[0-9A-Za-z]{24}", i or "") for i in ids)
    assert len(set(ids)) == len(ids)


def test_to_reply_keeps_given_ids_usage_and_stop() -> None:
    reply = Reply(
        parts=[
            Text(text="Checking."),
            ToolCall(name="weather", args={"city": "Leeds"}, id="call_x"),
        ],
        usage=Usage(
            input_tokens=12, output_tokens=7, cache_read_input_tokens=4, reasoning_tokens=3
        ),
    )
    body = CODEC.render_body(reply, ctx_for(CODEC, PLAIN_BODY))
    assert body["usage"]["prompt_tokens_details"]["cached_tokens"] == 4
    assert body["usage"]["completion_tokens_details"]["reasoning_tokens"] == 3
    back = CODEC.to_reply(body)
    assert back.parts == reply.parts
    assert back.usage == reply.usage
    assert back.stop == "tool_use"
    assert back.model == "gpt-4o"


@pytest.mark.parametrize(
    ("stop", "finish"),
    [("end_turn", "stop"), ("max_tokens", "length"), ("tool_use", "tool_calls")],
)
def test_stop_reasons_map_to_finish_reasons(stop: Any, finish: str) -> None:
    reply = Reply(parts=[Text(text="Hi")], stop=stop)
    body = CODEC.render_body(reply, ctx_for(CODEC, PLAIN_BODY))
    assert body["choices"][0]["finish_reason"] == finish
    assert CODEC.to_reply(body).stop == stop


def test_stop_sequence_reads_back_as_end_turn() -> None:
    # Chat Completions says "stop" for both a natural end and a stop sequence.
    body = CODEC.render_body(Reply.text("Hi", stop="stop_sequence"), ctx_for(CODEC, PLAIN_BODY))
    assert body["choices"][0]["finish_reason"] == "stop"
    assert CODEC.to_reply(body).stop == "end_turn"


def test_length_stream_accumulates_like_the_sdk_state() -> None:
    # get_final_completion() refuses finish_reason "length"; the state snapshot does not.
    reply = Reply.text("cut sho", stop="max_tokens")
    events = CODEC.render_events(reply, ctx_for(CODEC, STREAM_BODY))
    sdk = client(lambda _: sse_response(encode(events), {"content-type": "text/event-stream"}))
    state = ChatCompletionStreamState()
    for chunk in sdk.chat.completions.create(model="gpt-4o", messages=MESSAGES, stream=True):
        state.handle_chunk(chunk)
    snapshot = state.current_completion_snapshot
    assert snapshot.choices[0].finish_reason == "length"
    assert snapshot.choices[0].message.content == "cut sho"
    assert CODEC.fold(events)["choices"][0]["finish_reason"] == "length"


# -- exact shapes ---------------------------------------------------------------------


def test_body_shape_for_a_text_reply() -> None:
    reply = Reply.text("Hello there.", usage=Usage(input_tokens=9, output_tokens=3))
    body = CODEC.render_body(reply, ctx_for(CODEC, PLAIN_BODY))
    assert re.fullmatch(r"chatcmpl-[0-9A-Za-z]{29}", body.pop("id"))
    assert re.fullmatch(r"fp_[0-9a-f]{10}", body.pop("system_fingerprint"))
    assert body == {
        "object": "chat.completion",
        "created": 1_767_225_600,
        "model": "gpt-4o",
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": "Hello there.",
                    "refusal": None,
                    "annotations": [],
                },
                "logprobs": None,
                "finish_reason": "stop",
            }
        ],
        "usage": {
            "prompt_tokens": 9,
            "completion_tokens": 3,
            "total_tokens": 12,
            "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
            "completion_tokens_details": {
                "reasoning_tokens": 0,
                "audio_tokens": 0,
                "accepted_prediction_tokens": 0,
                "rejected_prediction_tokens": 0,
            },
        },
        "service_tier": "default",
    }


def deltas(events: list[SSEEvent]) -> list[Any]:
    out = []
    for event in events:
        if event.data == "[DONE]":
            out.append("[DONE]")
            continue
        chunk = json.loads(event.data)
        assert chunk["object"] == "chat.completion.chunk"
        assert event.event is None
        out.append([(c["delta"], c["finish_reason"]) for c in chunk["choices"]] or chunk["usage"])
    return out


def test_event_sequence_for_text_then_tool_call() -> None:
    reply = Reply(
        parts=[Text(text="Let me check"), ToolCall(name="w", args={"c": "Leeds"}, id="call_1")],
        usage=Usage(input_tokens=5, output_tokens=6),
    )
    events = CODEC.render_events(reply, ctx_for(CODEC, STREAM_BODY))
    assert deltas(events) == [
        [({"role": "assistant", "content": "", "refusal": None}, None)],
        [({"content": "Let"}, None)],
        [({"content": " me"}, None)],
        [({"content": " check"}, None)],
        [
            (
                {
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": "call_1",
                            "type": "function",
                            "function": {"name": "w", "arguments": ""},
                        }
                    ]
                },
                None,
            )
        ],
        [({"tool_calls": [{"index": 0, "function": {"arguments": "{"}}]}, None)],
        [({"tool_calls": [{"index": 0, "function": {"arguments": '"c":"'}}]}, None)],
        [({"tool_calls": [{"index": 0, "function": {"arguments": 'Leeds"}'}}]}, None)],
        [({}, "tool_calls")],
        {
            "prompt_tokens": 5,
            "completion_tokens": 6,
            "total_tokens": 11,
            "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
            "completion_tokens_details": {
                "reasoning_tokens": 0,
                "audio_tokens": 0,
                "accepted_prediction_tokens": 0,
                "rejected_prediction_tokens": 0,
            },
        },
        "[DONE]",
    ]
    chunks = [json.loads(e.data) for e in events[:-1]]
    assert all(c["usage"] is None for c in chunks[:-1])
    assert all(isinstance(c["obfuscation"], str) and c["obfuscation"] for c in chunks)
    assert len({c["id"] for c in chunks}) == 1


def test_stream_options_decide_usage_chunk_and_obfuscation() -> None:
    body = {
        "model": "gpt-4o",
        "messages": MESSAGES,
        "stream": True,
        "stream_options": {"include_obfuscation": False},
    }
    events = CODEC.render_events(Reply.text("Hi"), ctx_for(CODEC, body))
    chunks = [json.loads(e.data) for e in events[:-1]]
    assert [c["choices"][0]["finish_reason"] for c in chunks] == [None, None, "stop"]
    assert all("usage" not in c and "obfuscation" not in c for c in chunks)
    folded = CODEC.fold_detailed(events)
    assert folded.complete
    assert folded.body["usage"] is None


def test_refusal_renders_in_the_refusal_field() -> None:
    reply = Reply.text("I can't help with that.", stop="refusal")
    body = CODEC.render_body(reply, ctx_for(CODEC, PLAIN_BODY))
    message = body["choices"][0]["message"]
    assert message["content"] is None
    assert message["refusal"] == "I can't help with that."
    events = CODEC.render_events(reply, ctx_for(CODEC, STREAM_BODY))
    assert deltas(events)[0] == [({"role": "assistant", "content": None, "refusal": ""}, None)]
    created, streamed = sdk_pair_sync(CODEC, reply, [7])
    assert streamed == created
    assert created["choices"][0]["message"]["refusal"] == "I can't help with that."
    assert CODEC.to_reply(body).parts == [Text(text="I can't help with that.")]
    assert CODEC.to_reply(body).stop == "refusal"


@pytest.mark.parametrize(
    "reply",
    [Reply(parts=[]), Reply.tool_call("ignored", {"a": 1}, fault=Fault.empty())],
    ids=["no-parts", "fault-empty"],
)
def test_empty_reply_is_a_valid_empty_completion(reply: Reply) -> None:
    created, streamed = sdk_pair_sync(CODEC, reply, [5])
    assert streamed == created
    assert created["choices"][0]["message"]["content"] == ""
    assert created["choices"][0]["finish_reason"] == "stop"
    assert CODEC.to_reply(CODEC.render_body(reply, ctx_for(CODEC, PLAIN_BODY))).parts == []


def test_thinking_is_not_rendered_by_default_but_with_a_reasoning_field() -> None:
    reply = Reply(parts=[Thinking(text="Let me think."), Text(text="Done.")])
    plain = CODEC.render_body(reply, ctx_for(CODEC, PLAIN_BODY))
    assert "Let me think." not in json.dumps(plain)
    groq = OpenAIChatCodec(reasoning_field="reasoning")
    events = groq.render_events(reply, ctx_for(groq, STREAM_BODY))
    assert deltas(events)[1:3] == [
        [({"reasoning": "Let"}, None)],
        [({"reasoning": " me"}, None)],
    ]
    assert groq.fold(events)["choices"][0]["message"]["reasoning"] == "Let me think."


def test_registry_and_headers() -> None:
    assert isinstance(codec_for("openai_chat"), OpenAIChatCodec)
    assert detect("POST", "/openai/deployments/gpt-4o/chat/completions") == "openai_chat"
    headers = CODEC.response_headers(RenderContext(), streaming=True)
    assert headers["content-type"].startswith("text/event-stream")
    assert re.fullmatch(r"req_[0-9a-f]{32}", headers["x-request-id"])
    assert CODEC.response_headers(RenderContext(), streaming=False)["content-type"] == (
        "application/json"
    )


def test_sdk_exposes_request_id_header() -> None:
    sdk = client(FakeServer(CODEC, [Reply.text("Hi")]))
    raw = sdk.chat.completions.with_raw_response.create(model="gpt-4o", messages=MESSAGES)
    assert re.fullmatch(r"req_[0-9a-f]{32}", raw.request_id or "")
    assert raw.parse().choices[0].message.content == "Hi"


# -- handles() ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "path", "expected"),
    [
        ("POST", "/v1/chat/completions", True),
        ("post", "/v1/chat/completions", True),
        ("POST", "/chat/completions", True),
        ("POST", "/openai/deployments/gpt-4o-mini/chat/completions", True),
        ("POST", "/api/v1/chat/completions", True),
        ("POST", "/openai/v1/chat/completions", True),
        ("POST", "/proxy/tenant-1/v1/chat/completions/", True),
        ("GET", "/v1/chat/completions", False),
        ("POST", "/v1/chat/completions/chatcmpl-abc", False),
        ("GET", "/v1/chat/completions/chatcmpl-abc/messages", False),
        ("POST", "/v1/completions", False),
        ("POST", "/v1/responses", False),
        ("POST", "/v1/messages", False),
        ("POST", "/v1/xchat/completions", False),
        ("POST", "/v1/chat/completionsx", False),
        ("POST", "/v1/embeddings", False),
    ],
)
def test_handles(method: str, path: str, expected: bool) -> None:
    assert CODEC.handles(method, path) is expected


# -- HTTP errors ----------------------------------------------------------------------

ERROR_CLASSES = {
    400: openai.BadRequestError,
    401: openai.AuthenticationError,
    403: openai.PermissionDeniedError,
    404: openai.NotFoundError,
    409: openai.ConflictError,
    413: openai.APIStatusError,
    422: openai.UnprocessableEntityError,
    429: openai.RateLimitError,
    500: openai.InternalServerError,
    503: openai.InternalServerError,
    529: openai.InternalServerError,
}
DEFAULT_TYPES = {
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    404: ("invalid_request_error", "model_not_found"),
    429: ("requests", "rate_limit_exceeded"),
    500: ("server_error", None),
    503: ("server_error", None),
    529: ("server_error", None),
}


def error_handler(fault: Fault, seen: list[int]) -> Any:
    def handler(request: httpx2.Request) -> httpx2.Response:
        seen.append(1)
        ctx = ctx_for(CODEC, json.loads(request.content))
        err = CODEC.error_response(fault, ctx)
        return httpx2.Response(err.status, headers=err.headers, content=err.content())

    return handler


@pytest.mark.parametrize("status", sorted(ERROR_CLASSES))
def test_http_errors_raise_the_sdk_exception(status: int) -> None:
    seen: list[int] = []
    sdk = client(error_handler(Fault.http(status), seen))
    with pytest.raises(openai.APIStatusError) as info:
        sdk.chat.completions.create(model="gpt-4o", messages=MESSAGES)
    err = info.value
    assert type(err) is ERROR_CLASSES[status]
    assert err.status_code == status
    assert isinstance(err.body, dict)
    assert set(err.body) == {"message", "type", "param", "code"}
    assert err.message == f"Error code: {status} - {err.body['message']}"
    assert err.body["message"]  # a default message when the fault gives none
    if status in DEFAULT_TYPES:
        assert (err.type, err.code) == DEFAULT_TYPES[status]
    assert re.fullmatch(r"req_[0-9a-f]{32}", err.request_id or "")
    assert err.response.headers["content-type"].startswith("application/json")
    assert "x-should-retry" not in err.response.headers  # OpenAI does not send it
    assert seen == [1]


def test_404_names_the_requested_model_like_the_real_api() -> None:
    sdk = client(error_handler(Fault.http(404), []))
    with pytest.raises(openai.NotFoundError) as info:
        sdk.chat.completions.create(model="gpt-5.2-proo", messages=MESSAGES)
    # The wording of the real 404 in tests/corpus/real/openai_chat/…model_name_suggestion…
    assert info.value.body == {
        "message": "The model `gpt-5.2-proo` does not exist or you do not have access to it.",
        "type": "invalid_request_error",
        "param": None,
        "code": "model_not_found",
    }


def test_error_type_and_message_are_honoured() -> None:
    fault = Fault.http(429, "You exceeded your current quota.", error_type="insufficient_quota")
    body = CODEC.error_response(fault, RenderContext()).body
    assert body == {
        "error": {
            "message": "You exceeded your current quota.",
            "type": "insufficient_quota",
            "param": None,
            "code": "insufficient_quota",
        }
    }
    custom = CODEC.error_response(
        Fault.http(400, "x", error_type="context_length_exceeded"), RenderContext()
    ).body["error"]
    assert (custom["type"], custom["code"]) == ("invalid_request_error", "context_length_exceeded")


def test_retry_after_header_format() -> None:
    whole = CODEC.error_response(Fault.http(429, retry_after=2.0), RenderContext()).headers
    assert whole["retry-after"] == "2"
    assert "retry-after-ms" not in whole
    part = CODEC.error_response(Fault.http(503, retry_after=0.25), RenderContext()).headers
    assert part["retry-after"] == "1"
    assert part["retry-after-ms"] == "250"
    assert "retry-after" not in CODEC.error_response(Fault.http(500), RenderContext()).headers


def error_then_success(fault: Fault) -> FakeServer:
    err = CODEC.error_response(fault, RenderContext())
    first = httpx2.Response(err.status, headers=err.headers, content=err.content())
    return FakeServer(CODEC, [Reply.text("Recovered.")], responses=[first])


def test_retry_after_is_honoured_then_the_retry_succeeds() -> None:
    server = error_then_success(Fault.http(429, retry_after=0.01))
    result = client(server, max_retries=1).chat.completions.create(
        model="gpt-4o", messages=MESSAGES
    )
    assert result.choices[0].message.content == "Recovered."
    assert len(server.requests) == 2


def test_retry_after_is_honoured_async() -> None:
    server = error_then_success(Fault.http(503, retry_after=0.01))

    async def run() -> str | None:
        sdk = async_client(server, max_retries=1)
        result = await sdk.chat.completions.create(model="gpt-4o", messages=MESSAGES)
        return result.choices[0].message.content

    assert asyncio.run(run()) == "Recovered."
    assert len(server.requests) == 2


def test_x_should_retry_false_stops_retries() -> None:
    server = error_then_success(Fault.http(400, "bad", retry_after=0.01))
    with pytest.raises(openai.BadRequestError):
        client(server, max_retries=1).chat.completions.create(model="gpt-4o", messages=MESSAGES)
    assert len(server.requests) == 1


def test_x_should_retry_header_overrides_the_status_rule() -> None:
    # 400 is never retried by status alone; the header is what the SDK obeys.
    err = CODEC.error_response(Fault.http(400, "flaky", retry_after=0.01), RenderContext())
    headers = {**err.headers, "x-should-retry": "true"}
    first = httpx2.Response(400, headers=headers, content=err.content())
    server = FakeServer(CODEC, [Reply.text("ok")], responses=[first])
    result = client(server, max_retries=1).chat.completions.create(
        model="gpt-4o", messages=MESSAGES
    )
    assert result.choices[0].message.content == "ok"
    assert len(server.requests) == 2


# -- in-stream errors -----------------------------------------------------------------


def interrupted(after: int, fault: Fault) -> list[SSEEvent]:
    events = CODEC.render_events(Reply.text("one two three four five"), ctx_for(CODEC, STREAM_BODY))
    return [*events[:after], CODEC.error_event(fault, RenderContext())]


def test_error_event_raises_api_error_after_the_partial_text() -> None:
    fault = Fault.error_event("server_error", "The server had an error while processing.")
    events = interrupted(4, fault)
    assert events[-1].event is None
    assert json.loads(events[-1].data) == {
        "error": {
            "message": "The server had an error while processing.",
            "type": "server_error",
            "param": None,
            "code": None,
        }
    }
    sdk = client(lambda _: sse_response(encode(events), {"content-type": "text/event-stream"}))
    seen: list[str] = []

    def consume() -> None:
        for chunk in sdk.chat.completions.create(model="gpt-4o", messages=MESSAGES, stream=True):
            seen.extend(c.delta.content or "" for c in chunk.choices)

    with pytest.raises(openai.APIError) as info:
        consume()
    assert "".join(seen) == "one two three"
    assert not isinstance(info.value, openai.APIStatusError)
    assert info.value.message == "The server had an error while processing."
    assert info.value.type == "server_error"
    folded = CODEC.fold_detailed(events)
    assert folded.error == info.value.body
    assert not folded.complete
    assert folded.body["choices"][0]["message"]["content"] == "one two three"


def test_error_event_through_the_stream_helper_async() -> None:
    events = interrupted(3, Fault.error_event())
    body = encode(events)

    async def run() -> tuple[list[str], openai.APIError]:
        sdk = async_client(lambda _: sse_response(body, {"content-type": "text/event-stream"}, [3]))
        deltas_seen: list[str] = []
        try:
            async with sdk.chat.completions.stream(model="gpt-4o", messages=MESSAGES) as stream:
                async for event in stream:
                    if event.type == "content.delta":
                        deltas_seen.append(event.delta)
        except openai.APIError as exc:
            return deltas_seen, exc
        raise AssertionError("no error raised")

    seen, err = asyncio.run(run())
    assert "".join(seen) == "one two"
    # Fault.error_event() with no type or message: OpenAI's own words for a failing server.
    assert (err.type, err.code) == ("server_error", None)
    assert err.message == "The server had an error while processing your request. Sorry about that!"


# -- malformed and unknown events -----------------------------------------------------


def chunk(delta: dict[str, Any], **extra: Any) -> SSEEvent:
    return SSEEvent(
        data=json.dumps(
            {
                "id": "c1",
                "object": "chat.completion.chunk",
                "created": 1,
                "model": "m",
                "choices": [{"index": 0, "delta": delta, "finish_reason": None}],
                **extra,
            }
        )
    )


OPEN = chunk({"role": "assistant", "content": ""})


@pytest.mark.parametrize(
    ("events", "index", "field"),
    [
        ([OPEN, SSEEvent(data="{not json")], 1, "data"),
        ([OPEN, SSEEvent(data="[1, 2]")], 1, "data"),
        ([OPEN, SSEEvent(data='{"object": "chat.completion.chunk", "choices": {}}')], 1, "choices"),
        (
            [
                OPEN,
                SSEEvent(data='{"object": "chat.completion.chunk", "choices": [{"delta": {}}]}'),
            ],
            1,
            "choices[0].index",
        ),
        (
            [OPEN, chunk({"tool_calls": [{"index": 0, "function": {"arguments": "{}"}}]})],
            1,
            "choices[0].delta.tool_calls[0].index",
        ),
        (
            [
                OPEN,
                chunk({"tool_calls": [{"index": 1, "id": "call_b", "function": {"name": "f"}}]}),
            ],
            1,
            "choices[0].delta.tool_calls[0].index",
        ),
        (
            [OPEN, chunk({"tool_calls": [{"index": 0, "id": "c", "function": {"arguments": 5}}]})],
            1,
            "choices[0].delta.tool_calls[0].function.arguments",
        ),
        ([OPEN, chunk({"content": 12})], 1, "choices[0].delta.content"),
        ([OPEN, chunk({"content": [{"text": "no type"}]})], 1, "choices[0].delta.content[0].type"),
        ([OPEN, SSEEvent(event="error", data=OPEN.data)], 1, "error"),
    ],
)
def test_malformed_events_name_event_and_field(
    events: list[SSEEvent], index: int, field: str
) -> None:
    with pytest.raises(CodecError) as info:
        CODEC.fold_detailed(events)
    assert info.value.event_index == index
    assert info.value.field == field
    assert f"event #{index}" in str(info.value)


def test_unknown_events_are_kept_and_strict_refuses_them() -> None:
    events = [
        OPEN,
        SSEEvent(event="ping", data="{}"),
        chunk({"content": "Hi"}),
        SSEEvent(data='{"object": "chat.completion.annotation", "x": 1}'),
        chunk({}, usage={"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}),
        SSEEvent(data="[DONE]"),
    ]
    folded = CODEC.fold_detailed(events)
    assert folded.unknown == [1, 3]
    assert folded.complete
    assert folded.body["choices"][0]["message"]["content"] == "Hi"
    with pytest.raises(CodecError) as info:
        CODEC.fold_detailed(events, strict=True)
    assert info.value.event_index == 1
    with pytest.raises(CodecError) as info:
        CODEC.fold_detailed([e for i, e in enumerate(events) if i != 1], strict=True)
    assert (info.value.event_index, info.value.field) == (2, "object")


def test_stream_without_done_is_incomplete_with_partial_body() -> None:
    events = CODEC.render_events(
        Reply.tool_call("f", {"a": "long value here"}), ctx_for(CODEC, STREAM_BODY)
    )
    partial = CODEC.fold_detailed(events[:4])
    assert not partial.complete
    assert partial.error is None
    call = partial.body["choices"][0]["message"]["tool_calls"][0]
    assert call["function"]["name"] == "f"
    assert '{"a":"long value here"}'.startswith(call["function"]["arguments"])
    assert partial.body["choices"][0]["finish_reason"] is None
    nothing = CODEC.fold_detailed([])
    assert (nothing.complete, nothing.body["choices"]) == (False, [])


def test_choices_are_folded_by_index_whatever_their_order() -> None:
    def c(index: int, delta: dict[str, Any], finish: str | None = None) -> SSEEvent:
        return SSEEvent(
            data=json.dumps(
                {
                    "id": "x",
                    "object": "chat.completion.chunk",
                    "created": 1,
                    "model": "m",
                    "choices": [{"index": index, "delta": delta, "finish_reason": finish}],
                }
            )
        )

    events = [
        c(1, {"role": "assistant", "content": "B"}),
        c(0, {"role": "assistant", "content": "A"}),
        c(1, {"content": "b"}, "stop"),
        c(0, {"content": "a"}, "length"),
        SSEEvent(data="[DONE]"),
    ]
    body = CODEC.fold(events)
    assert [
        (ch["index"], ch["message"]["content"], ch["finish_reason"]) for ch in body["choices"]
    ] == [(0, "Aa", "length"), (1, "Bb", "stop")]


def test_iter_events_is_lazy_and_equals_render_events() -> None:
    reply = Reply(parts=[Text(text="word " * 5000), ToolCall(name="f", args={"k": "v"})])
    lazy = CODEC.iter_events(reply, ctx_for(CODEC, STREAM_BODY))
    assert inspect.isgenerator(lazy)
    assert json.loads(next(lazy).data)["choices"][0]["delta"]["role"] == "assistant"
    rest = [json.loads(next(lazy).data)["choices"][0]["delta"] for _ in range(2)]
    assert rest == [{"content": "word"}, {"content": " word"}]
    assert list(CODEC.iter_events(reply, ctx_for(CODEC, STREAM_BODY))) == CODEC.render_events(
        reply, ctx_for(CODEC, STREAM_BODY)
    )

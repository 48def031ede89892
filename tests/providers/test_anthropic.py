"""The Anthropic Messages codec, checked against the real ``anthropic`` SDK.

Every check serves our bytes to the SDK through ``httpx2.MockTransport`` and
compares with what the SDK itself builds: its non-streaming parse, its own
stream accumulator (``MessageStream.get_final_message()``), its exception
classes and retry policy, and the request JSON it sends. Expected values come
from the SDK, the real recordings in ``tests/corpus`` or Anthropic's documented
error table, never from the codec's own output for the same input.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import anthropic
import httpx2
import pytest
from anthropic.types import Message
from anthropic.types.beta import BetaMessage
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_agentreplay.errors import CodecError
from pytest_agentreplay.neutral import (
    Fault,
    Other,
    Reply,
    Request,
    Text,
    Thinking,
    ToolCall,
    ToolResult,
    Usage,
)
from pytest_agentreplay.providers import codec_for, detect
from pytest_agentreplay.providers.anthropic import AnthropicCodec
from pytest_agentreplay.providers.base import IdFactory, RenderContext
from pytest_agentreplay.sse import SSEEvent, decode, encode
from tests import corpus
from tests.gen import replies

pytestmark = pytest.mark.sdk

CODEC = AnthropicCodec()
MODEL = "claude-sonnet-4-6"
ASK: dict[str, Any] = {
    "model": MODEL,
    "max_tokens": 1024,
    "messages": [{"role": "user", "content": "Hi"}],
}
Handler = Callable[[httpx2.Request], httpx2.Response]
STREAMS = corpus.streams("anthropic")  # the 18 real recorded 200 streams


# -- helpers ---------------------------------------------------------------------------


def ctx(seed: str = "t", **kwargs: Any) -> RenderContext:
    """A fresh context: two with the same seed draw the same ids."""
    return RenderContext(ids=IdFactory(seed), **kwargs)


def client(handler: Handler, *, max_retries: int = 0) -> anthropic.Anthropic:
    transport = httpx2.MockTransport(handler)
    return anthropic.Anthropic(
        api_key="test", max_retries=max_retries, http_client=httpx2.Client(transport=transport)
    )


def async_client(handler: Any) -> anthropic.AsyncAnthropic:
    transport = httpx2.MockTransport(handler)
    return anthropic.AsyncAnthropic(
        api_key="test", max_retries=0, http_client=httpx2.AsyncClient(transport=transport)
    )


def json_response(body: dict[str, Any], status: int = 200, **headers: str) -> httpx2.Response:
    return httpx2.Response(
        status, headers={"content-type": "application/json", **headers}, json=body
    )


def sse_response(chunks: list[bytes]) -> httpx2.Response:
    return httpx2.Response(
        200, headers={"content-type": "text/event-stream; charset=utf-8"}, content=iter(chunks)
    )


def async_sse_response(chunks: list[bytes]) -> httpx2.Response:
    async def gen() -> AsyncIterator[bytes]:
        for chunk in chunks:
            yield chunk

    return httpx2.Response(
        200, headers={"content-type": "text/event-stream; charset=utf-8"}, content=gen()
    )


def cut(data: bytes, points: list[int]) -> list[bytes]:
    """``data`` split at ``points`` (byte offsets; anywhere, even inside a character)."""
    edges = [0, *sorted({p for p in points if 0 < p < len(data)}), len(data)]
    return [data[a:b] for a, b in itertools.pairwise(edges) if b > a]


@st.composite
def chunkings(draw: st.DrawFn, data: bytes) -> list[bytes]:
    """A random re-chunking of ``data``: one chunk, single bytes, or random cuts."""
    mode = draw(st.sampled_from(["whole", "bytes", "random"]))
    if mode == "whole" or len(data) < 2:
        return [data]
    if mode == "bytes":
        return [data[i : i + 1] for i in range(len(data))]
    points = draw(st.lists(st.integers(1, len(data) - 1), max_size=40))
    return cut(data, points)


def sdk_create(body: dict[str, Any]) -> Message:
    return client(lambda _: json_response(body)).messages.create(**ASK)


def sdk_stream(chunks: list[bytes]) -> Message:
    with client(lambda _: sse_response(chunks)).messages.stream(**ASK) as stream:
        return stream.get_final_message()


async def sdk_create_async(body: dict[str, Any]) -> Message:
    async def handler(_: httpx2.Request) -> httpx2.Response:
        return json_response(body)

    return await async_client(handler).messages.create(**ASK)


async def sdk_stream_async(chunks: list[bytes]) -> Message:
    async def handler(_: httpx2.Request) -> httpx2.Response:
        return async_sse_response(chunks)

    async with async_client(handler).messages.stream(**ASK) as stream:
        return await stream.get_final_message()


def without_ids(parts: list[Any]) -> list[Any]:
    """Parts with generated fields (tool ids, thinking signatures) blanked."""
    out = []
    for part in parts:
        if isinstance(part, ToolCall):
            out.append(part.model_copy(update={"id": None}))
        elif isinstance(part, Thinking):
            out.append(part.model_copy(update={"signature": None}))
        else:
            out.append(part)
    return out


# -- equivalence: streaming and non-streaming agree in the SDK's eyes -------------------


@given(reply=replies(), data=st.data())
def test_stream_and_body_are_equivalent_to_the_sdk(reply: Reply, data: st.DataObject) -> None:
    body = CODEC.render_body(reply, ctx())
    stream_bytes = encode(CODEC.render_events(reply, ctx()))
    chunks = data.draw(chunkings(stream_bytes), label="chunks")

    created = sdk_create(body)
    streamed = sdk_stream(chunks)
    # No exclusions: Anthropic's stream carries every field of the Message
    # (message_start has id/model/usage, message_delta the stop reason and totals).
    assert streamed.model_dump() == created.model_dump()
    # ...and both are the reply we rendered.
    assert [b.type for b in created.content] == [
        {"text": "text", "tool_call": "tool_use", "thinking": "thinking"}[p.kind]
        for p in reply.parts
    ]


@settings(max_examples=25)
@given(reply=replies(), data=st.data())
def test_stream_and_body_are_equivalent_async(reply: Reply, data: st.DataObject) -> None:
    body = CODEC.render_body(reply, ctx())
    chunks = data.draw(chunkings(encode(CODEC.render_events(reply, ctx()))), label="chunks")

    async def both() -> tuple[Message, Message]:
        return await sdk_create_async(body), await sdk_stream_async(chunks)

    created, streamed = asyncio.run(both())
    assert streamed.model_dump() == created.model_dump()


@given(reply=replies())
def test_fold_of_events_is_the_body_and_round_trips(reply: Reply) -> None:
    body = CODEC.render_body(reply, ctx())
    folded = CODEC.fold_detailed(CODEC.render_events(reply, ctx()), strict=True)
    assert folded.complete
    assert folded.error is None
    assert folded.unknown == []
    assert json.loads(json.dumps(folded.body)) == json.loads(json.dumps(body))

    back = CODEC.to_reply(folded.body)
    assert without_ids(back.parts) == without_ids(reply.parts)
    assert back.usage == (reply.usage or ctx().usage_for(reply))
    assert back.stop == reply.stop_reason
    assert back.model == "fake-model"
    # Given ids and signatures are kept; missing ones are generated, distinct, realistic.
    for mine, theirs in zip(back.parts, reply.parts, strict=True):
        if isinstance(theirs, ToolCall):
            assert isinstance(mine, ToolCall)
            assert mine.id == theirs.id or (theirs.id is None and mine.id.startswith("toolu_01"))
        if isinstance(theirs, Thinking):
            assert isinstance(mine, Thinking)
            assert mine.signature == theirs.signature or (
                theirs.signature is None and mine.signature
            )
    ids = [p.id for p in back.parts if isinstance(p, ToolCall)]
    assert len(set(ids)) == len(ids)


def test_multibyte_text_fed_one_byte_at_a_time() -> None:
    reply = Reply(
        parts=[
            Thinking(text="héllo wörld ✓ 思考"),
            Text(text="Grüße 👋🏽 — 東京\u2028line sep \x85 nel"),
            ToolCall(name="look", args={"q": "naïve ☃", "n": [1.5, -2, None, True]}),
        ],
        usage=Usage(
            input_tokens=7,
            output_tokens=9,
            cache_read_input_tokens=3,
            cache_creation_input_tokens=2,
            reasoning_tokens=4,
        ),
    )
    data = encode(CODEC.render_events(reply, ctx()))
    streamed = sdk_stream([data[i : i + 1] for i in range(len(data))])
    created = sdk_create(CODEC.render_body(reply, ctx()))
    assert streamed.model_dump() == created.model_dump()
    assert streamed.content[1].text == "Grüße 👋🏽 — 東京\u2028line sep \x85 nel"
    assert streamed.content[2].input == {"q": "naïve ☃", "n": [1.5, -2, None, True]}
    assert streamed.usage.cache_read_input_tokens == 3
    assert streamed.usage.output_tokens_details.thinking_tokens == 4


@pytest.mark.parametrize(
    "reply",
    [Reply(), Reply.failure(Fault.empty()), Reply(parts=[], stop="max_tokens")],
    ids=["no-parts", "fault-empty", "max-tokens"],
)
def test_empty_reply_is_a_valid_empty_completion(reply: Reply) -> None:
    created = sdk_create(CODEC.render_body(reply, ctx()))
    streamed = sdk_stream([encode(CODEC.render_events(reply, ctx()))])
    assert created.content == []
    assert created.stop_reason == (reply.stop or "end_turn")
    assert streamed.model_dump() == created.model_dump()


def test_event_sequence_has_the_real_api_shape() -> None:
    reply = Reply(parts=[Text(text="Hi there"), ToolCall(name="f", args={"a": 1})], stop=None)
    events = CODEC.render_events(reply, ctx())
    names = [e.event for e in events]
    assert names[:3] == ["message_start", "content_block_start", "ping"]
    assert names.count("ping") == 1
    assert names[-2:] == ["message_delta", "message_stop"]
    assert all(e.event == json.loads(e.data)["type"] for e in events)
    starts = [json.loads(e.data) for e in events if e.event == "content_block_start"]
    assert [s["index"] for s in starts] == [0, 1]
    assert starts[1]["content_block"]["input"] == {}
    json_deltas = [
        json.loads(e.data)["delta"]["partial_json"]
        for e in events
        if e.event == "content_block_delta" and "input_json" in e.data
    ]
    assert json_deltas[0] == ""  # the API opens tool input with an empty fragment
    assert json.loads("".join(json_deltas)) == {"a": 1}
    delta = json.loads(events[-2].data)
    assert delta["delta"]["stop_reason"] == "tool_use"


def key_paths(value: Any, path: str = "") -> set[str]:
    """Every key path in a JSON value: ``.message.usage.output_tokens``, ..."""
    if not isinstance(value, dict):
        return set()
    out = set()
    for key, inner in value.items():
        out |= {f"{path}.{key}"} | key_paths(inner, f"{path}.{key}")
    return out


def shape_kind(data: dict[str, Any]) -> str:
    """An event's type plus its block or delta type: ``content_block_delta:text_delta``."""
    block = data.get("content_block") or data.get("delta") or {}
    return f"{data['type']}:{block.get('type', '')}"


def test_rendered_events_only_use_fields_the_real_api_sends() -> None:
    real: dict[str, set[str]] = {}
    for item in STREAMS:
        for e in decode(item.body).events:
            data = json.loads(e.data)
            real.setdefault(shape_kind(data), set()).update(key_paths(data))
    reply = Reply(
        parts=[Thinking(text="Hmm."), Text(text="Hi."), ToolCall(name="f", args={"x": [1]})],
        usage=Usage(
            input_tokens=5,
            output_tokens=6,
            cache_creation_input_tokens=1,
            cache_read_input_tokens=2,
        ),
    )
    for e in CODEC.render_events(reply, ctx()):
        data = json.loads(e.data)
        assert key_paths(data) <= real[shape_kind(data)], shape_kind(data)


def test_thinking_gets_a_signature_when_none_given() -> None:
    reply = Reply(parts=[Thinking(text="why"), Text(text="because")])
    body = CODEC.render_body(reply, ctx())
    signature = body["content"][0]["signature"]
    assert isinstance(signature, str)
    assert len(signature) >= 64
    assert len(set(signature)) > 20  # not a padded constant
    assert CODEC.render_body(reply, ctx("other"))["content"][0]["signature"] != signature


def test_stop_sequence_and_refusal_details() -> None:
    request = CODEC.parse_request({**ASK, "stop_sequences": ["END", "STOP"]})
    body = CODEC.render_body(Reply.text("x", stop="stop_sequence"), ctx(request=request))
    message = sdk_create(body)
    assert (message.stop_reason, message.stop_sequence) == ("stop_sequence", "END")
    refusal = sdk_stream([encode(CODEC.render_events(Reply.text("no", stop="refusal"), ctx()))])
    assert refusal.stop_reason == "refusal"
    assert refusal.stop_details is not None
    assert refusal.stop_details.type == "refusal"


# -- corpus: our fold vs the SDK's accumulator on the same real bytes --------------------


def sdk_final(item: corpus.CorpusInteraction) -> Any:
    """The SDK's own accumulated message for ``item``'s bytes (beta API for beta URLs,
    whose accumulator also knows beta deltas such as ``compaction_delta``)."""
    beta = "beta=true" in (item.url or "")
    sdk = client(lambda _: sse_response(cut(item.body, list(range(0, len(item.body), 997)))))
    messages = sdk.beta.messages if beta else sdk.messages
    with messages.stream(**ASK) as stream:
        return stream.get_final_message()


def sdk_parse(item: corpus.CorpusInteraction, body: dict[str, Any]) -> Any:
    """``body`` parsed as the SDK parses a JSON response (lenient construction)."""
    model = BetaMessage if "beta=true" in (item.url or "") else Message
    return model.model_construct(**body)


def test_corpus_has_the_expected_anthropic_streams() -> None:
    assert len(STREAMS) == 18


@pytest.mark.parametrize("item", STREAMS, ids=[s.id for s in STREAMS])
def test_corpus_stream_folds_like_the_sdk(item: corpus.CorpusInteraction) -> None:
    decoded = decode(item.body)
    folded = CODEC.fold_detailed(decoded.events, strict=True)
    assert folded.error is None
    assert folded.unknown == []
    assert sdk_parse(item, folded.body).model_dump() == sdk_final(item).model_dump()
    names = [e.event for e in decoded.events]
    # Complete exactly when message_stop was dispatched. The three raw SDK fixtures
    # end without a blank line, so their message_stop is never dispatched (by us or
    # by the SDK): they fold to everything else, reported incomplete.
    assert folded.complete == ("message_stop" in names)
    assert (decoded.truncated is not None) == item.file.name.endswith(".sse.txt")
    if decoded.truncated is not None:
        assert decoded.truncated.partial is not None
        assert decoded.truncated.partial.event == "message_stop"
        fixed = CODEC.fold_detailed(decode(item.body + b"\n\n").events)
        assert fixed.complete
        assert fixed.body == folded.body


def test_corpus_truncated_tool_input_is_parsed_partially() -> None:
    (item,) = [s for s in STREAMS if "incomplete_partial_json" in s.id]
    body = CODEC.fold(decode(item.body).events)
    assert body["stop_reason"] == "max_tokens"
    tool = body["content"][-1]
    assert tool["type"] == "tool_use"
    assert isinstance(tool["input"], dict)  # a partial object, as the SDK builds it
    assert tool["input"] == sdk_final(item).content[-1].input


FOLLOW_UPS = [
    s
    for s in STREAMS
    if s.index == 0 and any(t.id == f"{s.file.parent.name}/{s.file.name}#1" for t in STREAMS)
]


@pytest.mark.parametrize("item", FOLLOW_UPS, ids=[s.id for s in FOLLOW_UPS])
def test_corpus_fold_agrees_with_the_turn_the_client_sent_back(
    item: corpus.CorpusInteraction,
) -> None:
    """No recording holds a stream and its own non-streaming twin, but each of these
    agents sent the streamed answer back as the assistant turn of its next request:
    that JSON is the client's non-streaming view of the same message. Agents may add
    or drop fields (e.g. ``caller``), so shared fields of each block are compared."""
    (follow,) = [
        i for i in corpus.load(item.file) if i.index == 1 and isinstance(i.request_body, dict)
    ]
    echoed = next(m for m in follow.request_body["messages"] if m["role"] == "assistant")
    folded = CODEC.fold(decode(item.body).events)["content"]
    assert [b["type"] for b in folded] == [b["type"] for b in echoed["content"]]
    for mine, sent in zip(folded, echoed["content"], strict=True):
        shared = set(mine) & set(sent)
        assert {k: mine[k] for k in shared} == {k: sent[k] for k in shared}
    # The neutral views agree too: our reply's tool calls are the request's tool calls.
    request = CODEC.parse_request(follow.request_body)
    sent_calls = [p for m in request.messages for p in m.parts if isinstance(p, ToolCall)]
    assert CODEC.to_reply({"content": folded}).tool_calls == sent_calls
    answered = {r.tool_call_id for r in request.tool_results}
    assert {c.id for c in sent_calls if c.name != "tool_search_tool_bm25"} <= answered


def test_corpus_json_body_to_reply() -> None:
    (first, second) = corpus.load(
        corpus.CORPUS / "anthropic" / "pydantic-ai__test_multiple_parallel_tool_calls.yaml"
    )
    reply = CODEC.to_reply(json.loads(first.body))
    assert [c.args for c in reply.tool_calls] == [
        {"name": n} for n in ("Alice", "Bob", "Charlie", "Daisy")
    ]
    assert reply.stop == "tool_use"
    assert reply.usage == Usage(
        input_tokens=423,
        output_tokens=202,
        cache_creation_input_tokens=0,
        cache_read_input_tokens=0,
    )
    request = CODEC.parse_request(second.request_body)
    assert [r.tool_call_id for r in request.tool_results] == [c.id for c in reply.tool_calls]


# -- errors --------------------------------------------------------------------------------

# Anthropic's documented error table (docs.claude.com/en/api/errors) and the SDK's
# exception class for each status.
ERROR_TABLE = [
    (400, "invalid_request_error", anthropic.BadRequestError),
    (401, "authentication_error", anthropic.AuthenticationError),
    (402, "billing_error", anthropic.PaymentRequiredError),
    (403, "permission_error", anthropic.PermissionDeniedError),
    (404, "not_found_error", anthropic.NotFoundError),
    (409, "conflict_error", anthropic.ConflictError),
    (413, "request_too_large", anthropic.ContentTooLargeError),
    (422, "invalid_request_error", anthropic.UnprocessableEntityError),
    (429, "rate_limit_error", anthropic.RateLimitError),
    (500, "api_error", anthropic.InternalServerError),
    (503, "api_error", anthropic.ServiceUnavailableError),
    (504, "timeout_error", anthropic.GatewayTimeoutError),
    (529, "overloaded_error", anthropic.OverloadedError),
]


def error_handler(response: Any, calls: list[httpx2.Request]) -> Handler:
    def handler(request: httpx2.Request) -> httpx2.Response:
        calls.append(request)
        return httpx2.Response(
            response.status, headers=response.headers, content=response.content()
        )

    return handler


@pytest.mark.parametrize(
    ("status", "kind", "exc"), ERROR_TABLE, ids=[str(r[0]) for r in ERROR_TABLE]
)
def test_error_response_raises_the_sdk_exception(status: int, kind: str, exc: type) -> None:
    response = CODEC.error_response(Fault.http(status, "it broke"), ctx())
    calls: list[httpx2.Request] = []
    with pytest.raises(exc) as info:
        client(error_handler(response, calls)).messages.create(**ASK)
    err = info.value
    assert err.status_code == status
    assert err.type == kind
    assert err.api_message == "it broke"
    assert err.body == {
        "type": "error",
        "error": {"type": kind, "message": "it broke"},
        "request_id": err.request_id,
    }
    assert err.request_id.startswith("req_")
    assert err.response.headers["content-type"] == "application/json"
    assert len(calls) == 1


def test_error_defaults_message_and_type_overrides() -> None:
    overloaded = CODEC.error_response(Fault.http(529), ctx())
    assert overloaded.body["error"] == {"type": "overloaded_error", "message": "Overloaded"}
    assert CODEC.error_response(Fault.http(418), ctx()).body["error"]["type"] == (
        "invalid_request_error"  # "we may also use this error type for other 4XX codes"
    )
    assert CODEC.error_response(Fault.http(502), ctx()).body["error"]["type"] == "api_error"
    custom = CODEC.error_response(Fault.http(400, error_type="billing_error"), ctx())
    assert custom.body["error"]["type"] == "billing_error"
    assert custom.body["error"]["message"]
    for status in (400, 401, 403, 404, 413, 429, 500, 529):
        assert CODEC.error_response(Fault.http(status), ctx()).body["error"]["message"]
    with pytest.raises(ValueError, match=r"Fault\.http"):
        CODEC.error_response(Fault.cut(), ctx())


def test_error_request_id_header_matches_body() -> None:
    response = CODEC.error_response(Fault.http(500), ctx())
    assert response.headers["request-id"] == response.body["request_id"]
    assert json.loads(response.content()) == response.body


@pytest.mark.parametrize(
    ("retry_after", "header"), [(2.0, "2"), (7, "7"), (0.25, "0.25"), (None, None)]
)
def test_retry_after_header_format(retry_after: float | None, header: str | None) -> None:
    response = CODEC.error_response(Fault.http(429, retry_after=retry_after), ctx())
    assert response.headers.get("retry-after") == header


def test_sdk_honours_retry_after_then_succeeds(monkeypatch: pytest.MonkeyPatch) -> None:
    slept: list[float] = []
    monkeypatch.setattr(anthropic._base_client.time, "sleep", slept.append)
    failure = CODEC.error_response(Fault.http(429, retry_after=7), ctx())
    good = CODEC.render_body(Reply.text("finally"), ctx())
    calls: list[httpx2.Request] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        calls.append(request)
        if len(calls) == 1:
            return error_handler(failure, [])(request)
        return json_response(good)

    message = client(handler, max_retries=1).messages.create(**ASK)
    assert message.content[0].text == "finally"
    assert slept == [7.0]
    assert [c.headers["x-stainless-retry-count"] for c in calls] == ["0", "1"]


@pytest.mark.parametrize(
    ("status", "retried"),
    [(400, False), (401, False), (404, False), (409, True), (429, True), (500, True), (529, True)],
)
def test_x_should_retry_is_respected(
    status: int,
    retried: bool,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(anthropic._base_client.time, "sleep", lambda _: None)
    response = CODEC.error_response(Fault.http(status), ctx())
    assert response.headers["x-should-retry"] == ("true" if retried else "false")
    calls: list[httpx2.Request] = []
    with pytest.raises(anthropic.APIStatusError):
        client(error_handler(response, calls), max_retries=1).messages.create(**ASK)
    assert len(calls) == (2 if retried else 1)


def test_x_should_retry_false_overrides_sdk_default(monkeypatch: pytest.MonkeyPatch) -> None:
    """The SDK would retry a 500 on its own; the header must be what stops it."""
    monkeypatch.setattr(anthropic._base_client.time, "sleep", lambda _: None)
    response = CODEC.error_response(Fault.http(500), ctx())
    headers = {**response.headers, "x-should-retry": "false"}
    calls: list[httpx2.Request] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        calls.append(request)
        return httpx2.Response(500, headers=headers, content=response.content())

    with pytest.raises(anthropic.InternalServerError):
        client(handler, max_retries=1).messages.create(**ASK)
    assert len(calls) == 1


def stream_with_error(after: int, fault: Fault) -> tuple[list[SSEEvent], bytes]:
    events = CODEC.render_events(Reply.text("Partial answer that gets cut short"), ctx())
    sent = [*events[:after], CODEC.error_event(fault, ctx())]
    return sent, encode(sent)


def test_in_stream_error_raises_after_partial_text() -> None:
    sent, data = stream_with_error(5, Fault.error_event())
    assert sent[-1].event == "error"
    # The live API's shape: `details` null, and the request id of the response (none
    # here: the codec is called without one; the transport passes the header's).
    assert json.loads(sent[-1].data) == {
        "type": "error",
        "error": {"details": None, "type": "overloaded_error", "message": "Overloaded"},
        "request_id": None,
    }
    seen: list[str] = []
    sdk = client(lambda _: sse_response([data]))

    def consume() -> None:
        with sdk.messages.stream(**ASK) as stream:
            for text in stream.text_stream:
                seen.append(text)

    with pytest.raises(anthropic.APIStatusError) as info:
        consume()
    assert "".join(seen) == "Partial answer"  # delivered before the error
    err = info.value
    assert err.status_code == 200  # in-stream errors arrive on a 200 response
    assert err.type == "overloaded_error"
    assert err.api_message == "Overloaded"
    assert err.body == json.loads(sent[-1].data)

    folded = CODEC.fold_detailed(sent)
    assert folded.error == err.body
    assert not folded.complete
    assert folded.body["content"] == [{"type": "text", "text": "Partial answer"}]


def test_in_stream_error_async_and_custom_type() -> None:
    _, data = stream_with_error(4, Fault.error_event("api_error", "Internal server error"))

    async def run() -> list[str]:
        seen: list[str] = []

        async def handler(_: httpx2.Request) -> httpx2.Response:
            return async_sse_response([data[i : i + 7] for i in range(0, len(data), 7)])

        async def consume() -> None:
            async with async_client(handler).messages.stream(**ASK) as stream:
                async for text in stream.text_stream:
                    seen.append(text)

        with pytest.raises(anthropic.APIStatusError) as info:
            await consume()
        assert info.value.type == "api_error"
        return seen

    assert "".join(asyncio.run(run())) == "Partial"


def test_response_headers() -> None:
    streaming = CODEC.response_headers(ctx(), streaming=True)
    assert streaming["content-type"].startswith("text/event-stream")
    assert streaming["request-id"].startswith("req_")
    plain = CODEC.response_headers(ctx(), streaming=False)
    assert plain["content-type"] == "application/json"
    body = CODEC.render_body(Reply.text("hi"), ctx())
    message = client(lambda _: json_response(body, **plain)).messages.with_raw_response.create(
        **ASK
    )
    assert message.request_id == plain["request-id"]


# -- requests: what the real SDK sends, parsed -------------------------------------------


def captured(call: Callable[[anthropic.Anthropic], Any]) -> dict[str, Any]:
    """The JSON body the SDK sends for ``call``."""
    bodies: list[dict[str, Any]] = []
    reply = CODEC.render_body(Reply.text("ok"), ctx())

    def handler(request: httpx2.Request) -> httpx2.Response:
        bodies.append(json.loads(request.content))
        if bodies[-1].get("stream"):
            return sse_response([encode(CODEC.render_events(Reply.text("ok"), ctx()))])
        return json_response(reply)

    call(client(handler))
    (body,) = bodies
    return body


def test_request_text_and_system() -> None:
    body = captured(lambda c: c.messages.create(**ASK, system="Be brief."))
    request = CODEC.parse_request(body)
    assert request == Request(
        provider="anthropic",
        model=MODEL,
        system="Be brief.",
        messages=[{"role": "user", "parts": [Text(text="Hi")]}],
        raw=body,
    )
    blocks = captured(
        lambda c: c.messages.create(
            **ASK,
            system=[{"type": "text", "text": "One."}, {"type": "text", "text": "Two."}],
        )
    )
    assert CODEC.parse_request(blocks).system == "One.\nTwo."


def test_request_stream_flag() -> None:
    def call(c: anthropic.Anthropic) -> None:
        with c.messages.stream(**ASK) as stream:
            stream.until_done()

    assert CODEC.parse_request(captured(call)).stream is True
    assert CODEC.parse_request(captured(lambda c: c.messages.create(**ASK))).stream is False


def test_request_tool_loop() -> None:
    tools = [
        {
            "name": "weather",
            "description": "Weather for a city",
            "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
        {"type": "web_search_20250305", "name": "web_search", "max_uses": 2},
    ]
    messages = [
        {"role": "user", "content": "Weather in Leeds and York?"},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Checking."},
                {
                    "type": "tool_use",
                    "id": "toolu_1",
                    "name": "weather",
                    "input": {"city": "Leeds"},
                },
                {"type": "tool_use", "id": "toolu_2", "name": "weather", "input": {"city": "York"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "Rain"},
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_2",
                    "is_error": True,
                    "content": [
                        {"type": "text", "text": "Timed "},
                        {"type": "text", "text": "out"},
                    ],
                },
            ],
        },
    ]
    body = captured(
        lambda c: c.messages.create(
            model=MODEL,
            max_tokens=100,
            messages=messages,
            tools=tools,
        )
    )
    request = CODEC.parse_request(body)
    assert [m.role for m in request.messages] == ["user", "assistant", "user"]
    assert request.messages[1].parts == [
        Text(text="Checking."),
        ToolCall(name="weather", args={"city": "Leeds"}, id="toolu_1"),
        ToolCall(name="weather", args={"city": "York"}, id="toolu_2"),
    ]
    assert request.tool_results == [
        ToolResult(tool_call_id="toolu_1", content="Rain"),
        ToolResult(tool_call_id="toolu_2", content="Timed out", is_error=True),
    ]
    assert [(t.name, t.description) for t in request.tools] == [
        ("weather", "Weather for a city"),
        ("web_search", None),
    ]
    assert request.tools[0].parameters["properties"] == {"city": {"type": "string"}}
    # a message of tool results only is not the user's (issue 20): the question is
    assert request.last_user_text == "Weather in Leeds and York?"


def test_request_images_and_thinking() -> None:
    image = {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="},
    }
    messages = [
        {"role": "user", "content": [{"type": "text", "text": "What is this?"}, image]},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "A logo.", "signature": "EqSig=="},
                {"type": "redacted_thinking", "data": "EmRedacted"},
                {"type": "text", "text": "A logo."},
            ],
        },
        {"role": "user", "content": "Sure?"},
    ]
    body = captured(
        lambda c: c.messages.create(
            model=MODEL,
            max_tokens=2048,
            messages=messages,
            thinking={"type": "enabled", "budget_tokens": 1024},
        )
    )
    request = CODEC.parse_request(body)
    assert request.messages[0].parts == [
        Text(text="What is this?"),
        Other(type="image", data=image),
    ]
    assert request.messages[1].parts == [
        Thinking(text="A logo.", signature="EqSig=="),
        Other(type="redacted_thinking", data={"type": "redacted_thinking", "data": "EmRedacted"}),
        Text(text="A logo."),
    ]
    assert request.raw["thinking"] == {"type": "enabled", "budget_tokens": 1024}
    assert request.last_user_text == "Sure?"


@pytest.mark.parametrize(
    "item",
    [i for i in corpus.interactions() if i.provider == "anthropic" and i.request_body],
    ids=lambda i: i.id,
)
def test_request_parses_every_corpus_request(item: corpus.CorpusInteraction) -> None:
    request = CODEC.parse_request(item.request_body)
    assert request.model == item.request_body["model"]
    assert len(request.messages) == len(item.request_body["messages"])
    assert request.stream == bool(item.request_body.get("stream"))


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ([], None),
        ({"model": 3, "messages": []}, "model"),
        ({"messages": {"role": "user"}}, "messages"),
        ({"messages": ["hi"]}, "messages[0]"),
        ({"messages": [{"role": "system", "content": "x"}]}, "messages[0].role"),
        ({"messages": [{"role": "user", "content": 5}]}, "messages[0].content"),
        (
            {"messages": [{"role": "user", "content": [{"text": "x"}]}]},
            "messages[0].content[0].type",
        ),
        (
            {
                "messages": [
                    {"role": "user", "content": "a"},
                    {"role": "user", "content": [{"type": "text", "text": "ok"}, {"type": 7}]},
                ]
            },
            "messages[1].content[1].type",
        ),
        (
            {"messages": [{"role": "user", "content": [{"type": "text", "text": None}]}]},
            "messages[0].content[0].text",
        ),
        (
            {
                "messages": [
                    {
                        "role": "assistant",
                        "content": [{"type": "tool_use", "id": "t", "name": "f", "input": "{}"}],
                    }
                ]
            },
            "messages[0].content[0].input",
        ),
        (
            {"messages": [{"role": "user", "content": [{"type": "tool_result"}]}]},
            "messages[0].content[0].tool_use_id",
        ),
        ({"messages": [], "system": [{"type": "image"}]}, "system[0].type"),
        ({"messages": [], "tools": [{"description": "no name"}]}, "tools[0].name"),
        ({"messages": [], "stream": "yes"}, "stream"),
    ],
)
def test_bad_request_bodies_name_the_field(body: Any, field: str | None) -> None:
    with pytest.raises(CodecError) as info:
        CODEC.parse_request(body)
    assert info.value.field == field
    assert info.value.provider == "anthropic"
    if field:
        assert repr(field) in str(info.value)


def test_request_tolerates_none_content_and_missing_optionals() -> None:
    request = CODEC.parse_request({"messages": [{"role": "user", "content": None}]})
    assert request.messages[0].parts == []
    assert request.model is None
    assert request.system is None


# -- bad input to fold ------------------------------------------------------------------


def good_events() -> list[SSEEvent]:
    return CODEC.render_events(
        Reply(parts=[Text(text="Hello world"), ToolCall(name="f", args={"a": 1})]), ctx()
    )


def event(name: str | None, payload: Any) -> SSEEvent:
    return SSEEvent(event=name, data=payload if isinstance(payload, str) else json.dumps(payload))


def fold_error(events: list[SSEEvent], *, strict: bool = False) -> CodecError:
    with pytest.raises(CodecError) as info:
        CODEC.fold_detailed(events, strict=strict)
    return info.value


def test_fold_rejects_non_json_data() -> None:
    events = good_events()
    events[3] = SSEEvent(event="content_block_delta", data="{not json")
    err = fold_error(events)
    assert (err.event_index, err.field) == (3, "data")
    assert "event #3" in str(err)


def test_fold_rejects_delta_for_unopened_block() -> None:
    events = good_events()
    events.insert(
        2,
        event(
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 1,
                "delta": {"type": "text_delta", "text": "x"},
            },
        ),
    )
    err = fold_error(events)
    assert (err.event_index, err.field) == (2, "index")


def test_fold_rejects_delta_after_stop_and_blocks_out_of_order() -> None:
    events = good_events()
    stop_at = next(i for i, e in enumerate(events) if e.event == "content_block_stop")
    late = event(
        "content_block_delta",
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "text_delta", "text": "!"},
        },
    )
    err = fold_error([*events[: stop_at + 1], late])
    assert (err.event_index, err.field) == (stop_at + 1, "index")

    skipping = event(
        "content_block_start",
        {
            "type": "content_block_start",
            "index": 2,
            "content_block": {"type": "text", "text": ""},
        },
    )
    err = fold_error([events[0], skipping])
    assert (err.event_index, err.field) == (1, "index")


def test_fold_rejects_event_name_contradicting_type() -> None:
    events = good_events()
    events[1] = SSEEvent(event="content_block_delta", data=events[1].data)
    err = fold_error(events)
    assert (err.event_index, err.field) == (1, "type")
    assert "content_block_start" in str(err)


def test_fold_rejects_events_before_message_start_and_bad_fields() -> None:
    events = good_events()
    err = fold_error(events[1:])
    assert err.event_index == 0
    bad_text = event(
        "content_block_delta",
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "text_delta", "text": 5},
        },
    )
    err = fold_error([*events[:3], bad_text])
    assert (err.event_index, err.field) == (3, "delta.text")
    bad_usage = event("message_delta", {"type": "message_delta", "delta": {}, "usage": {}})
    err = fold_error([events[0], bad_usage])
    assert (err.event_index, err.field) == (1, "usage.output_tokens")


def test_fold_rejects_invalid_tool_json() -> None:
    events = good_events()
    i = next(i for i, e in enumerate(events) if '"partial_json":"{' in e.data)
    events[i] = event(
        "content_block_delta",
        {
            "type": "content_block_delta",
            "index": 1,
            "delta": {"type": "input_json_delta", "partial_json": "}{"},
        },
    )
    err = fold_error(events)
    assert (err.event_index, err.field) == (i, "delta.partial_json")


def test_unknown_events_are_kept_not_fatal_unless_strict() -> None:
    events = good_events()
    future = event("content_block_glimmer", {"type": "content_block_glimmer", "index": 0})
    new_delta = event(
        "content_block_delta",
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "sparkle_delta", "x": 1},
        },
    )
    nameless = SSEEvent(data=json.dumps({"type": "content_block_delta", "index": 0}))
    mixed = [*events[:3], future, new_delta, nameless, *events[3:]]
    folded = CODEC.fold_detailed(mixed)
    assert folded.unknown == [3, 4, 5]
    assert folded.complete
    assert folded.body == CODEC.fold(events)
    for index in (3, 4, 5):
        err = fold_error([*events[:3], mixed[index], *events[3:]], strict=True)
        assert err.event_index == 3


def test_ping_anywhere_is_ignored_and_cut_stream_is_incomplete() -> None:
    events = good_events()
    ping = SSEEvent(event="ping", data='{"type": "ping"}')
    with_pings = [x for e in events for x in (e, ping)]
    assert CODEC.fold_detailed(with_pings, strict=True).body == CODEC.fold(events)
    for k in range(len(events)):
        folded = CODEC.fold_detailed(events[:k])
        assert not folded.complete
    partial = CODEC.fold_detailed(events[:4])
    assert partial.body["content"] == [{"type": "text", "text": "Hello"}]
    assert CODEC.fold_detailed([]).body == {}
    after_stop = [*events, events[1]]
    assert fold_error(after_stop).event_index == len(events)


def test_error_event_stops_the_fold() -> None:
    events = good_events()
    error = CODEC.error_event(Fault.error_event("api_error", "boom"), ctx())
    folded = CODEC.fold_detailed([*events[:4], error, *events[4:]])
    assert folded.error == {
        "type": "error",
        "error": {"details": None, "type": "api_error", "message": "boom"},
        "request_id": None,
    }
    assert not folded.complete
    assert folded.body["stop_reason"] is None
    raw = CODEC.fold_detailed([events[0], SSEEvent(event="error", data="upstream died")])
    assert raw.error is not None
    assert raw.error["error"]["message"] == "upstream died"


# -- endpoint detection --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "path", "expected"),
    [
        ("POST", "/v1/messages", True),
        ("post", "/v1/messages", True),
        ("POST", "/v1/messages/", True),
        ("POST", "/anthropic/v1/messages", True),
        ("POST", "/api/v1/messages", True),
        ("POST", "/proxy/team-a/anthropic/v1/messages", True),
        ("GET", "/v1/messages", False),
        ("POST", "/v1/messages/count_tokens", False),
        ("POST", "/v1/messages/batches", False),
        ("GET", "/v1/messages/batches/msgbatch_1/results", False),
        ("POST", "/v1/messages/batches/msgbatch_1/cancel", False),
        ("POST", "/v1/threads/thread_1/messages", False),  # OpenAI Assistants
        ("POST", "/v1/chat/completions", False),
        ("POST", "/v1/responses", False),
        ("GET", "/v1/models", False),
        ("POST", "/v2/messages", False),
        ("POST", "/v1/messagesx", False),
    ],
)
def test_handles(method: str, path: str, expected: bool) -> None:
    assert CODEC.handles(method, path) is expected


def test_registry_finds_the_codec() -> None:
    assert isinstance(codec_for("anthropic"), AnthropicCodec)
    assert detect("POST", "/v1/messages") == "anthropic"
    assert CODEC.provider == "anthropic"


def test_corpus_paths_are_detected() -> None:
    for item in corpus.interactions():
        if item.file.parent.name == "anthropic" and item.url:
            is_model_call = item.path.endswith("/v1/messages")
            assert CODEC.handles(item.method, item.path) is is_model_call

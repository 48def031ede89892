"""The OpenAI Responses codec, checked against the real ``openai`` SDK.

Our bytes are served to the SDK through ``httpx2.MockTransport`` and compared
with what the SDK itself builds: ``responses.create`` (JSON) against
``responses.stream(...).get_final_response()`` (its own accumulator), its
exception classes and retry policy, and the request JSON it sends. Expected
values come from the SDK, the real recordings in ``tests/corpus`` or OpenAI's
documented error values, never from the codec's own output for the same input.

Stream folding against the corpus and malformed streams: ``test_openai_responses_fold.py``.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx2
import openai
import pytest
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
from pytest_agentreplay.providers import codec_for
from pytest_agentreplay.providers.base import IdFactory, RenderContext
from pytest_agentreplay.providers.openai_responses import OpenAIResponsesCodec
from pytest_agentreplay.sse import SSEEvent, decode, encode
from tests import corpus
from tests.gen import replies
from tests.providers._responses_sdk import (
    ASK,
    async_client,
    async_sse_response,
    chunkings,
    client,
    dump,
    json_response,
    sdk_create,
    sdk_raw_events,
    sdk_stream,
    sse_response,
)

pytestmark = pytest.mark.sdk

CODEC = OpenAIResponsesCodec()


def ctx(seed: str = "t", **kwargs: Any) -> RenderContext:
    """A fresh context: two with the same seed draw the same ids."""
    return RenderContext(ids=IdFactory(seed), **kwargs)


def events_of(reply: Reply, **kwargs: Any) -> list[SSEEvent]:
    return CODEC.render_events(reply, ctx(**kwargs))


def without_ids(parts: list[Any]) -> list[Any]:
    """Parts with generated tool-call ids blanked (a reply may leave them out)."""
    return [p.model_copy(update={"id": None}) if isinstance(p, ToolCall) else p for p in parts]


def wire_usage(usage: Usage) -> Usage:
    """What the Responses ``usage`` object can carry back: no cache *writes* at all,
    and cached / reasoning counts of 0 read as "not reported" (the API writes 0
    for both)."""
    return usage.model_copy(
        update={
            "cache_creation_input_tokens": None,
            "cache_read_input_tokens": usage.cache_read_input_tokens or None,
            "reasoning_tokens": usage.reasoning_tokens or None,
        }
    )


def wire_stop(reply: Reply) -> str:
    """What the wire can say about why a reply ended. The Responses API has no
    stop reason: only ``status`` / ``incomplete_details`` (max_output_tokens),
    refusal content parts (so a refusal needs text to carry it), and the
    presence of function calls. ``stop_sequence`` (no such request option) and
    an explicit ``end_turn`` are indistinguishable from a plain completion."""
    if reply.stop == "max_tokens":
        return "max_tokens"
    if reply.stop == "refusal" and any(isinstance(p, Text) for p in reply.parts):
        return "refusal"
    return "tool_use" if reply.tool_calls else "end_turn"


def types(events: list[SSEEvent]) -> list[str]:
    return [json.loads(e.data)["type"] for e in events]


# -- equivalence: streaming and non-streaming agree in the SDK's eyes -------------------


@given(reply=replies(), data=st.data())
def test_stream_and_body_are_equivalent_to_the_sdk(reply: Reply, data: st.DataObject) -> None:
    body = CODEC.render_body(reply, ctx())
    chunks = data.draw(chunkings(encode(events_of(reply))), label="chunks")

    created = sdk_create(body)
    events, streamed = sdk_stream(chunks)
    # Only exclusion: ``parsed`` / ``parsed_arguments``, which the SDK's stream
    # helper adds client-side (see tests/providers/_responses_sdk.py).
    assert dump(streamed) == dump(created)
    assert [o.type for o in created.output] == [
        {"thinking": "reasoning", "tool_call": "function_call"}.get(p.kind, "message")
        for p in _one_message_per_text_run(reply)
    ]
    # response.completed repeats the whole response, so also check the deltas on
    # their own: the SDK's running snapshot of each text / argument string (built
    # from deltas only) ends equal to the final value.
    _assert_delta_snapshots_match(events, streamed)


def _one_message_per_text_run(reply: Reply) -> list[Any]:
    out: list[Any] = []
    for part in reply.parts:
        if not (isinstance(part, Text) and out and isinstance(out[-1], Text)):
            out.append(part)
    return out


def _assert_delta_snapshots_match(events: list[Any], final: Any) -> None:
    last: dict[tuple[int, int], str] = {}
    for event in events:
        if event.type == "response.output_text.delta":
            last[(event.output_index, event.content_index)] = event.snapshot
        elif event.type == "response.function_call_arguments.delta":
            last[(event.output_index, -1)] = event.snapshot
    for (index, content_index), snapshot in last.items():
        item = final.output[index]
        expected = item.arguments if content_index < 0 else item.content[content_index].text
        assert snapshot == expected


@settings(max_examples=20)
@given(reply=replies(), data=st.data())
def test_stream_and_body_are_equivalent_async(reply: Reply, data: st.DataObject) -> None:
    body = CODEC.render_body(reply, ctx())
    chunks = data.draw(chunkings(encode(events_of(reply))), label="chunks")

    async def both() -> tuple[Any, Any]:
        async def created_handler(_: httpx2.Request) -> httpx2.Response:
            return json_response(body)

        async def stream_handler(_: httpx2.Request) -> httpx2.Response:
            return async_sse_response(chunks)

        created = await async_client(created_handler).responses.create(**ASK)
        async with async_client(stream_handler).responses.stream(**ASK) as stream:
            events = [event async for event in stream]
            if events[-1].type == "response.incomplete":  # see _responses_sdk.final_of
                return created, events[-1].response
            return created, await stream.get_final_response()

    created, streamed = asyncio.run(both())
    assert dump(streamed) == dump(created)


@given(reply=replies())
def test_fold_of_events_is_the_body_and_round_trips(reply: Reply) -> None:
    body = CODEC.render_body(reply, ctx())
    folded = CODEC.fold_detailed(events_of(reply), strict=True)
    assert (folded.complete, folded.error, folded.unknown) == (True, None, [])
    assert json.loads(json.dumps(folded.body)) == json.loads(json.dumps(body))

    back = CODEC.to_reply(folded.body)
    assert without_ids(back.parts) == without_ids(reply.parts)
    assert back.usage == wire_usage(reply.usage or ctx().usage_for(reply))
    assert back.stop == wire_stop(reply)
    given_ids = [p.id for p in reply.tool_calls if p.id]
    assert [p.id for p in back.tool_calls if p.id in given_ids] == given_ids


@given(reply=replies())
def test_deltas_alone_fold_to_the_same_parts(reply: Reply) -> None:
    """Drop every ``*.done`` record and the terminal event: what is left (added
    records and deltas) must still fold to the reply's parts, incomplete."""
    terminal = (".done", "response.completed", "response.incomplete")
    kept = [e for e in events_of(reply) if not json.loads(e.data)["type"].endswith(terminal)]
    folded = CODEC.fold_detailed(kept, strict=True)
    assert not folded.complete
    assert folded.body["status"] == "in_progress"
    assert without_ids(CODEC.to_reply(folded.body).parts) == without_ids(reply.parts)


@given(reply=replies(), data=st.data())
def test_a_cut_stream_folds_to_a_prefix(reply: Reply, data: st.DataObject) -> None:
    events = events_of(reply)
    keep = data.draw(st.integers(0, len(events) - 1), label="keep")
    folded = CODEC.fold_detailed(events[:keep])
    assert not folded.complete
    if keep == 0:
        assert folded.body == {}
        return
    partial = CODEC.to_reply(folded.body)
    full = without_ids(reply.parts)
    got = without_ids(partial.parts)
    assert len(got) <= len(full)
    for have, want in zip(got, full[: len(got)], strict=True):  # each a prefix of the real one
        assert type(have) is type(want)
        if isinstance(have, (Text, Thinking)):
            assert want.text.startswith(have.text)  # type: ignore[union-attr]


def test_the_same_context_seed_gives_the_same_bytes() -> None:
    reply = Reply.tool_call("lookup", {"q": "x"}, text="Let me check.")
    assert encode(events_of(reply)) == encode(events_of(reply))
    assert CODEC.render_body(reply, ctx("a")) != CODEC.render_body(reply, ctx("b"))


# -- stop reasons, refusals, empty replies -------------------------------------------------


def test_max_tokens_is_an_incomplete_response_in_both_paths() -> None:
    reply = Reply(parts=[Thinking(text="Let me"), Text(text="The answer is")], stop="max_tokens")
    created = sdk_create(CODEC.render_body(reply, ctx()))
    assert created.status == "incomplete"
    assert created.incomplete_details is not None
    assert created.incomplete_details.reason == "max_output_tokens"
    assert created.output[-1].status == "incomplete"

    # The API ends such a stream with response.incomplete, not response.completed,
    # and the SDK's get_final_response() then refuses; compare with the terminal
    # event the SDK yields instead.
    raw = list(sdk_raw_events([encode(events_of(reply))]))
    assert raw[-1].type == "response.incomplete"
    assert raw[-1].response.model_dump() == created.model_dump()
    stream_bytes = encode(events_of(reply))

    def final_response() -> Any:
        with client(lambda _: sse_response([stream_bytes])).responses.stream(**ASK) as stream:
            return stream.get_final_response()

    with pytest.raises(RuntimeError, match=r"response\.completed"):
        final_response()

    back = CODEC.to_reply(CODEC.render_body(reply, ctx()))
    assert (back.stop, back.parts) == ("max_tokens", reply.parts)


def test_refusal_renders_refusal_parts_and_round_trips() -> None:
    reply = Reply.text("I can't help with that.", stop="refusal")
    created = sdk_create(CODEC.render_body(reply, ctx()))
    part = created.output[0].content[0]  # type: ignore[union-attr]
    assert (part.type, part.refusal) == ("refusal", "I can't help with that.")  # type: ignore[union-attr]
    events = events_of(reply)
    assert "response.refusal.delta" in types(events)
    _, streamed = sdk_stream([encode(events)])
    assert dump(streamed) == dump(created)
    assert CODEC.to_reply(CODEC.fold(events)).stop == "refusal"


@pytest.mark.parametrize("reply", [Reply(), Reply.text("ignored", fault=Fault.empty())])
def test_an_empty_reply_is_a_valid_empty_completion(reply: Reply) -> None:
    created = sdk_create(CODEC.render_body(reply, ctx()))
    assert (created.status, created.output, created.output_text) == ("completed", [], "")
    events = events_of(reply)
    assert types(events) == ["response.created", "response.in_progress", "response.completed"]
    _, streamed = sdk_stream([encode(events)])
    assert dump(streamed) == dump(created)


@pytest.mark.parametrize(
    "reply",
    [
        Reply(parts=[Text(text="")]),
        Reply(parts=[Thinking(text="", signature="enc-only")]),  # gpt-5: no summary
        Reply(parts=[ToolCall(name="noop", id="call_given")]),
        Reply(parts=[Text(text="line one\nline\r\ntwo \U0001f600 \u00e9\u0301")]),
        Reply(parts=[Text(text="a"), Thinking(text="b"), Text(text="c")], model="gpt-5"),
    ],
    ids=["empty-text", "signature-only", "given-id", "newlines-astral", "interleaved"],
)
def test_edge_replies(reply: Reply) -> None:
    body = CODEC.render_body(reply, ctx())
    created = sdk_create(body)
    for chunks in ([encode(events_of(reply))], [bytes([b]) for b in encode(events_of(reply))]):
        _, streamed = sdk_stream(chunks)
        assert dump(streamed) == dump(created)
    assert CODEC.fold(events_of(reply)) == body
    assert CODEC.to_reply(body).parts == [
        p.model_copy(update={"id": p.id or created.output[-1].call_id})  # type: ignore[union-attr]
        if isinstance(p, ToolCall)
        else p
        for p in reply.parts
    ]


def test_thinking_signature_is_the_encrypted_content() -> None:
    reply = Reply(parts=[Thinking(text="Plan: add.", signature="gAAAAB-opaque"), Text(text="4")])
    created = sdk_create(CODEC.render_body(reply, ctx()))
    reasoning = created.output[0]
    assert reasoning.type == "reasoning"
    assert reasoning.encrypted_content == "gAAAAB-opaque"
    assert [s.text for s in reasoning.summary] == ["Plan: add."]
    assert "response.reasoning_summary_text.delta" in types(events_of(reply))


# -- fidelity to the real recordings ------------------------------------------------------


def _recorded(item_id: str) -> list[dict[str, Any]]:
    item = next(i for i in corpus.streams("openai_responses") if i.id == item_id)
    return [json.loads(e.data) for e in decode(item.body).events]


# Recorded 2026-05 against api.openai.com: the newest shape in the corpus.
TEXT_2026 = "openai_responses/pydantic-ai__test_openai_client_tool_search_streaming.yaml#2"
CALL_2026 = "openai_responses/pydantic-ai__test_openai_client_tool_search_streaming.yaml#1"


def _by_kind(records: list[dict[str, Any]]) -> dict[tuple[str, str], dict[str, Any]]:
    """Records keyed by (type, item type): one of each kind of record."""
    return {(d["type"], d.get("item", {}).get("type", "")): d for d in records}


# Keys of the recording that belong to its model / tool setup, not to every call:
# ``phase`` (gpt-5.4 messages) and ``namespace`` (functions found by tool search).
MODEL_SPECIFIC = {"phase", "namespace"}


def test_event_and_body_keys_are_the_recorded_ones_in_order() -> None:
    recorded = _by_kind(_recorded(TEXT_2026) + _recorded(CALL_2026))
    ours: dict[tuple[str, str], dict[str, Any]] = {}
    for reply in (Reply.text("Hi there"), Reply.tool_call("get_weather", {"city": "Leeds"})):
        ours.update(_by_kind([json.loads(e.data) for e in events_of(reply)]))
    assert set(ours) == set(recorded)
    for kind, data in recorded.items():
        assert list(ours[kind]) == list(data), kind
        for key in ("item", "part"):
            if key in data:
                want = [k for k in data[key] if k not in MODEL_SPECIFIC]
                assert list(ours[kind][key]) == want, f"{kind}.{key}"
    # The full Response object: same keys in the same order.
    body = CODEC.render_body(Reply.text("Hi"), ctx())
    final = recorded[("response.completed", "")]["response"]
    assert list(body) == list(final)
    assert list(body["usage"]) == list(final["usage"])


def test_obfuscation_pads_deltas_as_the_api_does() -> None:
    # In every recorded delta, len(delta) + len(obfuscation) == 16 (or 0 padding).
    for item in corpus.streams("openai_responses"):
        for event in decode(item.body).events:
            data = json.loads(event.data) if event.data.startswith("{") else {}
            if "obfuscation" in data:
                assert len(data["obfuscation"]) == max(0, 16 - len(data["delta"]))
    reply = Reply(parts=[Thinking(text="hmm"), Text(text="héllo wörld, a verylongwordindeed")])
    deltas = [json.loads(e.data) for e in events_of(reply) if e.event and e.event.endswith("delta")]
    assert deltas
    for data in deltas:
        assert len(data["obfuscation"]) == max(0, 16 - len(data["delta"]))
    no_obf = Request(
        provider="openai_responses", raw={"stream_options": {"include_obfuscation": False}}
    )
    assert all("obfuscation" not in e.data for e in events_of(reply, request=no_obf))


def test_background_streams_start_queued_like_the_recording() -> None:
    recorded = _recorded(
        "openai_responses/pydantic-ai__test_background_mode_streaming_starting_after_vcr.yaml#0"
    )
    request = CODEC.parse_request(
        {"model": "gpt-4o", "input": "What is 2 + 2?", "background": True, "stream": True}
    )
    ours = [json.loads(e.data) for e in events_of(Reply.text("4"), request=request)]
    assert [d["type"] for d in ours[:3]] == [d["type"] for d in recorded[:3]]
    assert [d["response"]["status"] for d in ours[:3]] == [
        d["response"]["status"] for d in recorded[:3]
    ]
    assert ours[-1]["response"]["background"] is True


def test_request_options_are_echoed() -> None:
    request = CODEC.parse_request(
        {
            "model": "gpt-4.1",
            "input": "x",
            "instructions": "Be brief.",
            "temperature": 0.2,
            "max_output_tokens": 50,
            "tool_choice": "required",
            "store": False,
            "tools": [{"type": "function", "name": "f", "parameters": {"type": "object"}}],
        }
    )
    created = sdk_create(CODEC.render_body(Reply.text("ok"), ctx(request=request)))
    assert (created.instructions, created.temperature, created.max_output_tokens) == (
        "Be brief.",
        0.2,
        50,
    )
    assert (created.tool_choice, created.store, created.model) == ("required", False, "gpt-4.1")
    assert created.tools[0].name == "f"  # type: ignore[union-attr]
    assert created.tools[0].strict is True  # type: ignore[union-attr]  # the API's default


def test_usage_is_rendered_with_token_details() -> None:
    usage = Usage(
        input_tokens=90, output_tokens=30, cache_read_input_tokens=64, reasoning_tokens=12
    )
    created = sdk_create(CODEC.render_body(Reply.text("ok", usage=usage), ctx()))
    assert created.usage is not None
    assert (
        created.usage.input_tokens,
        created.usage.output_tokens,
        created.usage.total_tokens,
    ) == (90, 30, 120)
    assert created.usage.input_tokens_details.cached_tokens == 64
    assert created.usage.output_tokens_details.reasoning_tokens == 12
    assert CODEC.to_reply(CODEC.render_body(Reply.text("ok", usage=usage), ctx())).usage == usage


# -- errors ------------------------------------------------------------------------------

# The SDK's class for each status; OpenAI has no 529, so it is a plain 5xx there.
STATUS_CLASSES = [
    (400, openai.BadRequestError),
    (401, openai.AuthenticationError),
    (403, openai.PermissionDeniedError),
    (404, openai.NotFoundError),
    (409, openai.ConflictError),
    (413, openai.APIStatusError),
    (422, openai.UnprocessableEntityError),
    (429, openai.RateLimitError),
    (500, openai.InternalServerError),
    (503, openai.InternalServerError),
    (529, openai.InternalServerError),
]


@pytest.mark.parametrize(("status", "exc_class"), STATUS_CLASSES)
def test_http_errors_raise_the_sdk_exception(status: int, exc_class: type[Exception]) -> None:
    error = CODEC.error_response(Fault.http(status, "Something broke."), ctx())
    calls: list[httpx2.Request] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        calls.append(request)
        return httpx2.Response(error.status, headers=error.headers, content=error.content())

    with pytest.raises(exc_class) as info:
        client(handler).responses.create(**ASK)
    exc = info.value
    assert isinstance(exc, openai.APIStatusError)
    assert type(exc) is exc_class
    assert exc.status_code == status
    assert exc.message == f"Error code: {status} - Something broke."
    assert exc.body == error.body["error"]
    assert list(error.body["error"]) == ["message", "type", "param", "code"]
    assert exc.request_id is not None
    assert exc.request_id.startswith("req_")
    assert exc.response.headers["content-type"].startswith("application/json")
    assert "x-should-retry" not in exc.response.headers  # OpenAI does not send it
    assert len(calls) == 1


def test_error_body_shape_matches_the_recorded_400() -> None:
    recorded = next(
        i
        for i in corpus.interactions()
        if i.id == "openai_responses/pydantic-ai__test_openai_responses_model_http_error.yaml#0"
    )
    error = CODEC.error_response(Fault.http(400, "Invalid 'temperature'."), ctx())
    assert set(error.body) == set(json.loads(recorded.body))
    assert set(error.body["error"]) == set(json.loads(recorded.body)["error"])
    assert error.body["error"]["type"] == json.loads(recorded.body)["error"]["type"]


@pytest.mark.parametrize(
    ("status", "error_type", "code", "message"),
    [  # OpenAI's usual values for these statuses
        (401, "invalid_request_error", "invalid_api_key", "Incorrect API key provided"),
        (404, "invalid_request_error", "model_not_found", "The model `gpt-4.1` does not exist"),
        (429, "requests", "rate_limit_exceeded", "Rate limit reached for gpt-4.1"),
        (
            500,
            "server_error",
            None,
            "The server had an error while processing your request. Sorry about that!",
        ),
    ],
)
def test_default_error_type_code_and_message(
    status: int, error_type: str, code: str | None, message: str
) -> None:
    request = CODEC.parse_request(ASK)
    error = CODEC.error_response(Fault.http(status), ctx(request=request))
    assert error.body["error"]["type"] == error_type
    assert error.body["error"]["code"] == code
    assert error.body["error"]["message"].startswith(message)
    assert error.body["error"]["param"] is None


def test_explicit_error_type_is_used() -> None:
    error = CODEC.error_response(Fault.http(429, "Quota.", error_type="insufficient_quota"), ctx())
    assert (error.body["error"]["type"], error.body["error"]["code"]) == (
        "insufficient_quota",
        "insufficient_quota",
    )


@pytest.mark.parametrize(
    ("seconds", "header", "ms"), [(2.0, "2", None), (30, "30", None), (0.25, "1", "250")]
)
def test_retry_after_header(seconds: float, header: str, ms: str | None) -> None:
    error = CODEC.error_response(Fault.http(429, retry_after=seconds), ctx())
    assert error.headers["retry-after"] == header
    assert error.headers.get("retry-after-ms") == ms


def test_retry_after_is_honoured_then_the_retry_succeeds(monkeypatch: pytest.MonkeyPatch) -> None:
    slept: list[float] = []
    monkeypatch.setattr("openai._base_client.time.sleep", slept.append)
    error = CODEC.error_response(Fault.http(429, retry_after=3), ctx())
    body = CODEC.render_body(Reply.text("Recovered."), ctx())
    responses = iter(
        [
            httpx2.Response(error.status, headers=error.headers, content=error.content()),
            json_response(body),
        ]
    )
    calls: list[httpx2.Request] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        calls.append(request)
        return next(responses)

    result = client(handler, max_retries=1).responses.create(**ASK)
    assert result.output_text == "Recovered."
    assert len(calls) == 2
    assert slept == [3.0]  # the SDK waited exactly what retry-after said


@pytest.mark.parametrize(
    ("status", "retried"),
    [(400, False), (404, False), (409, True), (429, True), (500, True), (503, True)],
)
def test_without_x_should_retry_the_sdk_retries_by_status(
    status: int,
    retried: bool,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("openai._base_client.time.sleep", lambda _: None)
    error = CODEC.error_response(Fault.http(status), ctx())
    assert "x-should-retry" not in error.headers
    calls: list[int] = []

    def handler(_: httpx2.Request) -> httpx2.Response:
        calls.append(1)
        return httpx2.Response(error.status, headers=error.headers, content=error.content())

    with pytest.raises(openai.APIStatusError):
        client(handler, max_retries=1).responses.create(**ASK)
    assert len(calls) == (2 if retried else 1)


def _with_error(reply: Reply, fault: Fault) -> list[SSEEvent]:
    """The reply's stream cut after ``fault.after_events`` records, then the error."""
    events = events_of(reply)
    return [*events[: fault.after_events], CODEC.error_event(fault, ctx())]


def test_in_stream_error_raises_after_the_earlier_events() -> None:
    reply = Reply.text("Partial answer that never finishes")
    events = events_of(reply)
    after = types(events).index("response.output_text.delta") + 3  # three deltas through
    fault = Fault.error_event("server_error", "The server had an error.", after_events=after)
    stream_bytes = encode(_with_error(reply, fault))

    seen: list[str] = []

    def read_all() -> None:
        with client(lambda _: sse_response([stream_bytes])).responses.stream(**ASK) as stream:
            seen.extend(e.delta for e in stream if e.type == "response.output_text.delta")

    with pytest.raises(openai.APIError) as info:
        read_all()
    assert "".join(seen) == "Partial answer that"
    assert info.value.message == "The server had an error."
    # The SDK hands over the nested error object as the exception body.
    assert info.value.body == json.loads(CODEC.error_event(fault, ctx()).data)["error"]
    assert info.value.type == "server_error"
    # The fold keeps the partial text and reports the error.
    folded = CODEC.fold_detailed(decode(stream_bytes).events)
    assert not folded.complete
    assert folded.error is not None
    assert folded.error["message"] == "The server had an error."
    assert CODEC.to_reply(folded.body).text_content == "Partial answer that"


def test_in_stream_error_event_shape() -> None:
    event = CODEC.error_event(
        Fault.error_event("too_many_requests", "Too Many Requests", after_events=2), ctx()
    )
    assert event.event == "error"
    # The live API nests the details (see openai/openai-dotnet#881): type, then
    # sequence_number, then the error object.
    assert json.loads(event.data) == {
        "type": "error",
        "sequence_number": 2,
        "error": {
            "type": "too_many_requests",
            "code": "too_many_requests",
            "message": "Too Many Requests",
            "param": None,
        },
    }


def test_success_headers_carry_a_request_id() -> None:
    streaming = CODEC.response_headers(ctx(), streaming=True)
    assert streaming["content-type"] == "text/event-stream; charset=utf-8"
    assert streaming["x-request-id"].startswith("req_")
    assert CODEC.response_headers(ctx(), streaming=False)["content-type"] == "application/json"

    def handler(_: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(
            200,
            headers=CODEC.response_headers(ctx(), streaming=False),
            content=json.dumps(CODEC.render_body(Reply.text("x"), ctx())),
        )

    raw = client(handler).responses.with_raw_response.create(**ASK)
    assert raw.request_id == CODEC.response_headers(ctx(), streaming=False)["x-request-id"]


# -- requests: what the SDK sends, parsed ---------------------------------------------------


def _sent(call: Any) -> dict[str, Any]:
    """The JSON body the real SDK sends for ``call(client)``."""
    captured: list[dict[str, Any]] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        captured.append(json.loads(request.content))
        return json_response(CODEC.render_body(Reply.text("ok"), ctx()))

    call(client(handler))
    return captured[0]


def test_parse_text_request_with_instructions() -> None:
    body = _sent(
        lambda c: c.responses.create(model="gpt-4.1", input="Hello", instructions="Be terse.")
    )
    request = CODEC.parse_request(body)
    assert (request.provider, request.model, request.system) == (
        "openai_responses",
        "gpt-4.1",
        "Be terse.",
    )
    assert request.stream is False
    assert [(m.role, m.text) for m in request.messages] == [("user", "Hello")]
    assert request.raw == body


def test_parse_multi_turn_tool_loop() -> None:
    body = _sent(
        lambda c: c.responses.create(
            model="gpt-4.1",
            stream=False,
            tools=[
                {
                    "type": "function",
                    "name": "get_weather",
                    "description": "Weather.",
                    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
                    "strict": True,
                },
                {"type": "web_search"},
            ],
            input=[
                {"role": "developer", "content": "Use tools."},
                {"role": "user", "content": [{"type": "input_text", "text": "Weather in Leeds?"}]},
                {
                    "type": "reasoning",
                    "id": "rs_1",
                    "summary": [{"type": "summary_text", "text": "Need the tool."}],
                    "encrypted_content": "gAAA-sig",
                },
                {
                    "type": "function_call",
                    "id": "fc_1",
                    "call_id": "call_1",
                    "name": "get_weather",
                    "arguments": '{"city": "Leeds"}',
                },
                {"type": "function_call_output", "call_id": "call_1", "output": "Rainy, 9C"},
                {
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": "It is rainy.", "annotations": []}],
                },
                {"role": "user", "content": "Thanks"},
            ],
        )
    )
    request = CODEC.parse_request(body)
    assert [m.role for m in request.messages] == [
        "developer",
        "user",
        "assistant",
        "tool",
        "assistant",
        "user",
    ]
    assert request.messages[2].parts == [
        Thinking(text="Need the tool.", signature="gAAA-sig"),
        ToolCall(name="get_weather", args={"city": "Leeds"}, id="call_1"),
    ]
    assert request.tool_results == [ToolResult(tool_call_id="call_1", content="Rainy, 9C")]
    assert request.messages[4].text == "It is rainy."
    assert request.last_user_text == "Thanks"
    assert [t.name for t in request.tools] == ["get_weather"]  # web_search stays in raw
    assert request.tools[0].parameters["properties"] == {"city": {"type": "string"}}


def test_parse_image_and_file_parts_are_kept_as_other() -> None:
    image = {
        "type": "input_image",
        "image_url": "data:image/png;base64,iVBORw0KGgo=",
        "detail": "auto",
    }
    body = _sent(
        lambda c: c.responses.create(
            model="gpt-4.1",
            input=[
                {
                    "role": "user",
                    "content": [{"type": "input_text", "text": "What is this?"}, image],
                }
            ],
        )
    )
    parts = CODEC.parse_request(body).messages[0].parts
    assert parts == [Text(text="What is this?"), Other(type="input_image", data=image)]


def test_parse_stream_flag_and_server_items() -> None:
    server_item = {
        "type": "web_search_call",
        "id": "ws_1",
        "status": "completed",
        "action": {"type": "search", "query": "q"},
    }
    body = _sent(
        lambda c: c.responses.create(  # returns the (unread) stream
            model="gpt-5",
            stream=True,
            input=[
                {"role": "user", "content": "Search"},
                server_item,
                {"type": "item_reference", "id": "msg_9"},
            ],
        )
    )
    request = CODEC.parse_request(body)
    assert request.stream is True
    assert [m.role for m in request.messages] == ["user", "assistant"]
    assert request.messages[1].parts == [
        Other(type="web_search_call", data=server_item),
        Other(type="item_reference", data={"type": "item_reference", "id": "msg_9"}),
    ]


def test_parse_every_corpus_request() -> None:
    seen = 0
    for item in corpus.interactions():
        if CODEC.handles(item.method, item.path) and isinstance(item.request_body, dict):
            request = CODEC.parse_request(item.request_body)
            assert request.raw == item.request_body
            seen += 1
    assert seen >= 15


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"model": 4}, "model"),
        ({"input": 3}, "input"),
        ({"input": ["hi"]}, "input[0]"),
        ({"input": [{"content": "x"}]}, "input[0].type"),
        ({"input": [{"role": "robot", "content": "x"}]}, "input[0].role"),
        ({"input": [{"role": "user", "content": 5}]}, "input[0].content"),
        (
            {
                "input": [
                    {"role": "user", "content": "ok"},
                    {"role": "user", "content": [{"text": "no type"}]},
                ]
            },
            "input[1].content[0].type",
        ),
        (
            {"input": [{"role": "user", "content": [{"type": "input_text"}]}]},
            "input[0].content[0].text",
        ),
        (
            {"input": [{"type": "function_call", "name": "f", "arguments": "{}"}]},
            "input[0].call_id",
        ),
        (
            {"input": [{"type": "function_call_output", "call_id": "c", "output": 7}]},
            "input[0].output",
        ),
        ({"tools": [{"name": "f"}]}, "tools[0].type"),
        ({"tools": [{"type": "function"}]}, "tools[0].name"),
        ({"stream": "yes"}, "stream"),
        ({"instructions": ["a"]}, "instructions"),
    ],
)
def test_bad_request_bodies_name_the_field(body: dict[str, Any], field: str) -> None:
    with pytest.raises(CodecError) as info:
        CODEC.parse_request(body)
    assert info.value.field == field
    assert info.value.provider == "openai_responses"


def test_tool_arguments_that_are_not_a_json_object_do_not_break_parsing() -> None:
    request = CODEC.parse_request(
        {
            "input": [
                {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{not json"}
            ]
        }
    )
    assert request.messages[0].parts == [ToolCall(name="f", args={}, id="c1")]


# -- endpoint detection -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "path", "expected"),
    [
        ("POST", "/v1/responses", True),
        ("post", "/v1/responses", True),
        ("POST", "/api/v1/responses", True),  # OpenRouter
        ("POST", "/responses", True),  # DeepSeek
        ("POST", "/openai/v1/responses", True),  # Azure
        ("POST", "/proxy/openai/v1/responses/", True),
        ("GET", "/v1/responses/resp_0850765c843cca53", True),  # background resume / retrieve
        ("POST", "/v1/responses/input_tokens", False),
        ("POST", "/v1/responses/compact", False),
        ("POST", "/v1/responses/resp_1/cancel", False),
        ("GET", "/v1/responses/resp_1/input_items", False),
        ("DELETE", "/v1/responses/resp_1", False),
        ("GET", "/v1/responses", False),
        ("POST", "/v1/chat/completions", False),
        ("POST", "/v1/messages", False),
        ("POST", "/v1/conversations", False),
        ("POST", "/v1/responses_archive", False),
        ("POST", "/v1/my-responses", False),
    ],
)
def test_handles(method: str, path: str, expected: bool) -> None:
    assert CODEC.handles(method, path) is expected


def test_handles_every_responses_call_in_the_corpus() -> None:
    for item in corpus.interactions():
        is_model_call = item.path.endswith("/responses") or (
            item.method == "GET" and "stream=true" in (item.url or "")
        )
        assert CODEC.handles(item.method, item.path) is is_model_call, item.id


def test_registered_under_its_provider_name() -> None:
    assert isinstance(codec_for("openai_responses"), OpenAIResponsesCodec)
    assert OpenAIResponsesCodec.provider == "openai_responses"

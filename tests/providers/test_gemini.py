"""The Gemini codec, checked against the real ``google-genai`` SDK and pydantic-ai.

Our bytes are served to the SDK through ``httpx.MockTransport`` and compared with what
the SDK makes of them: the non-streaming answer and the chunks of the stream must mean
the same (text, thoughts, function calls, signatures, finish reason, final usage),
under any re-chunking of the stream; pydantic-ai's Google model, which does assemble a
stream into one response, must build the same response from both. Expected values come
from the SDK, the recordings in ``tests/corpus`` or Google's documented formats.
"""

from __future__ import annotations

import asyncio
import base64
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic_ai.messages import TextPart, ThinkingPart, ToolCallPart

from pytest_agentreplay.errors import CodecError
from pytest_agentreplay.neutral import Fault, Reply, StopReason, Text, Thinking, ToolCall, Usage
from pytest_agentreplay.providers import codec_for
from pytest_agentreplay.providers.base import IdFactory, RenderContext
from pytest_agentreplay.providers.gemini import GeminiCodec
from pytest_agentreplay.providers.gemini.render import FINISH_REASONS, wire_signature
from pytest_agentreplay.sse import SSEEvent, decode, encode
from tests.gen import replies
from tests.providers import _gemini_sdk as sdk
from tests.providers.test_anthropic import chunkings

pytestmark = pytest.mark.sdk

CODEC = GeminiCodec()


def ctx(seed: str = "t", **kwargs: Any) -> RenderContext:
    return RenderContext(ids=IdFactory(seed), **kwargs)


def wire(reply: Reply) -> tuple[dict[str, Any], bytes]:
    """The JSON body and the stream bytes (CRLF, as Google frames them) of ``reply``."""
    events = CODEC.render_events(reply, ctx())
    return CODEC.render_body(reply, ctx()), encode(events, line_end="\r\n")


def expected_parts(reply: Reply) -> list[Any]:
    """The parts an answer holds: consecutive text joined, as Gemini sends it."""
    out: list[Any] = []
    for part in reply.parts:
        if isinstance(part, Text) and out and isinstance(out[-1], Text):
            out[-1] = Text(text=out[-1].text + part.text)
        else:
            out.append(part)
    return out


def expected_stop(reply: Reply) -> StopReason:
    stop = reply.stop_reason
    if stop in ("max_tokens", "refusal"):
        return stop
    return "tool_use" if reply.tool_calls else "end_turn"


def expected_usage(usage: Usage) -> Usage:
    """What survives Gemini's ``usageMetadata``: no cache writes; zero counts left out;
    thoughts counted apart from the candidates, so output is at least the thoughts."""
    thoughts = usage.reasoning_tokens or 0
    return Usage(
        input_tokens=usage.input_tokens,
        output_tokens=max(usage.output_tokens, thoughts),
        cache_read_input_tokens=usage.cache_read_input_tokens or None,
        reasoning_tokens=thoughts or None,
    )


# -- the SDK reads the stream and the body alike ---------------------------------------


@given(reply=replies(), data=st.data())
def test_stream_and_body_mean_the_same_to_the_sdk(reply: Reply, data: st.DataObject) -> None:
    body, stream_bytes = wire(reply)
    chunks = data.draw(chunkings(stream_bytes), label="chunks")

    created = sdk.generate(sdk.client(sdk.json_handler(body)))
    streamed = sdk.stream(sdk.client(sdk.sse_handler(chunks)))

    assert created.text == streamed.text == "".join(p.text for p in reply.parts if p.kind == "text")
    thinking = "".join(p.text for p in reply.parts if isinstance(p, Thinking))
    assert created.thoughts == streamed.thoughts == thinking
    calls = [(c.name, c.args, c.id) for c in reply.tool_calls]
    assert created.calls == streamed.calls == calls
    assert created.finish == streamed.finish == FINISH_REASONS[reply.stop_reason]
    assert created.usage == streamed.usage
    assert created.signatures == streamed.signatures
    assert len(created.signatures) == sum(isinstance(p, Thinking) for p in reply.parts)


@settings(max_examples=25)
@given(reply=replies(), data=st.data())
def test_stream_and_body_mean_the_same_to_the_async_sdk(reply: Reply, data: st.DataObject) -> None:
    body, stream_bytes = wire(reply)
    chunks = data.draw(chunkings(stream_bytes), label="chunks")

    async def both() -> tuple[sdk.Seen, sdk.Seen]:
        created = await sdk.agenerate(sdk.async_client(sdk.json_handler(body)))
        return created, await sdk.astream(sdk.async_client(sdk.async_sse_handler(chunks)))

    created, streamed = asyncio.run(both())
    assert (created.text, created.thoughts, created.calls, created.finish, created.usage) == (
        streamed.text,
        streamed.thoughts,
        streamed.calls,
        streamed.finish,
        streamed.usage,
    )


def _assembled(response: Any) -> list[tuple[str, Any]]:
    """pydantic-ai's parts without the ids it makes up for calls that have none."""
    out: list[tuple[str, Any]] = []
    for part in response.parts:
        if isinstance(part, ToolCallPart):
            out.append(("call", (part.tool_name, part.args_as_dict(), part.provider_details)))
        elif isinstance(part, ThinkingPart):
            out.append(("thinking", (part.content, part.signature)))
        elif isinstance(part, TextPart):
            out.append(("text", (part.content, part.provider_details)))
    return out


@settings(max_examples=30)
@given(reply=replies())
def test_pydantic_ai_assembles_the_stream_into_the_body(reply: Reply) -> None:
    body, stream_bytes = wire(reply)
    created, streamed = sdk.pydantic_ai_pair(body, stream_bytes)
    assert _assembled(streamed) == _assembled(created)
    assert streamed.usage == created.usage
    assert streamed.finish_reason == created.finish_reason
    assert streamed.provider_response_id == created.provider_response_id == body["responseId"]


# -- the fold is the body, and reads back as the reply ------------------------------------


@given(reply=replies())
def test_fold_of_events_is_the_body_and_round_trips(reply: Reply) -> None:
    body = CODEC.render_body(reply, ctx())
    folded = CODEC.fold_detailed(CODEC.render_events(reply, ctx()), strict=True)
    assert (folded.complete, folded.error, folded.unknown) == (True, None, [])
    assert folded.body == body

    back = CODEC.to_reply(folded.body)
    wanted = expected_parts(reply)
    assert [
        p.model_copy(update={"signature": None}) if isinstance(p, Thinking) else p
        for p in back.parts
    ] == [
        p.model_copy(update={"signature": None}) if isinstance(p, Thinking) else p for p in wanted
    ]
    for mine, theirs in zip(back.parts, wanted, strict=True):
        if isinstance(theirs, Thinking):  # given signatures are kept, missing ones made up
            assert isinstance(mine, Thinking)
            given = theirs.signature and wire_signature(theirs.signature)
            assert mine.signature == (given or mine.signature)
            assert len(base64.b64decode(mine.signature or "", validate=True)) >= 6
    assert back.usage == expected_usage(reply.usage or ctx().usage_for(reply))
    assert back.stop == expected_stop(reply)
    assert back.model == "fake-model"


def test_the_stream_is_framed_as_google_frames_it() -> None:
    events = CODEC.render_events(Reply.text("Paris is the capital."), ctx())
    first = json.loads(events[0].data)
    assert events[0].event is None  # data-only events
    assert events[0].data.startswith('{"candidates": [{"content": {"parts": [{"text": "Paris"}]')
    assert set(first) == {"candidates", "usageMetadata", "modelVersion", "responseId"}
    assert "finishReason" not in first["candidates"][0]
    last = json.loads(events[-1].data)
    assert last["candidates"][0]["finishReason"] == "STOP"
    assert [json.loads(e.data)["responseId"] for e in events] == [first["responseId"]] * len(events)
    assert CODEC.sse_line_end == "\r\n"
    assert CODEC.response_headers(ctx(), streaming=True) == {
        "content-type": "text/event-stream",
        "content-disposition": "attachment",
    }


def test_running_usage_grows_to_the_final_count() -> None:
    reply = Reply.text(
        "one two three four five six",
        usage=Usage(input_tokens=9, output_tokens=12, reasoning_tokens=5),
    )
    usages = [json.loads(e.data)["usageMetadata"] for e in CODEC.render_events(reply, ctx())]
    counts = [u.get("candidatesTokenCount", 0) for u in usages]
    assert counts == sorted(counts) and counts[0] == 0 and counts[-1] == 7
    assert usages[-1] == {
        "promptTokenCount": 9,
        "candidatesTokenCount": 7,
        "totalTokenCount": 21,
        "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 9}],
        "thoughtsTokenCount": 5,
    }
    assert all(u["thoughtsTokenCount"] == 5 and u["promptTokenCount"] == 9 for u in usages)


# -- thinking and its signatures -------------------------------------------------------------


def test_signature_rides_on_the_part_after_the_thoughts() -> None:
    reply = Reply(
        parts=[
            Thinking(text="Look it up.", signature="c2ln"),
            ToolCall(name="weather", args={"city": "Leeds"}),
        ]
    )
    parts = CODEC.render_body(reply, ctx())["candidates"][0]["content"]["parts"]
    assert parts == [
        {"text": "Look it up.", "thought": True},
        {
            "functionCall": {"name": "weather", "args": {"city": "Leeds"}},
            "thoughtSignature": "c2ln",
        },
    ]
    seen = sdk.generate(sdk.client(sdk.json_handler(CODEC.render_body(reply, ctx()))))
    assert seen.signatures == [b"sig"]


def test_hidden_thinking_sends_only_its_signature() -> None:
    reply = Reply(parts=[Thinking(text="", signature="c2ln"), Text(text="Paris.")])
    parts = CODEC.render_body(reply, ctx())["candidates"][0]["content"]["parts"]
    assert parts == [{"text": "Paris.", "thoughtSignature": "c2ln"}]
    assert CODEC.to_reply(CODEC.render_body(reply, ctx())).parts == reply.parts


def test_a_last_thought_keeps_its_own_signature_and_missing_ones_are_made() -> None:
    reply = Reply(parts=[Thinking(text="Hmm."), Thinking(text="So.", signature="c2ln")])
    parts = CODEC.render_body(reply, ctx())["candidates"][0]["content"]["parts"]
    assert [p["text"] for p in parts] == ["Hmm.", "So."]
    assert parts[1]["thoughtSignature"] == "c2ln"
    made = parts[0]["thoughtSignature"]
    assert len(base64.b64decode(made, validate=True)) == 96
    assert (
        made
        != CODEC.render_body(reply, ctx("other"))["candidates"][0]["content"]["parts"][0][
            "thoughtSignature"
        ]
    )


# -- empty answers and safety blocks ----------------------------------------------------------


@pytest.mark.parametrize(
    "reply",
    [Reply(), Reply.text(""), Reply.failure(Fault.empty())],
    ids=["no-parts", "empty-text", "empty-fault"],
)
def test_the_empty_candidate(reply: Reply) -> None:
    body = CODEC.render_body(
        reply.model_copy(update={"fault": None, "parts": list(reply.parts)}), ctx()
    )
    assert body["candidates"] == [
        {"content": {"role": "model"}, "finishReason": "STOP", "index": 0}
    ]
    events = CODEC.render_events(reply, ctx())
    assert len(events) == 1
    assert CODEC.fold(events) == body
    seen = sdk.stream(sdk.client(sdk.sse_handler([encode(events)])))
    assert (seen.text, seen.calls, seen.finish) == ("", [], "STOP")
    assert CODEC.to_reply(body).parts == []


def test_a_refusal_is_a_safety_block() -> None:
    body = CODEC.render_body(Reply(stop="refusal"), ctx())
    candidate = body["candidates"][0]
    assert candidate["content"] == {}
    assert candidate["finishReason"] == "SAFETY"
    assert [r["category"] for r in candidate["safetyRatings"] if r.get("blocked")] == [
        "HARM_CATEGORY_DANGEROUS_CONTENT"
    ]
    response = sdk.client(sdk.json_handler(body)).models.generate_content(
        model=sdk.MODEL, contents="Hi"
    )
    assert response.text is None
    assert response.candidates[0].finish_reason.value == "SAFETY"
    assert CODEC.to_reply(body).stop == "refusal"


def test_a_blocked_prompt_has_no_candidates_and_reads_as_a_refusal() -> None:
    # The shape of tests/corpus/gemini/...armor_prompt_template_text_gets_blocked.yaml.
    body = {
        "promptFeedback": {"blockReason": "MODEL_ARMOR"},
        "usageMetadata": {"trafficType": "ON_DEMAND"},
        "modelVersion": "gemini-2.5-flash",
    }
    reply = CODEC.to_reply(body)
    assert (reply.parts, reply.stop, reply.model) == ([], "refusal", "gemini-2.5-flash")
    folded = CODEC.fold_detailed([SSEEvent(data=json.dumps(body))])
    assert folded.complete and folded.body == body


@pytest.mark.parametrize(
    ("reason", "stop"),
    [
        ("STOP", "end_turn"),
        ("MAX_TOKENS", "max_tokens"),
        ("SAFETY", "refusal"),
        ("RECITATION", "refusal"),
        ("PROHIBITED_CONTENT", "refusal"),
        ("MALFORMED_FUNCTION_CALL", None),
        ("OTHER", None),
    ],
)
def test_finish_reasons_read_back(reason: str, stop: str | None) -> None:
    body = {
        "candidates": [
            {"content": {"parts": [{"text": "x"}], "role": "model"}, "finishReason": reason}
        ]
    }
    assert CODEC.to_reply(body).stop == stop


# -- folding real shapes and refusing malformed ones -------------------------------------------


def _event(candidate: dict[str, Any], **top: Any) -> SSEEvent:
    return SSEEvent(data=json.dumps({"candidates": [candidate], **top}))


def test_fold_joins_text_keeps_signatures_and_drops_the_empty_closing_part() -> None:
    signature = "CiIB0e2Kb6Syj1a9"
    events = [
        _event({"content": {"parts": [{"text": "Plan", "thought": True}], "role": "model"}}),
        _event({"content": {"parts": [{"text": " it.", "thought": True}], "role": "model"}}),
        _event(
            {
                "content": {
                    "parts": [{"text": "The", "thoughtSignature": signature}],
                    "role": "model",
                },
                "groundingMetadata": {},
            }
        ),
        _event(
            {
                "content": {"parts": [{"text": " end."}], "role": "model"},
                "groundingMetadata": {"webSearchQueries": ["q"]},
            }
        ),
        _event(
            {
                "content": {"parts": [{"text": ""}], "role": "model"},
                "finishReason": "STOP",
                "groundingMetadata": {},
            },
            usageMetadata={"promptTokenCount": 3},
        ),
    ]
    folded = CODEC.fold_detailed(events, strict=True)
    candidate = folded.body["candidates"][0]
    assert candidate["content"]["parts"] == [
        {"text": "Plan it.", "thought": True},
        {"text": "The end.", "thoughtSignature": signature},
    ]
    assert candidate["groundingMetadata"] == {"webSearchQueries": ["q"]}
    assert folded.complete
    assert CODEC.to_reply(folded.body).parts == [
        Thinking(text="Plan it.", signature=signature),
        Text(text="The end."),
    ]


def test_fold_hands_a_closing_signature_to_the_text_before_it() -> None:
    events = [
        _event({"content": {"parts": [{"text": "Hello"}], "role": "model"}}),
        _event(
            {
                "content": {"parts": [{"text": "", "thoughtSignature": "c2ln"}], "role": "model"},
                "finishReason": "STOP",
            }
        ),
    ]
    parts = CODEC.fold(events)["candidates"][0]["content"]["parts"]
    assert parts == [{"text": "Hello", "thoughtSignature": "c2ln"}]


def test_fold_keeps_candidates_apart_by_index() -> None:
    events = [
        _event({"content": {"parts": [{"text": "A"}]}, "index": 0}),
        _event({"content": {"parts": [{"text": "B"}]}, "index": 1}),
        _event({"content": {"parts": [{"text": "a"}]}, "index": 0, "finishReason": "STOP"}),
    ]
    folded = CODEC.fold_detailed(events)
    assert [c["content"]["parts"][0]["text"] for c in folded.body["candidates"]] == ["Aa", "B"]
    assert not folded.complete  # candidate 1 never finished


OVERLOADED = {"code": 503, "message": "The model is overloaded.", "status": "UNAVAILABLE"}


def test_error_event_stops_the_fold() -> None:
    events = [
        _event({"content": {"parts": [{"text": "Par"}]}}),
        SSEEvent(data=json.dumps({"error": OVERLOADED})),
        _event({"content": {"parts": [{"text": "is"}]}, "finishReason": "STOP"}),
    ]
    folded = CODEC.fold_detailed(events)
    assert folded.error == {
        "code": 503,
        "message": "The model is overloaded.",
        "status": "UNAVAILABLE",
    }
    assert not folded.complete
    assert folded.body["candidates"][0]["content"]["parts"] == [{"text": "Par"}]


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ("not json", "data"),
        ("[1, 2]", "data"),
        ('{"candidates": {}}', "candidates"),
        ('{"candidates": [{"index": "0"}]}', "candidates[0].index"),
        (
            '{"candidates": [{"content": {"parts": [{"text": 5}]}}]}',
            "candidates[0].content.parts[0].text",
        ),
        ('{"candidates": [{"content": {"parts": {}}}]}', "candidates[0].content.parts"),
        (
            '{"candidates": [{"content": {"parts": [{"text": "x", "thoughtSignature": 1}]}}]}',
            "candidates[0].content.parts[0].thoughtSignature",
        ),
    ],
)
def test_fold_names_the_event_and_field_of_malformed_data(data: str, field: str) -> None:
    events = [_event({"content": {"parts": [{"text": "ok"}]}}), SSEEvent(data=data)]
    with pytest.raises(CodecError) as info:
        CODEC.fold_detailed(events)
    assert (info.value.event_index, info.value.field) == (1, field)
    assert info.value.provider == "gemini"


def test_named_events_are_unknown_not_fatal_unless_strict() -> None:
    events = [
        SSEEvent(data="{}", event="ping"),
        _event({"content": {"parts": [{"text": "x"}]}, "finishReason": "STOP"}),
    ]
    assert CODEC.fold_detailed(events).unknown == [0]
    with pytest.raises(CodecError, match="strict"):
        CODEC.fold_detailed(events, strict=True)


def test_a_scripted_signature_that_is_not_base64_goes_out_as_base64() -> None:
    reply = Reply(parts=[Thinking(text="t", signature="sig-1 (any text)"), Text(text="x")])
    body = CODEC.render_body(reply, ctx())
    seen = sdk.generate(sdk.client(sdk.json_handler(body)))
    assert seen.signatures == [b"sig-1 (any text)"]
    assert wire_signature("c2ln") == "c2ln"
    assert wire_signature("c2ln-_8=") == "c2ln-_8="  # base64url, as google-genai sends back


def test_codec_registry_and_multibyte_text_split_anywhere() -> None:
    assert isinstance(codec_for("gemini"), GeminiCodec)
    reply = Reply.text("Grüße aus Köln 🌧️ — 東京")
    stream_bytes = encode(CODEC.render_events(reply, ctx()), line_end="\r\n")
    one_byte = [stream_bytes[i : i + 1] for i in range(len(stream_bytes))]
    assert sdk.stream(sdk.client(sdk.sse_handler(one_byte))).text == reply.text_content
    assert CODEC.fold(decode(stream_bytes).events) == CODEC.render_body(reply, ctx())


@pytest.mark.parametrize("separator", ["\x85", "\u2028", "\u2029"])
def test_line_separators_in_text_do_not_split_the_data_line(separator: str) -> None:
    # httpx's line reader (which google-genai streams through) splits at U+0085 and
    # U+2028/9; written raw, they cut the JSON of a chunk in two.
    reply = Reply(parts=[Text(text=f"a{separator}b"), ToolCall(name="f", args={"k": separator})])
    stream_bytes = encode(CODEC.render_events(reply, ctx()), line_end="\r\n")
    seen = sdk.stream(sdk.client(sdk.sse_handler([stream_bytes])))
    assert (seen.text, seen.calls) == (f"a{separator}b", [("f", {"k": separator}, None)])

    async def run() -> sdk.Seen:
        return await sdk.astream(sdk.async_client(sdk.async_sse_handler([stream_bytes])))

    assert asyncio.run(run()).text == f"a{separator}b"


def test_count_tokens_of_a_whole_request_or_a_malformed_one() -> None:
    contents = {"contents": [{"parts": [{"text": "How many tokens is this?"}]}]}
    whole = CODEC.count_tokens({"generateContentRequest": {"model": "models/x", **contents}})
    assert whole == CODEC.count_tokens(contents)
    assert whole is not None and whole["totalTokens"] > 0
    assert CODEC.count_tokens({"generateContentRequest": 5}) is not None  # counted, no crash

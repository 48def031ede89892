"""Every real Chat Completions stream in the corpus, folded by us and by the real SDK.

For each 200 streaming interaction whose path is ``.../chat/completions`` (OpenAI,
Azure, Groq, Mistral, OpenRouter) and each raw openai-python ``.sse.bin``
fixture, the same bytes go (a) through ``sse.decode`` + ``OpenAIChatCodec.fold``
and (b) through the real ``openai`` client's ``chat.completions.stream()``
accumulator (``ChatCompletionStreamState``) via ``httpx2.MockTransport``. The
folded JSON is loaded with the SDK's own ``ChatCompletion`` type and compared
with the SDK's snapshot. Where the SDK's accumulator takes a shortcut that the
provider's non-streaming body would not, the comparison says so and checks our
value against an independent reading of the raw chunks instead.
"""

from __future__ import annotations

import copy
import json
import warnings
from typing import Any

import httpx2
import openai
import pytest
from openai.types import CompletionUsage
from openai.types.chat import ChatCompletion

from pytest_agentreplay.neutral import Reply, Text, Thinking
from pytest_agentreplay.providers.base import IdFactory, RenderContext
from pytest_agentreplay.providers.openai_chat import OpenAIChatCodec
from pytest_agentreplay.sse import SSEEvent, decode
from tests import corpus
from tests.providers._openai_chat_sdk import MESSAGES, client

pytestmark = pytest.mark.sdk

CODEC = OpenAIChatCodec()
STREAMS = corpus.streams("openai_chat")
BY_ID = {item.id: item for item in corpus.interactions()}
MISTRAL = "other/pydantic-ai__test_mistral_model_thinking_part_iter.yaml#0"
GROQ_ERROR = "other/pydantic-ai__test_tool_use_failed_error_streaming.yaml#0"
OPENROUTER_ERROR = "other/pydantic-ai__test_openrouter_stream_error.yaml#0"


def test_corpus_has_the_streams_this_file_is_about() -> None:
    ids = {item.id for item in STREAMS}
    assert len(STREAMS) == 19
    assert {MISTRAL, GROQ_ERROR, OPENROUTER_ERROR} <= ids
    assert sum(item.raw_only for item in STREAMS) == 6


def sdk_reference(body: bytes) -> tuple[dict[str, Any], openai.APIError | None]:
    """The SDK accumulator's snapshot after reading ``body`` (up to an error)."""
    sdk = client(
        lambda _: httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=body)
    )
    error = None
    with sdk.chat.completions.stream(model="gpt-4o", messages=MESSAGES) as stream:
        try:
            stream.until_done()
        except openai.APIError as exc:  # the in-stream error chunks
            error = exc
        snapshot = stream.current_completion_snapshot
    return snapshot.model_dump(), error


def raw_chunks(events: list[SSEEvent]) -> list[dict[str, Any]]:
    """The JSON chunks the SDK accumulates: up to ``[DONE]`` or the error, without
    Azure's ``object: ""`` filter chunks (the stream helper skips those)."""
    chunks = []
    for event in events:
        if event.data.startswith("[DONE]"):
            break
        data = json.loads(event.data)
        if data.get("error"):
            break
        if data.get("object") == "chat.completion.chunk":
            chunks.append(data)
    return chunks


def last_value(chunks: list[dict[str, Any]], key: str) -> Any:
    """The last non-empty top-level ``key`` in the chunks."""
    values = [c[key] for c in chunks if c.get(key)]
    return values[-1] if values else None


def last_choice_value(chunks: list[dict[str, Any]], index: int, key: str) -> Any:
    values = [
        ch[key] for c in chunks for ch in c["choices"] if ch["index"] == index and ch.get(key)
    ]
    return values[-1] if values else None


def normalize_reference(
    ref: dict[str, Any], ours: dict[str, Any], chunks: list[dict[str, Any]]
) -> dict[str, Any]:
    """The SDK snapshot with its stream-helper and shortcut artefacts explained away."""
    ref = copy.deepcopy(ref)
    # The SDK overwrites `usage` with every chunk's (a trailing moderation chunk
    # says `"usage": null`); the provider's body has the usage chunk's value.
    raw_usage = last_value(chunks, "usage")
    usage = None if raw_usage is None else CompletionUsage.construct(**raw_usage).model_dump()
    assert ref["usage"] in (None, usage)
    ref["usage"] = usage
    # Groq repeats `x_groq` with more fields in the last chunk; the SDK keeps the first.
    if "x_groq" in ours:
        assert ref["x_groq"].items() <= ours["x_groq"].items()
        assert last_value(chunks, "x_groq").items() <= ours["x_groq"].items()
        ref["x_groq"] = ours["x_groq"]
    for ref_choice, our_choice in zip(ref["choices"], ours["choices"], strict=True):
        normalize_choice(ref_choice, our_choice, chunks)
    return ref


def normalize_choice(
    ref: dict[str, Any], ours: dict[str, Any], chunks: list[dict[str, Any]]
) -> None:
    # Choice extras (Azure content_filter_results, OpenRouter native_finish_reason)
    # are copied by the SDK from the choice's first chunk only and never updated;
    # the provider's body carries the final value.
    for key in ("content_filter_results", "native_finish_reason"):
        if key in ours:
            assert ours[key] == last_choice_value(chunks, ours["index"], key)
            ref[key] = ours[key]
    message = ref["message"]
    # Helper-only fields of `.stream()` (structured-output parsing), never on the wire.
    assert message.pop("parsed") is None
    for call in message["tool_calls"] or []:
        call["function"].pop("parsed_arguments")
        call.pop("index")  # delta bookkeeping; non-streaming tool calls have no index
    # The non-streaming body always has `annotations: []`; streams send none.
    if message["annotations"] is None:
        message["annotations"] = []
    # accumulate_delta concatenates *every* string: OpenRouter repeats `role` and
    # Groq repeats `channel` in each delta, so the SDK ends with "assistantassistant…".
    for key in ("role", "channel"):
        if key in message and isinstance(message[key], str):
            mine = ours["message"][key]
            assert message[key] == mine * (len(message[key]) // len(mine))
            message[key] = mine


def mistral_parts(ours: dict[str, Any], chunks: list[dict[str, Any]]) -> dict[str, Any]:
    """Mistral streams thinking as list-valued `delta.content`; the SDK drops those
    (it cannot merge a list into the string it holds) and keeps only the text. Our
    fold keeps Mistral's non-streaming part list; check the thinking against the
    raw chunks, then compare the text with the SDK's string."""
    thinking = "".join(
        inner["text"]
        for c in chunks
        for ch in c["choices"]
        if isinstance(ch["delta"].get("content"), list)
        for part in ch["delta"]["content"]
        if part["type"] == "thinking"
        for inner in part["thinking"]
    )
    parts = ours["choices"][0]["message"]["content"]
    assert [p["type"] for p in parts] == ["thinking", "text"]
    assert parts[0]["thinking"] == [{"type": "text", "text": thinking}]
    ours = copy.deepcopy(ours)
    ours["choices"][0]["message"]["content"] = parts[1]["text"]
    return ours


@pytest.mark.parametrize("item", STREAMS, ids=[item.id for item in STREAMS])
def test_fold_matches_the_sdk_accumulator(item: corpus.CorpusInteraction) -> None:
    events = decode(item.body).events
    folded = CODEC.fold_detailed(events, strict=True)
    with warnings.catch_warnings():
        # Mistral only: pydantic warns while the SDK serializes the list-valued content.
        warnings.simplefilter("ignore" if item.id == MISTRAL else "error")
        ref, sdk_error = sdk_reference(item.body)
    chunks = raw_chunks(events)
    ours = folded.body
    assert folded.unknown == []
    if sdk_error is not None:
        assert folded.error == sdk_error.body
        assert not folded.complete
    else:
        assert folded.error is None
        assert folded.complete
    if item.id == MISTRAL:
        ours = mistral_parts(ours, chunks)
    if "prompt_filter_results" in ours:
        # Azure's first chunk (`object: ""`) is skipped by the stream helper; the
        # non-streaming Azure body has these results at the top level.
        first = json.loads(events[0].data)
        assert first["object"] == ""
        assert ours["prompt_filter_results"] == first["prompt_filter_results"]
        ours = {k: v for k, v in ours.items() if k != "prompt_filter_results"}
    validated = (
        ChatCompletion.model_validate(ours) if folded.complete else ChatCompletion.construct(**ours)
    )
    assert validated.model_dump() == normalize_reference(ref, ours, chunks)
    reply = CODEC.to_reply(folded.body)
    assert isinstance(reply, Reply)


def test_in_stream_errors_of_groq_and_openrouter() -> None:
    groq = CODEC.fold_detailed(decode(BY_ID[GROQ_ERROR].body).events)
    assert groq.error is not None
    assert groq.error["code"] == "tool_use_failed"
    assert groq.body["choices"][0]["message"]["reasoning"].startswith("We need to call")
    groq_ok = CODEC.fold(decode(BY_ID[GROQ_ERROR.replace("#0", "#1")].body).events)
    # Groq repeats `channel`, OpenRouter repeats `role` in every delta: one value each,
    # not the SDK's concatenation.
    assert groq_ok["choices"][0]["message"]["channel"] == "analysis"
    router = CODEC.fold_detailed(decode(BY_ID[OPENROUTER_ERROR].body).events)
    assert router.body["choices"][0]["message"]["role"] == "assistant"
    assert router.error == {"code": 400, "message": "Token limit reached"}
    assert router.body["choices"][0]["finish_reason"] == "length"
    assert CODEC.to_reply(router.body).parts == [
        Thinking(text="We need to respond to a greeting. The user")
    ]


def test_mistral_thinking_reads_back_as_thinking_then_text() -> None:
    reply = CODEC.to_reply(CODEC.fold(decode(BY_ID[MISTRAL].body).events))
    assert [type(p) for p in reply.parts] == [Thinking, Text]
    assert reply.parts[0].text.startswith("Okay, the user is asking how to cross the street.")
    assert reply.usage is not None
    assert reply.usage.output_tokens == 232


# -- non-streaming twins ----------------------------------------------------------------
# No corpus file holds the same request both streamed and not, so the check is on
# shape: a folded OpenAI stream has exactly the keys of a real OpenAI non-streaming
# body of the same kind (text answer; tool call), and so does render_body.


def shape(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: shape(v) for k, v in value.items()}
    if isinstance(value, list):
        return [shape(value[0])] if value else []
    return None


def json_body(item_id: str) -> dict[str, Any]:
    parsed: dict[str, Any] = json.loads(BY_ID[item_id].body)  # gunzipped by tests.corpus
    return parsed


@pytest.mark.parametrize(
    ("stream_id", "twin_id", "reply"),
    [
        (
            "openai_chat/crewai__test_usage_info_streaming_with_call.yaml#0",
            "openai_chat/crewai-55ed91e__test_gpt_4_1[gpt-4.1-nano-2025-04-14].yaml#0",
            Reply.text("Paris."),
        ),
        (
            "openai_chat/pydantic-ai__test_run_stream_sync_streams_real_model.yaml#0",
            "other/pydantic-ai__test_temporal__test_mcptoolset_in_temporal_workflow.yaml#3",
            Reply.tool_call("ask", {"q": "x"}),
        ),
    ],
)
def test_fold_and_render_have_the_shape_of_real_bodies(
    stream_id: str, twin_id: str, reply: Reply
) -> None:
    twin = shape(json_body(twin_id))
    folded = CODEC.fold(decode(BY_ID[stream_id].body).events)
    assert shape(folded) == twin
    assert shape(CODEC.render_body(reply, RenderContext(ids=IdFactory("t")))) == twin

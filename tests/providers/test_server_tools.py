"""Provider-side tools and citations in each wire format, against the real SDKs and the
real recordings.

A :class:`ServerToolCall` (web search, code execution) and a text part's citations are
rendered as Anthropic ``server_tool_use`` + result blocks and ``citations``, as OpenAI
Responses ``web_search_call`` items and ``url_citation`` annotations, and as OpenAI
Chat ``annotations``; a format that cannot send one refuses the reply. Expected values
come from the SDKs' own parse and stream accumulators and from the recordings in
``tests/corpus/real``, never from the codec's output for the same input.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from anthropic.types import CodeExecutionToolResultBlock, WebSearchToolResultBlock
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_agentreplay.errors import CodecError
from pytest_agentreplay.neutral import (
    Citation,
    Reply,
    SearchResult,
    ServerToolCall,
    Text,
    Thinking,
    ToolCall,
)
from pytest_agentreplay.providers import codec_for
from pytest_agentreplay.providers.base import Codec, IdFactory, RenderContext
from pytest_agentreplay.sse import SSEEvent, decode, encode
from tests import corpus
from tests.gen import server_tool_replies
from tests.providers import _responses_sdk as responses_sdk
from tests.providers._openai_chat_sdk import MESSAGES, FakeServer
from tests.providers._openai_chat_sdk import async_client as chat_async_client
from tests.providers._openai_chat_sdk import client as chat_client
from tests.providers.test_anthropic import (
    chunkings,
    sdk_create,
    sdk_create_async,
    sdk_stream,
    sdk_stream_async,
)

pytestmark = pytest.mark.sdk

ANTHROPIC = codec_for("anthropic")
RESPONSES = codec_for("openai_responses")
CHAT = codec_for("openai_chat")
ANTHROPIC_SEARCH = "anthropic/pydantic-ai__test_anthropic_web_search_tool_stream.yaml#0"
RESPONSES_SEARCH = (
    "openai_responses/pydantic-ai__test_openai_responses_model_web_search_tool_stream.yaml#0"
)
INCLUDE = ["web_search_call.action.sources"]
LEEDS = Reply(
    parts=[
        ServerToolCall.web_search(
            "weather in Leeds",
            [SearchResult(url="https://met.example/leeds", title="Leeds", page_age="1 hour ago")],
            id="search-1",
        ),
        Text(text="Leeds: "),
        Text(
            text="rain after noon.",
            citations=[Citation(url="https://met.example/leeds", title="Leeds", cited_text="Rain")],
        ),
    ]
)


def ctx(seed: str = "t", **request: Any) -> RenderContext:
    """A fresh context (same seed, same ids), for a Responses request with ``request``."""
    parsed = RESPONSES.parse_request({"model": "gpt-5", "input": "Hi", **request})
    return RenderContext(ids=IdFactory(seed), request=parsed if request else None)


def stream_of(item_id: str) -> list[SSEEvent]:
    item = next(i for i in corpus.streams() if i.id == item_id)
    return decode(item.body).events


def data(events: list[SSEEvent]) -> list[dict[str, Any]]:
    return [json.loads(e.data) for e in events if e.data.startswith("{")]


# -- Anthropic ---------------------------------------------------------------------------


@settings(max_examples=60)
@given(reply=server_tool_replies(), data=st.data())
def test_anthropic_stream_and_body_agree_in_the_sdk(reply: Reply, data: st.DataObject) -> None:
    body = ANTHROPIC.render_body(reply, ctx())
    chunks = data.draw(chunkings(encode(ANTHROPIC.render_events(reply, ctx()))), label="chunks")
    created, streamed = sdk_create(body), sdk_stream(chunks)
    assert streamed.model_dump() == created.model_dump()
    expected = []
    for part in reply.parts:
        if isinstance(part, ServerToolCall):
            expected += ["server_tool_use", f"{part.name}_tool_result"]
        else:
            expected.append({Text: "text", ToolCall: "tool_use", Thinking: "thinking"}[type(part)])
    assert [b.type for b in created.content] == expected
    searches = sum(1 for s in reply.server_tool_calls if s.name == "web_search" and not s.error)
    usage = created.usage.server_tool_use
    assert (usage.web_search_requests if usage else None) == (
        searches if reply.server_tool_calls else None
    )


@settings(max_examples=15)
@given(reply=server_tool_replies(), data=st.data())
def test_anthropic_stream_and_body_agree_async(reply: Reply, data: st.DataObject) -> None:
    body = ANTHROPIC.render_body(reply, ctx())
    chunks = data.draw(chunkings(encode(ANTHROPIC.render_events(reply, ctx()))), label="chunks")

    async def both() -> tuple[Any, Any]:
        return await sdk_create_async(body), await sdk_stream_async(chunks)

    created, streamed = asyncio.run(both())
    assert streamed.model_dump() == created.model_dump()


def as_anthropic_reads_it(part: Any) -> Any:
    """What an Anthropic body can carry back: no citation spans (a block is cited whole)."""
    if isinstance(part, Text):
        spanless = [c.model_copy(update={"start": None, "end": None}) for c in part.citations]
        return part.model_copy(update={"citations": spanless})
    if isinstance(part, ToolCall | ServerToolCall):
        return part.model_copy(update={"id": None})
    if isinstance(part, Thinking):
        return part.model_copy(update={"signature": None})
    return part


@settings(max_examples=60)
@given(reply=server_tool_replies())
def test_anthropic_fold_is_the_body_and_reads_back(reply: Reply) -> None:
    body = ANTHROPIC.render_body(reply, ctx())
    folded = ANTHROPIC.fold_detailed(ANTHROPIC.render_events(reply, ctx()), strict=True)
    assert (folded.complete, folded.error, folded.unknown) == (True, None, [])
    assert json.loads(json.dumps(folded.body)) == body
    back = ANTHROPIC.to_reply(body)
    assert [as_anthropic_reads_it(p) for p in back.parts] == [
        as_anthropic_reads_it(p) for p in reply.parts
    ]
    for mine, given_part in zip(back.server_tool_calls, reply.server_tool_calls, strict=True):
        assert mine.id == given_part.id or (
            given_part.id is None and mine.id.startswith("srvtoolu_01")
        )


def skeleton(events: list[SSEEvent], blocks: int) -> list[tuple[Any, ...]]:
    """The first ``blocks`` content blocks of a stream as the shape the API gives them:
    the opening block's type and keys in order, then the kinds of deltas, repeats
    collapsed (text is cut differently, the order of things is what must agree)."""
    shape: list[tuple[Any, ...]] = []
    for payload in data(events):
        kind = payload["type"]
        if kind == "content_block_start" and payload["index"] < blocks:
            opened = payload["content_block"]
            shape.append(("start", opened["type"], tuple(opened)))
        elif kind == "content_block_delta" and payload["index"] < blocks:
            step = ("delta", payload["delta"]["type"])
            if shape[-1] != step:
                shape.append(step)
        elif kind == "content_block_stop" and payload["index"] < blocks:
            shape.append(("stop",))
    return shape


def search_result(events: list[SSEEvent]) -> dict[str, Any]:
    """The first page of the first search result block a stream opens."""
    block = next(
        d["content_block"]
        for d in data(events)
        if d["type"] == "content_block_start"
        and d["content_block"]["type"] == "web_search_tool_result"
    )
    page: dict[str, Any] = block["content"][0]
    return page


def test_anthropic_web_search_has_the_recorded_shape() -> None:
    """Block for block, our stream of a search and a cited answer is built as the real
    one: the tool's input streamed from ``{}`` through an empty first fragment, its
    result whole in its start event, a cited text block opened with empty citations
    and its citations before its text, the searches counted in the final usage."""
    recorded = stream_of(ANTHROPIC_SEARCH)
    ours = ANTHROPIC.render_events(LEEDS, ctx())
    # blocks 0-1: server_tool_use and its result; 2: plain text; 6: the first cited text
    assert skeleton(ours, 3) == skeleton(recorded, 3)
    assert skeleton(ours, 4)[-4:] == skeleton(recorded, 7)[-4:]
    first = lambda events, kind: next(d for d in data(events) if d["type"] == kind)  # noqa: E731
    assert first(ours, "content_block_delta")["delta"] == {
        "type": "input_json_delta",
        "partial_json": "",
    }
    assert list(search_result(ours)) == list(search_result(recorded))
    citation = next(d for d in data(ours) if d.get("delta", {}).get("type") == "citations_delta")
    recorded_citation = next(
        d for d in data(recorded) if d.get("delta", {}).get("type") == "citations_delta"
    )
    assert list(citation["delta"]["citation"]) == list(recorded_citation["delta"]["citation"])
    usage = first(ours, "message_delta")["usage"]["server_tool_use"]
    assert usage["web_search_requests"] == 1


def test_anthropic_code_execution_is_what_the_sdk_reads() -> None:
    reply = Reply(
        parts=[
            ServerToolCall.code_execution("print(6 * 7)", stdout="42\n", id="srvtoolu_run"),
            ServerToolCall.web_search("too many", error="max_uses_exceeded"),
            Text(text="It is 42."),
        ]
    )
    created = sdk_create(ANTHROPIC.render_body(reply, ctx()))
    streamed = sdk_stream([encode(ANTHROPIC.render_events(reply, ctx()))])
    assert streamed.model_dump() == created.model_dump()
    use, run, _, failed, text = created.content
    assert (use.type, use.id, use.name, use.input) == (
        "server_tool_use",
        "srvtoolu_run",
        "code_execution",
        {"code": "print(6 * 7)"},
    )
    assert isinstance(run, CodeExecutionToolResultBlock)
    assert (run.tool_use_id, run.content.stdout, run.content.return_code) == (
        "srvtoolu_run",
        "42\n",
        0,
    )
    assert isinstance(failed, WebSearchToolResultBlock)
    assert failed.content.error_code == "max_uses_exceeded"  # type: ignore[union-attr]
    assert created.container is not None  # code ran in a container the message names
    assert created.container.id.startswith("container_011C")
    assert created.usage.server_tool_use.web_search_requests == 0  # type: ignore[union-attr]
    assert text.type == "text"


def test_anthropic_recording_reads_back_and_renders_again() -> None:
    """The real web-search stream folds to two searches and cited text; rendered again
    from that neutral reply, the SDK builds the same blocks, searches and citations."""
    body = ANTHROPIC.fold(stream_of(ANTHROPIC_SEARCH))
    reply = ANTHROPIC.to_reply(body)
    searches = reply.server_tool_calls
    assert [s.query for s in searches] == [
        b["input"]["query"] for b in body["content"] if b["type"] == "server_tool_use"
    ]
    assert [s.id for s in searches] == [
        b["id"] for b in body["content"] if b["type"] == "server_tool_use"
    ]
    assert [len(s.results) for s in searches] == [
        len(b["content"]) for b in body["content"] if b["type"] == "web_search_tool_result"
    ]
    cited = [c.url for p in reply.parts if isinstance(p, Text) for c in p.citations]
    assert cited == [
        c["url"] for b in body["content"] if b["type"] == "text" for c in b.get("citations") or []
    ]
    assert reply.text_content == "".join(b["text"] for b in body["content"] if b["type"] == "text")
    again = sdk_stream([encode(ANTHROPIC.render_events(reply, ctx()))])
    assert [b.type for b in again.content] == [b["type"] for b in body["content"]]
    assert [c.url for b in again.content if b.type == "text" for c in b.citations or []] == cited


# -- OpenAI Responses --------------------------------------------------------------------


@settings(max_examples=60)
@given(reply=server_tool_replies(("web_search",)), data=st.data(), include=st.booleans())
def test_responses_stream_and_body_agree_in_the_sdk(
    reply: Reply, data: st.DataObject, include: bool
) -> None:
    options = {"include": INCLUDE} if include else {}
    body = RESPONSES.render_body(reply, ctx(**options))
    events = RESPONSES.render_events(reply, ctx(**options))
    chunks = data.draw(responses_sdk.chunkings(encode(events)), label="chunks")
    created = responses_sdk.sdk_create(body)
    _, streamed = responses_sdk.sdk_stream(chunks)
    assert responses_sdk.dump(streamed) == responses_sdk.dump(created)
    searches = [o for o in created.output if o.type == "web_search_call"]
    assert [s.action.query for s in searches] == [s.query for s in reply.server_tool_calls]
    assert [s.status for s in searches] == [
        "failed" if s.error else "completed" for s in reply.server_tool_calls
    ]
    for search, part in zip(searches, reply.server_tool_calls, strict=True):
        sources = search.action.sources
        assert ([s.url for s in sources] if sources is not None else None) == (
            [r.url for r in part.results] if include else None
        )


@settings(max_examples=15)
@given(reply=server_tool_replies(("web_search",)), data=st.data())
def test_responses_stream_and_body_agree_async(reply: Reply, data: st.DataObject) -> None:
    body = RESPONSES.render_body(reply, ctx(include=INCLUDE))
    events = RESPONSES.render_events(reply, ctx(include=INCLUDE))
    chunks = data.draw(responses_sdk.chunkings(encode(events)), label="chunks")

    async def both() -> tuple[Any, Any]:
        sdk = responses_sdk.async_client(lambda _: responses_sdk.json_response(body))
        created = await sdk.responses.create(**responses_sdk.ASK)
        streaming = responses_sdk.async_client(lambda _: responses_sdk.async_sse_response(chunks))
        async with streaming.responses.stream(**responses_sdk.ASK) as stream:
            return created, await stream.get_final_response()

    created, streamed = asyncio.run(both())
    assert responses_sdk.dump(streamed) == responses_sdk.dump(created)


def as_responses_reads_it(part: Any) -> Any:
    """What a Responses body carries back: spans (whole text: none), no cited text; a
    search's query, page urls and whether it failed (no titles, no error codes)."""
    if isinstance(part, Text):
        cited = []
        for c in part.citations:
            start, end = c.span(part.text)
            whole = (start, end) == (0, len(part.text))
            span = {"start": None, "end": None} if whole else {"start": start, "end": end}
            cited.append(c.model_copy(update={"cited_text": "", **span}))
        return part.model_copy(update={"citations": cited})
    if isinstance(part, ServerToolCall):
        results = [SearchResult(url=r.url) for r in part.results]
        error = None if part.error is None else "failed"
        return part.model_copy(update={"id": None, "results": results, "error": error})
    if isinstance(part, ToolCall):
        return part.model_copy(update={"id": None})
    return part.model_copy(update={"signature": None}) if isinstance(part, Thinking) else part


@settings(max_examples=60)
@given(reply=server_tool_replies(("web_search",)))
def test_responses_fold_is_the_body_and_reads_back(reply: Reply) -> None:
    body = RESPONSES.render_body(reply, ctx(include=INCLUDE))
    folded = RESPONSES.fold_detailed(
        RESPONSES.render_events(reply, ctx(include=INCLUDE)), strict=True
    )
    assert (folded.complete, folded.error, folded.unknown) == (True, None, [])
    assert folded.body == body
    back = RESPONSES.to_reply(body)
    assert [as_responses_reads_it(p) for p in back.parts] == [
        as_responses_reads_it(p) for p in reply.parts
    ]


def item_events(events: list[SSEEvent], item_type: str) -> list[dict[str, Any]]:
    """The records of the first output item of ``item_type``, from added to done."""
    records = data(events)
    start = next(
        i
        for i, d in enumerate(records)
        if d["type"] == "response.output_item.added" and d["item"]["type"] == item_type
    )
    index = records[start]["output_index"]
    return [d for d in records[start:] if d.get("output_index") == index][
        : 1
        + next(
            i
            for i, d in enumerate(records[start:])
            if d["type"] == "response.output_item.done" and d["output_index"] == index
        )
    ]


def test_responses_web_search_has_the_recorded_shape() -> None:
    """Our search item goes through the recorded states: announced in progress without
    its action, in_progress / searching / completed, done with the action (and its
    sources, which the recording's request asked for)."""
    recorded = item_events(stream_of(RESPONSES_SEARCH), "web_search_call")
    ours = item_events(RESPONSES.render_events(LEEDS, ctx(include=INCLUDE)), "web_search_call")
    assert [d["type"] for d in ours] == [d["type"] for d in recorded]
    assert set(ours[0]["item"]) == set(recorded[0]["item"]) == {"id", "type", "status"}
    assert list(ours[-1]["item"]) == list(recorded[-1]["item"])
    assert list(ours[-1]["item"]["action"]) == list(recorded[-1]["item"]["action"])
    assert ours[-1]["item"]["action"]["sources"] == [
        {"type": "url", "url": "https://met.example/leeds"}
    ]
    assert ours[-1]["item"]["id"] == "search-1"
    plain = item_events(RESPONSES.render_events(LEEDS, ctx()), "web_search_call")
    assert "sources" not in plain[-1]["item"]["action"]  # not asked for: not sent


def test_responses_annotations_arrive_once_their_text_has_streamed() -> None:
    text = "Rain in Leeds. Sun in York."
    reply = Reply.text(
        text,
        citations=[
            Citation(url="https://york.example", title="York", start=15, end=27),
            Citation(url="https://met.example", title="Leeds", start=0, end=14),
        ],
    )
    events = RESPONSES.render_events(reply, ctx())
    raw = list(responses_sdk.sdk_raw_events([encode(events)]))
    kinds = [e.type for e in raw]
    added = [e for e in raw if e.type == "response.output_text.annotation.added"]
    assert [(a.annotation.url, a.annotation_index) for a in added] == [
        ("https://york.example", 0),
        ("https://met.example", 1),
    ]
    # each is announced once the delta holding its last character has arrived
    for event in added:
        position = raw.index(event)
        streamed = "".join(
            e.delta for e in raw[:position] if e.type == "response.output_text.delta"
        )
        assert len(streamed) >= event.annotation.end_index
    assert kinds.index("response.output_text.done") > max(raw.index(a) for a in added)
    final = responses_sdk.sdk_stream([encode(events)])[1]
    notes = final.output[0].content[0].annotations
    assert [(n.start_index, n.end_index, n.title) for n in notes] == [
        (15, 27, "York"),
        (0, 14, "Leeds"),
    ]


def test_responses_recording_reads_back_as_a_search() -> None:
    body = RESPONSES.fold(stream_of(RESPONSES_SEARCH))
    [search] = RESPONSES.to_reply(body).server_tool_calls
    recorded = next(o for o in body["output"] if o["type"] == "web_search_call")
    assert (search.id, search.query, search.error) == (
        recorded["id"],
        recorded["action"]["query"],
        None,
    )
    assert search.results == []  # the recording's only source is an API, not a page


# -- formats that cannot send a part refuse it ----------------------------------------------


@pytest.mark.parametrize(
    ("provider", "part", "able"),
    [
        ("openai_chat", ServerToolCall.web_search("q"), "only anthropic and openai_responses can"),
        ("openai_responses", ServerToolCall.code_execution("1"), "only anthropic can"),
        ("openai_chat", ServerToolCall.code_execution("1"), "only anthropic can"),
    ],
)
def test_a_format_without_the_tool_refuses_it_naming_the_part(
    provider: str, part: ServerToolCall, able: str
) -> None:
    reply = Reply(parts=[Text(text="Looking."), part])
    codec = codec_for(provider)  # type: ignore[arg-type]
    # the bytes a fake sends refuse it too, at once (a plain JSON reply is checked there only)
    for render in (codec.render_body, codec.render_events, codec.body_wire, codec.iter_wire):
        with pytest.raises(CodecError, match=able) as info:
            render(reply, RenderContext())
        assert info.value.field == "parts[1]"
        assert info.value.provider == provider
        assert f"provider-side {part.name!r}" in str(info.value)


def test_capabilities_are_declared_per_codec_and_absent_by_default() -> None:
    """A codec added later (Gemini, ...) sends neither until it says it can."""
    assert Codec.server_tools == frozenset()
    assert Codec.citations is False
    assert ANTHROPIC.server_tools == {"web_search", "code_execution"}
    assert RESPONSES.server_tools == {"web_search"}
    assert CHAT.server_tools == frozenset()
    assert (ANTHROPIC.citations, RESPONSES.citations, CHAT.citations) == (True, True, True)


# -- OpenAI Chat: citations as annotations --------------------------------------------------


def chat_pair(reply: Reply) -> tuple[dict[str, Any], dict[str, Any]]:
    sdk = chat_client(FakeServer(CHAT, [reply, reply]))
    created = sdk.chat.completions.create(model="gpt-4o", messages=MESSAGES)
    usage = {"include_usage": True}  # else the stream has no usage chunk, as on OpenAI
    with sdk.chat.completions.stream(
        model="gpt-4o", messages=MESSAGES, stream_options=usage
    ) as stream:
        final = stream.get_final_completion()
    streamed = final.model_dump()
    assert streamed["choices"][0]["message"].pop("parsed") is None
    return created.model_dump(), streamed


def test_chat_citations_are_annotations_the_sdk_accumulates() -> None:
    reply = Reply(
        parts=[
            Text(
                text="Rain in Leeds. ", citations=[Citation(url="https://met.example", title="Met")]
            ),
            Text(
                text="Sun in York.",
                citations=[Citation(url="https://york.example", title="York", start=0, end=3)],
            ),
        ]
    )
    created, streamed = chat_pair(reply)
    assert streamed == created
    notes = created["choices"][0]["message"]["annotations"]
    assert [
        (n["type"], n["url_citation"]["start_index"], n["url_citation"]["end_index"]) for n in notes
    ] == [
        ("url_citation", 0, 15),
        ("url_citation", 15, 18),  # moved by the text before its part
    ]
    back = CHAT.to_reply(CHAT.render_body(reply, RenderContext()))
    [text] = back.parts
    assert [(c.url, c.span(text.text)) for c in text.citations] == [
        ("https://met.example", (0, 15)),
        ("https://york.example", (15, 18)),
    ]


def test_chat_citations_async() -> None:
    reply = Reply.text("Cited.", citations=[Citation(url="https://a.example", title="A")])

    async def both() -> tuple[Any, Any]:
        sdk = chat_async_client(FakeServer(CHAT, [reply, reply]))
        created = await sdk.chat.completions.create(model="gpt-4o", messages=MESSAGES)
        async with sdk.chat.completions.stream(model="gpt-4o", messages=MESSAGES) as stream:
            return created, await stream.get_final_completion()

    created, streamed = asyncio.run(both())
    assert streamed.choices[0].message.annotations == created.choices[0].message.annotations
    assert created.choices[0].message.annotations[0].url_citation.url == "https://a.example"


def test_chat_sdk_raises_on_a_second_unindexed_annotations_delta() -> None:
    """Why the annotations go out as one delta: the SDK cannot merge a second list of
    unindexed objects into the first (this guards the rendering choice)."""
    reply = Reply.text("x", citations=[Citation(url="https://a.example")])
    events = CHAT.render_events(reply, RenderContext())
    notes = [e for e in events if '"annotations"' in e.data]
    assert len(notes) == 1
    doubled = [
        *events[: events.index(notes[0]) + 1],
        notes[0],
        *events[events.index(notes[0]) + 1 :],
    ]

    def handler(_: Any) -> Any:
        from tests.providers._openai_chat_sdk import sse_response

        return sse_response(encode(doubled), {"content-type": "text/event-stream"})

    with (
        pytest.raises(RuntimeError, match="index"),
        chat_client(handler).chat.completions.stream(model="gpt-4o", messages=MESSAGES) as stream,
    ):
        stream.get_final_completion()

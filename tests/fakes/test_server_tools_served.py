"""Provider-side tools and citations served by a fake model to the real SDKs.

The codec tests (``tests/providers/test_server_tools.py``) check each rendering
against the SDK accumulators and the recordings; these check the whole path: a
scripted reply through the interception layer to a default SDK client, sync and
async, streamed and not, cut in the middle of a provider-side tool, refused by a
format that has no such tool, and kept apart from the agent's own tools in the log.
"""

from __future__ import annotations

import asyncio
from typing import Any

import openai
import pytest
from pydantic import ValidationError

from pytest_agentreplay import FakeModel, Fault, Reply
from pytest_agentreplay.invariants import assert_every_tool_call_answered
from pytest_agentreplay.neutral import Citation, SearchResult, ServerToolCall, Text, ToolCall
from pytest_agentreplay.providers import codec_for
from pytest_agentreplay.providers.base import RenderContext
from pytest_agentreplay.runlog import RunLog, ToolCalled
from tests import sdk
from tests.sdk_raises import raises_cut

LEEDS = "https://met.example/leeds"
SEARCH = ServerToolCall.web_search(
    "weather in Leeds", [SearchResult(url=LEEDS, title="Leeds forecast")], id="srvtoolu_search1"
)
ANSWER = Text(
    text="Rain after noon.",
    citations=[Citation(url=LEEDS, title="Leeds forecast", cited_text="rain from 12:00")],
)
SEARCHED = Reply(parts=[SEARCH, ANSWER])


def _anthropic(stream: bool, is_async: bool) -> Any:
    """The final ``Message`` of one call, as the SDK builds it."""
    args = sdk._messages("anthropic", "Weather in Leeds?")
    if is_async:
        client = sdk.client("anthropic", is_async=True)

        async def run() -> Any:
            if not stream:
                return await client.messages.create(**args)
            async with client.messages.stream(**args) as s:
                return await s.get_final_message()

        return asyncio.run(run())
    client = sdk.client("anthropic")
    if not stream:
        return client.messages.create(**args)
    with client.messages.stream(**args) as s:
        return s.get_final_message()


def _responses(stream: bool, is_async: bool) -> Any:
    """The final ``Response`` of one call, as the SDK builds it."""
    args = {
        **sdk._messages("openai_responses", "Weather in Leeds?"),
        "tools": [{"type": "web_search"}],
    }
    if is_async:
        client = sdk.client("openai_responses", is_async=True)

        async def run() -> Any:
            if not stream:
                return await client.responses.create(**args)
            async with client.responses.stream(**args) as s:
                return await s.get_final_response()

        return asyncio.run(run())
    client = sdk.client("openai_responses")
    if not stream:
        return client.responses.create(**args)
    with client.responses.stream(**args) as s:
        return s.get_final_response()


def _drain(provider: str, seen: list[Any]) -> None:
    """Stream one call into ``seen``: ``(event type, snapshot)`` for Anthropic (the
    message as the SDK holds it after the event), ``(event type, event)`` for Responses."""
    client = sdk.client(provider)
    args = sdk._messages(provider, "Weather?")
    if provider == "anthropic":
        with client.messages.stream(**args) as s:
            for event in s:
                seen.append((event.type, s.current_message_snapshot))
        return
    with client.responses.stream(**args) as r:
        for event in r:
            seen.append((event.type, event))


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_anthropic_sdk_gets_the_search_its_results_and_the_cited_text(
    stream: bool, is_async: bool, scripted_model: FakeModel
) -> None:
    scripted_model.script(SEARCHED)
    message = _anthropic(stream, is_async)
    use, result, text = message.content
    assert (use.type, use.id, use.name, use.input) == (
        "server_tool_use",
        "srvtoolu_search1",
        "web_search",
        {"query": "weather in Leeds"},
    )
    assert result.type == "web_search_tool_result"
    assert result.tool_use_id == use.id
    assert [(r.url, r.title) for r in result.content] == [(LEEDS, "Leeds forecast")]
    assert text.text == "Rain after noon."
    [cited] = text.citations
    assert (cited.type, cited.url, cited.cited_text) == (
        "web_search_result_location",
        LEEDS,
        "rain from 12:00",
    )
    assert message.usage.server_tool_use.web_search_requests == 1
    assert message.stop_reason == "end_turn"  # the provider ran the tool: no tool_use stop


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_responses_sdk_gets_a_web_search_call_and_url_citations(
    stream: bool, is_async: bool, scripted_model: FakeModel
) -> None:
    spanned = Text(
        text="Leeds: rain after noon.",
        citations=[Citation(url=LEEDS, title="Leeds forecast", start=7, end=22)],
    )
    scripted_model.script(Reply(parts=[SEARCH.model_copy(update={"id": "ws_1"}), spanned]))
    response = _responses(stream, is_async)
    search, message = response.output
    assert (search.type, search.id, search.status) == ("web_search_call", "ws_1", "completed")
    assert search.action.query == "weather in Leeds"
    [note] = message.content[0].annotations
    assert (note.type, note.url, note.start_index, note.end_index) == (
        "url_citation",
        LEEDS,
        7,
        22,
    )
    assert response.output_text == "Leeds: rain after noon."


def test_code_execution_reaches_the_anthropic_sdk(scripted_model: FakeModel) -> None:
    ran = ServerToolCall.code_execution("print(6 * 7)", stdout="42\n", id="srvtoolu_code1")
    scripted_model.script(Reply(parts=[ran, Text(text="It is 42.")]))
    message = _anthropic(stream=True, is_async=False)
    use, result, _ = message.content
    assert (use.type, use.name, use.input) == (
        "server_tool_use",
        "code_execution",
        {"code": "print(6 * 7)"},
    )
    assert result.type == "code_execution_tool_result"
    assert (result.content.stdout, result.content.return_code) == ("42\n", 0)
    assert message.container is not None  # code ran in a container the message names


def test_a_cut_between_the_search_and_its_result_leaves_it_unanswered(
    scripted_model: FakeModel,
) -> None:
    """The cut is placed after the ``server_tool_use`` block closes and before its
    result block opens: what the SDK holds when the connection drops is a search
    that began and never ended, which an agent must report as interrupted."""
    events = codec_for("anthropic").render_events(SEARCHED, RenderContext())
    closed = next(i for i, e in enumerate(events) if e.event == "content_block_stop") + 1
    assert events[closed].event == "content_block_start"  # the result block, never sent
    scripted_model.script(SEARCHED.model_copy(update={"fault": Fault.cut(after_events=closed)}))
    seen: list[Any] = []
    with raises_cut("anthropic"):
        _drain("anthropic", seen)
    snapshot = seen[-1][1]
    assert [b.type for b in snapshot.content] == ["server_tool_use"]
    assert snapshot.content[0].id == "srvtoolu_search1"
    assert snapshot.content[0].input == {"query": "weather in Leeds"}
    assert [kind for kind, _ in seen].count("content_block_stop") == 1
    [call] = scripted_model.log
    assert (call.outcome, call.events_sent) == ("cut", closed)
    assert call.reply is not None
    assert call.reply.server_tool_calls == [SEARCH]


def test_a_cut_during_a_responses_web_search_leaves_it_in_progress(
    scripted_model: FakeModel,
) -> None:
    # created, in_progress, output_item.added (the search, in progress), then the cut
    scripted_model.script(SEARCHED.model_copy(update={"fault": Fault.cut(after_events=3)}))
    seen: list[Any] = []
    with raises_cut("openai_responses"):
        _drain("openai_responses", seen)
    [item] = [event.item for kind, event in seen if kind == "response.output_item.added"]
    assert (item.type, item.id, item.status) == (
        "web_search_call",
        "srvtoolu_search1",
        "in_progress",
    )
    assert scripted_model.log[0].outcome == "cut"


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_chat_completions_refuses_a_provider_side_tool_and_says_why(stream: bool) -> None:
    """Chat Completions has no item for a provider-side search: the fake answers
    with a 400 naming the part, and the test fails, instead of dropping the search."""
    fake = FakeModel(Reply(parts=[Text(text="Looking."), SEARCH]))
    with fake:
        with pytest.raises(openai.BadRequestError) as info:
            sdk.call("openai_chat", stream=stream)
        [problem] = fake.take_problems()  # checked below: the block must not fail for it
    assert "parts[1]" in str(info.value)
    assert "'web_search'" in str(info.value)
    assert "only anthropic and openai_responses can" in problem
    assert "Reply(parts=[Text(text='Looking.'), ServerToolCall.web_search(" in problem


def test_responses_refuses_code_execution_it_cannot_send() -> None:
    fake = FakeModel(Reply(parts=[ServerToolCall.code_execution("1 + 1")]))
    with fake:
        with pytest.raises(openai.BadRequestError, match=r"parts\[0\].*'code_execution'"):
            sdk.call("openai_responses", stream=True)
        [problem] = fake.take_problems()
    assert "only anthropic can" in problem


def test_the_run_log_tells_provider_side_tools_from_the_agents(
    scripted_model: FakeModel,
) -> None:
    scripted_model.script(
        Reply(parts=[SEARCH, ANSWER, ToolCall(name="weather", args={"city": "Leeds"}, id="c1")])
    )
    sdk.call("anthropic", stream=True, **sdk.tools_arg("anthropic"))
    log = RunLog.from_fake(scripted_model)
    [call] = log.model_calls
    assert call.reply is not None
    assert [c.id for c in call.reply.tool_calls] == ["c1"]  # the agent's to run
    assert [c.id for c in call.reply.server_tool_calls] == ["srvtoolu_search1"]
    brief = log.normalized(calls="brief")["model_calls"][0]["reply"]
    assert brief.startswith("assistant: [server_tool_call web_search <call-")
    assert "[tool_call weather <call-" in brief


def test_a_search_that_began_must_end_once() -> None:
    """The agent side: a runtime that shows a provider-side search begin must show it
    end, ``interrupted`` when the stream was cut first; and never answers it."""
    log = RunLog()
    log.step_started("s1")
    log.server_tool_call("ws_1", "web_search", {"query": "Leeds"}, step_id="s1")
    log.step_completed("s1", outcome="interrupted")
    with pytest.raises(AssertionError, match="'ws_1' .*never ended"):
        assert_every_tool_call_answered(log)
    log.server_tool_result("ws_1", outcome="interrupted", step_id="s1")
    assert_every_tool_call_answered(log)
    assert log.of(ToolCalled) == []  # the agent started no tool of its own
    log.tool_result("ws_1", "sunny")
    with pytest.raises(AssertionError, match="the provider ran that tool itself"):
        assert_every_tool_call_answered(log)


def test_a_reply_cannot_give_two_parts_one_id() -> None:
    """A result block names its call by id: a shared id would answer the wrong call."""
    with pytest.raises(ValidationError, match=r"parts\[1\] and parts\[0\] share the id 'x'"):
        Reply(parts=[ToolCall(name="f", id="x"), ServerToolCall.web_search("q", id="x")])


def test_plain_parts_dump_as_before() -> None:
    """Empty citations / results stay out of dumps: run logs and snapshots of plain
    text do not change (pydantic>=2.12's exclude_if)."""
    assert Text(text="a").model_dump() == {"kind": "text", "text": "a"}
    assert "citations" in ANSWER.model_dump()
    assert "results" not in ServerToolCall.web_search("q").model_dump()

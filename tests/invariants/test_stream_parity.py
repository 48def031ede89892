"""assert_stream_parity: the same response, served as JSON and as SSE under many
chunkings, gives equal run logs and equal persisted state.

Runtimes: the toy agent (anthropic SDK, with a tool), a one-step OpenAI Chat agent,
a hand-rolled SSE reader on httpx2, and a pydantic-ai Agent. Responses come from
the fakes, from a cassette written here, and from a real recorded Anthropic stream
in the corpus (its non-streaming twin is folded by the codec). Seeded bugs: usage
read from `message_start` when streaming, streaming without `include_usage`, an
SSE reader that assumes every network chunk holds whole events.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import httpx2
import pytest
from hypothesis import given, settings

from pytest_agentreplay import Reply, Usage, invariants, strategies
from pytest_agentreplay.cassettes import io as cassette_io
from pytest_agentreplay.cassettes.cassette import (
    Cassette,
    Interaction,
    RecordedEvent,
    RecordedRequest,
    RecordedResponse,
)
from pytest_agentreplay.invariants import InvariantViolation
from pytest_agentreplay.neutral import Request
from pytest_agentreplay.providers import codec_for
from pytest_agentreplay.providers.base import RenderContext
from pytest_agentreplay.runlog import Delta, RunLog, StepCompleted
from tests.invariants._chat import chat_answer
from tests.invariants._toy import ToyAgent

CORPUS_STREAM = (
    Path(__file__).parent.parent / "corpus/real/anthropic/anthropic-sdk__basic_response.sse.txt"
)
SCRIPT = [
    Reply.tool_call("weather", {"city": "Leeds"}, usage=Usage(input_tokens=21, output_tokens=9)),
    Reply.text(
        "It is sunny in Leeds, 21°C — naïve forecast.",
        usage=Usage(input_tokens=40, output_tokens=12),
    ),
]


def _toy_run(bugs: set[str] = frozenset()):  # type: ignore[assignment]
    async def run(stream: bool) -> RunLog:
        log = RunLog()
        agent = ToyAgent(
            log=log,
            stream=stream,
            bugs=bugs,
            tools={"weather": lambda args: f"sunny in {args['city']}"},
        )
        await agent.run_turn("Weather in Leeds?", turn_id="t1")
        await agent.aclose()
        return log

    return run


@pytest.mark.anyio
async def test_the_toy_agent_logs_the_same_run_either_way() -> None:
    runs = await invariants.assert_stream_parity_async(_toy_run(), script=SCRIPT)

    assert [r.label for r in runs] == ["sse/event", "sse/whole", "sse/1-byte", "sse/7-byte", "json"]
    assert [c.streaming for c in runs[0].log.model_calls] == [True, True]
    assert [c.streaming for c in runs[-1].log.model_calls] == [False, False]
    assert runs[0].log.of(Delta), "the streamed runs have deltas"
    assert not runs[-1].log.of(Delta), "the JSON run has none (the parity view drops them)"


@pytest.mark.anyio
async def test_usage_read_from_message_start_fails_parity() -> None:
    with pytest.raises(InvariantViolation) as failure:
        await invariants.assert_stream_parity_async(_toy_run({"stream_usage"}), script=SCRIPT)

    message = str(failure.value)
    assert message.startswith("assert_stream_parity failed at step #1 (id ")
    assert (
        ", index 0, turn 't1'): the non-streaming run (JSON body) and the streaming run "
        "(SSE, chunking 'event') logged different runs for the same response" in message
    )
    assert "usage.output_tokens: sse/event 1, json 9" in message


def test_a_sync_call_runs_the_async_openai_agent() -> None:
    def run(stream: bool) -> Any:
        return chat_answer("Capital of France?", stream=stream)

    paris = Reply.text("Paris.", usage=Usage(input_tokens=13, output_tokens=2))
    runs = invariants.assert_stream_parity(run, script=[paris])
    assert runs[0].log.of(StepCompleted)[0].usage == Usage(input_tokens=13, output_tokens=2)


def test_streaming_without_include_usage_fails_parity() -> None:
    def run(stream: bool) -> Any:
        return chat_answer("Capital of France?", stream=stream, include_usage=False)

    with pytest.raises(InvariantViolation) as failure:
        invariants.assert_stream_parity(run, script=[Reply.text("Paris.")])
    assert 'entries[1].usage: new json: {"input_tokens":' in str(failure.value)


# --- persisted state, and chunkings that split events -------------------------------------


async def naive_sse_answer(stream: bool, *, whole_events_per_chunk: bool) -> dict[str, Any]:
    """An agent that reads the Anthropic stream itself and persists the answer. The buggy
    reader splits each network chunk on blank lines, as if chunks held whole events."""
    body = {
        "model": "claude-sonnet-4-6",
        "max_tokens": 99,
        "stream": stream,
        "messages": [{"role": "user", "content": "hi"}],
    }
    async with httpx2.AsyncClient() as client:
        if not stream:
            reply = (await client.post("https://api.anthropic.com/v1/messages", json=body)).json()
            return {"saved": [{"role": "assistant", "text": reply["content"][0]["text"]}]}
        text, buffer = "", ""
        async with client.stream("POST", "https://api.anthropic.com/v1/messages", json=body) as r:
            async for chunk in r.aiter_text():
                buffer = chunk if whole_events_per_chunk else buffer + chunk
                *events, buffer = buffer.split("\n\n")
                for event in events:
                    data = next(
                        (ln[6:] for ln in event.splitlines() if ln.startswith("data: ")), ""
                    )
                    delta = json.loads(data).get("delta", {}) if data else {}
                    text += delta.get("text", "")
        return {"saved": [{"role": "assistant", "text": text}]}


@pytest.mark.anyio
async def test_state_is_compared_and_a_reader_that_assumes_whole_events_fails() -> None:
    script = [Reply.text("Bonjour, ça va très bien.")]

    async def correct(stream: bool) -> dict[str, Any]:
        return await naive_sse_answer(stream, whole_events_per_chunk=False)

    runs = await invariants.assert_stream_parity_async(correct, script=script)
    assert runs[0].state == {"saved": [{"role": "assistant", "text": "Bonjour, ça va très bien."}]}

    async def buggy(stream: bool) -> dict[str, Any]:
        return await naive_sse_answer(stream, whole_events_per_chunk=True)

    with pytest.raises(InvariantViolation) as failure:
        await invariants.assert_stream_parity_async(buggy, script=script)
    assert failure.value.where == "the persisted state"
    assert (
        "the streaming run (SSE, chunking '1-byte') and the streaming run (SSE, chunking "
        "'event') persisted different state" in str(failure.value)
    )
    assert "saved[0].text: sse/event 'Bonjour, ça va très bien.', sse/1-byte ''" in str(
        failure.value
    )


def test_hypothesis_finds_a_chunking_that_breaks_the_reader() -> None:
    script = [Reply.text("Bonjour, ça va très bien.")]

    def run(stream: bool) -> Any:
        return naive_sse_answer(stream, whole_events_per_chunk=True)

    @settings(max_examples=25, derandomize=True, database=None, deadline=None)
    @given(chunking=strategies.chunkings())
    def check(chunking: Any) -> None:
        invariants.assert_stream_parity(run, script=script, chunkings=["event", chunking])

    with pytest.raises(InvariantViolation) as failure:
        check()
    assert failure.value.where == "the persisted state"
    assert "sse/Chunking(" in str(failure.value)


# --- cassettes ------------------------------------------------------------------------------


def _recorded_stream(path: Path) -> Path:
    """A cassette holding one streamed Anthropic answer, as a recording would."""
    codec = codec_for("anthropic")
    request = {
        "model": "claude-sonnet-4-6",
        "max_tokens": 256,
        "stream": True,
        "messages": [{"role": "user", "content": "Hi"}],
    }
    reply = Reply.text("Hello from the recording.", usage=Usage(input_tokens=8, output_tokens=5))
    events = codec.render_events(reply, RenderContext(request=Request(provider="anthropic")))
    cassette = Cassette(
        interactions=[
            Interaction(
                request=RecordedRequest(
                    method="POST", url="https://api.anthropic.com/v1/messages", json=request
                ),  # type: ignore[call-arg]
                response=RecordedResponse(
                    status=200,
                    headers={"content-type": codec.stream_content_type},
                    events=[RecordedEvent.from_sse(e, t=0.01 * i) for i, e in enumerate(events)],
                ),
            )
        ]
    )
    cassette_io.save(path, cassette)
    return path


def _one_turn(bugs: set[str] = frozenset()):  # type: ignore[assignment]
    async def run(stream: bool) -> RunLog:
        log = RunLog()
        agent = ToyAgent(log=log, stream=stream, bugs=bugs)
        await agent.run_turn("Hi", turn_id="t1")
        await agent.aclose()
        return log

    return run


@pytest.mark.anyio
async def test_a_cassette_stream_and_its_folded_twin_agree(tmp_path: Path) -> None:
    cassette = _recorded_stream(tmp_path / "hello.yaml")

    runs = await invariants.assert_stream_parity_async(_one_turn(), cassette=cassette)

    assert runs[0].log.messages(role="assistant")[0].text == "Hello from the recording."
    assert runs[-1].log.model_calls[0].streaming is False
    assert runs[-1].log.model_calls[0].reply == runs[0].log.model_calls[0].reply


@pytest.mark.anyio
async def test_a_handle_that_is_recording_offers_what_it_recorded(tmp_path: Path) -> None:
    """While a test records, the ``agentreplay`` handle has loaded nothing yet: the
    stream it just recorded is what the parity check replays."""
    recorded = cassette_io.load(_recorded_stream(tmp_path / "hello.yaml")).interactions
    recording = SimpleNamespace(interactions=[], recorded=list(recorded))

    runs = await invariants.assert_stream_parity_async(_one_turn(), cassette=recording)

    assert runs[-1].log.messages(role="assistant")[0].text == "Hello from the recording."


@pytest.mark.anyio
async def test_a_real_recorded_stream_and_its_folded_twin_agree() -> None:
    runs = await invariants.assert_stream_parity_async(
        _one_turn(), cassette=CORPUS_STREAM, chunkings=["event", 3]
    )
    [step] = runs[-1].log.of(StepCompleted)
    assert (step.text, step.usage) == ("Hello there!", Usage(input_tokens=11, output_tokens=6))


@pytest.mark.anyio
async def test_a_real_recording_catches_the_streaming_usage_bug() -> None:
    with pytest.raises(InvariantViolation, match=r"usage\.output_tokens: sse/event 1, json 6"):
        await invariants.assert_stream_parity_async(
            _one_turn({"stream_usage"}), cassette=CORPUS_STREAM
        )


@pytest.mark.anyio
async def test_a_run_that_makes_more_calls_than_recorded_fails(tmp_path: Path) -> None:
    cassette = _recorded_stream(tmp_path / "hello.yaml")

    async def twice(stream: bool) -> RunLog:
        log = RunLog()
        agent = ToyAgent(log=log, stream=stream)
        await agent.run_turn("Hi")
        await agent.run_turn("Again")
        return log

    with pytest.raises(AssertionError, match="the run made model call #1, but the recording has 1"):
        await invariants.assert_stream_parity_async(twice, cassette=cassette)


# --- a real framework ----------------------------------------------------------------------


@pytest.mark.anyio
async def test_a_pydantic_ai_agent_keeps_parity(monkeypatch: pytest.MonkeyPatch) -> None:
    from pydantic_ai import Agent

    monkeypatch.setenv("OPENAI_API_KEY", "test")

    def weather(city: str) -> str:
        """Current weather in a city."""
        return f"sunny in {city}"

    agent = Agent("openai-chat:gpt-4o", tools=[weather])

    async def run(stream: bool) -> RunLog:
        if not stream:
            return RunLog.from_pydantic_ai((await agent.run("Weather in Leeds?")).all_messages())
        async with agent.run_stream("Weather in Leeds?") as result:
            await result.get_output()
        return RunLog.from_pydantic_ai(result.all_messages())

    runs = await invariants.assert_stream_parity_async(run, script=SCRIPT, chunkings=["event", 5])

    assert [c.streaming for c in runs[0].log.model_calls] == [True, True]
    assert [c.streaming for c in runs[-1].log.model_calls] == [False, False]
    invariants.assert_every_tool_call_answered(runs[0].log)
    invariants.assert_single_terminal_step(runs[0].log)


def test_it_needs_a_script_or_a_cassette() -> None:
    with pytest.raises(ValueError, match="needs script"):
        invariants.assert_stream_parity(lambda stream: None)
    with pytest.raises(ValueError, match="a script .* or a cassette"):
        invariants.assert_stream_parity(lambda stream: None, script=["x"], cassette=[])

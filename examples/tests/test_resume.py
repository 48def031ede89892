"""Scenario 13: resuming after a crash in the middle of a stream (and in a tool).

Before each model call the agent writes its intent (the request) to the
write-ahead log, and after it the completion. A process that dies while a reply
streams in leaves an intent with no completion, and the turn ``running``. On
restart, :meth:`Agent.resume` re-issues that call once, in a fresh step at the
same index, and records exactly one completion. What was done before the crash is
not done again: the step that completed is not asked for again, its tool is not
run again; and the text the dead process had shown is not saved. A provider error
in the middle of a stream can leave its intent dangling on purpose
(``stream_error="leave_intent"``), for resume to re-issue; by default it fails the
turn, and nothing dangles.
"""

from __future__ import annotations

import pytest
from agent import Agent, ErrorEvent, MessageDelta, ModelStepStarted, SessionConfig, Store, Tool
from agent.testing import record
from agent.tools import CITY

from pytest_agentreplay import Fault, Reply, ToolCall, invariants

QUESTION = "What is the weather in Leeds?"
ANSWER = "It is sunny in Leeds."
FORECAST = "Sunny, 21 °C in Leeds."


class Crash(BaseException):
    """The process dies: a ``BaseException``, so no ``except Exception`` handles it."""


def crash_on_first_delta(event: object) -> None:
    if isinstance(event, MessageDelta):
        raise Crash


@pytest.mark.anyio
@pytest.mark.parametrize("provider", ["anthropic", "openai"])
async def test_a_call_that_died_mid_stream_is_reissued_once_on_resume(provider, backend, tmp_path):
    """Checks: the process dies at step 1's first delta, after step 0's tool ran:
    one dangling intent (step 1) and one pending turn are left. Resume on a fresh
    agent re-issues that call once with the same request, not step 0, and does not
    run the tool again; the turn completes with the answer, the write-ahead log
    closes the intent, and nothing stays pending."""
    # Step 0 asks for the weather (no text: no delta); step 1 dies at its first delta.
    backend.script(
        Reply.tool_call("weather", {"city": "Leeds"}),
        Reply.text(ANSWER),  # the dying call's reply
        Reply.text(ANSWER),  # the re-issued call's
    )
    tool_runs: list[str] = []

    async def weather(city: str) -> str:
        tool_runs.append(city)
        return FORECAST

    tools = [Tool("weather", "Current weather in a city.", CITY, weather)]
    database = str(tmp_path / "agent.db")
    agent = Agent(backend.config(provider), store=Store(database), tools=tools)
    log = record(agent, backend.runlog())
    agent.subscribe(crash_on_first_delta)

    with pytest.raises(Crash):
        await agent.run_turn(QUESTION)

    [dangling] = agent.store.dangling_intents(agent.session_id)
    [turn_id] = agent.store.pending_turns(agent.session_id)
    assert dangling.step_index == 1
    assert [m.role for m in agent.store.messages(agent.session_id)] == ["user", "assistant", "tool"]

    restarted = Agent(
        backend.config(provider), store=Store(database), session_id=agent.session_id, tools=tools
    )
    record(restarted, log).resumed()
    [result] = await restarted.resume()

    assert (result.turn_id, result.outcome, result.text) == (turn_id, "completed", ANSWER)
    [reissued_step] = restarted.events_of(ModelStepStarted)  # step 0 is not asked for again
    assert (reissued_step.step_index, reissued_step.step_id) != (1, dangling.step_id)
    assert reissued_step.step_index == 1
    assert tool_runs == ["Leeds"]  # the tool is not run again
    wal = [(r.entry, r.step_index) for r in restarted.store.wal(agent.session_id)]
    assert wal == [
        ("intent", 0),
        ("completion", 0),
        ("intent", 1),
        ("intent", 1),
        ("completion", 1),
    ]
    assert restarted.store.dangling_intents(agent.session_id) == []
    assert restarted.store.pending_turns(agent.session_id) == []
    saved = [(m.role, m.text) for m in restarted.store.messages(agent.session_id)]
    assert saved == [
        ("user", QUESTION),
        ("assistant", ""),
        ("tool", FORECAST),
        ("assistant", ANSWER),
    ]
    _, dead, reissued = log.model_calls
    assert dead.request.raw == reissued.request.raw  # the same request, sent again
    invariants.assert_dangling_intent_reissued(log, key=dangling.key)
    invariants.assert_single_terminal_step(log)
    invariants.assert_every_tool_call_answered(log)
    backend.assert_offline()


@pytest.mark.anyio
@pytest.mark.parametrize("provider", ["anthropic", "openai"])
async def test_a_turn_that_died_in_a_tool_goes_on_from_the_saved_reply(
    provider, scripted_model, tmp_path
):
    """The other place a process dies: after the model answered, while its tools run.
    Resume asks the model nothing again for that step, skips the call already
    answered, runs the one that was not, and goes on to the next step."""
    ask_two = Reply(
        parts=[
            ToolCall(name="weather", args={"city": "Leeds"}, id="call_leeds"),
            ToolCall(name="weather", args={"city": "York"}, id="call_york"),
        ]
    )
    scripted_model.script(ask_two, Reply.text(ANSWER))
    runs: list[str] = []
    crash_in = {"York"}

    async def weather(city: str) -> str:
        runs.append(city)
        if city in crash_in:
            crash_in.clear()  # the process dies once, the first time
            raise Crash
        return f"Sunny in {city}."

    tools = [Tool("weather", "Current weather in a city.", CITY, weather)]
    database = str(tmp_path / "agent.db")
    config = SessionConfig(provider=provider)
    agent = Agent(config, store=Store(database), tools=tools)
    with pytest.raises(Crash):
        await agent.run_turn(QUESTION)
    assert agent.store.dangling_intents(agent.session_id) == []  # the model call completed

    restarted = Agent(config, store=Store(database), session_id=agent.session_id, tools=tools)
    [result] = await restarted.resume()

    assert (result.outcome, result.text) == ("completed", ANSWER)
    assert runs == ["Leeds", "York", "York"]  # Leeds ran once; York again, as it never ended
    [next_step] = restarted.events_of(ModelStepStarted)  # step 0 is not asked for again
    assert next_step.step_index == 1
    assert len(scripted_model.calls) == 2
    saved = [(m.role, m.tool_call_id, m.text) for m in restarted.store.messages(agent.session_id)]
    assert saved == [
        ("user", None, QUESTION),
        ("assistant", None, ""),
        ("tool", "call_leeds", "Sunny in Leeds."),
        ("tool", "call_york", "Sunny in York."),
        ("assistant", None, ANSWER),
    ]
    assert restarted.store.pending_turns(agent.session_id) == []


# Stream events before the provider's error event: some text has been shown.
SOME_TEXT = {"anthropic": 5, "openai": 3}
SHOWN = "It is"  # what those events show of ANSWER, one delta a word


def failing_mid_stream(provider: str) -> Reply:
    """A reply whose stream reports an error event (after the 200) after some text."""
    fault = Fault.error_event(
        "invalid_request_error", "The stream failed.", after_events=SOME_TEXT[provider]
    )
    return Reply.text(ANSWER, fault=fault)


@pytest.mark.anyio
@pytest.mark.parametrize("provider", ["anthropic", "openai"])
async def test_a_mid_stream_error_left_as_a_dangling_intent_is_reissued_once_on_resume(
    provider, backend, tmp_path
):
    """Checks, under ``stream_error="leave_intent"``: the mid-stream error surfaces
    (an error event, the turn's result failed); the intent is durable and has no
    completion, and the turn stays running; resume re-issues the call once, with
    the same request, and records exactly one completion."""
    backend.script(failing_mid_stream(provider), Reply.text(ANSWER))
    database = str(tmp_path / "agent.db")
    config = backend.config(provider, stream_error="leave_intent")
    agent = Agent(config, store=Store(database))
    log = record(agent, backend.runlog())

    failed = await agent.run_turn(QUESTION)

    assert (failed.outcome, failed.error.kind) == ("failed", "bad_request")
    [reported] = agent.events_of(ErrorEvent)
    assert reported.turn_id == failed.turn_id
    [dangling] = agent.store.dangling_intents(agent.session_id)
    assert [r.entry for r in agent.store.wal(agent.session_id)] == ["intent"]
    assert agent.store.pending_turns(agent.session_id) == [failed.turn_id]
    assert [(m.role, m.kind) for m in agent.store.messages(agent.session_id)] == [
        ("user", "message")
    ]

    restarted = Agent(config, store=Store(database), session_id=agent.session_id)
    record(restarted, log).resumed()
    [result] = await restarted.resume()

    assert (result.turn_id, result.outcome, result.text) == (failed.turn_id, "completed", ANSWER)
    wal = [(r.entry, r.key) for r in restarted.store.wal(agent.session_id)]
    assert wal == [("intent", dangling.key), ("intent", dangling.key), ("completion", dangling.key)]
    assert restarted.store.dangling_intents(agent.session_id) == []
    failed_call, reissued = log.model_calls
    assert failed_call.request.raw == reissued.request.raw
    invariants.assert_dangling_intent_reissued(log, key=dangling.key)
    backend.assert_offline()


@pytest.mark.anyio
@pytest.mark.parametrize("provider", ["anthropic", "openai"])
async def test_by_default_a_mid_stream_error_completes_the_call_and_fails_the_turn(
    provider, backend, tmp_path
):
    """Checks, under the default ``stream_error="fail_turn"``: the same mid-stream
    error writes the call's completion and ends the turn in an error turn after
    exactly the text shown; nothing dangles, so resume has nothing to re-issue."""
    backend.script(failing_mid_stream(provider))
    database = str(tmp_path / "agent.db")
    agent = Agent(backend.config(provider), store=Store(database))
    log = record(agent, backend.runlog())

    failed = await agent.run_turn(QUESTION)

    assert (failed.outcome, failed.error.kind) == ("failed", "bad_request")
    assert [r.entry for r in agent.store.wal(agent.session_id)] == ["intent", "completion"]
    assert agent.store.dangling_intents(agent.session_id) == []
    assert agent.store.pending_turns(agent.session_id) == []
    kinds = [(m.role, m.kind, m.text) for m in agent.store.messages(agent.session_id)]
    assert kinds == [
        ("user", "message", QUESTION),
        ("assistant", "message", SHOWN),
        ("assistant", "error", failed.error.message),
    ]
    invariants.assert_terminal_error_turn(log, turn_id=failed.turn_id, error_kind="bad_request")

    restarted = Agent(backend.config(provider), store=Store(database), session_id=agent.session_id)
    assert await restarted.resume() == []
    assert len(log.model_calls) == 1
    backend.assert_offline()

"""assert_every_tool_call_answered: every tool call gets exactly one result.

Checked on the agent's own events and on what is sent to the model (a tool call
left unanswered in the history makes a real provider reject the next request;
the fakes accept it, so the invariant has to catch it). Seeded bug: a tool that
raises gets no tool_result. Also run on pydantic-ai and openai-agents logs.
"""

from __future__ import annotations

from typing import Any

import pytest

from pytest_agentreplay import FakeModel, Reply, invariants
from pytest_agentreplay.invariants import InvariantViolation
from pytest_agentreplay.runlog import RunLog, ToolResulted
from tests.invariants._toy import ToyAgent


def lookup(args: dict[str, Any]) -> str:
    raise KeyError(args["city"])


SCRIPT = [
    Reply.tool_call("lookup", {"city": "Atlantis"}, id="toolu_lookup_1"),
    Reply.text("I could not find Atlantis."),
]


@pytest.mark.anyio
async def test_a_failed_tool_still_answers_its_call(scripted_model: FakeModel) -> None:
    scripted_model.script(*SCRIPT)
    log = RunLog.from_fake(scripted_model)

    await ToyAgent(log=log, tools={"lookup": lookup}).run_turn("Where is Atlantis?")

    invariants.assert_every_tool_call_answered(log)
    [result] = log.of(ToolResulted)
    assert (result.call_id, result.outcome) == ("toolu_lookup_1", "failed")
    assert scripted_model.requests[1].tool_results[0].is_error


@pytest.mark.anyio
async def test_dropping_a_failed_tool_result_fails(scripted_model: FakeModel) -> None:
    scripted_model.script(*SCRIPT)
    log = RunLog.from_fake(scripted_model)
    await ToyAgent(log=log, tools={"lookup": lookup}, bugs={"drop_failed_tool_result"}).run_turn(
        "Where is Atlantis?", turn_id="t1"
    )
    step = log.steps()[0]

    with pytest.raises(InvariantViolation) as failure:
        invariants.assert_every_tool_call_answered(log)

    assert str(failure.value).splitlines() == [
        f"assert_every_tool_call_answered failed at {step.describe()}, tool call "
        f"'toolu_lookup_1' (lookup): it was unanswered; every tool call needs exactly one "
        f"result (outcome 'interrupted' when the run stopped first)",
        "  diff:",
        "    [\"toolu_lookup_1 (lookup)\"]: expected 'answered once', logged 'unanswered'",
    ]

    model_side = RunLog.from_fake(scripted_model)  # no agent events: the requests alone
    with pytest.raises(InvariantViolation) as failure:
        invariants.assert_every_tool_call_answered(model_side)
    assert str(failure.value).startswith(
        "assert_every_tool_call_answered failed at model call #1, tool call 'toolu_lookup_1' "
        "(lookup): the request sent to the model carries tool calls with no tool result"
    )


@pytest.mark.parametrize(
    ("build", "problem"),
    [
        pytest.param(
            lambda log: (log.tool_call("c1", "f"), log.tool_result("c1"), log.tool_result("c1")),
            "it was answered 2 times",
            id="answered-twice",
        ),
        pytest.param(
            lambda log: (log.tool_call("c1", "f"), log.tool_call("c1", "g"), log.tool_result("c1")),
            "the call id was used by 2 tool calls",
            id="id-reused",
        ),
        pytest.param(
            lambda log: (log.tool_result("ghost"),),
            "it answers a tool call that was never made",
            id="unknown-call",
        ),
    ],
)
def test_each_rule(build: Any, problem: str) -> None:
    log = RunLog()
    build(log)
    with pytest.raises(InvariantViolation, match=problem):
        invariants.assert_every_tool_call_answered(log)


def test_an_interrupted_tool_answers_its_call() -> None:
    log = RunLog()
    log.tool_call("ws_1", "web_search", {"q": "news"})
    log.tool_result("ws_1", outcome="interrupted")
    invariants.assert_every_tool_call_answered(log)


# --- real frameworks ------------------------------------------------------------------------


@pytest.mark.anyio
async def test_a_pydantic_ai_run_answers_its_tool_calls(
    scripted_model: FakeModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pydantic_ai import Agent

    monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
    scripted_model.script(Reply.tool_call("weather", {"city": "Leeds"}), Reply.text("Sunny."))

    def weather(city: str) -> str:
        """Current weather in a city."""
        return f"sunny in {city}"

    result = await Agent("anthropic:claude-sonnet-4-6", tools=[weather]).run("Leeds?")
    log = RunLog.from_pydantic_ai(result.all_messages(), model=scripted_model)

    invariants.assert_every_tool_call_answered(log)
    invariants.assert_single_terminal_step(log)
    assert [s.outcome for s in log.steps()] == ["completed", "completed"]
    assert log.messages(role="assistant")[-1].text == "Sunny."


@pytest.mark.anyio
async def test_openai_agents_results_and_stream_events_answer_their_tool_calls(
    scripted_model: FakeModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agents import Agent, Runner, function_tool, set_tracing_disabled

    monkeypatch.setenv("OPENAI_API_KEY", "test")
    set_tracing_disabled(True)

    @function_tool
    def weather(city: str) -> str:
        """Current weather in a city."""
        return f"sunny in {city}"

    agent = Agent(name="a", instructions="Be brief.", model="gpt-4o", tools=[weather])
    script = [Reply.tool_call("weather", {"city": "Leeds"}), Reply.text("Sunny in Leeds.")]

    scripted_model.script(*script)
    result = await Runner.run(agent, "Weather in Leeds?")
    from_result = RunLog.from_openai_agents(result)

    scripted_model.script(*script)
    streamed = Runner.run_streamed(agent, "Weather in Leeds?")
    from_events = RunLog()
    async for event in streamed.stream_events():
        from_events.feed_openai_agents(event)

    for log in (from_result, from_events):
        invariants.assert_every_tool_call_answered(log)
        invariants.assert_single_terminal_step(log)
    assert from_result.normalized(transport=False) == from_events.normalized(transport=False)
    assert [s.index for s in from_events.steps()] == [0, 1]

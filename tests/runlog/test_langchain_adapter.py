"""The LangChain / LangGraph callback adapter (issue 20, item 7), driven by real
``langgraph`` agents over real ``langchain-anthropic`` and ``langchain-openai``
chat models, served by the fake model."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("langgraph")
from langchain_anthropic import ChatAnthropic
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

from pytest_agentreplay import FakeModel, Fault, Reply, invariants
from pytest_agentreplay.runlog import (
    Delta,
    ErrorReported,
    MessageSaved,
    RunLog,
    StepCompleted,
    ToolCalled,
    ToolResulted,
    TurnEnded,
)
from pytest_agentreplay.runlog.adapters.langchain import langchain_handler


@tool
def weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"


@tool
def broken(city: str) -> str:
    """A tool that fails."""
    raise ValueError(f"no station in {city}")


MODELS = {
    "anthropic": lambda stream: ChatAnthropic(
        model="claude-test", api_key="test", max_retries=0, streaming=stream
    ),
    "openai_chat": lambda stream: ChatOpenAI(
        model="gpt-test", api_key="test", max_retries=0, streaming=stream
    ),
    "openai_responses": lambda stream: ChatOpenAI(
        model="gpt-test", api_key="test", max_retries=0, streaming=stream, use_responses_api=True
    ),
}


def create_agent(model: Any, tools: list[Any]) -> Any:
    """A LangGraph tool loop: the model node, and a tool node while it calls tools."""
    bound = model.bind_tools(tools) if tools else model
    graph = StateGraph(MessagesState)
    graph.add_node("agent", lambda state: {"messages": [bound.invoke(state["messages"])]})
    graph.add_edge(START, "agent")
    if tools:
        graph.add_node("tools", ToolNode(tools, handle_tool_errors=True))
        graph.add_conditional_edges("agent", tools_condition)
        graph.add_edge("tools", "agent")
    return graph.compile()


def run_agent(provider: str, stream: bool, fake: FakeModel, tools: list[Any]) -> RunLog:
    log = RunLog.from_fake(fake)
    agent = create_agent(MODELS[provider](stream), tools)
    agent.invoke(
        {"messages": [("user", "Weather in Leeds?")]},
        config={"callbacks": [langchain_handler(log)]},
    )
    return log


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("provider", sorted(MODELS))
def test_a_langgraph_tool_loop_becomes_a_run_log(
    provider: str, stream: bool, scripted_model: FakeModel
) -> None:
    scripted_model.script(
        Reply.tool_call("weather", {"city": "Leeds"}), Reply.text("It is sunny in Leeds.")
    )
    log = run_agent(provider, stream, scripted_model, [weather])

    first, second = log.steps()
    assert (first.index, second.index) == (0, 1)
    assert first.turn_id == second.turn_id is not None
    [call] = log.of(ToolCalled)
    [result] = log.of(ToolResulted)
    assert (call.name, call.args) == ("weather", {"city": "Leeds"})
    assert (result.call_id, result.content) == (call.call_id, "sunny in Leeds")
    # What the graph saved: the question, then what each node wrote to its state (the
    # answers, each tied to the step that produced it, and the tool's message).
    saved = [(m.role, m.text, m.step_id) for m in log.of(MessageSaved)]
    assert saved == [
        ("user", "Weather in Leeds?", None),
        ("assistant", "", first.id),
        ("tool", "sunny in Leeds", None),
        ("assistant", "It is sunny in Leeds.", second.id),
    ]
    assert [t.outcome for t in log.of(TurnEnded)] == ["completed"]
    assert bool(log.of(Delta)) is stream
    invariants.assert_single_terminal_step(log)
    invariants.assert_every_tool_call_answered(log)


def test_usage_reaches_the_step(scripted_model: FakeModel) -> None:
    from pytest_agentreplay import Usage

    scripted_model.script(Reply.text("Hi.", usage=Usage(input_tokens=12, output_tokens=3)))
    log = run_agent("anthropic", False, scripted_model, [])
    [completed] = log.of(StepCompleted)
    assert completed.usage is not None
    assert (completed.usage.input_tokens, completed.usage.output_tokens) == (12, 3)


def test_a_failing_tool_is_a_failed_tool_result(scripted_model: FakeModel) -> None:
    scripted_model.script(Reply.tool_call("broken", {"city": "Leeds"}), Reply.text("Sorry."))
    log = run_agent("openai_chat", False, scripted_model, [broken])
    [result] = log.of(ToolResulted)
    assert result.outcome == "failed" and "no station in Leeds" in result.content
    invariants.assert_every_tool_call_answered(log)


def test_a_model_error_is_reported_on_a_failed_step_and_turn(scripted_model: FakeModel) -> None:
    scripted_model.script(Fault.http(429, retry_after=7))
    handler = langchain_handler()  # no log: the entries are kept on the handler
    agent = create_agent(MODELS["anthropic"](False), [])
    with pytest.raises(Exception, match="429"):
        agent.invoke({"messages": [("user", "hi")]}, config={"callbacks": [handler]})
    log = RunLog.from_fake(scripted_model)
    for entry in handler.entries:
        log.add(entry)
    [error] = log.of(ErrorReported)
    assert (error.status, str(error.retry_after)) == (429, "7")
    assert [s.outcome for s in log.of(StepCompleted)] == ["failed"]
    assert [t.outcome for t in log.of(TurnEnded)] == ["failed"]
    invariants.assert_single_terminal_step(log)


def test_a_dropped_tool_result_fails_the_pairing_invariant(scripted_model: FakeModel) -> None:
    scripted_model.script(
        Reply.tool_call("weather", {"city": "Leeds"}), Reply.text("It is sunny in Leeds.")
    )
    log = run_agent("anthropic", False, scripted_model, [weather])
    broken_log = RunLog(entries=[e for e in log.entries if not isinstance(e, ToolResulted)])
    with pytest.raises(AssertionError, match="tool"):
        invariants.assert_every_tool_call_answered(broken_log)

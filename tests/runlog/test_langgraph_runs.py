"""The LangChain / LangGraph adapter on the paths tests rarely take (issue 30): the stop
button, retries (``.with_retry()``, a node's ``RetryPolicy``, a loop of the node's own,
the SDK's ``max_retries``), checkpoints and their resume, and what the graph saved.

Real ``langgraph`` graphs over real ``langchain-anthropic`` / ``langchain-openai`` chat
models, answered by the plugin's fake models. Each buggy agent here is caught by an
invariant that passed it before the adapter could see stops, retries and state."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import anthropic
import pytest

pytest.importorskip("langgraph")
from langchain_anthropic import ChatAnthropic
from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode
from langgraph.types import Command, RetryPolicy, interrupt

from pytest_agentreplay import FakeModel, Fault, Reply, invariants
from pytest_agentreplay.invariants import InvariantViolation
from pytest_agentreplay.runlog import (
    Delta,
    IntentCompleted,
    IntentIssued,
    MessageSaved,
    Resumed,
    RunLog,
    StepCompleted,
    ToolResulted,
    TurnEnded,
)
from pytest_agentreplay.runlog.adapters.langchain import langchain_handler

ANSWER = "It is sunny in Leeds today."
QUESTION = {"messages": [("user", "Weather in Leeds?")]}
PROVIDERS = ["anthropic", "openai"]
# Stream events before the fake holds the call: some text has been shown by then.
SOME_TEXT = {"anthropic": 5, "openai": 3}

Node = Callable[[MessagesState], Awaitable[dict[str, Any]]]


def chat(provider: str, *, stream: bool = True, max_retries: int = 0) -> Any:
    if provider == "anthropic":
        return ChatAnthropic(
            model="claude-test", api_key="test", max_retries=max_retries, streaming=stream
        )
    return ChatOpenAI(model="gpt-test", api_key="test", max_retries=max_retries, streaming=stream)


def answering(model: Any) -> Node:
    """The plainest node: ask the model, write its answer."""

    async def agent(state: MessagesState) -> dict[str, Any]:
        return {"messages": [await model.ainvoke(state["messages"])]}

    return agent


def graph(node: Node, *, checkpointer: Any = None, retry_policy: Any = None) -> Any:
    builder = StateGraph(MessagesState)
    builder.add_node("agent", node, retry_policy=retry_policy)
    builder.add_edge(START, "agent")
    return builder.compile(checkpointer=checkpointer)


def config(log: RunLog, thread: str | None = None) -> dict[str, Any]:
    settings: dict[str, Any] = {"callbacks": [langchain_handler(log)]}
    if thread is not None:
        settings["configurable"] = {"thread_id": thread}
    return settings


# --- the stop button ---------------------------------------------------------------------


async def run_until_stopped(agent: Any, how: str, log: RunLog) -> None:
    """Run the graph as a chat UI does: awaiting its answer, or reading its stream."""
    if how == "ainvoke":
        await agent.ainvoke(QUESTION, config=config(log))
        return
    async for _ in agent.astream(QUESTION, config=config(log), stream_mode="messages"):
        pass


async def press_stop(fake: FakeModel, log: RunLog, task: asyncio.Task[None]) -> None:
    assert await fake.wait_blocked_async(timeout=5), "the model call was never held"
    log.interrupt_requested()  # the user presses stop...
    task.cancel()  # ...and the UI cancels the run
    with pytest.raises(asyncio.CancelledError):
        await task


@pytest.mark.anyio
@pytest.mark.parametrize("how", ["ainvoke", "astream"])
@pytest.mark.parametrize("provider", PROVIDERS)
async def test_the_stop_button_ends_the_held_step_once_as_interrupted_and_the_turn_aborted(
    provider: str, how: str, scripted_model: FakeModel
) -> None:
    scripted_model.script(Reply.text(ANSWER)).block(after_events=SOME_TEXT[provider])
    log = RunLog.from_fake(scripted_model)
    task = asyncio.ensure_future(run_until_stopped(graph(answering(chat(provider))), how, log))

    await press_stop(scripted_model, log, task)

    invariants.assert_single_terminal_step(log)
    invariants.assert_no_model_call_after_interrupt(log)
    [step] = log.steps()
    assert (len(step.ended), step.outcome) == (1, "interrupted")
    shown = "".join(d.text for d in log.of(Delta))
    assert shown and ANSWER.startswith(shown) and shown != ANSWER
    assert step.text == shown  # the interrupted step keeps what the user saw
    assert [t.outcome for t in log.of(TurnEnded)] == ["aborted"]
    assert [c.outcome for c in log.model_calls] == ["cancelled"]


@pytest.mark.anyio
async def test_a_stream_closed_early_aborts_the_turn(blocking_model: FakeModel) -> None:
    """A consumer that stops reading (``break``, then ``aclose()``) stops the run too:
    the graph sees ``GeneratorExit``, not a failure."""
    log = RunLog.from_fake(blocking_model)
    stream = graph(answering(chat("anthropic"))).astream(
        QUESTION, config=config(log), stream_mode="updates"
    )
    pending = asyncio.ensure_future(stream.__anext__())
    assert await blocking_model.wait_blocked_async(timeout=5)
    pending.cancel()
    with pytest.raises(asyncio.CancelledError):
        await pending
    await stream.aclose()

    invariants.assert_single_terminal_step(log)
    assert [s.outcome for s in log.of(StepCompleted)] == ["interrupted"]
    assert [t.outcome for t in log.of(TurnEnded)] == ["aborted"]


# --- retries -----------------------------------------------------------------------------


def retried_by_with_retry(model: Any) -> Node:
    return answering(model.with_retry(stop_after_attempt=3, wait_exponential_jitter=False))


def retried_by_its_own_loop(model: Any, *, resend_partial: bool = False) -> Node:
    """A node that streams the answer and tries again when the stream drops; the bug
    (``resend_partial``) continues from the partial answer instead of asking again."""

    async def agent(state: MessagesState) -> dict[str, Any]:
        messages = list(state["messages"])
        for _ in range(3):
            seen: list[str] = []
            try:
                async for chunk in model.astream(messages):
                    seen.append(chunk.text)
                return {"messages": [AIMessage("".join(seen))]}
            except Exception:
                if resend_partial:
                    messages = [*state["messages"], AIMessage("".join(seen))]
        raise RuntimeError("no answer")

    return agent


async def run_retried(node: Node, fake: FakeModel, **graph_args: Any) -> RunLog:
    log = RunLog.from_fake(fake)
    await graph(node, **graph_args).ainvoke(QUESTION, config=config(log))
    return log


def assert_one_clean_retry(log: RunLog) -> None:
    assert [(s.index, s.outcome) for s in log.steps()] == [(0, "retrying"), (0, "completed")]
    invariants.assert_single_terminal_step(log)
    invariants.assert_retries_resend_identical_input(log)
    invariants.assert_no_partial_content_saved(log)
    assert [m.text for m in log.messages(role="assistant")] == [ANSWER]


RETRYING_NODES = {
    "with_retry": retried_by_with_retry,
    "own_loop": retried_by_its_own_loop,
    "retry_policy": answering,
}


@pytest.mark.anyio
@pytest.mark.parametrize("how", sorted(RETRYING_NODES))
@pytest.mark.parametrize("provider", PROVIDERS)
async def test_a_cut_stream_retried_in_the_graph_is_a_retry_at_the_same_index(
    provider: str, how: str, interrupting_model: FakeModel
) -> None:
    interrupting_model.script(Reply.text(ANSWER))
    policy = RetryPolicy(initial_interval=0.001, jitter=False) if how == "retry_policy" else None
    node = RETRYING_NODES[how](chat(provider))

    log = await run_retried(node, interrupting_model, retry_policy=policy)

    assert_one_clean_retry(log)
    assert [c.outcome for c in log.model_calls] == ["cut", "completed"]


@pytest.mark.anyio
async def test_a_retry_that_resends_the_partial_answer_fails_the_retry_invariant(
    interrupting_model: FakeModel,
) -> None:
    interrupting_model.script(Reply.text(ANSWER))
    node = retried_by_its_own_loop(chat("anthropic"), resend_partial=True)

    log = await run_retried(node, interrupting_model)

    assert [s.outcome for s in log.steps()] == ["retrying", "completed"]
    with pytest.raises(InvariantViolation, match="sent a different request body"):
        invariants.assert_retries_resend_identical_input(log)


@pytest.mark.anyio
@pytest.mark.parametrize("provider", PROVIDERS)
async def test_the_sdk_s_own_retries_are_model_calls_of_one_step(
    provider: str, scripted_model: FakeModel
) -> None:
    """``max_retries`` retries inside one LangChain call: the adapter sees one step
    (no callback fires per HTTP request); the invariants pair the retry from the model
    side, where the fake saw both requests."""
    scripted_model.script(Fault.http(503, "overloaded", retry_after=0.001), Reply.text(ANSWER))
    node = answering(chat(provider, stream=False, max_retries=1))

    log = await run_retried(node, scripted_model)

    assert [s.outcome for s in log.steps()] == ["completed"]
    assert [c.outcome for c in log.model_calls] == ["http_error", "completed"]
    invariants.assert_retries_resend_identical_input(log)
    invariants.assert_single_terminal_step(log)


@pytest.mark.anyio
async def test_a_retry_loop_that_gives_up_ends_its_last_try_failed(
    scripted_model: FakeModel,
) -> None:
    scripted_model.interrupt(times=3).script(Reply.text(ANSWER))
    scripted_model.check_unused = False  # no try gets the whole answer
    node = retried_by_with_retry(chat("anthropic"))
    log = RunLog.from_fake(scripted_model)

    with pytest.raises(Exception, match="Connection"):
        await graph(node).ainvoke(QUESTION, config=config(log))

    assert [(s.index, s.outcome) for s in log.steps()] == [
        (0, "retrying"),
        (0, "retrying"),
        (0, "failed"),
    ]
    assert [t.outcome for t in log.of(TurnEnded)] == ["failed"]
    invariants.assert_single_terminal_step(log)
    invariants.assert_retries_resend_identical_input(log, min_retries=2)


# --- what the graph saved ----------------------------------------------------------------


def streamed_into_a_buffer(model: Any, *, reset_on_retry: bool) -> Node:
    """A node that streams the answer into a buffer and writes it to the state; the
    classic bug keeps the buffer across tries, so a retried answer is saved after
    the text of the try that dropped."""

    async def agent(state: MessagesState) -> dict[str, Any]:
        buffer: list[str] = []
        for _ in range(3):
            if reset_on_retry:
                buffer = []
            try:
                async for chunk in model.astream(state["messages"]):
                    buffer.append(chunk.text)
                break
            except Exception:
                continue
        return {"messages": [AIMessage("".join(buffer))]}

    return agent


@pytest.mark.anyio
@pytest.mark.parametrize("provider", PROVIDERS)
async def test_partial_text_doubled_in_the_graph_s_state_fails_the_partial_content_invariant(
    provider: str, interrupting_model: FakeModel
) -> None:
    interrupting_model.script(Reply.text(ANSWER))
    node = streamed_into_a_buffer(chat(provider), reset_on_retry=False)
    log = RunLog.from_fake(interrupting_model)
    agent = graph(node)

    state = await agent.ainvoke(QUESTION, config=config(log))

    partial = log.steps()[0].text
    assert partial and ANSWER.startswith(partial) and partial != ANSWER
    saved = state["messages"][-1].content
    assert saved == partial + ANSWER  # the graph's state holds the doubled text...
    assert [m.text for m in log.messages(role="assistant")] == [saved]  # ...and so does the log
    with pytest.raises(InvariantViolation, match="leaked into a saved message"):
        invariants.assert_no_partial_content_saved(log)


@pytest.mark.anyio
async def test_a_buffer_reset_before_each_try_saves_the_answer_once(
    interrupting_model: FakeModel,
) -> None:
    interrupting_model.script(Reply.text(ANSWER))
    node = streamed_into_a_buffer(chat("anthropic"), reset_on_retry=True)

    log = await run_retried(node, interrupting_model)

    assert_one_clean_retry(log)


# --- checkpoints, intents and resume -----------------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize(
    "fault",
    [Fault.cut(after_events=4), Fault.error_event("overloaded_error", "fell over", after_events=4)],
    ids=["cut", "error_event"],
)
async def test_a_task_that_failed_mid_stream_leaves_its_intent_for_the_resume(
    fault: Fault, scripted_model: FakeModel
) -> None:
    """The durable-runtime scenario, in LangGraph: the checkpoint holds the task before
    it runs (its intent); a mid-stream failure leaves it pending; the resumed run
    (``ainvoke(None)`` on the thread) re-issues it once, and it completes."""
    scripted_model.script(Reply.text(ANSWER, fault=fault), Reply.text(ANSWER))
    agent = graph(answering(chat("anthropic")), checkpointer=InMemorySaver())
    log = RunLog.from_fake(scripted_model)
    with pytest.raises(anthropic.APIError):  # the cut, or the error event
        await agent.ainvoke(QUESTION, config=config(log, thread="chat-1"))

    pending = await agent.aget_state({"configurable": {"thread_id": "chat-1"}})
    [dangling] = log.of(IntentIssued)
    [task] = pending.tasks  # the task the checkpoint holds: the intent names it
    assert dangling.key == f"chat-1/{pending.metadata['step'] + 1}/{task.name}"
    assert log.of(IntentCompleted) == []

    state = await agent.ainvoke(None, config=config(log, thread="chat-1"))

    assert state["messages"][-1].content == ANSWER
    checkpoint = await agent.aget_state({"configurable": {"thread_id": "chat-1"}})
    saved = [m.content for m in checkpoint.values["messages"]]
    assert [m.text for m in log.of(MessageSaved)] == saved  # what the checkpointer holds
    assert len(log.of(Resumed)) == 1
    invariants.assert_dangling_intent_reissued(log, key=dangling.key)
    invariants.assert_single_terminal_step(log)
    assert [t.outcome for t in log.of(TurnEnded)] == ["failed", "completed"]
    first, reissued = log.model_calls
    assert first.request.raw == reissued.request.raw


@pytest.mark.anyio
async def test_a_recovery_that_asks_again_instead_of_resuming_fails_the_intent_invariant(
    scripted_model: FakeModel,
) -> None:
    """The bug: after the restart, the app sends the user's question again on the
    thread instead of resuming it. LangGraph starts a new super-step (the question
    twice in the state); the task the crash left pending is never run again."""
    scripted_model.script(Reply.text(ANSWER, fault=Fault.cut(after_events=4)), Reply.text(ANSWER))
    agent = graph(answering(chat("anthropic")), checkpointer=InMemorySaver())
    log = RunLog.from_fake(scripted_model)
    with pytest.raises(anthropic.APIError):
        await agent.ainvoke(QUESTION, config=config(log, thread="chat-1"))

    log.resumed()  # the process restarts...
    await agent.ainvoke(QUESTION, config=config(log, thread="chat-1"))  # ...and asks again

    with pytest.raises(InvariantViolation, match="re-issued 0 times on resume"):
        invariants.assert_dangling_intent_reissued(log)


@pytest.mark.anyio
async def test_a_graph_paused_by_interrupt_resumes_its_task_once(scripted_model: FakeModel) -> None:
    """``interrupt()`` pauses the turn (no turn end); ``Command(resume=...)`` goes on:
    the paused task's intent is re-issued and completes."""
    scripted_model.script(Reply.text(ANSWER))
    model = chat("anthropic")

    async def confirm_then_answer(state: MessagesState) -> dict[str, Any]:
        if interrupt("Look up the weather?") != "yes":
            return {"messages": [AIMessage("Cancelled.")]}
        return {"messages": [await model.ainvoke(state["messages"])]}

    agent = graph(confirm_then_answer, checkpointer=InMemorySaver())
    log = RunLog.from_fake(scripted_model)
    paused = await agent.ainvoke(QUESTION, config=config(log, thread="chat-1"))
    assert "__interrupt__" in paused
    assert log.of(TurnEnded) == []  # paused, not ended

    await agent.ainvoke(Command(resume="yes"), config=config(log, thread="chat-1"))

    invariants.assert_dangling_intent_reissued(log)
    assert [t.outcome for t in log.of(TurnEnded)] == ["completed"]
    assert [m.text for m in log.of(MessageSaved)] == ["Weather in Leeds?", ANSWER]


@pytest.mark.anyio
async def test_without_a_checkpointer_a_graph_issues_no_intents(scripted_model: FakeModel) -> None:
    scripted_model.script(Reply.text(ANSWER))
    log = await run_retried(answering(chat("anthropic")), scripted_model)
    assert log.of(IntentIssued) == [] and log.of(IntentCompleted) == []


# --- sync graphs ---------------------------------------------------------------------


def test_a_sync_graph_retried_with_with_retry_is_a_retry_too(interrupting_model: FakeModel) -> None:
    """``invoke`` runs nodes in threads: the same retry, read the same way."""
    interrupting_model.script(Reply.text(ANSWER))
    model = chat("anthropic").with_retry(stop_after_attempt=2, wait_exponential_jitter=False)
    builder = StateGraph(MessagesState)
    builder.add_node("agent", lambda state: {"messages": [model.invoke(state["messages"])]})
    builder.add_edge(START, "agent")
    log = RunLog.from_fake(interrupting_model)

    builder.compile().invoke(QUESTION, config=config(log))

    assert_one_clean_retry(log)


def test_ctrl_c_in_a_tool_ends_the_tool_interrupted_and_aborts_the_turn(
    scripted_model: FakeModel,
) -> None:
    @tool
    def weather(city: str) -> str:
        """The weather in a city."""
        raise KeyboardInterrupt  # the user hits Ctrl-C while the tool runs

    scripted_model.script(Reply.tool_call("weather", {"city": "Leeds"}))
    model = chat("anthropic", stream=False).bind_tools([weather])
    builder = StateGraph(MessagesState)
    builder.add_node("agent", lambda state: {"messages": [model.invoke(state["messages"])]})
    builder.add_node("tools", ToolNode([weather]))
    builder.add_edge(START, "agent")
    builder.add_edge("agent", "tools")
    log = RunLog.from_fake(scripted_model)

    with pytest.raises(KeyboardInterrupt):
        builder.compile().invoke(QUESTION, config=config(log))

    [result] = log.of(ToolResulted)
    assert result.outcome == "interrupted"
    assert [t.outcome for t in log.of(TurnEnded)] == ["aborted"]
    invariants.assert_every_tool_call_answered(log)
    invariants.assert_single_terminal_step(log)

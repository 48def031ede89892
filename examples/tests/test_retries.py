"""Scenarios 2, 3 and 5: retries and backoff.

A dropped stream is retried by the agent itself, in a *fresh* model step at the
*same* step index, with the same request; the text the dropped try had shown is
never saved. After ``retry_limit`` retries the step fails with an error safe to
show. A rate limit is not retried: it fails the step and tells the user when to
try again.
"""

from __future__ import annotations

import asyncio
import time
from email.utils import formatdate

import pytest
from agent import (
    Agent,
    ErrorEvent,
    FinalMessage,
    MessageDelta,
    ModelStepCompleted,
    ModelStepStarted,
    ServerToolBegin,
    ServerToolEnd,
    SessionConfig,
    ToolBegin,
    ToolEnd,
    TurnComplete,
)
from agent.errors import INTERRUPTED, MAX_RETRY_WAIT, retry_delay
from agent.testing import record
from agent.tools import WEB_SEARCH
from hypothesis import given, settings

from pytest_agentreplay import (
    FakeModel,
    Fault,
    Reply,
    SearchResult,
    ServerToolCall,
    Text,
    ToolCall,
    invariants,
)
from pytest_agentreplay.runlog import RunLog
from pytest_agentreplay.strategies import CI_PROFILE, fault_plans, faults, replies

ANSWER = "Rain is expected in Leeds tomorrow."
# Events before the cut: the text delta "Searching.", then the web search's start
# and the first piece of its arguments (Anthropic sends message_start,
# content_block_start and ping before the first delta; OpenAI a role chunk).
CUT_IN_THE_SEARCH = {"anthropic": 7, "openai": 4}


def texts_by_step(agent: Agent) -> dict[str, str]:
    shown: dict[str, str] = {}
    for delta in agent.events_of(MessageDelta):
        shown[delta.step_id] = shown.get(delta.step_id, "") + delta.text
    return shown


@pytest.mark.anyio
@pytest.mark.parametrize("provider", ["anthropic", "openai"])
async def test_an_interrupted_stream_is_retried_in_a_fresh_step_at_the_same_index(
    provider, backend
):
    """Checks: the connection drops while the model streams a call to the agent's
    web search tool: two steps at index 0 with different ids, ``retrying`` then
    ``completed``; the partial text belongs to the first, the answer (and the final
    message) to the second; the tool call begun in the first step ends once,
    ``interrupted``; the retry resends the same input and only the answer is
    saved."""
    searching = Reply(
        parts=[Text(text="Searching."), ToolCall(name="web_search", args={"query": "Leeds rain"})],
        fault=Fault.cut(after_events=CUT_IN_THE_SEARCH[provider]),
    )
    backend.script(searching, Reply.text(ANSWER))
    agent = Agent(backend.config(provider), tools=[WEB_SEARCH])
    log = record(agent, backend.runlog())

    result = await agent.run_turn("Will it rain in Leeds tomorrow?")

    assert result.text == ANSWER
    first, retry = agent.events_of(ModelStepStarted)
    assert first.step_id != retry.step_id
    assert first.step_index == retry.step_index == 0
    assert [e.outcome for e in agent.events_of(ModelStepCompleted)] == ["retrying", "completed"]
    assert texts_by_step(agent) == {first.step_id: "Searching.", retry.step_id: ANSWER}
    [final] = agent.events_of(FinalMessage)
    assert final.step_id == retry.step_id
    # The web search that was streaming when the connection dropped ends once, interrupted.
    [begin] = agent.events_of(ToolBegin)
    [end] = agent.events_of(ToolEnd)
    assert (begin.name, begin.step_id) == ("web_search", first.step_id)
    assert (end.call_id, end.outcome) == (begin.call_id, "interrupted")

    assert [call.outcome for call in log.model_calls] == ["cut", "completed"]
    invariants.assert_single_terminal_step(log)
    invariants.assert_retries_resend_identical_input(log)  # the model saw the same input
    invariants.assert_no_partial_content_saved(log)
    saved = [m.text for m in agent.store.messages(agent.session_id) if m.role == "assistant"]
    assert saved == [ANSWER]
    backend.assert_offline()


# Anthropic's events before the cut: message_start, the text block (start, two deltas,
# stop), then the search's server_tool_use block start and the first pieces of its
# input: the provider has begun its search, and its result never comes.
CUT_IN_THE_PROVIDER_SEARCH = 9


@pytest.mark.anyio
async def test_a_stream_cut_in_a_provider_side_search_is_retried_in_a_fresh_step(backend):
    """Checks: two steps at index 0 with different ids, ``retrying`` then
    ``completed``; the partial delta belongs to the first, the answer to the second;
    the agent begins no tool of its own; the provider's web search begins in the
    first step and ends exactly once, ``interrupted``, with its call id; the model
    is called twice with the same input; the partial text is not saved, the answer is."""
    search = ServerToolCall.web_search(
        "Leeds rain", [SearchResult(url="https://met.example/leeds")], id="srvtoolu_search1"
    )
    searching = Reply(
        parts=[Text(text="partial "), search, Text(text="It will rain.")],
        fault=Fault.cut(after_events=CUT_IN_THE_PROVIDER_SEARCH),
    )
    backend.script(searching, Reply.text(ANSWER))
    agent = Agent(backend.config("anthropic"))
    log = record(agent, backend.runlog())

    await agent.run_turn("Will it rain in Leeds tomorrow?")

    first, retry = agent.events_of(ModelStepStarted)
    assert first.step_id != retry.step_id
    assert first.step_index == retry.step_index == 0
    ended = agent.events_of(ModelStepCompleted)
    assert [(e.step_id, e.outcome) for e in ended] == [
        (first.step_id, "retrying"),
        (retry.step_id, "completed"),
    ]
    assert texts_by_step(agent) == {first.step_id: "partial ", retry.step_id: ANSWER}
    [final] = agent.events_of(FinalMessage)
    assert final.step_id == retry.step_id
    assert agent.events_of(ToolBegin) == []  # the provider searched: the agent ran nothing
    [begin] = agent.events_of(ServerToolBegin)
    assert (begin.call_id, begin.name, begin.step_id) == (
        "srvtoolu_search1",
        "web_search",
        first.step_id,
    )
    [end] = agent.events_of(ServerToolEnd)
    assert (end.call_id, end.step_id, end.outcome) == (
        "srvtoolu_search1",
        first.step_id,
        "interrupted",
    )

    assert [call.outcome for call in log.model_calls] == ["cut", "completed"]
    invariants.assert_retries_resend_identical_input(log)
    invariants.assert_every_tool_call_answered(log)
    invariants.assert_no_partial_content_saved(log)
    saved = " ".join(m.text for m in agent.store.messages(agent.session_id))
    assert "partial" not in saved
    assert ANSWER in saved
    backend.assert_offline()


@pytest.mark.anyio
async def test_a_stream_cut_halfway_is_retried_with_the_same_request(interrupting_model, snapshot):
    """The whole run, step by step, is in the snapshot next to this file
    (``__snapshots__/test_retries/``): it reads like the timeline of a retry."""
    interrupting_model.script(Reply.text("Rain is expected in Leeds tomorrow afternoon."))
    agent = Agent(SessionConfig())
    log = record(agent, RunLog.from_fake(interrupting_model))

    result = await agent.run_turn("Will it rain in Leeds tomorrow?")

    assert result.text == "Rain is expected in Leeds tomorrow afternoon."
    cut, retried = interrupting_model.log
    assert (cut.outcome, retried.outcome) == ("cut", "completed")
    assert cut.request.raw == retried.request.raw
    invariants.assert_single_terminal_step(log)
    invariants.assert_retries_resend_identical_input(log)
    invariants.assert_no_partial_content_saved(log)
    assert log == snapshot


@pytest.mark.anyio
async def test_a_stream_interrupted_every_time_fails_after_the_retry_limit_with_a_safe_error(
    backend,
):
    """Checks: every try drops mid-stream: the limit plus one tries (distinct step
    ids, all at index 0), ``retrying`` twice with a doubling backoff then
    ``failed``; the turn fails as a retryable ``provider`` error whose message is the
    safe one, naming no transport internals; no ``TurnComplete``; every retry resent
    the same input."""
    dropped = Reply.text("The forecast for Leeds is", fault=Fault.cut(after_events=5))
    backend.script(dropped, dropped, dropped)
    agent = Agent(backend.config(retry_limit=2, backoff=0.01))
    log = record(agent, backend.runlog())

    result = await agent.run_turn("What is the forecast for Leeds?")

    assert result.outcome == "failed"
    tries = agent.events_of(ModelStepStarted)
    assert len(tries) == 3  # the limit, plus one
    assert len({t.step_id for t in tries}) == 3
    assert {t.step_index for t in tries} == {0}
    ends = agent.events_of(ModelStepCompleted)
    assert [e.outcome for e in ends] == ["retrying", "retrying", "failed"]
    assert [e.retry_in for e in ends] == [0.01, 0.02, None]  # the backoff doubles
    [reported] = agent.events_of(ErrorEvent)
    error = reported.error
    assert (error.kind, error.retryable, error.message) == ("provider", True, INTERRUPTED)
    for internal in ("peer closed", "RemoteProtocolError", "incomplete", "httpx"):
        assert internal not in error.message
    assert agent.events_of(TurnComplete) == []

    assert [call.outcome for call in log.model_calls] == ["cut"] * 3
    invariants.assert_single_terminal_step(log)
    invariants.assert_retries_resend_identical_input(log, min_retries=2)
    invariants.assert_terminal_error_turn(log, error_kind="provider")
    backend.assert_offline()


@pytest.mark.anyio
@pytest.mark.parametrize("provider", ["anthropic", "openai"])
async def test_a_rate_limit_fails_the_step_with_status_retry_after_and_message(provider, backend):
    """Checks: a 429 with ``Retry-After: 5`` is not retried in the turn (one call):
    the step and the turn fail with a retryable ``provider`` error that keeps the
    status, the ``retry-after`` value and the provider's message."""
    backend.script(Fault.http(429, "quota exceeded", retry_after=5))
    agent = Agent(backend.config(provider))
    log = record(agent, backend.runlog())

    result = await agent.run_turn("What is the weather in Leeds?")

    assert result.outcome == "failed"
    [step] = agent.events_of(ModelStepCompleted)
    assert step.outcome == "failed"
    [reported] = agent.events_of(ErrorEvent)
    error = reported.error
    assert (error.kind, error.status, error.retryable, error.retry_after) == (
        "provider",
        429,
        True,
        "5",
    )
    assert error.message == "quota exceeded"
    assert len(log.model_calls) == 1  # not retried: a quota does not come back in seconds
    invariants.assert_single_terminal_step(log)
    invariants.assert_terminal_error_turn(log, error_kind="provider")
    backend.assert_offline()


@pytest.mark.anyio
async def test_openai_s_finer_retry_after_ms_wins(scripted_model):
    """OpenAI sends a fractional wait as ``retry-after-ms`` (``retry-after`` is whole
    seconds, rounded up): the error reports the finer one, as the OpenAI SDK reads it."""
    scripted_model.script(Fault.http(429, "slow down", retry_after=2.5))
    agent = Agent(SessionConfig(provider="openai"))

    result = await agent.run_turn("What is the weather in Leeds?")

    assert result.error is not None
    assert (result.error.status, result.error.retry_after) == (429, "2.5")
    [call] = scripted_model.log
    assert call.status == 429


IN_30_SECONDS = "an HTTP date 30 s ahead"
"""(Made in the test, not at collection: collection may run long before the test, and
a date in a test id would differ between xdist workers.)"""


@pytest.mark.parametrize(
    ("retry_after", "delay"),
    [
        (None, 0.4),  # no header: the backoff, doubled at each retry (here the 3rd)
        ("0.1", 0.4),  # the provider asks for less: the backoff wins
        ("5", 5.0),
        ("Wed, 21 Oct 2015 07:28:00 GMT", 0.4),  # a date already past
        ("soon", 0.4),  # unreadable
        ("-3", 0.4),
        ("nan", 0.4),
        ("inf", 0.4),
        ("86400", MAX_RETRY_WAIT),  # a broken header must not hang the turn
        (IN_30_SECONDS, pytest.approx(30, abs=2)),
    ],
)
def test_the_wait_before_a_retry_honours_a_sane_retry_after(retry_after, delay):
    """Checks: the wait before a retry is the doubled backoff unless the provider
    asks for longer (seconds or an HTTP date); a header that is unreadable, negative,
    not finite or already past is ignored, and a huge one is capped."""
    if retry_after == IN_30_SECONDS:  # an HTTP date, made when the test runs
        retry_after = formatdate(time.time() + 30, usegmt=True)
    assert retry_delay(3, 0.1, retry_after) == delay


@settings(settings.get_profile(CI_PROFILE), max_examples=30)  # derandomized, bounded
@given(
    plan=fault_plans(
        faults=faults(statuses=(500, 529)), replies=replies(tool_calls=False), max_faults=3
    )
)
def test_whatever_fails_first_a_turn_answers_or_fails_cleanly(plan):
    """Dropped streams, failing servers and empty answers, in any order: the turn either
    answers with the reply or fails with an error turn, and the invariants hold."""

    async def turn() -> tuple[Agent, RunLog, str]:
        agent = Agent(SessionConfig(retry_limit=3, backoff=0))
        log = record(agent, RunLog.from_fake(fake))
        result = await agent.run_turn("What is the weather in Leeds?")
        return agent, log.frozen(), result.outcome

    with plan.apply(FakeModel(check_unused=False)) as fake:
        agent, log, outcome = asyncio.run(turn())

    invariants.assert_single_terminal_step(log)
    invariants.assert_no_partial_content_saved(log)
    if outcome == "completed":
        assert agent.events_of(FinalMessage)[0].text == plan.replies[0].text_content
    else:
        invariants.assert_terminal_error_turn(log)

"""assert_no_model_call_after_interrupt: once stop is pressed, the turn makes no further
model call.

The scenario is an interrupt during a retry backoff: a 429 with ``retry-after: 30``
sends the agent to wait; the user presses stop; the retry must never go out. The
test logs ``interrupt_requested`` when it presses stop, as a UI's stop button would.
Seeded bug: the backoff sleeps through the stop button (here its sleep ends exactly
when stop is pressed, so the test waits for nothing) and the retry goes out.
"""

from __future__ import annotations

import asyncio

import anthropic
import pytest

from pytest_agentreplay import FakeModel, Fault, Reply, invariants
from pytest_agentreplay.invariants import InvariantViolation
from pytest_agentreplay.runlog import InterruptRequested, RunLog
from tests.invariants._toy import ToyAgent

ANSWER = "Sunny all week."


async def _stop_during_backoff(fake: FakeModel, bugs: set[str]) -> tuple[RunLog, str | None]:
    fake.script(Fault.http(429, "slow down", retry_after=30), Reply.text(ANSWER))
    fake.check_unused = False  # a correct agent never asks for the answer
    log = RunLog.from_fake(fake)
    agent = ToyAgent(log=log, bugs=bugs, retry_rate_limits=True)
    agent.sleep = lambda _seconds: agent.stop.wait()  # the buggy backoff ends at the stop
    turn = asyncio.create_task(agent.run_turn("Weather this week?", turn_id="t1"))
    while not fake.log:  # until the 429 has been answered: the agent is backing off
        await asyncio.sleep(0.001)
    log.interrupt_requested("t1")  # the user presses stop
    agent.stop.set()
    return log, await turn


@pytest.mark.anyio
async def test_an_interrupt_during_the_backoff_makes_no_further_call(
    scripted_model: FakeModel,
) -> None:
    log, answer = await _stop_during_backoff(scripted_model, set())

    assert answer is None
    invariants.assert_no_model_call_after_interrupt(log)
    invariants.assert_single_terminal_step(log)  # 'retrying', then the turn 'aborted'
    assert [c.outcome for c in log.model_calls] == ["http_error"]


@pytest.mark.anyio
async def test_a_backoff_that_sleeps_through_the_interrupt_fails(
    scripted_model: FakeModel,
) -> None:
    log, answer = await _stop_during_backoff(scripted_model, {"sleep_through_interrupt"})
    retry = log.steps()[1]

    assert answer == ANSWER  # the turn went on as if nobody had pressed stop
    with pytest.raises(InvariantViolation) as failure:
        invariants.assert_no_model_call_after_interrupt(log)

    lines = str(failure.value).splitlines()
    assert lines[0] == (
        f"assert_no_model_call_after_interrupt failed at {retry.describe()}: it started after "
        f"the interrupt of turn 't1' was requested: a stopped turn makes no further model call "
        f"(a backoff, or the wait for the next step, must end at the interrupt)"
    )
    assert lines[2].startswith('    [1]: new logged: {"event":"step_started","step_id":')


def _ask(client: anthropic.Anthropic) -> str:
    message = client.messages.create(
        model="m", max_tokens=64, messages=[{"role": "user", "content": "Weather this week?"}]
    )
    return message.content[0].text  # type: ignore[union-attr]


def _agent_without_steps(log: RunLog, *, buggy: bool) -> str | None:
    """A runtime that logs no steps at all: the user presses stop while it backs off."""
    client = anthropic.Anthropic(api_key="test", max_retries=0)
    try:
        return _ask(client)
    except anthropic.RateLimitError:
        log.interrupt_requested("t1")  # stop is pressed during the backoff
        if not buggy:
            return None
        return _ask(client)  # the bug: the retry goes out anyway


@pytest.mark.parametrize("buggy", [False, True])
def test_calls_made_after_the_interrupt_are_found_without_steps(
    scripted_model: FakeModel, buggy: bool
) -> None:
    scripted_model.script(Fault.http(429, retry_after=30), Reply.text(ANSWER))
    scripted_model.check_unused = buggy
    log = RunLog.from_fake(scripted_model)

    _agent_without_steps(log, buggy=buggy)

    if not buggy:
        invariants.assert_no_model_call_after_interrupt(log)
        return
    with pytest.raises(InvariantViolation) as failure:
        invariants.assert_no_model_call_after_interrupt(log)
    assert str(failure.value).splitlines()[0] == (
        "assert_no_model_call_after_interrupt failed at model call #1: 1 model call(s) went "
        "out after the interrupt of turn 't1' was requested (1 had gone out before it): a "
        "stopped turn makes no further model call"
    )


@pytest.mark.anyio
async def test_the_next_turn_may_call_the_model(scripted_model: FakeModel) -> None:
    log, _ = await _stop_during_backoff(scripted_model, set())
    scripted_model.script(Reply.text("Next."))  # the answer of the stopped turn is left
    scripted_model.check_unused = False

    await ToyAgent(log=log).run_turn("And next week?", turn_id="t2")

    invariants.assert_no_model_call_after_interrupt(log)
    assert [c.outcome for c in log.model_calls] == ["http_error", "completed"]


@pytest.mark.anyio
async def test_a_call_held_when_stop_is_pressed_was_made_before(
    blocking_model: FakeModel,
) -> None:
    log = RunLog.from_fake(blocking_model)
    turn = asyncio.create_task(ToyAgent(log=log).run_turn("hi", turn_id="t1"))
    assert await blocking_model.wait_blocked_async(timeout=120)  # a hang fails (no speed bound)
    log.interrupt_requested("t1")
    turn.cancel()
    with pytest.raises(asyncio.CancelledError):
        await turn

    invariants.assert_no_model_call_after_interrupt(log)
    assert [c.outcome for c in log.model_calls] == ["cancelled"]
    [stop] = log.of(InterruptRequested)
    assert stop.calls_before == 1  # the held call had arrived


def test_a_log_without_an_interrupt_fails() -> None:
    with pytest.raises(InvariantViolation, match=r"call log.interrupt_requested\(turn_id\)"):
        invariants.assert_no_model_call_after_interrupt(RunLog())

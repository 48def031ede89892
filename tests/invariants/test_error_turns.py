"""assert_terminal_error_turn: a failed turn is saved as a terminal error turn.

After any partial text, with no success event, earlier turns intact. Faults come
from the fakes as providers send them: a 401 with nothing delivered, an in-stream
error event after partial text, a 429 with retry-after. Seeded bug: the runtime
saves the partial text as if the turn had succeeded.
"""

from __future__ import annotations

import pytest

from pytest_agentreplay import FakeModel, Fault, Reply, invariants
from pytest_agentreplay.invariants import InvariantViolation
from pytest_agentreplay.runlog import ErrorReported, RunLog
from tests.invariants._toy import ToyAgent


@pytest.mark.anyio
async def test_an_auth_failure_is_saved_as_an_error_turn(failing_model: FakeModel) -> None:
    failing_model.fail_with(Fault.http(401, "invalid x-api-key"))
    log = RunLog.from_fake(failing_model)

    assert await ToyAgent(log=log).run_turn("hi", turn_id="t1") is None

    invariants.assert_terminal_error_turn(log, error_kind="auth")
    assert [(m.role, m.kind) for m in log.messages(turn_id="t1")] == [
        ("user", "message"),
        ("assistant", "error"),
    ]
    [error] = log.of(ErrorReported)
    assert (error.status, error.retryable) == (401, False)


@pytest.mark.anyio
async def test_a_rate_limit_keeps_its_status_and_retry_after(failing_model: FakeModel) -> None:
    failing_model.fail_with(Fault.http(429, "quota exceeded", retry_after=5))
    log = RunLog.from_fake(failing_model)

    await ToyAgent(log=log).run_turn("hi", turn_id="t1")

    invariants.assert_terminal_error_turn(log, error_kind="rate_limit")
    [error] = log.of(ErrorReported)
    assert (error.status, error.retryable, error.retry_after) == (429, True, "5")
    assert "quota exceeded" in error.message
    with pytest.raises(InvariantViolation, match="the error is classified 'rate_limit'"):
        invariants.assert_terminal_error_turn(log, error_kind="auth")


PARTIAL_THEN_ERROR = Reply.text(
    "The first half of an answer, then the provider fails",
    fault=Fault.error_event("overloaded_error", after_events=5),
)


@pytest.mark.anyio
async def test_partial_text_then_an_error_is_kept_before_the_error_turn(
    scripted_model: FakeModel,
) -> None:
    scripted_model.script(Reply.text("Earlier answer."), PARTIAL_THEN_ERROR)
    log = RunLog.from_fake(scripted_model)
    agent = ToyAgent(log=log)
    await agent.run_turn("first", turn_id="t1")
    await agent.run_turn("second", turn_id="t2")

    invariants.assert_terminal_error_turn(log)  # the last turn, t2
    saved = [(m.role, m.kind) for m in log.messages(turn_id="t2")]
    assert saved == [("user", "message"), ("assistant", "message"), ("assistant", "error")]
    assert log.messages(turn_id="t2")[1].text.startswith("The first")
    assert [m.text for m in log.messages(turn_id="t1")] == ["first", "Earlier answer."]
    with pytest.raises(InvariantViolation, match="turn 't1'.*no error turn was saved"):
        invariants.assert_terminal_error_turn(log, turn_id="t1")


@pytest.mark.anyio
async def test_saving_a_success_instead_of_an_error_turn_fails(scripted_model: FakeModel) -> None:
    scripted_model.script(PARTIAL_THEN_ERROR)
    log = RunLog.from_fake(scripted_model)
    await ToyAgent(log=log, bugs={"success_instead_of_error"}).run_turn("hi", turn_id="t1")
    [step] = log.steps()
    partial = log.messages(role="assistant")[0].text

    with pytest.raises(InvariantViolation) as failure:
        invariants.assert_terminal_error_turn(log)

    assert str(failure.value).splitlines() == [
        f"assert_terminal_error_turn failed at turn 't1', {step.describe()}: no error turn was "
        f"saved: the turn's saved messages end without an assistant message of kind 'error'",
        "  diff:",
        '    [2]: missing saved (expected {"role":"assistant","kind":"error","text":"(the '
        'error)"})',
    ]
    assert partial.startswith("The first")


def _turn(*messages: tuple[str, str], ended: str | None = "failed") -> RunLog:
    log = RunLog()
    for role, kind in messages:
        log.message(role, f"{role} {kind}", kind=kind, turn_id="t")  # type: ignore[arg-type]
    if ended is not None:
        log.turn_ended("t", ended)  # type: ignore[arg-type]
    return log


@pytest.mark.parametrize(
    ("log", "problem"),
    [
        pytest.param(
            _turn(("user", "message"), ("assistant", "error"), ("assistant", "message")),
            "the error turn is not the last message saved",
            id="text-after-error",
        ),
        pytest.param(
            _turn(("user", "message"), ("assistant", "error"), ("assistant", "error")),
            "the error turn is not the last message saved",
            id="two-error-turns",
        ),
        pytest.param(
            _turn(("user", "message"), ("assistant", "error"), ended="completed"),
            "the failed turn also reported success",
            id="success-event",
        ),
        pytest.param(
            _turn(("user", "message"), ("user", "error")),
            "saved with role 'user', not 'assistant'",
            id="wrong-role",
        ),
    ],
)
def test_each_rule(log: RunLog, problem: str) -> None:
    with pytest.raises(InvariantViolation, match=problem) as failure:
        invariants.assert_terminal_error_turn(log)
    assert failure.value.where == "turn 't'"

"""assert_terminal_error_turn: a failed turn is saved as a terminal error turn.

After the user's question and the partial text the user saw, with no success event,
earlier turns intact. Faults come from the fakes as providers send them: a 401 with
nothing delivered, an in-stream error event after partial text, a 429 with
retry-after. Seeded bugs: the runtime saves the partial text as if the turn had
succeeded; drops the partial text; saves the question only with its answer.
"""

from __future__ import annotations

import anthropic
import pytest

from pytest_agentreplay import FakeModel, Fault, Reply, invariants
from pytest_agentreplay.invariants import InvariantViolation
from pytest_agentreplay.runlog import Delta, ErrorReported, RunLog
from tests.invariants._toy import SAFE_MESSAGE, ToyAgent


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


@pytest.mark.anyio
async def test_partial_text_dropped_on_error_fails(scripted_model: FakeModel) -> None:
    """Issue 20: "a 401 after partial text keeps the partial, then the error" could not
    be asserted: the order was checked, never that the partial was saved."""
    scripted_model.script(PARTIAL_THEN_ERROR)
    log = RunLog.from_fake(scripted_model)
    await ToyAgent(log=log, bugs={"drop_partial_on_error"}).run_turn("hi", turn_id="t1")
    [step] = log.steps()
    shown = "".join(d.text for d in log.of(Delta))
    assert shown.startswith("The first") and step.outcome == "failed"

    with pytest.raises(InvariantViolation) as failure:
        invariants.assert_terminal_error_turn(log)

    assert str(failure.value).splitlines() == [
        f"assert_terminal_error_turn failed at turn 't1', {step.describe()}: the failed step "
        f"had streamed {shown!r} when it failed, but no message saved for the turn keeps it: "
        f"the user saw that text, so it is saved before the error turn (keep_partial=False "
        f"if dropping it is by design)",
        "  diff:",
        '    [1]: missing saved (expected {"role":"assistant","kind":"message","text":'
        f'"{shown}"}})',
    ]
    invariants.assert_terminal_error_turn(log, keep_partial=False)


@pytest.mark.anyio
async def test_retry_exhaustion_keeps_the_partial_of_the_failed_try_only(
    interrupting_model: FakeModel,
) -> None:
    interrupting_model.interrupt(times=2)
    interrupting_model.check_unused = False
    interrupting_model.script(Reply.text("A long answer with quite a few words in it."))
    log = RunLog.from_fake(interrupting_model)
    await ToyAgent(log=log, bugs={"drop_partial_on_error"}).run_turn("Why?", turn_id="t1")
    failed = log.steps()[-1]

    with pytest.raises(InvariantViolation, match="the failed step had streamed") as failure:
        invariants.assert_terminal_error_turn(log)
    assert failure.value.where == f"turn 't1', {failed.describe()}"


async def _turn_reporting_no_text(log: RunLog, *, keep: bool) -> None:
    """A runtime that logs neither deltas nor the failed step's text: the partial text
    is what the model call delivered before its error event."""
    log.message("user", "Summarise my inbox", turn_id="t1")
    log.step_started("s1", step_index=0, turn_id="t1")
    client = anthropic.AsyncAnthropic(api_key="test", max_retries=0)
    shown = []
    try:
        async with client.messages.stream(
            model="m", max_tokens=64, messages=[{"role": "user", "content": "Summarise my inbox"}]
        ) as stream:
            async for text in stream.text_stream:
                shown.append(text)
    except anthropic.APIStatusError:
        log.step_completed("s1", "failed")
        if keep:
            log.message("assistant", "".join(shown), step_id="s1", turn_id="t1")
        log.message("assistant", SAFE_MESSAGE, kind="error", step_id="s1", turn_id="t1")
        log.turn_ended("t1", "failed")
    await client.close()


@pytest.mark.anyio
@pytest.mark.parametrize("keep", [True, False])
async def test_the_partial_text_is_read_from_the_model_side_too(
    scripted_model: FakeModel, keep: bool
) -> None:
    scripted_model.script(PARTIAL_THEN_ERROR)
    log = RunLog.from_fake(scripted_model)
    await _turn_reporting_no_text(log, keep=keep)

    if keep:
        invariants.assert_terminal_error_turn(log)
    else:
        with pytest.raises(InvariantViolation, match=r"had streamed 'The first' when it failed"):
            invariants.assert_terminal_error_turn(log)


@pytest.mark.anyio
async def test_a_question_saved_only_with_its_answer_vanishes_when_the_turn_fails(
    failing_model: FakeModel,
) -> None:
    """Issue 20: "the user's question vanishes" was named in the docs and never checked."""
    failing_model.fail_with(Fault.http(401, "invalid x-api-key"))
    log = RunLog.from_fake(failing_model)
    await ToyAgent(log=log, bugs={"question_saved_with_answer"}).run_turn(
        "Summarise my inbox", turn_id="t1"
    )
    [step] = log.steps()

    with pytest.raises(InvariantViolation) as failure:
        invariants.assert_terminal_error_turn(log, error_kind="auth")

    assert str(failure.value).splitlines() == [
        f"assert_terminal_error_turn failed at turn 't1', {step.describe()}: the user's "
        f"question vanished: no user message was saved for the failed turn (save it when the "
        f"turn starts, not only with its answer)",
        "  diff:",
        '    [0]: missing saved (expected {"role":"user","kind":"message","text":"Summarise my '
        'inbox"})',
    ]


@pytest.mark.anyio
async def test_the_same_bug_is_invisible_when_the_turn_succeeds(scripted_model: FakeModel) -> None:
    scripted_model.script(Reply.text("Three new mails."))
    log = RunLog.from_fake(scripted_model)
    agent = ToyAgent(log=log, bugs={"question_saved_with_answer"})

    assert await agent.run_turn("Summarise my inbox", turn_id="t1") == "Three new mails."
    assert [(m.role, m.text) for m in log.messages()] == [
        ("user", "Summarise my inbox"),
        ("assistant", "Three new mails."),
    ]


def test_a_question_saved_without_a_turn_id_counts() -> None:
    log = RunLog()
    log.message("user", "earlier", turn_id="t0")
    log.turn_ended("t0")
    log.message("user", "hi")  # the runtime tags only what the model side produced
    log.step_started("s1", step_index=0, turn_id="t1")
    log.step_completed("s1", "failed")
    log.message("assistant", "It failed.", kind="error", turn_id="t1")
    log.turn_ended("t1", "failed")

    invariants.assert_terminal_error_turn(log)
    lost = RunLog(entries=[e for e in log.entries if getattr(e, "text", None) != "hi"])
    with pytest.raises(InvariantViolation, match="the user's question vanished"):
        invariants.assert_terminal_error_turn(lost)


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

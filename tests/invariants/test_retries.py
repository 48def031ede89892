"""assert_retries_resend_identical_input and assert_no_partial_content_saved.

An interrupted stream is retried in a fresh step: the model must see the same
input again, and the saved context must hold the recovered text and none of the
partial text. Seeded bugs: a retry that "continues" from the partial text
(prefill), and a delta buffer that is not reset before the retry.
"""

from __future__ import annotations

import anthropic
import httpx2
import pytest

from pytest_agentreplay import FakeModel, Fault, Reply, invariants
from pytest_agentreplay.invariants import InvariantViolation
from pytest_agentreplay.runlog import RunLog, delivered_text
from tests.invariants._toy import SAFE_MESSAGE, ToyAgent

ANSWER = "A long answer with quite a few words in it."


async def _retried_turn(fake: FakeModel, bugs: set[str] = frozenset()) -> tuple[RunLog, ToyAgent]:  # type: ignore[assignment]
    fake.script(Reply.text(ANSWER))
    log = RunLog.from_fake(fake)
    agent = ToyAgent(log=log, bugs=bugs)
    await agent.run_turn("Why is the sky blue?", turn_id="t1")
    return log, agent


@pytest.mark.anyio
async def test_a_correct_retry_resends_the_same_input_and_saves_only_the_answer(
    interrupting_model: FakeModel,
) -> None:
    log, agent = await _retried_turn(interrupting_model)

    invariants.assert_retries_resend_identical_input(log)
    invariants.assert_no_partial_content_saved(log)
    first, retry = log.steps()
    partial = delivered_text(log.model_calls[0])
    assert partial and ANSWER.startswith(partial) and partial != ANSWER
    assert first.text == partial and retry.text == ANSWER
    assert [m.text for m in log.messages(role="assistant")] == [ANSWER]
    assert agent.store.messages[-1]["content"] == [{"type": "text", "text": ANSWER}]


@pytest.mark.anyio
async def test_a_retry_that_continues_from_the_partial_text_fails(
    interrupting_model: FakeModel,
) -> None:
    log, _ = await _retried_turn(interrupting_model, {"retry_changes_body"})
    first, retry = log.steps()

    with pytest.raises(InvariantViolation) as failure:
        invariants.assert_retries_resend_identical_input(log)

    message = str(failure.value)
    assert message.startswith(
        f"assert_retries_resend_identical_input failed at {retry.describe()}, the retry of "
        f"{first.describe()}: the retry (model call #1) sent a different request body than "
        f"the try it repeats (model call #0)"
    )
    partial = delivered_text(log.model_calls[0])
    assert f'messages[1]: new retry: {{"role":"assistant","content":"{partial}"}}' in message

    with pytest.raises(InvariantViolation) as leak:
        invariants.assert_no_partial_content_saved(log)
    assert str(leak.value).splitlines() == [
        f"assert_no_partial_content_saved failed at {retry.describe()}, the retry of "
        f"{first.describe()}: the retry (model call #1) sends the partial text model call #0 "
        f"delivered before it ended 'cut'",
        "  diff:",
        f"    text: expected '(none)', sent {partial!r}",
    ]


@pytest.mark.anyio
async def test_a_delta_buffer_not_reset_before_the_retry_leaks_partial_text(
    interrupting_model: FakeModel,
) -> None:
    log, agent = await _retried_turn(interrupting_model, {"partial_in_context"})
    first, _ = log.steps()
    partial = first.text
    assert agent.store.messages[-1]["content"][0]["text"] == partial + ANSWER

    invariants.assert_retries_resend_identical_input(log)  # the bug is not in the requests
    with pytest.raises(InvariantViolation) as failure:
        invariants.assert_no_partial_content_saved(log)

    message = str(failure.value)
    assert message.startswith(
        f"assert_no_partial_content_saved failed at {first.describe()} (abandoned: ended "
        f"'retrying'): its partial text {partial!r} leaked into a saved message"
    )
    assert f"text: expected {ANSWER!r}, saved {partial + ANSWER!r}" in message


@pytest.mark.anyio
async def test_retry_exhaustion_keeps_the_last_partial_before_the_error_turn(
    interrupting_model: FakeModel,
) -> None:
    interrupting_model.interrupt(times=2)  # three cuts in all: the limit is 2 retries
    interrupting_model.check_unused = False  # every try is cut: the reply is never consumed
    log, _ = await _retried_turn(interrupting_model)

    assert [s.outcome for s in log.steps()] == ["retrying", "retrying", "failed"]
    assert len({s.index for s in log.steps()}) == 1
    invariants.assert_single_terminal_step(log)
    invariants.assert_retries_resend_identical_input(log, min_retries=2)
    invariants.assert_no_partial_content_saved(log)  # the kept partial is the failed step's
    invariants.assert_terminal_error_turn(log, error_kind="provider")
    [error] = log.messages(kind="error")
    assert error.text == SAFE_MESSAGE


@pytest.mark.anyio
async def test_a_run_without_a_retry_fails_unless_none_is_expected(
    scripted_model: FakeModel,
) -> None:
    scripted_model.script(Reply.text("Fine."))
    log = RunLog.from_fake(scripted_model)
    await ToyAgent(log=log).run_turn("hi")

    with pytest.raises(InvariantViolation, match="found 0 retries, expected at least 1"):
        invariants.assert_retries_resend_identical_input(log)
    invariants.assert_retries_resend_identical_input(log, min_retries=0)


def test_it_needs_the_model_side() -> None:
    log = RunLog()
    log.step_started("a", step_index=0)
    log.step_completed("a", "retrying")
    with pytest.raises(InvariantViolation, match="the log has no model calls"):
        invariants.assert_retries_resend_identical_input(log)


# --- without agent events: retries found from the calls alone --------------------------------


def _ask(client: anthropic.Anthropic, question: str, max_tokens: int) -> str:
    with client.messages.stream(
        model="claude-sonnet-4-6",
        max_tokens=max_tokens,
        messages=[{"role": "user", "content": question}],
    ) as stream:
        return "".join(stream.text_stream)


def _answer(client: anthropic.Anthropic, question: str, *, grow_on_retry: bool) -> str:
    """The README's agent: ask once more when the stream is cut (bug: with more tokens)."""
    try:
        return _ask(client, question, 256)
    except (anthropic.APIConnectionError, httpx2.RemoteProtocolError):  # 2.17+, older
        return _ask(client, question, 512 if grow_on_retry else 256)


def test_the_sdks_and_a_plain_retry_loop_resend_identical_input(scripted_model: FakeModel) -> None:
    scripted_model.script(
        Fault.http(529, retry_after=0.001),  # retried by the SDK itself
        Reply.text("Partial answer that will be cut", fault=Fault.cut(after_events=4)),
        Reply.text("The full answer."),
    )
    client = anthropic.Anthropic(api_key="test", max_retries=1)

    assert _answer(client, "Why?", grow_on_retry=False) == "The full answer."
    log = RunLog.from_fake(scripted_model)
    assert [c.outcome for c in log.model_calls] == ["http_error", "cut", "completed"]
    invariants.assert_retries_resend_identical_input(log, min_retries=2)


def test_a_retry_loop_that_changes_an_option_fails(scripted_model: FakeModel) -> None:
    scripted_model.script(
        Reply.text("Partial answer that will be cut", fault=Fault.cut(after_events=4)),
        Reply.text("The full answer."),
    )
    _answer(anthropic.Anthropic(api_key="test", max_retries=0), "Why?", grow_on_retry=True)

    with pytest.raises(InvariantViolation) as failure:
        invariants.assert_retries_resend_identical_input(RunLog.from_fake(scripted_model))
    assert str(failure.value).splitlines() == [
        "assert_retries_resend_identical_input failed at model call #1, the retry of model "
        "call #0 (cut): the retry (model call #1) sent a different request body than the try "
        "it repeats (model call #0)",
        "  diff:",
        "    max_tokens: first try 256, retry 512",
    ]
    invariants.assert_retries_resend_identical_input(
        RunLog.from_fake(scripted_model), ignore=["max_tokens"]
    )

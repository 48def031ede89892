"""assert_error_metadata_reported: an HTTP error's status and retry-after reach the
error record of its step.

The fakes answer with the providers' own error bodies and headers (a 429 with
``retry-after``), the real SDKs parse them, and the runtime reports what it got.
Seeded bug: the error record forgets the response's retry-after.
"""

from __future__ import annotations

import anthropic
import openai
import pytest

from pytest_agentreplay import FakeModel, Fault, Reply, invariants
from pytest_agentreplay.invariants import InvariantViolation
from pytest_agentreplay.runlog import ErrorReported, RunLog
from tests.invariants._toy import ToyAgent


async def _rate_limited(fake: FakeModel, bugs: set[str] = frozenset()) -> RunLog:  # type: ignore[assignment]
    fake.fail_with(Fault.http(429, "quota exceeded", retry_after=5))
    log = RunLog.from_fake(fake)
    await ToyAgent(log=log, bugs=bugs).run_turn("hi", turn_id="t1")
    return log


@pytest.mark.anyio
async def test_a_rate_limit_reports_its_status_and_retry_after(failing_model: FakeModel) -> None:
    log = await _rate_limited(failing_model)

    invariants.assert_error_metadata_reported(log)
    [error] = log.of(ErrorReported)
    assert (error.status, error.retry_after) == (429, "5")


@pytest.mark.anyio
async def test_an_error_record_without_the_retry_after_fails(failing_model: FakeModel) -> None:
    log = await _rate_limited(failing_model, {"drop_retry_after"})
    [step] = log.steps()

    with pytest.raises(InvariantViolation) as failure:
        invariants.assert_error_metadata_reported(log)

    assert str(failure.value).splitlines() == [
        f"assert_error_metadata_reported failed at {step.describe()}: model call #0 got HTTP "
        f"429 with retry-after 5, but the error reported for it does not carry the "
        f"retry-after (kind 'rate_limit')",
        "  diff:",
        "    retry_after: response 5.0, reported null",
    ]
    assert failure.value.where == step.describe()


@pytest.mark.anyio
async def test_retried_rate_limits_need_a_record_only_when_the_loop_gives_up(
    scripted_model: FakeModel,
) -> None:
    scripted_model.script(*[Fault.http(429, "slow down", retry_after=0.01)] * 3)
    log = RunLog.from_fake(scripted_model)

    await ToyAgent(log=log, retry_rate_limits=True).run_turn("hi", turn_id="t1")

    assert [s.outcome for s in log.steps()] == ["retrying", "retrying", "failed"]
    invariants.assert_error_metadata_reported(log)
    invariants.assert_single_terminal_step(log)
    [error] = log.of(ErrorReported)
    assert (error.status, error.retry_after, error.step_id) == (429, "0.01", log.steps()[-1].id)


@pytest.mark.anyio
async def test_a_step_that_failed_on_an_http_error_without_a_record_fails(
    failing_model: FakeModel,
) -> None:
    log = await _rate_limited(failing_model)
    silent = RunLog(
        model_calls=log.model_calls,
        entries=[e for e in log.entries if not isinstance(e, ErrorReported)],
    )
    [step] = silent.steps()

    with pytest.raises(InvariantViolation) as failure:
        invariants.assert_error_metadata_reported(silent)
    assert str(failure.value).splitlines()[0] == (
        f"assert_error_metadata_reported failed at {step.describe()}: it failed on model call "
        f"#0 (HTTP 429) and no error was reported for it"
    )


def _openai_turn(log: RunLog, *, report: str | None) -> None:
    """A runtime that logs no steps: the SDK raises, it reports what the headers said."""
    client = openai.OpenAI(api_key="test", max_retries=0)
    try:
        client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "hi"}])
    except openai.RateLimitError as exc:
        wait = exc.response.headers.get("retry-after") if report is None else report
        log.error_reported("rate_limit", exc.message, status=exc.status_code, retry_after=wait)


@pytest.mark.parametrize(("report", "holds"), [(None, True), ("2.5", True), ("30", False)])
def test_openai_s_whole_second_header_and_the_exact_wait_both_count(
    scripted_model: FakeModel, report: str | None, holds: bool
) -> None:
    """OpenAI sends ``retry-after`` in whole seconds, rounded up (``3``), and the exact
    wait as ``retry-after-ms``: a record may carry either."""
    scripted_model.script(Fault.http(429, "slow down", retry_after=2.5))
    log = RunLog.from_fake(scripted_model)
    _openai_turn(log, report=report)

    if holds:
        invariants.assert_error_metadata_reported(log)
    else:
        with pytest.raises(InvariantViolation, match="at model call #0: model call #0 got HTTP"):
            invariants.assert_error_metadata_reported(log)


@pytest.mark.parametrize(("status", "holds"), [(529, True), (500, False)])
def test_the_sdk_s_own_retries_are_matched_from_the_last_call(
    scripted_model: FakeModel, status: int, holds: bool
) -> None:
    """Three calls for one step (the SDK retried twice by itself): the record goes with
    the last call, whatever the earlier ones said."""
    scripted_model.script(
        Fault.http(500, retry_after=0.001),
        Fault.http(500, retry_after=0.001),
        Fault.http(529, retry_after=0.001),
    )
    log = RunLog.from_fake(scripted_model)
    log.step_started("s1", step_index=0, turn_id="t1")
    client = anthropic.Anthropic(api_key="test", max_retries=2)
    with pytest.raises(anthropic.APIStatusError) as raised:
        client.messages.create(model="m", max_tokens=9, messages=[{"role": "user", "content": "a"}])
    log.step_completed("s1", "failed")
    log.error_reported("overloaded", status=status, retry_after=0.001, step_id="s1")

    assert raised.value.status_code == 529 and len(log.model_calls) == 3
    if holds:
        invariants.assert_error_metadata_reported(log)
    else:
        with pytest.raises(InvariantViolation, match=r"status: response 529, reported 500"):
            invariants.assert_error_metadata_reported(log)


def test_a_run_without_an_http_error_fails_unless_none_is_expected(
    scripted_model: FakeModel,
) -> None:
    scripted_model.script(Reply.text("Fine."))
    anthropic.Anthropic(api_key="test").messages.create(
        model="m", max_tokens=9, messages=[{"role": "user", "content": "a"}]
    )
    log = RunLog.from_fake(scripted_model)

    with pytest.raises(InvariantViolation, match=r"found 0 error record\(s\) of an HTTP error"):
        invariants.assert_error_metadata_reported(log)
    invariants.assert_error_metadata_reported(log, min_errors=0)


def _anthropic_turn(log: RunLog, *, keep_request_id: bool) -> None:
    """A runtime that reports the 429 it got, with (or without) the response's request id."""
    client = anthropic.Anthropic(api_key="test", max_retries=0)
    log.step_started("s1", step_index=0, turn_id="t1")
    try:
        client.messages.create(
            model="m", max_tokens=9, messages=[{"role": "user", "content": "hi"}]
        )
    except anthropic.RateLimitError as exc:
        log.step_completed("s1", "failed")
        log.error_reported(
            "rate_limit",
            exc.message,
            status=exc.status_code,
            retry_after=exc.response.headers.get("retry-after"),
            request_id=exc.request_id if keep_request_id else None,
            step_id="s1",
        )


@pytest.mark.parametrize("keep", [True, False], ids=["kept", "dropped"])
def test_the_request_id_of_the_error_response_reaches_the_record(
    failing_model: FakeModel, keep: bool
) -> None:
    """Issue 30: the id support asks for is on the response (``request-id``), not in
    ``str(exc)``; a record that drops it fails, naming it."""
    failing_model.fail_with(Fault.http(429, "slow down", retry_after=5, request_id="req_q1"))
    log = RunLog.from_fake(failing_model)
    _anthropic_turn(log, keep_request_id=keep)

    if keep:
        invariants.assert_error_metadata_reported(log)
        assert log.of(ErrorReported)[0].request_id == "req_q1"
        return
    with pytest.raises(InvariantViolation) as failure:
        invariants.assert_error_metadata_reported(log)
    lines = str(failure.value).splitlines()
    assert lines[0].endswith(
        "model call #0 got HTTP 429 with retry-after 5 (request id req_q1), but the error "
        "reported for it does not carry the request id (kind 'rate_limit')"
    )
    assert "    request_id: response 'req_q1', reported null" in lines

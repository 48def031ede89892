"""Run logs: the builder API, the model side fed by fakes, serialization, equality and
the normalized view that masks ids and clocks."""

from __future__ import annotations

import subprocess
import sys
import uuid
from datetime import datetime, timezone

import anthropic
import pytest

import pytest_agentreplay
from pytest_agentreplay import Citation, FakeModel, Fault, Reply, Usage
from pytest_agentreplay.runlog import (
    Delta,
    MessageSaved,
    RunLog,
    StepCompleted,
    StepStarted,
    delivered_text,
    normalize,
)
from tests.invariants._toy import ToyAgent
from tests.sdk_raises import raises_cut


def test_the_builder_api_records_a_timeline() -> None:
    log = RunLog()
    started = log.step_started(uuid.UUID(int=7), step_index=0, turn_id=1, session_id="s", at=1.5)
    log.delta("Hel")
    log.step_completed(started.step_id, usage=Usage(input_tokens=3, output_tokens=2), text="Hello")
    log.message("assistant", "Hello", step_id=started.step_id, turn_id=1)

    [step] = log.steps()
    assert step.id == "00000000-0000-0000-0000-000000000007"
    assert (step.index, step.turn_id, step.outcome, step.text) == (0, "1", "completed", "Hello")
    [end] = log.of(StepCompleted)
    assert (end.step_index, end.turn_id, end.session_id) == (0, "1", "s")  # from the start
    assert log.of(Delta)[0].step_id == step.id  # a delta defaults to the open step
    assert log.messages(role="assistant", turn_id=1)[0].text == "Hello"
    assert log.turns() == ["1"]
    assert step.describe() == f"step #1 (id {step.id!r}, index 0, turn '1')"


def test_entries_validate_early() -> None:
    with pytest.raises(ValueError, match="outcome"):
        RunLog().step_completed("a", "done")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="role"):
        RunLog().message("robot", "hi")  # type: ignore[arg-type]


def test_a_log_round_trips_through_json() -> None:
    log = RunLog()
    log.step_started("a", step_index=0, at=datetime(2026, 1, 1, tzinfo=timezone.utc))
    log.step_completed("a", "retrying", text="par")
    log.tool_call("c1", "weather", {"city": "Leeds"}, step_id="a")
    log.tool_result("c1", "sunny", step_id="a")
    log.intent("k")
    log.intent_completed("k")
    log.error_reported("rate_limit", "quota exceeded", retryable=True, status=429, retry_after="5")
    log.turn_ended("t", "failed")
    log.interrupt_requested("t")
    log.resumed()

    again = RunLog.model_validate_json(log.model_dump_json())
    assert again == log
    assert [type(e).__name__ for e in again.entries] == [
        "StepStarted",
        "StepCompleted",
        "ToolCalled",
        "ToolResulted",
        "IntentIssued",
        "IntentCompleted",
        "ErrorReported",
        "TurnEnded",
        "InterruptRequested",
        "Resumed",
    ]


def test_model_calls_are_read_from_the_fake_whenever_the_log_is_read() -> None:
    cut = Reply.text("two three four five", fault=Fault.cut(after_events=4))
    seen: list[str] = []
    with FakeModel("one", cut) as fake:
        log = RunLog.from_fake(fake)
        assert log.model_calls == []
        client = anthropic.Anthropic(api_key="test", max_retries=0)
        client.messages.create(model="m", max_tokens=9, messages=[{"role": "user", "content": "a"}])
        assert [c.outcome for c in log.model_calls] == ["completed"]
        with (
            raises_cut("anthropic"),
            client.messages.stream(
                model="m", max_tokens=9, messages=[{"role": "user", "content": "b"}]
            ) as stream,
        ):
            seen.extend(stream.text_stream)

    assert [c.outcome for c in log.model_calls] == ["completed", "cut"]
    assert delivered_text(log.model_calls[0]) == "one"
    assert delivered_text(log.model_calls[1]) == "".join(seen) == "two"  # what the client saw
    assert log.sources == (fake,)
    assert len(log.model_dump()["model_calls"]) == 2
    assert log.frozen().sources == () and log.frozen() == log


@pytest.mark.parametrize(
    "fault",
    [
        pytest.param(Fault.error_event("overloaded_error", after_events=5), id="error-event"),
        pytest.param(Fault.empty(), id="empty"),  # served without the reply's parts
    ],
)
def test_delivered_text_is_what_the_client_saw_before_the_fault(fault: Fault) -> None:
    """The error event was re-rendered as one more text delta, and an empty reply gave
    back the text of the reply a plan had put under it (issue 20: both made the error
    turn check expect text the user never saw)."""
    seen: list[str] = []
    with FakeModel(Reply.text("The first half of an answer", fault=fault)) as fake:
        client = anthropic.Anthropic(api_key="test", max_retries=0)
        try:
            with client.messages.stream(
                model="m", max_tokens=9, messages=[{"role": "user", "content": "a"}]
            ) as stream:
                seen.extend(stream.text_stream)
        except anthropic.APIStatusError:
            pass

    [call] = fake.log
    assert delivered_text(call) == "".join(seen)
    assert seen == (["The", " first"] if fault.kind == "error_event" else [])


def test_normalized_masks_ids_clocks_and_request_ids() -> None:
    log = RunLog()
    step = uuid.uuid4().hex
    log.step_started(step, step_index=0, turn_id="turn-9f2", at=1_767_225_600.25)
    log.tool_call("toolu_01XyzAbcDefGhiJkl", "f", step_id=step)
    log.message("assistant", f"request {uuid.uuid4()} done", step_id=step)
    log.step_completed(step, at=datetime.now(tz=timezone.utc))

    view = log.normalized()
    assert view["entries"][0] == {
        "event": "step_started",
        "step_id": "<step-1>",
        "step_index": 0,
        "turn_id": "<turn-1>",
        "at": "<time>",
    }
    assert view["entries"][1]["call_id"] == "<call-1>"
    assert view["entries"][2]["text"] == "request <uuid-1> done"
    assert normalize(
        {
            "request_id": "req_1",
            "duration_ms": 12,
            "created_at": "2026-01-01T10:00:00Z",
            "id": "msg_01AbCdEfGhIjKlMn",
        }
    ) == {
        "request_id": "<request-id>",
        "duration_ms": "<duration>",
        "created_at": "<time>",
        "id": "<id-1>",
    }


def test_citations_and_request_ids_are_kept_and_masked_where_volatile() -> None:
    """Issue 30: a saved answer keeps the sources it cites, an error record the request
    id of its response; the normalized view keeps the citation and masks the id. An
    answer that cites nothing dumps as it did before citations existed."""
    log = RunLog()
    met = Citation(url="https://met.example/leeds", title="Met", start=0, end=5)
    log.message("assistant", "Rain tomorrow.", citations=[met])
    log.message("assistant", "Plain.")
    log.error_reported("auth", "refused", status=401, request_id="req_011CabcDEF")

    assert RunLog.model_validate_json(log.model_dump_json()) == log
    cited, plain, error = log.normalized(calls="none")["entries"]
    assert cited["citations"] == [
        {"url": "https://met.example/leeds", "title": "Met", "cited_text": "", "start": 0, "end": 5}
    ]
    assert "citations" not in plain
    assert error["request_id"] == "<request-id>"


def test_short_ids_are_masked_only_where_they_are_ids() -> None:
    log = RunLog()
    log.step_started(5, step_index=0)
    log.error_reported("rate_limit", retry_after="5", step_id=5)
    view = log.normalized()
    assert view["entries"][1]["retry_after"] == "5"
    assert view["entries"][1]["step_id"] == "<step-1>"


@pytest.mark.anyio
async def test_two_runs_with_different_ids_and_clocks_normalize_equal() -> None:
    logs = []
    for _ in range(2):
        async with FakeModel(
            Reply.tool_call("f", {"x": 1}), "done.", seed=uuid.uuid4().hex
        ) as fake:
            log = RunLog.from_fake(fake)
            agent = ToyAgent(log=log, tools={"f": lambda args: "ok"}, session_id=uuid.uuid4().hex)
            await agent.run_turn("go")
            await agent.aclose()
        logs.append(log)

    first, second = logs
    assert first != second  # different step ids, tool-call ids, times
    assert first.normalized() == second.normalized()
    assert first.diff(second) == []
    assert first.normalized(calls="brief")["model_calls"][1]["messages"] == [
        "user: go",
        "assistant: [tool_call f <call-1>]",
        "user: [tool_result <call-1>: ok]",
    ]
    assert "model_calls" not in first.normalized(calls="none")


def test_transport_free_view_drops_how_the_answer_arrived() -> None:
    log = RunLog()
    log.step_started("a", step_index=0)
    log.delta("Hi")
    log.step_completed("a", text="Hi")
    assert [e["event"] for e in log.normalized(transport=False)["entries"]] == [
        "step_started",
        "step_completed",
    ]


@pytest.mark.anyio
async def test_pydantic_ai_history_becomes_steps_messages_and_tool_entries(
    scripted_model: FakeModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pydantic_ai import Agent

    monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
    scripted_model.script(
        Reply.tool_call(
            "weather", {"city": "Leeds"}, usage=Usage(input_tokens=20, output_tokens=5)
        ),
        Reply.text("It is sunny.", usage=Usage(input_tokens=30, output_tokens=7)),
    )

    def weather(city: str) -> str:
        """Current weather in a city."""
        return f"sunny in {city}"

    agent = Agent("anthropic:claude-sonnet-4-6", tools=[weather], system_prompt="Be brief.")
    result = await agent.run("Weather in Leeds?")
    log = RunLog.from_pydantic_ai(result.all_messages(), model=scripted_model)

    assert [(s.index, s.outcome) for s in log.steps()] == [(0, "completed"), (1, "completed")]
    assert [e.usage for e in log.of(StepCompleted)] == [
        Usage(input_tokens=20, output_tokens=5),
        Usage(input_tokens=30, output_tokens=7),
    ]
    assert [(m.role, m.text) for m in log.of(MessageSaved)] == [
        ("system", "Be brief."),
        ("user", "Weather in Leeds?"),
        ("assistant", "It is sunny."),
    ]
    assert log.of(StepStarted)[0].turn_id == result.all_messages()[0].run_id
    assert len(log.model_calls) == 2


def test_importing_the_package_stays_light_and_invariants_is_reachable() -> None:
    assert pytest_agentreplay.invariants.assert_single_terminal_step
    from pytest_agentreplay import invariants, runlog

    assert invariants.__all__ and runlog.RunLog is RunLog
    probe = (
        "import sys, pytest_agentreplay; "
        "print(sorted(m for m in ('pydantic', 'httpx2', 'anthropic', "
        "'pytest_agentreplay.invariants', 'pytest_agentreplay.runlog') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_invariants_exports_exactly_its_public_names() -> None:
    from pytest_agentreplay import invariants

    for name in invariants.__all__:
        assert getattr(invariants, name) is not None
    assert {
        "assert_stream_parity",
        "assert_single_terminal_step",
        "assert_no_live_calls",
        "assert_retries_resend_identical_input",
        "assert_every_tool_call_answered",
        "assert_dangling_intent_reissued",
        "assert_terminal_error_turn",
        "assert_no_partial_content_saved",
    } <= set(invariants.__all__)
    assert all(not n.startswith("_") for n in invariants.__all__)

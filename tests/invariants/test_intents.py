"""assert_dangling_intent_reissued: a write-ahead intent left by a crash mid-stream
is re-issued exactly once on resume and completes exactly once.

The toy runtime writes an intent before each model step and a completion after;
`crash_on_cut` makes the process die when the stream is cut, leaving the intent
dangling in its store. A new runtime over the same store resumes. Seeded bugs:
resume forgets the dangling intent; resume re-issues it twice; resume re-runs the
turn from its first step, re-sending an intent that had completed.
"""

from __future__ import annotations

import pytest

from pytest_agentreplay import FakeModel, Fault, Reply, invariants
from pytest_agentreplay.invariants import InvariantViolation
from pytest_agentreplay.runlog import IntentIssued, RunLog
from tests.invariants._toy import SimulatedCrashError, Store, ToyAgent

ANSWER = "The answer, written after the restart."


async def _crash_and_resume(fake: FakeModel, bugs: set[str]) -> RunLog:
    log = RunLog.from_fake(fake)
    store = Store()
    with pytest.raises(SimulatedCrashError):
        await ToyAgent(log=log, store=store, crash_on_cut=True).run_turn("hi", turn_id="t1")
    assert store.wal == {"t1:0": "pending"}
    await ToyAgent(log=log, store=store, bugs=bugs).resume()
    return log


@pytest.mark.anyio
async def test_resume_reissues_the_dangling_intent_once(interrupting_model: FakeModel) -> None:
    interrupting_model.script(Reply.text(ANSWER))

    log = await _crash_and_resume(interrupting_model, set())

    invariants.assert_dangling_intent_reissued(log)
    assert [c.outcome for c in log.model_calls] == ["cut", "completed"]
    assert log.messages(role="assistant")[-1].text == ANSWER


@pytest.mark.anyio
async def test_a_resume_that_forgets_the_intent_fails(interrupting_model: FakeModel) -> None:
    interrupting_model.script(Reply.text(ANSWER))
    interrupting_model.check_unused = False  # the buggy resume never asks

    log = await _crash_and_resume(interrupting_model, {"no_reissue"})
    step = log.steps()[0]

    with pytest.raises(InvariantViolation) as failure:
        invariants.assert_dangling_intent_reissued(log)
    assert str(failure.value).splitlines() == [
        f"assert_dangling_intent_reissued failed at {step.describe()}, intent 't1:0': it was "
        f"left dangling and re-issued 0 times on resume; it must be re-issued exactly once",
        "  diff:",
        '    [2]: missing logged (expected {"event":"intent","key":"t1:0"})',
        '    [3]: missing logged (expected {"event":"intent_completed","key":"t1:0"})',
    ]


@pytest.mark.anyio
async def test_a_resume_that_reissues_twice_fails(interrupting_model: FakeModel) -> None:
    interrupting_model.script(Reply.text(ANSWER), Reply.text(ANSWER))

    log = await _crash_and_resume(interrupting_model, {"double_reissue"})

    assert len(log.of(IntentIssued)) == 3
    with pytest.raises(
        InvariantViolation,
        match=r"intent 't1:0': it was left dangling and "
        r"re-issued 2 times on resume",
    ) as failure:
        invariants.assert_dangling_intent_reissued(log)
    assert '[4]: new logged: {"event":"intent","key":"t1:0"}' in str(failure.value)


async def _crash_in_the_second_step(fake: FakeModel, bugs: set[str]) -> RunLog:
    """A tool round completes intent t1:0; the stream of t1:1 is cut and the process dies."""
    fake.script(
        Reply.tool_call("weather", {"city": "Leeds"}),
        Reply.text("It is sun", fault=Fault.cut(after_events=4)),
        Reply.text(ANSWER),
    )
    log = RunLog.from_fake(fake)
    store = Store()
    tools = {"weather": lambda args: "sunny"}
    with pytest.raises(SimulatedCrashError):
        await ToyAgent(log=log, store=store, tools=tools, crash_on_cut=True).run_turn(
            "Weather in Leeds?", turn_id="t1"
        )
    assert store.wal == {"t1:0": "done", "t1:1": "pending"}
    await ToyAgent(log=log, store=store, tools=tools, bugs=bugs).resume()
    return log


@pytest.mark.anyio
async def test_resume_reissues_only_the_dangling_step(scripted_model: FakeModel) -> None:
    log = await _crash_in_the_second_step(scripted_model, set())

    invariants.assert_dangling_intent_reissued(log)
    assert [e.key for e in log.of(IntentIssued)] == ["t1:0", "t1:1", "t1:1"]


@pytest.mark.anyio
async def test_a_resume_that_resends_a_completed_intent_names_it(
    scripted_model: FakeModel,
) -> None:
    """Issue 20: the message said "t1:1 re-issued 0 times", not what went wrong."""
    log = await _crash_in_the_second_step(scripted_model, {"resume_from_turn_start"})
    again = log.steps()[-1]  # the resumed run's step, which re-issued t1:0

    with pytest.raises(InvariantViolation) as failure:
        invariants.assert_dangling_intent_reissued(log)

    assert str(failure.value).splitlines() == [
        f"assert_dangling_intent_reissued failed at {again.describe()}, intent 't1:0': it was "
        f"re-issued on resume although it had completed before the run broke; the dangling "
        f"intent 't1:1' was not re-issued: the resume started from the wrong intent",
        "  diff:",
        '    [3]: new logged: {"event":"intent","key":"t1:0"}',
        '    [4]: new logged: {"event":"intent_completed","key":"t1:0"}',
    ]


@pytest.mark.parametrize(
    ("steps", "problem"),
    [
        pytest.param(["intent a", "done a"], "the log has no resume", id="no-resume"),
        pytest.param(
            ["intent a", "done a", "resume"], "no intent was left dangling", id="nothing-dangling"
        ),
        pytest.param(
            ["intent a", "resume", "intent a"],
            "after its re-issue it completed 0 times",
            id="never-completed",
        ),
        pytest.param(
            ["intent a", "resume", "done a", "intent a"],
            "it must complete exactly once, after the re-issue",
            id="completed-first",
        ),
        pytest.param(
            ["intent a", "done a", "intent b", "resume", "intent b", "done b", "intent a"],
            "it was re-issued on resume although it had completed before the run broke",
            id="redone",
        ),
    ],
)
def test_each_rule(steps: list[str], problem: str) -> None:
    log = RunLog()
    for step in steps:
        what, _, key = step.partition(" ")
        if what == "intent":
            log.intent(key)
        elif what == "done":
            log.intent_completed(key)
        else:
            log.resumed()
    with pytest.raises(InvariantViolation, match=problem):
        invariants.assert_dangling_intent_reissued(log)

"""assert_single_terminal_step: every started model step ends exactly once.

The toy runtime runs on the real anthropic SDK against the plugin's fakes: an
interrupted stream is retried in a fresh step, a user interrupt cancels a held
request. Seeded bugs: a `finally` that logs a second terminal event on interrupt,
a retry that keeps the step id of the try it repeats, and a retry loop that gives
up with its last try still saying "retrying".
"""

from __future__ import annotations

import asyncio

import pytest

from pytest_agentreplay import FakeModel, Reply, invariants
from pytest_agentreplay.invariants import InvariantViolation
from pytest_agentreplay.runlog import RunLog
from tests.invariants._toy import ToyAgent

ANSWER = "A long answer with quite a few words in it."


@pytest.mark.anyio
async def test_a_retried_stream_ends_each_step_once(interrupting_model: FakeModel) -> None:
    interrupting_model.script(Reply.text(ANSWER))
    log = RunLog.from_fake(interrupting_model)

    assert await ToyAgent(log=log).run_turn("Why?", turn_id="t1") == ANSWER

    invariants.assert_single_terminal_step(log)
    steps = log.steps()
    assert [(s.index, s.outcome) for s in steps] == [(0, "retrying"), (0, "completed")]
    assert steps[0].id != steps[1].id
    assert [c.outcome for c in log.model_calls] == ["cut", "completed"]


async def _interrupt_while_held(blocking_model: FakeModel, bugs: set[str]) -> RunLog:
    log = RunLog.from_fake(blocking_model)
    task = asyncio.create_task(ToyAgent(log=log, bugs=bugs).run_turn("hi", turn_id="t1"))
    assert await blocking_model.wait_blocked_async(timeout=120)  # a hang fails (no speed bound)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    return log


@pytest.mark.anyio
async def test_an_interrupt_while_blocked_ends_the_step_once(blocking_model: FakeModel) -> None:
    log = await _interrupt_while_held(blocking_model, set())

    invariants.assert_single_terminal_step(log)
    [step] = log.steps()
    assert step.outcome == "interrupted"
    assert [c.outcome for c in log.model_calls] == ["cancelled"]


@pytest.mark.anyio
async def test_logging_a_step_twice_on_interrupt_fails(blocking_model: FakeModel) -> None:
    log = await _interrupt_while_held(blocking_model, {"double_terminal_on_interrupt"})
    [step] = log.steps()

    with pytest.raises(InvariantViolation) as failure:
        invariants.assert_single_terminal_step(log)

    message = str(failure.value)
    assert message.startswith(
        f"assert_single_terminal_step failed at step #1 (id {step.id!r}, index 0, turn 't1'): "
        "it ended 2 times ('interrupted', 'interrupted'); a started step must end exactly once"
    )
    assert '[2]: new logged: {"event":"step_completed","outcome":"interrupted"' in message
    assert failure.value.where == step.describe()


@pytest.mark.anyio
async def test_a_retry_that_keeps_the_step_id_fails(interrupting_model: FakeModel) -> None:
    interrupting_model.script(Reply.text(ANSWER))
    log = RunLog.from_fake(interrupting_model)
    await ToyAgent(log=log, bugs={"reuse_step_id_on_retry"}).run_turn("Why?", turn_id="t1")

    with pytest.raises(
        InvariantViolation,
        match=r"it started 2 times; a retry must start a "
        r"fresh step id \(at the same step index\)",
    ) as failure:
        invariants.assert_single_terminal_step(log)
    assert "step #1 (id " in str(failure.value)


@pytest.mark.anyio
async def test_retry_exhaustion_ends_the_last_try_failed(interrupting_model: FakeModel) -> None:
    interrupting_model.interrupt(times=2)  # three cuts: the toy's limit is two retries
    interrupting_model.check_unused = False  # every try is cut
    interrupting_model.script(Reply.text(ANSWER))
    log = RunLog.from_fake(interrupting_model)

    assert await ToyAgent(log=log).run_turn("Why?", turn_id="t1") is None

    invariants.assert_single_terminal_step(log)
    assert [s.outcome for s in log.steps()] == ["retrying", "retrying", "failed"]


@pytest.mark.anyio
async def test_retry_exhaustion_that_leaves_the_last_try_retrying_fails(
    interrupting_model: FakeModel,
) -> None:
    """Issue 20: "the last try ends failed" could not be asserted."""
    interrupting_model.interrupt(times=2)
    interrupting_model.check_unused = False
    interrupting_model.script(Reply.text(ANSWER))
    log = RunLog.from_fake(interrupting_model)
    await ToyAgent(log=log, bugs={"exhaustion_left_retrying"}).run_turn("Why?", turn_id="t1")
    last = log.steps()[-1]

    with pytest.raises(InvariantViolation) as failure:
        invariants.assert_single_terminal_step(log)

    lines = str(failure.value).splitlines()
    assert lines[0] == (
        f"assert_single_terminal_step failed at {last.describe()}: it ended 'retrying' but no "
        f"retry followed before its turn ended 'failed': the last try of a retry loop that "
        f"gives up must end 'failed' (or the turn 'aborted', when an interrupt stopped the "
        f"backoff)"
    )
    assert lines[1:] == ["  diff:", "    [1].outcome: expected 'failed', logged 'retrying'"]
    assert failure.value.where == last.describe() and last.ordinal == 3


# --- the rules, one hand-written log each ---------------------------------------------------


def _log(*calls: tuple[str, tuple[object, ...], dict[str, object]]) -> RunLog:
    log = RunLog()
    for method, args, kwargs in calls:
        getattr(log, method)(*args, **kwargs)
    return log


def start(
    step: str, index: int = 0, **kw: object
) -> tuple[str, tuple[object, ...], dict[str, object]]:
    return ("step_started", (step,), {"step_index": index, "turn_id": "t", **kw})


def end(
    step: str, outcome: str = "completed", **kw: object
) -> tuple[str, tuple[object, ...], dict[str, object]]:
    return ("step_completed", (step, outcome), kw)


def test_a_step_running_when_the_process_died_needs_no_end() -> None:
    """A crash mid-step logs nothing more; resume runs the step again, fresh."""
    crashed = _log(start("a"), ("resumed", (), {}), start("b"), end("b"))
    invariants.assert_single_terminal_step(crashed)
    with pytest.raises(InvariantViolation, match="it never ended"):
        invariants.assert_single_terminal_step(_log(start("a"), ("resumed", (), {}), start("b")))
    with pytest.raises(InvariantViolation, match="it ended 2 times"):
        invariants.assert_single_terminal_step(
            _log(start("a"), end("a"), end("a"), ("resumed", (), {}))
        )


@pytest.mark.parametrize(
    ("log", "where", "problem"),
    [
        pytest.param(
            _log(start("a")),
            "step #1 (id 'a', index 0, turn 't')",
            "it never ended",
            id="never-ended",
        ),
        pytest.param(
            _log(end("a")),
            "step #1 (id 'a')",
            "it ended but never started",
            id="ended-without-start",
        ),
        pytest.param(
            _log(start("a"), end("a", "retrying"), start("b", 1), end("b")),
            "step #2 (id 'b', index 1, turn 't')",
            "a retry must run at the same step index 0",
            id="retry-moves-index",
        ),
        pytest.param(
            _log(start("a"), end("a"), start("b", 0), end("b")),
            "step #2 (id 'b', index 0, turn 't')",
            "it reuses step index 0 after step #1 (id 'a', index 0, turn 't') ended 'completed'",
            id="index-reused",
        ),
        pytest.param(
            _log(start("a", at=2.0), end("a", at=1.0)),
            "step #1 (id 'a', index 0, turn 't')",
            "it completed at 1.0 before it started at 2.0",
            id="clock-backwards",
        ),
        pytest.param(
            _log(start("a"), end("a", turn_id="other")),
            "step #1 (id 'a', index 0, turn 't')",
            "its terminal event names a different index, turn or session",
            id="other-turn",
        ),
        pytest.param(
            _log(start("a"), end("a", "retrying"), ("turn_ended", ("t", "failed"), {})),
            "step #1 (id 'a', index 0, turn 't')",
            "it ended 'retrying' but no retry followed before its turn ended 'failed'",
            id="exhausted-retrying",
        ),
        pytest.param(
            _log(
                start("a"),
                end("a", "retrying"),
                start("b"),
                end("b", "retrying"),
                ("turn_ended", ("t", "completed"), {}),
            ),
            "step #2 (id 'b', index 0, turn 't')",
            "no retry followed before its turn ended 'completed'",
            id="given-up-but-completed",
        ),
        pytest.param(
            _log(
                start("a", turn_id=None),
                end("a", "retrying"),
                ("turn_ended", (), {"outcome": "failed"}),
            ),
            "step #1 (id 'a', index 0)",
            "no retry followed before its turn ended 'failed'",
            id="exhausted-without-turn-ids",
        ),
    ],
)
def test_each_rule_names_the_step(log: RunLog, where: str, problem: str) -> None:
    with pytest.raises(InvariantViolation) as failure:
        invariants.assert_single_terminal_step(log)
    assert failure.value.where == where
    assert problem in failure.value.problem
    assert failure.value.diff, "every failure shows a diff"


def test_new_turns_restart_the_index_and_aborted_retries_are_fine() -> None:
    log = _log(
        start("a"),
        end("a", "retrying"),  # interrupted during the backoff: no retry follows
        ("turn_ended", ("t", "aborted"), {}),
        start("b", 0, turn_id="t2"),
        end("b"),
        start("c", 1, turn_id="t2"),
        end("c"),
    )
    invariants.assert_single_terminal_step(log)


@pytest.mark.parametrize(
    "log",
    [
        pytest.param(_log(start("a"), end("a", "retrying")), id="turn-still-running"),
        pytest.param(
            _log(start("a"), end("a", "retrying"), ("turn_ended", ("t", "aborted"), {})),
            id="interrupted-during-the-backoff",
        ),
        pytest.param(
            _log(
                start("a"),
                end("a", "retrying"),
                ("resumed", (), {}),
                ("turn_ended", ("t", "failed"), {}),
            ),
            id="died-during-the-backoff",
        ),
        pytest.param(
            _log(
                start("a"),
                end("a", "retrying"),
                start("b", turn_id="t2"),
                end("b"),
                ("turn_ended", ("t2", "completed"), {}),
                start("c"),
                end("c"),
                ("turn_ended", ("t", "completed"), {}),
            ),
            id="retried-after-another-turn-ended",
        ),
    ],
)
def test_a_retrying_step_without_a_retry_is_fine_unless_its_turn_gave_up(log: RunLog) -> None:
    invariants.assert_single_terminal_step(log)


def test_the_diff_is_bounded() -> None:
    log = RunLog()
    log.step_started("a", step_index=0)
    for _ in range(50):
        log.step_completed("a", "interrupted", text="x" * 500)
    with pytest.raises(InvariantViolation) as failure:
        invariants.assert_single_terminal_step(log)
    assert len(str(failure.value).splitlines()) < 20
    assert max(len(line) for line in str(failure.value).splitlines()) < 200

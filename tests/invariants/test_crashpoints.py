"""The crash-point explorer on a toy durable runtime: it passes the correct runtime at
every crash point and finds each seeded bug, with a stable code and the first
diverging step."""

from __future__ import annotations

import itertools
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_agentreplay import Reply, ToolCall
from pytest_agentreplay.invariants.crashpoints import (
    CRASH_CODES,
    Checkpoint,
    CrashDivergence,
    CrashExplorer,
    CrashPoint,
    SimulatedCrash,
    recorded_script,
)
from tests.invariants._durable import DurableAgent
from tests.strategies import _cassettes

QUESTION = "Weather in Leeds and York?"
SCRIPT = [
    Reply(
        parts=[
            ToolCall(name="weather", args={"city": "Leeds"}),
            ToolCall(name="weather", args={"city": "York"}),
        ]
    ),
    Reply.text("Sunny in Leeds, rainy in York."),
]


def explorer(bug: str | None = None, **kwargs: Any) -> CrashExplorer[DurableAgent]:
    return CrashExplorer(
        fresh=lambda: DurableAgent(bug=bug),
        run=lambda agent, checkpoint: agent.run(QUESTION, checkpoint),
        resume=DurableAgent.resume,
        state=DurableAgent.state,
        script=kwargs.pop("script", SCRIPT),
        **kwargs,
    )


def test_the_reference_run_lists_every_crash_point_model_calls_included() -> None:
    assert [p.label for p in explorer().points] == [
        "user message saved",
        "intent 0",
        "model request #0",
        "reply 0",
        "tool result {'city': 'Leeds'}",
        "tool result {'city': 'York'}",
        "intent 1",
        "model request #1",
        "reply 1",
    ]


def test_a_correct_runtime_survives_a_crash_at_every_point() -> None:
    results = explorer().explore()
    assert [r.point.index for r in results] == list(range(9))
    assert all(r.state == results[0].state for r in results)
    assert results[0].state["wal"] == ["step 0: done", "step 1: done"]


def test_a_second_intent_instead_of_a_reissue_is_found_with_its_first_diverging_step() -> None:
    with pytest.raises(CrashDivergence) as info:
        explorer(bug="second_intent").explore()
    error = info.value
    assert error.code == "AR-CRASH-001"
    assert error.point == CrashPoint(1, "intent 0")
    assert error.step == "wal[1]"
    assert error.diff == ["wal[1]: new resumed: 'step 0: intent'"]
    assert str(error).splitlines() == [
        "AR-CRASH-001 crash after step 1 (intent 0): after resuming, the state differs "
        "from the uninterrupted run's",
        "  first diverging step: wal[1]",
        "    wal[1]: new resumed: 'step 0: intent'",
    ]


def test_crash_points_that_the_bug_does_not_touch_pass() -> None:
    buggy = explorer(bug="second_intent")
    assert buggy.check(0).point.label == "user message saved"
    assert buggy.check(3).point.label == "reply 0"


def test_rerunning_saved_tool_calls_is_found_as_a_request_the_reference_never_sent() -> None:
    buggy = explorer(bug="rerun_tools")
    with pytest.raises(CrashDivergence) as info:
        buggy.explore()
    assert info.value.code == "AR-CRASH-006"
    assert info.value.point == CrashPoint(4, "tool result {'city': 'Leeds'}")
    assert "unknown request" in str(info.value)


def test_hypothesis_chooses_crash_points_and_shrinks_to_the_first_that_fails() -> None:
    buggy = explorer(bug="second_intent")
    failed: list[int] = []

    @settings(max_examples=20, derandomize=True, database=None, deadline=None)
    @given(data=st.data())
    def survives_any_crash(data: st.DataObject) -> None:
        k = data.draw(buggy.crash_points())
        try:
            buggy.check(k)
        except CrashDivergence:
            failed.append(k)
            raise

    with pytest.raises(CrashDivergence, match="AR-CRASH-001"):
        survives_any_crash()
    assert failed[-1] == 1


def test_a_resume_that_raises_is_reported() -> None:
    with pytest.raises(CrashDivergence) as info:
        explorer(bug="resume_fails").check(0)
    assert info.value.code == "AR-CRASH-002"
    assert "resume raised RuntimeError: nothing to resume from" in str(info.value)
    assert isinstance(info.value.__cause__, RuntimeError)


class _Swallowing(DurableAgent):
    def run(self, question: str, checkpoint: Any = None) -> str:
        try:
            return super().run(question, checkpoint)
        except BaseException:  # the bug: a bare except around the whole turn
            return ""


def test_a_runtime_that_swallows_the_crash_is_reported() -> None:
    swallowing = CrashExplorer(
        fresh=_Swallowing,
        run=lambda agent, checkpoint: agent.run(QUESTION, checkpoint),
        resume=DurableAgent.resume,
        state=DurableAgent.state,
        script=SCRIPT,
    )
    with pytest.raises(CrashDivergence, match="AR-CRASH-003 crash after step 0"):
        swallowing.check(0)


def test_a_run_that_changes_its_steps_is_reported() -> None:
    runs = itertools.count()

    def run(agent: DurableAgent, checkpoint: Checkpoint) -> None:
        steps = 3 if next(runs) < 2 else 1  # the reference (twice), then fewer steps
        for i in range(steps):
            checkpoint(f"step {i}")

    flaky = CrashExplorer(fresh=DurableAgent, run=run, resume=lambda a: None, state=lambda a: 1)
    with pytest.raises(CrashDivergence, match="AR-CRASH-004 crash after step 2"):
        flaky.check(2)


def test_a_state_that_differs_between_two_clean_runs_is_reported_as_non_determinism() -> None:
    noisy = CrashExplorer(
        fresh=DurableAgent,
        run=lambda agent, checkpoint: checkpoint("only step"),
        resume=lambda agent: None,
        state=lambda agent: {"luck": random.random()},
    )
    with pytest.raises(CrashDivergence) as info:
        noisy.check(0)
    assert info.value.code == "AR-CRASH-005"
    assert info.value.point is None


def test_the_codes_are_documented() -> None:
    docs = (Path(__file__).parents[2] / "docs" / "property-testing.md").read_text()
    for code in CRASH_CODES:
        assert code in docs


def test_without_a_script_the_runtime_brings_its_own_model() -> None:
    steps: list[str] = []
    plain = CrashExplorer(
        fresh=list,
        run=lambda state, checkpoint: [state.append(i) or checkpoint(f"s{i}") for i in range(3)],
        resume=lambda state: state.extend(range(len(state), 3)),
        state=lambda state: state,
    )
    assert [r.state for r in plain.explore()] == [[0, 1, 2]] * 3
    assert steps == []
    with pytest.raises(IndexError, match="out of range: the run has 3"):
        plain.check(3)


def test_a_run_without_checkpoints_has_no_crash_points_to_draw() -> None:
    silent = CrashExplorer(fresh=list, run=lambda s, c: None, resume=list.clear, state=len)
    assert silent.explore() == []
    with pytest.raises(ValueError, match="no crash points"):
        silent.crash_points()


def test_a_recorded_run_is_explored_from_its_cassette(tmp_path: Path) -> None:
    request = {
        "model": "claude-sonnet-4-6",
        "max_tokens": 256,
        "stream": True,
        "messages": [{"role": "user", "content": QUESTION}],
    }
    path = _cassettes.write(tmp_path / "run.yaml", _cassettes.anthropic_stream(request, *SCRIPT))
    script = recorded_script(path)
    assert [r.text_content for r in script] == ["", "Sunny in Leeds, rainy in York."]
    assert [c.args for c in script[0].tool_calls] == [{"city": "Leeds"}, {"city": "York"}]
    assert len(explorer(script=script).explore()) == 9


def test_simulated_crash_is_not_an_exception() -> None:
    assert not issubclass(SimulatedCrash, Exception)
    with pytest.raises(SimulatedCrash, match=r"simulated crash after step 0 \(here\)"):
        Checkpoint(crash_at=0)("here")

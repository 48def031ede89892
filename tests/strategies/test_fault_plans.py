"""Fault plans: what they mean, how they apply to fakes and cassettes, how they shrink."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import anthropic
import pydantic
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_agentreplay import FakeModel, Fault, FaultPlan, Reply, Text, Thinking, ToolCall, Usage
from pytest_agentreplay.cassettes.handle import AgentReplay
from pytest_agentreplay.neutral import (
    Citation,
    SearchResult,
    ServerToolCall,
    fault_source,
    reply_source,
)
from pytest_agentreplay.strategies import DEFAULT_FAULT_KINDS, fault_plans, faults, replies
from tests.strategies import _agent, _cassettes
from tests.strategies._minimal import minimal

QUICK = settings(max_examples=100, derandomize=True, database=None, deadline=None)


# --- what a plan means -----------------------------------------------------------------


def test_a_faulted_call_plays_the_next_reply_without_using_it_up() -> None:
    plan = FaultPlan(
        faults=(Fault.http(429), Fault.cut(after_events=4), None, Fault.empty()),
        replies=(Reply.text("first"), Reply.text("second")),
    )
    assert plan.script() == [
        Reply.text("first", fault=Fault.http(429)),
        Reply.text("first", fault=Fault.cut(after_events=4)),
        Reply.text("first"),
        Reply.text("second", fault=Fault.empty()),
        Reply.text("second"),
    ]
    assert (plan.calls, plan.fault_count) == (5, 3)
    assert plan.injections() == [
        (0, Fault.http(429)),
        (1, Fault.cut(after_events=4)),
        (3, Fault.empty()),
    ]


def test_faults_after_the_last_reply_fail_with_nothing_to_show() -> None:
    plan = FaultPlan(faults=(Fault.http(500), Fault.http(500)))
    assert plan.script() == [Reply(fault=Fault.http(500))] * 2
    assert plan.calls == 2


def test_plans_refuse_what_they_cannot_mean() -> None:
    with pytest.raises(pydantic.ValidationError, match="faults go in `faults`"):
        FaultPlan(replies=(Reply.text("x", fault=Fault.cut()),))
    with pytest.raises(pydantic.ValidationError, match="2 call.* served .* only 1 reply"):
        FaultPlan(faults=(None, None), replies=(Reply.text("x"),))


def test_describe_reads_call_by_call() -> None:
    plan = FaultPlan(faults=(Fault.cut(after_events=2),), replies=(Reply.text("Hi"),))
    assert plan.describe() == (
        "call 0: cut after 2 events — Reply.text('Hi')\ncall 1: served — Reply.text('Hi')"
    )
    assert FaultPlan().describe() == "no calls"


FAULTS = [
    Fault.http(429),
    Fault.http(503, "busy", retry_after=0.5, error_type="overloaded_error"),
    Fault.cut(after_events=3),
    Fault.error_event(after_events=1),
    Fault.error_event("api_error", "boom", after_events=0),
    Fault.stall(after_events=2),
    Fault.timeout(),
    Fault.timeout(after_events=5),
    Fault.empty(),
    Fault.truncate(after_events=4),
    Fault.cut(after_events=2, retry_after=1.5, request_id="req_1", headers={"x-a": "b"}),
    Fault.error_event("overloaded_error", after_events=1, retry_after=30, request_id="r"),
    Fault.http(529, request_id="req_2", headers={"x-should-retry": "false"}),
    Fault.empty(retry_after=0),
]
REPLIES = [
    Reply.text("Hi"),
    Reply.text("Hi", stop="max_tokens", usage=Usage(input_tokens=3, output_tokens=1)),
    Reply.tool_call("weather", {"city": "Leeds"}),
    Reply.tool_call("weather", {"city": "Leeds"}, id="call_1", text="Checking."),
    Reply(parts=[Thinking(text="hmm"), Text(text="a"), ToolCall(name="f", args={"x": [1]})]),
    Reply(parts=[], model="m"),
    Reply(parts=[Text(text="x")], fault=Fault.cut(after_events=1)),
    Reply.text("x", citations=[Citation(url="https://a.example", title="A", start=0, end=1)]),
    Reply.text("x", event_fields={"error": None}),
    Reply(
        parts=[
            ServerToolCall.web_search("q", ["https://a.example"], id="s1"),
            ServerToolCall.code_execution("1", stdout="1", error=None),
            ServerToolCall.web_search("q", error="max_uses_exceeded"),
            Text(text="a", citations=[Citation(url="https://a.example", cited_text="c")]),
            ToolCall(name="f", args={}),
        ]
    ),
]


@pytest.mark.parametrize("fault", FAULTS, ids=fault_source)
def test_fault_source_is_python_that_builds_the_fault(fault: Fault) -> None:
    assert eval(fault_source(fault), {"Fault": Fault}) == fault


@given(faults(kinds=["truncate"]))
def test_faults_draws_truncated_streams_when_asked(fault: Fault) -> None:
    assert fault.kind == "truncate"
    assert 0 <= (fault.after_events or 0) <= 12


@pytest.mark.parametrize("reply", REPLIES, ids=reply_source)
def test_reply_source_is_python_that_builds_the_reply(reply: Reply) -> None:
    names = {
        "Reply": Reply,
        "Text": Text,
        "Thinking": Thinking,
        "ToolCall": ToolCall,
        "Usage": Usage,
        "Fault": Fault,
        "Citation": Citation,
        "SearchResult": SearchResult,
        "ServerToolCall": ServerToolCall,
    }
    assert eval(reply_source(reply), names) == reply


@QUICK
@given(
    plan=fault_plans(replies(), max_replies=3, faults=faults(kinds=(*DEFAULT_FAULT_KINDS, "stall")))
)
def test_a_plans_repr_builds_the_same_plan(plan: FaultPlan) -> None:
    names = {
        "FaultPlan": FaultPlan,
        "Fault": Fault,
        "Reply": Reply,
        "Text": Text,
        "Thinking": Thinking,
        "ToolCall": ToolCall,
        "Usage": Usage,
    }
    assert eval(repr(plan), names) == plan
    assert str(plan) == repr(plan)


# --- the strategies ---------------------------------------------------------------------


@QUICK
@given(plan=fault_plans(min_faults=1, max_faults=2, max_replies=3))
def test_plans_stay_within_their_bounds(plan: FaultPlan) -> None:
    assert 1 <= plan.fault_count <= 2
    assert 1 <= len(plan.replies) <= 3
    assert plan.faults and plan.faults[-1] is not None  # trailing served calls are implied
    assert all(not r.tool_calls for r in plan.replies)  # default replies end a turn


@QUICK
@given(fault=faults(kinds=("cut", "stall"), max_after_events=3))
def test_faults_are_of_the_kinds_asked_for(fault: Fault) -> None:
    assert fault.kind in ("cut", "stall")
    assert 0 <= (fault.after_events or 0) <= 3


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"kinds": ()}, "kinds must be some of"),
        ({"kinds": ("explode",)}, "kinds must be some of"),
        ({"statuses": ()}, "statuses or retry_after is empty"),
        ({"retry_after": ()}, "statuses or retry_after is empty"),
    ],
)
def test_faults_refuses_bad_arguments(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        faults(**kwargs)  # type: ignore[arg-type]


def test_fault_plans_refuses_bad_bounds() -> None:
    with pytest.raises(ValueError, match="min_faults <= max_faults"):
        fault_plans(min_faults=3, max_faults=1)
    with pytest.raises(ValueError, match="min_replies <= max_replies"):
        fault_plans(min_replies=2, max_replies=1)


def test_the_simplest_plan_is_one_plain_reply_and_no_fault() -> None:
    assert minimal(fault_plans(), lambda p: True) == FaultPlan(replies=(Reply.text("0"),))


def test_shrinks_to_the_fewest_calls_and_the_simplest_fault() -> None:
    plan = minimal(fault_plans(max_faults=5, max_replies=3), lambda p: p.fault_count >= 2)
    assert plan == FaultPlan(faults=(Fault.http(500), Fault.http(500)), replies=(Reply.text("0"),))


def test_shrinks_to_the_earliest_cut_that_fails() -> None:
    def late_cut(plan: FaultPlan) -> bool:
        return any(f is not None and f.kind == "cut" and f.after_events >= 3 for f in plan.faults)  # type: ignore[operator]

    assert minimal(fault_plans(), late_cut) == FaultPlan(
        faults=(Fault.cut(after_events=3),), replies=(Reply.text("0"),)
    )


def test_shrinks_to_the_simplest_reply_that_fails() -> None:
    def with_a_tool_call(plan: FaultPlan) -> bool:
        return any(r.tool_calls for r in plan.replies)

    assert minimal(fault_plans(replies()), with_a_tool_call) == FaultPlan(
        replies=(Reply.tool_call("a"),)
    )


# --- applying a plan: to a fake model, to a cassette ------------------------------------------


def test_apply_scripts_a_fake_model_and_the_agent_sees_each_fault(
    scripted_model: FakeModel,
) -> None:
    plan = FaultPlan(
        faults=(Fault.http(529), Fault.cut(after_events=4), Fault.error_event(after_events=5)),
        replies=(Reply.text("one two three"),),
    )
    assert plan.apply(scripted_model) is scripted_model
    client = anthropic.Anthropic(api_key="test", max_retries=0)
    assert _agent.answer(client, "count") == "one two three"
    assert [c.outcome for c in scripted_model.log] == [
        "http_error",
        "cut",
        "error_event",
        "completed",
    ]


QUESTION = {
    "model": "claude-sonnet-4-6",
    "max_tokens": 256,
    "stream": True,
    "messages": [{"role": "user", "content": "count"}],
}


@pytest.fixture
def recorded(request: pytest.FixtureRequest) -> Iterator[None]:
    """The test's cassette, recorded (by hand) with one streamed answer."""
    test = Path(request.path)
    path = test.parent / "cassettes" / test.stem / f"{request.node.name}.yaml"
    _cassettes.write(path, _cassettes.anthropic_stream(QUESTION, Reply.text("one two")))
    yield
    path.unlink()
    for folder in (path.parent, path.parent.parent):
        with contextlib.suppress(OSError):  # not empty: another test's cassette is there
            folder.rmdir()


def test_apply_injects_the_faults_into_a_replayed_cassette(
    recorded: None, agentreplay: AgentReplay
) -> None:
    plan = FaultPlan(
        faults=(Fault.http(429), Fault.cut(after_events=3), Fault.timeout()),
        replies=(Reply.text("ignored: the cassette answers"),),
    )
    assert plan.apply(agentreplay) is agentreplay
    client = anthropic.Anthropic(api_key="test", max_retries=0)
    assert _agent.answer(client, "count") == "one two"
    assert [c.outcome for c in agentreplay.calls] == ["http_error", "cut", "timeout", "completed"]
    assert agentreplay.unplayed == []


def test_apply_refuses_anything_else() -> None:
    with pytest.raises(TypeError, match="not to int"):
        FaultPlan().apply(3)


@settings(max_examples=25, derandomize=True, database=None, deadline=None)
@given(
    plan=fault_plans(faults=faults(statuses=_agent.RETRYABLE_STATUSES), max_faults=3),
    provider=st.sampled_from(["anthropic"]),
)
def test_every_generated_plan_plays_as_planned_on_a_fake(plan: FaultPlan, provider: str) -> None:
    with plan.apply(FakeModel(check_unused=False)) as fake:
        client = anthropic.Anthropic(api_key="test", max_retries=0)
        _agent.answer(client, "hi")
    expected = ["completed" if f is None or f.kind == "empty" else f.kind for f in plan.faults]
    outcomes = [c.outcome.replace("http_error", "http") for c in fake.log]
    assert outcomes[: len(expected)] == expected
    assert outcomes[len(expected) :] == ["completed"]

"""fault_plans() with a fixed conversation shape — a tool call, then text — under
varying faults, on a real pydantic-ai agent whose tool validates its arguments."""

from __future__ import annotations

from typing import Annotated, Any

import anthropic
import pydantic
import pytest
from hypothesis import Phase, find, given, settings
from pydantic_ai import Agent, Tool
from pydantic_ai.models.anthropic import AnthropicModel
from pydantic_ai.providers.anthropic import AnthropicProvider

from pytest_agentreplay import FakeModel, Reply
from pytest_agentreplay.strategies import FaultPlan, fault_plans, faults, replies
from tests.strategies._minimal import minimal

CI = settings(max_examples=25, derandomize=True, database=None, deadline=None)
ANSWER = Reply.text("Sunny all week.")


def weather(city: str, days: Annotated[int, pydantic.Field(ge=1, le=7)] = 1) -> str:
    """The forecast for a city."""
    return f"sunny in {city} for {days} days"


TOOLS = [Tool(weather)]
TOOL_THEN_TEXT = [
    replies(tools=TOOLS, min_tool_calls=1, max_tool_calls=1, thinking=False, stop=False),
    ANSWER,
]
# What the SDK retries by itself (retry-after 0.01 s keeps its backoff short), at most
# as many as its max_retries: every plan must end in the answer.
SDK_RETRIES = 3
PLANS = fault_plans(
    TOOL_THEN_TEXT,
    faults=faults(kinds=["http"], statuses=(529, 500, 429), retry_after=(0.01,)),
    max_faults=SDK_RETRIES,
)


def run_agent(
    plan: FaultPlan, *, sdk_retries: int = SDK_RETRIES
) -> tuple[str, list[dict[str, Any]], FakeModel]:
    """One pydantic-ai run against a fresh fake scripted with ``plan``: its output,
    the arguments the tool ran with, and the fake."""
    ran: list[dict[str, Any]] = []

    def tool(city: str, days: Annotated[int, pydantic.Field(ge=1, le=7)] = 1) -> str:
        """The forecast for a city."""
        ran.append({"city": city, "days": days})
        return weather(city, days)

    with plan.apply(FakeModel(check_unused=False)) as fake:
        client = anthropic.AsyncAnthropic(api_key="test", max_retries=sdk_retries)
        provider = AnthropicProvider(anthropic_client=client)
        model = AnthropicModel("claude-sonnet-4-6", provider=provider)
        output = Agent(model, tools=[Tool(tool, name="weather")]).run_sync("Weather?").output
    return output, ran, fake


@CI
@given(plan=PLANS)
def test_the_shape_holds_while_the_faults_vary(plan: FaultPlan) -> None:
    first, second = plan.replies
    assert [c.name for c in first.tool_calls] == ["weather"] and second == ANSWER
    assert plan.fault_count <= SDK_RETRIES


@CI
@given(plan=PLANS)
def test_the_agent_runs_the_generated_tool_call_under_every_plan(plan: FaultPlan) -> None:
    output, ran, fake = run_agent(plan)

    assert output == ANSWER.text_content
    [call] = plan.replies[0].tool_calls
    assert ran == [{"days": 1, **call.args}]  # valid as drawn: nothing to coerce or retry
    assert len(fake.log) == plan.calls


def test_faults_are_drawn_around_both_replies() -> None:
    plan = minimal(PLANS, lambda p: p.faults[:1] != (None,) and None in p.faults)
    assert plan.faults[0] is not None and plan.calls == plan.fault_count + 2


def test_without_the_tools_schema_the_agent_rejects_the_arguments() -> None:
    """The control: arguments drawn without the schema fail pydantic-ai's validation
    (it asks the model again, and the script has no reply for that)."""
    untyped = fault_plans(
        [replies(min_tool_calls=1, max_tool_calls=1, thinking=False, stop=False), ANSWER],
        max_faults=0,
    )

    def breaks(plan: FaultPlan) -> bool:
        try:
            output, ran, _ = run_agent(plan, sdk_retries=0)
        except Exception:  # any way the run breaks counts
            return True
        return output != ANSWER.text_content or len(ran) != 1

    quick = settings(database=None, max_examples=20, phases=[Phase.generate])
    assert breaks(find(untyped, breaks, settings=quick))


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        pytest.param({"min_replies": 1}, ValueError, "min_replies=1 contradicts", id="min"),
        pytest.param({"max_replies": 3}, ValueError, "max_replies=3 contradicts", id="max"),
    ],
)
def test_a_fixed_shape_refuses_contradicting_bounds(
    kwargs: dict[str, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        fault_plans(TOOL_THEN_TEXT, **kwargs)


@pytest.mark.parametrize(
    ("shape", "message"),
    [
        pytest.param(ANSWER, "got Reply", id="one-reply"),
        pytest.param("Sunny", "got str", id="a-string"),
        pytest.param([ANSWER, "Sunny"], r"replies\[1\] must be a Reply", id="a-string-item"),
    ],
)
def test_a_shape_must_be_a_list_of_replies(shape: Any, message: str) -> None:
    with pytest.raises(TypeError, match=message):
        fault_plans(shape)


def test_an_empty_shape_is_a_run_of_faults() -> None:
    plan = minimal(fault_plans([], min_faults=1))
    assert plan.replies == () and plan.fault_count == 1

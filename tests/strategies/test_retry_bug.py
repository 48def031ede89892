"""Acceptance: hypothesis over ``fault_plans()`` finds a seeded retry bug in a small
agent loop (the real anthropic SDK against a scripted fake) and shrinks it to the
minimal plan."""

from __future__ import annotations

from collections.abc import Callable

import anthropic
import pytest
from hypothesis import given, settings

from pytest_agentreplay import FakeModel, Fault, Reply
from pytest_agentreplay.strategies import FaultPlan, fault_plans, faults
from tests.strategies import _agent

Agent = Callable[[anthropic.Anthropic, str], str]

PLANS = fault_plans(
    faults=faults(statuses=_agent.RETRYABLE_STATUSES), max_faults=_agent.MAX_ATTEMPTS - 1
)
CI = settings(max_examples=60, derandomize=True, database=None, deadline=None)


def run(agent: Agent, plan: FaultPlan) -> tuple[str, FakeModel]:
    """One agent turn against a fresh fake scripted with ``plan``. (A fresh fake per
    example: a function-scoped fixture would carry one example's script and log
    into the next.) The client is built inside the fake's scope, where it costs no
    SSL context."""
    with plan.apply(FakeModel(check_unused=False)) as fake:
        client = anthropic.Anthropic(api_key="test", max_retries=0)
        return agent(client, "Why is the sky blue?"), fake


@CI
@given(plan=PLANS)
def test_the_correct_agent_survives_every_plan(plan: FaultPlan) -> None:
    text, fake = run(_agent.answer, plan)
    assert text == plan.replies[0].text_content
    assert len(fake.log) == plan.calls
    assert fake.remaining == []


def test_hypothesis_finds_the_seeded_retry_bug_and_shrinks_it() -> None:
    failing: list[FaultPlan] = []

    @CI
    @given(plan=PLANS)
    def the_answer_is_the_reply(plan: FaultPlan) -> None:
        text, _ = run(_agent.buggy_answer, plan)
        if text != plan.replies[0].text_content:
            failing.append(plan)
        assert text == plan.replies[0].text_content

    with pytest.raises(AssertionError, match="assert '00' == '0'"):
        the_answer_is_the_reply()
    # Hypothesis replays the minimal failing example last: one call cut right after
    # the first text delta (message_start, content_block_start, ping, one delta),
    # of the simplest reply.
    assert failing[-1] == FaultPlan(faults=(Fault.cut(after_events=4),), replies=(Reply.text("0"),))
    assert repr(failing[-1]) == (
        "FaultPlan(faults=(Fault.cut(after_events=4),), replies=(Reply.text('0'),))"
    )

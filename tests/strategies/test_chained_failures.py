"""An agent that chains its exceptions: the profiles report its one bug once, shrunk.

Issue 20: each kind of fault reaches the property through a different exception
chain (``AgentError`` from an ``APIStatusError``, from an ``APIConnectionError``...),
and hypothesis told them apart — "8 distinct failures", each shrunk in turn. The
shipped profiles set ``report_multiple_bugs=False`` (bench/chained_failures.py
measures the difference).
"""

from __future__ import annotations

import anthropic
import pytest
from hypothesis import given, settings

from pytest_agentreplay import FakeModel, Fault, Reply
from pytest_agentreplay.strategies import (
    CI_PROFILE,
    DEV_PROFILE,
    FaultPlan,
    fault_plans,
    faults,
)


class AgentError(Exception):
    """What the agent raises, whatever went wrong below it."""


def agent_that_never_retries(client: anthropic.Anthropic) -> str:
    """The bug: a transient failure ends the turn (wrapped, as agents do)."""
    try:
        with client.messages.stream(
            model="m", max_tokens=64, messages=[{"role": "user", "content": "hi"}]
        ) as stream:
            text = "".join(stream.text_stream)
    except anthropic.APIStatusError as exc:
        raise AgentError(f"the provider said {exc.status_code}") from exc
    except anthropic.APIConnectionError as exc:
        raise AgentError("the connection failed") from exc
    except Exception as exc:
        raise AgentError("the stream broke") from exc
    if not text:
        raise AgentError("empty answer")
    return text


@pytest.mark.parametrize("profile", [CI_PROFILE, DEV_PROFILE])
def test_the_profiles_report_one_failure(profile: str) -> None:
    assert settings.get_profile(profile).report_multiple_bugs is False


def test_one_bug_behind_many_chains_is_reported_once_and_shrunk() -> None:
    failing: list[FaultPlan] = []

    @settings(settings.get_profile(CI_PROFILE), max_examples=30)
    @given(plan=fault_plans(faults=faults(statuses=(500, 529, 503, 429)), max_faults=2))
    def survives_transient_faults(plan: FaultPlan) -> None:
        with plan.apply(FakeModel(check_unused=False)):
            client = anthropic.Anthropic(api_key="test", max_retries=0)
            try:
                agent_that_never_retries(client)
            except AgentError:
                failing.append(plan)
                raise

    # One AgentError, not an ExceptionGroup of one per chain.
    with pytest.raises(AgentError, match="the provider said 500") as failure:
        survives_transient_faults()
    assert isinstance(failure.value.__cause__, anthropic.InternalServerError)
    assert failing[-1] == FaultPlan(faults=(Fault.http(500),), replies=(Reply.text("0"),))

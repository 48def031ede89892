"""Item 23: faults injected into replay are deterministic, and each SDK raises the
exception its documentation names for that failure.

Every replay-injectable fault, for each provider's real recorded stream: the same
fault injected into two calls fails both identically (exception type, message, the
events the SDK surfaced before it), and the exception is the documented one. (The
finer points — exactly k events, retries getting the recording, retry-after — are
in tests/cassettes/test_replay_faults.py, whose helpers this reuses.)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anthropic
import openai
import pytest

from pytest_agentreplay import Fault
from pytest_agentreplay.cassettes.handle import AgentReplay
from tests.cassettes.test_replay_faults import _each_provider, _read
from tests.sdk_raises import cut_error, timeout_error

pytestmark = pytest.mark.sdk

FAULTS: dict[str, Callable[[], Fault]] = {
    "http-500": lambda: Fault.http(500, "boom"),
    "http-429": lambda: Fault.http(429, "slow down", retry_after=3),
    "cut": lambda: Fault.cut(after_events=4),
    "error-event": lambda: Fault.error_event("overloaded_error", "Overloaded", after_events=4),
    "timeout": Fault.timeout,
    "timeout-mid-stream": lambda: Fault.timeout(after_events=4),
}
# What each SDK documents for each failure (its README's error handling section).
DOCUMENTED: dict[str, dict[str, type[BaseException]]] = {
    "anthropic": {
        "http-500": anthropic.InternalServerError,
        "http-429": anthropic.RateLimitError,
        "cut": cut_error("anthropic")[0],  # let through unwrapped before 2.17
        "error-event": anthropic.APIStatusError,
        "timeout": anthropic.APITimeoutError,
        "timeout-mid-stream": timeout_error("anthropic")[0],
    },
    "openai": {
        "http-500": openai.InternalServerError,
        "http-429": openai.RateLimitError,
        "cut": openai.APIConnectionError,
        "error-event": openai.APIError,
        "timeout": openai.APITimeoutError,
        "timeout-mid-stream": openai.APITimeoutError,
    },
}


def _outcome(provider: str) -> tuple[type[BaseException], str, list[Any]]:
    seen: list[Any] = []
    with pytest.raises(BaseException) as info:  # noqa: PT011 - the type is checked below
        _read(provider, seen)
    return type(info.value), str(info.value), seen


@pytest.mark.parametrize("fault", sorted(FAULTS))
@pytest.mark.parametrize("provider", _each_provider())
def test_an_injected_fault_fails_the_same_way_twice_with_the_documented_exception(
    provider: str, fault: str, agentreplay: AgentReplay
) -> None:
    agentreplay.inject(FAULTS[fault](), at_call=0)
    agentreplay.inject(FAULTS[fault](), at_call=1)
    first, second = _outcome(provider), _outcome(provider)
    assert first == second, "the same fault failed differently"
    family = "anthropic" if provider == "anthropic" else "openai"
    assert issubclass(first[0], DOCUMENTED[family][fault]), first[:2]
    assert [c.outcome for c in agentreplay.calls] == [agentreplay.calls[0].outcome] * 2

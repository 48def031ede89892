"""Faults injected into cassette playback: each SDK raises its documented exception.

``agentreplay.inject(fault, at_call=n)`` fails the n-th replayed call in place of
its recorded ending. The recordings here are real provider streams from the
corpus (one per wire format), replayed positionally. Every fault is checked
against what the same SDK does with the unfaulted replay: the events seen before
the fault are exactly the first ones of the recording, a repeat of the faulted
call fails identically (deterministic), and a retry of the failed call gets the
recording, as a retried call to the provider would.
"""

from __future__ import annotations

import json
from typing import Any

import anthropic
import openai
import pytest

from pytest_agentreplay import Fault
from pytest_agentreplay.cassettes.handle import AgentReplay
from pytest_agentreplay.cassettes.io import load
from tests import corpus, sdk
from tests.cassettes._corpus_drive import original
from tests.sdk_raises import raises_cut, raises_timeout

pytestmark = pytest.mark.sdk

STREAMS = {
    "anthropic": corpus.CORPUS
    / "anthropic/pydantic-ai__test_anthropic_model_thinking_part_stream.yaml",
    "openai_chat": corpus.CORPUS / "openai_chat/crewai__test_usage_info_streaming_with_call.yaml",
    "openai_responses": corpus.CORPUS
    / "openai_responses/crewai__test_openai_responses_api_streaming.yaml",
}
JSON_BODY = corpus.CORPUS / "anthropic/pydantic-ai__test_multiple_parallel_tool_calls.yaml"
CUT_AT = {"anthropic": 10, "openai_chat": 5, "openai_responses": 6}


def _replay(path: Any) -> pytest.MarkDecorator:
    return pytest.mark.agentreplay(cassette=str(path), match_on=["method", "path"])


def _each_provider() -> list[Any]:
    return [pytest.param(p, marks=_replay(STREAMS[p]), id=p) for p in sdk.PROVIDERS]


def _module(provider: str) -> Any:
    return anthropic if provider == "anthropic" else openai


def _raw_stream(provider: str, client: Any) -> Any:
    """The SDK's own event stream (one object per event it surfaces)."""
    if provider == "anthropic":
        return client.messages.create(
            model="m", max_tokens=99, messages=[{"role": "user", "content": "Hi"}], stream=True
        )
    if provider == "openai_chat":
        return client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "Hi"}], stream=True
        )
    return client.responses.create(model="m", input="Hi", stream=True)


def _read(provider: str, seen: list[Any], *, max_retries: int = 0, **kwargs: Any) -> None:
    """Read the whole stream into ``seen`` (kept when it raises)."""
    client = sdk.client(provider, max_retries=max_retries, **kwargs)
    for event in _raw_stream(provider, client):
        seen.append(event.model_dump(mode="json"))


def _surfaced(provider: str, k: int) -> int:
    """How many SDK events the first ``k`` recorded events make (the SDKs skip
    Anthropic's ``ping`` and stop at OpenAI's ``[DONE]``)."""
    events = load(STREAMS[provider]).interactions[0].response.events or []
    return sum(e.event != "ping" and not e.data.startswith("[DONE]") for e in events[:k])


def _full(provider: str) -> list[Any]:
    """The events the SDK makes of the original recorded bytes (independent reader)."""
    [item] = corpus.load(STREAMS[provider])
    seen: list[Any] = []
    _read(provider, seen, http_client=original(item))
    return seen


@pytest.mark.parametrize("provider", _each_provider())
def test_cut_after_k_events_raises_the_connection_error_after_exactly_k_events(
    provider: str, agentreplay: AgentReplay
) -> None:
    k = CUT_AT[provider]
    agentreplay.inject(Fault.cut(after_events=k), at_call=0)
    agentreplay.inject(Fault.cut(after_events=k), at_call=1)
    runs: list[list[Any]] = [[], []]
    for seen in runs:
        with raises_cut(provider, match="peer closed connection"):
            _read(provider, seen)
    full = _full(provider)
    assert runs[0] == runs[1] == full[: _surfaced(provider, k)]
    assert 0 < len(runs[0]) < len(full)
    retried: list[Any] = []
    _read(provider, retried)  # the retry of a failed call gets the recording
    assert retried == full
    calls = agentreplay.calls
    assert [(c.outcome, c.events_sent) for c in calls[:2]] == [("cut", k), ("cut", k)]
    assert calls[2].outcome == "completed"
    assert {c.interaction for c in calls} == {0}
    assert agentreplay.unplayed == []


@pytest.mark.parametrize("provider", _each_provider())
def test_in_stream_error_after_k_events_raises_the_sdk_api_error(
    provider: str, agentreplay: AgentReplay
) -> None:
    k = CUT_AT[provider]
    fault = Fault.error_event("overloaded_error", "Overloaded, try later", after_events=k)
    agentreplay.inject(fault, at_call=0)
    seen: list[Any] = []
    module = _module(provider)
    expected = module.APIStatusError if provider == "anthropic" else module.APIError
    with pytest.raises(expected, match="Overloaded, try later") as info:
        _read(provider, seen)
    assert seen == _full(provider)[: _surfaced(provider, k)]
    body = info.value.body
    error = body.get("error", body)
    assert error["message"] == "Overloaded, try later"
    assert [(c.outcome, c.status) for c in agentreplay.calls] == [("error_event", 200)]


@pytest.mark.parametrize("provider", _each_provider())
def test_http_429_with_retry_after_raises_rate_limit_error_then_the_retry_replays(
    provider: str, agentreplay: AgentReplay
) -> None:
    agentreplay.inject(Fault.http(429, "slow down", retry_after=7), at_call=0)
    with pytest.raises(_module(provider).RateLimitError, match="slow down") as info:
        _read(provider, [])
    assert info.value.status_code == 429
    assert info.value.response.headers["retry-after"] == "7"
    # With retries on, the SDK waits as told (retry-after 0.01 s) and the retried call
    # is answered by the recording.
    agentreplay.inject(Fault.http(429, "slow down", retry_after=0.01), at_call=1)
    seen: list[Any] = []
    _read(provider, seen, max_retries=1)
    assert seen == _full(provider)
    assert [(c.outcome, c.status) for c in agentreplay.calls] == [
        ("http_error", 429),
        ("http_error", 429),
        ("completed", 200),
    ]


@pytest.mark.parametrize("provider", _each_provider())
def test_timeout_before_the_response_and_mid_stream(
    provider: str, agentreplay: AgentReplay
) -> None:
    module = _module(provider)
    agentreplay.inject(Fault.timeout(), at_call=0)
    with pytest.raises(module.APITimeoutError):
        _read(provider, [])
    agentreplay.inject(Fault.timeout(after_events=3), at_call=1)
    seen: list[Any] = []
    with raises_timeout(provider):
        _read(provider, seen)
    assert seen == _full(provider)[: _surfaced(provider, 3)]
    assert [(c.outcome, c.status, c.events_sent) for c in agentreplay.calls[:2]] == [
        ("timeout", None, 0),
        ("timeout", 200, 3),
    ]


@pytest.mark.parametrize("provider", _each_provider())
def test_empty_reply_is_a_valid_empty_message(provider: str, agentreplay: AgentReplay) -> None:
    agentreplay.inject(Fault.empty(), at_call=0)
    assert sdk.call(provider, stream=True).text == ""
    assert sdk.call(provider, stream=True).text != ""  # the retry gets the recording


@_replay(JSON_BODY)
def test_faults_on_a_recorded_json_body(agentreplay: AgentReplay) -> None:
    """A JSON body has no events: an in-stream error becomes the provider's HTTP error
    (as a fake model's), a timeout strikes before the response."""
    agentreplay.inject(Fault.error_event(), at_call=0)
    with pytest.raises(anthropic.OverloadedError) as info:
        sdk.call("anthropic", stream=False)
    assert info.value.status_code == 529
    agentreplay.inject(Fault.timeout(), at_call=1)
    with pytest.raises(anthropic.APITimeoutError):
        sdk.call("anthropic", stream=False)
    recorded = agentreplay.interactions[0].response.json_body
    message = sdk.client("anthropic").messages.create(
        model="m", max_tokens=9, messages=[{"role": "user", "content": "Hi"}]
    )
    assert message.model_dump(mode="json", exclude_none=True) == _without_nones(recorded)
    assert [(c.outcome, c.status) for c in agentreplay.calls] == [
        ("http_error", 529),
        ("timeout", None),
        ("completed", 200),
    ]


def _without_nones(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_nones(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_nones(v) for v in value]
    return value


@_replay(STREAMS["anthropic"])
def test_a_stall_cannot_be_injected_into_replay(agentreplay: AgentReplay) -> None:
    with pytest.raises(ValueError, match=r"Fault\.stall\(\) cannot be injected"):
        agentreplay.inject(Fault.stall(after_events=2), at_call=0)
    with pytest.raises(ValueError, match="at_call must be >= 0"):
        agentreplay.inject(Fault.cut(), at_call=-1)
    _read("anthropic", [])  # nothing was injected: the recording plays


def test_the_recordings_are_real_streams() -> None:
    for provider, path in STREAMS.items():
        [interaction] = load(path).interactions
        events = interaction.response.events or []
        assert len(events) > 2 * CUT_AT[provider], provider
        assert json.loads(events[-1].data if provider != "openai_chat" else events[-2].data)

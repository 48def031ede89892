"""Each fault surfaces in the real SDK as the SDK's own documented exception."""

from __future__ import annotations

import anthropic
import openai
import pytest

from pytest_agentreplay import FakeModel, Fault, Reply
from pytest_agentreplay.runlog import delivered_text
from tests import sdk
from tests.sdk_raises import raises_cut, raises_timeout

OPENAI = ("openai_chat", "openai_responses")


def _status_error(provider: str) -> type[Exception]:
    return anthropic.APIStatusError if provider == "anthropic" else openai.APIStatusError


@pytest.mark.parametrize("provider", sdk.PROVIDERS)
@pytest.mark.parametrize("stream", [False, True])
def test_429_with_retry_after_is_retried_by_the_sdk(
    provider: str, stream: bool, scripted_model: FakeModel
) -> None:
    scripted_model.script(Fault.http(429, "slow down", retry_after=0.01), Reply.text("ok now"))
    client = sdk.client(provider, max_retries=1)
    assert sdk.call(provider, stream=stream, sdk=client).text == "ok now"
    assert [c.outcome for c in scripted_model.log] == ["http_error", "completed"]
    assert scripted_model.log[0].status == 429
    first, second = scripted_model.calls
    # The retry resends the identical body; only the retry counter header moves.
    assert first.content == second.content
    assert (
        first.headers["x-stainless-retry-count"],
        second.headers["x-stainless-retry-count"],
    ) == ("0", "1")


@pytest.mark.parametrize("provider", sdk.PROVIDERS)
def test_429_surfaces_retry_after_and_message(provider: str, scripted_model: FakeModel) -> None:
    scripted_model.script(Fault.http(429, "quota exceeded", retry_after=5))
    module = anthropic if provider == "anthropic" else openai
    with pytest.raises(module.RateLimitError) as info:
        sdk.call(provider, stream=False)
    assert info.value.status_code == 429
    assert info.value.response.headers["retry-after"] == "5"
    assert "quota exceeded" in str(info.value)


@pytest.mark.parametrize("provider", sdk.PROVIDERS)
@pytest.mark.parametrize(
    ("status", "name"),
    [
        (401, "AuthenticationError"),
        (403, "PermissionDeniedError"),
        (404, "NotFoundError"),
        (500, "InternalServerError"),
    ],
)
def test_http_errors_map_to_sdk_classes(
    provider: str, status: int, name: str, scripted_model: FakeModel
) -> None:
    scripted_model.script(Fault.http(status))
    module = anthropic if provider == "anthropic" else openai
    with pytest.raises(getattr(module, name)) as info:
        sdk.call(provider, stream=True)
    assert info.value.status_code == status
    assert scripted_model.log[0].outcome == "http_error"


def test_anthropic_400_model_not_found_and_529_overloaded(scripted_model: FakeModel) -> None:
    scripted_model.script(
        Fault.http(400, "model: claude-nope", error_type="invalid_request_error"),
        Fault.http(529),
    )
    with pytest.raises(anthropic.BadRequestError, match="claude-nope"):
        sdk.call("anthropic", stream=False)
    with pytest.raises(anthropic.OverloadedError) as info:
        sdk.call("anthropic", stream=True)
    assert info.value.body["error"]["type"] == "overloaded_error"  # type: ignore[index]


def test_openai_model_not_found(scripted_model: FakeModel) -> None:
    scripted_model.script(
        Fault.http(404, "The model `gpt-nope` does not exist", error_type="model_not_found")
    )
    with pytest.raises(openai.NotFoundError) as info:
        sdk.call("openai_chat", stream=False)
    assert info.value.code == "model_not_found" or "gpt-nope" in str(info.value)


def test_anthropic_in_stream_overloaded_error_after_partial_text(scripted_model: FakeModel) -> None:
    scripted_model.script(
        Reply.text("one two three four five six", fault=Fault.error_event(after_events=5))
    )
    seen = sdk.Seen()
    with pytest.raises(anthropic.APIStatusError) as info:
        sdk.call("anthropic", stream=True, seen=seen)
    assert info.value.body["error"]["type"] == "overloaded_error"  # type: ignore[index]
    assert seen.deltas, "text before the error must reach the consumer"
    [entry] = scripted_model.log
    assert entry.outcome == "error_event"
    assert entry.events_sent == 6  # five events, then the error event


@pytest.mark.parametrize("provider", OPENAI)
def test_openai_in_stream_error(provider: str, scripted_model: FakeModel) -> None:
    scripted_model.script(
        Reply.text(
            "alpha beta gamma delta epsilon",
            fault=Fault.error_event("server_error", "boom", after_events=3),
        )
    )
    seen = sdk.Seen()
    with pytest.raises(openai.APIError, match="boom"):
        sdk.call(provider, stream=True, seen=seen)
    assert scripted_model.log[0].outcome == "error_event"


@pytest.mark.parametrize("provider", sdk.PROVIDERS)
def test_cut_after_k_events_shows_partial_text_then_a_connection_error(
    provider: str, scripted_model: FakeModel
) -> None:
    scripted_model.script(
        Reply.text("w1 w2 w3 w4 w5 w6 w7 w8 w9 w10", fault=Fault.cut(after_events=6))
    )
    seen = sdk.Seen()
    with raises_cut(provider):
        sdk.call(provider, stream=True, seen=seen)
    assert seen.deltas and "".join(seen.deltas) != "w1 w2 w3 w4 w5 w6 w7 w8 w9 w10"
    [entry] = scripted_model.log
    assert (entry.outcome, entry.events_sent) == ("cut", 6)


@pytest.mark.parametrize("provider", sdk.PROVIDERS)
def test_read_timeout_before_the_response(provider: str, scripted_model: FakeModel) -> None:
    scripted_model.script(Fault.timeout())
    module = anthropic if provider == "anthropic" else openai
    with pytest.raises(module.APITimeoutError):
        sdk.call(provider, stream=False)
    assert scripted_model.log[0].outcome == "timeout"
    assert scripted_model.log[0].status is None


def test_read_timeout_mid_stream(scripted_model: FakeModel) -> None:
    scripted_model.script(Reply.text("a b c d e f", fault=Fault.timeout(after_events=4)))
    with raises_timeout("openai_chat"):
        sdk.call("openai_chat", stream=True)
    assert (scripted_model.log[0].outcome, scripted_model.log[0].events_sent) == ("timeout", 4)


@pytest.mark.parametrize("provider", sdk.PROVIDERS)
def test_empty_completion(provider: str, scripted_model: FakeModel) -> None:
    scripted_model.script(Fault.empty(), Fault.empty())
    assert sdk.call(provider, stream=True).text == ""
    assert sdk.call(provider, stream=False).text == ""
    assert [c.outcome for c in scripted_model.log] == ["completed", "completed"]


def test_retry_after_a_cut_resends_identical_input(scripted_model: FakeModel) -> None:
    scripted_model.script(
        Reply.text("partial answer here", fault=Fault.cut(after_events=4)),
        Reply.text("full answer"),
    )
    with raises_cut("anthropic"):
        sdk.call("anthropic", stream=True, text="same question")
    assert sdk.call("anthropic", stream=True, text="same question").text == "full answer"
    first, second = scripted_model.requests
    assert first.raw == second.raw


def test_failing_model_fails_every_call(failing_model: FakeModel) -> None:
    for provider in sdk.PROVIDERS:
        with pytest.raises(_status_error(provider)) as info:
            sdk.call(provider, stream=True)
        assert info.value.status_code == 500  # type: ignore[attr-defined]
    failing_model.fail_with(Fault.http(401, "token invalidated"))
    with pytest.raises(anthropic.AuthenticationError, match="token invalidated"):
        sdk.call("anthropic", stream=False)
    assert [c.status for c in failing_model.log] == [500, 500, 500, 401]


def test_stall_holds_until_release(scripted_model: FakeModel) -> None:
    import threading

    scripted_model.script(Reply.text("a b c d e", fault=Fault.stall(after_events=3)))
    result: list[str] = []
    worker = threading.Thread(
        target=lambda: result.append(sdk.call("openai_chat", stream=True).text)
    )
    worker.start()
    assert scripted_model.wait_blocked(5)
    worker.join(0.2)
    assert worker.is_alive(), "a stalled stream must really stall"
    scripted_model.release()
    worker.join(5)
    assert result == ["a b c d e"]
    assert scripted_model.log[0].outcome == "completed"


@pytest.mark.parametrize("provider", sdk.PROVIDERS)
def test_error_event_on_a_non_streamed_call_is_the_providers_http_error(
    provider: str, scripted_model: FakeModel
) -> None:
    scripted_model.script(Reply.text("hi", fault=Fault.error_event()))
    with pytest.raises(_status_error(provider)) as info:
        sdk.call(provider, stream=False)
    status = 529 if provider == "anthropic" else 500
    assert info.value.status_code == status  # type: ignore[attr-defined]
    [entry] = scripted_model.log
    assert (entry.outcome, entry.status, entry.events_sent) == ("http_error", status, 0)


def test_an_http_error_on_a_stream_counts_no_events(scripted_model: FakeModel) -> None:
    scripted_model.script(Fault.http(503))
    with pytest.raises(anthropic.InternalServerError):
        sdk.call("anthropic", stream=True)
    assert (scripted_model.log[0].status, scripted_model.log[0].events_sent) == (503, 0)


@pytest.mark.parametrize("provider", ["anthropic", "openai_chat"])
def test_truncate_ends_the_stream_cleanly_without_the_providers_closing_events(
    provider: str, scripted_model: FakeModel
) -> None:
    words = "w1 w2 w3 w4 w5 w6 w7 w8 w9 w10"
    scripted_model.script(
        Reply.text(words, fault=Fault.truncate(after_events=6)),
        Reply.text(words, fault=Fault.truncate(after_events=6)),
    )
    seen = sdk.call(provider, stream=True)  # no exception: the body ended normally
    assert seen.deltas and words.startswith(seen.text) and seen.text != words
    assert seen.stop is None  # the provider never said it was done
    assert sdk.call(provider, stream=False).text == words  # JSON bodies are served whole
    streamed, whole = scripted_model.log
    assert (streamed.outcome, streamed.events_sent) == ("completed", 6)
    assert delivered_text(streamed) == seen.text
    assert delivered_text(whole) == words

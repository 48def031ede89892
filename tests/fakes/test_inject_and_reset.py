"""``FakeModel.inject(fault)`` fails the next call, streamed or not, and leaves its reply
for the retry; ``FakeModel.reset()`` starts a long-lived fake over (issue 30: the
control API of ``agentreplay serve --fake`` says the same words over HTTP)."""

from __future__ import annotations

import threading

import openai
import pytest

from pytest_agentreplay import FakeModel, Fault, Reply

CHAT = {"model": "gpt-test", "messages": [{"role": "user", "content": "hi"}]}


def _client() -> openai.OpenAI:
    return openai.OpenAI(api_key="test", max_retries=0)


def test_inject_cuts_the_next_stream_and_the_retry_gets_the_reply_whole() -> None:
    with FakeModel(Reply.text("one two three four five")) as fake:
        fake.inject(Fault.cut(after_events=2))
        seen: list[str] = []

        def read() -> None:
            for chunk in _client().chat.completions.create(**CHAT, stream=True):
                seen.append(chunk.choices[0].delta.content or "" if chunk.choices else "")

        with pytest.raises(openai.APIConnectionError):
            read()
        again = _client().chat.completions.create(**CHAT)

    assert "".join(seen) != "" and "".join(seen) != "one two three four five"
    assert again.choices[0].message.content == "one two three four five"
    assert [(c.outcome, c.events_sent) for c in fake.log] == [("cut", 2), ("completed", 0)]


def test_inject_fails_a_call_that_does_not_stream_too() -> None:
    with FakeModel("after the 429") as fake:
        fake.inject(Fault.http(429, retry_after=2))
        with pytest.raises(openai.RateLimitError) as limited:
            _client().chat.completions.create(**CHAT)
        assert _client().chat.completions.create(**CHAT).choices[0].message.content == (
            "after the 429"
        )
    assert limited.value.response.headers["retry-after"] == "2"


def test_a_fault_injected_for_a_call_that_never_came_fails_the_block() -> None:
    fake = FakeModel()
    with (
        pytest.raises(AssertionError, match=r"1 fault queued by inject\(\) struck no call"),
        fake,
    ):
        fake.inject(Fault.http(500))


def test_reset_forgets_the_script_the_faults_the_holds_and_the_log() -> None:
    with FakeModel("first", "spare", check_unused=True) as fake:
        assert _client().chat.completions.create(**CHAT).choices[0].message.content == "first"
        fake.block()
        held: list[BaseException] = []

        def ask() -> None:
            try:
                _client().chat.completions.create(**CHAT)
            except openai.APIConnectionError as exc:
                held.append(exc)

        worker = threading.Thread(target=ask)
        worker.start()
        assert fake.wait_blocked(timeout=30)
        fake.inject(Fault.http(500)).interrupt().fail_with(Fault.http(401))

        fake.reset()
        worker.join(timeout=30)
        fake.script("after the reset")
        answer = _client().chat.completions.create(**CHAT).choices[0].message.content

    # The spare reply, the injected fault, the interrupt and fail_with are gone (the
    # block's check at its end finds nothing unused); the held call was dropped.
    assert answer == "after the reset"
    assert len(held) == 1
    # The call held at the reset is forgotten, not logged over the new call's number.
    assert [(c.index, c.outcome) for c in fake.log] == [(0, "completed")]
    assert len(fake.calls) == len(fake.requests) == 1

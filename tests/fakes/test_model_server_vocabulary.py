"""``model_server`` speaks the fake's scripting vocabulary (issue 30, item 6):
``model_server.script(...)`` raised ``AttributeError: 'FakeServer' object has no
attribute 'script'``. The server passes the scripting calls on to its fake; any other
attribute of the fake is named in the error as ``.model.NAME``."""

from __future__ import annotations

import threading

import openai
import pytest

from pytest_agentreplay import FakeModel, Fault, Reply
from pytest_agentreplay.fakes import FakeServer
from tests.children import run_python

CHILD = """
    import json, openai
    client = openai.OpenAI(max_retries=0)
    texts = []
    for _ in range(2):
        try:
            chunks = client.chat.completions.create(
                model="gpt-test", messages=[{"role": "user", "content": "hi"}], stream=True)
            texts.append("".join(c.choices[0].delta.content or "" for c in chunks if c.choices))
        except openai.APIConnectionError as exc:
            texts.append(type(exc).__name__)
    try:
        client.chat.completions.create(model="gpt-test", messages=[])
    except openai.RateLimitError as exc:
        texts.append(exc.status_code)
    print(json.dumps(texts))
"""


def test_the_server_scripts_interrupts_and_fails_its_fake(model_server: FakeServer) -> None:
    chained = model_server.script(Reply.text("Rain in Leeds."), Fault.http(429)).interrupt(
        after_events=2
    )

    seen = run_python(CHILD, model_server.env)

    assert chained is model_server
    assert seen == ["APIConnectionError", "Rain in Leeds.", 429]
    assert [c.outcome for c in model_server.log] == ["cut", "completed", "http_error"]
    assert model_server.log == model_server.model.log
    assert model_server.calls == model_server.model.calls
    assert model_server.requests == model_server.model.requests
    assert model_server.last_request.stream is False


def test_the_server_holds_and_releases(model_server: FakeServer) -> None:
    model_server.script("Held, then sent.").block()
    client = openai.OpenAI(base_url=model_server.url + "/v1", api_key="test", max_retries=0)
    answers: list[str | None] = []
    worker = threading.Thread(
        target=lambda: answers.append(
            client.chat.completions.create(model="gpt-test", messages=[]).choices[0].message.content
        )
    )
    worker.start()
    assert model_server.wait_blocked(timeout=30)
    assert answers == []
    model_server.release()
    worker.join(timeout=30)
    client.close()
    assert answers == ["Held, then sent."]


def test_fail_with_inject_and_reset_on_the_server() -> None:
    with FakeModel().listen() as server:
        client = openai.OpenAI(base_url=server.url + "/v1", api_key="test", max_retries=0)
        server.fail_with(Fault.http(401))
        with pytest.raises(openai.AuthenticationError):
            client.chat.completions.create(model="gpt-test", messages=[])
        assert [c.status for c in server.log] == [401]
        assert server.reset() is server
        assert server.log == []
        server.script("After the 503.").inject(Fault.http(503))
        with pytest.raises(openai.InternalServerError):
            client.chat.completions.create(model="gpt-test", messages=[])
        answer = client.chat.completions.create(model="gpt-test", messages=[])
        client.close()
    assert answer.choices[0].message.content == "After the 503."
    assert [c.status for c in server.log] == [503, 200]


def test_another_attribute_of_the_fake_is_named_as_model_dot_name() -> None:
    with FakeModel(check_unused=False).listen() as server:
        with pytest.raises(AttributeError, match=r"use \.model\.remaining") as named:
            server.remaining  # noqa: B018 - the attribute access is what is tested
        with pytest.raises(AttributeError) as unknown:
            server.no_such_thing  # type: ignore[attr-defined]  # noqa: B018
    assert named.value.name == "remaining"
    assert ".model." not in str(unknown.value)
    assert "no attribute 'no_such_thing'" in str(unknown.value)

"""``agentreplay serve`` as a controllable fake (issue 30): the control API under
``/_agentreplay/``, its checks of what it is sent and of who sends it, the log it
keeps (scrubbed, naming the client library), ``--repeat`` and ``reset`` for
cassettes, and the options that do not go together.

The fake's control API is served in-process on a real port (the same
``ModelServer`` the command starts) and driven by the real SDKs and httpx2; the
cassette options run the command as a process.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import httpx2
import openai
import pytest

from pytest_agentreplay import FakeModel, Reply
from pytest_agentreplay.cassettes import from_replies
from pytest_agentreplay.fakes.control import ControlAPI, Controlled
from pytest_agentreplay.transport.server import ModelServer
from tests.cli._helpers import run
from tests.cli.test_serve import SECRET, serve

ASKED = {
    "model": "claude-test-1",
    "max_tokens": 50,
    "messages": [{"role": "user", "content": "hi"}],
}
OPENAI_SECRET = "sk-proj-" + "Wz4" * 16


@pytest.fixture
def fake() -> FakeModel:
    return FakeModel(check_unused=False)


@pytest.fixture
def url(fake: FakeModel) -> Iterator[str]:
    """The fake with its control API, on a loopback port."""
    with ModelServer(Controlled(ControlAPI.over(fake), fake)) as server:
        yield server.url
    fake.release()


def control(url: str, name: str, body: Any = None, **kwargs: Any) -> httpx2.Response:
    content = json.dumps({} if body is None else body)
    headers = {"content-type": "application/json", **kwargs.pop("headers", {})}
    return httpx2.post(
        f"{url}/_agentreplay/{name}", content=content, headers=headers, timeout=60, **kwargs
    )


def _anthropic(url: str) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=url, api_key=SECRET, max_retries=0)


# --- scripting with the Reply / Fault vocabulary ------------------------------------


def test_scripted_json_replies_reach_the_real_sdks(url: str, fake: FakeModel) -> None:
    answer = control(
        url,
        "script",
        {
            "replies": [
                "Plain text.",
                {"tool_call": {"name": "weather", "args": {"city": "Leeds"}, "id": "toolu_1"}},
                {"text": "Counted.", "usage": {"input_tokens": 7, "output_tokens": 3}},
            ]
        },
    )
    assert answer.json() == {"ok": True, "remaining": 3}

    with _anthropic(url) as client:
        first = client.messages.create(**ASKED)
        second = client.messages.create(**ASKED)
    with openai.OpenAI(base_url=url + "/v1", api_key=OPENAI_SECRET, max_retries=0) as client:
        chunks = client.chat.completions.create(
            model="gpt-test",
            messages=[{"role": "user", "content": "hi"}],
            stream=True,
            stream_options={"include_usage": True},
        )
        parts = list(chunks)

    assert first.content[0].text == "Plain text."
    assert (second.content[0].name, second.content[0].input) == ("weather", {"city": "Leeds"})
    assert second.stop_reason == "tool_use"
    assert "".join(c.choices[0].delta.content or "" for c in parts if c.choices) == "Counted."
    assert parts[-1].usage is not None and parts[-1].usage.prompt_tokens == 7
    assert [c.outcome for c in fake.log] == ["completed"] * 3


def test_a_cut_scripted_as_json_drops_the_sdks_stream(url: str, fake: FakeModel) -> None:
    control(
        url,
        "script",
        {"replies": [{"text": "one two three four", "fault": {"kind": "cut", "after_events": 3}}]},
    )
    with (
        _anthropic(url) as client,
        pytest.raises(anthropic.APIConnectionError),
        client.messages.stream(**ASKED) as stream,
    ):
        list(stream.text_stream)
    (call,) = fake.log
    assert (call.outcome, call.events_sent) == ("cut", 3)


def test_inject_fails_the_next_call_and_the_retry_gets_the_reply(url: str, fake: FakeModel) -> None:
    control(url, "script", {"replies": ["After the retry."]})
    injected = control(url, "inject", {"fault": {"kind": "http", "status": 529}})
    assert injected.json() == {"ok": True}

    with _anthropic(url) as client:
        with pytest.raises(anthropic.InternalServerError) as failed:
            client.messages.create(**ASKED)
        retried = client.messages.create(**ASKED)

    assert failed.value.status_code == 529
    assert retried.content[0].text == "After the retry."
    assert [(c.status, c.outcome) for c in fake.log] == [(529, "http_error"), (200, "completed")]


def test_block_wait_blocked_and_release(url: str, fake: FakeModel) -> None:
    control(url, "script", {"replies": ["Held."]})
    control(url, "block", {"after_events": 2})
    assert control(url, "wait_blocked", {"timeout": 0}).json() == {"blocked": False}
    texts: list[str] = []

    def ask() -> None:
        with _anthropic(url) as client, client.messages.stream(**ASKED) as stream:
            texts.append("".join(stream.text_stream))

    worker = threading.Thread(target=ask)
    worker.start()
    assert control(url, "wait_blocked", {"timeout": 30}).json() == {"blocked": True}
    log = httpx2.get(f"{url}/_agentreplay/log").json()
    assert [(c["outcome"], c["status"]) for c in log["calls"]] == [("open", None)]
    assert log["held"] is True
    assert control(url, "release").json() == {"ok": True}
    worker.join(timeout=60)
    assert texts == ["Held."]
    assert [(c.outcome, c.events_sent) for c in fake.log] == [("completed", 7)]


def test_interrupt_and_fail_with(url: str, fake: FakeModel) -> None:
    control(url, "script", {"replies": ["Whole on the retry."]})
    control(url, "interrupt", {"after_events": 1})
    with _anthropic(url) as client:
        with pytest.raises(anthropic.APIConnectionError), client.messages.stream(**ASKED) as s:
            list(s.text_stream)
        with client.messages.stream(**ASKED) as stream:
            assert "".join(stream.text_stream) == "Whole on the retry."
        control(url, "fail_with", {"fault": {"kind": "http", "status": 401}})
        with pytest.raises(anthropic.AuthenticationError):
            client.messages.create(**ASKED)
    assert [c.outcome for c in fake.log] == ["cut", "completed", "http_error"]


def test_reset_starts_over(url: str, fake: FakeModel) -> None:
    control(url, "script", {"replies": ["used", "left over"]})
    control(url, "fail_with", {"fault": {"kind": "http", "status": 500}})
    control(url, "block")
    assert control(url, "reset").json() == {"ok": True}

    assert httpx2.get(f"{url}/_agentreplay/log").json() == {
        "calls": [],
        "remaining": 0,
        "held": False,
        "problems": [],
    }
    control(url, "script", {"replies": ["Fresh."]})
    with _anthropic(url) as client:
        assert client.messages.create(**ASKED).content[0].text == "Fresh."
    assert [(c.index, c.outcome) for c in fake.log] == [(0, "completed")]


# --- what it refuses, and how it says so ------------------------------------------------


@pytest.mark.parametrize(
    ("name", "body", "status", "field", "message"),
    [
        (
            "script",
            b'{"replies": [',
            400,
            None,
            "the body is not JSON: Expecting value at line 1 column 14",
        ),
        ("script", [1], 400, None, "the body must be a JSON object, got an array"),
        ("script", {}, 400, "replies", "replies: required"),
        ("script", {"replys": []}, 400, "replys", "replys: unknown field; did you mean replies?"),
        ("script", {"replies": "Hi"}, 400, "replies", "replies: expected an array, got a string"),
        (
            "script",
            {"replies": ["ok", {"txt": "x"}]},
            400,
            "replies[1].txt",
            "replies[1].txt: unknown field; did you mean text?",
        ),
        (
            "script",
            {"replies": [{"text": "x", "fault": {"kind": "cut", "after_event": 1}}]},
            400,
            "replies[0].fault.after_event",
            "did you mean after_events? Fault.cut takes kind, after_events",
        ),
        (
            "script",
            {"replies": [{"text": "x", "parts": []}]},
            400,
            "replies[0]",
            "give one of text, tool_call and parts, not text and parts",
        ),
        (
            "script",
            {"replies": [{"tool_call": {"name": "w", "arg": {}}}]},
            400,
            "replies[0].tool_call.arg",
            "unknown field; did you mean args?",
        ),
        (
            "script",
            {"replies": [{"text": "x", "usage": {"input_tokens": -1}}]},
            400,
            "replies[0].usage.input_tokens",
            "greater than or equal to 0",
        ),
        (
            "inject",
            {"fault": {"kind": "explode"}},
            400,
            "fault.kind",
            "kind 'explode'; a fault's kind is one of http, cut",
        ),
        (
            "inject",
            {"fault": {"kind": "http", "status": 200}},
            400,
            "fault",
            "status must be 400-599, got 200",
        ),
        ("inject", {"fault": {"kind": "http", "status": "429"}}, 400, "fault.status", "integer"),
        (
            "block",
            {"after_events": True},
            400,
            "after_events",
            "expected an integer, got a boolean",
        ),
        ("interrupt", {"times": 0}, 400, "times", "times: must be >= 1, got 0"),
        ("wait_blocked", {"timeout": 3600}, 400, "timeout", "seconds from 0 to 60"),
        ("release", {"now": True}, 400, "now", "now: unknown field"),
    ],
)
def test_a_bad_instruction_is_a_400_naming_the_field_and_changes_nothing(
    url: str, fake: FakeModel, name: str, body: Any, status: int, field: str | None, message: str
) -> None:
    content = body if isinstance(body, bytes) else json.dumps(body)
    answer = httpx2.post(
        f"{url}/_agentreplay/{name}", content=content, headers={"content-type": "application/json"}
    )
    error = answer.json()["error"]
    assert answer.status_code == status
    assert error.get("field") == field
    assert message in error["message"]
    assert fake.remaining == [] and fake.log == []


def test_unknown_paths_and_methods(url: str) -> None:
    index = httpx2.get(f"{url}/_agentreplay/")
    unknown = control(url, "scrip")
    wrong = httpx2.get(f"{url}/_agentreplay/script")
    assert "POST /_agentreplay/script" in index.json()["endpoints"]
    assert unknown.status_code == 404
    assert "no control endpoint 'scrip'" in unknown.json()["error"]["message"]
    assert (wrong.status_code, wrong.headers["allow"]) == (405, "POST")


@pytest.mark.parametrize(
    ("headers", "status", "says"),
    [
        ({"host": "attacker.example"}, 403, "loopback host only"),
        ({"host": "127.0.0.1.nip.io:8080"}, 403, "loopback host only"),
        ({"origin": "https://attacker.example"}, 403, "from a web page"),
        ({"sec-fetch-site": "cross-site"}, 403, "from another site"),
        ({"content-type": "text/plain"}, 415, "content-type: application/json"),
    ],
)
def test_requests_from_outside_are_refused(
    url: str, fake: FakeModel, headers: dict[str, str], status: int, says: str
) -> None:
    answer = control(url, "script", {"replies": ["planted"]}, headers=headers)
    assert answer.status_code == status
    assert says in answer.json()["error"]["message"]
    assert fake.remaining == []
    # The same request from the test's own loopback client is taken.
    assert control(url, "script", {"replies": ["ok"]}).status_code == 200


def test_the_log_never_shows_a_key_and_names_the_client(url: str, fake: FakeModel) -> None:
    control(url, "script", {"replies": ["a", "b", "c"]})
    with _anthropic(url) as client:
        client.messages.create(**ASKED)
    with openai.OpenAI(base_url=url + "/v1", api_key=OPENAI_SECRET, max_retries=0) as oclient:
        oclient.chat.completions.create(
            model="gpt-test", messages=[{"role": "user", "content": "hi"}]
        )
    httpx2.post(
        f"{url}/v1/chat/completions?key={OPENAI_SECRET}",
        json={"model": "gpt-test", "messages": [], "api_key": OPENAI_SECRET},
    )

    text = httpx2.get(f"{url}/_agentreplay/log").text
    calls = json.loads(text)["calls"]

    assert SECRET not in text and OPENAI_SECRET not in text
    assert calls[0]["headers"]["authorization"] == "Bearer REDACTED"
    assert calls[1]["headers"]["authorization"] == "Bearer REDACTED"
    assert calls[0]["client"].startswith(f"anthropic {anthropic.__version__} (python, CPython ")
    assert calls[1]["client"].startswith(f"openai {openai.__version__} (python, CPython ")
    assert calls[2]["client"] == f"httpx2 {httpx2.__version__}"
    assert [c["model"] for c in calls] == ["claude-test-1", "gpt-test", "gpt-test"]


# --- cassettes: --repeat, --control ------------------------------------------------------


@pytest.fixture
def cassette(tmp_path: Path) -> Path:
    path = tmp_path / "one.yaml"
    from_replies(
        Reply.text("Recorded once."), request={**ASKED, "stream": False}, stream=False, path=path
    )
    return path


def _twice(url: str) -> list[int]:
    body = {**ASKED, "stream": False}
    return [httpx2.post(f"{url}/v1/messages", json=body).status_code for _ in range(2)]


def test_without_repeat_a_recording_plays_once(cassette: Path) -> None:
    with serve(str(cassette)) as served:
        assert _twice(served.url) == [200, 404]
        off = httpx2.get(f"{served.url}/_agentreplay/log")
    assert off.status_code == 404
    assert "the control API is off: start agentreplay serve with --control" in off.text
    assert served.returncode == 1


def test_repeat_plays_a_recording_again(cassette: Path) -> None:
    with serve(str(cassette), "--repeat") as served:
        assert _twice(served.url) == [200, 200]
    assert served.returncode == 0, served.stderr
    assert ": 2 replayed" in served.stderr


def test_control_resets_a_cassette_and_logs_its_calls(cassette: Path) -> None:
    with serve(str(cassette), "--control") as served:
        assert _twice(served.url) == [200, 404]
        log = httpx2.get(f"{served.url}/_agentreplay/log").json()
        reset = control(served.url, "reset")
        again = _twice(served.url)
        script = control(served.url, "script", {"replies": ["x"]})
        after = httpx2.get(f"{served.url}/_agentreplay/log").json()

    assert [(c["status"], c["outcome"], c["interaction"]) for c in log["calls"]] == [
        (200, "completed", 0)
    ]
    assert log["calls"][0]["client"] == f"httpx2 {httpx2.__version__}"
    assert len(log["misses"]) == 1 and "sent by: httpx2" in log["misses"][0]
    assert reset.json() == {"ok": True}
    assert again == [200, 404]
    assert script.status_code == 409 and "--fake" in script.json()["error"]["message"]
    assert len(after["calls"]) == 1 and len(after["misses"]) == 1
    assert ": 1 replayed (and 1 before a reset)" in served.stderr


def test_reset_is_refused_while_recording(tmp_path: Path) -> None:
    with serve(str(tmp_path / "new.yaml"), "--record-mode", "once", "--control") as served:
        refused = control(served.url, "reset")
    assert refused.status_code == 409
    assert "reset would lose what is being recorded" in refused.json()["error"]["message"]


def test_a_call_past_the_script_fails_the_served_fake() -> None:
    with serve("--fake") as served:
        with _anthropic(served.url) as client, pytest.raises(anthropic.InternalServerError):
            client.messages.create(**ASKED)
        log = httpx2.get(f"{served.url}/_agentreplay/log").json()
    assert "received a model call after its script ran out" in log["problems"][0]
    assert served.returncode == 1
    assert "agentreplay serve: 1 call to the fake" in served.stderr
    assert "received a model call after its script ran out (call #0)" in served.stderr
    assert "Script a reply for it first: POST /_agentreplay/script." in served.stderr
    assert SECRET not in served.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--fake", "x.yaml"], "--fake serves a fake model, not cassettes"),
        ([], "name a cassette to serve, or serve a scripted fake with --fake"),
        (["--fake", "--repeat"], "--record-mode, --repeat and --upstream are for cassettes"),
        (["--fake", "--host", "0.0.0.0"], "add --allow-remote-control"),
        (["x.yaml", "--control", "--host", "0.0.0.0"], "add --allow-remote-control"),
    ],
)
def test_options_that_do_not_go_together(args: list[str], message: str) -> None:
    result = run("serve", *args)
    assert result.code == 2
    assert message in result.err

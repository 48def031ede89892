"""Record live traffic from a real loopback server, then replay it with the server gone."""

from __future__ import annotations

import json
import os
from pathlib import Path

import anthropic  # noqa: F401 - imported once here, so in-process runs reuse it
import h11  # noqa: F401 - (pytester forgets modules first imported in a run, and
import httpcore2  # noqa: F401 - httpx2 maps exceptions by the classes it saw first)
import openai  # noqa: F401
import pytest
import yaml

from pytest_agentreplay import Reply, Usage
from tests.servers import ProviderServer

pytest_plugins = ["pytester"]

WORDS = " ".join(f"word{i}" for i in range(12))

USER_TEST = """
import json, os, time
import anthropic, httpx2, openai, pytest

URL = os.environ["AGENTREPLAY_TEST_SERVER"]

def ask_anthropic(stream_log):
    client = anthropic.Anthropic(api_key="sk-ant-api03-" + "x" * 40, base_url=URL,
                                 max_retries=0)
    with client, client.messages.stream(model="claude-sonnet-4-6", max_tokens=99,
                                messages=[{"role": "user", "content": "Count."}]) as s:
        for text in s.text_stream:
            stream_log.append((time.monotonic(), text))
        return s.get_final_message()

@pytest.mark.agentreplay
def test_stream(agentreplay):
    log = []
    message = ask_anthropic(log)
    with open(os.environ["AGENTREPLAY_TEST_OUT"], "a") as out:
        out.write(json.dumps({"mode": agentreplay.record_mode,
                              "first": log[0][0], "text": "".join(t for _, t in log),
                              "message": message.model_dump(mode="json"),
                              "calls": [c.outcome for c in agentreplay.calls],
                              "sources": [c.source for c in agentreplay.calls]}) + "\\n")
"""


def _run(pytester: pytest.Pytester, server_url: str, out: Path, *args: str) -> pytest.RunResult:
    os.environ["AGENTREPLAY_TEST_SERVER"] = server_url
    os.environ["AGENTREPLAY_TEST_OUT"] = str(out)
    try:
        return pytester.runpytest_inprocess("-p", "no:cacheprovider", *args)
    finally:
        del os.environ["AGENTREPLAY_TEST_SERVER"], os.environ["AGENTREPLAY_TEST_OUT"]


def _results(out: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in out.read_text().splitlines()]


def test_record_tees_the_stream_then_replay_needs_no_server(
    pytester: pytest.Pytester, server: ProviderServer, tmp_path: Path
) -> None:
    pytester.makepyfile(test_user=USER_TEST)
    out = tmp_path / "out.jsonl"
    server.add(Reply.text(WORDS, usage=Usage(input_tokens=9, output_tokens=12)), delay=0.03)

    recorded = _run(pytester, server.url, out, "--agentreplay-record-mode=once")
    recorded.assert_outcomes(passed=1)
    [live] = _results(out)
    assert live["first"] < server.sent_at[0][-1], (
        "the consumer saw events before the last one was sent"
    )
    assert live["sources"] == ["live"]

    cassette = pytester.path / "cassettes" / "test_user" / "test_stream.yaml"
    data = yaml.safe_load(cassette.read_text())
    events = data["interactions"][0]["response"]["events"]
    times = [e["t"] for e in events]
    assert times == sorted(times) and times[-1] - times[0] >= 0.03 * 10
    assert data["interactions"][0]["response"]["end"] == "complete"
    assert "sk-ant-api03" not in cassette.read_text()

    replayed = _run(pytester, "http://127.0.0.1:9", out)  # nothing listens there
    replayed.assert_outcomes(passed=1)
    live_run, replay_run = _results(out)
    assert replay_run["sources"] == ["cassette"]
    assert replay_run["text"] == live_run["text"] == WORDS
    assert replay_run["message"] == live_run["message"]
    replayed.stdout.fnmatch_lines(["*interactions replayed: 1*", "*live calls: 0*"])


CUT_TEST = """
import os
import anthropic, httpx2, pytest

@pytest.mark.agentreplay
def test_cut(agentreplay):
    client = anthropic.Anthropic(api_key="k", base_url=os.environ["AGENTREPLAY_TEST_SERVER"],
                                 max_retries=0)
    seen = []
    # anthropic 2.17+ wraps the transport's error in APIConnectionError
    cut = (anthropic.APIConnectionError, httpx2.RemoteProtocolError)
    with client, pytest.raises(cut) as info:
        with client.messages.stream(model="m", max_tokens=9,
                                    messages=[{"role": "user", "content": "go"}]) as s:
            for text in s.text_stream:
                seen.append(text)
    assert "incomplete chunked read" in str(info.value)
    assert seen == ["word0", " word1"]
    assert [c.outcome for c in agentreplay.calls] == ["cut"]
"""


def test_a_dropped_connection_is_recorded_and_replayed_as_the_same_failure(
    pytester: pytest.Pytester, server: ProviderServer, tmp_path: Path
) -> None:
    pytester.makepyfile(test_user=CUT_TEST)
    # message_start, content_block_start, ping, two deltas: then the server hangs up.
    server.add(Reply.text(WORDS), drop_after=5)
    _run(pytester, server.url, tmp_path / "o", "--agentreplay-record-mode=once").assert_outcomes(
        passed=1
    )
    cassette = pytester.path / "cassettes" / "test_user" / "test_cut.yaml"
    response = yaml.safe_load(cassette.read_text())["interactions"][0]["response"]
    assert response["end"] == "cut"
    assert len(response["events"]) == 5
    _run(pytester, "http://127.0.0.1:9", tmp_path / "o").assert_outcomes(passed=1)


CHAT_TEST = """
import os
import openai, pytest

@pytest.mark.agentreplay
def test_chat(agentreplay):
    client = openai.OpenAI(api_key="sk-proj-" + "y" * 40,
                           base_url=os.environ["AGENTREPLAY_TEST_SERVER"] + "/v1", max_retries=0)
    stream = client.chat.completions.create(model="gpt-test", stream=True,
                                            messages=[{"role": "user", "content": "hi"}])
    text = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
    again = client.chat.completions.create(model="gpt-test",
                                           messages=[{"role": "user", "content": "again"}])
    client.close()
    assert text == "streamed chat"
    assert again.choices[0].message.content == "plain chat"
"""


def test_openai_stream_and_json_record_and_replay(
    pytester: pytest.Pytester, server: ProviderServer, tmp_path: Path
) -> None:
    pytester.makepyfile(test_user=CHAT_TEST)
    server.add(Reply.text("streamed chat"))
    server.add(Reply.text("plain chat"))
    _run(pytester, server.url, tmp_path / "o", "--agentreplay-record-mode=once").assert_outcomes(
        passed=1
    )
    text = (pytester.path / "cassettes" / "test_user" / "test_chat.yaml").read_text()
    assert "sk-proj-" not in text
    data = yaml.safe_load(text)
    first, second = data["interactions"]
    assert first["response"]["events"][-1]["data"] == "[DONE]"
    assert second["response"]["json"]["choices"][0]["message"]["content"] == "plain chat"
    _run(pytester, "http://127.0.0.1:9", tmp_path / "o").assert_outcomes(passed=1)


MISS_TEST = """
import os
import anthropic, pytest

@pytest.mark.agentreplay
def test_miss(agentreplay):
    client = anthropic.Anthropic(api_key="k", base_url=os.environ["AGENTREPLAY_TEST_SERVER"],
                                 max_retries=3)
    with client:
        client.messages.create(model="m", max_tokens=9,
                               messages=[{"role": "user", "content": os.environ.get("Q", "York?")}])
"""


def test_an_unmatched_request_fails_at_once_with_a_diagnosis(
    pytester: pytest.Pytester, server: ProviderServer, tmp_path: Path
) -> None:
    pytester.makepyfile(test_user=MISS_TEST)
    server.add(Reply.text("recorded"))
    os.environ["Q"] = "Leeds?"
    try:
        _run(
            pytester, server.url, tmp_path / "o", "--agentreplay-record-mode=once"
        ).assert_outcomes(passed=1)
    finally:
        del os.environ["Q"]
    result = _run(pytester, "http://127.0.0.1:9", tmp_path / "o")
    result.assert_outcomes(failed=1)
    for line in (
        "*CassetteMiss*",
        "*test_user/test_miss.yaml*",
        "*messages[[]0[]].content: recorded 'Leeds?', now 'York?'*",
        "*to re-record: pytest 'test_user.py::test_miss' --agentreplay-record-mode=*",
    ):
        result.stdout.fnmatch_lines([line])


def test_a_missing_cassette_in_replay_mode_names_the_expected_path(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    pytester.makepyfile(test_user=MISS_TEST)
    result = _run(pytester, "http://127.0.0.1:9", tmp_path / "o")
    result.assert_outcomes(failed=1)
    expected = pytester.path / "cassettes" / "test_user" / "test_miss.yaml"
    result.stdout.fnmatch_lines([f"*no cassette at {expected}*"])


MIXED_TEST = """
import os
import anthropic, pytest, requests

URL = os.environ["AGENTREPLAY_TEST_SERVER"]
BODY = {"model": "m", "max_tokens": 9, "messages": [{"role": "user", "content": "via requests"}]}

@pytest.mark.agentreplay
def test_mixed(agentreplay):
    with anthropic.Anthropic(api_key="k", base_url=URL, max_retries=0) as client:
        sdk = client.messages.create(model="m", max_tokens=9,
                                     messages=[{"role": "user", "content": "via the sdk"}])
    plain = requests.post(URL + "/v1/messages", json=BODY,
                          headers={"x-api-key": "sk-ant-api03-" + "z" * 40}, timeout=5)
    assert sdk.content[0].text == "from httpx2"
    assert plain.json()["content"][0]["text"] == "from requests"
"""


def test_requests_is_recorded_through_vcrpy_into_the_same_cassette(
    pytester: pytest.Pytester, server: ProviderServer, tmp_path: Path
) -> None:
    pytester.makepyfile(test_user=MIXED_TEST)
    server.add(Reply.text("from httpx2"))
    server.add(Reply.text("from requests"))
    _run(pytester, server.url, tmp_path / "o", "--agentreplay-record-mode=once").assert_outcomes(
        passed=1
    )
    text = (pytester.path / "cassettes" / "test_user" / "test_mixed.yaml").read_text()
    assert "sk-ant-api03" not in text
    urls = [i["request"]["url"] for i in yaml.safe_load(text)["interactions"]]
    assert len(urls) == 2
    replayed = _run(pytester, "http://127.0.0.1:9", tmp_path / "o")
    replayed.assert_outcomes(passed=1)


def _pretend_clients_imported(pytester: pytest.Pytester, imported: bool) -> None:
    """A conftest that makes vcrpy's ``clients_imported()`` answer ``imported`` for
    the run (in process, requests is always imported: this test module imports it)."""
    pytester.makeconftest(
        "from pytest_agentreplay.cassettes.formats import vcrpy\n\n"
        "_real = vcrpy.clients_imported\n\n"
        "def pytest_configure(config):\n"
        f"    vcrpy.clients_imported = lambda: {imported}\n\n"
        "def pytest_unconfigure(config):\n"
        "    vcrpy.clients_imported = _real\n"
    )


def _record_mixed(pytester: pytest.Pytester, server: ProviderServer, out: Path) -> None:
    pytester.makepyfile(test_user=MIXED_TEST)
    server.add(Reply.text("from httpx2"))
    server.add(Reply.text("from requests"))
    recorded = _run(pytester, server.url, out, "--agentreplay-record-mode=once")
    recorded.assert_outcomes(passed=1)


@pytest.mark.parametrize(
    ("setting", "imported", "passes"),
    [
        ("always", False, True),
        ("auto", True, True),
        ("auto", False, False),
        ("never", True, False),
    ],
)
def test_agentreplay_vcr_decides_when_vcrpy_replays_other_clients(
    pytester: pytest.Pytester,
    server: ProviderServer,
    tmp_path: Path,
    setting: str,
    imported: bool,
    passes: bool,
) -> None:
    """``auto`` switches vcrpy on only where a client it serves is already imported
    (patching costs every test ~2 ms); where it is off, the requests call is blocked by
    the socket guard, and under ``auto`` the error says how to switch vcrpy on."""
    _record_mixed(pytester, server, tmp_path / "o")
    _pretend_clients_imported(pytester, imported)
    replayed = _run(
        pytester,
        "http://127.0.0.1:9",
        tmp_path / "o",
        "-o",
        f"agentreplay_vcr={setting}",
        "-o",
        "agentreplay_block_loopback=true",
    )
    if passes:
        replayed.assert_outcomes(passed=1)
        return
    replayed.assert_outcomes(failed=1)
    replayed.stdout.fnmatch_lines(["*blocked a live network call*127.0.0.1*"])
    hinted = "agentreplay_vcr = always" in replayed.stdout.str()
    assert hinted == (setting == "auto")


def test_agentreplay_vcr_switches_vcrpy_on_when_recording(
    pytester: pytest.Pytester, server: ProviderServer, tmp_path: Path
) -> None:
    """Recording does not guess: a client imported during the test is still recorded."""
    _pretend_clients_imported(pytester, False)
    _record_mixed(pytester, server, tmp_path / "o")
    text = (pytester.path / "cassettes" / "test_user" / "test_mixed.yaml").read_text()
    assert len(yaml.safe_load(text)["interactions"]) == 2


def test_a_bad_agentreplay_vcr_value_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_user="def test_nothing():\n    pass\n")
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-o", "agentreplay_vcr=maybe")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*agentreplay_vcr = 'maybe'*use auto, always or never*"])

"""``agentreplay serve``: cassettes replayed to (and recorded from) any process.

The command runs as a real process; the clients are real too: the anthropic and
openai SDKs in the test's process and in a child process, and curl. Recording
goes through to a loopback provider server (``tests.servers``), as it would to
the provider.
"""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import anthropic
import openai
import pytest

from pytest_agentreplay import Reply
from pytest_agentreplay.cassettes import io as cassette_io
from tests.children import run_python
from tests.sdk_raises import assert_reported, cut_error, raises_cut
from tests.servers import ProviderServer

TIMEOUT = 300  # a hung process fails the test instead of the run (not a speed bound)
SECRET = "sk-ant-api03-" + "Qx9" * 12


class Served:
    """A running ``agentreplay serve``: its URL, and how it ended."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        self.process = process
        self.url = process.stdout.readline().strip() if process.stdout else ""
        self.returncode: int | None = None
        self.stderr = ""

    def stop(self, how: int = signal.SIGTERM) -> None:
        if self.returncode is None:
            self.process.send_signal(how)
            _, self.stderr = self.process.communicate(timeout=TIMEOUT)
            self.returncode = self.process.returncode


@contextmanager
def serve(*args: str) -> Iterator[Served]:
    command = [sys.executable, "-m", "pytest_agentreplay.cli", "serve", *args]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    served = Served(process)
    try:
        assert served.url.startswith("http://127.0.0.1:"), process.stderr
        yield served
    finally:
        served.stop()


def _ask(url: str, prompt: str = "hi", *, stream: bool = True) -> list[str]:
    client = anthropic.Anthropic(base_url=url, api_key=SECRET, max_retries=0)
    ask = {"model": "claude-test-1", "max_tokens": 50}
    messages = [{"role": "user", "content": prompt}]
    if not stream:
        reply = client.messages.create(**ask, messages=messages)
        return [reply.content[0].text]
    with client.messages.stream(**ask, messages=messages) as events:
        return list(events.text_stream)


@pytest.fixture
def recorded(tmp_path: Path, server: ProviderServer) -> Path:
    """A cassette recorded through ``agentreplay serve`` from a provider server: one
    streamed call, one JSON call, one stream cut after two events."""
    path = tmp_path / "agent.yaml"
    server.add(Reply.text("Streamed and recorded."))
    server.add(Reply.text("Whole and recorded."))
    server.add(Reply.text("one two three four five"), drop_after=2)
    with serve(str(path), "--record-mode", "once", "--upstream", server.url) as served:
        assert "".join(_ask(served.url)) == "Streamed and recorded."
        assert _ask(served.url, "whole", stream=False) == ["Whole and recorded."]
        with raises_cut("anthropic"):  # a real drop, passed on as one
            _ask(served.url, "cut")
    assert served.returncode == 0, served.stderr
    assert "3 recorded (written)" in served.stderr
    return path


def test_recording_through_writes_a_scrubbed_cassette(recorded: Path) -> None:
    text = recorded.read_text()
    assert SECRET not in text
    interactions = cassette_io.load(recorded).interactions
    assert [i.response.end for i in interactions] == ["complete", "complete", "cut"]
    assert interactions[0].response.events is not None  # stored event by event
    assert interactions[2].response.events is not None
    assert len(interactions[2].response.events) == 2


CHILD = """
    import json, anthropic
    client = anthropic.Anthropic(max_retries=0)
    ask = dict(model="claude-test-1", max_tokens=50)
    with client.messages.stream(**ask, messages=[{"role": "user", "content": "hi"}]) as s:
        streamed = "".join(s.text_stream)
    whole = client.messages.create(**ask, messages=[{"role": "user", "content": "whole"}])
    try:
        with client.messages.stream(**ask, messages=[{"role": "user", "content": "cut"}]) as s:
            cut = list(s.text_stream)
    except Exception as exc:  # the transport's error, wrapped by anthropic 2.17 and later
        cause = type(exc.__cause__).__name__ if exc.__cause__ else None
        cut = {"error": type(exc).__name__, "cause": cause, "message": str(exc)}
    print(json.dumps({"streamed": streamed, "whole": whole.content[0].text, "cut": cut}))
"""


def test_a_child_process_replays_the_cassette(recorded: Path) -> None:
    with serve(str(recorded)) as served:
        seen = run_python(CHILD, {"ANTHROPIC_BASE_URL": served.url, "ANTHROPIC_API_KEY": "k"})
    assert seen["streamed"] == "Streamed and recorded."
    assert seen["whole"] == "Whole and recorded."
    # The recorded cut is a dropped connection again, after the same events.
    assert_reported("anthropic", seen["cut"], cut_error("anthropic"))
    assert "incomplete chunked read" in seen["cut"]["message"]
    assert served.returncode == 0, served.stderr
    assert "3 replayed" in served.stderr


def test_a_miss_answers_404_with_the_report_and_exits_1(recorded: Path) -> None:
    with serve(str(recorded)) as served:
        with pytest.raises(anthropic.NotFoundError) as info:
            _ask(served.url, "something never recorded")
        assert "no recorded interaction matches" in str(info.value)
        assert "messages[0].content" in str(info.value)  # the closest recording's diff
    assert served.returncode == 1
    assert "no recorded interaction matches" in served.stderr
    assert "1 request(s) matched no recording" in served.stderr
    assert "3 never played" in served.stderr


def test_openai_chat_is_replayed_from_its_recorded_host(
    tmp_path: Path, server: ProviderServer
) -> None:
    path = tmp_path / "chat.yaml"
    server.add(Reply.text("Chat, recorded."))
    with serve(str(path), "--record-mode", "once", "--upstream", server.url) as served:
        client = openai.OpenAI(base_url=f"{served.url}/v1", api_key="k", max_retries=0)
        ask = {"model": "gpt-test-1", "messages": [{"role": "user", "content": "hi"}]}
        chunks = client.chat.completions.create(**ask, stream=True)
        assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == (
            "Chat, recorded."
        )
    with serve(str(path)) as served:  # no --upstream: the recorded host is used
        client = openai.OpenAI(base_url=f"{served.url}/v1", api_key="k", max_retries=0)
        chunks = client.chat.completions.create(**ask, stream=True)
        assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == (
            "Chat, recorded."
        )
    assert served.returncode == 0, served.stderr


def test_curl_replays_the_stream(recorded: Path) -> None:
    curl = shutil.which("curl")
    if curl is None:
        pytest.skip("curl is not installed")
    body = json.dumps(
        {
            "model": "claude-test-1",
            "max_tokens": 50,
            "stream": True,
            "messages": [{"role": "user", "content": "hi"}],
        }
    )
    with serve(str(recorded)) as served:
        done = subprocess.run(
            [curl, "-sSN", "--data-binary", body, f"{served.url}/v1/messages"],
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            check=False,
        )
    assert done.returncode == 0, done.stderr
    assert "event: message_start" in done.stdout
    assert done.stdout.rstrip().endswith('data: {"type":"message_stop"}')


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["missing.yaml"], "missing.yaml: no such cassette"),
        (["a.yaml", "b.yaml", "--record-mode", "all"], "name exactly one"),
        (["bad.yaml"], "bad.yaml:2:1: while parsing"),
    ],
)
def test_bad_input_exits_2_naming_the_file(tmp_path: Path, args: list[str], message: str) -> None:
    (tmp_path / "bad.yaml").write_text("interactions: [\n")
    done = subprocess.run(
        [sys.executable, "-m", "pytest_agentreplay.cli", "serve", *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert done.returncode == 2
    assert message in done.stderr
    assert done.stdout == ""


def test_listening_beyond_loopback_warns_that_other_machines_can_read_it(recorded: Path) -> None:
    command = [sys.executable, "-m", "pytest_agentreplay.cli", "serve", str(recorded)]
    for host, warned in (("0.0.0.0", True), ("localhost", False), ("127.0.0.1", False)):
        process = subprocess.Popen(
            [*command, "--host", host], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        served = Served(process)
        served.stop()
        assert served.returncode == 0, served.stderr
        warning = f"warning: {host} is not a loopback address"
        assert (warning in served.stderr) is warned, served.stderr

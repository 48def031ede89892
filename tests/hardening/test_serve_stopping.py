"""Issue 27, items 3, 4 and 5: how ``agentreplay serve`` ends while it records through.

- A write the backstop refuses printed a ``SecretLeakError`` traceback and "internal
  error … please report it", exit 2; the docs say one line and exit 1.
- SIGTERM with an upstream call in flight: serve was still running 15 s later and had
  to be killed; the interaction recorded before it was never written.
- SIGTERM mid-stream: the stream was stored as the client's hang-up (``cancelled``)
  and served again as a fragment ("1 replayed"); it must be ``incomplete``, refused
  on replay, as a Ctrl-C in a test stores it.

Serve runs as a real process, recording through from a loopback provider server
(``tests.servers``) that can hold an answer until the test lets it go.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import anthropic
import pytest

from pytest_agentreplay import Reply
from pytest_agentreplay.cassettes import io as cassette_io
from tests.servers import ProviderServer

TIMEOUT = 300  # a hung process fails the test instead of the run (not a speed bound)
KEY = "sk-ant-api03-" + "Wq4" * 12


class Serve:
    """A running ``agentreplay serve`` process."""

    def __init__(self, *args: str) -> None:
        command = [sys.executable, "-m", "pytest_agentreplay.cli", "serve", *args]
        self.process = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        assert self.process.stdout is not None
        self.url = self.process.stdout.readline().strip()
        self.stderr = ""

    def stop(self) -> int:
        """SIGTERM, then wait for the process to end (the hang guard is not a speed bound)."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        _, self.stderr = self.process.communicate(timeout=TIMEOUT)
        return self.process.returncode


@contextmanager
def serving(*args: str) -> Iterator[Serve]:
    served = Serve(*args)
    try:
        assert served.url.startswith("http://127.0.0.1:"), served.process.stderr
        yield served
    finally:
        if served.process.poll() is None:
            served.process.kill()
            served.process.communicate(timeout=TIMEOUT)


def _client(url: str) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=url, api_key="k", max_retries=0, timeout=TIMEOUT)


def _ask(url: str, prompt: str, first: threading.Event | None = None) -> str:
    """Stream an answer; ``first`` is set once the first text has arrived."""
    ask = {"model": "claude-test-1", "max_tokens": 50}
    texts = []
    with (
        _client(url) as client,  # its pooled connection closed with it, not by the collector
        client.messages.stream(**ask, messages=[{"role": "user", "content": prompt}]) as s,
    ):
        for text in s.text_stream:
            texts.append(text)
            if first is not None:
                first.set()
    return "".join(texts)


def _in_thread(
    url: str, prompt: str, first: threading.Event | None = None
) -> tuple[threading.Thread, list[str]]:
    seen: list[str] = []

    def run() -> None:
        try:
            seen.append(_ask(url, prompt, first))
        except Exception as exc:
            seen.append(type(exc).__name__)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, seen


def test_a_refused_write_is_one_line_and_exit_1(tmp_path: Path, server: ProviderServer) -> None:
    path = tmp_path / "agent.yaml"
    server.add(Reply.text(f"Your key is {KEY}, keep it safe."))
    with serving(str(path), "--record-mode", "once", "--upstream", server.url) as served:
        assert KEY in _ask(served.url, "what is my key?")
        code = served.stop()
    assert code == 1, served.stderr
    assert "Traceback" not in served.stderr
    assert "internal error" not in served.stderr
    assert KEY not in served.stderr
    refusal = [line for line in served.stderr.splitlines() if line.startswith("agentreplay:")]
    assert len(refusal) == 1
    assert refusal[0].startswith(f"agentreplay: {path}: 1 secret(s) survived scrubbing")
    assert not path.exists()
    assert [p.name for p in tmp_path.iterdir()] == []  # no temporary or lock file left


def test_sigterm_with_a_call_in_flight_stops_at_once_and_writes_what_was_recorded(
    tmp_path: Path, server: ProviderServer
) -> None:
    path = tmp_path / "agent.yaml"
    hold = threading.Event()
    server.add(Reply.text("Recorded before the stop."))
    held = server.add_held(Reply.text("Never answered."), hold)
    try:
        with serving(str(path), "--record-mode", "once", "--upstream", server.url) as served:
            assert _ask(served.url, "first") == "Recorded before the stop."
            thread, seen = _in_thread(served.url, "second")
            held.reached.wait(TIMEOUT)  # the upstream holds the second call
            code = served.stop()  # without the fix, this waits for the upstream: forever
            thread.join(TIMEOUT)
    finally:
        hold.set()
    assert code == 0, served.stderr
    assert "1 recorded (written)" in served.stderr
    interactions = cassette_io.load(path).interactions
    assert len(interactions) == 1
    assert interactions[0].response.end == "complete"
    assert seen and seen[0] != "Never answered."  # its client saw the connection drop


def test_sigterm_mid_stream_stores_the_stream_incomplete_and_replay_refuses_it(
    tmp_path: Path, server: ProviderServer
) -> None:
    path = tmp_path / "agent.yaml"
    hold = threading.Event()
    held = server.add_held(Reply.text("one two three four five six seven"), hold, after=4)
    try:
        with serving(str(path), "--record-mode", "once", "--upstream", server.url) as served:
            first = threading.Event()
            thread, seen = _in_thread(served.url, "stream", first)
            assert held.reached.wait(TIMEOUT)  # 4 events sent; the upstream holds the rest
            # and serve has relayed (and recorded) some text: a relayed event goes out as
            # it arrives, none held back until the next (as a fake's stream is, to log
            # its call before its last event)
            assert first.wait(TIMEOUT)
            code = served.stop()
            thread.join(TIMEOUT)
    finally:
        hold.set()
    assert code == 0, served.stderr
    assert seen and seen[0] != "one two three four five six seven"
    (interaction,) = cassette_io.load(path).interactions
    assert interaction.response.end == "incomplete"  # not the client's hang-up
    assert interaction.response.events is not None
    assert 3 <= len(interaction.response.events) <= 4  # as far as it came
    # Served again, it is refused whole, not played as a fragment.
    with serving(str(path)) as served:
        with pytest.raises(anthropic.ConflictError) as refused:
            _ask(served.url, "stream")
        code = served.stop()
    assert "incomplete" in str(refused.value)
    assert code == 1, served.stderr
    assert "0 replayed" in served.stderr
    assert "1 request(s) refused" in served.stderr

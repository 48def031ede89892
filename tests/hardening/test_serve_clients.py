"""Issue 27, items 6 and 7: clients that die mid-request, and many clients at once.

A client killed mid-upload made the fake report ``its body is not a valid request:
Unterminated string…`` (and once use up a scripted reply), and ``agentreplay serve``
counted such requests as misses at SIGTERM. A request whose body never arrived was
never made: it must consume nothing and count as nothing.

With 60 clients at once, each read a whole reply, yet 3 calls were logged
``cancelled``; in other runs clients were reset, and about every sixth connect
waited a second: the listen backlog was the standard library's 5.
"""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import threading
from collections import Counter
from pathlib import Path

import anthropic
import pytest

from pytest_agentreplay import FakeModel, Reply
from pytest_agentreplay.cassettes import io as cassette_io
from pytest_agentreplay.cassettes.cassette import Cassette
from pytest_agentreplay.fakes import FakeServer
from tests.cli._helpers import stream_interaction
from tests.hardening._raw_http import RawClient, chunked, head

TIMEOUT = 300  # a hung process fails the test instead of the run (not a speed bound)
BODY = json.dumps(
    {"model": "claude-test-1", "max_tokens": 50, "messages": [{"role": "user", "content": "hi"}]}
).encode()
CL = f"Content-Length: {len(BODY)}"
TE = "Transfer-Encoding: chunked"
WHOLE_CL = head("POST", "/v1/messages", CL) + BODY
WHOLE_CHUNKED = head("POST", "/v1/messages", TE) + chunked(BODY[:20], BODY[20:])
CUTS = {
    "inside the request line": WHOLE_CL[:10],
    "inside the headers": WHOLE_CL[: WHOLE_CL.index(b"\r\n\r\n") - 3],
    "after the headers": WHOLE_CL[: WHOLE_CL.index(b"\r\n\r\n") + 4],
    "mid-body": WHOLE_CL[: len(WHOLE_CL) - len(BODY) // 2],
    "one byte short": WHOLE_CL[:-1],
    "mid-chunk": WHOLE_CHUNKED[: WHOLE_CHUNKED.index(b"\r\n\r\n") + 15],
    "before the last chunk": WHOLE_CHUNKED[: -len(b"0\r\n\r\n")],
    "inside the trailers": WHOLE_CHUNKED[:-2] + b"X-Trailer: 1",
}


def _ask(server: FakeServer) -> str:
    client = anthropic.Anthropic(base_url=server.url, api_key="k", max_retries=0)
    message = client.messages.create(
        model="claude-test-1", max_tokens=50, messages=[{"role": "user", "content": "hi"}]
    )
    return str(message.content[0].text)


@pytest.mark.parametrize("sent", CUTS.values(), ids=CUTS.keys())
def test_a_request_cut_short_consumes_nothing_and_counts_as_nothing(sent: bytes) -> None:
    fake = FakeModel().script(Reply.text("For the whole request."))
    with fake.listen() as server:
        with RawClient(server.host, server.port) as client:
            client.send(sent)  # ... and the client dies: its socket closes
        # The next, whole request gets the first reply: nothing was used up.
        assert _ask(server) == "For the whole request."
        assert fake.problems == []
        assert server.errors == []
    assert [call.outcome for call in fake.log] == ["completed"]


def test_serve_counts_no_half_sent_request_as_a_miss(tmp_path: Path) -> None:
    path = tmp_path / "agent.yaml"
    cassette_io.save(path, Cassette(interactions=[stream_interaction()]))
    command = [sys.executable, "-m", "pytest_agentreplay.cli", "serve", str(path)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert process.stdout is not None
    port = int(process.stdout.readline().strip().rsplit(":", 1)[1])
    try:
        for _ in range(5):
            for sent in CUTS.values():
                with RawClient("127.0.0.1", port) as client:
                    client.send(sent)
    finally:
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=TIMEOUT)
    assert process.returncode == 0, stderr
    assert "matched no recording" not in stderr
    assert "no recorded interaction matches" not in stderr
    assert "0 replayed, 1 never played" in stderr


# --- many clients at once -----------------------------------------------------------


CLIENTS = 60


def _many(server: FakeServer, stream: bool) -> list[str]:
    """Each client, in its own thread, asks once: what it read, or its error."""
    seen: list[str] = []
    lock = threading.Lock()
    ready = threading.Barrier(CLIENTS)

    def one() -> None:
        client = anthropic.Anthropic(base_url=server.url, api_key="k", max_retries=0)
        ask = {"model": "claude-test-1", "max_tokens": 50}
        messages = [{"role": "user", "content": "hi"}]
        ready.wait()  # all connect at once
        try:
            if stream:
                with client.messages.stream(**ask, messages=messages) as events:
                    got = "".join(events.text_stream)
            else:
                got = client.messages.create(**ask, messages=messages).content[0].text
        except Exception as exc:
            got = f"{type(exc).__name__}: {exc}"
        with lock:
            seen.append(got)

    threads = [threading.Thread(target=one) for _ in range(CLIENTS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(TIMEOUT)
    return seen


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_sixty_clients_at_once_each_get_a_whole_reply_logged_as_received(stream: bool) -> None:
    fake = FakeModel().script(*(Reply.text("The same answer.") for _ in range(CLIENTS)))
    with fake.listen() as server:
        seen = _many(server, stream)
    assert Counter(seen) == {"The same answer.": CLIENTS}
    # Logged as each client received it: every byte handed over is "completed",
    # whenever the client closed afterwards.
    assert Counter(call.outcome for call in fake.log) == {"completed": CLIENTS}


def test_the_listen_backlog_takes_a_parallel_test_suite() -> None:
    ss = shutil.which("ss")
    if ss is None or not sys.platform.startswith("linux"):
        pytest.skip("reads the listen backlog with Linux's ss")
    somaxconn = int(Path("/proc/sys/net/core/somaxconn").read_text())
    with FakeModel().listen() as server:
        listed = subprocess.run(
            [ss, "-ltnH", f"sport = :{server.port}"],
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            check=True,
        ).stdout.split()
    # For a listening socket, ss's Send-Q column is the backlog the kernel keeps.
    assert int(listed[2]) >= min(CLIENTS, somaxconn)

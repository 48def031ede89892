"""A non-streamed body whose connection dropped while it was recorded is replayed
the way it ended: the part that arrived, then the same failure — not a complete 200.

(A stream's recorded ending is covered with the streams; a JSON body used to replay
its partial text as a successful response, which the SDK then failed to parse.)
"""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Iterator

import anthropic  # noqa: F401 - imported once here, so in-process runs reuse it
import h11  # noqa: F401
import httpcore2  # noqa: F401
import pytest
import yaml

pytest_plugins = ["pytester"]

PARTIAL = b'{"id":"msg_1","type":"message","role":"assis'
ANNOUNCED = 400


@pytest.fixture
def dropping_server() -> Iterator[str]:
    """Answers every request with headers announcing 400 bytes, sends 44, and closes."""
    listener = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def serve() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            with conn:
                conn.recv(65536)
                conn.sendall(
                    b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                    + f"content-length: {ANNOUNCED}\r\n\r\n".encode()
                    + PARTIAL
                )
                conn.shutdown(socket.SHUT_RDWR)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    stop.set()
    thread.join()
    listener.close()


USER_TEST = """
import os
import anthropic, httpx2, pytest

URL = os.environ["AR_DROPPING_SERVER"]

@pytest.mark.agentreplay
def test_raw():
    with pytest.raises(httpx2.RemoteProtocolError):
        httpx2.post(URL + "/v1/messages", json={"model": "m", "max_tokens": 5,
                    "messages": [{"role": "user", "content": "raw"}]})

@pytest.mark.agentreplay
def test_sdk():
    client = anthropic.Anthropic(api_key="k", base_url=URL, max_retries=0)
    with pytest.raises(anthropic.APIConnectionError):
        client.messages.create(model="m", max_tokens=5,
                               messages=[{"role": "user", "content": "sdk"}])
"""


def test_a_json_body_cut_while_recording_replays_cut(
    pytester: pytest.Pytester, dropping_server: str
) -> None:
    pytester.makepyfile(test_user=USER_TEST)
    os.environ["AR_DROPPING_SERVER"] = dropping_server
    try:
        recorded = pytester.runpytest_inprocess(
            "-p", "no:cacheprovider", "--agentreplay-record-mode=once"
        )
        recorded.assert_outcomes(passed=2)
        for name in ("test_raw", "test_sdk"):
            path = pytester.path / "cassettes" / "test_user" / f"{name}.yaml"
            [interaction] = yaml.safe_load(path.read_text())["interactions"]
            assert interaction["response"]["end"] == "cut"
        os.environ["AR_DROPPING_SERVER"] = "http://127.0.0.1:9"  # nothing listens
        replayed = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    finally:
        del os.environ["AR_DROPPING_SERVER"]
    replayed.assert_outcomes(passed=2)
    assert "live calls: 0" in replayed.stdout.str()
